"""The rules as the workflow's rule files declare them: each rule's file and its scheduling priority.
What reads the workflow from outside Snakemake (the scale planner) reads the rules here, so that a rule
added, renamed or moved to another file changes what it plans, with no list of its own to keep."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

RULE = re.compile(r"^(?:rule (\w+)|use rule (\w+) as (\w+) with):", re.M)
PRIORITY = re.compile(r"^\s+priority:\s*(\S+)", re.M)

# the study each rule file belongs to (the demo world's, the validation's and the report's have none)
STUDY_OF_FILE = {
    "mimic": "Zhang et al. (MIMIC-III)",
    "pretrain": "Zhang et al. (MIMIC-III)",
    "hurtful": "Zhang et al. (MIMIC-III)",
    "downstream": "Zhang et al. (MIMIC-III)",
    "rios": "Rios et al. (PubMed)",
    "mental": "Sogancioglu et al.",
    "plm": "Xie et al. (PLMs)",
    "vignettes": "Vignettes (chat models)",
    "audit": "Audit cards",
}


@dataclass(frozen=True)
class DeclaredRule:
    """A rule of ``rules/<file>.smk`` with its ``priority:`` as written (a constant's name or a number;
    None without one)."""

    name: str
    file: str
    priority: str | None

    @property
    def study(self) -> str | None:
        return STUDY_OF_FILE.get(self.file)


def declared_rules(rules_dir: str | Path) -> dict[str, DeclaredRule]:
    """Every rule of the ``*.smk`` files in ``rules_dir``, by name; a rule made by ``use rule A as B
    with:`` keeps A's priority unless its block sets one."""
    rules: dict[str, DeclaredRule] = {}
    derived: list[tuple[str, str, str, str | None]] = []
    for path in sorted(Path(rules_dir).glob("*.smk")):
        text = path.read_text(encoding="utf-8")
        starts = [m.start() for m in RULE.finditer(text)] + [len(text)]
        for start, end in zip(starts, starts[1:]):
            block = text[start:end]
            name, parent, alias = RULE.match(block).groups()
            priority = PRIORITY.search(block)
            priority = priority.group(1) if priority else None
            if name:
                rules[name] = DeclaredRule(name, path.stem, priority)
            else:
                derived.append((alias, parent, path.stem, priority))
    for alias, parent, file, priority in derived:
        rules[alias] = DeclaredRule(alias, file, priority or rules[parent].priority)
    return rules


def rule_of_row(label: str, rules: dict[str, DeclaredRule]) -> DeclaredRule:
    """The declared rule a plan row's label names (``hurtful_mitigate (reweighing)``: its first word);
    a rule that is not in the rule files is a ValueError naming it."""
    name = label.split(" ", 1)[0].strip("`")
    if name not in rules:
        raise ValueError(f"the plan names rule {name!r}, which no rule file declares")
    return rules[name]
