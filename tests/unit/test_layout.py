"""The house rules of the code's layout (docs/layout.md): thin rule scripts, a rule layer that
imports no study, and library layers that import only the layers below them."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "workflow_scripts" / "medbias"
IMPORT = re.compile(r"^\s*(?:from|import)\s+medbias\.(\w+)", re.M)

# what each layer may import (its own modules included)
ALLOWED = {
    "core": {"core"},
    "io": {"core", "io"},
    "metrics": {"core", "io", "metrics"},
    "studies": {"core", "io", "metrics", "studies"},
    "synth": {"core", "io", "metrics", "studies", "synth"},
    "validation": {"core", "io", "metrics", "studies", "synth", "validation"},
    "pipeline": {"core", "io", "metrics", "studies", "synth", "validation", "pipeline"},
}


MAX_SCRIPT_STATEMENTS = 40


def script_statements(path: Path) -> int:
    """Statements of a script at every depth (the formatter's line breaks do not count)."""
    import ast

    return sum(isinstance(node, ast.stmt) for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))))


def test_rule_scripts_are_thin():
    """A rule script reads its inputs, calls the library and writes its outputs: at most 40 statements."""
    long = {
        p.name: n
        for p in sorted((ROOT / "workflow_scripts").glob("*.py"))
        if (n := script_statements(p)) > MAX_SCRIPT_STATEMENTS
    }
    assert long == {}


def test_the_thinness_check_counts_nested_statements(tmp_path):
    script = tmp_path / "script.py"
    script.write_text("import a\nfor x in a.b:\n    if x:\n        print(\n            x,\n        )\n")
    assert script_statements(script) == 4


def test_the_rule_files_import_no_study():
    imported = set()
    for path in [ROOT / "Snakefile", *sorted((ROOT / "rules").glob("*.smk"))]:
        imported |= set(re.findall(r"^\s*(?:from|import)\s+(medbias[\w.]*)", path.read_text(encoding="utf-8"), re.M))
    assert imported and not {m for m in imported if m.startswith(("medbias.studies", "medbias.validation"))}
    assert {m for m in imported if m.startswith("medbias.synth")} <= {"medbias.synth.sizes"}


def layer_imports(package: Path, layer: str) -> set[tuple[str, str]]:
    """(module, imported layer) for every medbias import under ``package/layer``."""
    return {
        (path.relative_to(package).as_posix(), target)
        for path in (package / layer).rglob("*.py")
        for target in IMPORT.findall(path.read_text(encoding="utf-8"))
    }


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_each_library_layer_imports_only_the_layers_below_it(layer):
    found = layer_imports(PACKAGE, layer)
    assert found, f"no medbias import found under {layer}/: the check would pass vacuously"
    assert {(path, target) for path, target in found if target not in ALLOWED[layer]} == set()


def test_the_layer_check_sees_an_import_upwards(tmp_path):
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "models.py").write_text(
        "from medbias.core.errors import X\n    from medbias.studies.plm.seat import Y\n"
    )
    found = layer_imports(tmp_path, "core")
    assert {(path, target) for path, target in found if target not in ALLOWED["core"]} == {
        ("core/models.py", "studies")
    }


def module_imports(package: Path) -> dict[str, set[str]]:
    """Module -> the medbias modules it imports, at any depth (an import inside a function counts): a
    ``from a.b import c`` imports ``a.b``, and ``a.b.c`` too where that is a module. A package is its
    ``__init__``; importing a submodule is not counted as importing its package."""
    import ast

    def name_of(path: Path) -> str:
        parts = path.relative_to(package.parent).with_suffix("").parts
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    modules = {name_of(path): path for path in package.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        imported = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                imported |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
        graph[name] = {target for target in imported if target in modules and target != name}
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm): each is a set of
    modules every one of which imports, through the others, every other."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while not component or component[-1] != module:
                component.append(stack.pop())
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return circles


def test_no_module_imports_itself_through_others():
    graph = module_imports(PACKAGE)
    assert sum(map(len, graph.values())) > 200, "the import graph looks empty: the check would pass vacuously"
    assert import_circles(graph) == []


