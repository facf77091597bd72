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
    mass_line,
    matched_pairs,
    shown_contrasts,
    vignette_differences,
)
from medbias.studies.vignettes.versions import contrasts_of

CONTRAST_COLUMNS = [
    "set", "decision", "compared", "kind", "contrast", "attribute", "value", "reference", "vignettes", "cases", "pairs",
    "d_probability", "d_probability_low", "d_probability_high", "d_probability_p", "d_probability_p_min",
    "d_expected", "d_expected_low", "d_expected_high", "d_expected_p", "flip_rate", "vignettes_flipping", "q",
    "significant", "noise_floor",
]  # fmt: skip
EMPTY_CONTRASTS = pd.DataFrame(columns=CONTRAST_COLUMNS)


def kept_questions(questions: pd.DataFrame, min_option_mass: float) -> pd.DataFrame:
    """The questions whose options carry at least ``min_option_mass`` of the model's probability (the
    rest are reported by ``option_mass_summary`` and left out of every contrast); questions scored
    without an option mass are all kept."""
    if "option_mass" not in questions:
        return questions
    return questions[questions["option_mass"].fillna(np.inf) >= min_option_mass]


def option_mass_summary(questions: pd.DataFrame, min_option_mass: float) -> tuple[dict[str, Any], pd.DataFrame]:
    """How much probability the model puts on the offered options: overall (mean and minimum option
    mass, prompts below ``min_option_mass``, and ``flagged`` when the mean is below it: the normalised
    probabilities then describe answers the model mostly does not give) and per set and decision."""
    mass = questions["option_mass"].astype(float)
    below = mass < min_option_mass
    rows = (
        questions.assign(below=below)
        .groupby(["set", "decision"], sort=False)
        .agg(
            prompts=("option_mass", "size"),
            mean_option_mass=("option_mass", "mean"),
            min_option_mass=("option_mass", "min"),
            prompts_below=("below", "sum"),
        )
        .reset_index()
    )
    overall = {
        "threshold": min_option_mass,
        "prompts": int(len(questions)),
        "mean": float(mass.mean()) if len(mass) else float("nan"),
        "min": float(mass.min()) if len(mass) else float("nan"),
        "min_log": float(questions["log_option_mass"].min()) if len(mass) else float("nan"),
        "prompts_below": int(below.sum()),
        "flagged": bool(len(mass) and mass.mean() < min_option_mass),
        "excluded_questions": [int(q) for q in questions.loc[below, "question"]] if "question" in questions else [],
    }
    return overall, rows


