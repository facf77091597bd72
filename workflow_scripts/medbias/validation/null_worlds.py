"""Decisions on constructed worlds where nothing is planted, as many as one asks for: WEAT on isotropic
random vectors (exchangeable or clustered target words), and Table 3's log-probability test on copies
of the base model with fresh random weights, with the attribute as its unit (as the table reports it)
and with every template item as one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from medbias.metrics.association import NullVocabulary, weat
from medbias.metrics.logprob_tests import (
    PAIR_UNITS,
    category_vs_control_p,
    paired_differences,
)
from medbias.validation.decisions import DECISION_COLUMNS, LOGPROB_P_KINDS


def null_world_decisions(
    n_worlds: int,
    seed: int,
    *,
    draws: int = 1000,
    level: float = 0.05,
    dim: int = 30,
    vocabulary: int = 400,
    set_size: int = 8,
) -> pd.DataFrame:
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
            result = weat(
                vectors,
                xs,
                ys,
                words[:set_size],
                words[set_size : 2 * set_size],
                rng=rng,
                n_bootstrap=0,
                alternative="two-sided",
                null_vocabulary=NullVocabulary([*words, *xs, *ys], draws=draws),
            )
            for kind, p in (("classic permutation", result.p_value), ("calibrated null", result.calibrated.p_value)):
                rows.append(
                    [
                        "WEAT",
                        f"constructed null worlds ({label})",
                        f"world {world}",
                        "control",
                        kind,
                        p,
                        p < level,
                        level,
                    ]
                )
    return pd.DataFrame(rows, columns=DECISION_COLUMNS)


def logprob_null_model_decisions(
    frames: Sequence[pd.DataFrame], groups: Mapping[str, Sequence[str]], control_category: str, level: float = 0.05
) -> pd.DataFrame:
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
                rows.append(
                    [
                        "log-probability score",
                        "constructed null models (random-initialised base model)",
                        f"model {k} {category}",
                        "control",
                        LOGPROB_P_KINDS[unit],
                        p,
                        bool(p < level),
                        level,
                    ]
                )
    return pd.DataFrame(rows, columns=DECISION_COLUMNS)


def intersection_null_world_decisions(
    n_worlds: int, seed: int, *, draws: int = 199, level: float = 0.05, stays: int = 400, gender_gap: float = 0.3
) -> pd.DataFrame:
    """The intersectional worst-cell test on constructed tasks with a per-gender recall gap and no
    interaction: ``stays`` test stays, 40% positive, predicted right three times in four, women's
    positives found ``gender_gap`` less often on every cell of gender x ethnicity x insurance. Every
    worst recall cell is a control: flagged under the max-T test of the main-effects model (what the
    table reports) and under the naive score test of the worst cell as if chosen in advance."""
    from medbias.studies.hurtful.intersections import cell_sizes, crossing_parts, joined_cells, worst_cell_test

    crossing = ["gender", "ethnicity", "insurance"]
    rows = []
    for world in range(n_worlds):
        rng = np.random.default_rng([seed, world])
        label = (rng.random(stays) < 0.4).astype(int)
        frame = pd.DataFrame(
            {
                "label": label,
                "prediction": np.where(rng.random(stays) < 0.75, label, 1 - label),
                "gender": rng.choice(["F", "M"], stays),
                "ethnicity": rng.choice(
                    ["WHITE", "BLACK", "ASIAN", "HISPANIC/LATINO"], stays, p=[0.55, 0.2, 0.1, 0.15]
                ),
                "insurance": rng.choice(["Medicare", "Private", "Medicaid"], stays),
            }
        )
        missed = (frame["gender"] == "F").to_numpy() & (label == 1) & (rng.random(stays) < gender_gap / 0.75)
        frame.loc[missed, "prediction"] = 0
        parts, _ = crossing_parts(frame, crossing, {}, [18])
        cells = joined_cells(parts).to_numpy()
        order = sorted(set(cells))
        positives = cell_sizes(cells, label, order)["positives"]
        test = worst_cell_test(
            frame["prediction"].to_numpy(),
            label,
            cells,
            [part.to_numpy() for part in parts],
            order,
            positives >= 5,
            "recall",
            draws,
            rng,
        )
        for kind, p in (
            ("max-T under the main-effects model", test["p_permutation"]),
            ("naive score test of the worst cell", test["naive_p"]),
        ):
            rows.append(
                [
                    "intersectional worst cell",
                    f"constructed tasks with a per-gender recall gap of {gender_gap:g}",
                    f"task {world}",
                    "control",
                    kind,
                    p,
                    bool(p < level),
                    level,
                ]
            )
    return pd.DataFrame(rows, columns=DECISION_COLUMNS)
