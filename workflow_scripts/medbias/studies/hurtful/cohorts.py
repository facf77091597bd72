"""The 57 downstream tasks of Zhang et al. 2020 (section 3.2): cohorts, labels, windows and splits.

Stays follow the mimic3-benchmarks rules: adults (18 or older at admission), admissions with exactly
one ICU stay, and no transfer (same first and last care unit and ward). Three cohorts:

- ``mortality``: notes of category Nursing, Nursing/other or Physician charted in the first 48
  hours of the ICU stay; windows are taken from the latest note backwards until ``max_windows``
  (30). Label: death in hospital (DEATHTIME, or DOD, within the admission).
- ``pa`` (phenotype, all notes): the same categories charted during the ICU stay plus the
  admission's discharge summaries, which have no CHARTTIME and are placed by CHARTDATE (within the
  admission's dates; the reference code dropped them silently); same backwards window rule.
- ``pf`` (phenotype, first note): the first Nursing or Physician note within 48 hours, else the first
  Nursing/other note within 48 hours, else the stay is dropped (the reference code took the latest
  note; this follows the paper); all of that note's windows.

Phenotype labels: the 25 HCUP CCS benchmark groups from the admission's ICD-9 codes, plus any acute,
any chronic and any of the 25. 1 + 28 + 28 = 57 tasks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from medbias.core.errors import MedbiasInputError
from medbias.io.tables import PaperTable

TIMED_CATEGORIES = ("Nursing", "Nursing/other", "Physician ")
FIRST_NOTE_PREFERRED = ("Nursing", "Physician ")
FIRST_NOTE_FALLBACK = ("Nursing/other",)
DISCHARGE = "Discharge summary"

# Zhang et al. Table 1 shorthands, keyed by the HCUP CCS group name
SHORTHAND: dict[str, str] = {
    "Acute and unspecified renal failure": "Acute Renal",
    "Acute cerebrovascular disease": "Cerebrovascular",
    "Acute myocardial infarction": "Myocardial",
    "Cardiac dysrhythmias": "Dysrhythmias",
    "Chronic kidney disease": "Chronic Kidney",
    "Chronic obstructive pulmonary disease and bronchiectasis": "COPD",
    "Complications of surgical procedures or medical care": "Comp. Surgical",
    "Conduction disorders": "Conduction",
    "Congestive heart failure; nonhypertensive": "Heart Failure",
    "Coronary atherosclerosis and other heart disease": "Atherosclerosis",
    "Diabetes mellitus with complications": "Diabetes Comp",
    "Diabetes mellitus without complication": "Diabetes No Comp",
    "Disorders of lipid metabolism": "Lipid Metabolism",
    "Essential hypertension": "Hypertension",
    "Fluid and electrolyte disorders": "Fluid Disorder",
    "Gastrointestinal hemorrhage": "GI Hemorrhage",
    "Hypertension with complications and secondary hypertension": "Hypertension Comp",
    "Other liver diseases": "Other Liver",
    "Other lower respiratory disease": "Lower Resp",
    "Other upper respiratory disease": "Upper Resp",
    "Pleurisy; pneumothorax; pulmonary collapse": "Pleurisy",
    "Pneumonia (except that caused by tuberculosis or sexually transmitted disease)": "Pneumonia",
    "Respiratory failure; insufficiency; arrest (adult)": "Resp Failure",
    "Septicemia (except in labor)": "Septicemia",
    "Shock": "Shock",
}


def task_catalogue(hcup: dict[str, Any]) -> pd.DataFrame:
    """The 57 tasks: id, cohort, label column, the paper's shorthand ("PA"/"PF" prefixed)."""
    labels = [(name, SHORTHAND[name]) for name in sorted(SHORTHAND)] + [
        ("any_chronic", "Chronic"),
        ("any_acute", "Acute"),
        ("any_disease", "Disease"),
    ]
    rows = [{"task": "mortality", "cohort": "mortality", "label": "mortality", "shorthand": "Inhosp Mort"}]
    for cohort, prefix in (("pa", "PA"), ("pf", "PF")):
        for label, short in labels:
            slug = short.lower().replace(". ", "_").replace(" ", "_").replace(".", "")
            rows.append(
                {"task": f"{cohort}_{slug}", "cohort": cohort, "label": label, "shorthand": f"{prefix} {short}"}
            )
    frame = pd.DataFrame(rows)
    assert len(frame) == 57 and frame["task"].is_unique
    return frame


@dataclass
class StaySelection:
    stays: pd.DataFrame
    excluded: dict[str, int]


