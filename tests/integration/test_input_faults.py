"""The fault battery: corrupted input files of every kind a user brings (MIMIC-III tables and
NOTEEVENTS, the mimic-code exports, the phenotype annotations, the benchmark split, PubMed, word
vectors) and faulty config files, each run as a user runs it (``snakemake <target> --configfile``,
world: real). Each must stop with exactly one ``medbias:`` line on the terminal that names the file
(or the key), no Python traceback, and no partial output.

The inputs are the demo world's synthetic files, which have the real formats, built once for the module
(about 15 s); each case copies them, corrupts one, and asks for the output of the first job that reads
it. The faults a cheap read finds (headers, the annotations, the split, the word vectors' header) stop
the run before any job; the rest stop the first job that reads the file.
"""

from __future__ import annotations

import csv
import gzip
import io
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from conftest import run_snakemake, wiring_config, write_config
from test_config_helpers import fake_real_config

pytestmark = pytest.mark.faults

INGEST = "results/mimic/ingest_counts.json"  # mimic_ingest: the first job to read the MIMIC tables
PARSE = "results/rios/parsed/pubmed26n0001.parquet"  # rios_parse of the first PubMed file
WEAT = "results/audit/googlenews/weat.csv"  # audit_weat: the first job to read a word-vector file
DATA_FOLDERS = ("mimic-iii", "mimic-code", "phenotype-annotations", "mimic3-benchmarks", "pubmed", "word-vectors")


@pytest.fixture(scope="module")
def synthetic_inputs(tmp_path_factory) -> Path:
    """The demo world's inputs in the real formats (MIMIC-III tables, exports, annotations, split,
    PubMed files, word2vec binaries), at the wiring scale."""
    folder = tmp_path_factory.mktemp("fault_world")
    write_config(folder / "config.yaml", wiring_config())
    targets = [f"results/demo_world/word-vectors/{corpus}-w2v.bin" for corpus in ("general", "bio")]
    result = run_snakemake(["--cores", "2", *targets, "--configfile", "config.yaml"], folder)
    assert result.returncode == 0, result.stderr[-3000:]
    return folder / "results" / "demo_world"


def real_world(synthetic: Path, tmp_path: Path) -> tuple[dict, Path]:
    """A real-world config over a copy of the synthetic inputs; returns it and the copy's folder."""
    config = fake_real_config(tmp_path)
    data = tmp_path / "data"
    for name in DATA_FOLDERS:
        shutil.copytree(synthetic / name, data / name)
    config["inputs"] = {
        "mimic_dir": str(data / "mimic-iii"),
        "acuity_dir": str(data / "mimic-code"),
        "phenotype_annotations": str(data / "phenotype-annotations" / "ACTdb102003.csv"),
        "pubmed_dir": str(data / "pubmed"),
        "benchmark_testset": str(data / "mimic3-benchmarks" / "testset.csv"),
    }
    for name, corpus in (("googlenews", "general"), ("biowordvec", "bio")):
        config["embeddings"][name].update(
            source=str(data / "word-vectors" / f"{corpus}-w2v.bin"), format="word2vec_binary"
        )
    return config, data


# --- ways to corrupt a file --------------------------------------------------------------------------


def truncate(path: Path, fraction: float = 0.6) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * fraction)])


def plain_notes(data: Path) -> Path:
    """NOTEEVENTS.csv.gz decompressed to NOTEEVENTS.csv (the gzipped one removed); the plain file."""
    gz = data / "mimic-iii" / "NOTEEVENTS.csv.gz"
    plain = gz.with_suffix("")
    plain.write_bytes(gzip.decompress(gz.read_bytes()))
    gz.unlink()
    return plain


def edit_rows(path: Path, edit: Callable[[list[list[str]]], None]) -> None:
    """Apply ``edit`` to the CSV's rows (header first) and write the file back (gzipped if it was)."""
    raw = path.read_bytes()
    text = gzip.decompress(raw).decode() if path.name.endswith(".gz") else raw.decode()
    rows = list(csv.reader(io.StringIO(text, newline="")))
    edit(rows)
    out = io.StringIO(newline="")
    csv.writer(out, lineterminator="\n").writerows(rows)
    data = out.getvalue().encode()
    path.write_bytes(gzip.compress(data, mtime=0) if path.name.endswith(".gz") else data)


