"""A real-world config over a fake MIMIC folder, for the config and dry-run tests."""

from __future__ import annotations

from pathlib import Path

from conftest import REPO

from medbias.io.formats import ACUITY_EXPORTS, ANNOTATION_COLUMNS, MIMIC_TABLES
from medbias.pipeline.config import enrol_registry_models, load_config


def tiny_word2vec(path: Path) -> Path:
    """Two 3-d word2vec binary vectors: a file whose header the config check can read."""
    path.write_bytes(b"2 3\n" + b"".join(word + b" " + bytes(12) + b"\n" for word in (b"he", b"she")))
    return path


def fake_real_config(tmp_path: Path) -> dict:
    """A real-world config over a fake MIMIC folder whose tables hold only their header rows (the annotations one
    row, the word vectors two: the config check reads those whole)."""
    # the schema's defaults filled in and the registry enrolled, as the Snakefile does before check_inputs
    config = enrol_registry_models(load_config(REPO / "config" / "mimic.yaml"))
    config["resources"] = {k: str(REPO / v) for k, v in config["resources"].items()}
    config["vignettes"]["sets"] = {
        k: str(REPO / v) if v.startswith("config/") else v for k, v in config["vignettes"]["sets"].items()
    }
    for key in ("templates", "attributes"):
        config["hurtful"]["logprob"][key] = str(REPO / config["hurtful"]["logprob"][key])
    mimic = tmp_path / "mimic"
    mimic.mkdir()
    for table, columns in MIMIC_TABLES.items():
        (mimic / f"{table}.csv").write_text(",".join(columns) + "\n")
    acuity = tmp_path / "acuity"
    acuity.mkdir()
    for name, columns in ACUITY_EXPORTS.items():
        (acuity / f"{name}.csv").write_text(",".join(columns) + "\n")
    one_annotation = ["1", "1", "1", "annotator"] + ["0"] * (len(ANNOTATION_COLUMNS) - 6) + ["1", "0"]  # NONE 1
    (tmp_path / "annotations.csv").write_text(",".join(ANNOTATION_COLUMNS) + "\n" + ",".join(one_annotation) + "\n")
    (tmp_path / "pubmed").mkdir()
    (tmp_path / "pubmed" / "pubmed26n0001.xml.gz").write_bytes(b"")
    for name in ("gn.bin", "bwv.bin"):
        tiny_word2vec(tmp_path / name)
    config["inputs"] = {
        "mimic_dir": str(mimic),
        "acuity_dir": str(acuity),
        "phenotype_annotations": str(tmp_path / "annotations.csv"),
        "pubmed_dir": str(tmp_path / "pubmed"),
        "benchmark_testset": str(REPO / "config/resources/mimic3-benchmarks/testset.csv"),
    }
    config["embeddings"]["googlenews"]["source"] = str(tmp_path / "gn.bin")
    config["embeddings"]["biowordvec"].update(source=str(tmp_path / "bwv.bin"), format="word2vec_binary")
    (tmp_path / "wikipedia.txt").write_text("a sentence\n")
    config["plm"]["debias"]["dropout"]["corpus"] = str(tmp_path / "wikipedia.txt")
    for benchmark in config["plm"]["downstream"]["data"]:
        (tmp_path / benchmark).mkdir()
        config["plm"]["downstream"]["data"][benchmark] = str(tmp_path / benchmark)
    return config
