"""The profile of a finished run: wall time, job-seconds per rule, critical path and core use.

    .venv/bin/python scripts/profile_run.py [RUN_FOLDER] [--log LOG] [--top N]
    .venv/bin/python scripts/profile_run.py --budget tests/performance/demo_budget.tsv   # beside the demo's budget
    .venv/bin/python scripts/profile_run.py --write-budget FILE --note "machine, idle, commit"

RUN_FOLDER is where Snakemake ran (default: the current folder); the newest log under
``.snakemake/log`` is read unless ``--log`` names one. See ``medbias.pipeline.profile``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow_scripts"))

from medbias.pipeline.profile import (  # noqa: E402
    budget_comparison,
    format_budget,
    format_profile,
    profile_run,
    read_budget,
    read_run,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_folder", nargs="?", type=Path, default=Path("."))
    parser.add_argument("--log", type=Path, help="the Snakemake log to read (default: the newest)")
    parser.add_argument("--top", type=int, help="show only the N rules with the most job-seconds")
    parser.add_argument("--budget", type=Path, help="a budget file to compare the job-seconds with")
    parser.add_argument("--write-budget", type=Path, help="write the job-seconds per rule as a budget file")
    parser.add_argument("--note", default="", help="the budget file's note: machine, whether idle, commit")
    args = parser.parse_args(argv)
    try:
        profile = profile_run(read_run(args.run_folder, args.log))
        budget = read_budget(args.budget) if args.budget else None
    except (OSError, ValueError) as error:
        print(error if str(error).startswith("medbias:") else f"medbias: {error}", file=sys.stderr)
        return 2
    print(format_profile(profile, args.top))
    if budget is not None:
        print(budget_comparison(profile, budget))
    if args.write_budget:
        args.write_budget.write_text(format_budget(profile, args.note))
        print(f"budget written to {args.write_budget}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