def set_cell(path: Path, row: int, column: str, value: str) -> None:
    def edit(rows):
        rows[row][rows[0].index(column)] = value

    edit_rows(path, edit)


def rewrite_text(path: Path, change: Callable[[str], str]) -> None:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        text = handle.read()
    data = change(text).encode()
    path.write_bytes(gzip.compress(data, mtime=0) if path.name.endswith(".gz") else data)


def word2vec_header(path: Path, header: str) -> None:
    """Replace a word2vec binary file's first line."""
    data = path.read_bytes()
    path.write_bytes(header.encode() + data[data.index(b"\n") :])


def mimic(data: Path, table: str) -> Path:
    return data / "mimic-iii" / f"{table}.csv.gz"


def notes_cut_mid_row(data: Path) -> None:
    plain = plain_notes(data)
    raw = plain.read_bytes()
    plain.write_bytes(raw[: raw.rindex(b',"') + 20])  # inside the last note's quoted text


def notes_bad_byte(data: Path, which: str) -> None:
    plain = plain_notes(data)
    raw = plain.read_bytes()
    at = (raw.rindex(b',"') if which == "last" else raw.index(b',"')) + 5
    plain.write_bytes(raw[:at] + b"\xff" + raw[at:])


def vectors_headerless_text(data: Path) -> None:
    (data / "word-vectors" / "general-w2v.bin").write_text("he 0.1 0.2 0.3\nshe 0.3 0.2 0.1\n")


def vectors_one_more(data: Path) -> None:
    """A header that declares one vector fewer than the file holds."""
    path = data / "word-vectors" / "general-w2v.bin"
    count, dimension = path.read_bytes().split(b"\n", 1)[0].split()
    word2vec_header(path, f"{int(count) - 1} {int(dimension)}")


def vectors_header(data: Path, count_change: int = 0, dimension_change: int = 0) -> None:
    path = data / "word-vectors" / "general-w2v.bin"
    count, dimension = path.read_bytes().split(b"\n", 1)[0].split()
    word2vec_header(path, f"{int(count) + count_change} {int(dimension) + dimension_change}")


# --- the cases -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fault:
    name: str
    corrupt: Callable[[Path], None] | None  # applied to the data folder
    target: str
    names: tuple[str, ...]  # what the one line must name (file, row, column, key)
    when: str = "before any job"  # or the rule of the first job that reads the file
    edit_config: Callable[[dict], None] | None = None
    config_text: Callable[[str], str] | None = None


def _pmid_not_a_number(text: str) -> str:
    return re.sub(r'(<MedlineCitation[^>]*><PMID Version="1">)\d+', r"\1not-a-pmid", text, count=1)


def _split(data: Path) -> Path:
    return data / "mimic3-benchmarks" / "testset.csv"


ANNOTATIONS = ("phenotype-annotations", "ACTdb102003.csv")