def test_the_circle_check_sees_an_import_inside_a_function(tmp_path):
    package = tmp_path / "medbias"
    (package / "studies" / "mitigation").mkdir(parents=True)
    (package / "studies" / "classify.py").write_text(
        "def train():\n    from medbias.studies.mitigation.weights import w\n"
    )
    (package / "studies" / "mitigation" / "__init__.py").write_text("from medbias.studies.mitigation import weights\n")
    (package / "studies" / "mitigation" / "weights.py").write_text("from medbias.studies.classify import train\n")
    (package / "studies" / "plan.py").write_text("from medbias.studies.mitigation import weights\n")
    graph = module_imports(package)
    assert graph["medbias.studies.mitigation"] == {"medbias.studies.mitigation.weights"}
    assert import_circles(graph) == [["medbias.studies.classify", "medbias.studies.mitigation.weights"]]


def test_no_module_is_left_at_the_package_top():
    assert sorted(p.name for p in PACKAGE.glob("*.py")) == ["__init__.py"]
    assert sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__") == sorted(ALLOWED)


STUDY_IMPORT = re.compile(r"^\s*(?:from|import)\s+medbias\.(studies\.\w+|validation)", re.M)


def cross_study_imports(package: Path) -> set[tuple[str, str]]:
    """(module, imported package) for every import of another study or of validation under studies/."""
    found = set()
    for study in (p for p in (package / "studies").iterdir() if p.is_dir() and p.name != "__pycache__"):
        for path in study.rglob("*.py"):
            for target in STUDY_IMPORT.findall(path.read_text(encoding="utf-8")):
                if target != f"studies.{study.name}":
                    found.add((path.relative_to(package).as_posix(), target))
    return found


def test_no_study_imports_another_study_or_validation():
    assert cross_study_imports(PACKAGE) == set()


def test_the_study_check_sees_an_import_of_another_study(tmp_path):
    (tmp_path / "studies" / "audit").mkdir(parents=True)
    (tmp_path / "studies" / "audit" / "card.py").write_text(
        "from medbias.studies.audit.figures import A\n    from medbias.studies.hurtful.table3 import B\n"
        "from medbias.validation.decisions import C\n"
    )
    assert cross_study_imports(tmp_path) == {
        ("studies/audit/card.py", "studies.hurtful"),
        ("studies/audit/card.py", "validation"),
    }


def code_files() -> list[Path]:
    """The workflow's Python: rule scripts, the library and the user's scripts (not the tests)."""
    return sorted([*(ROOT / "workflow_scripts").rglob("*.py"), *(ROOT / "scripts").rglob("*.py")])


def test_only_core_models_loads_from_transformers_and_picks_the_device():
    """One door to transformers: every from_pretrained, and the choice of the job's device, is in core.models."""

    def files_with(text: str) -> set[str]:
        return {p.relative_to(ROOT).as_posix() for p in code_files() if text in p.read_text(encoding="utf-8")}

    assert files_with("from_pretrained(") == {"workflow_scripts/medbias/core/models.py"}
    assert files_with("cuda.is_available(") == {"workflow_scripts/medbias/core/models.py"}


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["lint", "format"])
def test_the_python_code_is_ruff_clean(command):
    """ruff's lint (pyflakes, pycodestyle, import order) and formatter, line length 120 (pyproject.toml),
    over the library, the rule scripts, the user's scripts and the tests."""
    import subprocess
    import sys

    ruff = Path(sys.executable).with_name("ruff")
    result = subprocess.run([str(ruff), *command, "."], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-1000:]


HISTORY = re.compile(r"shared/notes|\.\./shared/|\bissue #?\d+|\bstop #?\d+", re.IGNORECASE)


def test_code_and_docs_state_the_present():
    """No issue or stop numbers and no paths outside the repository in the code, rules, config and docs:
    they say what is true now and why (history is git's)."""
    files = [
        *code_files(),
        *(ROOT / "tests").rglob("*.py"),
        *(ROOT / "rules").glob("*.smk"),
        ROOT / "Snakefile",
        *(ROOT / "docs").glob("*.md"),
        ROOT / "README.md",
        *(ROOT / "config").glob("*.yaml"),
    ]
    found = {
        f"{path.relative_to(ROOT)}: {match.group(0)}"
        for path in files
        if path.name != "test_layout.py"
        for match in HISTORY.finditer(path.read_text(encoding="utf-8"))
    }
    assert found == set()
    assert HISTORY.search("as measured in Issue 17") and HISTORY.search("see ../shared/DESIGN.md")


# a result of a run, not a reason: counts of outcomes ("20 of 44 BH families"), run times ("41 minutes
# into the run"), speed-ups ("0.88x"), a model's score or a p-value, "measured on the demo world"
MEASURED = re.compile(
    r"\b\d+ of \d+\b"
    r"|\bminutes? in(?:to)?\b(?! all)"
    r"|\b\d+(?:\.\d+)?x\b"
    r"|\b(?:AUROC|AUPRC)(?: of| about| near)? 0\.\d"
    r"|\bp(?: =| of)? 0\.\d{2,}"
    r"|\bmeasured(?: on the demo world|: \d)"
)


