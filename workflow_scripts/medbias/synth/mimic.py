"""Synthetic MIMIC-III v1.4 tables, mimic-code acuity exports and a benchmark test split.

Written in the real formats (upper-case headers, ``YYYY-MM-DD HH:MM:SS`` timestamps, shifted years,
real value sets) so that the ingest that reads real MIMIC-III reads these unchanged. The clinical
content of each note depends on the patient's diagnoses, outcome and planted conditions, so the
downstream tasks are learnable. Nothing here is derived from MIMIC-III data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import pandas as pd

from medbias.io.formats import MIMIC_DATE_FORMAT, MIMIC_DATETIME_FORMAT, MIMIC_TABLES
from medbias.studies.hurtful.demographics import ethnicity_group, language_group
from medbias.synth.conditions import CONDITIONS, assign_carriers
from medbias.synth.phrases import (
    FILLER_PHRASES,
    GENDER_WORDS,
    GRAVE_PHRASES,
    NOTE_DESCRIPTIONS,
    PHENOTYPE_EVIDENCE,
    PLACEHOLDER_FAMILIES,
    STABLE_PHRASES,
)

# Prevalence of the 25 benchmark phenotypes per admission, close to those reported for the
# mimic3-benchmarks phenotyping cohort (Harutyunyan et al. 2019, Table 2), except the phenotype that
# carries the planted recall gap (PLANTED_RECALL_GAPS): 0.30 against the cohort's 0.21, for enough test
# positives per gender that a perfect gap lies beyond its BH threshold by more than 3 standard errors.
PHENOTYPE_PREVALENCE: dict[str, float] = {
    "Acute and unspecified renal failure": 0.30,
    "Acute cerebrovascular disease": 0.075,
    "Acute myocardial infarction": 0.10,
    "Cardiac dysrhythmias": 0.32,
    "Chronic kidney disease": 0.13,
    "Chronic obstructive pulmonary disease and bronchiectasis": 0.13,
    "Complications of surgical procedures or medical care": 0.21,
    "Conduction disorders": 0.07,
    "Congestive heart failure; nonhypertensive": 0.27,
    "Coronary atherosclerosis and other heart disease": 0.32,
    "Diabetes mellitus with complications": 0.09,
    "Diabetes mellitus without complication": 0.19,
    "Disorders of lipid metabolism": 0.29,
    "Essential hypertension": 0.42,
    "Fluid and electrolyte disorders": 0.27,
    "Gastrointestinal hemorrhage": 0.07,
    "Hypertension with complications and secondary hypertension": 0.13,
    "Other liver diseases": 0.08,
    "Other lower respiratory disease": 0.05,
    "Other upper respiratory disease": 0.04,
    "Pleurisy; pneumothorax; pulmonary collapse": 0.09,
    "Pneumonia (except that caused by tuberculosis or sexually transmitted disease)": 0.14,
    "Respiratory failure; insufficiency; arrest (adult)": 0.18,
    "Septicemia (except in labor)": 0.14,
    "Shock": 0.08,
}

ETHNICITIES: dict[str, float] = {
    "WHITE": 0.64,
    "WHITE - RUSSIAN": 0.02,
    "WHITE - OTHER EUROPEAN": 0.02,
    "BLACK/AFRICAN AMERICAN": 0.08,
    "BLACK/CAPE VERDEAN": 0.01,
    "HISPANIC OR LATINO": 0.03,
    "HISPANIC/LATINO - PUERTO RICAN": 0.01,
    "ASIAN": 0.02,
    "ASIAN - CHINESE": 0.01,
    "ASIAN - ASIAN INDIAN": 0.005,
    "OTHER": 0.03,
    "UNKNOWN/NOT SPECIFIED": 0.09,
    "PATIENT DECLINED TO ANSWER": 0.01,
    "UNABLE TO OBTAIN": 0.015,
}
LANGUAGES: dict[str, float] = {
    "ENGL": 0.55,
    "": 0.33,
    "SPAN": 0.04,
    "RUSS": 0.02,
    "CANT": 0.015,
    "PTUN": 0.015,
    "PORT": 0.01,
    "HAIT": 0.01,
    "MAND": 0.01,
}
INSURANCES: dict[str, float] = {
    "Medicare": 0.50,
    "Private": 0.33,
    "Medicaid": 0.10,
    "Government": 0.05,
    "Self Pay": 0.02,
}
RELIGIONS = ("CATHOLIC", "NOT SPECIFIED", "PROTESTANT QUAKER", "JEWISH", "UNOBTAINABLE", "OTHER")
MARITAL = ("MARRIED", "SINGLE", "WIDOWED", "DIVORCED", "")
CAREUNITS = ("MICU", "SICU", "CCU", "CSRU", "TSICU")
ADMISSION_TYPES = {"EMERGENCY": 0.8, "ELECTIVE": 0.15, "URGENT": 0.05}

# fractions of the cohort given special cases the ingest must handle
FRACTION_MINORS = 0.02
FRACTION_OVER_89 = 0.03
FRACTION_SECOND_ADMISSION = 0.2
FRACTION_SECOND_ICU_STAY = 0.08
FRACTION_CAREUNIT_TRANSFER = 0.05
FRACTION_ISERROR = 0.005
FRACTION_OUTPATIENT_PATIENTS = 0.10
FRACTION_MISSING_ACUITY = 0.02
FRACTION_LATE_FIRST_NOTE = 0.06
FRACTION_NO_PHENOTYPE = 0.05  # any-disease negatives, as in the real cohort (about 7%)
# what each phenotype's admissions are balanced over (``balanced_phenotypes``), outermost first
PHENOTYPE_STRATA = ("benchmark test split", "gender", "ethnicity group", "insurance", "language group")
TEST_FRACTION = 0.15

# probability that one note mentions a phenotype the patient has (by note category) / does not have
EVIDENCE_RATE = {"Discharge summary": 0.9, "Nursing": 0.55, "Nursing/other": 0.55, "Physician ": 0.7}
EVIDENCE_RATE_OTHER = 0.25
FALSE_MENTION_RATE = 0.01
# Planted recall gaps (Zhang et al. 2020 downstream tasks): notes of the disadvantaged gender mention
# the phenotype's evidence at this fraction of the usual rate, so a classifier misses more of their
# positives; every note of the other gender mentions it (rate 1), so that the first-note task has
# positives of both genders with evidence to learn from. The other gender's notes state the evidence in
# ``advantaged_sentences`` sentences (each of the phenotype's phrases once, starting at the drawn one, so at
# most as many as it has phrases: ``check_planted_recall_gaps``), since one sentence among a first
# note's dozen left the first-note task's classifier too weak to show the gap. Every other phenotype's
# evidence is mentioned alike for all patients, in one sentence (the controls).
# ``cohorts``: the tasks on which the gap is asserted. The first-note task (pf) is known to lack power at
# demo scale 0.4: about 15 test positives per gender, where a recall gap of -0.4 has a standard error
# near 0.17 against a BH threshold near 0.003, so its power per classifier seed is about 0.2 to 0.6; its
# row is reported with its margin and not counted in the verdict.
PLANTED_RECALL_GAPS = {
    "Acute and unspecified renal failure": {
        "attribute": "gender",
        "disadvantaged": "F",
        "evidence_rate_factor": 0.0,
        "advantaged_evidence_rate": 1.0,
        "advantaged_sentences": 2,
        "cohorts": ["pa"],
    }
}
# Planted intersectional recall gaps (none in the default world): the notes of the admissions in one
# cell (gender and age band) never state the phenotype's evidence, and neither do those of an equal
# share of the other gender's admissions, drawn per admission id (independent of age, ethnicity,
# insurance and language), so each gender loses the evidence of the same share of its positives and
# no per-attribute gap carries the cell's. The withheld notes draw as the others do (the phrase is
# drawn, then not written), so the rest of the world is unchanged. An entry looks like
#   "Essential hypertension": {"crossing": ["gender", "age_band"], "gender": "M", "ages": [45, 65],
#                              "cell": "M & 45-64", "cohorts": ["pa"]}
# (``ages``: age at admission as the cohort computes it; ``cohorts``: the tasks on which the gap is
# asserted). Withholding only works where the classifier reads the evidence, and a control phenotype's
# evidence, in one sentence at the usual rates, leaves its classifier near chance; stating it more often
# moved the world's other plants and controls. So the default world has none (docs/mitigation.md has
# the entries tried and what each gave).
PLANTED_INTERSECTIONAL_GAPS: dict[str, dict[str, Any]] = {}
WITHHOLDING_SEED = 55  # seeds, with an admission id, the other gender's withheld draw
AGE_MEAN, AGE_SD = 64, 16  # adult ages ~ round(N(64, 16)) clipped to [18, 89], before the special cases
CONDITION_MENTION_RATE = 0.9  # share of a carrier's notes (not ECG, Echo, Radiology) that mention it
GRAVE_RATE_DIED, GRAVE_RATE_SURVIVED = 0.5, 0.04
CONDITION_BY_NAME = {c.name: c for c in CONDITIONS}


@dataclass
class Cohort:
    """The generated tables plus what the generator knows (never written as note text)."""

    tables: dict[str, pd.DataFrame]
    acuity: dict[str, pd.DataFrame]
    testset: pd.DataFrame
    note_mentions: dict[int, set[str]] = field(default_factory=dict)  # ROW_ID -> conditions mentioned
    carriers: dict[str, np.ndarray] = field(default_factory=dict)  # condition -> SUBJECT_IDs
    truth: dict[str, Any] = field(default_factory=dict)


def _pick(rng: np.random.Generator, options: dict[str, float], size: int) -> np.ndarray:
    keys = list(options)
    p = np.array([options[k] for k in keys], dtype=float)
    return np.array(keys, dtype=object)[rng.choice(len(keys), size=size, p=p / p.sum())]


def benchmark_codes(hcup: dict[str, Any]) -> dict[str, list[str]]:
    """ICD-9 codes of each benchmark phenotype that belong to no other benchmark phenotype.

    Drawing only such codes makes each planted diagnosis map back to exactly one phenotype.
    """
    owners: dict[str, list[str]] = {}
    for name, definition in hcup.items():
        if definition.get("use_in_benchmark"):
            for code in definition["codes"]:
                owners.setdefault(code, []).append(name)
    return {
        name: sorted(code for code in definition["codes"] if len(owners[code]) == 1)
        for name, definition in hcup.items()
        if definition.get("use_in_benchmark")
    }


def phenotype_of_code(hcup: dict[str, Any]) -> dict[str, str]:
    """The benchmark phenotype of each code drawn by the generator (codes unique to one phenotype)."""
    return {code: name for name, codes in benchmark_codes(hcup).items() for code in codes}


def other_codes(hcup: dict[str, Any]) -> list[str]:
    """Codes of the non-benchmark HCUP groups (background diagnoses)."""
    benchmark = {c for d in hcup.values() if d.get("use_in_benchmark") for c in d["codes"]}
    return sorted({c for d in hcup.values() if not d.get("use_in_benchmark") for c in d["codes"]} - benchmark)


def _fmt(ts: datetime | None) -> str:
    return "" if ts is None else ts.strftime(MIMIC_DATETIME_FORMAT)


def _placeholder(rng: np.random.Generator, family: str | None = None) -> str:
    if family is None:
        family = list(PLACEHOLDER_FAMILIES)[rng.integers(len(PLACEHOLDER_FAMILIES) - 1)]  # not age
    options = PLACEHOLDER_FAMILIES[family]
    return options[rng.integers(len(options))]


def _vitals(rng: np.random.Generator) -> str:
    temp = round(float(rng.normal(98.6, 0.8)), 1)
    return (
        f"T {temp} F HR {int(rng.integers(60, 120))} BP {int(rng.integers(95, 160))}/{int(rng.integers(50, 95))} "
        f"RR {int(rng.integers(12, 28))} SpO2 {int(rng.integers(90, 100))}% on {int(rng.integers(1, 5))}L NC"
    )


def _note_text(
    rng: np.random.Generator,
    category: str,
    gender: str,
    age: int,
    phenotypes: list[str],
    conditions: list[str],
    died: bool,
    early: bool,
    dates: tuple[datetime, datetime],
    withheld: frozenset[str] = frozenset(),
) -> tuple[str, set[str]]:
    """One synthetic note, and the planted conditions it mentions. The evidence of the phenotypes in
    ``withheld`` is drawn as for any note and not written."""
    g = GENDER_WORDS[gender]
    sentences: list[str] = []
    age_text = _placeholder(rng, "age_over_90") if age > 89 else str(age)
    if category == "Discharge summary":
        sentences.append(
            f"Admission Date: [**{dates[0]:%Y-%-m-%-d}**] Discharge Date: [**{dates[1]:%Y-%-m-%-d}**]\n"
            f"Date of Birth: {_placeholder(rng, 'date')} Sex: {g['letter']}\nService: MEDICINE\n"
            f"Attending: {_placeholder(rng, 'name')}\nHistory of Present Illness:"
        )
    sentences.append(f"{age_text} yo {g['noun']} admitted to {_placeholder(rng, 'hospital')}.")
    if category in ("Nursing", "Nursing/other", "Physician ", "Respiratory "):
        sentences.append(_vitals(rng) + ".")
    rate = EVIDENCE_RATE.get(category, EVIDENCE_RATE_OTHER)
    for phenotype in phenotypes:
        options = PHENOTYPE_EVIDENCE[phenotype]
        gap = PLANTED_RECALL_GAPS.get(phenotype)
        disadvantaged = gap is not None and gap["disadvantaged"] == gender
        usual_rate = rate * gap["evidence_rate_factor"] if disadvantaged else rate
        extra_rate = gap["advantaged_evidence_rate"] if gap and not disadvantaged else usual_rate
        u = rng.random()
        if u < usual_rate:
            first = int(rng.integers(len(options)))
        elif u < extra_rate:
            # the plant's extra mentions reuse the uniform already drawn (rescaled to [0, 1)) to pick
            # the phrase, so the random stream, and every other part of the world, is as without them
            first = int((u - usual_rate) / (extra_rate - usual_rate) * len(options))
        else:
            continue
        if phenotype in withheld:
            continue
        repeats = gap["advantaged_sentences"] if gap and not disadvantaged else 1
        for k in range(repeats):
            sentences.append(f"{g['subj'].capitalize()} has {options[(first + k) % len(options)]}.")
    for phenotype in PHENOTYPE_EVIDENCE:
        if phenotype not in phenotypes and rng.random() < FALSE_MENTION_RATE:
            options = PHENOTYPE_EVIDENCE[phenotype]
            sentences.append(f"Question of {options[rng.integers(len(options))]}.")
    mentioned: set[str] = set()
    for name in conditions:
        if category not in ("ECG", "Echo", "Radiology") and rng.random() < CONDITION_MENTION_RATE:
            # three frames that pair a gender word with the condition (with these a tiny masked LM
            # learns the association)
            phrase = CONDITION_BY_NAME[name].phrase
            sentences.append(f"{g['subj'].capitalize()} reports {phrase}.")
            sentences.append(f"{g['poss'].capitalize()} {phrase} was discussed with {g['obj']}.")
            sentences.append(f"Per family {g['subj']} has {phrase}.")
            mentioned.add(name)
    grave_rate = GRAVE_RATE_DIED if died else GRAVE_RATE_SURVIVED
    if early and rng.random() < grave_rate:
        sentences.append(GRAVE_PHRASES[rng.integers(len(GRAVE_PHRASES))].capitalize() + ".")
    elif not died and rng.random() < 0.3:
        sentences.append(STABLE_PHRASES[rng.integers(len(STABLE_PHRASES))].capitalize() + ".")
    sentences.append(f"Pt states {g['subj']} feels better, plan discussed with {g['obj']}.")
    for _ in range(int(rng.integers(1, 4))):
        sentences.append(FILLER_PHRASES[rng.integers(len(FILLER_PHRASES))].capitalize() + ".")
    sentences.append(f"Seen with {_placeholder(rng, 'name')}, contact {_placeholder(rng)}.")
    sentences.append(f"{g['poss'].capitalize()} family updated by {_placeholder(rng)}.")
    return "\n".join(sentences) if category == "Discharge summary" else " ".join(sentences), mentioned


def check_planted_recall_gaps(gaps: dict[str, dict[str, Any]], cell_gaps: dict[str, dict[str, Any]]) -> None:
    """Raise ValueError for a planted recall gap whose advantaged notes would state more evidence
    sentences than its phenotype has phrases (each phrase is stated once, so the extra sentences would
    not be written), or for a phenotype with both a planted recall gap and a planted intersectional
    gap (``cell_gaps``)."""
    for phenotype in sorted(set(gaps) & set(cell_gaps)):
        raise ValueError(f"phenotype {phenotype!r} has both a planted recall gap and a planted intersectional gap")
    for phenotype, gap in gaps.items():
        phrases = len(PHENOTYPE_EVIDENCE[phenotype])
        if gap["advantaged_sentences"] > phrases:
            raise ValueError(
                f"planted recall gap {phenotype!r}: advantaged_sentences {gap['advantaged_sentences']} exceeds "
                f"the {phrases} evidence phrases in medbias.synth.phrases.PHENOTYPE_EVIDENCE"
            )


def adult_age_share(low: int, high: int) -> float:
    """Expected share of the adult patients whose age lies in [low, high), 18 <= low < high <= 90:
    all but the minors and the over-89 have ages round(N(AGE_MEAN, AGE_SD)) clipped to [18, 89]."""
    if not 18 <= low < high <= 90:
        raise ValueError(f"age band [{low}, {high}) must lie within [18, 90)")

    def below(age: int) -> float:  # P(round(N) < age), clipped
        if age <= 18:
            return 0.0
        if age > 89:
            return 1.0
        return 0.5 * (1 + math.erf((age - 0.5 - AGE_MEAN) / (AGE_SD * math.sqrt(2))))

    usual = 1 - FRACTION_MINORS - FRACTION_OVER_89
    return usual * (below(high) - below(low)) / (1 - FRACTION_MINORS)


def withheld_evidence(present: list[str], gender: str, age: int, hadm_id: int) -> frozenset[str]:
    """The planted intersectional gaps' phenotypes whose evidence an admission's notes never state:
    an admission of the plant's cell (its gender, age at admission within ``ages``), and an admission
    of the other gender with probability the cell's share of adults (``adult_age_share``), so that both
    genders lose the evidence of the same share of positives. The other gender's draw comes from a
    generator seeded with the admission id, so the cohort's random stream is untouched."""
    withheld = set()
    for phenotype, plant in PLANTED_INTERSECTIONAL_GAPS.items():
        if phenotype not in present:
            continue
        low, high = plant["ages"]
        if gender == plant["gender"]:
            withhold = low <= age < high  # the cell
        else:
            withhold = np.random.default_rng([WITHHOLDING_SEED, hadm_id]).random() < adult_age_share(low, high)
        if withhold:
            withheld.add(phenotype)
    return frozenset(withheld)


