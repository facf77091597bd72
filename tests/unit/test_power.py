"""Power over fresh worlds (medbias.validation.power): constructed planted-recovery tables of three
world seeds with known counts, and the fresh-world config."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from medbias.core.errors import MedbiasInputError
from medbias.validation.power import (
    control_power,
    fresh_world_config,
    plant_power,
    power_page,
    read_recoveries,
)
from medbias.validation.recovery import RECOVERY_COLUMNS


def _recovery(found: list[bool], margins: list[float], flags: list[bool], weak: str = "planted") -> pd.DataFrame:
    """Two plants (a strong one, a weak one whose truth is ``weak``) and three controls: two in one BH
    family, one alone."""
    planted = pd.DataFrame(
        {
            "study": "hurtful",
            "effect": ["strong", "weak"],
            "truth": ["planted", weak],
            "criterion": "c",
            "recovered": found,
            "family": ["strong", "weak"],
            "margin_se": margins,
            "margin_lower_bound": [False, True],
            "margin_basis": "p",
        }
    )
    controls = pd.DataFrame(
        {
            "study": ["hurtful", "hurtful", "mental"],
            "effect": ["g1", "g2", "m1"],
            "truth": "control",
            "criterion": "n",
            "recovered": [not f for f in flags],
            "family": ["bh family", "bh family", "m1"],
            "margin_se": np.nan,
            "margin_lower_bound": False,
            "margin_basis": "",
        }
    )
    return pd.concat([planted, controls], ignore_index=True).reindex(columns=RECOVERY_COLUMNS)


def test_plants_and_control_families_are_counted_over_worlds():
    recoveries = {
        11: _recovery([True, True], [6.0, 0.5], [True, True, False]),
        12: _recovery([True, False], [5.0, -0.4], [False, False, False]),
        13: _recovery([True, True], [7.0, 1.5], [False, True, True], weak="below power"),
    }
    plants = plant_power(recoveries).set_index("effect")
    # one row per plant, counted where its truth was "planted" (2 of 3 worlds for the weak one)
    assert len(plants) == 2 and plants["counted_in"].to_dict() == {"strong": 3, "weak": 2}
    assert plants.loc["strong", ["found", "worlds", "median_margin_se", "smallest_margin_se"]].tolist() == [
        3,
        3,
        6.0,
        5.0,
    ]
    assert plants.loc["weak", ["found", "median_margin_se", "missed_in_seeds"]].tolist() == [2, 0.5, "12"]
    assert plants.loc["weak", "margin_lower_bound_somewhere"] and not plants.loc["weak", "accepts_a_null"]
    controls = control_power(recoveries).set_index("family")
    # the BH family is flagged in worlds 11 and 13 (two flags in 11 count once); m1 in 13
    assert controls.loc["bh family", "flagged"] == 2 and controls.loc["m1", "flagged"] == 1
    # hurtful: 2 of 3 family-worlds flagged; P(X >= 2), X ~ Binomial(3, 0.05) = 3 x 0.05^2 x 0.95 + 0.05^3
    assert controls.loc["bh family", "study_share_flagged"] == pytest.approx(2 / 3)
    assert controls.loc["bh family", "study_binomial_p"] == pytest.approx(3 * 0.05**2 * 0.95 + 0.05**3)
    page = power_page(plant_power(recoveries), control_power(recoveries), [11, 12, 13])
    assert "**1 of 1 planted effects found in every one of 3 fresh worlds**" in page
    assert "not counted there: weak (counted in 2, found in 2 of 3)" in page


def test_a_control_family_counts_only_in_the_worlds_where_it_was_a_counted_control():
    """A family reported apart in a world (its classifiers predict by the attribute: truth 'not a null')
    is neither flagged nor counted there: its study's share is over the family-worlds it counted in."""
    apart = _recovery([True, True], [6.0, 1.0], [True, True, False])
    apart.loc[apart["family"] == "bh family", "truth"] = "not a null"
    recoveries = {
        11: apart,
        12: _recovery([True, True], [5.0, 1.0], [True, False, False]),
        13: _recovery([True, True], [7.0, 1.5], [False, False, False]),
    }
    controls = control_power(recoveries).set_index("family")
    # the BH family: a control in worlds 12 and 13, flagged in 12 (its flags in 11 are not counted)
    assert controls.loc["bh family", ["worlds", "flagged"]].tolist() == [2, 1]
    assert controls.loc["m1", ["worlds", "flagged"]].tolist() == [3, 0]
    # hurtful: 1 of 2 counted family-worlds; P(X >= 1), X ~ Binomial(2, 0.05) = 1 - 0.95^2
    assert controls.loc["bh family", "study_share_flagged"] == pytest.approx(1 / 2)
    assert controls.loc["bh family", "study_binomial_p"] == pytest.approx(1 - 0.95**2)
    assert controls.loc["m1", "study_share_flagged"] == 0 and controls.loc["m1", "study_binomial_p"] == 1.0


def test_fresh_world_config_refuses_the_calibration_seed_on_paths_made_absolute(tmp_path):
    from medbias.pipeline.config import with_repo_paths

    config = {
        "seed": 1234,
        "resources": {"crows_pairs": "config/resources/crows.csv"},
        "vignettes": {"sets": {"demo": "config/resources/vignettes.yaml", "own": "/abs/set.yaml"}},
    }
    with pytest.raises(MedbiasInputError, match="seed 1234 is one the demo world was tuned on"):
        fresh_world_config(config, 1234)
    fresh = fresh_world_config(with_repo_paths(config, tmp_path), 2031)
    assert fresh["seed"] == 2031 and config["seed"] == 1234
    mental = fresh_world_config(config, 2032, studies=["mental"])
    assert mental["demo"]["validation"]["studies"] == ["mental"]
    assert "studies" not in config.get("demo", {}).get("validation", {})
    assert fresh["resources"]["crows_pairs"] == str(tmp_path / "config/resources/crows.csv")
    assert fresh["vignettes"]["sets"] == {
        "demo": str(tmp_path / "config/resources/vignettes.yaml"),
        "own": "/abs/set.yaml",
    }
    assert config["resources"]["crows_pairs"] == "config/resources/crows.csv"  # a copy: the given config unchanged
    assert with_repo_paths(fresh, tmp_path) == fresh  # absolute paths stay as they are


def test_read_recoveries_names_what_is_missing(tmp_path: Path):
    run = tmp_path / "seed7"
    with pytest.raises(MedbiasInputError, match="planted_recovery.csv is missing"):
        read_recoveries([run])
    (run / "results" / "validation").mkdir(parents=True)
    _recovery([True, True], [6.0, 0.5], [False] * 3).to_csv(run / "results" / "validation" / "planted_recovery.csv")
    with pytest.raises(MedbiasInputError, match="says which world seed"):
        read_recoveries([run])
    (run / "config.yaml").write_text(yaml.safe_dump({"seed": 7}))
    assert list(read_recoveries([run])) == [7]
