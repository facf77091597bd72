"""Measured error rates: how often each test flags what the demo world did not plant, and how often it
finds what it did (DESIGN: "Tests assert that the pipeline finds what was planted and does not find
what was not"; this module turns that into rates with intervals).

Every source yields decisions, one row per (unit, p-value kind): ``truth`` is "control" (nothing
planted: a flag is a false positive) or "planted" (a flag is a detection), ``flagged`` whether the
test rejected at its level. ``error_rates`` pools them per test, source, p-value kind and truth,
with Clopper-Pearson 95% intervals (``replication.error_rate``).

Sources: the rios study's seed replicates (WEAT), the plm study's SEAT (the untrained model's every
test counts as a control: it learned nothing), the hurtful study's fairness gaps after BH and its
Table 3 log-probability score, the mental study's counterfactual mismatch (McNemar's exact test of
its direction), null worlds constructed here (isotropic random vectors, exchangeable or clustered
target words) that measure the engine's calibration with as many worlds as one asks for, and
random-initialised copies of the base model, where Table 3's test is run with the attribute as its
unit (as the table reports it) and with every template item as one.

The ``*_recovery`` functions (results/validation/planted_recovery) read the tables as a reader sees them and say,
for every planted effect of the truth file, whether it was found by the table's own criterion, and
for the controls how many were flagged against what chance allows (``control_family``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from medbias.studies.hurtful.downstream import GAP_KEYS
from medbias.metrics.logprob_tests import PAIR_UNITS, category_vs_control_p, paired_differences
from medbias.metrics.association import NullVocabulary, weat
from medbias.metrics.fairness import benjamini_hochberg_by
from medbias.metrics.replication import error_rate

DECISION_COLUMNS = ["test", "source", "unit", "truth", "p_kind", "p", "flagged", "level"]


def planted_strengths(pubmed_truth: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """Planted pair -> decade label -> planted strength, from the truth file's own decade labels."""
    decades = [d["decade"] for d in pubmed_truth["decades"]]
    return {p["name"]: dict(zip(decades, p["strengths"])) for p in pubmed_truth["planted_pairs"]}


