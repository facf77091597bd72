"""Power of the demo world's verdict on worlds nobody tuned on.

Runs the demo config's planted recovery (results/validation/planted_recovery.csv, and everything it reads)
once per fresh world seed, each in its own folder, then gathers the runs: per planted effect found in k of K
worlds with its median and smallest margin, per control family flagged in k of K.

    .venv/bin/python scripts/power_runs.py --seeds 2031 2032 2033 2034 2035     # run, then gather
    .venv/bin/python scripts/power_runs.py --seeds 2031 2032 --studies mental  # one study's plants and controls
    .venv/bin/python scripts/power_runs.py --gather power/seed2031 power/seed2032  # gather finished runs only

Each run takes about as long as the demo (2 cores: one job per core); runs already finished are not redone
(Snakemake finds nothing to do). Writes power/power.md, power_plants.csv and power_controls.csv.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow_scripts"))

from medbias.core.errors import MedbiasInputError  # noqa: E402
from medbias.pipeline.config import load_config, with_repo_paths  # noqa: E402
from medbias.validation.power import (  # noqa: E402
    control_power,
    fresh_world_config,
    plant_power,
    power_page,
    read_recoveries,
)

TARGET = "results/validation/planted_recovery.csv"


def run_world(seed: int, config: dict, folder: Path, cores: int) -> Path:
    """One fresh world of ``seed`` (its ``config``) in ``folder``/seed<seed>, its log in power.log there."""
    workdir = folder / f"seed{seed}"
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    snakemake = Path(sys.executable).with_name("snakemake")
    command = [str(snakemake), "-s", str(REPO / "Snakefile"), "-d", str(workdir), "--configfile"]
    command += [str(workdir / "config.yaml"), "--cores", str(cores), "--max-threads", "1", "--scheduler", "greedy"]
    started = time.time()
    print(f"power: world seed {seed}: running in {workdir} (log: {workdir / 'power.log'})", flush=True)
    with open(workdir / "power.log", "w") as log:
        done = subprocess.run([*command, TARGET], stdout=log, stderr=subprocess.STDOUT)
    if done.returncode:
        raise SystemExit(f"power: world seed {seed} failed (exit {done.returncode}); see {workdir / 'power.log'}")
    print(f"power: world seed {seed}: done in {(time.time() - started) / 60:.1f} min", flush=True)
    return workdir


def gather(folders: list[Path], out: Path) -> None:
    recoveries = read_recoveries(folders)
    plants, controls = plant_power(recoveries), control_power(recoveries)
    out.mkdir(parents=True, exist_ok=True)
    plants.to_csv(out / "power_plants.csv", index=False)
    controls.to_csv(out / "power_controls.csv", index=False)
    (out / "power.md").write_text(power_page(plants, controls, sorted(recoveries)))
    counted = plants[plants["counted_in"] == plants["worlds"]]
    every = int((counted["found"] == counted["worlds"]).sum())
    print(
        f"power: {every} of {len(counted)} planted effects found in all {len(recoveries)} worlds "
        f"({len(plants) - len(counted)} known to lack power in some world, gathered apart); see {out / 'power.md'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", help="fresh world seeds to run (not the calibrated one)")
    parser.add_argument("--gather", type=Path, nargs="+", help="gather these finished run folders only")
    parser.add_argument("--folder", type=Path, default=REPO / "power", help="where the runs and tables go")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument(
        "--studies",
        nargs="+",
        choices=["rios", "plm", "hurtful", "mental", "vignettes"],
        help="assess only these studies' plants and controls (default: every study)",
    )
    args = parser.parse_args()
    if bool(args.seeds) == bool(args.gather):
        parser.error("give either --seeds (run and gather) or --gather (finished runs only)")
    try:
        if args.gather:
            gather(args.gather, args.folder)
        else:
            demo = with_repo_paths(load_config(REPO / "config" / "config.yaml"), REPO)
            # refuses a calibration seed
            configs = {seed: fresh_world_config(demo, seed, args.studies) for seed in args.seeds}
            gather([run_world(seed, config, args.folder, args.cores) for seed, config in configs.items()], args.folder)
    except MedbiasInputError as error:
        raise SystemExit(f"medbias: {error}") from None


if __name__ == "__main__":
    main()
