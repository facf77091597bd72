"""medbias.core.seeds: one config seed, each rule's seed from its name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from medbias.core.seeds import RULE_SEED_OFFSETS, rule_seed

RULES = Path(__file__).resolve().parents[2] / "rules"


def _seed_calls() -> list[tuple[str, str, str]]:
    """(file, enclosing rule, rule named in seed_for) for every seed_for call in the rule files."""
    calls = []
    for path in sorted(RULES.glob("*.smk")):
        rule = None
        for line in path.read_text(encoding="utf-8").splitlines():
            header = re.match(r"^rule (\w+):", line)
            if header:
                rule = header.group(1)
            for named in re.findall(r'seed_for\("(\w+)"\)', line):
                calls.append((path.name, rule, named))
    return calls


def test_every_rule_asks_for_its_own_seed_and_none_writes_a_number():
    calls = _seed_calls()
    assert len(calls) >= 25  # every rule that draws random numbers
    assert [(f, rule, named) for f, rule, named in calls if rule != named] == []
    literal = [
        (p.name, line.strip())
        for p in RULES.glob("*.smk")
        for line in p.read_text().splitlines()
        if re.search(r"\bseed=", line) and "seed_for(" not in line
    ]
    assert literal == []
    assert sorted({named for _, _, named in calls}) == sorted(RULE_SEED_OFFSETS)  # no stale table entry


def test_rule_seeds_are_the_calibrated_offsets_of_the_config_seed():
    assert rule_seed(1234, "synth_mimic") == 1234
    assert rule_seed(1234, "plm_evaluate") == 2054  # 1234 + 820, the seed the demo's SEAT rows were calibrated with
    assert rule_seed(7, "hurtful_pretrain") == 507
    with pytest.raises(KeyError, match="rule 'new_rule' has no seed offset"):
        rule_seed(1234, "new_rule")
