"""Xie et al. 2024's Tables 2, 4 and 5 and the points of Figure 2, from every (model, debias)
evaluation's SEAT and StereoSet-style rows (``plm_evaluate``) and its status summary."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from medbias.io.tables import PaperTable
from medbias.studies.plm.plan import debias_label


def debias_changes(seat, stereo, methods: Sequence[str]):
    """Table 5 (long form): for every model, method, SEAT test and StereoSet family, the score
    before and after debiasing, the signed change (after - before; StereoSet as a fraction, ss/100,
    as the paper prints it) and whether the score moved towards neutral (|d| smaller for SEAT,
    |ss - 50| smaller for StereoSet). Missing evaluations (method not run, model not loadable) are
    left out."""
    import pandas as pd

    rows = []
    seat_ok = seat[seat["status"] == "ok"]
    stereo_ok = stereo[(stereo["status"] == "ok") & (stereo["blank"] == "all") & (stereo["template"] == "all")]
    for model in seat_ok["model"].unique():
        before_seat = seat_ok[(seat_ok["model"] == model) & (seat_ok["debias"] == "none")].set_index("test")
        before_ss = stereo_ok[(stereo_ok["model"] == model) & (stereo_ok["debias"] == "none")].set_index("family")
        for method in methods:
            after_seat = seat_ok[(seat_ok["model"] == model) & (seat_ok["debias"] == method)].set_index("test")
            after_ss = stereo_ok[(stereo_ok["model"] == model) & (stereo_ok["debias"] == method)].set_index("family")
            for test in after_seat.index.intersection(before_seat.index):
                b, a = before_seat.at[test, "effect_size"], after_seat.at[test, "effect_size"]
                rows.append(
                    {
                        "model": model,
                        "method": method,
                        "benchmark": "SEAT",
                        "measure": test,
                        "before": b,
                        "after": a,
                        "change": a - b,
                        "toward_neutral": abs(a) < abs(b),
                    }
                )
            for family in after_ss.index.intersection(before_ss.index):
                b, a = before_ss.at[family, "ss"] / 100, after_ss.at[family, "ss"] / 100
                rows.append(
                    {
                        "model": model,
                        "method": method,
                        "benchmark": "StereoSet",
                        "measure": family,
                        "before": b,
                        "after": a,
                        "change": a - b,
                        "toward_neutral": abs(a - 0.5) < abs(b - 0.5),
                    }
                )
    return pd.DataFrame(
        rows, columns=["model", "method", "benchmark", "measure", "before", "after", "change", "toward_neutral"]
    )


TABLE6_COLUMNS = ("glue", "pubmedqa", "hoc", "bc5cdr")


def downstream_table(
    results: Sequence[Mapping[str, Any]],
    models: Sequence[str],
    methods: Sequence[str],
    labels: Mapping[str, str],
    settings: Sequence[str] = (),
):
    """Table 6 (Xie et al. 2024) from the fine-tuning results: per model the plain scores, each
    method's scores with "Mean Diff (Debias)" (mean over the four benchmarks of debiased - plain),
    and a "Mean Diff. (Task)" row (mean over the methods of debiased - plain, per benchmark). GLUE is
    the mean over its tasks. Returns (the PaperTable, long form: one row per model, debias and task)."""
    import pandas as pd

    long_rows, scores, status = [], {}, {}
    for result in results:
        key = (result["model"], result["debias"])
        status[key] = result["status"]
        per = {}
        for row in result.get("benchmarks", []):
            long_rows.append({"model": result["model"], "debias": result["debias"], **row})
            per.setdefault(row["benchmark"], []).append(row["score"])
        scores[key] = {b: float(np.mean(per[b])) if b in per else float("nan") for b in TABLE6_COLUMNS}
    rows = []
    for model in models:
        name = labels.get(model, model)
        plain = scores.get((model, "none"))
        if status.get((model, "none")) != "ok":
            rows.append(
                {
                    "model": name,
                    **{b: float("nan") for b in TABLE6_COLUMNS},
                    "mean_diff_debias": float("nan"),
                    "note": status.get((model, "none"), "not run"),
                }
            )
            continue
        rows.append({"model": name, **plain, "mean_diff_debias": float("nan"), "note": ""})
        differences = []
        for method in methods:
            if (model, method) not in scores:
                continue
            after = scores[(model, method)]
            diff = {b: after[b] - plain[b] for b in TABLE6_COLUMNS}
            differences.append(diff)
            rows.append(
                {
                    "model": f"+{debias_label(method)}",
                    **after,
                    "mean_diff_debias": float(np.mean(list(diff.values()))),
                    "note": "",
                }
            )
        if differences:
            rows.append(
                {
                    "model": "Mean Diff. (Task)",
                    **{b: float(np.mean([d[b] for d in differences])) for b in TABLE6_COLUMNS},
                    "mean_diff_debias": float("nan"),
                    "note": "",
                }
            )
    table = pd.DataFrame(rows).rename(
        columns={
            "glue": "GLUE (avg.)",
            "pubmedqa": "PubMedQA",
            "hoc": "HoC",
            "bc5cdr": "BC5CDR",
            "mean_diff_debias": "Mean Diff (Debias)",
        }
    )
    notes = (
        "GLUE: mean accuracy over the configured GLUE tasks; PubMedQA: accuracy; HoC: micro-F1; BC5CDR: "
        "exact-span entity F1 (all x100). Mean Diff (Debias): mean over the four of debiased - plain; Mean Diff. "
        "(Task): mean over the methods.",
        "The projection stays in the model during fine-tuning. Per task, epochs, steps and losses: "
        "table6_downstream_long.csv.",
        *settings,
    )
    title = "Table 6: downstream performance after debiasing (Xie et al. 2024)"
    return PaperTable(table, title, notes, digits=2), pd.DataFrame(long_rows)


@dataclass(frozen=True)
class PlmTables:
    table2: PaperTable  # SEAT effect sizes of the plain models
    table4: PaperTable  # StereoSet-style ss and lms of the plain models
    table5: PaperTable  # signed change after each debiasing method
    changes: pd.DataFrame  # Table 5's long form (every test, before and after)
    figure2: pd.DataFrame  # label, method, x, y: Figure 2's points


def with_seat_averages(seat: pd.DataFrame, averages: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """``seat`` with one more row per (model, debias) and average: the mean effect size of the tests
    it names (Xie et al. 2024, appendix A: the paper's "Race SEAT" is the average effect size of its
    two race tests). An average whose tests did not all run is marked with the first status that is
    not ok; it has no p-value (the average is not a test of its own)."""
    rows = []
    for (model, debias), runs in seat.groupby(["model", "debias"], sort=False):
        by_test = runs.set_index("test")
        for name, tests in averages.items():
            members = [by_test.loc[t] for t in tests if t in by_test.index]
            statuses = [m["status"] for m in members if m["status"] != "ok"]
            status = statuses[0] if statuses else ("ok" if len(members) == len(tests) else "not run")
            effect = float(np.mean([m["effect_size"] for m in members])) if status == "ok" else float("nan")
            rows.append(
                {
                    "status": status,
                    "test": name,
                    "effect_size": effect,
                    "significant": False,
                    "model": model,
                    "debias": debias,
                    "average_of": " + ".join(tests),
                }
            )
    return pd.concat([seat, pd.DataFrame(rows)], ignore_index=True) if rows else seat


def stamp_evaluations(frames: Sequence[pd.DataFrame], evaluations: Sequence[tuple[str, str]]) -> pd.DataFrame:
    """One frame of every evaluation's rows with its ``model`` and ``debias`` columns added."""
    return pd.concat(
        [frame.assign(model=model, debias=debias) for (model, debias), frame in zip(evaluations, frames)],
        ignore_index=True,
    )


