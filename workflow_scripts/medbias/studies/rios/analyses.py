"""Study "rios" (Rios, Joshi and Shin 2020): gender bias in per-decade PubMed word embeddings.

Pure functions from {decade label: word vectors} and the word-set file to the paper's tables:
WEAT for the five stereotypes of Table 2 (Figure 1) over every training seed replicate, with the
classic, the calibrated and (when configured) the document-level p-value and the trend over decades, ECT for
occupations and mental-health words
(Figure 2), RIPA's most male and most female words (Table 4, the 1960s included), and the coverage of
every word set (no word is dropped silently). All statistics come from ``medbias.metrics.association``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from medbias.core.errors import MedbiasInputError
from medbias.metrics.association import (
    NullVocabulary,
    WordSetCoverage,
    association_scores,
    bootstrap_ect,
    calibrated_columns,
    ect_score,
    effect_size,
    lookup,
    relation_vector,
    ripa_scores,
    weat,
)
from medbias.metrics.bootstrap import percentile_interval
from medbias.metrics.trends import decade_trend
from medbias.studies.rios.documents import pair_mapping


def _lower(words) -> list[str]:
    return [w.lower() for w in words]


def _coverage_rows(decade: str, coverages: Mapping[str, WordSetCoverage]) -> list[dict[str, Any]]:
    return [
        {
            "decade": decade,
            "word_set": c.name,
            "requested": c.requested,
            "found": len(c.found),
            "missing_count": len(c.missing),
            "missing": " ".join(c.missing),
        }
        for c in coverages.values()
    ]


def _gender_words(wordsets: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The word-set file's male and female attribute words, lower-cased (the corpora are)."""
    return _lower(wordsets["attributes"]["male"]), _lower(wordsets["attributes"]["female"])


def _weat_tests(wordsets: Mapping[str, Any]) -> dict[str, Any]:
    """Every WEAT test of the word-set file: the stereotypes, then the controls."""
    return {**wordsets["weat_tests"], **wordsets.get("control_tests", {})}


def wordset_words(wordsets: Mapping[str, Any]) -> frozenset[str]:
    """Every word of the word-set file, lower-cased: kept out of the calibrated null's random sets."""
    words = [*wordsets["attributes"]["male"], *wordsets["attributes"]["female"]]
    for test in _weat_tests(wordsets).values():
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
    male, female = _gender_words(wordsets)
    tests = _weat_tests(wordsets)
    excluded = wordset_words(wordsets)
    rows, coverage = [], []
    for d, (decade, replicates) in enumerate(vectors_by_decade.items()):
        for r, vectors in enumerate(replicates):
            vocabulary = NullVocabulary(list(vectors.index_to_key), excluded, null_draws) if null_draws else None
            for t, (name, test) in enumerate(tests.items()):
                result = weat(
                    vectors,
                    male,
                    female,
                    _lower(test["a"]),
                    _lower(test["b"]),
                    rng=np.random.default_rng([seed, d, t] if r == 0 else [seed, d, t, r]),
                    budget=budget,
                    alternative=alternative,
                    n_bootstrap=n_bootstrap,
                    min_fraction=min_fraction,  # type: ignore[arg-type]
                    names=("male", "female", f"{name}.a", f"{name}.b"),
                    null_vocabulary=vocabulary,
                )
                null = result.calibrated
                rows.append(
                    {
                        "decade": decade,
                        "test": name,
                        "replicate": r,
                        "title": test["title"],
                        "control": name in wordsets.get("control_tests", {}),
                        "effect_size": result.effect_size,
                        "ci_low": result.ci_low,
                        "ci_high": result.ci_high,
                        "p_value": result.p_value,
                        "significant": bool((null.p_value if null else result.p_value) < alpha),
                        "mean_difference": result.mean_difference,
                        **calibrated_columns(null),
                        "null_candidates": null.candidates if null else 0,
                        "p_exact": result.p_exact,
                        "partitions": result.n_partitions,
                        "alternative": result.alternative,
                        "statistic": result.statistic,
                        "n_male": len(result.coverage["male"].found),
                        "n_female": len(result.coverage["female"].found),
                        "n_a": len(result.coverage[f"{name}.a"].found),
                        "n_b": len(result.coverage[f"{name}.b"].found),
                    }
                )
                if r == 0:
                    coverage += _coverage_rows(decade, {k: v for k, v in result.coverage.items() if t == 0 or "." in k})
    seeds = pd.DataFrame(rows)
    spread = (
        seeds.groupby(["decade", "test"], sort=False)
        .agg(
            seeds=("replicate", "size"),
            d_seed_mean=("effect_size", "mean"),
            d_seed_sd=("effect_size", "std"),
            md_seed_mean=("mean_difference", "mean"),
            md_seed_sd=("mean_difference", "std"),
            significant_seeds=("significant", "sum"),
        )
        .reset_index()
    )
    table = seeds[seeds["replicate"] == 0].drop(columns="replicate").merge(spread, on=["decade", "test"], how="left")
    return table, seeds, pd.DataFrame(coverage)


