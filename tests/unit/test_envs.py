"""The conda environments of `--sdm conda` hold what the scripts import, at the versions of the
pinned CPU stack. conda-forge is not reachable from the machines this suite runs on, so the
environments are not solved here; these checks stand in for it. (Snakemake's script preamble appends
the launching interpreter's sys.path, so a package missing from an environment would silently come
from the venv: only a check like this one finds the gap.)"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest
import yaml
from conftest import REPO

ENVS = sorted((REPO / "envs").glob("*.yaml"))
# import name -> distribution name, where they differ
DISTRIBUTION = {"sklearn": "scikit-learn", "yaml": "pyyaml", "markdown_it": "markdown-it-py"}
# needed by the workflow's own process, not by the scripts that run inside an environment
WORKFLOW_ONLY = {"snakemake", "snakemake-executor-plugin-slurm"}


def _pins(lines) -> dict[str, str]:
    pins = {}
    for line in lines:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)==([^+\s]+)(\+\w+)?", str(line).strip())
        if match:
            pins[match.group(1).lower()] = match.group(2)
    return pins


def _env_pins(path: Path) -> tuple[dict, dict[str, str]]:
    env = yaml.safe_load(path.read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    return env, _pins(pip)


def _requirements() -> dict[str, str]:
    return _pins((REPO / "requirements-cpu.txt").read_text().splitlines())


def _third_party_imports() -> dict[str, set[str]]:
    """Top-level modules imported anywhere in the rule scripts and the library -> the files."""
    found: dict[str, set[str]] = {}
    for path in (REPO / "workflow_scripts").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "medbias":
                    found.setdefault(top, set()).add(path.name)
    return found


def test_there_are_environments():
    assert {p.name for p in ENVS} == {"cpu.yaml", "gpu.yaml"}


@pytest.mark.parametrize("path", ENVS, ids=lambda p: p.name)
def test_environment_pins_the_requirements_versions(path):
    env, pins = _env_pins(path)
    assert "python=3.11" in env["dependencies"]
    expected = {name: version for name, version in _requirements().items() if name not in WORKFLOW_ONLY}
    assert pins == expected
    major, minor = map(int, pins["torch"].split(".")[:2])
    assert (major, minor) >= (2, 6), "transformers 5 needs torch 2.6 or later"


@pytest.mark.parametrize("path", ENVS, ids=lambda p: p.name)
def test_environment_holds_every_package_the_scripts_import(path):
    _, pins = _env_pins(path)
    missing = {
        module: sorted(files)
        for module, files in _third_party_imports().items()
        if DISTRIBUTION.get(module, module).lower() not in pins
    }
    assert not missing, f"{path.name} lacks packages imported by: {missing}"


def test_every_script_rule_names_an_environment():
    for smk in (REPO / "rules").glob("*.smk"):
        for block in re.split(r"\n(?=rule \w+:)", smk.read_text()):
            name = re.match(r"rule (\w+):", block.lstrip())
            if not name or "    script:" not in block:
                continue
            conda = re.search(r"    conda:\n\s+\"\.\./envs/(\w+)\.yaml\"", block)
            assert conda, f"{smk.name}: rule {name.group(1)} runs a script but names no conda environment"
            assert (REPO / "envs" / f"{conda.group(1)}.yaml").is_file(), name.group(1)
