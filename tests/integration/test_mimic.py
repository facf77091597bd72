"""MIMIC ingest and the 57 tasks on the demo world: every task with both classes in every split,
prevalences as the generator planted them, counts that add up, no note text in results."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

# what this module's tests read from each test world (built in one background run per world: conftest)
PLANTED_TARGETS = ("mimic",)


@pytest.fixture(scope="module")
def mimic(planted_study):
    return planted_study(*PLANTED_TARGETS) / "results" / "mimic"


def test_all_57_tasks_have_both_classes_in_every_split(mimic):
    samples = pd.read_parquet(mimic / "task_samples.parquet")
    assert samples["task"].nunique() == 57
    per = samples.groupby(["task", "split"])["label"].agg(["min", "max"])
    assert len(per) == 57 * 3 and (per["min"] == 0).all() and (per["max"] == 1).all(), per[per["min"] == per["max"]]


def test_no_subject_in_two_splits(mimic):
    samples = pd.read_parquet(mimic / "task_samples.parquet")
    assert (samples.groupby("SUBJECT_ID")["split"].nunique() == 1).all()


def test_prevalences_match_the_truth(mimic, demo_truth):
    truth = demo_truth["mimic"]
    a1 = pd.read_csv(mimic / "tableA1_tasks.csv")
    tasks = pd.read_csv(mimic / "tasks.csv").set_index("task")
    for row in a1.itertuples(index=False):
        label = tasks.loc[row.task, "label"]
        if label in truth["phenotypes"]:
            p = truth["phenotypes"][label]["realized_prevalence"]
            se = np.sqrt(p * (1 - p) / row.samples)
            assert abs(row._4 / 100 - p) < 4 * se + 0.02, (row.task, row._4, p)
    mortality = a1.set_index("task").loc["mortality", "prevalence %"] / 100
    assert abs(mortality - truth["in_hospital_mortality"]) < 0.05


def test_counts_add_up_and_cohorts_differ_where_they_should(mimic, demo_truth):
    truth = demo_truth["mimic"]
    ingest = json.loads((mimic / "ingest_counts.json").read_text())
    assert ingest["notes_read"] == truth["notes"]
    assert ingest["iserror_dropped"] == truth["special_cases"]["iserror_notes"]
    assert ingest["notes_read"] == ingest["notes_kept"] + ingest["iserror_dropped"] + ingest["outpatient_dropped"]
    counts = json.loads((mimic / "cohort_counts.json").read_text())
    assert counts["tasks"] == 57 and counts["stays_with_transfer"] > 0 and counts["stays_of_patients_under_18"] > 0
    stats = pd.read_csv(mimic / "cohort_statistics.csv").set_index("cohort")
    # stays whose first note comes after 48 hours are in "pa" but not in "mortality" or "pf"
    assert stats.loc["pa", "records"] > stats.loc["pf", "records"] == stats.loc["mortality", "records"]
    mapping = pd.read_csv(mimic / "ethnicity_mapping.csv", keep_default_na=False)
    assert set(mapping["group"]) == {"WHITE", "BLACK", "HISPANIC/LATINO", "ASIAN", "OTHER", "UNKNOWN"}


def test_note_text_stays_in_the_intermediate_folder(mimic):
    demo_run = mimic.parents[1]
    notes = pd.read_parquet(demo_run / "intermediate/mimic/notes.parquet")
    sequences = pd.read_parquet(demo_run / "intermediate/mimic/sequences.parquet")
    assert "TEXT" in notes and "text" in sequences
    assert not any("text" in c.lower() for c in pd.read_parquet(mimic / "task_samples.parquet").columns)
    counts = pd.read_parquet(mimic / "note_counts.parquet")
    assert set(counts.columns) == {"ROW_ID", "n_pieces", "n_sequences", "n_windows"}
    assert (counts["n_windows"].between(1, 10)).all()
    short = sequences.groupby("ROW_ID")["n_pieces"].transform("size") > 1
    assert (sequences.loc[short, "n_pieces"] >= 20).all()  # packed to at least 20 pieces
    assert "[PHI_" in " ".join(sequences["text"].head(200)) and "[**" not in " ".join(sequences["text"])
