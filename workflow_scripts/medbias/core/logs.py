"""Logging for rule scripts: everything a script prints goes to the rule's ``log:`` file."""

from __future__ import annotations

import logging
import sys
from pathlib import Path


def setup_rule_logging(log_path: str | Path, name: str = "medbias") -> logging.Logger:
    """Send stdout, stderr (tqdm progress included) and a logger to ``log_path``; return the logger.

    A MedbiasInputError that ends the script is written as one ``medbias:`` line, without a traceback
    (``medbias.core.errors.report_input_errors``)."""
    from medbias.core.errors import report_input_errors

    Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    handle = open(log_path, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 - lives as long as the job
    sys.stdout = handle
    sys.stderr = handle
    logging.basicConfig(
        stream=handle, level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", force=True
    )
    report_input_errors()
    return logging.getLogger(name)


def progress_logger(log: logging.Logger, label: str, unit: str, every_seconds: float = 30.0):
    """A ``progress(done, total)`` callback for long loops: logs ``label: done/total unit (rate/s)`` at
    most every ``every_seconds`` and once at the end."""
    import time

    started, last = time.time(), [0.0]

    def progress(done: int, total: int) -> None:
        now = time.time()
        if now - last[0] > every_seconds or done == total:
            last[0] = now
            log.info("%s: %d/%d %s (%.1f %s/s)", label, done, total, unit, done / max(1e-9, now - started), unit)

    return progress


NOTE_PREFIX = "medbias (note): "


def note_for_user(message: str) -> None:
    """Write ``message`` to the job's log as one ``medbias (note):`` line, which the workflow prints on
    the terminal when the run ends (``medbias.pipeline.runs.note_lines``): for what a job left out of
    the user's data and the user should hear of without opening the log."""
    print(f"{NOTE_PREFIX}{message}", flush=True)