FAULTS = [
    # MIMIC-III tables and NOTEEVENTS
    Fault(
        "patients truncated gzip",
        lambda d: truncate(mimic(d, "PATIENTS")),
        INGEST,
        ("PATIENTS.csv.gz", "the file ends early"),
        when="mimic_ingest",
    ),
    Fault(
        "notes truncated gzip",
        lambda d: truncate(mimic(d, "NOTEEVENTS")),
        INGEST,
        ("NOTEEVENTS.csv.gz", "the file ends early"),
        when="mimic_ingest",
    ),
    Fault(
        "admissions not gzip",
        lambda d: mimic(d, "ADMISSIONS").write_bytes(b"ROW_ID,SUBJECT_ID\n1,2\n"),
        INGEST,
        ("ADMISSIONS.csv.gz", "cannot read the header row"),
    ),
    Fault(
        "notes plain csv cut mid-row",
        notes_cut_mid_row,
        INGEST,
        ("NOTEEVENTS.csv", "malformed CSV"),
        when="mimic_ingest",
    ),
    Fault(
        "notes bad byte in a late note",
        lambda d: notes_bad_byte(d, "last"),
        INGEST,
        ("NOTEEVENTS.csv", "not utf-8", "in data rows 1 to"),
        when="mimic_ingest",
    ),
    Fault(
        "notes bad byte in the first note",
        lambda d: notes_bad_byte(d, "first"),
        INGEST,
        ("NOTEEVENTS.csv", "not utf-8", "in data rows 1 to"),
        when="mimic_ingest",
    ),
    Fault(
        "admissions malformed timestamp",
        lambda d: set_cell(mimic(d, "ADMISSIONS"), 5, "ADMITTIME", "2101-13-45 08:00"),
        INGEST,
        ("ADMISSIONS.csv.gz", "row 5, column ADMITTIME", "malformed timestamp"),
        when="mimic_ingest",
    ),
    Fault(
        "icustays non-integer id",
        lambda d: set_cell(mimic(d, "ICUSTAYS"), 3, "ICUSTAY_ID", "2x0003"),
        INGEST,
        ("ICUSTAYS.csv.gz", "row 3, column ICUSTAY_ID", "expected an integer"),
        when="mimic_ingest",
    ),
    Fault(
        "notes unknown category",
        lambda d: set_cell(mimic(d, "NOTEEVENTS"), 7, "CATEGORY", "Podcast"),
        INGEST,
        ("NOTEEVENTS.csv.gz", "row 7, column CATEGORY", "'Podcast'"),
        when="mimic_ingest",
    ),
    Fault(
        "notes malformed chart date",
        lambda d: set_cell(mimic(d, "NOTEEVENTS"), 2, "CHARTDATE", "29/11/2138"),
        INGEST,
        ("NOTEEVENTS.csv.gz", "row 2, column CHARTDATE"),
        when="mimic_ingest",
    ),
    Fault(
        "notes non-integer subject",
        lambda d: set_cell(mimic(d, "NOTEEVENTS"), 4, "SUBJECT_ID", "s107"),
        INGEST,
        ("NOTEEVENTS.csv.gz", "row 4, column SUBJECT_ID"),
        when="mimic_ingest",
    ),
    Fault(
        "diagnoses row with an extra field",
        lambda d: edit_rows(mimic(d, "DIAGNOSES_ICD"), lambda r: r[9].append("x")),
        INGEST,
        ("DIAGNOSES_ICD.csv.gz", "malformed CSV", "line 10"),
        when="mimic_ingest",
    ),
    Fault(
        "patients missing column",
        lambda d: rewrite_text(mimic(d, "PATIENTS"), lambda t: t.replace(",DOB,", ",BIRTH,", 1)),
        INGEST,
        ("PATIENTS.csv.gz", "missing column 'DOB'"),
    ),
    Fault(
        "patients empty",
        lambda d: mimic(d, "PATIENTS").write_bytes(gzip.compress(b"", mtime=0)),
        INGEST,
        ("PATIENTS.csv.gz", "file is empty"),
    ),
    # mimic-code exports
    Fault(
        "sofa missing column",
        lambda d: rewrite_text(d / "mimic-code" / "sofa.csv", lambda t: t.replace(",sofa\n", ",score\n", 1)),
        INGEST,
        ("sofa.csv", "missing column 'sofa'"),
    ),
    Fault(
        "oasis empty", lambda d: (d / "mimic-code" / "oasis.csv").write_text(""), INGEST, ("oasis.csv", "file is empty")
    ),
    # phenotype annotations
    *[
        Fault(
            f"annotation label {value!r}",
            lambda d, v=value: set_cell(d.joinpath(*ANNOTATIONS), 6, "DEPRESSION", v),
            INGEST,
            ("ACTdb102003.csv", "row 6, column DEPRESSION", f"label '{value}' is not 0 or 1"),
        )
        for value in ("2", "", "-1", "yes")
    ],
    Fault(
        "annotation non-integer row id",
        lambda d: set_cell(d.joinpath(*ANNOTATIONS), 2, "ROW_ID", "r108"),
        INGEST,
        ("ACTdb102003.csv", "row 2, column ROW_ID"),
    ),
    # the benchmark split
    Fault(
        "split with a foreign header",
        lambda d: rewrite_text(_split(d), lambda t: "patient,is_test\n" + t),
        INGEST,
        ("testset.csv", "line 1, column SUBJECT_ID", "a header line?"),
    ),
    Fault(
        "split row abc,1",
        lambda d: rewrite_text(_split(d), lambda t: t.replace("\n", "\nabc,1\n", 1)),
        INGEST,
        ("testset.csv", "line 2, column SUBJECT_ID", "'abc'"),
    ),
    Fault(
        "split flag 2",
        lambda d: rewrite_text(_split(d), lambda t: t.replace(",0\n", ",2\n", 1)),
        INGEST,
        ("testset.csv", "column flag", "got '2'"),
    ),
    Fault(
        "split without test subjects",
        lambda d: rewrite_text(_split(d), lambda t: t.replace(",1\n", ",0\n")),
        INGEST,
        ("testset.csv", "no test subject"),
    ),
    Fault(
        "split row with three fields",
        lambda d: rewrite_text(_split(d), lambda t: t.replace(",0\n", ",0,7\n", 1)),
        INGEST,
        ("testset.csv", "expected 2 fields"),
    ),
    # PubMed
    Fault(
        "pubmed truncated gzip",
        lambda d: truncate(d / "pubmed" / "pubmed26n0001.xml.gz", 0.5),
        PARSE,
        ("pubmed26n0001.xml.gz", "truncated or corrupt gzip"),
        when="rios_parse",
    ),
    Fault(
        "pubmed malformed xml",
        lambda d: rewrite_text(d / "pubmed" / "pubmed26n0001.xml.gz", lambda t: t.replace("</PMID>", "</PMIX>", 2)),
        PARSE,
        ("pubmed26n0001.xml.gz", "malformed XML at line"),
        when="rios_parse",
    ),
    Fault(
        "pubmed non-integer pmid",
        lambda d: rewrite_text(d / "pubmed" / "pubmed26n0001.xml.gz", _pmid_not_a_number),
        PARSE,
        ("pubmed26n0001.xml.gz", "PMID 'not-a-pmid'"),
        when="rios_parse",
    ),
    Fault(
        "pubmed empty file",
        lambda d: (d / "pubmed" / "pubmed26n0001.xml.gz").write_bytes(gzip.compress(b"", mtime=0)),
        PARSE,
        ("pubmed26n0001.xml.gz",),
        when="rios_parse",
    ),
    # word vectors
    Fault(
        "vectors empty file",
        lambda d: (d / "word-vectors" / "general-w2v.bin").write_bytes(b""),
        WEAT,
        ("general-w2v.bin", "file is empty"),
    ),
    Fault(
        "vectors headerless text declared binary",
        vectors_headerless_text,
        WEAT,
        ("general-w2v.bin", "a text file without a header"),
    ),
    Fault(
        "vectors dimension too large in the header",
        lambda d: vectors_header(d, dimension_change=50),
        WEAT,
        ("general-w2v.bin", "the header declares"),
    ),
    Fault(
        "vectors count above the vectors present",
        lambda d: vectors_header(d, count_change=100),
        WEAT,
        ("general-w2v.bin", "the header declares"),
    ),
    Fault(
        "vectors count below the vectors present",
        vectors_one_more,
        WEAT,
        ("general-w2v.bin", "but the file holds more"),
        when="audit_weat",
    ),
    Fault(
        "vectors dimension too small in the header",
        lambda d: vectors_header(d, dimension_change=-3),
        WEAT,
        ("general-w2v.bin",),
        when="audit_weat",
    ),
    # config faults (the user's config file)
    Fault(
        "model name written twice",
        None,
        INGEST,
        ("real.yaml", "key 'scibert' is written twice"),
        config_text=lambda t: t.replace(
            "models:\n", "models:\n  scibert: {source: bert-base-uncased, kind: masked}\n", 1
        ),
    ),
    *[
        Fault(
            f"{key} zero",
            None,
            INGEST,
            (f"config key '{key}'", "got 0, expected a value >= 100"),
            edit_config=lambda c, k=key: _set(c, k, 0),
        )
        for key in ("rios.bootstrap", "mental.bootstrap", "plm.seat.bootstrap")
    ],
    Fault(
        "intermediate inside results",
        None,
        INGEST,
        ("config key 'intermediate'", "results"),
        edit_config=lambda c: c.__setitem__("intermediate", "results/text"),
    ),
    Fault(
        "plm label for an unknown model",
        None,
        INGEST,
        ("config key 'plm.labels.bert_basic'",),
        edit_config=lambda c: c["plm"].__setitem__("labels", {"bert_basic": "BERT"}),
    ),
    Fault(
        "mental label for an unknown embedding",
        None,
        INGEST,
        ("config key 'mental.labels.glove'",),
        edit_config=lambda c: c["mental"].__setitem__("labels", {"glove": "GloVe"}),
    ),
    Fault(
        "world Demo",
        None,
        INGEST,
        ("config key 'world'", "got 'Demo'"),
        edit_config=lambda c: c.__setitem__("world", "Demo"),
    ),
    Fault(
        "decades out of order",
        None,
        INGEST,
        ("config key 'rios.decades'", "is listed after"),
        edit_config=lambda c: c["rios"].__setitem__("decades", [[1970, 1979], [1960, 1969]]),
    ),
    Fault(
        "model source is a file",
        None,
        INGEST,
        ("config key 'models.scibert.source'", "is a file"),
        edit_config=lambda c: c["models"]["scibert"].__setitem__("source", c["plm"]["debias"]["dropout"]["corpus"]),
    ),
    Fault(
        "fill-in-the-blank template without its slot",
        None,
        INGEST,
        ("config key 'hurtful.fill_blank.templates.0'", "lacks the slot [RACE]"),
        edit_config=lambda c: c["hurtful"]["fill_blank"].__setitem__("templates", ["pt sent to [MASK] ."]),
    ),
]


