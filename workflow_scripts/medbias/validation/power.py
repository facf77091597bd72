"""Power of the demo world's verdict on fresh worlds: the planted recovery (``planted_recovery.csv``)
of runs that differ only in the config's ``seed`` (the world's seed, from which every rule's seed
derives: ``medbias.core.seeds``), gathered per planted effect (found in k of K worlds, the median
and smallest margin) and per control family (flagged in k of K, against what chance allows).

A seed the world was tuned on is not a fresh world: ``fresh_world_config`` refuses it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from medbias.core.errors import MedbiasInputError
from medbias.validation.recovery import ACCEPTS_A_NULL
from medbias.validation.truth import BELOW_POWER

CALIBRATION_SEEDS: tuple[int, ...] = (1234, 2027, 2028, 2029, 2030)
"""World seeds the demo world was tuned on: its sizes, recipes and rule seed offsets on the default
``seed`` (1234); the mental study's label-bias plant and its removal test on the fresh worlds that
showed the earlier design's misses (2027 to 2030), so those are no longer fresh for it."""

RECOVERY_KEYS = ["study", "effect", "criterion"]


def fresh_world_config(config: Mapping[str, Any], seed: int, studies: Sequence[str] | None = None) -> dict[str, Any]:
    """The demo ``config`` (as ``load_config`` resolves it) for a fresh world of ``seed``, its planted
    recovery limited to ``studies`` when given (``demo.validation.studies``: the run builds only what
    those studies need). Refuses a seed of ``CALIBRATION_SEEDS``."""
    if seed in CALIBRATION_SEEDS:
        raise MedbiasInputError(
            f"power: seed {seed} is one the demo world was tuned on "
            f"({', '.join(map(str, CALIBRATION_SEEDS))}); choose seeds nobody tuned on"
        )
    fresh = {**config, "seed": int(seed)}
    if studies:
        demo = dict(fresh.get("demo", {}))
        demo["validation"] = {**demo.get("validation", {}), "studies": list(studies)}
        fresh["demo"] = demo
    return fresh


def read_recoveries(folders: Sequence[Path]) -> dict[int, pd.DataFrame]:
    """Each run folder's ``results/validation/planted_recovery.csv`` keyed by its world seed: the
    ``seed`` of the folder's ``config.yaml`` (a run made by ``scripts/power_runs.py`` or a test
    world), else of the ``results/inputs/config.json`` the run recorded. One line naming the file
    when the table or the seed is missing."""
    import json

    import yaml

    recoveries: dict[int, pd.DataFrame] = {}
    for folder in map(Path, folders):
        csv = folder / "results" / "validation" / "planted_recovery.csv"
        if not csv.is_file():
            raise MedbiasInputError(f"power: {csv} is missing (has the run in {folder} finished?)")
        written, recorded = folder / "config.yaml", folder / "results" / "inputs" / "config.json"
        source = written if written.is_file() else recorded
        if not source.is_file():
            raise MedbiasInputError(f"power: neither {written} nor {recorded} says which world seed {folder} ran")
        config = yaml.safe_load(source.read_text()) if source == written else json.loads(source.read_text())
        if "seed" not in config:
            raise MedbiasInputError(f"power: {source} has no key 'seed'")
        seed = int(config["seed"])
        if seed in recoveries:
            raise MedbiasInputError(f"power: two runs of world seed {seed} ({folder})")
        recoveries[seed] = pd.read_csv(csv)
    return recoveries


def plant_power(recoveries: Mapping[int, pd.DataFrame]) -> pd.DataFrame:
    """Per planted effect (study, effect, criterion; the rows known to lack power too) over the K
    worlds: in how many it counted in the verdict (``counted_in``: its truth was "planted", not
    ``BELOW_POWER``, which for an equivalence test depends on that world's standard error), found in k
    of K (``found``, ``worlds``), the median and smallest margin in standard errors over the worlds
    where it has one, whether a margin was only a lower bound in some world, and the seeds that missed
    it. A plant absent from some world's table counts as a miss there."""
    seeds = sorted(recoveries)
    frames = [recoveries[s][recoveries[s]["truth"].isin(["planted", BELOW_POWER])].assign(seed=s) for s in seeds]
    stacked = pd.concat(frames, ignore_index=True)
    rows = []
    for key, part in stacked.groupby(RECOVERY_KEYS, sort=False):
        found = part["recovered"].astype(bool)
        margins = part["margin_se"].to_numpy(dtype=float)
        finite = margins[~np.isnan(margins)]
        missed = [s for s in seeds if s not in set(part.loc[found, "seed"])]
        rows.append(
            {
                **dict(zip(RECOVERY_KEYS, key)),
                "worlds": len(seeds),
                "counted_in": int((part["truth"] == "planted").sum()),
                "found": int(found.sum()),
                "median_margin_se": float(np.median(finite)) if len(finite) else float("nan"),
                "smallest_margin_se": float(finite.min()) if len(finite) else float("nan"),
                "margin_lower_bound_somewhere": bool(part["margin_lower_bound"].astype(bool).any()),
                "accepts_a_null": bool(part["margin_basis"].astype(str).str.startswith(ACCEPTS_A_NULL).all()),
                "missed_in_seeds": " ".join(map(str, missed)),
            }
        )
    return pd.DataFrame(rows)