def comments(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every comment, and for Python of every docstring, of a code or rule file."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        return [(n, line[line.index("#") :]) for n, line in enumerate(text.splitlines(), 1) if "#" in line]
    found = [
        (token.start[0], token.string)
        for token in tokenize.generate_tokens(io.StringIO(text).readline)
        if token.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if docstring := ast.get_docstring(node, clean=False):
                found.append((node.body[0].lineno, docstring))
    return found


def measured_comments(paths: list[Path]) -> set[str]:
    return {
        f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name}:{line}: {match.group(0)}"
        for path in paths
        for line, text in comments(path)
        for match in MEASURED.finditer(text)
    }


def test_comments_say_why_and_leave_measurements_to_the_docs():
    """A comment or docstring says why the code is as it is; what a run measured (counts of outcomes,
    times, speed-ups, scores, p-values) goes to the docs or the validation outputs, where it is dated."""
    files = [*code_files(), *(ROOT / "rules").glob("*.smk"), ROOT / "Snakefile"]
    assert len(files) > 100
    assert measured_comments(files) == set()


def test_the_comment_check_sees_a_lab_notebook(tmp_path):
    code = tmp_path / "fairness.py"
    code.write_text(
        '"""Gaps.\n\nOn the default demo run this makes 20 of 44 BH families reject."""\n'
        "X = 1  # stacking was slower (0.88x)\n"
        'def f():\n    """AUROC 0.59 near chance (measured on the demo world)."""\n'
        "NOTE = 'a string, not a comment: 3 of 4'\n"
    )
    rules = tmp_path / "common.smk"
    rules.write_text("# the note pipeline started 41 minutes into the run\nX = 1  # one of the two\n")
    assert measured_comments([code, rules]) == {
        "fairness.py:1: 20 of 44",
        "fairness.py:4: 0.88x",
        "fairness.py:6: AUROC 0.5",
        "fairness.py:6: measured on the demo world",
        "common.smk:1: minutes into",
    }


def test_the_workflow_and_its_scripts_import_nothing_from_the_tests():
    """The library, the rule scripts and the user's scripts run without the tests folder: what they
    share with the benchmarks lives in the library (``medbias.pipeline.cost_probes``)."""
    tests_modules = {p.stem for p in (ROOT / "tests").rglob("*.py")}
    found = set()
    for path in code_files():
        text = path.read_text(encoding="utf-8")
        if re.search(r"""sys\.path\.insert\(.*["']tests""", text):
            found.add(f"{path.relative_to(ROOT)}: puts tests/ on the path")
        for node in ast.walk(ast.parse(text)):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module]
                if isinstance(node, ast.ImportFrom) and node.module
                else []
            )
            found |= {f"{path.relative_to(ROOT)}: imports {n}" for n in names if n.split(".")[0] in tests_modules}
    assert found == set()


MAX_FUNCTION_LINES = 80


def long_functions(paths: list[Path]) -> set[str]:
    """Functions whose body (the docstring left out) spans more than ``MAX_FUNCTION_LINES`` lines and
    that have no ``# long: <why>`` comment on the line above their ``def`` (or its decorators)."""
    found = set()
    for path in paths:
        lines = path.read_text(encoding="utf-8").splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            body = node.body[1:] if ast.get_docstring(node) is not None else node.body
            if not body or node.end_lineno - body[0].lineno + 1 <= MAX_FUNCTION_LINES:
                continue
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            if not lines[first - 2].strip().startswith("# long: "):
                found.add(f"{path.name}:{node.name}")
    return found


def test_a_long_function_says_why_it_is_long():
    """No function of the library runs over about 80 lines without the reason written beside it."""
    assert long_functions(sorted((ROOT / "workflow_scripts" / "medbias").rglob("*.py"))) == set()


def test_the_length_check_reads_the_body_and_the_reason(tmp_path):
    body = "".join(f"    x{k} = {k}\n" for k in range(81))
    code = tmp_path / "module.py"
    code.write_text(
        f'def short():\n    """Doc."""\n{body[: -len("    x80 = 80") - 1]}\n\n'
        f"def long():\n{body}\n\n"
        f"# long: one draw after another in the world's order\n@property\ndef explained():\n{body}"
    )
    assert long_functions([code]) == {"module.py:long"}
