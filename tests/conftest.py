"""Shared fixtures: the repository, a runner for snakemake, and small demo-world configs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow_scripts"))

# the scale the tests build the demo world at (the default config uses 1.0)
TEST_SCALE = float(os.environ.get("MEDBIAS_TEST_SCALE", "0.4"))


def snakemake_bin() -> str:
    return str(Path(sys.executable).with_name("snakemake"))


def run_snakemake(args: list[str], workdir: Path, env: dict[str, str] | None = None,
                  timeout: int = 900) -> subprocess.CompletedProcess:
    """Run the workflow's Snakefile in ``workdir``; return the finished process (text output)."""
    cmd = [snakemake_bin(), "-s", str(REPO / "Snakefile"), "-d", str(workdir), *args]
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env, cwd=workdir)


def demo_config(scale: float = TEST_SCALE) -> dict:
    """The default demo config at ``scale``, with resource paths made absolute (runs in a tmp dir)."""
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config["demo"]["scale"] = scale
    # the rios study needs about 2,000 articles per decade to detect its planted effects
    # (shared/notes/demo-calibration.md), so PubMed keeps its full size at any test scale
    config["demo"]["pubmed_articles_per_decade"] = round(2000 / scale)
    config["resources"] = {k: str(REPO / v) for k, v in config["resources"].items()}
    return config


def write_config(path: Path, config: dict) -> Path:
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


@pytest.fixture(scope="session")
def demo_truth(demo_run) -> dict:
    """The truth file of the session's demo world (what the planted effects should produce)."""
    import json

    return json.loads((demo_run / "results" / "demo_world" / "truth.json").read_text())


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory) -> Path:
    """The whole default DAG on a small demo world, built once per test session.

    MEDBIAS_DEMO_RUN=<folder> reuses a finished run made with the test config instead (for checking
    the integration tests against a run you already have; CI never sets it)."""
    existing = os.environ.get("MEDBIAS_DEMO_RUN")
    if existing:
        return Path(existing)
    workdir = tmp_path_factory.mktemp("demo")
    configfile = write_config(workdir / "config.yaml", demo_config())
    result = run_snakemake(["--cores", "2", "--configfile", str(configfile)], workdir, timeout=4000)
    assert result.returncode == 0, result.stderr[-4000:]
    return workdir
