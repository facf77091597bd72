"""Measured error rates: how often each test flags what the demo world did not plant, and how often it
finds what it did (DESIGN: "Tests assert that the pipeline finds what was planted and does not find
what was not"; this module turns that into rates with intervals).

Every source yields decisions, one row per (unit, p-value kind): ``truth`` is "control" (nothing
planted: a flag is a false positive) or "planted" (a flag is a detection), ``flagged`` whether the
test rejected at its level. ``error_rates`` pools them per test, source, p-value kind and truth,
with Clopper-Pearson 95% intervals (``replication.error_rate``).

Sources: the rios study's seed replicates (WEAT), the plm study's SEAT (the untrained model's every
test counts as a control: it learned nothing), the hurtful study's fairness gaps after BH, and null
worlds constructed here (isotropic random vectors, exchangeable or clustered target words) that
measure the engine's calibration with as many worlds as one asks for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from medbias.metrics.association import NullVocabulary, weat
from medbias.metrics.fairness import benjamini_hochberg_by
from medbias.replication import error_rate

DECISION_COLUMNS = ["test", "source", "unit", "truth", "p_kind", "p", "flagged", "level"]


def rios_weat_decisions(seeds: pd.DataFrame, pubmed_truth: Mapping[str, Any], level: float = 0.05) -> pd.DataFrame:
    """Every decade x WEAT test x seed: planted where the truth plants the test with strength > 0 in
    that decade, control for the control tests and for every test in a decade of strength 0."""
    decades = list(dict.fromkeys(seeds["decade"]))
    strengths = {p["name"]: dict(zip(decades, p["strengths"])) for p in pubmed_truth["planted_pairs"]}
    rows = []
    for r in seeds.itertuples(index=False):
        strength = 0.0 if r.control else strengths.get(r.test, {}).get(r.decade, 0.0)
        truth = "planted" if strength > 0 else "control"
        unit = f"{r.decade} {r.test} seed {r.replicate}" + (f" (strength {strength})" if strength else "")
        for kind, p in (("classic permutation", r.p_value), ("calibrated null", r.p_calibrated)):
            if np.isfinite(p):
                rows.append(["WEAT", "rios demo world (word2vec per decade)", unit, truth, kind, p, p < level, level])
    return pd.DataFrame(rows, columns=DECISION_COLUMNS)


def seat_decisions(seat: pd.DataFrame, plm_truth: Mapping[str, Any], level: float = 0.05) -> pd.DataFrame:
    """SEAT of every model without debiasing: on the trained models the truth's planted tests are
    planted and its controls controls; every test of a model that was not trained is a control."""
    rows = []
    trained = set(plm_truth["trained_models"])
    plain = seat[(seat["debias"] == "none") & (seat["status"] == "ok")]
    for r in plain.itertuples(index=False):
        if r.model in trained:
            truth = "planted" if r.test in plm_truth["seat_planted"] else "control" if r.test in plm_truth["seat_controls"] else None
        else:
            truth = "control"
        if truth is None:
            continue
        for kind, p in (("classic permutation", r.p_value), ("calibrated null", getattr(r, "p_calibrated", np.nan))):
            if np.isfinite(p):
                rows.append(["SEAT", "plm demo world (tiny BERT, GPT-2; untrained BART)", f"{r.model} {r.test}", truth,
                             kind, p, p < level, level])
    return pd.DataFrame(rows, columns=DECISION_COLUMNS)


def gap_decisions(gaps: pd.DataFrame, mimic_truth: Mapping[str, Any], task_labels: Mapping[str, str],
                  alpha: float = 0.05) -> pd.DataFrame:
    """Recall gaps of every model, task, attribute and group: planted for the disadvantaged group of
    each planted recall gap on every task whose label (``task_labels``: task id -> phenotype, from
    tasks.csv) is its phenotype, control elsewhere (the other group of a
    two-group attribute on a planted task mirrors the planted gap and is left out). Flags: BH over
    the SE-based p (what Table C3 uses), BH over the counted p (floored at 2/(R+1)), and the
    uncorrected 95% interval."""
    recall = gaps[(gaps["metric"] == "recall") & gaps["gap"].notna()].copy()
    planted_units = set()
    mirrored = set()
    for plant in mimic_truth["planted_recall_gaps"]:
        on_task = recall["task"].map(task_labels) == plant["phenotype"]
        for index in recall.index[on_task & (recall["attribute"] == plant["attribute"])]:
            (planted_units if recall.at[index, "group"] == plant["disadvantaged"] else mirrored).add(index)
    recall = recall.drop(index=list(mirrored))
    counted = benjamini_hochberg_by(recall, "p_bootstrap", ["model", "attribute", "group"], alpha)[1].to_numpy()
    rows = []
    for k, (index, r) in enumerate(recall.iterrows()):
        truth = "planted" if index in planted_units else "control"
        unit = f"{r['model']} {r['task']} {r['attribute']}={r['group']}"
        for kind, p, flagged in (("SE-based p, BH", r["p_bh"], bool(r["significant_bh"])),
                                 ("counted p, BH", r["p_bootstrap"], bool(counted[k])),
                                 ("95% interval excludes 0, uncorrected", np.nan, bool(r["significant"]))):
            rows.append(["fairness recall gap", "hurtful demo world (57 tasks)", unit, truth, kind, p, flagged, alpha])
    return pd.DataFrame(rows, columns=DECISION_COLUMNS)


def null_world_decisions(n_worlds: int, seed: int, *, draws: int = 1000, level: float = 0.05, dim: int = 30,
                         vocabulary: int = 400, set_size: int = 8) -> pd.DataFrame:
    """WEAT on constructed worlds where nothing is planted (A and B are random words; isotropic
    Gaussian vectors): 'exchangeable' targets are random words too, 'clustered' targets share one
    random component per set (as words that share documents do). Two-sided tests."""
    rows = []
    for clustered in (False, True):
        label = "clustered targets" if clustered else "exchangeable targets"
        for world in range(n_worlds):
            rng = np.random.default_rng([seed, world, int(clustered)])
            words = [f"w{i}" for i in range(vocabulary)]
            vectors = {w: rng.normal(size=dim) for w in words}
            centre_x, centre_y = rng.normal(size=dim), rng.normal(size=dim)
            xs, ys = [f"x{i}" for i in range(set_size)], [f"y{i}" for i in range(set_size)]
            for x, y in zip(xs, ys):
                vectors[x] = (1.5 * centre_x if clustered else 0) + rng.normal(size=dim)
                vectors[y] = (1.5 * centre_y if clustered else 0) + rng.normal(size=dim)
            result = weat(vectors, xs, ys, words[:set_size], words[set_size:2 * set_size], rng=rng, n_bootstrap=0,
                          alternative="two-sided", null_vocabulary=NullVocabulary([*words, *xs, *ys], draws=draws))
            for kind, p in (("classic permutation", result.p_value), ("calibrated null", result.calibrated.p_value)):
                rows.append(["WEAT", f"constructed null worlds ({label})", f"world {world}", "control", kind, p,
                             p < level, level])
    return pd.DataFrame(rows, columns=DECISION_COLUMNS)


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
        row.update({"measures": "false-positive rate" if row["truth"] == "control" else "power",
                    "flagged": rate.flagged, "decisions": rate.decisions, "rate": rate.rate,
                    "ci_low": rate.low, "ci_high": rate.high, "level": level})
        if row["truth"] == "control":
            row["holds_level"] = bool(rate.low <= level)
            row["rate_over_level"] = rate.rate / level
        rows.append(row)
    return pd.DataFrame(rows)


def combine(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    return pd.concat([f for f in frames if len(f)], ignore_index=True)
