"""The rules as the rule files declare them (medbias.pipeline.workflow_rules), which the scale planner
reads instead of a list of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from medbias.pipeline.workflow_rules import declared_rules, rule_of_row

REPO = Path(__file__).resolve().parents[2]


def test_rules_their_files_and_priorities_by_hand(tmp_path):
    (tmp_path / "mimic.smk").write_text(
        "rule mimic_notes:\n    input: 'a'\n    priority: CRITICAL_PATH_PRIORITY\n    threads: 4\n\n\n"
        "rule mimic_cohorts:\n    output: 'b'\n"
    )
    (tmp_path / "downstream.smk").write_text(
        "use rule mimic_notes as notes_again with:\n    output: 'c'\n\n\n"
        "use rule mimic_notes as notes_later with:\n    priority: 1\n\n\n"
        "rule hurtful_gaps:\n    priority: EARLY_PRIORITY\n"
    )
    rules = declared_rules(tmp_path)
    assert {name: (r.file, r.priority) for name, r in rules.items()} == {
        "mimic_notes": ("mimic", "CRITICAL_PATH_PRIORITY"),
        "mimic_cohorts": ("mimic", None),
        "notes_again": ("downstream", "CRITICAL_PATH_PRIORITY"),  # a used rule keeps its parent's
        "notes_later": ("downstream", "1"),
        "hurtful_gaps": ("downstream", "EARLY_PRIORITY"),
    }
    assert rules["hurtful_gaps"].study == "Zhang et al. (MIMIC-III)"
    assert rule_of_row("hurtful_gaps (+ replicates)", rules).name == "hurtful_gaps"
    with pytest.raises(ValueError, match="rule 'hurtful_probe', which no rule file declares"):
        rule_of_row("hurtful_probe", rules)


def test_the_workflows_own_rules():
    rules = declared_rules(REPO / "rules")
    assert len(rules) > 80
    critical = {name for name, rule in rules.items() if rule.priority == "CRITICAL_PATH_PRIORITY"}
    assert {"mimic_notes", "hurtful_pretrain"} <= critical
    assert rules["hurtful_classify_replicate"].file == "downstream" and rules["rios_word2vec"].study
