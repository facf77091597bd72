"""Measured error rates: how often each test flags what the demo world did not plant, and how often it
finds what it did. ``error_rates`` pools the decisions (``decisions``, ``null_worlds``) per test,
source, p-value kind and truth, with Clopper-Pearson 95% intervals (``medbias.metrics.error_rate``).
"""

from __future__ import annotations

import pandas as pd

from medbias.io.tables import PaperPage, PaperTable, Section, table_page
from medbias.metrics.error_rate import error_rate


def error_rates(decisions: pd.DataFrame) -> pd.DataFrame:
    """Per test, source, p-value kind and truth: flagged / decisions with a Clopper-Pearson 95%
    interval; for controls, whether the interval reaches the nominal level (``holds_level``: the
    rate is not shown to exceed it) and the ratio of the observed rate to the level."""
    rows = []
    keys = ["test", "source", "p_kind", "truth"]
    for key, part in decisions.groupby(keys, sort=False):
        rate = error_rate(part["flagged"].to_numpy())
        level = float(part["level"].iloc[0])
        row = dict(zip(keys, key))
        row.update(
            {
                "measures": "false-positive rate" if row["truth"] == "control" else "power",
                "flagged": rate.flagged,
                "decisions": rate.decisions,
                "rate": rate.rate,
                "ci_low": rate.low,
                "ci_high": rate.high,
                "level": level,
            }
        )
        if row["truth"] == "control":
            row["holds_level"] = bool(rate.low <= level)
            row["rate_over_level"] = rate.rate / level
        rows.append(row)
    return pd.DataFrame(rows)


ERROR_RATES_TITLE = "Measured error rates of the bias tests (demo world)"


ERROR_RATES_NOTES = (
    "false-positive rate: share of controls (nothing planted) flagged at the level; power: share of planted "
    "effects flagged. ci: Clopper-Pearson 95% interval over the decisions counted. holds_level: the interval "
    "reaches the nominal level (the rate is not shown to exceed it); rate_over_level: how many times the level "
    "the observed rate is (an anti-conservative test shows > 1). For BH rows the rate is per gap, and BH "
    "controls the share of false discoveries, not each gap's chance of a flag: whether a BH family of controls "
    "flags more often than 5% is planted_recovery.md's family count.",
    "WEAT and SEAT: classic = permutation test of the target words; calibrated = random attribute sets "
    "(medbias.metrics.association.calibrated_null). Fairness: BH across tasks per model, attribute and group over "
    "the score-test p (what Table C3 uses) or over the counted bootstrap p; the uncorrected interval is shown "
    "for reference. Counterfactual mismatch: McNemar's exact test of the mismatch's direction (Table V's mismatch_p) "
    "for the models trained on original notes, on the planted task and the control tasks. Log-probability score: "
    "Table 3's Mann-Whitney p of each leaning category against the control category, one value per attribute; the "
    "untrained base model's categories are its controls. Constructed null models: copies of the base model with "
    "fresh random weights (nothing learned), where the same test is run with the attribute as unit and, for "
    "comparison, with every template item as an independent unit. Benchmarks: CrowS-Pairs' binomial test under "
    "each scoring rule (nangia, bias_bench, lm_eval, each on the model kinds it scores) and StereoSet's SS "
    "permutation test against 50 on randomly initialised copies of each demo architecture (several seeds, "
    "plm.benchmarks.control_pairs pairs; benchmark_control.csv), which hold no stereotype: a rule whose scores lean "
    "without learning shows a rate far above the level (the summed log-likelihood prefers the shorter sentence); "
    "each copy is also read against the other copies by the prediction t test that benchmarks_paired.md reads a "
    "trained model against its untrained copies by ('vs the other copies'), whose rate is that test's level. "
    "Mitigation: the post-processor's recall gaps on the baseline (gap_changes.parquet): a planted gap counts as "
    "flagged when it is closed (a narrowing significant after BH and the gap after within the equivalence margin by "
    "two one-sided tests: power), a control when it is widened after BH or opened. Intersectional worst cell: the "
    "worst recall cells of tasks no intersectional plant reaches (controls; those whose gap is planted per "
    "attribute counted apart, since the test looks beyond the attributes' own gaps) and of the intersection-only "
    "plant, and of constructed tasks with a per-gender recall gap and no interaction, under the max-T test of the "
    "main-effects model (BH, and uncorrected) and under the naive score test of the "
    "worst cell as if chosen in advance. Every decision, with its unit and p: decisions.csv.",
)


def error_rates_table(rates: pd.DataFrame) -> PaperTable:
    """The pooled rates (``error_rates``) with the notes that say how each test decides."""
    return PaperTable(rates, ERROR_RATES_TITLE, ERROR_RATES_NOTES, digits=3)


def error_rates_page(
    rates: pd.DataFrame,
    coverage: pd.DataFrame | None = None,
    level: pd.DataFrame | None = None,
    post_processor: pd.DataFrame | None = None,
) -> PaperPage:
    """error_rates.md: the rates table with its notes, the measured coverage of the vignette
    contrasts' intervals (``vignette_coverage.coverage_table``), one row per scenario and case count,
    the measured level of their sign-flip tests (``vignette_coverage.minimum_effect_level``), and the
    coverage of the post-processor's intervals (``post_processor_coverage``)."""
    from medbias.validation.post_processor_coverage import NOTES as POST_PROCESSOR_NOTES
    from medbias.validation.vignette_coverage import COVERAGE_NOTES, LEVEL_NOTES

    page = table_page(error_rates_table(rates))
    blocks = list(page.blocks)
    if coverage is not None and not coverage.empty:
        wide = coverage.pivot_table(index=["scenario", "cases"], columns="interval", values="coverage", sort=False)
        wide = wide.reset_index()
        wide.columns.name = None
        wide["Monte Carlo SE (at most)"] = coverage.groupby(["scenario", "cases"], sort=False)["mc_se"].max().to_numpy()
        blocks += [Section(wide, "Coverage of the vignette contrasts' 95% intervals"), COVERAGE_NOTES]
    if level is not None and not level.empty:
        blocks += [
            Section(level.drop(columns=["true_mean"]), "Level of the vignette contrasts' sign-flip tests"),
            LEVEL_NOTES,
        ]
    if post_processor is not None and not post_processor.empty:
        blocks += [
            Section(post_processor, "Coverage of the post-processor's recall-gap intervals"),
            POST_PROCESSOR_NOTES,
        ]
    return PaperPage(page.title, tuple(blocks))


def log_rates(rates: pd.DataFrame, log) -> None:
    """One log line per pooled rate: test, source, p kind, what it measures, flagged / decisions."""
    for row in rates.itertuples(index=False):
        log.info(
            "%s | %s | %s | %s: %d / %d = %.3f",
            row.test,
            row.source,
            row.p_kind,
            row.measures,
            row.flagged,
            row.decisions,
            row.rate,
        )