def unloadable_notes(
    summaries: Mapping[tuple[str, str], Mapping[str, Any]], models: Sequence[str], label: Mapping[str, str]
) -> list[str]:
    """A note per model whose plain evaluation did not run (e.g. "BiomedGPT: not loadable: ...")."""
    return [
        f"{label[m]}: {summaries[(m, 'none')]['status']}" for m in models if summaries[(m, "none")]["status"] != "ok"
    ]


def seat_table(
    seat: pd.DataFrame,
    models: Sequence[str],
    label: Mapping[str, str],
    *,
    pooling: str,
    alpha: float,
    alternative: str,
    unloadable: Sequence[str],
) -> PaperTable:
    """Table 2: each plain model's SEAT effect size per test, * where the calibrated p < alpha; a test
    that did not run shows its status."""
    plain = seat[seat["debias"] == "none"]
    averages = (
        {} if "average_of" not in seat else dict(seat.dropna(subset=["average_of"])[["test", "average_of"]].values)
    )
    tests = [t for t in dict.fromkeys(seat["test"]) if t not in averages]
    for name, members in averages.items():  # each average right after its last test
        tests.insert(max(tests.index(t) for t in members.split(" + ") if t in tests) + 1, name)
    rows = []
    for model in models:
        row = {"model": label[model]}
        cells = plain[plain["model"] == model].set_index("test")
        for test in tests:
            ok = test in cells.index and cells.at[test, "status"] == "ok"
            row[test] = (
                f"{cells.at[test, 'effect_size']:+.3f}{'*' if cells.at[test, 'significant'] else ''}"
                if ok
                else (cells.at[test, "status"].split(":")[0] if test in cells.index else "not run")
            )
        rows.append(row)
    notes = (
        f"Effect size of eq. 1 on sentence vectors ({pooling} pooling of the last hidden states); * calibrated "
        f"p < {alpha} "
        f"({alternative}): the same test for random attribute sets, each disease replaced by a phrase of as "
        f"many random "
        f"single-token words of the model's vocabulary in the disease templates (the targets held fixed), "
        f"which the classic permutation test over sentences does not do (it treats "
        f"the sentences of one identity as independent and is anti-conservative); classic p (p_value), both "
        f"intervals and "
        f"the null's size: seat_long.csv. > 0: the minority identities sit closer to their stereotypical diseases.",
        "control_1 and control_2 are the birthday controls (no association expected). p-values, intervals and "
        "out-of-vocabulary words: seat_long.csv.",
        *[
            f"{name}: the mean effect size of {members} (the paper's average, appendix A); not a test of its "
            f"own, so no "
            "p-value and no star"
            for name, members in averages.items()
        ],
        *unloadable,
    )
    return PaperTable(pd.DataFrame(rows), "Table 2: SEAT effect sizes (Xie et al. 2024)", notes)


