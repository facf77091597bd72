"""Notes of real length for the benchmarks (medbias.synth.note_lengths) and a site's measured length
table (medbias.io.note_lengths): lengths, shapes, proportions, the resource table, bad input."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from medbias.core.note_text import replace_placeholders, split_sentences
from medbias.io.formats import MIMIC_TABLES
from medbias.io.note_lengths import measure_note_lengths
from medbias.synth.note_lengths import STYLES, note_length_table, note_of_length, sample_notes

REPO = Path(__file__).resolve().parents[2]
LENGTHS = REPO / "config/resources/mimic-facts/note_lengths.tsv"


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("n_chars", [60, 1500, 40000])
def test_a_note_has_the_asked_length_within_a_word_and_splits_into_sentences(style, n_chars):
    text = note_of_length(np.random.default_rng(0), style, n_chars)
    assert n_chars - 40 <= len(text) <= n_chars
    sentences = split_sentences(replace_placeholders(text)[0])
    assert len(sentences) >= 1 and sum(map(len, sentences)) <= len(text)


def test_shapes_differ_as_real_notes_do():
    """Discharge summaries have section headers separated by blank lines, numbered lists or lab lines;
    ECG reports are short sentences; every shape carries de-identification placeholders."""
    rng = np.random.default_rng(3)
    discharge = note_of_length(rng, "discharge", 20000)
    assert "\n\n" in discharge and "Admission Date:" in discharge
    assert "BLOOD" in discharge or "\n1. " in discharge
    ecg_sentences = split_sentences(note_of_length(rng, "ecg", 3000))
    assert max(map(len, ecg_sentences)) < 100
    for style in STYLES:
        assert "[**" in note_of_length(rng, style, 3000)


def test_unknown_style_is_one_clear_error():
    with pytest.raises(ValueError, match="unknown note style 'poetry'"):
        note_of_length(np.random.default_rng(0), "poetry", 100)


def test_the_resource_table_matches_the_category_counts_and_the_published_total():
    """The counts are noteevents_categories.tsv's; the estimated means give about the published
    3.9 GB of note text over 2,083,180 notes."""
    table = note_length_table(LENGTHS)
    counts = pd.read_csv(
        REPO / "config/resources/mimic-facts/noteevents_categories.tsv", sep="\t", keep_default_na=False
    )
    assert table["category"].tolist() == counts["category"].tolist()
    assert table["notes"].tolist() == counts["count_mimic_iii_v1.4"].tolist()
    assert table["notes"].sum() == 2_083_180
    assert (table["notes"] * table["mean_chars"]).sum() / 1e9 == pytest.approx(3.9, abs=0.1)


def test_a_sample_follows_the_tables_proportions_and_mean_lengths():
    table = pd.DataFrame(
        {
            "category": ["Long", "Short"],
            "notes": [1000, 3000],
            "mean_chars": [8000, 500],
            "sigma_log": [0.3, 0.3],
            "style": ["discharge", "nursing"],
        }
    )
    notes = sample_notes(table, 4000, seed=1)
    share = notes["CATEGORY"].value_counts(normalize=True)
    assert share["Short"] == pytest.approx(0.75, abs=0.03)
    means = notes.groupby("CATEGORY")["TEXT"].apply(lambda t: t.str.len().mean())
    assert means["Long"] == pytest.approx(8000, rel=0.05) and means["Short"] == pytest.approx(500, rel=0.05)
    assert notes.equals(sample_notes(table, 4000, seed=1))  # seeded


def test_a_table_with_a_missing_column_or_unknown_style_is_named(tmp_path):
    path = tmp_path / "lengths.tsv"
    path.write_text("category\tnotes\tmean_chars\tstyle\nECG\t3\t200\tecg\n")
    with pytest.raises(ValueError, match=r"lengths.tsv: missing column\(s\) sigma_log"):
        note_length_table(path)
    path.write_text("category\tnotes\tmean_chars\tsigma_log\tstyle\nECG\t3\t200\t0.4\tpoetry\n")
    with pytest.raises(ValueError, match="column style: unknown style"):
        note_length_table(path)


def test_a_sites_length_table_is_measured_from_its_noteevents_without_text(tmp_path):
    """Hand-computed: two ECG notes of 10 and 1,000 characters (mean 505, log spread |ln 100| / 2),
    one discharge summary of 50; chunked reading gives the same table."""
    folder = tmp_path / "mimic"
    folder.mkdir()
    header = ",".join(MIMIC_TABLES["NOTEEVENTS"])
    rows = [
        f'1,10,100,2150-01-01,,,ECG,Report,,,"{"a" * 10}"',
        f'2,10,100,2150-01-01,,,Discharge summary,Report,,,"{"b" * 50}"',
        f'3,11,101,2150-01-01,,,ECG,Report,,,"{"c" * 999}\n"',
    ]
    with gzip.open(folder / "NOTEEVENTS.csv.gz", "wt") as handle:
        handle.write(header + "\n" + "\n".join(rows) + "\n")
    table = measure_note_lengths(folder, {"ECG": "ecg"}, chunk_size=2)
    assert table["category"].tolist() == ["ECG", "Discharge summary"]
    ecg = table.iloc[0]
    assert (ecg["notes"], ecg["mean_chars"], ecg["style"]) == (2, 505, "ecg")
    assert ecg["sigma_log"] == pytest.approx(np.log(100) / 2, abs=0.01)
    assert table.iloc[1]["style"] == "nursing" and table.iloc[1]["mean_chars"] == 50
    assert not any(table.astype(str).apply(lambda column: column.str.contains("aaa|bbb|ccc")).any())
    assert table.equals(measure_note_lengths(folder, {"ECG": "ecg"}, chunk_size=100))
