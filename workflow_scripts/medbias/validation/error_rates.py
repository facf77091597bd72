"""Measured error rates: how often each test flags what the demo world did not plant, and how often it
finds what it did. ``error_rates`` pools the decisions (``decisions``, ``null_worlds``) per test,
source, p-value kind and truth, with Clopper-Pearson 95% intervals (``medbias.metrics.error_rate``).
"""

from __future__ import annotations

import pandas as pd

from medbias.io.tables import PaperTable
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
    "comparison, with every template item as an independent unit. Benchmarks: CrowS-Pairs' sign test and "
    "StereoSet's SS permutation test against 50 on randomly initialised copies of each demo architecture (several "
    "seeds; benchmark_control.csv), which hold no stereotype. Every decision, with its unit and p: decisions.csv.",
)


def error_rates_table(rates: pd.DataFrame) -> PaperTable:
    """error_rates.md: the pooled rates (``error_rates``) with the notes that say how each test decides."""
    return PaperTable(rates, ERROR_RATES_TITLE, ERROR_RATES_NOTES, digits=3)
