"""What a benchmark plug-in is: one module of ``medbias.metrics.benchmarks`` that says which files its
scoring job reads, how it scores a loaded model (and untrained copies of it), which files it writes,
the long-table rows it makes of them, and the published numbers with the rule behind each. The plm
study's rules, its tables and the audit card loop over the registry
(``medbias.metrics.benchmarks.REGISTRY``); ``plm.benchmarks.suite`` picks the plug-ins a run scores."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from medbias.metrics.benchmarks.published import PublishedValue


@dataclass
class ScoringContext:
    """One loaded model and how to score it: its kind, the items every plug-in read
    (``Benchmark.read_items``), the run's settings, Self-Debias's settings when the evaluation is
    ``selfdebias`` (prefixes, decay, epsilon), a masked model's next-sentence head (model, or None and
    why), why the model has no trained language-model head (None when it has one), and the log.
    ``timed`` runs one scoring step and records its items, seconds and rate in ``summary``."""

    model: Any
    tokenizer: Any
    kind: str
    items: Mapping[str, Any]
    settings: Mapping[str, Any]
    log: Any
    self_debias: Mapping[str, Any] | None = None
    next_sentence: tuple[Any, str | None] = (None, None)
    no_head: str | None = None
    summary: dict[str, Any] = field(default_factory=lambda: {"status": {}, "seconds": {}, "items": {}})

    def timed(self, name: str, items: int, work: Callable[[], Any]) -> Any:
        started = time.perf_counter()
        result = work()
        seconds = time.perf_counter() - started
        self.summary["seconds"][name] = seconds
        self.summary["items"][name] = items
        if self.log:
            self.log.info("%s: %d items in %.1f s (%.1f per second)", name, items, seconds, items / max(seconds, 1e-9))
        return result

    @property
    def prefixes(self) -> dict[str, str] | None:
        return dict(self.self_debias["prefixes"]) if self.self_debias else None

    @property
    def decay(self) -> float:
        return float(self.self_debias["decay"]) if self.self_debias else 50.0

    @property
    def epsilon(self) -> float:
        return float(self.self_debias["epsilon"]) if self.self_debias else 0.01


Frames = dict[str, pd.DataFrame]
Status = dict[str, str]


@dataclass(frozen=True)
class Headline:
    """One headline number of a benchmark: its long-table row (``report`` in the ``benchmark`` column,
    ``bias_type``, ``measure``, and ``rule`` where the plug-in scores by several rules; None matches any),
    its line on the audit card (``card``, shown to ``digits`` decimals; None: not on the card) and its
    column in the wide benchmark table (``column``; None: not in the table). A cell ``shows`` the row's
    ``value`` with its interval, or the ``rule`` that made it; a row the evaluation lacks shows ``missing``."""

    report: str
    bias_type: str
    measure: str
    card: str | None
    column: str | None = None
    rule: str | None = None
    digits: int = 2
    shows: str = "value"
    missing: str = ""

    def matches(self, benchmark: str, bias_type: str, measure: str, rule: str) -> bool:
        """Whether a long-table row (its benchmark, bias type, measure and rule) is this headline's."""
        return (benchmark, bias_type, measure) == (self.report, self.bias_type, self.measure) and (
            self.rule is None or rule == self.rule
        )

    def row_in(self, rows: Any) -> Any:
        """The first of the long-table ``rows`` (named tuples) that is this headline's, or None."""
        return next((r for r in rows if self.matches(r.benchmark, r.bias_type, r.measure, r.rule)), None)


@dataclass(frozen=True)
class Benchmark:
    """A benchmark plug-in.

    - ``reports``: the names its rows carry in the long table (``benchmark`` column), each with a status;
    - ``files``: evaluation file key -> file name (``.parquet``, or ``.csv``) in the evaluation's folder;
      keys starting with ``untrained_`` hold untrained copies' scores, numbered in ``copy`` (plain evaluations only);
    - ``inputs(config, plm_dir)``: input key -> path of what the scoring job reads;
    - ``read_items(paths, settings)``: the items (key -> frame, dict or list) from those paths;
    - ``score(context)``: (frames of its non-untrained files, status per report name);
    - ``score_untrained(context)``: frames of its untrained files, or None when it has none;
    - ``rows(frames, status, settings, rng)``: its long-table rows (``metrics.benchmarks.scores``);
    - ``empty``: file key -> the empty frame written when nothing was scored;
    - ``published``: the published numbers, each with the rule that made it;
    - ``headlines(settings)``: its headline numbers (``Headline``), which the wide table and the audit
      card show, in that order;
    - ``settings``: its own config section, ``plm.benchmarks.<name>``, as a JSON schema object without
      its type (``description`` and ``properties``, each key with its default, description and
      ``x-source``); the config schema takes the section from here;
    - ``check_inputs(resources, settings)``: reads the files it scores from (``resources``: the config's
      ``resources`` section) before any job starts, and stops with one line naming a bad file or a
      setting the files cannot meet; None when it reads nothing the config names.

    Every function that takes ``settings`` gets the run's shared benchmark settings (``plm.benchmarks``
    without the plug-ins' sections, and the scoring job's batch size, lengths and seed) with the
    plug-in's own section laid over them (``medbias.metrics.benchmarks.settings_of``)."""

    name: str
    title: str
    reports: tuple[str, ...]
    files: Mapping[str, str]
    inputs: Callable[[Mapping[str, Any], str], dict[str, str]]
    read_items: Callable[[Mapping[str, str], Mapping[str, Any]], dict[str, Any]]
    score: Callable[[ScoringContext], tuple[Frames, Status]]
    rows: Callable[[Mapping[str, pd.DataFrame], Mapping[str, str], Mapping[str, Any], np.random.Generator], list]
    empty: Mapping[str, pd.DataFrame]
    score_untrained: Callable[[ScoringContext], Frames] | None = None
    published: tuple[PublishedValue, ...] = ()
    headlines: Callable[[Mapping[str, Any]], tuple[Headline, ...]] = lambda settings: ()
    settings: Mapping[str, Any] = field(default_factory=dict)
    check_inputs: Callable[[Mapping[str, str], Mapping[str, Any]], None] | None = None


def read_frame(path: str) -> pd.DataFrame:
    """An evaluation file by its extension (CSV or parquet)."""
    return pd.read_csv(path) if str(path).endswith(".csv") else pd.read_parquet(path)


def write_frame(frame: pd.DataFrame, path: str) -> None:
    """An evaluation file by its extension (CSV or parquet), without the index."""
    if str(path).endswith(".csv"):
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path, index=False)


def row(benchmark, bias_type, measure, value, low=np.nan, high=np.nan, p=np.nan, items=0, status="ok", rule=""):
    """One long-table row (``metrics.benchmarks.scores``)."""
    return {
        "benchmark": benchmark,
        "rule": rule,
        "bias_type": bias_type,
        "measure": measure,
        "value": value,
        "ci_low": low,
        "ci_high": high,
        "p_value": p,
        "items": items,
        "status": status,
    }


def copies_row(benchmark: str, bias_type: str, measure: str, scores: np.ndarray, rule: str = "") -> dict[str, Any]:
    """The long-table row of untrained copies' scores: their mean, and the 2.5th and 97.5th percentiles of
    the copies (where an untrained model's score falls, not an interval for the mean); items = copies."""
    low, high = np.percentile(scores, [2.5, 97.5]) if len(scores) >= 2 else (np.nan, np.nan)
    return row(
        benchmark, bias_type, measure, float(np.mean(scores)), float(low), float(high), items=len(scores), rule=rule
    )