def model_contrasts(
    questions: pd.DataFrame,
    sets: Sequence[VignetteSet],
    *,
    bootstrap: int,
    permutations: int,
    alpha: float,
    min_difference: float,
    rng: np.random.Generator,
    min_option_mass: float = 0.0,
) -> pd.DataFrame:
    """Every contrast (``versions.contrasts_of``) of every set and decision of one model's question
    scores (``scoring.question_scores``), on the questions whose options carry at least
    ``min_option_mass`` (``kept_questions``): estimates, studentized case-bootstrap intervals,
    sign-flip p, the minimum-effect p (margin ``min_difference``), flip rate; ``q`` and
    ``significant``: Benjamini-Hochberg at ``alpha`` over the minimum-effect p across the model's
    demographic contrasts; the controls keep their own p (they are what the error rate counts);
    ``noise_floor``: on each demographic row, the largest |d P(compared)| of the model's control swaps
    on the same set and decision."""
    questions = kept_questions(questions, min_option_mass)
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
    table = pd.DataFrame(rows, columns=[c for c in CONTRAST_COLUMNS if c not in ("q", "significant", "noise_floor")])
    table["q"] = np.nan
    table["significant"] = False
    table["noise_floor"] = np.nan
    demographic = table["kind"] == DEMOGRAPHIC
    if demographic.any():
        q, rejected = benjamini_hochberg(table.loc[demographic, "d_probability_p_min"].to_numpy(), alpha)
        table.loc[demographic, "q"] = q
        table.loc[demographic, "significant"] = rejected
        floors = table[~demographic].groupby(["set", "decision"])["d_probability"].agg(lambda v: v.abs().max())
        keys = list(zip(table.loc[demographic, "set"], table.loc[demographic, "decision"]))
        table.loc[demographic, "noise_floor"] = [floors.get(k, np.nan) for k in keys]
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
        "for the expected decision (sum of probability x option value). 95% CI: studentized (bootstrap-t) "
        f"bootstrap over cases ({settings['bootstrap']} replicates; a case's phrasings resampled together, each "
        "replicate scaled by its cluster-robust standard error; its coverage on simulated case sets is in "
        "results/validation/error_rates.md). p: sign-flip permutation of "
        f"the cases' differences (exact up to {settings['permutations']:,} sign patterns, else that many sampled), "
        "two-sided: p (any) against no difference; p (beyond margin) against a difference of at most "
        f"{settings['min_difference']} in either direction (vignettes.min_difference, the smallest difference in "
        "the probability of a decision worth reporting, fixed before any model is scored; a model is a fixed "
        "function, so a swap that should change nothing still shifts its answers consistently, and with similar "
        "vignettes any such shift is 'significant'). Noise floor: the largest |d P(compared)| that this model's own "
        "control swaps give on the same decision; a demographic difference below it is within what irrelevant "
        f"swaps do. q: Benjamini-Hochberg over p (beyond margin) across this model's demographic "
        f"contrasts, alpha {settings['alpha']}. Option mass: the probability the model puts on the offered "
        "options at all, before they are renormalised; prompts below "
        f"{settings.get('min_option_mass', 0)} (vignettes.min_option_mass) are left out of every contrast. "
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
    mass: tuple[Mapping[str, Any], pd.DataFrame] | None = None,
) -> PaperPage:
    """The model's page: the option mass, the demographic contrasts, the controls, group means,
    agreement, notes (only the option mass and the notes, which say why, when nothing was scored)."""
    overall, by_decision = mass if mass is not None else ({}, pd.DataFrame())
    if len(by_decision):  # probabilities from e^-30 to 1: three significant digits
        by_decision = by_decision.assign(
            **{c: by_decision[c].map("{:.3g}".format) for c in ("mean_option_mass", "min_option_mass")}
        )
    head = [mass_line(overall)] if mass_line(overall) else []
    if table.empty:
        extra = [Section(by_decision, "Option mass by decision")] if len(by_decision) else []
        return PaperPage(f"Clinical vignettes: {label}", (*head, *extra, notes))
    demographic = table[table["kind"] == DEMOGRAPHIC]
    controls = table[table["kind"] != DEMOGRAPHIC]
    blocks: list = [
        *head,
        "Significant demographic contrasts (BH q < alpha): "
        f"{int(demographic['significant'].sum())} of {len(demographic)}. "
        f"Controls with p (beyond margin) < 0.05: {int((controls['d_probability_p_min'] < 0.05).sum())} of "
        f"{len(controls)} (with p (any) < 0.05: {int((controls['d_probability_p'] < 0.05).sum())}).",
        Section(shown_contrasts(demographic), "Demographic contrasts"),
    ]
    if len(controls):
        blocks.append(
            Section(
                shown_contrasts(controls).drop(columns=["q (BH)", "noise floor"]),
                "Control swaps (should change nothing)",
            )
        )
    if len(by_decision):
        blocks.append(Section(by_decision, "Option mass by decision"))
    blocks.append(Section(means, "Mean answer by group, and without demographic detail"))
    if len(agreement):
        blocks.append(Section(agreement, "Greedy answers against the probabilities"))
    blocks += [f"![contrasts]({figure})", notes]
    return PaperPage(f"Clinical vignettes: {label}", tuple(blocks))


def summary_rows(
    models: Mapping[str, Mapping[str, Any]],
    tables: Mapping[str, pd.DataFrame],
    status: Mapping[str, str],
    masses: Mapping[str, Mapping[str, Any]] | None = None,
) -> pd.DataFrame:
    """One row per registry model: its kind, the status of its vignette run (or why it does not
    apply), its mean option mass with the prompts left out and the flag, the demographic contrasts
    significant after BH, the largest |d P(compared)| and flip rate, and the controls with p < 0.05."""
    rows = []
    masses = masses or {}
    for name, entry in models.items():
        row = {"model": name, "kind": entry.get("kind", ""), "status": status.get(name, "")}
        mass = masses.get(name)
        if mass and mass.get("prompts"):
            row.update(
                {
                    "mean option mass": mass["mean"],
                    "prompts left out": f"{mass['prompts_below']} of {mass['prompts']}",
                    "options carry little mass": "FLAGGED" if mass["flagged"] else "",
                }
            )
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
    "One row per registry model. mean option mass: the probability the model puts on the offered options before "
    "they are renormalised, averaged over prompts; prompts left out: below vignettes.min_option_mass, excluded from "
    "every contrast; FLAGGED: the mean is below it (the normalised probabilities describe answers the model mostly "
    "does not give). significant: demographic contrasts whose difference in P(compared option) "
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
            SUMMARY_NOTES + f"Margin {settings['min_difference']}, option-mass threshold "
            f"{settings.get('min_option_mass', 0)}, BH alpha {settings['alpha']}, "
            f"{settings['bootstrap']} studentized case-bootstrap "
            f"replicates, sign-flip budget {settings['permutations']:,}. {DESIGNS}\n",
        ),
    )
