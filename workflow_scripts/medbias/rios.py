"""Study "rios" (Rios, Joshi and Shin 2020): gender bias in per-decade PubMed word embeddings.

Pure functions from {decade label: word vectors} and the word-set file to the paper's tables:
WEAT for the five stereotypes of Table 2 (Figure 1) over every training seed replicate, with the
classic and the calibrated p-value and the trend over decades, ECT for occupations and mental-health words
(Figure 2), RIPA's most male and most female words (Table 4, the 1960s included), and the coverage of
every word set (no word is dropped silently). All statistics come from ``medbias.metrics.association``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from medbias.errors import MedbiasInputError
from medbias.metrics.association import (
    NullVocabulary,
    WordSetCoverage,
    bootstrap_ect,
    calibrated_columns,
    ect_score,
    lookup,
    percentile_interval,
    relation_vector,
    ripa_scores,
    weat,
)
from medbias.replication import decade_trend


def _lower(words) -> list[str]:
    return [w.lower() for w in words]


def _coverage_rows(decade: str, coverages: Mapping[str, WordSetCoverage]) -> list[dict[str, Any]]:
    return [
        {"decade": decade, "word_set": c.name, "requested": c.requested, "found": len(c.found),
         "missing_count": len(c.missing), "missing": " ".join(c.missing)}
        for c in coverages.values()
    ]


def wordset_words(wordsets: Mapping[str, Any]) -> frozenset[str]:
    """Every word of the word-set file, lower-cased: kept out of the calibrated null's random sets."""
    words = [*wordsets["attributes"]["male"], *wordsets["attributes"]["female"]]
    for test in {**wordsets["weat_tests"], **wordsets.get("control_tests", {})}.values():
        words += [*test["a"], *test["b"]]
    for group in wordsets.get("ect_sets", {}).values():
        words += list(group)
    words += [w for pair in wordsets.get("ripa_pairs", []) for w in pair]
    return frozenset(_lower(words))


