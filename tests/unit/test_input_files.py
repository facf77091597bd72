"""Input files read strictly: each fault named in one line (file, row, column), nothing dropped or
misread; the one-line report of a rule script; strict YAML; stale locks of a killed run; gzip bytes."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from medbias.core.errors import MedbiasInputError, reading
from medbias.io.formats import ANNOTATION_COLUMNS, read_header
from medbias.io.mimic import read_acuity_export, read_annotations, read_benchmark_split

# --- the benchmark test split ----------------------------------------------------------------------


def test_a_split_without_header_is_read_as_subject_and_flag(tmp_path):
    path = tmp_path / "testset.csv"
    path.write_text("10,0\n11,1\n12,1\n")
    split = read_benchmark_split(path)
    assert split["SUBJECT_ID"].tolist() == [10, 11, 12] and split["flag"].tolist() == [0, 1, 1]


def test_a_header_naming_subject_id_is_recognised_and_skipped(tmp_path):
    path = tmp_path / "testset.csv"
    path.write_text("SUBJECT_ID,flag\n10,0\n11,1\n")
    assert read_benchmark_split(path)["SUBJECT_ID"].tolist() == [10, 11]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "patient,flag\n10,0\n11,1\n",
            r"line 1, column SUBJECT_ID: expected an integer, got 'patient' \(a header line",
        ),
        ("10,0\nabc,1\n11,1\n", r"line 2, column SUBJECT_ID: expected an integer, got 'abc'$"),
        ("10,0\n11,2\n", r"line 2, column flag: expected 0 or 1 \(1 = test\), got '2'"),
        ("10,0\n11,1,3\n", r"line 2: expected 2 fields \(SUBJECT_ID,flag\), got 3"),
        ("10,0\n11,0\n", r"no test subject \(no row with flag 1\)"),
        ("10,1\n11,0\n10,0\n", r"line 3: SUBJECT_ID 10 is listed twice \(line 1\)"),
    ],
)
def test_a_faulty_split_stops_with_the_file_and_line(tmp_path, text, message):
    path = tmp_path / "testset.csv"
    path.write_text(text)
    with pytest.raises(MedbiasInputError, match=f"^{path}: {message}"):
        read_benchmark_split(path)


def test_a_task_without_test_stays_stops_naming_the_split(tmp_path):
    from medbias.studies.hurtful.cohorts import check_test_split

    catalogue = pd.DataFrame({"task": ["mortality", "sepsis"]})
    samples = pd.DataFrame({"task": ["mortality", "mortality", "sepsis"], "split": ["test", "train", "train"]})
    with pytest.raises(MedbiasInputError, match=r"^split.csv: task 'sepsis' has no test stays \(1 of 2 tasks"):
        check_test_split(samples, catalogue, "split.csv")
    check_test_split(samples.assign(split="test"), catalogue, "split.csv")  # every task tested: passes


# --- phenotype annotations -------------------------------------------------------------------------


def _annotations(tmp_path: Path, edit=None) -> Path:
    labels = ["0"] * (len(ANNOTATION_COLUMNS) - 4)
    rows = [["7", "70", "700", "ann_a", *labels], ["7", "70", "700", "ann_b", *labels]]
    rows[0][ANNOTATION_COLUMNS.index("DEPRESSION")] = "1"
    if edit:
        edit(rows)
    path = tmp_path / "annotations.csv"
    path.write_text("\n".join(",".join(r) for r in [list(ANNOTATION_COLUMNS), *rows]) + "\n")
    return path


def test_annotations_are_read_with_integer_labels(tmp_path):
    frame = read_annotations(_annotations(tmp_path))
    assert frame["DEPRESSION"].tolist() == [1, 0] and frame["ROW_ID"].dtype == np.int64


@pytest.mark.parametrize("value", ["2", "", "-1", "yes"])
def test_an_annotation_label_other_than_0_or_1_stops_with_file_row_and_column(tmp_path, value):
    column = ANNOTATION_COLUMNS.index("ALCOHOL.ABUSE")
    path = _annotations(tmp_path, lambda rows: rows[1].__setitem__(column, value))
    with pytest.raises(
        MedbiasInputError, match=rf"^{path}: row 2, column ALCOHOL.ABUSE: label '{value}' is not 0 or 1$"
    ):
        read_annotations(path)


def test_an_annotation_row_id_that_is_not_an_integer_stops(tmp_path):
    path = _annotations(tmp_path, lambda rows: rows[0].__setitem__(0, "7a"))
    with pytest.raises(MedbiasInputError, match=rf"^{path}: row 1, column ROW_ID: expected an integer, got '7a'"):
        read_annotations(path)


# --- acuity exports --------------------------------------------------------------------------------


def test_an_acuity_score_that_is_not_a_number_stops_and_an_empty_score_is_kept(tmp_path):
    (tmp_path / "sofa.csv").write_text("subject_id,hadm_id,icustay_id,sofa\n1,10,100,3\n2,20,200,\n")
    frame = read_acuity_export(tmp_path, "sofa")
    assert frame["sofa"].isna().tolist() == [False, True] and frame["icustay_id"].tolist() == [100, 200]
    (tmp_path / "sofa.csv").write_text("subject_id,hadm_id,icustay_id,sofa\n1,10,100,3\n2,20,2x0,4\n")
    with pytest.raises(MedbiasInputError, match=r"sofa.csv: row 2, column icustay_id: expected an integer, got '2x0'"):
        read_acuity_export(tmp_path, "sofa")


# --- readers' library errors become one line --------------------------------------------------------


def test_a_truncated_gzip_a_csv_cut_mid_row_and_a_bad_byte_name_the_file(tmp_path):
    whole = gzip.compress(b"a,b\n" + b"1,2\n" * 5000, mtime=0)
    truncated = tmp_path / "t.csv.gz"
    truncated.write_bytes(whole[: len(whole) // 2])
    cut = tmp_path / "cut.csv"
    cut.write_bytes(b'a,b\n1,"an open quote\n')
    latin = tmp_path / "latin.csv"
    latin.write_bytes(b"a,b\n1,caf\xe9\n")
    for path, message in (
        (truncated, "the file ends early"),
        (cut, "malformed CSV"),
        (latin, "a byte that is not utf-8"),
    ):
        with pytest.raises(MedbiasInputError, match=f"^{path}: .*{message}"):
            with reading(path):
                pd.read_csv(path)
    with pytest.raises(ZeroDivisionError):  # not an input fault: it keeps its traceback
        with reading(cut):
            1 / 0


def test_a_bad_byte_after_the_header_is_not_called_a_header_fault(tmp_path):
    path = tmp_path / "NOTEEVENTS.csv"
    path.write_bytes(b"ROW_ID,TEXT\n1,caf\xe9\n")
    assert read_header(path) == ["ROW_ID", "TEXT"]
    path.write_bytes(b"ROW_\xe9ID,TEXT\n")
    with pytest.raises(MedbiasInputError, match="the header row is not UTF-8"):
        read_header(path)


def test_notes_with_a_late_bad_byte_name_the_block_of_rows_being_read(tmp_path):
    from medbias.io.formats import MIMIC_TABLES
    from medbias.io.mimic import ingest_notes

    header = ",".join(MIMIC_TABLES["NOTEEVENTS"])
    row = '{i},1,2,2101-01-01,,,Nursing,Report,,,"text {i}"'
    body = (
        "\n".join(row.format(i=i) for i in range(1, 6)).encode() + b'\n6,1,2,2101-01-01,,,Nursing,Report,,,"caf\xe9"\n'
    )
    (tmp_path / "NOTEEVENTS.csv").write_bytes(header.encode() + b"\n" + body)
    output = tmp_path / "notes.parquet"
    with pytest.raises(
        MedbiasInputError,
        match=r"NOTEEVENTS.csv: a byte that is not utf-8 \(b'\\xe9'\); the file must be UTF-8 text \(in data "
        r"rows 5 to 6, the block being read\)",
    ):
        ingest_notes(tmp_path, output, ["Nursing"], chunk_size=2)
    assert not output.exists() and not Path(f"{output}.part").exists()


# --- word vectors ----------------------------------------------------------------------------------


def _word2vec_binary(path: Path, words: list[str], dimension: int, header: str | None = None) -> Path:
    rows = b"".join(w.encode() + b" " + np.arange(dimension, dtype=np.float32).tobytes() + b"\n" for w in words)
    path.write_bytes((header or f"{len(words)} {dimension}").encode() + b"\n" + rows)
    return path


def test_good_word2vec_files_load(tmp_path):
    from medbias.io.word_vectors import load_word_vectors

    vectors = load_word_vectors(_word2vec_binary(tmp_path / "v.bin", ["he", "she", "nurse"], 4), "word2vec_binary")
    assert vectors.index_to_key == ["he", "she", "nurse"] and vectors.vector_size == 4
    text = tmp_path / "v.txt"
    text.write_text("2 3\nhe 1 2 3\nshe 4 5 6\n")
    assert load_word_vectors(text, "word2vec_text").index_to_key == ["he", "she"]


def test_a_fasttext_binary_loads_with_its_subword_vectors(tmp_path):
    """A fastText .bin written by gensim reads back with the same vectors, and a word outside the
    vocabulary gets the vector its character n-grams give."""
    from gensim.models import FastText
    from gensim.models.fasttext import save_facebook_model

    from medbias.io.word_vectors import load_word_vectors

    sentences = [["the", "nurse", "said", "she", "was", "tired"], ["the", "surgeon", "said", "he", "was", "late"]] * 20
    model = FastText(sentences, vector_size=8, min_count=1, epochs=2, seed=1, workers=1)
    path = tmp_path / "model.bin"
    save_facebook_model(model, str(path))
    vectors = load_word_vectors(path, "fasttext_bin")
    assert set(vectors.index_to_key) == set(model.wv.index_to_key)
    assert np.allclose(vectors["nurse"], model.wv["nurse"], atol=1e-6)
    assert np.allclose(vectors["nurses"], model.wv["nurses"], atol=1e-5)


@pytest.mark.parametrize(
    ("make", "fmt", "message"),
    [
        (lambda p: p.write_bytes(b""), "word2vec_binary", "file is empty"),
        (
            lambda p: p.write_text("he 1 2 3\nshe 4 5 6\n"),
            "word2vec_binary",
            r"the first line must be '<count> <dimension>' .*a text file without a header",
        ),
        (
            lambda p: _word2vec_binary(p, ["he", "she"], 4, header="2 40"),
            "word2vec_binary",
            "the header declares 2 vectors of dimension 40, which need at least",
        ),
        (
            lambda p: _word2vec_binary(p, ["he", "she"], 4, header="9 4"),
            "word2vec_binary",
            "the header declares 9 vectors of dimension 4",
        ),
        (
            lambda p: _word2vec_binary(p, ["he", "she", "nurse"], 4, header="2 4"),
            "word2vec_binary",
            "the header declares 2 vectors but the file holds more",
        ),
        (lambda p: p.write_text("3 3\nhe 1 2 3\nshe 4 5 6\n"), "word2vec_text", "cannot read it as word2vec_text"),
        (lambda p: p.write_text("1 3\nhe 1 2 3\nshe 4 5 6\n"), "word2vec_text", "the header declares 1 vectors but"),
    ],
)
def test_faulty_word_vector_files_stop_with_one_line_naming_the_file(tmp_path, make, fmt, message):
    from medbias.io.word_vectors import load_word_vectors

    path = tmp_path / "vectors.bin"
    make(path)
    with pytest.raises(MedbiasInputError, match=f"^{path}: {message}"):
        load_word_vectors(path, fmt)


# --- strict YAML -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("models:\n  a: {source: x}\n  a: {source: y}\n", r"key 'a' is written twice in one mapping \(lines 2 and 3\)"),
        ("", "expected a mapping of keys at the top level, got an empty file"),
        ("- a\n- b\n", "expected a mapping of keys at the top level, got a list"),
        ("a: [1, 2\n", r"not valid YAML \(line"),
    ],
)
def test_a_config_file_with_a_repeated_key_or_no_mapping_stops_naming_the_file(tmp_path, text, message):
    from medbias.io.yamlfile import load_yaml

    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(MedbiasInputError, match=f"^{path}: {message}"):
        load_yaml(path)


# --- the rule script's one line --------------------------------------------------------------------


def test_a_rule_script_stopped_by_bad_input_writes_one_line_and_no_traceback(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(
        "from medbias.core.errors import MedbiasInputError, report_input_errors\n"
        "report_input_errors()\n"
        "raise MedbiasInputError('data.csv: row 3, column X: bad')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "workflow_scripts")}
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env)
    assert result.returncode == 1
    assert result.stderr == "medbias: data.csv: row 3, column X: bad\n"
    script.write_text("from medbias.core.errors import report_input_errors\nreport_input_errors()\n1 / 0\n")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env)
    assert result.returncode == 1 and "Traceback" in result.stderr  # a bug keeps its traceback


def test_the_fault_lines_of_this_run_are_the_last_of_each_log_written_since_it_started(tmp_path):
    import time

    from medbias.pipeline.runs import input_fault_lines

    old, new, twice, clean = (tmp_path / f"{n}.log" for n in ("old", "new", "twice", "clean"))
    old.write_text("medbias: old.csv: from another run\n")
    os.utime(old, (time.time() - 100, time.time() - 100))
    new.write_text("INFO reading\nmedbias: a.csv: row 1, column X: bad\n")
    twice.write_text("medbias: a.csv: row 1, column X: bad\n")
    clean.write_text("INFO done\n")
    assert input_fault_lines([old, new, twice, clean], since=time.time() - 10) == [
        "medbias: a.csv: row 1, column X: bad"
    ]


def test_the_notes_of_this_run_are_every_note_line_of_the_logs_written_since_it_started(tmp_path):
    import time

    from medbias.pipeline.runs import note_lines
    from medbias.studies.mental.labels import JoinReport

    report = JoinReport(annotated_notes=10, joined=7, missing_note=(5, 9), subject_mismatch=(), missing_gender=(3,))
    assert report.left_out() == (
        "3 of 10 annotated notes are left out: 2 not in NOTEEVENTS (ROW_ID 5, 9); "
        "1 of a patient without an M or F gender (ROW_ID 3)"
    )
    assert JoinReport(4, 4, (), (), ()).left_out() is None
    assert JoinReport(4, 4, (), (), ()).table_note() == "All 4 annotated notes joined their note text and patient."
    old, new, other = (tmp_path / f"{n}.log" for n in ("old", "new", "other"))
    old.write_text("medbias (note): from another run\n")
    os.utime(old, (time.time() - 100, time.time() - 100))
    new.write_text(f"INFO joined\nmedbias (note): mental: {report.left_out()}\nINFO done\n")
    other.write_text("medbias (note): second\nmedbias (note): second\n")
    assert note_lines([old, new, other], since=time.time() - 10) == [
        f"medbias (note): mental: {report.left_out()}",
        "medbias (note): second",
    ]


# --- locks of a killed run -------------------------------------------------------------------------


def test_locks_of_a_dead_run_are_released_and_a_living_runs_are_kept(tmp_path):
    from medbias.pipeline.runs import forget_run, record_run, release_stale_locks

    locks = tmp_path / "locks"
    locks.mkdir()
    (locks / "0.input.lock").write_text("a\n")
    assert release_stale_locks(tmp_path) is None  # a lock without a record: Snakemake's own message
    record_run(tmp_path)  # this process: alive
    assert release_stale_locks(tmp_path) is None and (locks / "0.input.lock").exists()
    forget_run(tmp_path)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    record_run(tmp_path, dead.pid)
    notice = release_stale_locks(tmp_path)
    assert notice is not None and f"process {dead.pid}" in notice
    assert not list(locks.glob("*.lock")) and not list((tmp_path / "medbias-runs").glob("*.json"))
    # a killed run whose jobs went to SLURM: they may still run, so the lock stays and the line says so
    (locks / "0.input.lock").write_text("a\n")
    record_run(tmp_path, dead.pid, executor="slurm", remote=True)
    notice = release_stale_locks(tmp_path)
    assert "ran on slurm, where they may still be running" in notice and (locks / "0.input.lock").exists()


# --- same config, same bytes -----------------------------------------------------------------------


def test_gzip_files_written_twice_are_byte_identical(tmp_path):
    import time

    from medbias.io.gzipped import write_gzip_lines

    first, second = tmp_path / "first" / "corpus.txt.gz", tmp_path / "second" / "corpus.txt.gz"
    for path in (first, second):
        path.parent.mkdir()
        write_gzip_lines(path, ["one", "two"])
        time.sleep(1.1)  # gzip's header time has one-second resolution
    assert first.read_bytes() == second.read_bytes()
    assert gzip.decompress(first.read_bytes()) == b"one\ntwo\n"
