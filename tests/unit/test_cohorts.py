"""Known-answer cohort tests on hand-made MIMIC tables (Zhang et al. section 3.2)."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml
from conftest import REPO

from medbias.studies.hurtful.cohorts import (
    assign_splits,
    build_task_samples,
    cohort_windows,
    mortality_labels,
    phenotype_labels,
    select_stays,
    task_catalogue,
)

HCUP = yaml.safe_load((REPO / "config/resources/mimic3-benchmarks/hcup_ccs_2015_definitions.yaml").read_text())
T0 = pd.Timestamp("2150-01-01 08:00:00")


def _stay(icu, subject, hadm, first="MICU", last="MICU", ward=(10, 10), hours=(0, 96)):
    return {
        "ICUSTAY_ID": icu,
        "SUBJECT_ID": subject,
        "HADM_ID": hadm,
        "FIRST_CAREUNIT": first,
        "LAST_CAREUNIT": last,
        "FIRST_WARDID": ward[0],
        "LAST_WARDID": ward[1],
        "INTIME": T0 + pd.Timedelta(hours=hours[0]),
        "OUTTIME": T0 + pd.Timedelta(hours=hours[1]),
    }


@pytest.fixture
def world():
    icustays = pd.DataFrame(
        [
            _stay(1, 10, 100),  # a plain stay
            _stay(2, 11, 101),
            _stay(3, 11, 101, hours=(120, 150)),  # two ICU stays in one admission: both out
            _stay(4, 12, 102, last="CCU"),  # care-unit transfer: out
            _stay(5, 13, 103),  # a minor: out
            _stay(6, 14, 104),  # dies after discharge
            _stay(7, 15, 105),  # only late notes: no mortality/pf sample
        ]
    )
    admissions = pd.DataFrame(
        {
            "HADM_ID": [100, 101, 102, 103, 104, 105],
            "SUBJECT_ID": [10, 11, 12, 13, 14, 15],
            "ADMITTIME": [T0 - pd.Timedelta(hours=5)] * 6,
            "DISCHTIME": [T0 + pd.Timedelta(days=6)] * 6,
            "DEATHTIME": [T0 + pd.Timedelta(days=5), pd.NaT, pd.NaT, pd.NaT, pd.NaT, pd.NaT],
        }
    )
    patients = pd.DataFrame(
        {
            "SUBJECT_ID": [10, 11, 12, 13, 14, 15],
            "DOD": [
                T0.normalize() + pd.Timedelta(days=5),
                pd.NaT,
                pd.NaT,
                pd.NaT,
                T0.normalize() + pd.Timedelta(days=40),
                pd.NaT,
            ],
        }
    )
    demographics = pd.DataFrame(
        {
            "SUBJECT_ID": [10, 11, 12, 13, 14, 15],
            "HADM_ID": [100, 101, 102, 103, 104, 105],
            "gender": ["M", "F", "M", "F", "F", "M"],
            "language": "English",
            "ethnicity": "WHITE",
            "insurance": "Medicare",
            "age": [70, 60, 50, 16, 80, 65],
        }
    )

    def note(row, hadm, category, hours=None, date=None):
        return {
            "ROW_ID": row,
            "HADM_ID": hadm,
            "CATEGORY": category,
            "CHARTTIME": T0 + pd.Timedelta(hours=hours) if hours is not None else pd.NaT,
            "CHARTDATE": (T0 + pd.Timedelta(hours=hours)).normalize() if hours is not None else date,
        }

    notes = pd.DataFrame(
        [
            note(1, 100, "Nursing/other", 2),
            note(2, 100, "Physician ", 10),
            note(3, 100, "Nursing", 47),
            note(4, 100, "Nursing", 49),
            note(5, 100, "Radiology", 5),
            note(6, 100, "Discharge summary", date=T0.normalize() + pd.Timedelta(days=6)),
            note(7, 104, "Nursing/other", 3),
            note(8, 105, "Nursing", 60),
        ]
    )
    n_windows = pd.Series({1: 1, 2: 2, 3: 3, 4: 1, 5: 1, 6: 4, 7: 1, 8: 2})
    return icustays, admissions, patients, demographics, notes, n_windows


def test_stay_rules_and_exclusions(world):
    icustays, admissions, patients, demographics, *_ = world
    selection = select_stays(icustays, admissions, demographics)
    assert sorted(selection.stays["ICUSTAY_ID"]) == [1, 6, 7]
    assert selection.excluded == {
        "stays_with_transfer": 1,
        "stays_in_admissions_with_several_icu_stays": 2,
        "stays_of_patients_under_18": 1,
    }


def test_mortality_label_inside_and_outside_the_admission(world):
    icustays, admissions, patients, demographics, *_ = world
    stays = select_stays(icustays, admissions, demographics).stays
    labels = dict(zip(stays["ICUSTAY_ID"], mortality_labels(stays, patients)))
    assert labels == {1: 1, 6: 0, 7: 0}  # stay 6's patient died 40 days after admission, outside it


def test_cohort_windows(world):
    icustays, admissions, patients, demographics, notes, n_windows = world
    stays = select_stays(icustays, admissions, demographics).stays
    windows = cohort_windows(stays, notes, n_windows, hours=48, max_windows=4)
    mort = windows["mortality"]
    # hour-47 note in, hour-49 note and radiology out; latest note first, its last window first; cap 4
    assert mort[mort["ICUSTAY_ID"] == 1][["ROW_ID", "window"]].values.tolist() == [[3, 2], [3, 1], [3, 0], [2, 1]]
    assert 7 not in set(mort["ICUSTAY_ID"])  # only a note at hour 60
    pa = windows["pa"]
    # the discharge summary (null CHARTTIME, placed by CHARTDATE) is the latest note of the stay
    assert pa[pa["ICUSTAY_ID"] == 1]["ROW_ID"].tolist() == [6, 6, 6, 6]
    assert pa[pa["ICUSTAY_ID"] == 7]["ROW_ID"].tolist() == [8, 8]
    pf = windows["pf"]
    # the first Nursing or Physician note is preferred over an earlier Nursing/other note
    assert pf[pf["ICUSTAY_ID"] == 1]["ROW_ID"].tolist() == [2, 2]
    assert pf[pf["ICUSTAY_ID"] == 6]["ROW_ID"].tolist() == [7]  # fallback: Nursing/other
    assert 7 not in set(pf["ICUSTAY_ID"])  # nothing within 48 hours: dropped


def test_phenotype_labels_from_codes():
    dx = pd.DataFrame({"HADM_ID": [1, 1, 2], "ICD9_CODE": ["4280", "25000", "99999"]})
    labels = phenotype_labels(pd.Series([1, 2, 3]), dx, HCUP).set_index("HADM_ID")
    assert labels.loc[1, "Congestive heart failure; nonhypertensive"] == 1
    assert labels.loc[1, "Diabetes mellitus without complication"] == 1
    assert labels.loc[1, "any_acute"] == 1 and labels.loc[1, "any_chronic"] == 1 and labels.loc[1, "any_disease"] == 1
    assert labels.loc[2].sum() == 0 and labels.loc[3].sum() == 0  # unknown code; no codes


def test_splits_are_disjoint_and_follow_the_test_list():
    subjects = pd.Series(range(1, 101))
    split = assign_splits(subjects, {1, 2, 3, 200}, 0.2, seed=3)
    assert set(split[split == "test"].index) == {1, 2, 3}
    assert (split == "val").sum() == round(0.2 * 97)
    assert split.index.is_unique
    assert split.equals(assign_splits(subjects, {1, 2, 3}, 0.2, seed=3))


def test_catalogue_has_57_tasks_and_samples_carry_labels(world):
    icustays, admissions, patients, demographics, notes, n_windows = world
    catalogue = task_catalogue(HCUP)
    assert len(catalogue) == 57 and (
        catalogue["cohort"].value_counts().to_dict() == {"pa": 28, "pf": 28, "mortality": 1}
    )
    stays = select_stays(icustays, admissions, demographics).stays
    windows = cohort_windows(stays, notes, n_windows)
    samples = build_task_samples(
        stays,
        windows,
        mortality_labels(stays, patients),
        phenotype_labels(stays["HADM_ID"], pd.DataFrame({"HADM_ID": [100], "ICD9_CODE": ["4280"]}), HCUP),
        assign_splits(stays["SUBJECT_ID"], set(), 0.0, 1),
        catalogue,
    )
    mort = samples[samples["task"] == "mortality"].set_index("ICUSTAY_ID")["label"].to_dict()
    assert mort == {1: 1, 6: 0}
    hf = samples[samples["task"] == "pa_heart_failure"].set_index("ICUSTAY_ID")["label"].to_dict()
    assert hf == {1: 1, 6: 0, 7: 0}
