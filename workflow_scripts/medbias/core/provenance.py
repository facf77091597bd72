"""Fingerprints of the library code a rule script runs, so that a change to that code makes the rule
stale (Snakemake tracks the script file itself, not the modules it imports) and changes the hash of
between-workflow cached outputs (which is computed from the rule's code and parameters)."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from pathlib import Path

_IMPORT = re.compile(r"^\s*(?:from\s+(medbias(?:\.\w+)*)\s+import\s+([\w ,()]+)|import\s+(medbias(?:\.\w+)*))", re.M)


def _module_file(package_root: Path, dotted: str) -> Path | None:
    parts = dotted.split(".")[1:]
    base = package_root.joinpath(*parts) if parts else package_root
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


def imported_modules(path: Path, package_root: Path) -> set[Path]:
    """The medbias module files that ``path`` imports, directly or through other medbias modules."""
    seen: set[Path] = set()
    stack = [path]
    while stack:
        current = stack.pop()
        for match in _IMPORT.finditer(current.read_text(encoding="utf-8")):
            dotted = match.group(1) or match.group(3)
            candidates = [dotted]
            if match.group(2):  # "from medbias.x import y": y may itself be a module
                candidates += [
                    f"{dotted}.{name.strip()}" for name in match.group(2).strip("() ").split(",") if name.strip()
                ]
            for name in candidates:
                module = _module_file(package_root, name)
                if module is not None and module not in seen:
                    seen.add(module)
                    stack.append(module)
    return seen


@lru_cache(maxsize=None)
def code_fingerprint(script: str, package_root: str) -> str:
    """SHA-256 (first 16 hex digits) over the contents of every medbias module the script uses."""
    root = Path(package_root)
    digest = hashlib.sha256()
    for module in sorted(imported_modules(Path(script), root)):
        digest.update(module.relative_to(root).as_posix().encode())
        digest.update(module.read_bytes())
    return digest.hexdigest()[:16]
