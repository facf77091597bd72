"""The default DAG on a small demo world: formats of the real inputs, and the truth file agrees with
the data it describes (planted effects found in the tables, controls show nothing)."""

from __future__ import annotations

import gzip
import json
import os
import re
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import REPO, run_snakemake

from medbias.core.models import load_model_and_tokenizer, resolve_model_source
from medbias.io.formats import ACUITY_EXPORTS, ANNOTATION_COLUMNS, MIMIC_TABLES
from medbias.pipeline.report import load_items

OUTPUTS_DOC = (REPO / "docs" / "outputs.md").read_text()
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$")


# what this module's tests read from each test world (built in one background run per world: conftest)
PLANTED_TARGETS = ("demo_world",)
WIRING_TARGETS = ("all",)


@pytest.fixture(scope="module")
def world(planted_study):
    return planted_study(*PLANTED_TARGETS) / "results" / "demo_world"


@pytest.fixture(scope="module")
def wiring_run(wiring_study):
    """The whole default DAG on the wiring world (what a user's second run, report and logs see)."""
    return wiring_study(*WIRING_TARGETS)


@pytest.fixture(scope="module")
def truth(world):
    return json.loads((world / "truth.json").read_text())


@pytest.fixture(scope="module")
def tables(world):
    return {
        t: pd.read_csv(
            world / "mimic-iii" / f"{t}.csv.gz", keep_default_na=False, na_values=[""], dtype={"ICD9_CODE": str}
        )
        for t in MIMIC_TABLES
    }


def test_tables_read_back_with_real_columns_and_types(tables):
    for name, frame in tables.items():
        assert tuple(frame.columns) == MIMIC_TABLES[name]
    patients, adm, icu = tables["PATIENTS"], tables["ADMISSIONS"], tables["ICUSTAYS"]
    assert set(patients["GENDER"]) == {"M", "F"}
    for frame, columns in ((patients, ["DOB"]), (adm, ["ADMITTIME", "DISCHTIME"]), (icu, ["INTIME", "OUTTIME"])):
        for column in columns:
            assert frame[column].map(lambda v: bool(TIMESTAMP.match(v))).all(), column
    assert pd.api.types.is_integer_dtype(adm["HADM_ID"]) and pd.api.types.is_float_dtype(icu["LOS"])
    assert {"Medicare", "Medicaid", "Private", "Government", "Self Pay"} == set(adm["INSURANCE"])
    assert {"WHITE", "BLACK/AFRICAN AMERICAN", "HISPANIC OR LATINO", "UNKNOWN/NOT SPECIFIED"} <= set(adm["ETHNICITY"])
    assert {"ENGL", "SPAN"} <= set(adm["LANGUAGE"].dropna()) and adm["LANGUAGE"].isna().any()
    assert (adm["DEATHTIME"].notna() == (adm["HOSPITAL_EXPIRE_FLAG"] == 1)).all()


def test_notes_have_the_real_quirks(tables):
    notes = tables["NOTEEVENTS"]
    assert {"Physician ", "Respiratory ", "Nursing/other", "Discharge summary"} <= set(notes["CATEGORY"])
    discharge = notes[notes["CATEGORY"] == "Discharge summary"]
    assert discharge["CHARTTIME"].isna().all() and discharge["CHARTDATE"].notna().all()
    assert (notes["ISERROR"] == 1).any()
    assert notes["HADM_ID"].isna().any()  # outpatient notes
    text = "\n".join(notes["TEXT"])
    for needle in ("Sex: F", "Sex: M", " she ", " he ", "[**Age over 90 **]", "[**Hospital1 18**]", " F HR "):
        assert needle in text, needle


