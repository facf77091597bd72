"""The test worlds' background builds end with the pytest session that started them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie, exited but not yet reaped, counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in state


def _session_with_a_world(folder: Path) -> None:
    """A pytest session whose one test uses the planted world, built by a stand-in that writes its pid, then sleeps."""
    stand_in = ["sh", "-c", f"echo $$ > {folder / 'build.pid'}; exec sleep 300"]
    (folder / "conftest.py").write_text(
        textwrap.dedent(
            f"""
            import importlib.util
            import pytest

            spec = importlib.util.spec_from_file_location("medbias_worlds", {str(CONFTEST)!r})
            worlds = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(worlds)
            worlds.snakemake_command = lambda arguments, workdir: {stand_in!r}
            pytest_collection_finish = worlds.pytest_collection_finish
            pytest_sessionfinish = worlds.pytest_sessionfinish


            @pytest.fixture
            def planted_study():
                return None
            """
        )
    )
    (folder / "test_waits.py").write_text(
        "import time\n\nPLANTED_TARGETS = ['rios']\n\n\ndef test_waits(planted_study):\n    time.sleep(120)\n"
    )


def test_a_terminated_session_stops_its_world_build(tmp_path):
    _session_with_a_world(tmp_path)
    environment = {key: value for key, value in os.environ.items() if key != "MEDBIAS_DEMO_RUN"}
    session = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path), str(tmp_path)],
        cwd=tmp_path,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    pid_file = tmp_path / "build.pid"
    deadline = time.time() + 60
    while not (pid_file.exists() and pid_file.read_text().strip()) and time.time() < deadline:
        time.sleep(0.2)
    build = int(pid_file.read_text())
    assert _alive(build)
    time.sleep(1)  # the session is in its test, past collection, when terminated
    session.send_signal(signal.SIGTERM)
    output, _ = session.communicate(timeout=60)
    deadline = time.time() + 10
    while _alive(build) and time.time() < deadline:
        time.sleep(0.2)
    still = _alive(build)
    if still:
        os.kill(build, signal.SIGKILL)
    assert not still, f"the world's build (pid {build}) outlived its terminated session:\n{output[-2000:]}"
    assert "KeyboardInterrupt" in output or "Interrupted" in output, output[-2000:]
