"""Rule script (audit): one registry entry's audit card (``medbias.studies.audit.card``): the sections its kind
allows, what was skipped and why, a summary figure of the effect sizes, and its manifest lines."""

from pathlib import Path

import pandas as pd

from medbias.studies.audit.card import card_markdown, fill_blank_section, logprob_section, seat_section, stereoset_section, weat_section
from medbias.studies.hurtful.analyses import logprob_table
from medbias.io.jsonio import read_json, write_json
from medbias.core.logs import setup_rule_logging
from medbias.io.manifest import embedding_manifest_entry, model_manifest_entry
from medbias.core.models import model_folder_files
from medbias.studies.audit.figures import plot_audit_effect_sizes

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
inputs = snakemake.input
sections, skipped, effects = [], list(p.skipped), []

if "weat" in inputs.keys():
    weat = pd.read_csv(inputs.weat)
    sections.append(("WEAT (Caliskan et al. 2017)", weat_section(weat)))
    skipped += [(f"WEAT {r.test}", r.status) for r in weat.itertuples() if r.status != "ok"]
    effects = [(r.test, r.effect_size, r.ci_low, r.ci_high) for r in weat.itertuples() if r.status == "ok"]
else:
    seat = pd.read_csv(inputs.seat)
    sections.append(("SEAT (Xie et al. 2024, appendix A)", seat_section(seat)))
    effects = [(r.test, r.effect_size, r.ci_low, r.ci_high) for r in seat.itertuples() if r.status == "ok"]
    stereo = pd.read_csv(inputs.stereoset)
    sections.append(("StereoSet-style scores (Xie et al. 2024, section 3.2)", stereoset_section(stereo)))
    if (stereo["status"] != "ok").all():
        skipped.append(("StereoSet-style scores", stereo["status"].iloc[0]))
    if "logprob" in inputs.keys():
        words = read_json(inputs.logprob_words)
        if words.get("status", "ok") != "ok":
            skipped.append(("log-probability gender score", words["status"]))
        else:
            table = logprob_table(pd.read_parquet(inputs.logprob), p.target_sets, p.control_category)
            sections.append(("Log-probability gender score (Zhang et al. 2020, Table 3)",
                             logprob_section(table, p.gender_set)))
        fill = pd.read_csv(inputs.fill_blank)
        if (fill["status"] != "ok").all():
            skipped.append(("fill-in-the-blank", fill["status"].iloc[0]))
        else:
            sections.append(("Fill-in-the-blank by race (Zhang et al. 2020, Figure 1)", fill_blank_section(fill)))

registry_fields = {k: v for k, v in p.entry.items() if k != "type"}
entry_lines = (embedding_manifest_entry(registry_fields) if p.entry["type"] == "word_vectors"
               else model_manifest_entry(p.model, registry_fields))
lines = {"entry": entry_lines,
         "files": [{"path": f, "bytes": Path(f).stat().st_size} for f in model_folder_files(p.entry["source"])]}
figure = Path(snakemake.output.png)
plot_audit_effect_sizes(pd.DataFrame(effects, columns=["test", "effect_size", "ci_low", "ci_high"]),
                        f"{p.label}: effect sizes (d) with 95% intervals", snakemake.output.png, snakemake.output.pdf)
text = card_markdown(p.model, p.label, p.entry, sections, skipped, lines, figure.name)
Path(snakemake.output.md).write_text(text, encoding="utf-8")
write_json(snakemake.output.json, {"model": p.model, "label": p.label, "entry": dict(p.entry),
                                   "sections": [title for title, _ in sections],
                                   "skipped": [{"section": s, "reason": r} for s, r in skipped],
                                   "effect_sizes": [dict(zip(("test", "d", "ci_low", "ci_high"), e)) for e in effects],
                                   "manifest": lines})
log.info("%s: card with %d sections, %d skipped", p.model, len(sections), len(skipped))