def select_stays(icustays: pd.DataFrame, admissions: pd.DataFrame, demographics: pd.DataFrame) -> StaySelection:
    """mimic3-benchmarks stay rules; every exclusion counted."""
    excluded: dict[str, int] = {}
    stays = icustays.copy()
    transfer = (stays["FIRST_CAREUNIT"] != stays["LAST_CAREUNIT"]) | (stays["FIRST_WARDID"] != stays["LAST_WARDID"])
    excluded["stays_with_transfer"] = int(transfer.sum())
    per_admission = icustays.groupby("HADM_ID")["ICUSTAY_ID"].transform("count")
    multi = per_admission > 1
    excluded["stays_in_admissions_with_several_icu_stays"] = int(multi.sum())
    stays = stays[~transfer & ~multi]
    stays = stays.merge(admissions[["HADM_ID", "ADMITTIME", "DISCHTIME", "DEATHTIME"]], on="HADM_ID", how="inner")
    stays = stays.merge(demographics, on=["SUBJECT_ID", "HADM_ID"], how="inner")
    minor = stays["age"] < 18
    excluded["stays_of_patients_under_18"] = int(minor.sum())
    stays = stays[~minor].reset_index(drop=True)
    return StaySelection(stays, excluded)


def mortality_labels(stays: pd.DataFrame, patients: pd.DataFrame) -> pd.Series:
    """1 when the patient died during the admission: DEATHTIME within it, or DOD (a date) within its dates."""
    dod = stays[["SUBJECT_ID"]].merge(patients[["SUBJECT_ID", "DOD"]], on="SUBJECT_ID", how="left")["DOD"]
    by_deathtime = (
        stays["DEATHTIME"].notna()
        & (stays["DEATHTIME"] >= stays["ADMITTIME"])
        & (stays["DEATHTIME"] <= stays["DISCHTIME"])
    )
    by_dod = (
        dod.notna().to_numpy()
        & (dod.dt.normalize().to_numpy() >= stays["ADMITTIME"].dt.normalize().to_numpy())
        & (dod.dt.normalize().to_numpy() <= stays["DISCHTIME"].dt.normalize().to_numpy())
    )
    return (by_deathtime.to_numpy() | by_dod).astype(int)


def phenotype_labels(hadm_ids: pd.Series, diagnoses: pd.DataFrame, hcup: dict[str, Any]) -> pd.DataFrame:
    """One 0/1 column per benchmark phenotype plus any_acute, any_chronic, any_disease, per HADM_ID."""
    code_groups: dict[str, list[str]] = {}
    for name, definition in hcup.items():
        if definition.get("use_in_benchmark"):
            for code in definition["codes"]:
                code_groups.setdefault(code, []).append(name)
    dx = diagnoses[diagnoses["HADM_ID"].isin(set(hadm_ids))]
    pairs = [(h, g) for h, c in zip(dx["HADM_ID"], dx["ICD9_CODE"].astype(str)) for g in code_groups.get(c, ())]
    present = pd.DataFrame(pairs, columns=["HADM_ID", "group"]).drop_duplicates()
    names = sorted(SHORTHAND)
    wide = pd.crosstab(present["HADM_ID"], present["group"]).reindex(columns=names, fill_value=0).clip(upper=1)
    wide = wide.reindex(pd.Index(hadm_ids.unique(), name="HADM_ID"), fill_value=0)
    acute = [n for n in names if hcup[n]["type"] == "acute"]
    chronic = [n for n in names if hcup[n]["type"] == "chronic"]
    wide["any_acute"] = wide[acute].max(axis=1)
    wide["any_chronic"] = wide[chronic].max(axis=1)
    wide["any_disease"] = wide[names].max(axis=1)
    return wide.astype(int).reset_index()


def _windows_backwards(notes: pd.DataFrame, n_windows: pd.Series, max_windows: int) -> pd.DataFrame:
    """For each stay, windows of its notes from the latest note backwards until ``max_windows``.

    ``notes`` has ICUSTAY_ID, ROW_ID and a sort time; the last window of a note is taken first.
    """
    rows = []
    ordered = notes.assign(n=notes["ROW_ID"].map(n_windows).fillna(1).astype(int)).sort_values(
        ["ICUSTAY_ID", "sort_time", "ROW_ID"], ascending=[True, False, False]
    )
    for stay, group in ordered.groupby("ICUSTAY_ID", sort=True):
        taken = 0
        for row_id, n in zip(group["ROW_ID"], group["n"]):
            for w in range(n - 1, -1, -1):
                if taken == max_windows:
                    break
                rows.append((stay, row_id, w, taken))
                taken += 1
            if taken == max_windows:
                break
    return pd.DataFrame(rows, columns=["ICUSTAY_ID", "ROW_ID", "window", "order"])