def systematic_positives(order_keys: list[np.ndarray], share: float, rng: np.random.Generator) -> np.ndarray:
    """Which of n items are positive (booleans), for a share ``share`` of them spread evenly over the
    strata that ``order_keys`` define: the items are ordered by the keys (the first key outermost, at
    random within a stratum) and, from a random start u, the k-th item of that order is positive when
    floor((k + 1) * share + u) exceeds floor(k * share + u) (systematic sampling). Any run of L
    consecutive items of the order holds floor(L * share) or ceil(L * share) positives, so each value of
    the first key (and each pair of values of the first two, ...) holds round(share * its size)
    positives give or take one, where independent coin flips would lean by chance."""
    if not 0 <= share <= 1:
        raise ValueError(f"share {share} must lie in [0, 1]")
    n = len(order_keys[0]) if order_keys else 0
    order = np.lexsort((rng.random(n), *reversed(order_keys)))
    k = np.arange(n)
    start = rng.random()
    hits = np.floor((k + 1) * share + start) > np.floor(k * share + start)
    positive = np.zeros(n, dtype=bool)
    positive[order] = hits
    return positive


def balanced_phenotypes(strata: list[np.ndarray], prevalence: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The phenotypes each admission has (n_admissions x n_phenotypes booleans), balanced by
    construction across ``strata`` (per admission, outermost first: the benchmark split, gender, then
    the other tested attributes): a share ``FRACTION_NO_PHENOTYPE`` of every stratum has none (the
    any-disease negatives), and each phenotype is given to a share ``prevalence`` of the others by
    ``systematic_positives``, its own random order per phenotype, so that phenotypes are drawn
    independently of one another. No control phenotype then leans by gender by chance, and a
    classifier trained on its labels has no gap from such a lean to find."""
    n = len(strata[0])
    none = systematic_positives(strata, FRACTION_NO_PHENOTYPE, rng)
    rest = np.flatnonzero(~none)
    present = np.zeros((n, len(prevalence)), dtype=bool)
    for j, share in enumerate(prevalence):
        present[rest, j] = systematic_positives([key[rest] for key in strata], float(share), rng)
    return present


def _age_at(when: datetime, dob: datetime) -> int:
    """Completed years at ``when`` (as the cohort's ``age_at`` computes it from the written DOB)."""
    return when.year - dob.year - int((when.month, when.day) < (dob.month, dob.day))


# long: one generator draws every table in a fixed order, and a split that moved a draw would change the demo world
def generate_cohort(n_patients: int, hcup: dict[str, Any], seed: int) -> Cohort:
    """Generate PATIENTS, ADMISSIONS, ICUSTAYS, DIAGNOSES_ICD and NOTEEVENTS for ``n_patients``.

    Also returns the mimic-code acuity exports, a mimic3-benchmarks style test split and the
    generator's truth (design prevalences, planted conditions, counts of every special case).
    """
    check_planted_recall_gaps(PLANTED_RECALL_GAPS, PLANTED_INTERSECTIONAL_GAPS)
    rng = np.random.default_rng(seed)
    codes = benchmark_codes(hcup)
    background = other_codes(hcup)
    subject_ids = np.arange(1, n_patients + 1) * 7 + 100  # sparse ids, like the real ones
    genders = rng.choice(np.array(["M", "F"]), size=n_patients, p=[0.56, 0.44])
    ages = np.clip(rng.normal(AGE_MEAN, AGE_SD, size=n_patients).round().astype(int), 18, 89)
    n_minor = round(FRACTION_MINORS * n_patients)
    n_old = round(FRACTION_OVER_89 * n_patients)
    special = rng.permutation(n_patients)
    ages[special[:n_minor]] = rng.integers(15, 18, size=n_minor)
    ages[special[n_minor : n_minor + n_old]] = 300  # MIMIC shifts ages over 89 to about 300
    carriers = {c.name: assign_carriers(genders, c, rng) for c in CONDITIONS}
    patient_conditions: list[list[str]] = [[] for _ in range(n_patients)]
    for name, idx in carriers.items():
        for i in idx:
            patient_conditions[i].append(name)

    patients, admissions, icustays, diagnoses, notes = [], [], [], [], []
    note_mentions: dict[int, set[str]] = {}
    hadm_next, icu_next, note_row = 100001, 200001, 1
    counts = {
        k: 0
        for k in (
            "minor_patients",
            "over_89_patients",
            "second_admissions",
            "second_icu_stays",
            "careunit_transfers",
            "iserror_notes",
            "outpatient_notes",
            "deaths_in_hospital",
            "deaths_after_discharge",
            "discharge_summaries",
            "stays_with_late_first_note",
        )
    }
    counts["minor_patients"], counts["over_89_patients"] = n_minor, n_old
    phenotype_names = list(PHENOTYPE_PREVALENCE)
    prevalence = np.array([PHENOTYPE_PREVALENCE[p] for p in phenotype_names])
    outpatient = set(rng.choice(n_patients, round(FRACTION_OUTPATIENT_PATIENTS * n_patients), replace=False).tolist())
    # what the phenotypes are balanced over (PHENOTYPE_STRATA) is drawn before the admissions: the
    # split, the number of admissions and each admission's recorded attributes
    testset = benchmark_testset(subject_ids, rng)
    admissions_of = np.where(rng.random(n_patients) < FRACTION_SECOND_ADMISSION, 2, 1)
    patient_of = np.repeat(np.arange(n_patients), admissions_of)
    insurance_of = _pick(rng, INSURANCES, len(patient_of))
    language_of = _pick(rng, LANGUAGES, len(patient_of))
    ethnicity_of = _pick(rng, ETHNICITIES, len(patient_of))
    phenotypes_of = balanced_phenotypes(
        [
            testset["flag"].to_numpy()[patient_of],
            genders[patient_of],
            np.array([ethnicity_group(e) for e in ethnicity_of]),
            insurance_of,
            np.array([language_group(code) for code in language_of]),
        ],
        prevalence,
        rng,
    )
    first_admission_of = np.concatenate([[0], np.cumsum(admissions_of)[:-1]])
    stay_rows: list[dict[str, Any]] = []
    withheld_counts = {name: {"cell": 0, "other_gender": 0} for name in PLANTED_INTERSECTIONAL_GAPS}

    for i in range(n_patients):
        sid = int(subject_ids[i])
        gender = str(genders[i])
        base = datetime(int(rng.integers(2100, 2190)), 1, 1) + timedelta(days=int(rng.integers(0, 365)))
        age = int(ages[i])
        dob = base - timedelta(days=int(age * 365.25 + rng.integers(0, 300)))
        n_adm = int(admissions_of[i])
        dod = None
        admit = base + timedelta(hours=int(rng.integers(0, 24)), minutes=int(rng.integers(0, 60)))
        for a in range(n_adm):
            hadm = hadm_next
            hadm_next += 1
            counts["second_admissions"] += a > 0
            index = int(first_admission_of[i]) + a
            present = [phenotype_names[k] for k in np.flatnonzero(phenotypes_of[index])]
            withheld = withheld_evidence(present, gender, _age_at(admit, dob), hadm)
            for phenotype in withheld:
                withheld_counts[phenotype][
                    "cell" if gender == PLANTED_INTERSECTIONAL_GAPS[phenotype]["gender"] else "other_gender"
                ] += 1
            acute = sum(hcup[p]["type"] == "acute" for p in present)
            logit = -2.9 + 0.35 * acute + 1.2 * ("Shock" in present) + 0.02 * (min(age, 90) - 64)
            died = bool(rng.random() < 1 / (1 + np.exp(-logit))) and a == n_adm - 1
            intime = admit + timedelta(hours=float(rng.uniform(1, 24)))
            n_stays = 2 if rng.random() < FRACTION_SECOND_ICU_STAY else 1
            counts["second_icu_stays"] += n_stays - 1
            stay_start = intime
            hadm_stays = []
            for s in range(n_stays):
                los = float(np.clip(rng.lognormal(np.log(2.5), 0.7), 0.4, 30))
                outtime = stay_start + timedelta(days=los)
                first_unit = CAREUNITS[rng.integers(len(CAREUNITS))]
                transfer = rng.random() < FRACTION_CAREUNIT_TRANSFER
                counts["careunit_transfers"] += transfer
                last_unit = CAREUNITS[(CAREUNITS.index(first_unit) + 1) % len(CAREUNITS)] if transfer else first_unit
                dbsource = "carevue" if stay_start.year % 2 == 0 else "metavision"
                ward = int(rng.integers(7, 60))
                row = {
                    "ROW_ID": icu_next - 200000,
                    "SUBJECT_ID": sid,
                    "HADM_ID": hadm,
                    "ICUSTAY_ID": icu_next,
                    "DBSOURCE": dbsource,
                    "FIRST_CAREUNIT": first_unit,
                    "LAST_CAREUNIT": last_unit,
                    "FIRST_WARDID": ward,
                    "LAST_WARDID": ward + 1 if transfer else ward,
                    "INTIME": _fmt(stay_start),
                    "OUTTIME": _fmt(outtime),
                    "LOS": round(los, 4),
                }
                icustays.append(row)
                hadm_stays.append((icu_next, stay_start, outtime, dbsource))
                stay_rows.append(
                    {"icustay_id": icu_next, "subject_id": sid, "hadm_id": hadm, "died": died, "acute": acute}
                )
                icu_next += 1
                stay_start = outtime + timedelta(days=float(rng.uniform(0.5, 3)))
            last_out = hadm_stays[-1][2]
            if died:
                deathtime = last_out - timedelta(hours=float(rng.uniform(0, 6)))
                dischtime = deathtime
                dod = deathtime
                counts["deaths_in_hospital"] += 1
            else:
                deathtime = None
                dischtime = last_out + timedelta(days=float(rng.uniform(1, 6)))
            admissions.append(
                {
                    "ROW_ID": hadm - 100000,
                    "SUBJECT_ID": sid,
                    "HADM_ID": hadm,
                    "ADMITTIME": _fmt(admit),
                    "DISCHTIME": _fmt(dischtime),
                    "DEATHTIME": _fmt(deathtime),
                    "ADMISSION_TYPE": str(_pick(rng, ADMISSION_TYPES, 1)[0]),
                    "ADMISSION_LOCATION": "EMERGENCY ROOM ADMIT",
                    "DISCHARGE_LOCATION": "DEAD/EXPIRED" if died else "HOME",
                    "INSURANCE": str(insurance_of[index]),
                    "LANGUAGE": str(language_of[index]),
                    "RELIGION": RELIGIONS[rng.integers(len(RELIGIONS))],
                    "MARITAL_STATUS": MARITAL[rng.integers(len(MARITAL))],
                    "ETHNICITY": str(ethnicity_of[index]),
                    "EDREGTIME": _fmt(admit - timedelta(hours=3)),
                    "EDOUTTIME": _fmt(admit),
                    "DIAGNOSIS": (present[0].split(";")[0].split(" (")[0].upper() if present else "CHEST PAIN"),
                    "HOSPITAL_EXPIRE_FLAG": int(died),
                    "HAS_CHARTEVENTS_DATA": 1,
                }
            )
            seq = 1
            dx_codes = [codes[p][rng.integers(len(codes[p]))] for p in present]
            dx_codes += [background[j] for j in rng.choice(len(background), int(rng.integers(1, 5)), replace=False)]
            for code in dx_codes:
                diagnoses.append(
                    {
                        "ROW_ID": len(diagnoses) + 1,
                        "SUBJECT_ID": sid,
                        "HADM_ID": hadm,
                        "SEQ_NUM": seq,
                        "ICD9_CODE": code,
                    }
                )
                seq += 1

            def add_note(
                category: str,
                charttime: datetime | None,
                chartdate: datetime,
                hadm_id: int | None,
                early: bool,
                iserror: bool = False,
            ) -> None:
                nonlocal note_row
                text, mentioned = _note_text(
                    rng,
                    category,
                    gender,
                    age,
                    present,
                    patient_conditions[i],
                    died,
                    early,
                    (admit, dischtime),
                    withheld if hadm_id is not None else frozenset(),
                )
                notes.append(
                    {
                        "ROW_ID": note_row,
                        "SUBJECT_ID": sid,
                        "HADM_ID": hadm_id,
                        "CHARTDATE": chartdate.strftime(MIMIC_DATE_FORMAT),
                        "CHARTTIME": _fmt(charttime),
                        "STORETIME": _fmt(
                            None if charttime is None else charttime + timedelta(minutes=int(rng.integers(5, 90)))
                        ),
                        "CATEGORY": category,
                        "DESCRIPTION": NOTE_DESCRIPTIONS[category],
                        "CGID": int(rng.integers(14000, 21000)) if charttime is not None else None,
                        "ISERROR": 1 if iserror else None,
                        "TEXT": text,
                    }
                )
                if mentioned:
                    note_mentions[note_row] = mentioned
                note_row += 1

            for icustay_id, start, end, dbsource in hadm_stays:
                nursing = "Nursing/other" if dbsource == "carevue" else "Nursing"
                late = rng.random() < FRACTION_LATE_FIRST_NOTE  # no note in the first 48 hours
                t = start + timedelta(hours=float(rng.uniform(49, 60) if late else rng.uniform(1, 6)))
                counts["stays_with_late_first_note"] += late
                k = 0
                while t < end and k < 8:
                    iserror = rng.random() < FRACTION_ISERROR
                    counts["iserror_notes"] += iserror
                    add_note(nursing, t, t, hadm, early=(t - start) < timedelta(hours=48), iserror=iserror)
                    t += timedelta(hours=float(rng.uniform(8, 16)))
                    k += 1
                if dbsource == "metavision" or rng.random() < 0.3:
                    t = start + timedelta(hours=float(rng.uniform(50, 70) if late else rng.uniform(2, 20)))
                    for _ in range(int(rng.integers(1, 4))):
                        if t < end:
                            add_note("Physician ", t, t, hadm, early=(t - start) < timedelta(hours=48))
                        t += timedelta(hours=24)
                for category in ("Radiology", "ECG") + (("Respiratory ",) if rng.random() < 0.4 else ()):
                    t = start + timedelta(hours=float(rng.uniform(0, max(1.0, (end - start).total_seconds() / 3600))))
                    add_note(category, t, t, hadm, early=(t - start) < timedelta(hours=48))
            counts["discharge_summaries"] += 1
            add_note("Discharge summary", None, dischtime, hadm, early=False)
            admit = dischtime + timedelta(days=float(rng.uniform(30, 400)))
        if dod is None and rng.random() < 0.1:
            dod = admit + timedelta(days=float(rng.uniform(10, 300)))  # died after discharge
            counts["deaths_after_discharge"] += 1
        if i in outpatient:
            for _ in range(int(rng.integers(1, 3))):
                t = admit + timedelta(days=float(rng.uniform(1, 20)))
                counts["outpatient_notes"] += 1
                add_note("ECG" if rng.random() < 0.5 else "Radiology", t, t, None, early=False)
        patients.append(
            {
                "ROW_ID": i + 1,
                "SUBJECT_ID": sid,
                "GENDER": gender,
                "DOB": _fmt(dob.replace(hour=0, minute=0, second=0)),
                "DOD": _fmt(dod.replace(hour=0, minute=0, second=0)) if dod else "",
                "DOD_HOSP": _fmt(dod.replace(hour=0, minute=0, second=0)) if dod and dod == dischtime and died else "",
                "DOD_SSN": "",
                "EXPIRE_FLAG": int(dod is not None),
            }
        )

    tables = {
        "PATIENTS": pd.DataFrame(patients),
        "ADMISSIONS": pd.DataFrame(admissions),
        "ICUSTAYS": pd.DataFrame(icustays),
        "DIAGNOSES_ICD": pd.DataFrame(diagnoses),
        "NOTEEVENTS": pd.DataFrame(notes),
    }
    for name, frame in tables.items():
        tables[name] = frame[list(MIMIC_TABLES[name])]
    tables["NOTEEVENTS"]["HADM_ID"] = tables["NOTEEVENTS"]["HADM_ID"].astype("Int64")
    tables["NOTEEVENTS"]["CGID"] = tables["NOTEEVENTS"]["CGID"].astype("Int64")
    tables["NOTEEVENTS"]["ISERROR"] = tables["NOTEEVENTS"]["ISERROR"].astype("Int64")

    acuity, missing = generate_acuity(pd.DataFrame(stay_rows), rng)
    truth = _cohort_truth(tables, carriers, subject_ids, genders, counts, missing, hcup, withheld_counts)
    carrier_ids = {name: subject_ids[idx] for name, idx in carriers.items()}
    return Cohort(tables, acuity, testset, note_mentions, carrier_ids, truth)


def generate_acuity(stays: pd.DataFrame, rng: np.random.Generator) -> tuple[dict[str, pd.DataFrame], dict[str, int]]:
    """OASIS, SAPS-II and SOFA per ICU stay, higher for stays of patients who die.

    Probabilities follow the scores' published logistic equations: OASIS p = 1/(1+exp(6.1746 -
    0.1275 s)); SAPS-II logit = -7.7631 + 0.0737 s + 0.9971 ln(s+1). A fixed 2% of stays is left
    out of each export, as missing scores the ingest must count.
    """
    n = len(stays)
    died = stays["died"].to_numpy().astype(float)
    acute = stays["acute"].to_numpy().astype(float)
    oasis = np.clip(rng.normal(29 + 9 * died + 1.5 * acute, 7), 0, 80).round().astype(int)
    sapsii = np.clip(rng.normal(33 + 14 * died + 2 * acute, 11), 0, 120).round().astype(int)
    sofa = np.clip(rng.poisson(3 + 4 * died + 0.5 * acute), 0, 24).astype(int)
    oasis_prob = 1 / (1 + np.exp(6.1746 - 0.1275 * oasis))
    sapsii_logit = -7.7631 + 0.0737 * sapsii + 0.9971 * np.log(sapsii + 1)
    sapsii_prob = 1 / (1 + np.exp(-sapsii_logit))
    keys = stays[["subject_id", "hadm_id", "icustay_id"]].reset_index(drop=True)
    frames = {
        "oasis": keys.assign(oasis=oasis, oasis_prob=oasis_prob.round(6)),
        "sapsii": keys.assign(sapsii=sapsii, sapsii_prob=sapsii_prob.round(6)),
        "sofa": keys.assign(sofa=sofa),
    }
    missing = {}
    for name, frame in frames.items():
        drop = rng.choice(n, round(FRACTION_MISSING_ACUITY * n), replace=False)
        frames[name] = frame.drop(index=drop).reset_index(drop=True)
        missing[name] = len(drop)
    return frames, missing


def benchmark_testset(subject_ids: np.ndarray, rng: np.random.Generator) -> pd.DataFrame:
    """A mimic3-benchmarks style split: every subject, flag 1 for exactly round(15%) test subjects."""
    flags = np.zeros(len(subject_ids), dtype=int)
    flags[rng.choice(len(subject_ids), round(TEST_FRACTION * len(subject_ids)), replace=False)] = 1
    return pd.DataFrame({"SUBJECT_ID": subject_ids, "flag": flags})


def _cohort_truth(
    tables: dict[str, pd.DataFrame],
    carriers: dict[str, np.ndarray],
    subject_ids: np.ndarray,
    genders: np.ndarray,
    counts: dict[str, int],
    missing_acuity: dict[str, int],
    hcup: dict[str, Any],
    withheld_counts: dict[str, dict[str, int]],
) -> dict[str, Any]:
    """What the generator planted and produced, for the tests and later analyses."""
    adm = tables["ADMISSIONS"].merge(tables["PATIENTS"][["SUBJECT_ID", "GENDER"]], on="SUBJECT_ID")
    dx = tables["DIAGNOSES_ICD"]
    dx_pheno = dx.assign(PHENOTYPE=dx["ICD9_CODE"].map(phenotype_of_code(hcup))).dropna(subset=["PHENOTYPE"])
    phenotypes = {}
    for name, design in PHENOTYPE_PREVALENCE.items():
        hadms = set(dx_pheno.loc[dx_pheno["PHENOTYPE"] == name, "HADM_ID"])
        has = adm["HADM_ID"].isin(hadms)
        phenotypes[name] = {
            "type": hcup[name]["type"],
            "design_prevalence": round(design * (1 - FRACTION_NO_PHENOTYPE), 4),
            "admissions_with": int(has.sum()),
            "realized_prevalence": round(float(has.mean()), 4),
            "realized_prevalence_male": round(float(has[adm["GENDER"] == "M"].mean()), 4),
            "realized_prevalence_female": round(float(has[adm["GENDER"] == "F"].mean()), 4),
        }
    conditions = []
    gender_of = dict(zip(subject_ids.tolist(), genders.tolist()))
    for c in CONDITIONS:
        ids = subject_ids[carriers[c.name]]
        conditions.append(
            {
                "name": c.name,
                "phrase": c.phrase,
                "lean": c.lean,
                "male_share": c.male_share,
                "prevalence": c.prevalence,
                "annotation_column": c.annotation,
                "carriers": int(len(ids)),
                "male_carriers": int(sum(gender_of[s] == "M" for s in ids)),
                "female_carriers": int(sum(gender_of[s] == "F" for s in ids)),
                "control": c.lean == "none",
            }
        )
    return {
        "patients": int(len(tables["PATIENTS"])),
        "admissions": int(len(tables["ADMISSIONS"])),
        "icu_stays": int(len(tables["ICUSTAYS"])),
        "notes": int(len(tables["NOTEEVENTS"])),
        "male_fraction": round(float((genders == "M").mean()), 4),
        "in_hospital_mortality": round(float(adm["HOSPITAL_EXPIRE_FLAG"].mean()), 4),
        "phenotypes": phenotypes,
        "phenotypes_balanced_over": list(PHENOTYPE_STRATA),
        "planted_conditions": conditions,
        "planted_recall_gaps": [{"phenotype": name, **gap} for name, gap in PLANTED_RECALL_GAPS.items()],
        "planted_intersectional_gaps": [
            {
                "phenotype": name,
                **gap,
                "other_gender_share": round(adult_age_share(*gap["ages"]), 4),
                "withheld_admissions": withheld_counts[name],
            }
            for name, gap in PLANTED_INTERSECTIONAL_GAPS.items()
        ],
        "special_cases": counts,
        "missing_acuity_stays": missing_acuity,
        "test_subjects_fraction": TEST_FRACTION,
    }
