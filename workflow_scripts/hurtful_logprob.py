"""Rule script (hurtful): log-probability bias scores (Algorithm 1) of one model for every template x
attribute x target word; words that are not one word piece of the model are reported, not dropped."""

import torch

from medbias.core.logs import setup_rule_logging
from medbias.core.models import lm_head_problem, load_model_and_tokenizer, resolve_model_source
from medbias.io.jsonio import write_json
from medbias.io.resources import read_attributes, read_templates
from medbias.metrics.logprob import build_items, log_probability_scores, target_token_ids
from medbias.metrics.logprob_tests import score_frame

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
torch.set_num_threads(snakemake.threads)

attributes = read_attributes(snakemake.input.attributes)
templates, fixes = read_templates(snakemake.input.templates, {c for _, c in attributes})
source = resolve_model_source(p.model, p.entry)
model, tokenizer = load_model_and_tokenizer(source)
no_head = lm_head_problem(model, source.kind)
if no_head:  # scores would come from a randomly initialised head: none are written, the table says why
    log.warning("%s: log-probability scores %s", p.model, no_head)
    score_frame([], [], []).assign(model=p.model)[
        ["model", "item", "template", "category", "attribute", "word", "score"]
    ].to_parquet(snakemake.output.scores, index=False)
    write_json(
        snakemake.output.words,
        {
            "model": p.model,
            "status": no_head,
            "scored_words": [],
            "rejected_words": [],
            "items": 0,
            "template_fixes": len(fixes),
        },
    )
    raise SystemExit(0)
words = [w for groups in p.target_sets.values() for ws in groups.values() for w in ws]
target_ids, rejected = target_token_ids(tokenizer, list(dict.fromkeys(words)))
if rejected:
    log.warning("%d target words are not one word piece of %s and are not scored: %s", len(rejected), p.model, rejected)
items = build_items(templates, attributes, tokenizer)
log.info("%s: %d templates x attributes, %d target words, batch %d", p.model, len(items), len(target_ids), p.batch_size)
scores = log_probability_scores(model, tokenizer, items, target_ids, batch_size=p.batch_size)
frame = score_frame(items, scores, list(target_ids))
frame.insert(0, "model", p.model)
frame.to_parquet(snakemake.output.scores, index=False)
write_json(
    snakemake.output.words,
    {
        "model": p.model,
        "status": "ok",
        "scored_words": list(target_ids),
        "rejected_words": rejected,
        "items": len(items),
        "template_fixes": len(fixes),
    },
)
