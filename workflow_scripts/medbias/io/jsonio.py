"""JSON output with stable formatting, so the same results give the same bytes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_json(path: str | Path, payload: Any, sort_keys: bool = True) -> None:
    """Write ``payload`` as indented JSON with a trailing newline; keys sorted unless their order means
    something (a config: the first group of a target set is the reference)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(payload, indent=2, sort_keys=sort_keys) + "\n", encoding="utf-8")


def read_json(path: str | Path) -> Any:
    return json.loads(Path(path).read_text(encoding="utf-8"))