def _set(config: dict, dotted: str, value) -> None:
    *parents, last = dotted.split(".")
    for key in parents:
        config = config[key]
    config[last] = value


def files_under(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()] if folder.exists() else []


@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
def test_a_faulty_input_stops_with_one_line_naming_it(synthetic_inputs, tmp_path, fault):
    config, data = real_world(synthetic_inputs, tmp_path)
    if fault.corrupt:
        fault.corrupt(data)
    if fault.edit_config:
        fault.edit_config(config)
    configfile = tmp_path / "real.yaml"
    text = yaml.safe_dump(config, sort_keys=False)
    configfile.write_text(fault.config_text(text) if fault.config_text else text)
    result = run_snakemake(["--cores", "2", fault.target, "--configfile", str(configfile)], tmp_path, timeout=600)
    terminal = result.stdout + result.stderr
    lines = [line for line in terminal.splitlines() if line.startswith("medbias:")]
    assert result.returncode != 0, terminal[-3000:]
    assert len(lines) == 1, terminal[-3000:]
    for name in fault.names:
        assert name in lines[0], lines[0]
    assert "Traceback (most recent call last)" not in terminal, terminal[-3000:]
    if fault.when == "before any job":  # found by the config check, before Snakemake schedules anything
        assert "Execute " not in terminal, terminal[-3000:]
    else:  # found by the first job that reads the file, and no other job ran
        assert re.findall(r"^(?:local)?rule (\w+):", terminal, re.M) == [fault.when], terminal[-3000:]
    # no partial output: nothing under results/ or the note-text folder, no half-written .part file
    assert files_under(tmp_path / "results") == [] and files_under(tmp_path / "intermediate") == []
    assert not list(tmp_path.rglob("*.part"))