def test_every_benchmark_phenotype_occurs_at_its_design_prevalence(tables, truth):
    """Counted here from the generated DIAGNOSES_ICD with the benchmark's HCUP CCS code lists (not
    from the generator's own accounting): the share of admissions with any of a phenotype's codes is
    within 4 binomial standard errors of its design prevalence, and the truth file reports that count."""
    import yaml

    hcup = yaml.safe_load((REPO / "config/resources/mimic3-benchmarks/hcup_ccs_2015_definitions.yaml").read_text())
    benchmark = {name: set(d["codes"]) for name, d in hcup.items() if d.get("use_in_benchmark")}
    assert len(benchmark) == 25 and set(truth["mimic"]["phenotypes"]) == set(benchmark)
    admissions = tables["ADMISSIONS"]["HADM_ID"]
    diagnoses = tables["DIAGNOSES_ICD"]
    for name, codes in benchmark.items():
        with_it = diagnoses.loc[diagnoses["ICD9_CODE"].isin(codes), "HADM_ID"].unique()
        counted = len(set(with_it) & set(admissions)) / len(admissions)
        design = truth["mimic"]["phenotypes"][name]["design_prevalence"]
        se = np.sqrt(design * (1 - design) / len(admissions))
        assert counted > 0 and abs(counted - design) < 4 * se + 1e-9, (name, counted, design)
        assert truth["mimic"]["phenotypes"][name]["realized_prevalence"] == pytest.approx(counted, abs=1e-4), name


def test_planted_conditions_lean_as_the_truth_says(tables, truth):
    """Among patients whose notes mention a planted condition, the male share is the planted one."""
    notes = tables["NOTEEVENTS"].merge(tables["PATIENTS"][["SUBJECT_ID", "GENDER"]], on="SUBJECT_ID")
    for entry in truth["mimic"]["planted_conditions"]:
        mentioned = notes[notes["TEXT"].str.contains(entry["phrase"], regex=False)]
        genders = mentioned.drop_duplicates("SUBJECT_ID")["GENDER"]
        assert len(genders) >= 0.8 * entry["carriers"], entry["name"]
        share = (genders == "M").mean()
        assert abs(share - entry["male_share"]) < 0.12, (entry["name"], share)
    leans = {e["lean"] for e in truth["mimic"]["planted_conditions"]}
    assert leans == {"male", "female", "none"}  # planted effects and controls


def test_acuity_testset_and_annotations(world, tables, truth):
    icu = tables["ICUSTAYS"]
    for name, columns in ACUITY_EXPORTS.items():
        frame = pd.read_csv(world / "mimic-code" / f"{name}.csv")
        assert tuple(frame.columns) == columns
        assert len(icu) - len(frame) == truth["mimic"]["missing_acuity_stays"][name]
        assert frame["icustay_id"].isin(icu["ICUSTAY_ID"]).all()
    testset = pd.read_csv(world / "mimic3-benchmarks" / "testset.csv", header=None, names=["SUBJECT_ID", "flag"])
    assert set(testset["SUBJECT_ID"]) == set(tables["PATIENTS"]["SUBJECT_ID"])
    assert testset["flag"].sum() == round(0.15 * len(testset))
    annotations = pd.read_csv(world / "phenotype-annotations" / "ACTdb102003.csv")
    assert tuple(annotations.columns) == ANNOTATION_COLUMNS
    assert annotations["ROW_ID"].isin(tables["NOTEEVENTS"]["ROW_ID"]).all()
    sizes = annotations.groupby("ROW_ID").size()
    assert sizes.min() >= 2 and (sizes == 2).any()
    assert annotations["ROW_ID"].nunique() == truth["phenotype_annotations"]["annotated_notes"]


def _parse_pubmed(folder: Path) -> tuple[dict[int, tuple[int | None, str]], dict[str, int]]:
    """A deliberately plain reading of the files, independent of the generator, to check the truth."""
    articles: dict[int, tuple[int | None, str]] = {}
    counts = {"book": 0, "deleted": 0}
    for path in sorted(folder.glob("pubmed*.xml.gz")):
        for _, element in ET.iterparse(gzip.open(path)):
            if element.tag == "PubmedArticle":
                pmid = int(element.findtext(".//PMID"))
                year = element.findtext(".//PubDate/Year") or (element.findtext(".//PubDate/MedlineDate") or "")[:4]
                text = " ".join(
                    "".join(e.itertext()) for e in element.iter() if e.tag in ("ArticleTitle", "AbstractText")
                )
                articles[pmid] = (int(year) if year.isdigit() else None, text)
            elif element.tag == "DeleteCitation":
                for pmid in element.findall("PMID"):
                    counts["deleted"] += articles.pop(int(pmid.text), None) is not None
            elif element.tag == "PubmedBookArticle":
                counts["book"] += 1
    return articles, counts


