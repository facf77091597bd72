"""One model's vignette table (``results/vignettes/<model>/contrasts.{csv,md}``): every contrast of
every set and decision with its interval, p, BH q and flip rate; each group's mean answer beside the
neutral version's; the greedy answers' agreement with the probabilities. And the summary over the
registry (``results/vignettes/summary.{csv,md}``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from medbias.io.tables import PaperPage, Section
from medbias.io.vignettes import VignetteSet
from medbias.metrics.fairness import benjamini_hochberg
from medbias.metrics.vignette_contrasts import (
    DEMOGRAPHIC,
    DESIGNS,
    contrast_summary,
    matched_pairs,
    shown_contrasts,
    vignette_differences,
)
from medbias.studies.vignettes.versions import contrasts_of

CONTRAST_COLUMNS = [
    "set", "decision", "compared", "kind", "contrast", "attribute", "value", "reference", "vignettes", "cases", "pairs",
    "d_probability", "d_probability_low", "d_probability_high", "d_probability_p", "d_probability_p_min",
    "d_expected", "d_expected_low", "d_expected_high", "d_expected_p", "flip_rate", "vignettes_flipping", "q",
    "significant",
]  # fmt: skip
EMPTY_CONTRASTS = pd.DataFrame(columns=CONTRAST_COLUMNS)


def model_contrasts(
    questions: pd.DataFrame,
    sets: Sequence[VignetteSet],
    *,
    bootstrap: int,
    permutations: int,
    alpha: float,
    min_difference: float,
    rng: np.random.Generator,
) -> pd.DataFrame:
    """Every contrast (``versions.contrasts_of``) of every set and decision of one model's question
    scores (``scoring.question_scores``): estimates, case-bootstrap intervals, sign-flip p, the
    minimum-effect p (margin ``min_difference``), flip rate; ``q`` and ``significant``:
    Benjamini-Hochberg at ``alpha`` over the minimum-effect p across the model's demographic
    contrasts; the controls keep their own p (they are what the error rate counts)."""
    rows = []
    for vset in sets:
        for key, decision in vset.decisions.items():
            scores = questions[(questions["set"] == vset.name) & (questions["decision"] == key)]
            if scores.empty:
                continue
            for contrast in contrasts_of(vset):
                pairs = matched_pairs(scores, contrast)
                if pairs.empty:
                    continue
                summary = contrast_summary(vignette_differences(pairs), bootstrap, permutations, rng, min_difference)
                rows.append(
                    {
                        "set": vset.name,
                        "decision": key,
                        "compared": decision.compared,
                        "kind": contrast.kind,
                        "contrast": contrast.label,
                        "attribute": contrast.column,
                        "value": contrast.value,
                        "reference": contrast.reference,
                        **summary,
                    }
                )
    table = pd.DataFrame(rows, columns=[c for c in CONTRAST_COLUMNS if c not in ("q", "significant")])
    table["q"] = np.nan
    table["significant"] = False
    demographic = table["kind"] == DEMOGRAPHIC
    if demographic.any():
        q, rejected = benjamini_hochberg(table.loc[demographic, "d_probability_p_min"].to_numpy(), alpha)
        table.loc[demographic, "q"] = q
        table.loc[demographic, "significant"] = rejected
    return table


def group_means(questions: pd.DataFrame, sets: Sequence[VignetteSet]) -> pd.DataFrame:
    """Per set, decision and attribute value: the mean P(compared) and expected decision over the
    demographic versions with that value, and the neutral versions' means (the model's baseline)."""
    rows = []
    for vset in sets:
        for key in vset.decisions:
            scores = questions[(questions["set"] == vset.name) & (questions["decision"] == key)]
            if scores.empty:
                continue
            neutral = scores[scores["neutral"]]
            rows.append(
                {
                    "set": vset.name,
                    "decision": key,
                    "group": "no demographic detail",
                    "mean_p_compared": neutral["p_compared"].mean(),
                    "mean_expected": neutral["expected"].mean(),
                    "questions": len(neutral),
                }
            )
            demographic = scores[~scores["neutral"]]
            for attribute, values in vset.attributes.items():
                for value in values:
                    part = demographic[demographic[attribute] == value]
                    rows.append(
                        {
                            "set": vset.name,
                            "decision": key,
                            "group": f"{attribute}={value}",
                            "mean_p_compared": part["p_compared"].mean(),
                            "mean_expected": part["expected"].mean(),
                            "questions": len(part),
                        }
                    )
    return pd.DataFrame(rows)


def generation_agreement(questions: pd.DataFrame) -> pd.DataFrame:
    """Per set and decision, with greedy answers: the share of greedy texts that answer with an option
    (parsed), and the share of questions whose greedy answer is the most probable option (agreement;
    an unparsed answer counts as disagreement)."""
    if "generated_option" not in questions:
        return pd.DataFrame()
    parsed = questions["generated_option"] != ""
    agree = questions["generated_option"] == questions["choice"]
    frame = pd.DataFrame({"set": questions["set"], "decision": questions["decision"], "parsed": parsed, "agree": agree})
    out = frame.groupby(["set", "decision"], sort=False).agg(
        questions=("agree", "size"), parsed_rate=("parsed", "mean"), agreement=("agree", "mean")
    )
    return out.reset_index()


def contrast_notes(sets: Sequence[VignetteSet], settings: Mapping[str, Any], style: str) -> str:
    """What the page's numbers are, how they were computed and where the sets come from."""
    written = "; ".join(
        f"{s.name}: {s.title} ({s.written_by or 'author not stated'}; {s.license or 'no license stated'})" for s in sets
    )
    return (
        f"Prompts: {style}. Each option's probability is the model's own, log P(option | prompt) summed over the "
        "option's tokens, renormalised over the options (nothing sampled). d P(compared): mean over vignettes of the "
        "matched versions' difference (value - reference) in the compared option's probability; d expected: the same "
        "for the expected decision (sum of probability x option value). 95% CI: percentile bootstrap over cases "
        f"({settings['bootstrap']} replicates; a case's phrasings resampled together). p: sign-flip permutation of "
        f"the cases' differences (exact up to {settings['permutations']:,} sign patterns, else that many sampled), "
        "two-sided: p (any) against no difference; p (beyond margin) against a difference of at most "
        f"{settings['min_difference']} in either direction (a minimum-effect test: a model is a fixed function, so a "
        "swap that should change nothing still shifts its answers consistently, and with similar vignettes any such "
        f"shift is 'significant'). q: Benjamini-Hochberg over p (beyond margin) across this model's demographic "
        f"contrasts, alpha {settings['alpha']}. "
        "Flip rate: share of matched pairs whose most probable option differs. Controls (same-group names, irrelevant "
        "detail) should change nothing; their false-positive rate on the demo world is in "
        f"results/validation/error_rates.md. Sets: {written}. {DESIGNS}\n"
    )


