"""A manifest of the inputs a run used: which files (size, columns) and which models (hub or local).

Written once per results folder, so a table can be cited together with exactly what produced it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from medbias.core.models import resolve_model_source
from medbias.io.formats import ACUITY_EXPORTS, MIMIC_TABLES, find_table, read_header


def _file_entry(path: Path | None, has_header: bool = True) -> dict[str, Any]:
    if path is None or not path.exists():
        return {"path": None if path is None else str(path), "exists": False}
    entry: dict[str, Any] = {"path": str(path), "exists": True, "bytes": path.stat().st_size}
    if has_header and ".csv" in path.name:
        entry["columns"] = read_header(path)
    return entry


def input_manifest(config: dict[str, Any]) -> dict[str, Any]:
    """Describe every configured input: files with size and header, models with their resolution."""
    inputs = config["inputs"]
    pubmed = sorted(Path(inputs["pubmed_dir"]).glob("pubmed*.xml*"))
    return {
        "world": config["world"],
        "mimic_tables": {t: _file_entry(find_table(inputs["mimic_dir"], t)) for t in MIMIC_TABLES},
        "acuity_exports": {a: _file_entry(find_table(inputs["acuity_dir"], a)) for a in ACUITY_EXPORTS},
        "phenotype_annotations": _file_entry(Path(inputs["phenotype_annotations"])),
        "benchmark_testset": _file_entry(Path(inputs["benchmark_testset"]), has_header=False),
        "pubmed_files": [{"name": p.name, "bytes": p.stat().st_size} for p in pubmed],
        "embeddings": {n: embedding_manifest_entry(e) for n, e in config["embeddings"].items()},
        "models": {name: model_manifest_entry(name, entry) for name, entry in config["models"].items()},
    }


def embedding_manifest_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """A word-vector entry as the manifest records it: the registry fields and the file's size."""
    return {**entry, **_file_entry(Path(entry["source"]))}


def model_manifest_entry(name: str, entry: dict[str, Any]) -> dict[str, Any]:
    """A registry model as the manifest records it: how its source resolved (hub id or local folder)."""
    source = resolve_model_source(name, entry, allow_missing=True)
    return {
        "source": source.source,
        "kind": source.kind,
        "local": source.is_local,
        "dtype": source.dtype,
        "loader": source.loader,
    }
