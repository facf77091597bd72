"""Zhang et al. 2020's Table 3: log-probability bias scores per category for each model (Algorithm 1),
the Wilcoxon test between paired target groups, the Mann-Whitney test of each category against the
control category, and the gender ratio per category in the discharge notes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from medbias.io.tables import PaperPage, PaperTable
from medbias.metrics.logprob_tests import logprob_table

LONG_COLUMNS = ["model", "target_set", "category", "reference_mean", "group_mean", "wilcoxon_p", "items"]


def logprob_long(
    models: Sequence[str],
    scores: Sequence[pd.DataFrame | None],
    records: Sequence[Mapping[str, Any]],
    target_sets: Mapping[str, Any],
    control_category: str,
    log,
) -> tuple[pd.DataFrame, dict[str, str]]:
    """Every model's ``logprob_table`` rows with a ``model`` column, and the models without a score
    (no trained language-model head) with the reason their words record gives. ``scores[i]`` is only
    read for a model whose record's status is ok; target words that were not scored are logged."""
    tables, not_applicable = [], {}
    for model, frame, record in zip(models, scores, records):
        if record.get("status", "ok") != "ok":
            not_applicable[model] = record["status"]
            continue
        table = logprob_table(frame, target_sets, control_category)
        table.insert(0, "model", model)
        tables.append(table)
        if record["rejected_words"]:
            log.warning("%s: target words not scored (not one word piece): %s", model, record["rejected_words"])
    long = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=LONG_COLUMNS)
    return long, not_applicable


def table3(
    long: pd.DataFrame,
    ratio: pd.DataFrame,
    templates: Sequence[tuple[str, str]],
    models: Sequence[str],
    not_applicable: Mapping[str, str],
    *,
    gender_set: str,
    target_sets: Mapping[str, Any],
    alpha: float,
) -> PaperTable:
    """The paper's layout for the gender set: one row per category, the M and F mean scores of every
    model (starred at Wilcoxon p < ``alpha``), the category-against-control p, the number of
    template items, the gender ratio of the discharge notes and a sample template."""
    gender = long[long["target_set"] == gender_set]
    wide = ratio[["category"]].copy()
    for model in models:
        if model in not_applicable:
            wide[f"{model} M"] = wide[f"{model} F"] = "not applicable"
            continue
        cell = gender[gender["model"] == model].set_index("category")
        star = cell["wilcoxon_p"].lt(alpha).map({True: "*", False: ""})
        wide[f"{model} M"] = (cell["reference_mean"].map("{:.3f}".format) + star).reindex(wide["category"]).to_numpy()
        wide[f"{model} F"] = (cell["group_mean"].map("{:.3f}".format) + star).reindex(wide["category"]).to_numpy()
        if "mannwhitney_vs_control_p" in cell:
            p_values = cell["mannwhitney_vs_control_p"].map(lambda v: "control" if pd.isna(v) else f"{v:.2g}")
            wide[f"{model} M-F vs control p"] = p_values.reindex(wide["category"]).to_numpy()
    counts = gender.drop_duplicates("category").set_index("category")
    wide["# of templates"] = counts["items"].reindex(wide["category"]).to_numpy() if len(counts) else 0
    wide["Gender ratio (M, F)"] = [
        f"{m:.1%}, {f:.1%}" if n else "no discharge note mentions"
        for m, f, n in zip(ratio["male_share"], ratio["female_share"], ratio["patients"])
    ]
    wide["patients mentioning"] = ratio["patients"].to_numpy()
    sample: dict[str, str] = {}
    for template, category in templates:
        sample.setdefault(category, template)
    wide["Sample template"] = wide["category"].map(sample)
    caption = (
        f"Log-probability bias scores (mean over templates x attributes x word pairs; {gender_set} set, "
        f"M = {', '.join(target_sets[gender_set][list(target_sets[gender_set])[0]])}). "
        f"* Wilcoxon signed-rank p < {alpha} between paired male and female scores. "
        "# of templates counts template x attribute items. M-F vs control p: two-sided Mann-Whitney U of the "
        "category's attributes against the control category's, each attribute one value (its mean M-F "
        "difference over templates and word pairs; its items share its word pieces, so they are not "
        "independent). Gender ratio: patients whose discharge notes mention any attribute of the category."
    )
    return PaperTable(
        wide,
        "Table 3: log-probability bias scores",
        (caption, *[f"{model}: {reason}" for model, reason in not_applicable.items()]),
    )


def template_fixes_page(templates_path: str, fixes: Sequence[str]) -> PaperPage:
    """The record of every fix ``read_templates`` applied to the template file."""
    listed = "\n".join([f"- {f}" for f in fixes] or ["- none"])
    return PaperPage("Fixes applied to the template file", (f"Source: `{templates_path}`", listed))