def weat_trends(seeds: pd.DataFrame, decades: Sequence[str]) -> pd.DataFrame:
    """Per WEAT test, the trend over decades of the mean difference and of d (``replication.decade_trend``:
    exact permutation of the decade labels on the seed-averaged values; slope per decade step)."""
    rows = []
    for test, part in seeds.groupby("test", sort=False):
        present = [d for d in decades if d in set(part["decade"])]
        row: dict[str, Any] = {
            "test": test,
            "title": part["title"].iloc[0],
            "control": bool(part["control"].iloc[0]),
            "decades": len(present),
        }
        for measure, column in (("md", "mean_difference"), ("d", "effect_size")):
            wide = part.pivot(index="replicate", columns="decade", values=column)[present].to_numpy()
            trend = decade_trend(wide)
            row.update(
                {
                    f"{measure}_slope": trend.slope,
                    f"{measure}_slope_seed_sd": trend.slope_seed_sd,
                    f"{measure}_trend_p": trend.p_value,
                }
            )
        row.update({"seeds": int(part["replicate"].nunique()), "orderings": trend.orderings})
        rows.append(row)
    return pd.DataFrame(rows)


def gender_swap_mapping(wordsets: Mapping[str, Any]) -> dict[str, str]:
    """The document-level null's word swap: the word-set file's male and female attribute words,
    lower-cased and paired by position (male <-> female, he <-> she, ...)."""
    return pair_mapping(*_gender_words(wordsets), ("attributes.male", "attributes.female"))


def weat_statistics(vectors: Any, wordsets: Mapping[str, Any], min_fraction: float) -> pd.DataFrame:
    """Every WEAT test's mean difference (mean s(male) - mean s(female)) and d on one set of vectors,
    without p-values or intervals: what one draw of the document-level null records. A test whose
    word sets fall below ``min_fraction`` in these vectors gets NaN (counted, never dropped, by
    ``document_null_columns``)."""
    male, female = _gender_words(wordsets)
    tests = _weat_tests(wordsets)
    try:
        x, _ = lookup(vectors, male, "male", min_fraction)
        y, _ = lookup(vectors, female, "female", min_fraction)
    except MedbiasInputError:
        return pd.DataFrame({"test": list(tests), "mean_difference": np.nan, "effect_size": np.nan})
    rows = []
    for name, test in tests.items():
        try:
            a, _ = lookup(vectors, _lower(test["a"]), f"{name}.a", min_fraction)
            b, _ = lookup(vectors, _lower(test["b"]), f"{name}.b", min_fraction)
        except MedbiasInputError:
            rows.append({"test": name, "mean_difference": np.nan, "effect_size": np.nan})
            continue
        s_x, s_y = association_scores(x, a, b), association_scores(y, a, b)
        rows.append(
            {"test": name, "mean_difference": float(s_x.mean() - s_y.mean()), "effect_size": effect_size(s_x, s_y)}
        )
    return pd.DataFrame(rows)


