"""Zhang et al. 2020's downstream tables from every model's fairness gaps (section 4.2) and
performance: Table 4 (the baseline's significant gaps per subgroup, with the share favouring it),
Table C3 (after Benjamini-Hochberg), Tables 5 and D5-D7 (baseline vs the model debiased for each
attribute, with and without FDR), Table A2 (AUROC and AUPRC per task) and the intersectional counts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from medbias.io.tables import PaperTable
from medbias.studies.hurtful.gaps import significance_counts_over_seeds
from medbias.studies.hurtful.variants import adversarial_variant

COUNT_COLUMNS = ["recall gap", "parity gap", "specificity gap"]


def replicate_paths(paths: Sequence[str], replicates: int) -> list[list[str]]:
    """The gap files of replicates 1 .. R-1, one list per replicate, from the model-major list of every
    model's replicates 1 .. R-1 (so replicate r is every (R-1)-th path)."""
    return [list(paths[r - 1 :: replicates - 1]) for r in range(1, replicates)]


def cells_note(excluded: Mapping[str, Sequence[str]], minimum: Mapping[str, int], replicates: int) -> str:
    """The note under every count table: what a cell means, the excluded subgroups, the size floors,
    and (with seed replicates) the range over seeds."""
    note = (
        "A cell is 'N (P%)': N of the tasks have a gap whose 95% bootstrap interval excludes 0; P% of "
        "those favour the group (positive gap: higher rate for the group than for the group farthest "
        "from it, eq. 2). Excluded subgroups (for their own attribute only): "
        + "; ".join(f"{a}: {', '.join(v)}" for a, v in excluded.items())
        + ". A group with fewer than "
        f"{minimum['rows']} test rows (parity), {minimum['positives']} positives (recall) or "
        f"{minimum['negatives']} negatives (specificity) in a task has no gap there and is never the comparison "
        "group (the rows say why in gaps.parquet)."
    )
    if replicates > 1:
        note += (
            f" [seeds a-b]: the lowest and highest count over {replicates} classifier seed replicates "
            "(same features, data and test set; replicate 0 gives N and P). Per gap: gap_seeds.csv."
        )
    return note


def model_counts(
    replicates: Sequence[pd.DataFrame], model: str, significant: str, attributes: Sequence[str]
) -> pd.DataFrame:
    """Per (attribute, group): significant tasks per gap kind, 'N (P%) [seeds a-b]', of one model."""
    frames = [frame[(frame["model"] == model) & frame["attribute"].isin(attributes)] for frame in replicates]
    return significance_counts_over_seeds(frames, significant)[["attribute", "group", *COUNT_COLUMNS]]


def count_tables(
    replicates: Sequence[pd.DataFrame],
    *,
    attributes: Sequence[str],
    debiased: Mapping[str, str],
    n_tasks: int,
    alpha: float,
    note: str,
) -> dict[str, PaperTable]:
    """Table 4, Table C3 and the debiased tables (name -> table), by file stem."""
    c3_note = note.replace("95% bootstrap interval excludes 0", f"BH-adjusted two-sided p is below {alpha}")
    tables = {
        "table4_gaps": PaperTable(
            model_counts(replicates, "baseline", "significant", attributes),
            f"Table 4: significant fairness gaps of the baseline clinical BERT's classifiers ({n_tasks} tasks)",
            (note,),
        ),
        "tableC3_gaps_fdr": PaperTable(
            model_counts(replicates, "baseline", "significant_bh", attributes),
            f"Table C3: Table 4 after Benjamini-Hochberg across the {n_tasks} tasks (FDR {alpha})",
            (
                c3_note,
                "p: two-sided two-proportion score test of the group's rate against its comparison group's "
                "(pooled-rate variance), which neither the replicate count floors nor a rate of 0 or 1 fools; "
                "the count of replicates beyond 0 (p_bootstrap in "
                "gaps.parquet, at least 2/(R+1)) could not let a lone gap pass BH across the tasks "
                "(medbias.metrics.fairness).",
            ),
        ),
    }
    for name, attribute in debiased.items():
        rows = [
            model_counts(replicates, model, significant, [attribute]).assign(model=label, fdr=fdr)
            for model, label in (("baseline", "baseline"), (adversarial_variant(attribute), "debiased"))
            for significant, fdr in (("significant", "no"), ("significant_bh", "yes"))
        ]
        table = pd.concat(rows, ignore_index=True)[
            ["model", "fdr", "attribute", "group", "parity gap", "recall gap", "specificity gap"]
        ]
        tables[name] = PaperTable(
            table,
            f"{name.split('_')[0].replace('table', 'Table ')}: baseline vs {attribute}-debiased "
            f"clinical BERT, significant {attribute} gaps over {n_tasks} tasks",
            (note,),
        )
    return tables


def table_a2(performance: pd.DataFrame, shorthand: Mapping[str, str], bootstrap: int) -> PaperTable:
    """Table A2: AUROC and AUPRC with their 95% intervals per task (the paper's shorthand) and model."""
    wide = performance.copy()
    for metric in ("auroc", "auprc"):
        wide[metric.upper()] = [
            f"{v:.3f} [{lo:.3f}, {hi:.3f}]"
            for v, lo, hi in zip(wide[metric], wide[f"{metric}_low"], wide[f"{metric}_high"])
        ]
    wide["task"] = wide["task"].map(shorthand)
    table = wide.pivot_table(index="task", columns="model", values=["AUROC", "AUPRC"], aggfunc="first", sort=False)
    table.columns = [f"{metric} {model}" for metric, model in table.columns]
    return PaperTable(
        table.reset_index(),
        "Table A2: AUROC and AUPRC per task and model (95% bootstrap intervals)",
        (
            f"Bootstrap: {bootstrap:,} replicates resampled within each label. Long form with sizes: "
            "tableA2_performance_long.csv.",
        ),
    )


def intersectional_table(
    replicates: Sequence[pd.DataFrame],
    models: Sequence[str],
    intersectional: Mapping[str, Any],
    cells: pd.DataFrame,
    note: str,
) -> tuple[PaperTable, pd.DataFrame]:
    """The significant-task counts per intersectional cell and model, and the (task, cell) combinations
    skipped for size (``cells``: the baseline's cell sizes, which depend on the test set only)."""
    column = " x ".join(intersectional["attributes"])
    rows = [model_counts(replicates, model, "significant", [column]).assign(model=model) for model in models]
    table = pd.concat(rows, ignore_index=True)[["model", "group", *COUNT_COLUMNS]]
    skipped = cells[~cells["kept"]] if len(cells) else cells
    return PaperTable(
        table,
        f"Intersectional fairness gaps ({column}), significant tasks per cell",
        (
            note,
            f"Cells need at least {intersectional['min_rows']} test rows and "
            f"{intersectional['min_positives']} positives in a task; {len(skipped)} (task, cell) "
            "combinations were skipped, listed in intersectional_skipped.csv.",
        ),
    ), skipped
