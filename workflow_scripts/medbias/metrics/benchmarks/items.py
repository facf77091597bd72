"""Readers of the field's benchmark files, in their published formats: CrowS-Pairs (Nangia et al.
2020, ``crows_pairs_anonymized.csv``), StereoSet (Nadeem et al. 2021, one JSON object per example)
and the SEAT tests of May et al. 2019 (one JSON file per test).

Every reader checks the file before any model is loaded: a missing column or key, an empty sentence,
a pair whose two sentences are identical, an example without its three options is one error naming
the file and the row. Examples that are well formed but cannot be scored as published (a StereoSet
context with two blanks) are returned apart with the reason, so the tables can count them."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from medbias.core.errors import MedbiasInputError, reading
from medbias.metrics.benchmarks.scoring import STEREOSET_BLANK

CROWS_COLUMNS = ("sent_more", "sent_less", "stereo_antistereo", "bias_type")
CROWS_DIRECTIONS = ("stereo", "antistereo")
STEREOSET_OPTIONS = ("stereotype", "anti-stereotype", "unrelated")
STEREOSET_KEYS = ("type", "target", "bias_type", "context", *STEREOSET_OPTIONS)
MAY_SETS = {"X": "targ1", "Y": "targ2", "A": "attr1", "B": "attr2"}


def read_crows_pairs(path: str | Path) -> pd.DataFrame:
    """CrowS-Pairs as published: one row per pair with ``pair_id`` (the file's first, unnamed column,
    else the row number), sent_more, sent_less, stereo_antistereo and bias_type. Rows are numbered
    as a spreadsheet shows them (the header is row 1)."""
    with reading(path):
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in CROWS_COLUMNS if c not in frame.columns]
    if missing:
        raise MedbiasInputError(f"{path}: no column {missing[0]!r} (CrowS-Pairs needs {', '.join(CROWS_COLUMNS)})")
    first = frame.columns[0]
    ids = frame[first] if first not in CROWS_COLUMNS and first.strip() in ("", "Unnamed: 0") else None
    for i, row in enumerate(frame.itertuples(index=False), start=2):
        more, less = str(row.sent_more).strip(), str(row.sent_less).strip()
        if not more or not less:
            raise MedbiasInputError(f"{path}: row {i}: an empty sentence in sent_more or sent_less")
        if more == less:
            raise MedbiasInputError(f"{path}: row {i}: sent_more and sent_less are the same sentence")
        if row.stereo_antistereo not in CROWS_DIRECTIONS:
            raise MedbiasInputError(
                f"{path}: row {i}: stereo_antistereo is {row.stereo_antistereo!r}, not one of {CROWS_DIRECTIONS}"
            )
        if not str(row.bias_type).strip():
            raise MedbiasInputError(f"{path}: row {i}: empty bias_type")
    out = frame[list(CROWS_COLUMNS)].copy()
    out.insert(0, "pair_id", pd.to_numeric(ids, errors="raise").astype(int) if ids is not None else range(len(frame)))
    if out["pair_id"].duplicated().any():
        raise MedbiasInputError(f"{path}: pair id {out['pair_id'][out['pair_id'].duplicated()].iloc[0]} is repeated")
    return out.reset_index(drop=True)


@dataclass
class StereoSetExamples:
    """StereoSet examples of one kind (intrasentence or intersentence) that can be scored, and those
    set aside with the reason (``excluded``: line, target, reason)."""

    examples: pd.DataFrame
    excluded: list[dict[str, object]] = field(default_factory=list)


def filler(context: str, sentence: str) -> str | None:
    """The words that fill the context's one BLANK in ``sentence`` (the dev file lower-cases the
    filled sentences, so the context's text around the blank is matched case-insensitively); None
    when the sentence is not the context with its blank filled."""
    before, _, after = context.partition(STEREOSET_BLANK)
    low = sentence.lower()
    if len(sentence) <= len(before) + len(after):
        return None
    if not (low.startswith(before.lower()) and low.endswith(after.lower())):
        return None
    return sentence[len(before) : len(sentence) - len(after)]


def read_stereoset(path: str | Path, kind: str) -> StereoSetExamples:
    """StereoSet examples of ``kind`` (``intrasentence`` or ``intersentence``) from a JSON-lines file:
    example_id (the line number), target, bias_type, context and the three options; intrasentence
    rows also carry each option's filler word (``filler_<option>``). A missing key, an empty field
    or an option that does not fill the blank is one error naming the file and line; a context with
    more than one blank is set aside (the published scorer replaces every blank with one mask, which
    it then cannot score)."""
    if kind not in ("intrasentence", "intersentence"):
        raise ValueError(f"StereoSet kind {kind!r}: intrasentence or intersentence")
    rows, excluded = [], []
    with reading(path), open(path, encoding="utf-8") as handle:
        lines = handle.readlines()
    for line_number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as error:
            raise MedbiasInputError(f"{path}: line {line_number}: not JSON ({error.msg})") from None
        missing = [k for k in STEREOSET_KEYS if not str(item.get(k, "")).strip()]
        if missing:
            raise MedbiasInputError(f"{path}: line {line_number}: no (or an empty) {missing[0]!r}")
        if item["type"] != kind:
            continue
        row = {"example_id": line_number, **{k: str(item[k]) for k in STEREOSET_KEYS if k != "type"}}
        if kind == "intrasentence":
            blanks = row["context"].count(STEREOSET_BLANK)
            if blanks == 0:
                raise MedbiasInputError(f"{path}: line {line_number}: the context has no {STEREOSET_BLANK}")
            if blanks > 1:
                excluded.append({"line": line_number, "target": row["target"], "reason": "two blanks in the context"})
                continue
            for option in STEREOSET_OPTIONS:
                word = filler(row["context"], row[option])
                if word is None:
                    raise MedbiasInputError(
                        f"{path}: line {line_number}: the {option} option does not fill the context's blank"
                    )
                row[f"filler_{option}"] = word
        rows.append(row)
    if not rows:
        raise MedbiasInputError(f"{path}: no {kind} examples")
    return StereoSetExamples(pd.DataFrame(rows), excluded)


def read_may_seat_tests(folder: str | Path, names: list[str]) -> dict[str, dict[str, list[str]]]:
    """May et al.'s SEAT tests ``names`` from ``folder/<name>.jsonl`` (one JSON object with targ1,
    targ2, attr1, attr2, each a category and its example sentences): name -> {X, Y, A, B: sentences,
    and the four categories under ``categories``}."""
    tests: dict[str, dict[str, list[str]]] = {}
    for name in names:
        path = Path(folder) / f"{name}.jsonl"
        if not path.is_file():
            raise MedbiasInputError(f"{path}: no such SEAT test file (test {name!r})")
        with reading(path), open(path, encoding="utf-8") as handle:
            try:
                data = json.load(handle)
            except json.JSONDecodeError as error:
                raise MedbiasInputError(f"{path}: not JSON ({error.msg})") from None
        test: dict[str, list[str]] = {"categories": []}
        for key, source in MAY_SETS.items():
            entry = data.get(source)
            if not isinstance(entry, dict) or not entry.get("examples"):
                raise MedbiasInputError(f"{path}: no (or an empty) {source!r} with 'examples'")
            sentences = [str(s).strip() for s in entry["examples"]]
            empty = [i for i, s in enumerate(sentences) if not s]
            if empty:
                raise MedbiasInputError(f"{path}: {source} example {empty[0]} is an empty sentence")
            test[key] = list(dict.fromkeys(sentences))
            test["categories"].append(str(entry.get("category", source)))
        tests[name] = test
    return tests


def read_wikitext_paragraphs(path: str | Path, paragraphs: int | None = None) -> list[str]:
    """The paragraphs of a WikiText file (the tokenized release: one paragraph a line, headings as
    ``= Title =``), blank lines and headings left out, the first ``paragraphs`` of them (None: all);
    a file without a paragraph is an error naming it."""
    path = Path(path)
    with reading(path):
        lines = path.read_text(encoding="utf-8").splitlines()
    kept = [
        line.strip()
        for line in lines
        if line.strip() and not (line.strip().startswith("=") and line.strip().endswith("="))
    ]
    if not kept:
        raise MedbiasInputError(f"{path}: no paragraph (every line is blank or a '= heading =')")
    return kept if paragraphs is None else kept[:paragraphs]


def check_count(key: str, asked: int | None, count: int, what: str, path: str | Path) -> None:
    """A config count (``key``, its dotted path) asked of a file that holds ``count`` items is an error
    naming both when it asks for more (None asks for all)."""
    if asked is not None and asked > count:
        raise MedbiasInputError(
            f"config key '{key}': got {asked}, but {path} holds {count:,} {what} (null uses them all)"
        )
