"""Rule script (audit): one registry entry's audit card (``medbias.studies.audit.card``): the sections its kind
allows, what was skipped and why, a summary figure of the effect sizes, and its manifest lines."""

from pathlib import Path

import pandas as pd

from medbias.core.logs import setup_rule_logging
from medbias.io.jsonio import write_json
from medbias.io.tables import write_page
from medbias.studies.audit.card import card_manifest_lines, card_page, card_sections
from medbias.studies.audit.figures import plot_audit_effect_sizes

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p, out = snakemake.params, snakemake.output
inputs = {key: snakemake.input[key] for key in snakemake.input.keys()}
sections, skipped, effects = card_sections(
    inputs,
    p.skipped,
    target_sets=p.target_sets,
    control_category=p.control_category,
    gender_set=p.gender_set,
    benchmarks={**p.benchmarks, "seed": p.seed},
    source=str(p.entry["source"]),
)
settings = p.settings_vectors if p.entry["type"] == "word_vectors" else p.settings_models
lines = card_manifest_lines(p.model, p.entry)
plot_audit_effect_sizes(
    pd.DataFrame(effects, columns=["test", "effect_size", "ci_low", "ci_high"]),
    f"{p.label}: effect sizes (d) with 95% intervals",
    out.png,
    out.pdf,
)
write_page(card_page(p.model, p.label, p.entry, sections, skipped, lines, Path(out.png).name, settings), out.md)
write_json(
    out.json,
    {
        "model": p.model,
        "label": p.label,
        "entry": dict(p.entry),
        "sections": [title for title, _ in sections],
        "skipped": [{"section": s, "reason": r} for s, r in skipped],
        "effect_sizes": [dict(zip(("test", "d", "ci_low", "ci_high"), e)) for e in effects],
        "manifest": lines,
    },
)
log.info("%s: card with %d sections, %d skipped: %s", p.model, len(sections), len(skipped), out.md)