def model_page(
    label: str,
    table: pd.DataFrame,
    means: pd.DataFrame,
    agreement: pd.DataFrame,
    notes: str,
    figure: str,
) -> PaperPage:
    """The model's page: the demographic contrasts, the controls, group means, agreement, notes (only
    the notes, which say why, when nothing was scored)."""
    if table.empty:
        return PaperPage(f"Clinical vignettes: {label}", (notes,))
    demographic = table[table["kind"] == DEMOGRAPHIC]
    controls = table[table["kind"] != DEMOGRAPHIC]
    blocks: list = [
        "Significant demographic contrasts (BH q < alpha): "
        f"{int(demographic['significant'].sum())} of {len(demographic)}. "
        f"Controls with p (beyond margin) < 0.05: {int((controls['d_probability_p_min'] < 0.05).sum())} of "
        f"{len(controls)} (with p (any) < 0.05: {int((controls['d_probability_p'] < 0.05).sum())}).",
        Section(shown_contrasts(demographic), "Demographic contrasts"),
    ]
    if len(controls):
        blocks.append(
            Section(shown_contrasts(controls).drop(columns=["q (BH)"]), "Control swaps (should change nothing)")
        )
    blocks.append(Section(means, "Mean answer by group, and without demographic detail"))
    if len(agreement):
        blocks.append(Section(agreement, "Greedy answers against the probabilities"))
    blocks += [f"![contrasts]({figure})", notes]
    return PaperPage(f"Clinical vignettes: {label}", tuple(blocks))


def summary_rows(
    models: Mapping[str, Mapping[str, Any]], tables: Mapping[str, pd.DataFrame], status: Mapping[str, str]
) -> pd.DataFrame:
    """One row per registry model: its kind, the status of its vignette run (or why it does not
    apply), the demographic contrasts significant after BH, the largest |d P(compared)| and flip
    rate, and the controls with p < 0.05."""
    rows = []
    for name, entry in models.items():
        row = {"model": name, "kind": entry.get("kind", ""), "status": status.get(name, "")}
        table = tables.get(name)
        if table is not None and len(table):
            demographic = table[table["kind"] == DEMOGRAPHIC]
            controls = table[table["kind"] != DEMOGRAPHIC]
            largest = demographic.loc[demographic["d_probability"].abs().idxmax()] if len(demographic) else None
            row.update(
                {
                    "significant": f"{int(demographic['significant'].sum())} of {len(demographic)}",
                    "largest contrast": ""
                    if largest is None
                    else f"{largest['set']}/{largest['decision']} {largest['contrast']}",
                    "largest d P(compared)": np.nan if largest is None else float(largest["d_probability"]),
                    "largest flip rate": float(demographic["flip_rate"].max()) if len(demographic) else np.nan,
                    "controls p (beyond margin) < 0.05": (
                        f"{int((controls['d_probability_p_min'] < 0.05).sum())} of {len(controls)}"
                    ),
                }
            )
        rows.append(row)
    return pd.DataFrame(rows)


SUMMARY_NOTES = (
    "One row per registry model. significant: demographic contrasts whose difference in P(compared option) "
    "exceeds the margin after BH; largest: the demographic contrast with the largest |difference|; controls: swaps "
    "that should change nothing (same-group names, an irrelevant detail) with p (beyond margin) < 0.05. Each "
    "model's contrasts: results/vignettes/<model>/contrasts.md; every row: contrasts_long.csv. "
)


def summary_page(frame: pd.DataFrame, settings: Mapping[str, Any]) -> PaperPage:
    """summary.md: the registry's rows and what they mean."""
    return PaperPage(
        "Clinical vignettes: every registry model",
        (
            Section(frame),
            SUMMARY_NOTES + f"Margin {settings['min_difference']}, BH alpha {settings['alpha']}, "
            f"{settings['bootstrap']} case-bootstrap "
            f"replicates, sign-flip budget {settings['permutations']:,}. {DESIGNS}\n",
        ),
    )
