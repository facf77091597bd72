"""Synthetic clinical notes of a chosen length and structure, for benchmarks at real note length.

The demo world's notes (``medbias.synth.mimic``) are a few sentences each, written so that tiny models
learn planted effects; real MIMIC-III notes are about five times longer on average and are shaped
differently: discharge summaries have a dozen section headers, numbered medication lists and lab
lines with dozens of values and no sentence end; nursing notes are short system-by-system prose with
abbreviations; ECG reports are a line or two. The cost of note processing depends on that shape
(sentence length, list items, placeholders), so these notes imitate it. Every phrase is written here;
nothing is derived from MIMIC-III.

- ``note_length_table`` reads the per-category table (``config/resources/mimic-facts/note_lengths.tsv``).
- ``sample_notes`` draws categories in their real proportions and lengths from a lognormal with the
  table's mean, then writes each note with ``note_of_length``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from medbias.synth.mimic import _placeholder  # one placeholder of a family, as the demo world's notes have them

STYLES = ("discharge", "physician", "nursing", "radiology", "ecg")
LENGTH_COLUMNS = ("category", "notes", "mean_chars", "sigma_log", "style")

_PROSE = (
    "Pt is a {age} yo {noun} with hx of CHF, DM2 and HTN who presented with SOB x 3 days.",
    "On arrival to the ED VS were notable for HR 112 and BP 92/54.",
    "Pt was started on IV abx and given 2L NS with improvement in BP.",
    "CXR showed bilateral pleural effusions, L > R, and mild pulmonary edema.",
    "Lasix 40 mg IV b.i.d. was continued with good UOP, approx 1.5L negative.",
    "Dr. {name} from cardiology was consulted and recommended an echo.",
    "Pt denies CP, palpitations, n/v/d, fevers or chills.",
    "Family meeting held with {name} and the team, code status confirmed as full code.",
    "Will continue to monitor lytes and replete K and Mg as needed.",
    "Pain controlled with tylenol 650 mg p.o. q6h prn, pt resting comfortably.",
    "Skin intact, no breakdown noted, turned q2h per protocol.",
    "Plan is to wean O2 as tolerated and mobilize with PT.",
)
_HEADERS = (
    "Chief Complaint",
    "History of Present Illness",
    "Past Medical History",
    "Social History",
    "Family History",
    "Physical Exam",
    "Pertinent Results",
    "Brief Hospital Course",
    "Medications on Admission",
    "Discharge Medications",
    "Discharge Disposition",
    "Discharge Diagnosis",
    "Discharge Condition",
    "Discharge Instructions",
    "Followup Instructions",
)
_SYSTEMS = ("Neuro", "CV", "Resp", "GI", "GU", "Skin", "ID", "Endo", "Social", "Plan")
_DRUGS = (
    "Aspirin 81 mg",
    "Metoprolol Tartrate 25 mg",
    "Lisinopril 10 mg",
    "Atorvastatin 40 mg",
    "Furosemide 40 mg",
    "Insulin Glargine 20 units",
    "Pantoprazole 40 mg",
    "Heparin 5000 units",
)
_LABS = (
    "WBC",
    "RBC",
    "Hgb",
    "Hct",
    "MCV",
    "Plt",
    "Na",
    "K",
    "Cl",
    "HCO3",
    "BUN",
    "Creat",
    "Glucose",
    "Ca",
    "Mg",
    "Phos",
    "ALT",
    "AST",
    "AlkPhos",
    "TBili",
    "Lactate",
    "PT",
    "PTT",
    "INR",
)
_FINDINGS = (
    "There is mild cardiomegaly.",
    "No focal consolidation is seen.",
    "Small bilateral pleural effusions are unchanged.",
    "The left ventricular cavity size is normal.",
    "There is no pneumothorax.",
    "Endotracheal tube terminates 4 cm above the carina.",
    "Overall left ventricular systolic function is mildly depressed (LVEF 40-45%).",
)
_ECG = (
    "Sinus rhythm.",
    "Sinus tachycardia.",
    "Left axis deviation.",
    "Nonspecific ST-T wave changes.",
    "Low QRS voltages in the limb leads.",
    "Atrial fibrillation with rapid ventricular response.",
)


def _prose(rng: np.random.Generator) -> str:
    text = _PROSE[int(rng.integers(len(_PROSE)))]
    return text.format(
        age=int(rng.integers(20, 90)), noun=("man", "woman")[int(rng.integers(2))], name=_placeholder(rng, "name")
    )


def _lab_line(rng: np.random.Generator) -> str:
    """One lab line as results sections print them: dozens of values, no sentence end."""
    values = " ".join(
        f"{_LABS[int(i)]}-{rng.uniform(0.5, 140):.1f}{'*' if rng.random() < 0.3 else ''}"
        for i in rng.integers(len(_LABS), size=int(rng.integers(8, 20)))
    )
    return f"{_placeholder(rng, 'date')} 05:40AM BLOOD {values}"


def _med_list(rng: np.random.Generator) -> str:
    return "\n".join(
        f"{i}. {_DRUGS[int(rng.integers(len(_DRUGS)))]} Tablet Sig: One (1) Tablet PO DAILY (Daily)."
        for i in range(1, int(rng.integers(3, 12)))
    )


def _discharge_block(rng: np.random.Generator) -> str:
    header = _HEADERS[int(rng.integers(len(_HEADERS)))]
    kind = rng.random()
    if kind < 0.25:
        body = _med_list(rng)
    elif kind < 0.45:
        body = "\n".join(_lab_line(rng) for _ in range(int(rng.integers(1, 5))))
    else:
        body = " ".join(_prose(rng) for _ in range(int(rng.integers(2, 8))))
    return f"{header}:\n{body}\n"


def _physician_block(rng: np.random.Generator) -> str:
    if rng.random() < 0.4:
        return "Labs / Radiology\n" + "\n".join(_lab_line(rng) for _ in range(int(rng.integers(2, 6)))) + "\n"
    items = "\n".join(f"- {_prose(rng)}" for _ in range(int(rng.integers(2, 6))))
    return f"Assessment and Plan:\n{items}\n"


def _nursing_block(rng: np.random.Generator) -> str:
    system = _SYSTEMS[int(rng.integers(len(_SYSTEMS)))]
    return f"{system}: " + " ".join(_prose(rng) for _ in range(int(rng.integers(1, 4)))) + "\n"


def _radiology_block(rng: np.random.Generator) -> str:
    header = ("FINDINGS", "IMPRESSION", "INDICATION", "COMPARISON")[int(rng.integers(4))]
    findings = " ".join(_FINDINGS[int(i)] for i in rng.integers(len(_FINDINGS), size=int(rng.integers(2, 6))))
    return f"{header}: {findings} Compared to {_placeholder(rng, 'date')}.\n"


def _ecg_block(rng: np.random.Generator) -> str:
    return (
        " ".join(_ECG[int(i)] for i in rng.integers(len(_ECG), size=2))
        + f" Since the previous tracing of {_placeholder(rng, 'date')} no significant change.\n"
    )


_BLOCKS: dict[str, Callable[[np.random.Generator], str]] = {
    "discharge": _discharge_block,
    "physician": _physician_block,
    "nursing": _nursing_block,
    "radiology": _radiology_block,
    "ecg": _ecg_block,
}
_OPENINGS: dict[str, Callable[[np.random.Generator], str]] = {
    "discharge": lambda rng: (
        f"Admission Date: {_placeholder(rng, 'date')} Discharge Date: "
        f"{_placeholder(rng, 'date')}\n\nService: MEDICINE\n\n"
    ),
    "physician": lambda rng: f"Chief Complaint: dyspnea\n24 Hour Events: seen by {_placeholder(rng, 'name')}\n\n",
    "nursing": lambda rng: "Nursing Progress Note 0700-1900\n",
    "radiology": lambda rng: f"FINAL REPORT\nCHEST (PORTABLE AP) {_placeholder(rng, 'date')}\n",
    "ecg": lambda rng: "",
}


def note_of_length(rng: np.random.Generator, style: str, n_chars: int) -> str:
    """A synthetic note of ``style`` cut to ``n_chars`` characters (at a space where one is near).

    Blocks of the style (sections, lab lines, lists, prose) are appended until the length is
    reached; discharge summaries separate sections by blank lines, as real ones do.
    """
    if style not in _BLOCKS:
        raise ValueError(f"unknown note style {style!r}; expected one of {', '.join(STYLES)}")
    parts = [_OPENINGS[style](rng)]
    size = len(parts[0])
    separator = "\n" if style == "discharge" else ""
    while size < n_chars:
        block = _BLOCKS[style](rng) + separator
        parts.append(block)
        size += len(block)
    text = "".join(parts)[:n_chars]
    cut = text.rfind(" ", max(0, n_chars - 40))
    return text[:cut] if cut > 0 else text


def note_length_table(path: str | Path) -> pd.DataFrame:
    """The per-category length table (``#`` lines are its provenance); checks its columns and styles."""
    table = pd.read_csv(path, sep="\t", comment="#", keep_default_na=False)
    missing = [c for c in LENGTH_COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {', '.join(missing)}; expected {', '.join(LENGTH_COLUMNS)}")
    unknown = sorted(set(table["style"]) - set(STYLES))
    if unknown:
        raise ValueError(
            f"{path}: column style: unknown style(s) {', '.join(unknown)}; expected one of {', '.join(STYLES)}"
        )
    return table


def sample_notes(table: pd.DataFrame, n_notes: int, seed: int) -> pd.DataFrame:
    """``n_notes`` notes (CATEGORY, TEXT) in the table's category proportions, each length drawn from a
    lognormal whose mean is the category's ``mean_chars`` (so the sample's mean length matches the
    table's in expectation); at least 40 characters a note."""
    rng = np.random.default_rng(seed)
    share = table["notes"].to_numpy(float) / table["notes"].sum()
    which = rng.choice(len(table), size=n_notes, p=share)
    sigma = table["sigma_log"].to_numpy(float)[which]
    mu = np.log(table["mean_chars"].to_numpy(float)[which]) - sigma**2 / 2
    lengths = np.maximum(40, np.round(np.exp(rng.normal(mu, sigma)))).astype(int)
    styles = table["style"].to_numpy()[which]
    texts = [note_of_length(rng, style, int(n)) for style, n in zip(styles, lengths)]
    return pd.DataFrame({"CATEGORY": table["category"].to_numpy()[which], "TEXT": texts})
