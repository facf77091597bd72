"""The workflow as users type it: lint, dry-runs on the real config, and bad input stopping early."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import REPO, demo_config, run_snakemake, snakemake_bin, write_config
from test_config_helpers import fake_real_config

pytestmark = pytest.mark.wiring


def test_lint_is_clean(tmp_path):
    result = run_snakemake(["--lint"], REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Congratulations, your workflow is in a good condition!" in result.stdout + result.stderr


def test_snakefmt_is_clean():
    import subprocess

    snakefmt = str(Path(snakemake_bin()).with_name("snakefmt"))
    result = subprocess.run([snakefmt, "--check", "Snakefile", "rules"], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_dry_run_on_real_config_lists_the_expected_jobs(tmp_path):
    configfile = write_config(tmp_path / "mimic.yaml", fake_real_config(tmp_path))
    result = run_snakemake(["-n", "--configfile", str(configfile)], tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout + result.stderr
    assert "rule input_manifest:" in out
    for rule in (
        "rios_ingest",
        "rios_word2vec",
        "rios_weat",
        "rios_ect",
        "rios_ripa",
        "rios_table3",
        "mimic_ingest",
        "mimic_tokenizer",
        "mimic_notes",
        "mimic_cohorts",
    ):
        assert f"rule {rule}:" in out, rule
    assert "synth_" not in out  # the real world never runs the demo generators
    assert not (tmp_path / "results").exists()


def test_demo_dry_run_lists_the_whole_demo_dag(tmp_path):
    configfile = write_config(tmp_path / "config.yaml", demo_config())
    result = run_snakemake(["-n", "--configfile", str(configfile)], tmp_path)
    out = result.stdout + result.stderr
    for rule in (
        "synth_mimic",
        "synth_pubmed",
        "synth_truth",
        "synth_tiny_model",
        "synth_word_vectors",
        "demo_world_summary",
        "input_manifest",
        "rios_ingest",
        "rios_word2vec",
        "rios_weat",
    ):
        assert f"rule {rule}:" in out, rule


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda c, t: c["demo"].__setitem__("scale", 0),
            "medbias: config key 'demo.scale': got 0, expected a value > 0",
        ),
        (
            lambda c, t: c["models"].__setitem__("mine", {"source": str(t / "nowhere"), "kind": "masked"}),
            "medbias: config key 'models.mine.source': local model folder",
        ),
        (lambda c, t: c["models"]["gpt2"].__setitem__("kind", "decoder"), "medbias: config key 'models.gpt2.kind'"),
    ],
)
def test_bad_demo_config_stops_with_one_line_and_no_outputs(tmp_path, edit, message):
    config = demo_config()
    edit(config, tmp_path)
    configfile = write_config(tmp_path / "config.yaml", config)
    result = run_snakemake(["--cores", "1", "--configfile", str(configfile)], tmp_path)
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.startswith("medbias:")]
    assert len(lines) == 1 and lines[0].startswith(message), result.stderr
    assert not (tmp_path / "results").exists() and not (tmp_path / "logs").exists()


def test_missing_mimic_column_stops_before_any_job(tmp_path):
    config = fake_real_config(tmp_path)
    notes = Path(config["inputs"]["mimic_dir"]) / "NOTEEVENTS.csv"
    notes.write_text(notes.read_text().replace(",TEXT", ""))
    configfile = write_config(tmp_path / "mimic.yaml", config)
    result = run_snakemake(["--cores", "1", "--configfile", str(configfile)], tmp_path)
    assert result.returncode != 0
    assert "medbias: " in result.stderr and "NOTEEVENTS.csv: missing column 'TEXT'" in result.stderr
    assert not (tmp_path / "results").exists()


def _ingest_jobs(output: str) -> dict[str, int]:
    """Job counts of the PubMed map and reduce rules in a dry run's job table."""
    return {rule: int(count) for rule, count in re.findall(r"^(rios_parse|rios_ingest)\s+(\d+)$", output, re.M)}


def test_a_changed_or_added_pubmed_file_reruns_its_own_parse_job_and_the_reduce_only(tmp_path):
    """PubMed as map and reduce: one parse job per file, one reduce. After a full ingest, a
    changed update file reruns its parse job and the reduce, not the other files' jobs; so does a new
    update file; and the new file's deletion reaches an article that another file's job parsed."""
    import gzip

    import pandas as pd
    from pubmed_helpers import article, write

    config = fake_real_config(tmp_path)
    folder = Path(config["inputs"]["pubmed_dir"])
    (folder / "pubmed26n0001.xml.gz").unlink()
    for number, pmid in ((1, 100), (2, 200), (3, 300)):
        write(
            folder / f"pubmed26n000{number}.xml.gz",
            article(pmid, "<Year>1985</Year>", f"article {pmid}")
            + article(pmid + 1, "<Year>1986</Year>", f"article {pmid + 1}"),
        )
    configfile = write_config(tmp_path / "mimic.yaml", config)
    until = ["--configfile", str(configfile), "--until", "rios_ingest", "--cores", "2"]
    first = run_snakemake(until, tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    assert _ingest_jobs(first.stdout + first.stderr) == {"rios_parse": 3, "rios_ingest": 1}
    corpus = tmp_path / "results" / "rios" / "corpus" / "1980-1989.parquet"
    assert pd.read_parquet(corpus)["pmid"].tolist() == [100, 101, 200, 201, 300, 301]

    # an unchanged file whose time stamp moved reruns nothing (Snakemake compares checksums)
    (folder / "pubmed26n0002.xml.gz").touch()
    assert _ingest_jobs(run_snakemake(["-n", *until], tmp_path).stdout) == {}

    # a changed file: its own parse job and the reduce
    write(folder / "pubmed26n0002.xml.gz", article(200, "<Year>1985</Year>", "article 200 revised"))
    dry = run_snakemake(["-n", *until], tmp_path)
    assert _ingest_jobs(dry.stdout + dry.stderr) == {"rios_parse": 1, "rios_ingest": 1}, dry.stdout[-3000:]
    assert "pubmed_file=pubmed26n0002" in dry.stdout

    # a new update file that deletes a baseline article: its parse job and the reduce
    (folder / "pubmed26n1400.xml.gz").write_bytes(
        gzip.compress(
            b'<?xml version="1.0"?>\n<PubmedArticleSet><DeleteCitation><PMID Version="1">101</PMID>'
            b"</DeleteCitation></PubmedArticleSet>\n"
        )
    )
    dry = run_snakemake(["-n", *until], tmp_path)
    assert _ingest_jobs(dry.stdout + dry.stderr) == {"rios_parse": 2, "rios_ingest": 1}  # 0002's still pending
    assert run_snakemake(until, tmp_path).returncode == 0
    assert pd.read_parquet(corpus)["pmid"].tolist() == [100, 200, 300, 301]  # 101 deleted, 201 gone with its file
