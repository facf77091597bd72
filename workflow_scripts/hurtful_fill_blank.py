"""Rule script (hurtful): fill-in-the-blank completions per race word (Figure 1, Appendix B) for the
configured models, as a table and a figure. Templates and race words are config data."""

import pandas as pd
import torch

from medbias.core.fill_blank import fill_in_the_blanks
from medbias.core.logs import setup_rule_logging
from medbias.core.models import lm_head_problem, load_model_and_tokenizer, resolve_model_source
from medbias.io.tables import write_paper_table
from medbias.studies.hurtful.figures import figure1_table, plot_fill_in_the_blanks

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
torch.set_num_threads(snakemake.threads)

frames, not_applicable = [], []
for model_name, entry in zip(p.models, p.entries):
    source = resolve_model_source(model_name, entry)
    model, tokenizer = load_model_and_tokenizer(source)
    no_head = lm_head_problem(model, source.kind)
    if no_head:  # completions would come from a randomly initialised head
        log.warning("%s: fill-in-the-blank %s", model_name, no_head)
        not_applicable.append(f"{model_name}: {no_head}")
        continue
    frame = fill_in_the_blanks(model, tokenizer, p.templates, p.fills, top_k=p.top_k)
    frame.insert(0, "model", model_name)
    frames.append(frame)
    log.info("%s: %d completions", model_name, len(frame))
if not frames:
    raise SystemExit(f"medbias: no model of hurtful.fill_blank.models can fill in blanks ({'; '.join(not_applicable)})")
table = pd.concat(frames, ignore_index=True)
write_paper_table(figure1_table(table, not_applicable, p.settings), snakemake.output.csv, snakemake.output.md)
plot_fill_in_the_blanks(table, snakemake.output.png, snakemake.output.pdf)
