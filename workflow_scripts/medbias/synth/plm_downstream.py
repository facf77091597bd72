"""Small synthetic downstream sets for the plm study's Table 6, in the distributed formats that
``medbias.studies.plm.finetune`` reads (GLUE task folders, PubMedQA split files, HoC TSVs, BC5CDR CoNLL).

Each set has a learnable rule (a cue word decides the label), so a fine-tuned tiny model scores
above chance and a debiasing method that damages the representations shows as a drop; nothing
about identities is planted here.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

POSITIVE = ("improved", "stable", "comfortable", "recovered", "better")
NEGATIVE = ("worse", "unstable", "painful", "declined", "critical")
NOUNS = ("surgery", "treatment", "visit", "procedure", "therapy", "infusion")
DISEASES = ("asthma", "pneumonia", "migraine", "arthritis", "influenza", "meningitis", "leukemia", "scoliosis")
SYMPTOMS = ("cough", "fever", "rash", "nausea", "fatigue", "dizziness")
DRUGS = ("aspirin", "metformin", "cisplatin", "lithium", "warfarin", "heparin", "ibuprofen", "insulin")
HALLMARKS = {
    "proliferation": ("proliferation", "growth"),
    "evasion": ("suppressor", "evasion"),
    "death": ("apoptosis", "death"),
    "immortality": ("telomerase", "immortality"),
    "angiogenesis": ("angiogenesis", "vessels"),
    "invasion": ("metastasis", "invasion"),
    "instability": ("mutation", "instability"),
    "inflammation": ("inflammation", "cytokines"),
    "energetics": ("glycolysis", "metabolism"),
    "immune": ("immune", "lymphocytes"),
}
# train / dev / test sizes; PubMedQA's are the paper's (450 / 50 / 500)
DEMO_SIZES = {
    "glue": {"train": 400, "test": 200},
    "pubmedqa": {"train": 450, "dev": 50, "test": 500},
    "hoc": {"train": 600, "dev": 100, "test": 300},
    "bc5cdr": {"train": 500, "dev": 100, "test": 250},
}
FILLER = ("the", "study", "cells", "showed", "in", "samples", "from", "patients", "with", "tumours")


def _pick(rng: np.random.Generator, options):
    return options[int(rng.integers(len(options)))]


def _write_tsv(path: Path, header: list[str], rows: list[list[str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["\t".join(header)] + ["\t".join(row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_glue(folder: Path, sizes: dict[str, int], rng: np.random.Generator) -> None:
    """SST-2 style (sentiment from a cue word) and RTE style (does sentence 2 follow from sentence 1)."""
    for split, n in (("train", sizes["train"]), ("dev", sizes["test"])):
        rows = []
        for _ in range(n):
            label = int(rng.integers(2))
            word = _pick(rng, POSITIVE if label else NEGATIVE)
            rows.append([f"the patient felt {word} after the {_pick(rng, NOUNS)} .", str(label)])
        _write_tsv(folder / "SST-2" / f"{split}.tsv", ["sentence", "label"], rows)
        rows = []
        for i in range(n):
            disease, other = rng.choice(DISEASES, 2, replace=False)
            entailed = bool(rng.integers(2))
            rows.append(
                [
                    str(i),
                    f"the patient has {disease} and {_pick(rng, SYMPTOMS)} .",
                    f"the patient has {disease if entailed else other} .",
                    "entailment" if entailed else "not_entailment",
                ]
            )
        _write_tsv(folder / "RTE" / f"{split}.tsv", ["index", "sentence1", "sentence2", "label"], rows)


def write_pubmedqa(folder: Path, sizes: dict[str, int], rng: np.random.Generator) -> None:
    """Questions "does D reduce X?" whose context says it did, did not, or was unclear."""
    folder.mkdir(parents=True, exist_ok=True)
    cue = {
        "yes": "{d} reduced {x} in the trial .",
        "no": "{d} did not change {x} in the trial .",
        "maybe": "the effect of {d} on {x} was unclear in the trial .",
    }
    counter = 0
    for split, n in (("train_set", sizes["train"]), ("dev_set", sizes["dev"]), ("test_set", sizes["test"])):
        items = {}
        for _ in range(n):
            drug, disease = _pick(rng, DRUGS), _pick(rng, DISEASES)
            decision = _pick(rng, list(cue))
            items[str(10_000_000 + counter)] = {
                "QUESTION": f"does {drug} reduce {disease} ?",
                "CONTEXTS": [f"patients with {disease} were enrolled .", cue[decision].format(d=drug, x=disease)],
                "final_decision": decision,
            }
            counter += 1
        (folder / f"{split}.json").write_text(json.dumps(items, indent=1), encoding="utf-8")


def write_hoc(folder: Path, sizes: dict[str, int], rng: np.random.Generator) -> None:
    """Sentences naming the cue words of zero to two hallmarks; the labels are those hallmarks."""
    names = sorted(HALLMARKS)
    for split, n in (("train", sizes["train"]), ("dev", sizes["dev"]), ("test", sizes["test"])):
        rows = []
        for _ in range(n):
            chosen = sorted(rng.choice(names, int(rng.integers(3)), replace=False).tolist())
            words = [_pick(rng, FILLER) for _ in range(6)] + [_pick(rng, HALLMARKS[h]) for h in chosen]
            rows.append([" ".join(rng.permutation(words)), ",".join(chosen)])
        _write_tsv(folder / f"{split}.tsv", ["sentence", "labels"], rows)


def write_bc5cdr(folder: Path, sizes: dict[str, int], rng: np.random.Generator) -> None:
    """Sentences with chemical and disease mentions (some two words long), BIO-tagged."""
    folder.mkdir(parents=True, exist_ok=True)
    chemicals = [[d] for d in DRUGS] + [["sodium", "chloride"], ["valproic", "acid"]]
    diseases = [[d] for d in DISEASES] + [["renal", "failure"], ["heart", "failure"]]
    frames = ("{c} induced {d} in rats .", "patients given {c} developed {d} .", "{d} was treated with {c} .")
    for split, n in (("train", sizes["train"]), ("devel", sizes["dev"]), ("test", sizes["test"])):
        lines = []
        for _ in range(n):
            chemical, disease = _pick(rng, chemicals), _pick(rng, diseases)
            for token in _pick(rng, frames).split():
                if token in ("{c}", "{d}"):
                    words, kind = (chemical, "Chemical") if token == "{c}" else (disease, "Disease")
                    lines += [f"{w}\t{'B' if j == 0 else 'I'}-{kind}" for j, w in enumerate(words)]
                else:
                    lines.append(f"{token}\tO")
            lines.append("")
        (folder / f"{split}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_downstream_sets(folder: str | Path, sizes: dict[str, dict[str, int]], seed: int) -> dict[str, str]:
    """All four benchmarks under ``folder``; returns benchmark -> its folder."""
    folder = Path(folder)
    rng = np.random.default_rng(seed)
    write_glue(folder / "glue", sizes["glue"], rng)
    write_pubmedqa(folder / "pubmedqa", sizes["pubmedqa"], rng)
    write_hoc(folder / "hoc", sizes["hoc"], rng)
    write_bc5cdr(folder / "bc5cdr", sizes["bc5cdr"], rng)
    return {name: str(folder / name) for name in ("glue", "pubmedqa", "hoc", "bc5cdr")}