def cohort_windows(
    stays: pd.DataFrame, notes: pd.DataFrame, n_windows: pd.Series, hours: float = 48, max_windows: int = 30
) -> dict[str, pd.DataFrame]:
    """Windows per stay for the three cohorts (module docstring); a stay without notes is absent."""
    meta = notes[["ROW_ID", "HADM_ID", "CHARTDATE", "CHARTTIME", "CATEGORY"]].merge(
        stays[["ICUSTAY_ID", "HADM_ID", "INTIME", "OUTTIME", "ADMITTIME", "DISCHTIME"]], on="HADM_ID", how="inner"
    )
    timed = meta[meta["CATEGORY"].isin(TIMED_CATEGORIES) & meta["CHARTTIME"].notna()]
    in_first = timed[
        (timed["CHARTTIME"] >= timed["INTIME"]) & (timed["CHARTTIME"] <= timed["INTIME"] + pd.Timedelta(hours=hours))
    ]
    in_stay = timed[(timed["CHARTTIME"] >= timed["INTIME"]) & (timed["CHARTTIME"] <= timed["OUTTIME"])]
    discharge = meta[
        (meta["CATEGORY"] == DISCHARGE)
        & (meta["CHARTDATE"] >= meta["ADMITTIME"].dt.normalize())
        & (meta["CHARTDATE"] <= meta["DISCHTIME"].dt.normalize())
    ]
    mortality = _windows_backwards(in_first.assign(sort_time=in_first["CHARTTIME"]), n_windows, max_windows)
    # a discharge summary sorts after every timed note of its stay (end of its date)
    all_notes = pd.concat(
        [
            in_stay.assign(sort_time=in_stay["CHARTTIME"]),
            discharge.assign(sort_time=discharge["CHARTDATE"] + pd.Timedelta(hours=23, minutes=59, seconds=59)),
        ]
    )
    phenotype_all = _windows_backwards(all_notes, n_windows, max_windows)
    preferred = in_first[in_first["CATEGORY"].isin(FIRST_NOTE_PREFERRED)].sort_values(["CHARTTIME", "ROW_ID"])
    fallback = in_first[in_first["CATEGORY"].isin(FIRST_NOTE_FALLBACK)].sort_values(["CHARTTIME", "ROW_ID"])
    first = pd.concat([preferred.groupby("ICUSTAY_ID").head(1), fallback.groupby("ICUSTAY_ID").head(1)])
    first = first.drop_duplicates("ICUSTAY_ID", keep="first")
    pf = first[["ICUSTAY_ID", "ROW_ID"]].assign(n=first["ROW_ID"].map(n_windows).fillna(1).astype(int))
    pf_rows = [(s, r, w, w) for s, r, n in zip(pf["ICUSTAY_ID"], pf["ROW_ID"], pf["n"]) for w in range(n)]
    phenotype_first = pd.DataFrame(pf_rows, columns=["ICUSTAY_ID", "ROW_ID", "window", "order"])
    return {"mortality": mortality, "pa": phenotype_all, "pf": phenotype_first}


def assign_splits(subject_ids: pd.Series, test_subjects: set[int], validation_fraction: float, seed: int) -> pd.Series:
    """test for the benchmark's test subjects; ``validation_fraction`` of the others (by subject,
    seeded) validation; the rest train. Returns a Series indexed by SUBJECT_ID."""
    subjects = np.array(sorted(set(subject_ids)))
    split = pd.Series("train", index=pd.Index(subjects, name="SUBJECT_ID"))
    split[split.index.isin(test_subjects)] = "test"
    rest = split.index[split == "train"].to_numpy()
    rng = np.random.default_rng(seed)
    n_val = round(validation_fraction * len(rest))
    split[rng.choice(rest, n_val, replace=False)] = "val"
    return split


ACUITY_COLUMNS = ("oasis", "oasis_prob", "sapsii", "sapsii_prob", "sofa")


def join_acuity(
    stays: pd.DataFrame, exports: dict[str, pd.DataFrame], missing: str = "keep"
) -> tuple[pd.DataFrame, dict[str, int]]:
    """Join OASIS, SAPS-II and SOFA by ICUSTAY_ID. Stays missing a score are counted per score and
    either kept with NaN (``keep``; the classifiers impute with training medians) or dropped (``drop``)."""
    frame = stays
    counts: dict[str, int] = {}
    for name, export in exports.items():
        cols = [c for c in ACUITY_COLUMNS if c in export.columns]
        part = export.rename(columns={"icustay_id": "ICUSTAY_ID"})[["ICUSTAY_ID", *cols]].drop_duplicates("ICUSTAY_ID")
        frame = frame.merge(part, on="ICUSTAY_ID", how="left")
        counts[f"stays_missing_{name}"] = int(frame[cols[0]].isna().sum())
    if missing == "drop":
        incomplete = frame[list(ACUITY_COLUMNS)].isna().any(axis=1)
        counts["stays_dropped_for_missing_acuity"] = int(incomplete.sum())
        frame = frame[~incomplete]
    elif missing != "keep":
        raise ValueError(f"acuity missing handling must be keep or drop, not {missing!r}")
    return frame.reset_index(drop=True), counts