def weat_by_decade(
    vectors_by_decade: Mapping[str, Sequence[Any]],
    wordsets: Mapping[str, Any],
    *,
    seed: int,
    budget: int,
    alternative: str,
    n_bootstrap: int,
    min_fraction: float,
    null_draws: int = 0,
    alpha: float = 0.05,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """WEAT per decade, stereotype and training replicate: X = male, Y = female attribute words, A/B =
    the targets, so a positive effect means male words are closer to A (career, math, ...) than
    female words are. The word-set file's ``control_tests`` (no expected association) run the same
    way, marked. ``vectors_by_decade[decade]`` lists the decade's seed replicates (replicate 0 first).

    Returns (table, seeds, coverage): ``seeds`` has one row per replicate; ``table`` one row per
    decade and test with replicate 0's statistics (the one model the paper trains: classic
    permutation p and bootstrap CI, calibrated p and intervals when ``null_draws`` > 0) and the
    between-seed spread of d and of the mean difference over all replicates."""
    male, female = _lower(wordsets["attributes"]["male"]), _lower(wordsets["attributes"]["female"])
    tests = {**wordsets["weat_tests"], **wordsets.get("control_tests", {})}
    excluded = wordset_words(wordsets)
    rows, coverage = [], []
    for d, (decade, replicates) in enumerate(vectors_by_decade.items()):
        for r, vectors in enumerate(replicates):
            vocabulary = NullVocabulary(list(vectors.index_to_key), excluded, null_draws) if null_draws else None
            for t, (name, test) in enumerate(tests.items()):
                result = weat(
                    vectors, male, female, _lower(test["a"]), _lower(test["b"]),
                    rng=np.random.default_rng([seed, d, t] if r == 0 else [seed, d, t, r]), budget=budget,
                    alternative=alternative, n_bootstrap=n_bootstrap, min_fraction=min_fraction,  # type: ignore[arg-type]
                    names=("male", "female", f"{name}.a", f"{name}.b"), null_vocabulary=vocabulary,
                )
                null = result.calibrated
                rows.append({
                    "decade": decade, "test": name, "replicate": r, "title": test["title"],
                    "control": name in wordsets.get("control_tests", {}), "effect_size": result.effect_size,
                    "ci_low": result.ci_low, "ci_high": result.ci_high, "p_value": result.p_value,
                    "significant": bool((null.p_value if null else result.p_value) < alpha),
                    "mean_difference": result.mean_difference, **calibrated_columns(null),
                    "null_candidates": null.candidates if null else 0,
                    "p_exact": result.p_exact, "partitions": result.n_partitions, "alternative": result.alternative,
                    "statistic": result.statistic,
                    "n_male": len(result.coverage["male"].found), "n_female": len(result.coverage["female"].found),
                    "n_a": len(result.coverage[f"{name}.a"].found), "n_b": len(result.coverage[f"{name}.b"].found),
                })
                if r == 0:
                    coverage += _coverage_rows(decade, {k: v for k, v in result.coverage.items() if t == 0 or "." in k})
    seeds = pd.DataFrame(rows)
    spread = seeds.groupby(["decade", "test"], sort=False).agg(
        seeds=("replicate", "size"), d_seed_mean=("effect_size", "mean"), d_seed_sd=("effect_size", "std"),
        md_seed_mean=("mean_difference", "mean"), md_seed_sd=("mean_difference", "std"),
        significant_seeds=("significant", "sum"),
    ).reset_index()
    table = seeds[seeds["replicate"] == 0].drop(columns="replicate").merge(spread, on=["decade", "test"], how="left")
    return table, seeds, pd.DataFrame(coverage)


def weat_trends(seeds: pd.DataFrame, decades: Sequence[str]) -> pd.DataFrame:
    """Per WEAT test, the trend over decades of the mean difference and of d (``replication.decade_trend``:
    exact permutation of the decade labels on the seed-averaged values; slope per decade step)."""
    rows = []
    for test, part in seeds.groupby("test", sort=False):
        present = [d for d in decades if d in set(part["decade"])]
        row: dict[str, Any] = {"test": test, "title": part["title"].iloc[0], "control": bool(part["control"].iloc[0]),
                               "decades": len(present)}
        for measure, column in (("md", "mean_difference"), ("d", "effect_size")):
            wide = part.pivot(index="replicate", columns="decade", values=column)[present].to_numpy()
            trend = decade_trend(wide)
            row.update({f"{measure}_slope": trend.slope, f"{measure}_slope_seed_sd": trend.slope_seed_sd,
                        f"{measure}_trend_p": trend.p_value})
        row.update({"seeds": int(part["replicate"].nunique()), "orderings": trend.orderings})
        rows.append(row)
    return pd.DataFrame(rows)


def ect_by_decade(
    vectors_by_decade: Mapping[str, Any], wordsets: Mapping[str, Any], *, seed: int, n_bootstrap: int,
    min_fraction: float,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """ECT (Spearman's rho of the targets' similarities to the mean male and mean female vectors;
    1 = no bias) per decade for each ECT set, with a bootstrap percentile CI."""
    rows, coverage = [], []
    for d, (decade, vectors) in enumerate(vectors_by_decade.items()):
        x, cx = lookup(vectors, _lower(wordsets["attributes"]["male"]), "male", min_fraction)
        y, cy = lookup(vectors, _lower(wordsets["attributes"]["female"]), "female", min_fraction)
        for s, (name, words) in enumerate(wordsets["ect_sets"].items()):
            targets, ct = lookup(vectors, _lower(words), name, min_fraction)
            reps = bootstrap_ect(targets, x, y, n_bootstrap, np.random.default_rng([seed, d, s]))
            lo, hi = percentile_interval(reps)
            rows.append({"decade": decade, "word_set": name, "ect": ect_score(targets, x, y), "ci_low": lo,
                         "ci_high": hi, "n_targets": len(ct.found), "n_male": len(cx.found), "n_female": len(cy.found)})
            coverage += _coverage_rows(decade, {name: ct})
    return pd.DataFrame(rows), pd.DataFrame(coverage)


def ripa_by_decade(
    vectors_by_decade: Mapping[str, Any], wordsets: Mapping[str, Any], *, top: int, min_fraction: float
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """RIPA scores of every ECT-set word per decade (positive = male side), the ``top`` most male
    and most female words per decade and set (Table 4), and the pairs used for the relation vector."""
    scores, top_rows, pair_rows = [], [], []
    for decade, vectors in vectors_by_decade.items():
        pairs = [(m.lower(), f.lower()) for m, f in wordsets["ripa_pairs"]]
        used = [(m, f) for m, f in pairs if m in vectors and f in vectors]
        pair_rows.append({"decade": decade, "pairs_requested": len(pairs), "pairs_used": len(used),
                          "pairs_missing": " ".join(f"{m}/{f}" for m, f in pairs if (m, f) not in used)})
        if len(used) < max(1, min_fraction * len(pairs)):
            raise MedbiasInputError(f"RIPA pairs, {decade}: only {len(used)} of {len(pairs)} pairs have vectors")
        g = relation_vector(np.stack([vectors[m] for m, _ in used]), np.stack([vectors[f] for _, f in used]))
        for name, words in wordsets["ect_sets"].items():
            matrix, coverage = lookup(vectors, _lower(words), name, min_fraction)
            values = ripa_scores(matrix.astype(np.float64), g)
            frame = pd.DataFrame({"decade": decade, "word_set": name, "word": coverage.found, "ripa": values})
            scores.append(frame)
            ordered = frame.sort_values(["ripa", "word"], ascending=[False, True])
            for side, part in (("male", ordered.head(top)), ("female", ordered.iloc[::-1].head(top))):
                for rank, row in enumerate(part.itertuples(index=False), start=1):
                    top_rows.append({"decade": decade, "word_set": name, "side": side, "rank": rank,
                                     "word": row.word, "ripa": row.ripa})
    return pd.concat(scores, ignore_index=True), pd.DataFrame(top_rows), pd.DataFrame(pair_rows)


def table4_wide(top: pd.DataFrame) -> pd.DataFrame:
    """Table 4 as printed: one row per rank, a column per decade x set x side holding the word."""
    top = top.assign(column=top["word_set"] + " " + top["side"] + " " + top["decade"])
    return top.pivot(index="rank", columns="column", values="word").reset_index()