def document_null_columns(table: pd.DataFrame, null: pd.DataFrame, alternative: str) -> pd.DataFrame:
    """Figure 1's table with the document-level null beside the classic and calibrated p.

    ``null`` holds one row per decade, test and draw: the mean difference on a model trained, under a
    seed of its own, on the decade's corpus with the male and female words swapped in a random half of
    the documents (``rios_document_null.py``). Under "no gender association" a document's gender
    words are exchangeable with their counterparts, so the observed model (replicate 0) is one more
    draw of that distribution. Unlike the permutation test, the draws keep the words' document
    clustering and include the training seed's variance. p_document = (k+1)/(K+1), k = draws at
    least as large as the observed mean difference (two-sided: in absolute value), K = finite draws;
    its smallest value is 1/(K+1). Also the null's mean and SD of the mean difference and the draws
    that could not be scored (a word set below the minimum fraction).

    When the draws trained on a sample of the decade, ``null`` also holds draw -1: the same setting
    on the same sample without swaps, and that model's mean difference, not replicate 0's, is the
    observed one (a model of the whole decade is not one more draw of a sample's null).
    ``md_document_observed`` gives the value compared either way."""
    rows = []
    for (decade, test), part in table.groupby(["decade", "test"], sort=False):
        cell = null[(null["decade"] == decade) & (null["test"] == test)]
        own = cell["draw"] < 0 if "draw" in cell else np.zeros(len(cell), dtype=bool)
        draws = cell.loc[~own, "mean_difference"].to_numpy(dtype=float)
        finite = draws[np.isfinite(draws)]
        observed = (
            float(cell.loc[own, "mean_difference"].iloc[0]) if own.any() else float(part["mean_difference"].iloc[0])
        )
        if alternative == "greater":
            k = int((finite >= observed).sum())
        else:
            k = int((np.abs(finite) >= abs(observed)).sum())
        rows.append(
            {
                "decade": decade,
                "test": test,
                "p_document": (k + 1) / (len(finite) + 1) if len(finite) else np.nan,
                "document_draws": len(finite),
                "document_draws_unscored": int(len(draws) - len(finite)),
                "md_document_observed": observed,
                "md_document_null_mean": float(finite.mean()) if len(finite) else np.nan,
                "md_document_null_sd": float(finite.std(ddof=1)) if len(finite) > 1 else np.nan,
            }
        )
    return table.merge(pd.DataFrame(rows), on=["decade", "test"], how="left")


def ect_by_decade(
    vectors_by_decade: Mapping[str, Any],
    wordsets: Mapping[str, Any],
    *,
    seed: int,
    n_bootstrap: int,
    min_fraction: float,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """ECT (Spearman's rho of the targets' similarities to the mean male and mean female vectors;
    1 = no bias) per decade for each ECT set, with a bootstrap percentile CI."""
    male, female = _gender_words(wordsets)
    rows, coverage = [], []
    for d, (decade, vectors) in enumerate(vectors_by_decade.items()):
        x, cx = lookup(vectors, male, "male", min_fraction)
        y, cy = lookup(vectors, female, "female", min_fraction)
        for s, (name, words) in enumerate(wordsets["ect_sets"].items()):
            targets, ct = lookup(vectors, _lower(words), name, min_fraction)
            reps = bootstrap_ect(targets, x, y, n_bootstrap, np.random.default_rng([seed, d, s]))
            lo, hi = percentile_interval(reps)
            rows.append(
                {
                    "decade": decade,
                    "word_set": name,
                    "ect": ect_score(targets, x, y),
                    "ci_low": lo,
                    "ci_high": hi,
                    "n_targets": len(ct.found),
                    "n_male": len(cx.found),
                    "n_female": len(cy.found),
                }
            )
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
        pair_rows.append(
            {
                "decade": decade,
                "pairs_requested": len(pairs),
                "pairs_used": len(used),
                "pairs_missing": " ".join(f"{m}/{f}" for m, f in pairs if (m, f) not in used),
            }
        )
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
                    top_rows.append(
                        {
                            "decade": decade,
                            "word_set": name,
                            "side": side,
                            "rank": rank,
                            "word": row.word,
                            "ripa": row.ripa,
                        }
                    )
    return pd.concat(scores, ignore_index=True), pd.DataFrame(top_rows), pd.DataFrame(pair_rows)


def table4_wide(top: pd.DataFrame) -> pd.DataFrame:
    """Table 4 as printed: one row per rank, a column per decade x set x side holding the word."""
    top = top.assign(column=top["word_set"] + " " + top["side"] + " " + top["decade"])
    return top.pivot(index="rank", columns="column", values="word").reset_index()
