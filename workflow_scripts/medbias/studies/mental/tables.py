"""Study "mental": Table V, the counterfactual fairness of every embedding, treatment, task and
learner, in long form with intervals and as the paper prints it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from medbias.studies.mental.labels import TASK_TITLES


def fairness_table(predictions: pd.DataFrame, n_replicates: int, seed: int) -> pd.DataFrame:
    """Table V in long form: per (embedding, treatment, task, learner) the ratio, mismatch and
    macro-F1 measures of ``medbias.metrics.counterfactual`` with 95% bootstrap intervals and the
    favoured group. Each combination draws from its own generator (seeded by its position in the
    sorted keys), so adding a model changes no other row."""
    from medbias.metrics.counterfactual import METRICS, summarise_pairs

    keys = ["embedding", "treatment", "task", "learner"]
    rows = []
    for number, (key, part) in enumerate(predictions.groupby(keys, sort=True)):
        rng = np.random.default_rng([seed, number])
        summary = summarise_pairs(
            part["label"].to_numpy(), part["pred_female"].to_numpy(), part["pred_male"].to_numpy(), n_replicates, rng
        )
        row = dict(zip(keys, key))
        for metric in METRICS:
            row[metric] = summary.values[metric]
            row[f"{metric}_low"], row[f"{metric}_high"] = summary.low[metric], summary.high[metric]
        for metric, group in summary.favoured.items():
            row[f"{metric}_group"] = group
        row["mismatch_p"] = summary.mismatch_p
        row["pairs"], row["positives"] = summary.pairs, summary.positives
        rows.append(row)
    return pd.DataFrame(rows)


def paper_layout(
    long: pd.DataFrame,
    learner: str,
    embeddings: Sequence[str],
    treatments: Sequence[str],
    tasks: Sequence[str],
    labels: Mapping[str, str],
) -> pd.DataFrame:
    """Table V as printed: one row per (embedding, treatment), per task the columns TPRR, FPRR,
    mismatch (each with the favoured group as a suffix, e.g. 0.90 F) and macro-F1."""
    part = long[long["learner"] == learner].set_index(["embedding", "treatment", "task"])
    rows = []
    for embedding in embeddings:
        for treatment in treatments:
            row: dict[str, Any] = {"embedding": labels.get(embedding, embedding), "treatment": treatment}
            for task in tasks:
                if (embedding, treatment, task) not in part.index:
                    continue
                cell = part.loc[(embedding, treatment, task)]
                title = TASK_TITLES[task]
                for metric, name in (("tprr", "TPRR"), ("fprr", "FPRR"), ("mismatch", "mismatch")):
                    value = cell[metric]
                    row[f"{title} {name}"] = "" if pd.isna(value) else f"{value:.2f} {cell[f'{metric}_group']}".strip()
                row[f"{title} F1"] = f"{cell['macro_f1']:.2f}"
            rows.append(row)
    return pd.DataFrame(rows)