def test_the_battery_covers_every_kind_of_input():
    """At least 30 corrupted files, spread over every kind of input file."""
    file_faults = [f for f in FAULTS if f.corrupt is not None]
    assert len(file_faults) >= 30
    kinds = {
        kind
        for f in file_faults
        for kind in (
            "PATIENTS",
            "ADMISSIONS",
            "ICUSTAYS",
            "DIAGNOSES_ICD",
            "NOTEEVENTS",
            "sofa",
            "oasis",
            "ACTdb102003",
            "testset",
            "pubmed",
            "w2v",
        )
        if any(kind in name for name in f.names)
    }
    assert len(kinds) == 11, kinds


# --- the field's benchmark files (CrowS-Pairs, StereoSet, May et al.'s SEAT tests) --------------------

RESOURCES = Path(__file__).resolve().parents[2] / "config" / "resources"


def _crows_rows(edit: Callable[[list[dict]], None]) -> Callable[[Path], tuple[str, Path]]:
    def make(folder: Path) -> tuple[str, Path]:
        with open(RESOURCES / "crows-pairs" / "crows_pairs_anonymized.csv", newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        edit(rows)
        path = folder / "crows_pairs.csv"
        with open(path, "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        return "crows_pairs", path

    return make


def _stereoset_lines(edit: Callable[[list[str]], None]) -> Callable[[Path], tuple[str, Path]]:
    def make(folder: Path) -> tuple[str, Path]:
        lines = (RESOURCES / "stereoset" / "dev.jsonl").read_text(encoding="utf-8").splitlines()
        edit(lines)
        path = folder / "dev.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return "stereoset", path

    return make


def _drop_unrelated(lines: list[str]) -> None:
    import json

    item = json.loads(lines[9])
    del item["unrelated"]
    lines[9] = json.dumps(item)


def _seat_without_attr2(folder: Path) -> tuple[str, Path]:
    import json

    copy = folder / "seat"
    shutil.copytree(RESOURCES / "seat-may2019", copy)
    test = json.loads((copy / "sent-weat6.jsonl").read_text())
    del test["attr2"]
    (copy / "sent-weat6.jsonl").write_text(json.dumps(test))
    return "seat_may2019", copy


BENCHMARK_FAULTS = {
    "CrowS-Pairs pair of identical sentences": (
        _crows_rows(lambda rows: rows[40].__setitem__("sent_less", rows[40]["sent_more"])),
        ("crows_pairs.csv", "row 42", "the same sentence"),
    ),
    "CrowS-Pairs empty sentence": (
        _crows_rows(lambda rows: rows[7].__setitem__("sent_more", "  ")),
        ("crows_pairs.csv", "row 9", "empty sentence"),
    ),
    "CrowS-Pairs without bias_type": (
        _crows_rows(lambda rows: [row.pop("bias_type") for row in rows]),
        ("crows_pairs.csv", "no column 'bias_type'"),
    ),
    "StereoSet example without its unrelated option": (
        _stereoset_lines(_drop_unrelated),
        ("dev.jsonl", "line 10", "'unrelated'"),
    ),
    "SEAT test without attr2": (_seat_without_attr2, ("sent-weat6.jsonl", "'attr2'")),
}


@pytest.mark.parametrize("case", list(BENCHMARK_FAULTS))
def test_a_faulty_benchmark_file_stops_before_any_job(synthetic_inputs, tmp_path, case):
    make, names = BENCHMARK_FAULTS[case]
    config, _ = real_world(synthetic_inputs, tmp_path)
    key, path = make(tmp_path)
    config["resources"][key] = str(path)
    stops_before_any_job_naming(config, tmp_path, names)


def stops_before_any_job_naming(config: dict, tmp_path: Path, names) -> None:
    """The first job's output asked for under ``config``: one ``medbias:`` line naming every one of
    ``names``, no traceback, no job started, nothing written."""
    configfile = write_config(tmp_path / "real.yaml", config)
    result = run_snakemake(["--cores", "2", INGEST, "--configfile", str(configfile)], tmp_path, timeout=600)
    terminal = result.stdout + result.stderr
    lines = [line for line in terminal.splitlines() if line.startswith("medbias:")]
    assert result.returncode != 0 and len(lines) == 1, terminal[-3000:]
    assert all(name in lines[0] for name in names), lines[0]
    assert "Traceback (most recent call last)" not in terminal and "Execute " not in terminal, terminal[-3000:]
    assert files_under(tmp_path / "results") == []


def _vignette_file(edit: Callable[[dict], None]) -> Callable[[Path, dict], str]:
    def make(folder: Path, config: dict) -> str:
        data = yaml.safe_load((RESOURCES / "vignettes" / "pain.yaml").read_text(encoding="utf-8"))
        edit(data)
        path = folder / "my_pain.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        config["vignettes"] = {"sets": {"my_pain": str(path)}}
        return str(path)

    return make


def _chat_entry_without_template(folder: Path, config: dict) -> str:
    import transformers

    from medbias.synth.tiny_models import train_byte_bpe

    model = folder / "my-chat-model"
    tokenizer = train_byte_bpe(["Would you offer her an opioid? Yes"] * 20, 300, add_bos_eos=False)
    tokenizer.save_pretrained(model)
    architecture = transformers.GPT2Config(vocab_size=len(tokenizer), n_embd=16, n_layer=1, n_head=2)
    transformers.GPT2LMHeadModel(architecture).save_pretrained(model)
    config["models"]["my_chat"] = {"source": str(model), "kind": "causal", "chat": True}
    return "models.my_chat"


VIGNETTE_FAULTS = {
    "a vignette whose slot no version fills": (
        _vignette_file(lambda d: d["vignettes"][3].__setitem__("text", d["vignettes"][3]["text"] + " {ethnicity}")),
        ("my_pain.yaml", "vignette chronic_cancer_liver", "slot {ethnicity}", "race=Black"),
    ),
    "an empty option": (
        _vignette_file(lambda d: d["decisions"]["dose"]["options"].update({" ": 2})),
        ("my_pain.yaml", "decision dose", "option ' ' is empty"),
    ),
    "a compared option that is not an option": (
        _vignette_file(lambda d: d["decisions"]["opioid"].__setitem__("compared", "Maybe")),
        ("my_pain.yaml", "decision opioid", "'Maybe'"),
    ),
    "a chat entry whose tokenizer has no chat template": (
        _chat_entry_without_template,
        ("models.my_chat", "chat: true", "no chat template"),
    ),
}


@pytest.mark.parametrize("case", list(VIGNETTE_FAULTS))
def test_a_faulty_vignette_file_or_chat_entry_stops_before_any_job(synthetic_inputs, tmp_path, case):
    make, names = VIGNETTE_FAULTS[case]
    config, _ = real_world(synthetic_inputs, tmp_path)
    make(tmp_path, config)
    stops_before_any_job_naming(config, tmp_path, names)


# --- settings that are valid alone but cannot work with the rest: the demo config's dry run stops -------

SETTING_FAULTS = {
    "feature layers deeper than the model": (
        lambda c: c["hurtful"]["downstream"].__setitem__("layers", [-40]),
        ("config key 'hurtful.downstream.layers'", "[-40]", "scibert"),
    ),
    "stride longer than the window": (
        lambda c: c.setdefault("mimic", {}).update(window=128, stride=200),
        ("config key 'mimic.stride'", "200", "mimic.window 128"),
    ),
    "GPUs that do not divide a batch": (
        lambda c: c["hurtful"]["pretrain"].__setitem__("gpus", 3),
        ("config key 'hurtful.pretrain.gpus'", "3 GPUs", "batch_size"),
    ),
    "an empty list in the word2vec grid": (
        lambda c: c["rios"]["word2vec"].__setitem__("grid", {"negative": [], "window": [2]}),
        ("config key 'rios.word2vec.grid.negative'",),
    ),
    "more direct-bias pairs than there are": (
        lambda c: c["mental"].setdefault("direct_bias", {}).__setitem__("min_pairs", 50),
        ("config key 'mental.direct_bias.min_pairs'", "50", "gender_pairs"),
    ),
    "age bands out of order": (
        lambda c: c["hurtful"].setdefault("intersections", {}).__setitem__("age_bands", [45, 18, 80, 65]),
        ("config key 'hurtful.intersections.age_bands'", "[45, 18, 80, 65]", "rise strictly"),
    ),
    "a repeated age band": (
        lambda c: c["hurtful"].setdefault("intersections", {}).__setitem__("age_bands", [18, 45, 45, 80]),
        ("config key 'hurtful.intersections.age_bands'", "45 follows 45"),
    ),
    "too few null draws for BH to flag any task": (
        lambda c: c["hurtful"].setdefault("intersections", {}).__setitem__("null_draws", 100),
        ("config key 'hurtful.intersections.null_draws'", "100", ">= 1139"),
    ),
    "more WikiText-2 paragraphs than the file holds": (
        lambda c: c["plm"].setdefault("benchmarks", {}).__setitem__("perplexity", {"wikitext_paragraphs": 5000}),
        ("config key 'plm.benchmarks.perplexity.wikitext_paragraphs'", "5000", "2,185 paragraphs"),
    ),
    "more control pairs than CrowS-Pairs holds": (
        lambda c: c["plm"].setdefault("benchmarks", {}).__setitem__("control_pairs", 2000),
        ("config key 'plm.benchmarks.control_pairs'", "2000", "1,508 pairs"),
    ),
    "no mitigation method": (
        lambda c: c["hurtful"].setdefault("mitigation", {}).__setitem__("methods", []),
        ("config key 'hurtful.mitigation.methods'",),
    ),
}


@pytest.mark.parametrize("case", list(SETTING_FAULTS))
def test_a_setting_that_cannot_work_stops_the_demo_dry_run(tmp_path, case):
    """``snakemake -n`` on the demo config with one impossible setting: one ``medbias:`` line naming
    the key, no traceback, no job planned (the demo's own tiny BERT's depth comes from its settings)."""
    edit, names = SETTING_FAULTS[case]
    config = wiring_config()
    edit(config)
    configfile = write_config(tmp_path / "config.yaml", config)
    result = run_snakemake(["-n", "--configfile", str(configfile)], tmp_path, timeout=600)
    terminal = result.stdout + result.stderr
    lines = [line for line in terminal.splitlines() if line.startswith("medbias:")]
    assert result.returncode != 0 and len(lines) == 1, terminal[-3000:]
    assert all(name in lines[0] for name in names), lines[0]
    assert "Traceback (most recent call last)" not in terminal and "Job stats" not in terminal, terminal[-3000:]


def test_an_annotated_note_missing_from_noteevents_is_named_on_the_terminal_and_in_table_ii(synthetic_inputs, tmp_path):
    """An annotation row whose ROW_ID is not in NOTEEVENTS is left out of the mental study, and the run
    says so: one ``medbias (note):`` line on the terminal and a note under Table II."""
    config, data = real_world(synthetic_inputs, tmp_path)
    annotations = data / "phenotype-annotations" / "ACTdb102003.csv"

    def add_orphan(rows: list[list[str]]) -> None:
        orphan = list(rows[-1])
        orphan[rows[0].index("ROW_ID")] = "987654321"
        rows.append(orphan)

    edit_rows(annotations, add_orphan)
    configfile = write_config(tmp_path / "real.yaml", config)
    result = run_snakemake(["--cores", "2", "results/mental/data.json", "--configfile", str(configfile)], tmp_path)
    terminal = result.stdout + result.stderr
    assert result.returncode == 0, terminal[-3000:]
    notes = [line for line in terminal.splitlines() if line.startswith("medbias (note): mental:")]
    assert len(notes) == 1 and "1 not in NOTEEVENTS (ROW_ID 987654321)" in notes[0], terminal[-3000:]
    table = (tmp_path / "results" / "mental" / "table2_split.md").read_text()
    assert "1 not in NOTEEVENTS (ROW_ID 987654321)" in table and "data.json" in table