def build_task_samples(
    stays: pd.DataFrame,
    windows: dict[str, pd.DataFrame],
    mortality: pd.Series,
    phenotypes: pd.DataFrame,
    splits: pd.Series,
    catalogue: pd.DataFrame,
) -> pd.DataFrame:
    """One row per task and stay with a label, the split and the protected attributes; a cohort
    holds the stays that have at least one window in it."""
    base = stays.assign(mortality=np.asarray(mortality)).merge(phenotypes, on="HADM_ID", how="left")
    base["split"] = base["SUBJECT_ID"].map(splits)
    keep = [
        "ICUSTAY_ID",
        "SUBJECT_ID",
        "HADM_ID",
        "split",
        "gender",
        "language",
        "ethnicity",
        "insurance",
        "age",
        *[c for c in ACUITY_COLUMNS if c in base.columns],
    ]
    frames = []
    for task in catalogue.itertuples(index=False):
        in_cohort = base[base["ICUSTAY_ID"].isin(set(windows[task.cohort]["ICUSTAY_ID"]))]
        frames.append(
            in_cohort[keep].assign(task=task.task, cohort=task.cohort, label=in_cohort[task.label].astype(int))
        )
    return pd.concat(frames, ignore_index=True)[["task", "cohort", *keep, "label"]]


def check_test_split(samples: pd.DataFrame, catalogue: pd.DataFrame, split_file: str) -> None:
    """Every task must have test stays: a split file whose test subjects meet no selected stay (another
    MIMIC version, a shifted column) would otherwise leave the paper's test set empty for that task and
    every downstream table computed without it. Stops with one line naming the file and the first such task."""
    tested = set(samples.loc[samples["split"] == "test", "task"])
    missing = [task for task in catalogue["task"] if task not in tested]
    if missing:
        raise MedbiasInputError(
            f"{split_file}: task {missing[0]!r} has no test stays ({len(missing)} of {len(catalogue)} tasks "
            f"have none): "
            "no test SUBJECT_ID of the split has a selected ICU stay in that task's cohort"
        )


def table_a1(samples: pd.DataFrame, catalogue: pd.DataFrame) -> PaperTable:
    """Zhang et al. Table A1: samples, % male, prevalence overall and by gender, per task."""
    rows = []
    for task in catalogue.itertuples(index=False):
        part = samples[samples["task"] == task.task]
        rows.append(
            {
                "task": task.task,
                "shorthand": task.shorthand,
                "samples": len(part),
                "% male": 100 * (part["gender"] == "M").mean(),
                "prevalence %": 100 * part["label"].mean(),
                "prevalence F %": 100 * part.loc[part["gender"] == "F", "label"].mean(),
                "prevalence M %": 100 * part.loc[part["gender"] == "M", "label"].mean(),
                **{f"{s} (n)": int((part["split"] == s).sum()) for s in ("train", "val", "test")},
                **{
                    f"{s} positives": int(part.loc[part["split"] == s, "label"].sum()) for s in ("train", "val", "test")
                },
            }
        )
    return PaperTable(
        pd.DataFrame(rows), "Table A1: samples, % male and prevalence (overall and by gender) per task", digits=2
    )


def cohort_statistics(samples: pd.DataFrame) -> PaperTable:
    """The base rates of section 3.2 per cohort: records, % male, % English, % white, % Medicare."""
    first = samples.drop_duplicates(["cohort", "ICUSTAY_ID"])
    rows = []
    for cohort, part in first.groupby("cohort", sort=False):
        rows.append(
            {
                "cohort": cohort,
                "records": len(part),
                "% male": 100 * (part["gender"] == "M").mean(),
                "% English": 100 * (part["language"] == "English").mean(),
                "% white": 100 * (part["ethnicity"] == "WHITE").mean(),
                "% Medicare": 100 * (part["insurance"] == "Medicare").mean(),
            }
        )
    return PaperTable(pd.DataFrame(rows), "Cohort statistics (Zhang et al. section 3.2)", digits=1)
