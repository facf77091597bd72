"""The long rows of one benchmark evaluation: every score of every plug-in of the suite
(``medbias.metrics.benchmarks``) per bias type and scoring rule, with its interval and test against 50.
The plm study's benchmark table and the audit card are both built from these rows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from medbias.metrics.benchmarks import evaluation_files, settings_of, suite
from medbias.metrics.benchmarks.base import read_frame, row


def evaluation_rows(
    frames: Mapping[str, Any],
    status: Mapping[str, str],
    settings: Mapping[str, Any],
    rng: np.random.Generator,
) -> list[dict[str, Any]]:
    """Every long row of one evaluation (``frames``: file key -> frame, as the suite's plug-ins wrote
    them), plug-in by plug-in in ``settings["suite"]`` order; a benchmark that did not run gives one
    row with its status. ``settings``: ``plm.benchmarks`` (each plug-in reads its own ``settings_of``)."""
    rows: list[dict[str, Any]] = []
    for benchmark in suite(settings["suite"]):
        for name in benchmark.reports:
            state = status.get(name, "ok")
            if state != "ok":
                rows.append(row(name, "all", "status", np.nan, status=state))
        rows += benchmark.rows(frames, status, settings_of(benchmark, settings), rng)
    return rows


def read_evaluation_frames(paths: Mapping[str, str], names: Sequence[str]) -> dict[str, pd.DataFrame]:
    """One evaluation's files (every file the suite ``names`` writes) by file key."""
    return {key: read_frame(paths[key]) for key in evaluation_files(names)}