def test_pubmed_files_parse_and_agree_with_truth(world, truth):
    pubmed = truth["pubmed"]
    articles, counts = _parse_pubmed(world / "pubmed")
    assert counts["book"] == len(pubmed["book_articles"]) and counts["deleted"] == len(pubmed["deleted_pmids"])
    dated = {p: v for p, v in articles.items() if v[0] is not None}
    assert len(dated) == pubmed["articles_after_ingest"]
    assert set(pubmed["undated_pmids"]) == {p for p, v in articles.items() if v[0] is None}
    for pmid in pubmed["revised_pmids"]:
        assert pubmed["revised_marker"] in articles[pmid][1].split()[-1]
    male, female = set(pubmed["male_words"]), set(pubmed["female_words"])
    pair = pubmed["planted_pairs"][0]
    career = set(pair["a"])
    shares = []
    for decade in pubmed["decades"]:
        in_decade = [v[1].split() for p, v in dated.items() if decade["start"] <= v[0] <= decade["end"]]
        assert len(in_decade) >= decade["articles"]
        by_gender = {}
        for gender, words, other in (("m", male, female), ("f", female, male)):
            docs = [
                t
                for t in in_decade
                if words & set(t) and not other & set(t) and (set(pair["a"]) | set(pair["b"])) & set(t)
            ]
            by_gender[gender] = np.mean([bool(career & set(t)) and not set(pair["b"]) & set(t) for t in docs])
        shares.append(by_gender["m"] - by_gender["f"])
    # the planted strength falls by decade and is gone in the last one
    assert shares[0] > 0.3 and shares[0] > shares[2] > shares[4] - 0.05 and abs(shares[-1]) < 0.12


def test_tiny_models_and_vectors_load_with_the_real_loaders(world):
    from gensim.models import KeyedVectors

    for arch, kind in (("bert", "masked"), ("gpt2", "causal"), ("bart", "seq2seq")):
        folder = world / "models" / f"tiny-{arch}"
        model, tokenizer = load_model_and_tokenizer(resolve_model_source(arch, {"source": str(folder), "kind": kind}))
        assert len(tokenizer) <= 2000 and model.config.vocab_size == len(tokenizer)
    wordpiece = load_model_and_tokenizer(
        resolve_model_source("b", {"source": str(world / "models/tiny-bert"), "kind": "masked"})
    )[1]
    assert wordpiece.tokenize("she has sertraline") == ["she", "has", "sertraline"]
    for corpus in ("general", "bio"):
        vectors = KeyedVectors.load_word2vec_format(world / f"word-vectors/{corpus}-w2v.bin", binary=True)
        assert {"he", "she", "depression"} <= set(vectors.key_to_index)
    bio = KeyedVectors.load_word2vec_format(world / "word-vectors/bio-w2v.bin", binary=True)
    assert {"career", "family", "executive"} <= set(bio.key_to_index)


def test_manifest_and_report(wiring_run):
    manifest = json.loads((wiring_run / "results/inputs/manifest.json").read_text())
    assert manifest["world"] == "demo"
    assert all(entry["exists"] for entry in manifest["mimic_tables"].values())
    assert manifest["models"]["gpt2"]["kind"] == "causal" and manifest["models"]["gpt2"]["local"]
    # the resolved configuration: every default filled in, in order, and usable again as a config file
    from medbias.pipeline.config import enrol_registry_models, load_config

    recorded = json.loads((wiring_run / "results/inputs/config.json").read_text())
    assert recorded == enrol_registry_models(load_config(wiring_run / "config.yaml"))
    assert list(recorded["hurtful"]["logprob"]["target_sets"]["gender"]) == ["male", "female"]  # reference first
    assert load_config(wiring_run / "results/inputs/config.json") == recorded
    result = run_snakemake(["--report", "report.zip", "--configfile", "config.yaml"], wiring_run)
    assert result.returncode == 0, result.stderr[-3000:]
    names = zipfile.ZipFile(wiring_run / "report.zip").namelist()
    pages = load_items(REPO / "report" / "items.yaml", "demo")
    stored = sorted(Path(n).name for n in names if "/data/raw/" in n)  # the report stores pages by file name
    assert stored == sorted(f"{Path(page).name}.html" for page in pages)  # every paper table and figure
    page = (wiring_run / "results/report/hurtful/downstream/table4_gaps.html").read_text()
    assert "<table>" in page and "What the paper reported" in page and "13 recall (62% favouring male)" in page
    index = (
        zipfile.ZipFile(wiring_run / "report.zip").read(next(n for n in names if n.endswith("report.html"))).decode()
    )
    assert "reproduces four studies" in index  # the report: directive's workflow description