def control_power(recoveries: Mapping[int, pd.DataFrame], level: float = 0.05) -> pd.DataFrame:
    """Per study and control family over the K worlds: in how many it was a counted control
    (``worlds``: a family whose rows are reported apart in a world, as no null of their test, is not
    counted there) and flagged in k of them (a family is flagged in a world when any of its controls
    is), and per study the share of counted family-worlds flagged with the one-sided binomial p of
    seeing that many at ``level`` (``study_binomial_p``; the family's own count is within chance when
    k / K is at most about ``level``, which at K = 5 allows no flag)."""
    from scipy.stats import binom

    per_world = []
    for s in sorted(recoveries):
        controls = recoveries[s][recoveries[s]["truth"] == "control"]
        any_flag = (~controls["recovered"].astype(bool)).groupby([controls["study"], controls["family"]], sort=False)
        per_world.append(any_flag.any().rename(s))
    flagged = pd.concat(per_world, axis=1)  # NaN: the family was no counted control in that world
    table = pd.DataFrame(
        {"worlds": flagged.notna().sum(axis=1).astype(int), "flagged": flagged.fillna(False).astype(bool).sum(axis=1)},
        index=flagged.index,
    ).reset_index()
    table.columns = ["study", "family", "worlds", "flagged"]
    table["flagged"] = table["flagged"].astype(int)
    by_study = table.groupby("study")[["flagged", "worlds"]].sum()
    table["study_share_flagged"] = table["study"].map(by_study["flagged"] / by_study["worlds"])
    table["study_binomial_p"] = table["study"].map(
        {
            study: float(binom.sf(row["flagged"] - 1, row["worlds"], level)) if row["flagged"] else 1.0
            for study, row in by_study.iterrows()
        }
    )
    return table


def power_page(plants: pd.DataFrame, controls: pd.DataFrame, seeds: Sequence[int], below: float = 5.0) -> str:
    """power.md: the plants found in fewer than all K worlds and those whose median margin is under
    ``below`` standard errors (the marginal ones), then the control families flagged in any world with
    each study's share against the 5% level; every row of both tables in power_plants.csv and
    power_controls.csv."""
    from medbias.io.tables import PaperPage, Section, page_markdown

    k = len(seeds)
    every = plants["found"] == plants["worlds"]
    marginal = plants[~every | ~(plants["median_margin_se"] >= below)]
    counted = plants["counted_in"] == plants["worlds"]
    studies = controls.drop_duplicates("study")[["study", "study_share_flagged", "study_binomial_p"]]
    summary = (
        f"**{int((every & counted).sum())} of {int(counted.sum())} planted effects found in every one of {k} fresh "
        f"worlds** (world seeds {', '.join(map(str, seeds))}); missed somewhere: "
        + ("; ".join(f"{r.effect} ({r.found} of {r.worlds})" for r in plants[~every & counted].itertuples()) or "none")
        + f". Control families flagged in any world: {int((controls['flagged'] > 0).sum())} of {len(controls)}."
    )
    if (~counted).any():
        summary += " Known to lack power in some or every world, not counted there: " + "; ".join(
            f"{r.effect} (counted in {r.counted_in}, found in {r.found} of {r.worlds})"
            for r in plants[~counted].itertuples()
        )
    tuned = [s for s in seeds if s in CALIBRATION_SEEDS]
    if tuned:
        summary += f" Seed {', '.join(map(str, tuned))} is one the world was tuned on: not a fresh world."
    return page_markdown(
        PaperPage(
            "Power of the demo world's verdict on fresh world seeds",
            (
                summary,
                Section(
                    marginal.drop(columns=["margin_lower_bound_somewhere"]),
                    f"Planted effects missed somewhere or with a median margin under {below:g} SE",
                ),
                Section(studies, "Controls per study: share of family-worlds flagged, binomial p against 5%"),
                Section(controls[controls["flagged"] > 0], "Control families flagged in any world"),
            ),
        )
    )
