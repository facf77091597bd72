"""The calibration control of the benchmark tests: randomly initialised models (the architecture of a
trained checkpoint, fresh weights, nothing learned) scored on CrowS-Pairs and StereoSet exactly as a
registry model is, under every CrowS-Pairs rule that scores its kind and the configured StereoSet rule.
Such a model holds no social stereotype, so each test against 50 is a control decision: CrowS-Pairs'
sign flip over the clusters of pairs that swap the same words (what the benchmark tables report)
beside the exact binomial over pairs as if they were independent, and StereoSet's SS sign flip over
target terms. The rate at which they flag, per rule, is the test's false-positive rate as a reader of
a benchmark score meets it (``error_rates``). Each copy is also read against the other copies as the
benchmark table reads a trained model against its untrained copies (``against_copies``, leaving the
copy out): its rate is that test's level, exact when the copies' scores are normal. A rule whose
scores lean without learning (the summed log probability prefers the shorter sentence) shows here as a
rate far above the level."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from functools import partial

import numpy as np
import pandas as pd

from medbias.core.processes import spawned_map
from medbias.metrics.benchmarks.peer import (
    against_copies,
    crows_cluster_test,
    crows_metric,
    crows_outcomes,
    crows_scored,
    crows_test,
    stereoset_outcomes,
    stereoset_score,
    stereoset_test,
)
from medbias.validation.decisions import DECISION_COLUMNS

CONTROL_SOURCE = "random-initialised {architecture} ({kind})"


def random_model_benchmark_rows(
    folder: str,
    kind: str,
    architecture: str,
    seeds: Sequence[int],
    pairs: pd.DataFrame,
    intrasentence: pd.DataFrame,
    *,
    n_permutations: int,
    seed: int,
    level: float,
    batch_size: int,
    crows_rules: Sequence[str] = ("nangia", "bias_bench", "lm_eval"),
    causal_score: str = "bias_bench",
    workers: int = 1,
    log=None,
) -> pd.DataFrame:
    """One row per random model (torch seed in ``seeds``), test and scoring rule: the score, its p
    against 50 and whether it is flagged at ``level``, in the decision table's columns plus ``score``
    and ``items``; then each copy read against the other copies (``against_other_copies``).

    Each copy's permutation tests draw from their own generator (``seed`` and the copy's seed), so the
    rows do not depend on ``workers``: with more than one, the copies are scored in that many
    processes of one thread each."""
    from medbias.core.models import load_tokenizer

    score = partial(
        _copy_rows,
        folder,
        kind,
        architecture,
        tokenizer=load_tokenizer(folder),
        pairs=pairs,
        intrasentence=intrasentence,
        n_permutations=n_permutations,
        seed=seed,
        level=level,
        batch_size=batch_size,
        crows_rules=tuple(crows_rules),
        causal_score=causal_score,
    )
    in_processes = workers > 1 and len(seeds) > 1
    scoring = (
        spawned_map(score, seeds, min(workers, len(seeds)), initializer=_one_thread)
        if in_processes
        else nullcontext(map(score, seeds))
    )
    rows: list[dict] = []
    with scoring as scored:
        for copy_seed, copy_rows in zip(seeds, scored):
            rows += copy_rows
            _log_copy(log, architecture, copy_seed, copy_rows)
    frame = pd.DataFrame(rows, columns=[*DECISION_COLUMNS, "score", "items"])
    return pd.concat([frame, against_other_copies(frame, level)], ignore_index=True)


def _one_thread() -> None:
    import torch

    torch.set_num_threads(1)


def _log_copy(log, architecture: str, copy_seed: int, rows: list[dict]) -> None:
    for row in rows if log else ():
        log.info("%s seed %d: %s = %.2f, p = %.4g", architecture, copy_seed, row["test"], row["score"], row["p"])


def _copy_rows(
    folder: str,
    kind: str,
    architecture: str,
    copy_seed: int,
    *,
    tokenizer,
    pairs: pd.DataFrame,
    intrasentence: pd.DataFrame,
    n_permutations: int,
    seed: int,
    level: float,
    batch_size: int,
    crows_rules: tuple[str, ...],
    causal_score: str,
) -> list[dict]:
    """The decision rows of one random copy (torch seed ``copy_seed``): CrowS-Pairs under each rule by
    the sign flip over swapped words and the exact binomial over pairs, StereoSet's SS by the sign flip
    over target terms."""
    from medbias.core.models import untrained_copy
    from medbias.metrics.benchmarks.crows_pairs import score_crows_pairs
    from medbias.metrics.benchmarks.stereoset import score_stereoset

    rng = np.random.default_rng([seed, copy_seed])
    model = untrained_copy(folder, kind, copy_seed)
    crows = score_crows_pairs(model, tokenizer, kind, pairs, batch_size, rules=crows_rules)
    tests = []
    for rule, part in crows.groupby("rule", sort=False):
        part = part[crows_scored(part)]
        preferred, neutral = crows_outcomes(part["score_more"].to_numpy(), part["score_less"].to_numpy())
        metric = crows_metric(preferred, neutral, part["direction"].to_numpy()).metric
        swaps = part["swap"].to_numpy()
        for p_kind, p in (
            ("sign flip over swapped words", crows_cluster_test(preferred, neutral, swaps, n_permutations, rng)),
            ("exact binomial over pairs", crows_test(preferred, neutral)),
        ):
            tests.append((f"CrowS-Pairs metric vs 50 ({rule} rule)", p_kind, p, metric, len(part)))
    stereo = score_stereoset(model, tokenizer, kind, intrasentence, "intrasentence", causal_score, batch_size)
    outcomes = stereoset_outcomes(
        stereo["score_stereotype"], stereo["score_anti-stereotype"], stereo["score_unrelated"]
    )
    tests.append(
        (
            f"StereoSet SS vs 50 ({stereo['rule'].iloc[0]} rule)",
            "sign flip over target terms",
            stereoset_test(outcomes, stereo["target"], n_permutations, rng),
            stereoset_score(outcomes, stereo["target"]).ss,
            len(stereo),
        )
    )
    source = CONTROL_SOURCE.format(architecture=architecture, kind=kind)
    return [
        {
            "test": test,
            "source": source,
            "unit": f"seed {copy_seed}",
            "truth": "control",
            "p_kind": p_kind,
            "p": p,
            "flagged": bool(p < level),
            "level": level,
            "score": score,
            "items": items,
        }
        for test, p_kind, p, score, items in tests
    ]


AGAINST_COPIES = "prediction t test against the other copies"


def against_other_copies(decisions: pd.DataFrame, level: float) -> pd.DataFrame:
    """Each random copy's score read against the other copies' scores of the same test (one p kind per
    test, so each score counts once), as the benchmark table reads a trained model against its untrained
    copies (``against_copies``): one decision per copy and test, under ``AGAINST_COPIES``. None with fewer
    than 3 copies (two others give the t test one degree of freedom)."""
    rows = []
    first_kind = decisions.drop_duplicates("test").set_index("test")["p_kind"]
    for (test, source), part in decisions.groupby(["test", "source"], sort=False):
        part = part[part["p_kind"] == first_kind[test]]
        if len(part) < 3:
            continue
        scores = part["score"].to_numpy(float)
        for k, r in enumerate(part.itertuples(index=False)):
            p = against_copies(scores[k], np.delete(scores, k))["p_value"]
            rows.append(
                {
                    **r._asdict(),
                    "test": test.replace(" vs 50", " vs the other copies"),
                    "p_kind": AGAINST_COPIES,
                    "p": p,
                    "flagged": bool(p < level),
                }
            )
    return pd.DataFrame(rows, columns=decisions.columns)