def stereoset_table(
    stereo: pd.DataFrame, models: Sequence[str], label: Mapping[str, str], families: Sequence[str]
) -> PaperTable:
    """Table 4: each plain model's stereotype score (ss), language-modelling score (lms) and ties per
    family, over all blanks and templates; a model that did not run shows its status."""
    whole = ((stereo["blank"] == "all") & (stereo["template"] == "all")) | (stereo["status"] != "ok")
    overall = stereo[(stereo["debias"] == "none") & whole]
    rows = []
    for model in models:
        row = {"model": label[model]}
        cells = overall[overall["model"] == model].set_index("family")
        for family in families:
            ok = family in cells.index and cells.at[family, "status"] == "ok"
            row[f"{family} ss"] = cells.at[family, "ss"] if ok else float("nan")
            row[f"{family} lms"] = cells.at[family, "lms"] if ok else float("nan")
            row[f"{family} ties"] = int(cells.at[family, "ties"]) if ok else ""
        marked = [cells.at[f, "status"] for f in families if f in cells.index and cells.at[f, "status"] != "ok"]
        row["status"] = marked[0] if marked else ""  # not loadable, or no trained language-model head
        rows.append(row)
    notes = (
        "ss = % of pairs where the stereotypical sentence scores higher (50 = unbiased; ties left out and counted); "
        "lms = % where a meaningful option beats the unrelated one. Per blank position and template: "
        "stereoset_long.csv.",
    )
    return PaperTable(pd.DataFrame(rows), "Table 4: StereoSet-style scores (Xie et al. 2024)", notes, digits=2)


