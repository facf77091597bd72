"""Library fingerprints: a rule goes stale when a module its script imports changes, not otherwise."""

from __future__ import annotations

from medbias.core.provenance import code_fingerprint, imported_modules


def _package(tmp_path):
    pkg = tmp_path / "medbias"
    (pkg / "metrics").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "metrics" / "__init__.py").write_text("")
    (pkg / "metrics" / "score.py").write_text("from medbias.errors import Bad\nVALUE = 1\n")
    (pkg / "errors.py").write_text("class Bad(Exception): ...\n")
    (pkg / "plots.py").write_text("X = 1\n")
    script = tmp_path / "rule.py"
    script.write_text("from medbias.metrics.score import VALUE\nfrom medbias import plots\n")
    return pkg, script


def test_follows_imports_transitively(tmp_path):
    pkg, script = _package(tmp_path)
    names = {p.relative_to(pkg).as_posix() for p in imported_modules(script, pkg)}
    assert names == {"metrics/score.py", "errors.py", "__init__.py", "plots.py"}


def test_fingerprint_changes_only_with_used_code(tmp_path):
    pkg, script = _package(tmp_path)
    before = code_fingerprint.__wrapped__(str(script), str(pkg))
    (pkg / "unrelated.py").write_text("Y = 2\n")
    assert code_fingerprint.__wrapped__(str(script), str(pkg)) == before
    (pkg / "errors.py").write_text("class Bad(ValueError): ...\n")  # a transitive dependency
    assert code_fingerprint.__wrapped__(str(script), str(pkg)) != before