def test_second_run_has_nothing_to_do(wiring_run):
    result = run_snakemake(["-n", "--configfile", "config.yaml"], wiring_run)
    assert result.returncode == 0 and "Nothing to be done" in result.stdout + result.stderr


# one paper table per study, as the outputs page (docs/outputs.md) names them: what a user regenerates alone
SINGLE_TABLES = (
    "results/hurtful/downstream/table4_gaps.csv",
    "results/rios/fig1_weat.csv",
    "results/plm/table2_seat.csv",
)


@pytest.mark.parametrize("table", SINGLE_TABLES)
def test_one_table_is_regenerated_alone_and_byte_identical(wiring_run, table):
    """``snakemake <table>`` after the table was deleted runs the one job that writes it (its inputs are
    up to date) and writes the same bytes (the config's seeds: determinism). The job's other outputs get
    their earlier modification times back, so the rest of the world stays up to date for later tests."""
    assert f"`{table}" in OUTPUTS_DOC or f"`{table.rsplit('.', 1)[0]}" in OUTPUTS_DOC, (
        f"docs/outputs.md does not name {table}"
    )
    path = wiring_run / table
    before = path.read_bytes()
    times = {p: p.stat().st_mtime_ns for p in (wiring_run / "results").rglob("*") if p.is_file()}
    path.unlink()
    result = run_snakemake(["--cores", "2", "--configfile", "config.yaml", "--", table], wiring_run)
    assert result.returncode == 0, result.stderr[-3000:]
    jobs = re.search(r"^total\s+(\d+)$", result.stdout + result.stderr, re.M)
    assert jobs and int(jobs.group(1)) == 1, (result.stdout + result.stderr)[-3000:]
    assert path.read_bytes() == before
    for p, mtime in times.items():
        if p.stat().st_mtime_ns != mtime:
            os.utime(p, ns=(mtime, mtime))
    result = run_snakemake(["-n", "--configfile", "config.yaml"], wiring_run)
    assert "Nothing to be done" in result.stdout + result.stderr


# folders of the demo world that ARE the (synthetic) inputs, note text included by design
DEMO_INPUT_FOLDERS = {
    "mimic-iii",
    "mimic-code",
    "phenotype-annotations",
    "mimic3-benchmarks",
    "pubmed",
    "corpora",
    "models",
    "word-vectors",
    "truth",
}


def test_no_output_or_log_holds_a_run_of_eight_note_words(wiring_run):
    """Privacy rule: results (outside the demo inputs) and logs never contain note text."""
    notes = pd.read_csv(
        wiring_run / "results/demo_world/mimic-iii/NOTEEVENTS.csv.gz", keep_default_na=False, usecols=["TEXT"]
    )
    shingles = set()
    for text in notes["TEXT"]:
        words = text.lower().split()
        shingles.update(tuple(words[i : i + 8]) for i in range(len(words) - 7))
    assert len(shingles) > 1000
    scanned = 0
    for root in (wiring_run / "results", wiring_run / "logs"):
        for path in root.rglob("*"):
            rel = path.relative_to(wiring_run / "results") if root.name == "results" else None
            if (
                rel is not None
                and rel.parts[:1] == ("demo_world",)
                and len(rel.parts) > 2
                and rel.parts[1] in DEMO_INPUT_FOLDERS
            ):
                continue
            if not path.is_file() or path.suffix in (
                ".png",
                ".pdf",
                ".zip",
                ".gz",
                ".bin",
                ".safetensors",
                ".pt",
                ".pkl",
                ".joblib",
                ".npy",
            ):
                continue
            if path.suffix == ".parquet":
                frame = pd.read_parquet(path)
                text_columns = frame.select_dtypes(include=["object", "string"]).columns
                words = "\n".join(frame[c].dropna().astype(str).str.cat(sep="\n") for c in text_columns).lower().split()
            else:
                words = path.read_text(errors="replace").lower().split()
            leaked = [w for w in (tuple(words[i : i + 8]) for i in range(len(words) - 7)) if w in shingles]
            assert not leaked, f"{path} holds note text: {' '.join(leaked[0])}"
            scanned += 1
    assert scanned >= 5