def debias_table(
    changes: pd.DataFrame,
    models: Sequence[str],
    label: Mapping[str, str],
    methods: Sequence[str],
    measures: Sequence[tuple[str, str]],
    unloadable: Sequence[str],
) -> PaperTable:
    """Table 5: the signed change (after - before) of each measure under each method per model, '(away)'
    where it moved away from neutral, and the mean over models."""

    def cells(method: str, benchmark: str, measure: str) -> pd.DataFrame:
        return changes[
            (changes["method"] == method) & (changes["benchmark"] == benchmark) & (changes["measure"] == measure)
        ]

    rows = []
    for model in models:
        row = {"model": label[model]}
        for method in methods:
            for benchmark, measure in measures:
                cell = cells(method, benchmark, measure)
                cell = cell[cell["model"] == model]
                row[f"{debias_label(method)} {measure}"] = (
                    f"{cell['change'].iloc[0]:+.3f}{'' if cell['toward_neutral'].iloc[0] else ' (away)'}"
                    if len(cell)
                    else "-"
                )
        rows.append(row)
    overall = {"model": "Overall (mean)"}
    for method in methods:
        for benchmark, measure in measures:
            chosen = cells(method, benchmark, measure)
            overall[f"{debias_label(method)} {measure}"] = f"{chosen['change'].mean():+.3f}" if len(chosen) else "-"
    rows.append(overall)
    notes = (
        "Signed change after - before: SEAT effect size; StereoSet score as a fraction (ss/100). '(away)' "
        "marks a score "
        "that moved away from neutral (0 for SEAT, 0.5 for StereoSet); '-' a method not run for the model.",
        "Every SEAT test and both families, with before and after: table5_debias_long.csv.",
        *unloadable,
    )
    return PaperTable(pd.DataFrame(rows), "Table 5: change after debiasing (Xie et al. 2024)", notes)


def figure2_points(seat: pd.DataFrame, label: Mapping[str, str], x: str, y: str) -> pd.DataFrame:
    """Figure 2's points: every evaluation that ran, its ``x`` and ``y`` SEAT effect sizes."""
    points = seat[seat["status"] == "ok"].pivot_table(index=["model", "debias"], columns="test", values="effect_size")
    points = points.reset_index().rename(columns={x: "x", y: "y", "debias": "method"})
    points["label"] = points["model"].map(label)
    return points[["label", "method", "x", "y"]]


def plm_tables(
    seat: pd.DataFrame,
    stereo: pd.DataFrame,
    summaries: Mapping[tuple[str, str], Mapping[str, Any]],
    *,
    models: Sequence[str],
    labels: Mapping[str, str],
    methods: Sequence[str],
    families: Sequence[str],
    figure: Mapping[str, str],
    pooling: str,
    alpha: float,
    alternative: str,
    averages: Mapping[str, Sequence[str]],
) -> PlmTables:
    """Every table and figure of the plm study from the stamped evaluations (``stamp_evaluations``);
    the SEAT ``averages`` (``with_seat_averages``) stand beside the tests in Tables 2 and 5 and may be
    Figure 2's axes."""
    label = {m: labels.get(m, m) for m in models}
    seat = with_seat_averages(seat, averages)
    unloadable = unloadable_notes(summaries, models, label)
    changes = debias_changes(seat, stereo, methods)
    measures = [("SEAT", figure["x"]), ("SEAT", figure["y"]), *[("StereoSet", f) for f in families]]
    return PlmTables(
        table2=seat_table(
            seat, models, label, pooling=pooling, alpha=alpha, alternative=alternative, unloadable=unloadable
        ),
        table4=stereoset_table(stereo, models, label, families),
        table5=debias_table(changes, models, label, methods, measures, unloadable),
        changes=changes,
        figure2=figure2_points(seat, label, figure["x"], figure["y"]),
    )