def rios_weat_decisions(seeds: pd.DataFrame, pubmed_truth: Mapping[str, Any], level: float = 0.05,
                        table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every decade x WEAT test x seed: planted where the truth plants the test with strength > 0 in
    that decade, control for the control tests and for every test in a decade of strength 0. With
    ``table`` (Figure 1's, replicate 0) holding ``p_document``, the document-level null's decisions too."""
    strengths = planted_strengths(pubmed_truth)
    rows = []
    with_document = table is not None and "p_document" in table.columns
    document = table.set_index(["decade", "test"])["p_document"] if with_document else None
    for r in seeds.itertuples(index=False):
        strength = 0.0 if r.control else strengths.get(r.test, {}).get(r.decade, 0.0)
        truth = "planted" if strength > 0 else "control"
        unit = f"{r.decade} {r.test} seed {r.replicate}" + (f" (strength {strength})" if strength else "")
        kinds = [("classic permutation", r.p_value), ("calibrated null", r.p_calibrated)]
        if document is not None and r.replicate == 0:
            kinds.append(("document-level null", float(document.get((r.decade, r.test), np.nan))))
        for kind, p in kinds:
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


def mirror_rows(gaps: pd.DataFrame) -> pd.Series:
    """True for a gap whose mirror is also in ``gaps``: the row of group h compared with g, where
    g (sorting before h) is compared with h in the same model, task, attribute and metric."""
    keys = ["model", "task", "attribute", "metric"]
    pairs = set(zip(*(gaps[k] for k in keys), gaps["group"].astype(str), gaps["compared_with"].astype(str)))
    return pd.Series([(*key, other, group) in pairs and other < group
                      for *key, group, other in zip(*(gaps[k] for k in keys), gaps["group"].astype(str),
                                                    gaps["compared_with"].astype(str))], index=gaps.index)


def recall_gap_truth(gaps: pd.DataFrame, mimic_truth: Mapping[str, Any], task_labels: Mapping[str, str]) -> pd.DataFrame:
    """The defined recall gaps of every model, task, attribute and group with a ``truth`` column:
    planted for the disadvantaged group of each planted recall gap on every task whose label
    (``task_labels``: task id -> phenotype, from tasks.csv) is its phenotype, control elsewhere.
    Left out, being neither: every other gap on those tasks and on the aggregate tasks the phenotype
    feeds (any_<type>, any_disease). The other group of a two-group attribute mirrors the planted
    gap, an intersection with the planted attribute carries it (F & WHITE), and any attribute whose
    groups differ in their share of the disadvantaged group inherits part of it (ethnicity, where
    one ethnicity has more women).

    A gap and its mirror (group h against g where g is compared with h: the same two rates, the
    same p) are one test, so only the row of the group that sorts first is kept; counted twice, one
    flag would count as two families."""
    recall = gaps[(gaps["metric"] == "recall") & gaps["gap"].notna()].copy()
    recall = recall[~mirror_rows(recall)]
    label = recall["task"].map(task_labels)
    planted_units, left_out = set(), set()
    for plant in mimic_truth["planted_recall_gaps"]:
        kind = mimic_truth["phenotypes"][plant["phenotype"]]["type"]
        touched = label.isin([plant["phenotype"], f"any_{kind}", "any_disease"])
        exact = (label == plant["phenotype"]) & (recall["attribute"] == plant["attribute"]) & (
            recall["group"] == plant["disadvantaged"])
        planted_units |= set(recall.index[exact])
        left_out |= set(recall.index[touched & ~exact])
    recall = recall.drop(index=list(left_out - planted_units))
    recall["truth"] = ["planted" if i in planted_units else "control" for i in recall.index]
    return recall


def gap_decisions(gaps: pd.DataFrame, mimic_truth: Mapping[str, Any], task_labels: Mapping[str, str],
                  alpha: float = 0.05) -> pd.DataFrame:
    """Recall gaps as ``recall_gap_truth`` marks them. Flags: BH over the score-test p (what Table C3
    uses), BH over the counted p (floored at 2/(R+1)), and the uncorrected 95% interval."""
    recall = recall_gap_truth(gaps, mimic_truth, task_labels)
    counted = benjamini_hochberg_by(recall, "p_bootstrap", ["model", "attribute", "group"], alpha)[1].to_numpy()
    rows = []
    for k, (_, r) in enumerate(recall.iterrows()):
        unit = f"{r['model']} {r['task']} {r['attribute']}={r['group']}"
        for kind, p, flagged in (("score-test p, BH", r["p_bh"], bool(r["significant_bh"])),
                                 ("counted p, BH", r["p_bootstrap"], bool(counted[k])),
                                 ("95% interval excludes 0, uncorrected", np.nan, bool(r["significant"]))):
            rows.append(["fairness recall gap", "hurtful demo world (57 tasks)", unit, r["truth"], kind, p, flagged, alpha])
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


# --- planted recovery: does the demo world's run find what it planted and nothing else? ---------

# family: the controls tested together (one BH family of recall gaps; every other test alone)
RECOVERY_COLUMNS = ["study", "effect", "truth", "where", "criterion", "observed", "recovered", "family"]


def _row(study: str, effect: str, truth: str, where: str, criterion: str, observed: str, recovered: bool,
         family: str | None = None) -> list:
    return [study, effect, truth, where, criterion, observed, bool(recovered), family or effect]


def rios_recovery(table: pd.DataFrame, trends: pd.DataFrame, pubmed_truth: Mapping[str, Any]) -> pd.DataFrame:
    """Figure 1 as a reader sees it (replicate 0, stars = calibrated p): every planted pair is
    significant with a positive mean difference in every decade where it is planted, and nothing
    is significant where nothing is planted (control pairs; planted pairs in their null decade);
    the trend over decades falls for every planted pair and is flat (p >= 0.05) for the controls."""
    strengths = planted_strengths(pubmed_truth)
    rows = []
    for r in table.itertuples(index=False):
        strength = 0.0 if r.control else strengths.get(r.test, {}).get(r.decade, 0.0)
        p = r.p_calibrated if np.isfinite(r.p_calibrated) else r.p_value
        observed = f"md {r.mean_difference:+.3f}, d {r.effect_size:+.2f}, p {p:.4g}"
        if strength > 0:
            rows.append(_row("rios", f"{r.test} x gender, {r.decade} (strength {strength})", "planted", "fig1_weat.csv",
                             "significant and mean difference > 0", observed,
                             bool(r.significant) and r.mean_difference > 0))
        else:
            rows.append(_row("rios", f"{r.test} x gender, {r.decade}", "control", "fig1_weat.csv", "not significant",
                             observed, not bool(r.significant)))
    for r in trends.itertuples(index=False):
        observed = f"slope {r.md_slope:+.4f} per decade, p {r.md_trend_p:.3g}"
        if r.test in strengths:
            rows.append(_row("rios", f"{r.test}: association falls by decade", "planted", "fig1_weat_trend.csv",
                             "mean-difference slope < 0, trend p < 0.05", observed, r.md_slope < 0 and r.md_trend_p < 0.05))
        elif r.control:
            rows.append(_row("rios", f"{r.test}: no trend", "control", "fig1_weat_trend.csv", "trend p >= 0.05",
                             observed, r.md_trend_p >= 0.05))
    return pd.DataFrame(rows, columns=RECOVERY_COLUMNS)


def seat_recovery(seat: pd.DataFrame, plm_truth: Mapping[str, Any]) -> pd.DataFrame:
    """Table 2 without debiasing (stars = calibrated p): every planted test of every trained model
    starred with a positive effect; the birthday controls of the trained models and every test of
    a model that was not trained on the plm corpus unstarred."""
    trained = set(plm_truth["trained_models"])
    plain = seat[(seat["debias"] == "none") & (seat["status"] == "ok")]
    rows = []
    for r in plain.itertuples(index=False):
        p = getattr(r, "p_calibrated", np.nan)
        observed = f"d {r.effect_size:+.3f}, p {p if np.isfinite(p) else r.p_value:.4g}"
        if r.model in trained and r.test in plm_truth["seat_planted"]:
            rows.append(_row("plm", f"{r.model} {r.test}", "planted", "seat_long.csv", "significant and effect > 0",
                             observed, bool(r.significant) and r.effect_size > 0))
        elif r.model not in trained or r.test in plm_truth["seat_controls"]:
            why = "" if r.model in trained else " (model not trained on the plm corpus)"
            rows.append(_row("plm", f"{r.model} {r.test}{why}", "control", "seat_long.csv", "not significant", observed,
                             not bool(r.significant)))
    return pd.DataFrame(rows, columns=RECOVERY_COLUMNS)


def gap_recovery(gaps: pd.DataFrame, mimic_truth: Mapping[str, Any], task_labels: Mapping[str, str],
                 seeds: pd.DataFrame | None = None) -> pd.DataFrame:
    """Table C3's recall gaps (BH within model, attribute and group; ``recall_gap_truth``): each
    planted gap negative and significant after BH for its disadvantaged group on every task of its
    phenotype and every model; every other recall gap not significant after BH.

    With ``seeds`` (``downstream.seed_spread`` over R > 1 classifier seed replicates) a decision is
    the majority's: a planted gap is found when more than half of the replicates find it below 0
    after BH, and a control is flagged when more than half flag it. A single classifier seed can
    miss a planted gap the model's features carry (or flag one they do not), so the model, not one
    seed of its classifier, is what the verdict describes."""
    recall = recall_gap_truth(gaps, mimic_truth, task_labels)
    replicates = 1
    if seeds is not None and len(seeds):
        keys = list(GAP_KEYS)
        columns = ["replicates", "significant_bh_seeds", "significant_bh_below_seeds", "gap_seed_min", "gap_seed_max"]
        recall = recall.merge(seeds[keys + columns], on=keys, how="left", validate="one_to_one")
        if recall["replicates"].isna().any():
            raise ValueError("gap_seeds.csv lacks some recall gaps of gaps.parquet")
        replicates = int(recall["replicates"].max())
    where = "<model>/gaps.parquet" + (", gap_seeds.csv" if replicates > 1 else "")
    rows = []
    for _, r in recall.iterrows():
        unit = f"{r['model']} {r['task']} {r['attribute']}={r['group']}"
        observed = f"gap {r['gap']:+.3f} [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}], BH p {r['p_bh']:.3g}"
        if replicates > 1:
            majority = replicates / 2
            planted_found = r["significant_bh_below_seeds"] > majority
            flagged = r["significant_bh_seeds"] > majority
            count = r["significant_bh_below_seeds"] if r["truth"] == "planted" else r["significant_bh_seeds"]
            observed += (f"; BH-significant{' below 0' if r['truth'] == 'planted' else ''} in {int(count)} of "
                         f"{replicates} seeds (gaps {r['gap_seed_min']:+.3f} to {r['gap_seed_max']:+.3f})")
        else:
            planted_found = bool(r["significant_bh"]) and r["gap"] < 0
            flagged = bool(r["significant_bh"])
        if r["truth"] == "planted":
            criterion = ("recall gap < 0, significant after BH" +
                         (f", in most of {replicates} classifier seeds" if replicates > 1 else ""))
            rows.append(_row("hurtful", f"{unit} ({task_labels.get(r['task'], r['task'])})", "planted",
                             where, criterion, observed, bool(planted_found)))
        else:
            criterion = "not significant after BH" + (f" in most of {replicates} classifier seeds" if replicates > 1 else "")
            rows.append(_row("hurtful", unit, "control", where, criterion, observed,
                             not bool(flagged), f"{r['model']} {r['attribute']}={r['group']} (BH over tasks)"))
    return pd.DataFrame(rows, columns=RECOVERY_COLUMNS)


def logprob_distances(table: pd.DataFrame, logprob_truth: Mapping[str, Any]) -> pd.DataFrame:
    """Table 3 (gender set), one row per model and leaning category of the truth file: its mean
    difference minus the control category's (``distance``), the Mann-Whitney p against the control,
    and ``on_lean_side`` (distance > 0 for a male lean, < 0 for a female one)."""
    control = logprob_truth["control_category"]
    gender = table[table["target_set"] == "gender"]
    reference = gender[gender["category"] == control].set_index("model")["mean_difference"]
    cells = gender[(gender["category"] != control) & gender["category"].isin(list(logprob_truth["categories"]))]
    lean = cells["category"].map(lambda c: logprob_truth["categories"][c]["lean"])
    distance = cells["mean_difference"] - cells["model"].map(reference)
    return pd.DataFrame({"model": cells["model"], "category": cells["category"], "lean": lean, "distance": distance,
                         "p": cells["mannwhitney_vs_control_p"],
                         "on_lean_side": distance * lean.map({"male": 1, "female": -1}) > 0})


def logprob_recovery(table: pd.DataFrame, logprob_truth: Mapping[str, Any], pretrained: Sequence[str],
                     untrained: Sequence[str], level: float = 0.01) -> pd.DataFrame:
    """Table 3 (gender): on every model pretrained on the demo notes, each leaning category's mean
    difference lies on its lean's side of the control category's, Mann-Whitney p < ``level`` (the
    truth file's expectation); on an untrained model, no category is further from the control than
    1% of the pretrained models' largest such distance (Mann-Whitney ranks even the tiny,
    systematic differences of random weights, so size is the claim there)."""
    control = logprob_truth["control_category"]
    distances = logprob_distances(table, logprob_truth)
    trained = distances[distances["model"].isin(list(pretrained))]
    reach = float(trained["distance"].abs().max()) if len(trained) else 0.0
    rows = []
    for r in trained.itertuples(index=False):
        rows.append(_row("hurtful", f"{r.model}: {r.category} leans {r.lean} vs {control}", "planted",
                         "table3_logprob_long.csv", f"on the {r.lean} side, Mann-Whitney p < {level} over attributes",
                         f"distance {r.distance:+.4f}, p {r.p:.3g}", r.on_lean_side and r.p < level))
    for r in distances[distances["model"].isin(list(untrained))].itertuples(index=False):
        rows.append(_row("hurtful", f"{r.model} (untrained): {r.category} vs {control}", "control",
                         "table3_logprob_long.csv", "|distance| < 1% of the pretrained models' largest",
                         f"distance {r.distance:+.6f}", abs(r.distance) < 0.01 * reach))
    return pd.DataFrame(rows, columns=RECOVERY_COLUMNS)


def counterfactual_decisions(fairness: pd.DataFrame, mental_truth: Mapping[str, Any], learner: str = "svm",
                             level: float = 0.05) -> pd.DataFrame:
    """Table V's mismatch direction (McNemar's exact test, ``mismatch_p``) of the models trained on
    the original notes: planted for the task with a planted label bias, control for the truth's
    control tasks, on every embedding."""
    planted = {b["task"] for b in mental_truth["planted_label_bias"]}
    controls = set(mental_truth["control_tasks"])
    part = fairness[(fairness["learner"] == learner) & (fairness["treatment"] == "original")]
    rows = []
    for r in part.itertuples(index=False):
        truth = "planted" if r.task in planted else "control" if r.task in controls else None
        if truth is not None:
            rows.append(["counterfactual mismatch", f"mental demo world ({learner}, original notes)",
                         f"{r.embedding} {r.task}", truth, "McNemar exact", r.mismatch_p, r.mismatch_p < level, level])
    return pd.DataFrame(rows, columns=DECISION_COLUMNS)


def logprob_model_roles(logprob_models: Sequence[str], variants: Sequence[str], base_model: str
                        ) -> tuple[list[str], list[str]]:
    """Table 3's models split into those pretrained on the demo notes (the hurtful variants) and the
    untrained one (the demo's base model is a randomly initialised tiny BERT)."""
    return ([m for m in logprob_models if m in variants], [m for m in logprob_models if m == base_model])


def logprob_decisions(table: pd.DataFrame, logprob_truth: Mapping[str, Any], pretrained: Sequence[str],
                      untrained: Sequence[str], level: float = 0.05) -> pd.DataFrame:
    """Table 3's Mann-Whitney p of each leaning category against the control category (gender set):
    planted on the pretrained models (found only on the side of the category's lean), control on
    the untrained one (it learned nothing)."""
    rows = []
    for r in logprob_distances(table, logprob_truth).itertuples(index=False):
        truth = "planted" if r.model in pretrained else "control" if r.model in untrained else None
        if truth is None:
            continue
        flagged = r.p < level and (r.on_lean_side or truth == "control")
        rows.append(["log-probability score", "hurtful demo world (Table 3, gender)", f"{r.model} {r.category}",
                     truth, LOGPROB_P_KINDS["attribute"], r.p, bool(flagged), level])
    return pd.DataFrame(rows, columns=DECISION_COLUMNS)


LOGPROB_P_KINDS = {"attribute": "Mann-Whitney vs control, attribute as unit (Table 3)",
                   "pair": "Mann-Whitney vs control, template item as unit"}


def logprob_null_model_decisions(frames: Sequence[pd.DataFrame], groups: Mapping[str, Sequence[str]],
                                 control_category: str, level: float = 0.05) -> pd.DataFrame:
    """Table 3's test of each category against ``control_category`` on models that learned nothing
    (``medbias.metrics.logprob_tests.random_initialised_score_frames``): every category is a control. Both units of
    ``category_vs_control_p``: the attribute (what Table 3 reports) and the template item (as if items
    were independent). ``groups``: the target set's groups, the first the reference (male, female)."""
    reference, group = list(groups)[:2]
    rows = []
    for k, scores in enumerate(frames):
        pairs = paired_differences(scores, groups[reference], groups[group])
        for category in sorted(set(pairs["category"]) - {control_category}):
            for unit in PAIR_UNITS:
                p = category_vs_control_p(pairs, category, control_category, unit=unit)
                rows.append(["log-probability score", "constructed null models (random-initialised base model)",
                             f"model {k} {category}", "control", LOGPROB_P_KINDS[unit], p, bool(p < level), level])
    return pd.DataFrame(rows, columns=DECISION_COLUMNS)


def mental_recovery(fairness: pd.DataFrame, direct_bias: pd.DataFrame, mental_truth: Mapping[str, Any],
                    corpus_embeddings: Mapping[str, str], learner: str = "svm", level: float = 0.05) -> pd.DataFrame:
    """Table V and Figure 2: the planted label bias shows as a mismatch that favours its gender
    (McNemar p < ``level``) on the original notes of every embedding and is gone (mismatch <= 0.1
    and under half the original's) after augmentation; the control tasks' original mismatch has no
    direction (p >= ``level``); the corpus with male-leaning depression synonyms leans male (interval
    of the signed lean below 0, and below random words' lean: calibrated p < ``level``) with a Direct
    Bias above the other corpus's; in a corpus with no planted lean (a control) the synonyms lean no
    more than random words do (calibrated p >= ``level``). ``corpus_embeddings``: truth corpus ->
    embedding name."""
    part = fairness[fairness["learner"] == learner].set_index(["embedding", "treatment", "task"])
    rows = []
    for bias in mental_truth["planted_label_bias"]:
        for embedding in part.index.get_level_values(0).unique():
            original, augmented = part.loc[(embedding, "original", bias["task"])], part.loc[(embedding, "augmented", bias["task"])]
            rows.append(_row("mental", f"{embedding} {bias['task']}: label bias favours {bias['favoured']}", "planted",
                             "table5_fairness_long.csv", f"original: mismatch favours {bias['favoured']}, McNemar p < {level}",
                             f"mismatch {original['mismatch']:.3f} ({original['mismatch_group'] or '-'}), p {original['mismatch_p']:.3g}",
                             original["mismatch_group"] == bias["favoured"] and original["mismatch_p"] < level))
            rows.append(_row("mental", f"{embedding} {bias['task']}: augmentation removes it", "planted",
                             "table5_fairness_long.csv", "augmented mismatch <= 0.1 and < half the original's",
                             f"mismatch {augmented['mismatch']:.3f} vs {original['mismatch']:.3f}",
                             augmented["mismatch"] <= 0.1 and augmented["mismatch"] < original["mismatch"] / 2))
    for task in mental_truth["control_tasks"]:
        for embedding in part.index.get_level_values(0).unique():
            original = part.loc[(embedding, "original", task)]
            rows.append(_row("mental", f"{embedding} {task}: no label bias", "control", "table5_fairness_long.csv",
                             f"original: McNemar p >= {level}",
                             f"mismatch {original['mismatch']:.3f} ({original['mismatch_group'] or '-'}), p {original['mismatch_p']:.3g}",
                             original["mismatch_p"] >= level))
    table = direct_bias.set_index("embedding")
    leaning = [c for c, plant in mental_truth["direct_bias"].items() if plant["depression_male_share"] > 0.5]
    for corpus in leaning:
        embedding = corpus_embeddings[corpus]
        others = [corpus_embeddings[c] for c in mental_truth["direct_bias"] if c != corpus]
        r = table.loc[embedding]
        rows.append(_row("mental", f"{embedding}: depression synonyms lean male", "planted", "fig2_direct_bias.csv",
                         f"signed lean interval below 0 and below random words' (calibrated p < {level}), Direct Bias "
                         "above the other vectors'",
                         f"lean [{r['signed_low']:+.3f}, {r['signed_high']:+.3f}], random words {r['random_words_signed_mean']:+.3f}, "
                         f"p {r['signed_p_calibrated']:.3g}; DB {r['direct_bias']:.3f} vs "
                         + ", ".join(f"{table.at[o, 'direct_bias']:.3f}" for o in others),
                         r["signed_high"] < 0 and r["signed_mean_cos"] < r["random_words_signed_mean"]
                         and r["signed_p_calibrated"] < level
                         and all(r["direct_bias"] > table.at[o, "direct_bias"] for o in others)))
    for corpus in (c for c, plant in mental_truth["direct_bias"].items() if plant["depression_male_share"] == 0.5):
        embedding = corpus_embeddings[corpus]
        r = table.loc[embedding]
        rows.append(_row("mental", f"{embedding}: depression synonyms lean no more than random words", "control",
                         "fig2_direct_bias.csv", f"calibrated p of the signed lean against random words >= {level}",
                         f"lean {r['signed_mean_cos']:+.3f} [{r['signed_low']:+.3f}, {r['signed_high']:+.3f}], random words "
                         f"{r['random_words_signed_mean']:+.3f}, p {r['signed_p_calibrated']:.3g}",
                         r["signed_p_calibrated"] >= level))
    return pd.DataFrame(rows, columns=RECOVERY_COLUMNS)


def corpus_embeddings(embeddings: Mapping[str, Mapping[str, Any]], corpora: Sequence[str]) -> dict[str, str]:
    """Demo world: which configured embedding was trained on which truth corpus (its source file is
    ``<corpus>-w2v.bin``, as rules/synth.smk writes it)."""
    found = {}
    for corpus in corpora:
        names = [n for n, e in embeddings.items() if Path(str(e["source"])).name == f"{corpus}-w2v.bin"]
        if len(names) != 1:
            raise ValueError(f"demo world: expected one embedding whose source is {corpus}-w2v.bin, found {names}")
        found[corpus] = names[0]
    return found


def control_family(recovery: pd.DataFrame, level: float = 0.05) -> pd.DataFrame:
    """Per study, the control families with a flag against what chance allows at ``level``. A
    family is one test, or the controls one correction is applied over (a BH family of recall
    gaps): under no effect, each family has at most a ``level`` chance of any flag, so with n
    families the number flagged is at most Binomial(n, level); ``binomial_p`` is the one-sided p of
    seeing at least the observed number, and ``clean_at_level`` that p >= 0.05."""
    from scipy.stats import binom

    rows = []
    for study, part in recovery[recovery["truth"] == "control"].groupby("study", sort=False):
        by_family = (~part["recovered"]).groupby(part["family"], sort=False).any()
        flagged, n = int(by_family.sum()), len(by_family)
        p = float(binom.sf(flagged - 1, n, level)) if flagged else 1.0
        rows.append({"study": study, "controls": len(part), "flagged": int((~part["recovered"]).sum()),
                     "families": n, "families_flagged": flagged, "expected_by_chance": n * level,
                     "binomial_p": p, "clean_at_level": p >= 0.05,
                     "flagged_controls": "; ".join(part.loc[~part["recovered"], "effect"])})
    return pd.DataFrame(rows)


# the title and notes of error_rates.md
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
    "comparison, with every template item as an independent unit. Every decision, with its unit and p: decisions.csv.",
)
