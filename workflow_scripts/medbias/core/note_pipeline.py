"""Note processing: placeholders to special tokens, sentences, word pieces, packed sequences and
window counts, in parallel over the rule's threads (Zhang et al. 2020, section 3.3).

Two outputs: packed sequences (note text; an intermediate table kept outside ``results/``) for
pretraining, and per-note piece and window counts (numbers only) for the cohorts.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from multiprocessing import Pool
from pathlib import Path

from medbias.core.note_text import PHI_TOKENS, pack_sequences, replace_placeholders, split_sentences, window_starts

log = logging.getLogger(__name__)
_TOKENIZER = None


def extend_tokenizer(tokenizer):
    """Add the placeholder tokens as special tokens (never split); returns how many were new."""
    return tokenizer.add_special_tokens({"additional_special_tokens": list(PHI_TOKENS.values())})


def _init_worker(tokenizer_dir: str) -> None:
    global _TOKENIZER
    # One core per worker: a fast tokenizer otherwise spreads each batch over every core of the
    # machine, and ``threads`` workers doing so oversubscribe it (tests/performance/bench_note_lengths.py).
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    from medbias.core.models import load_tokenizer

    _TOKENIZER = load_tokenizer(tokenizer_dir)


def process_note(text: str, tokenizer, min_pieces: int, window: int, stride: int, max_windows: int):
    """(packed sequence texts with their piece counts, total pieces, number of windows) of one note.

    Windows hold ``window - 2`` pieces so that [CLS] and [SEP] fit.
    """
    clean, _ = replace_placeholders(text)
    sentences = split_sentences(clean)
    if not sentences:
        return [], 0, 0
    counts = [len(ids) for ids in tokenizer(sentences, add_special_tokens=False)["input_ids"]]
    sequences = [(" ".join(sentences[a:b]), sum(counts[a:b])) for a, b in pack_sequences(counts, min_pieces)]
    total = sum(counts)
    return sequences, total, len(window_starts(total, window - 2, stride, max_windows))


def _process_batch(args):
    rows, min_pieces, window, stride, max_windows = args
    out = []
    for row_id, subject_id, hadm_id, text in rows:
        sequences, total, n_windows = process_note(text or "", _TOKENIZER, min_pieces, window, stride, max_windows)
        out.append((row_id, subject_id, hadm_id, sequences, total, n_windows))
    return out


def _batches(notes_parquet: str, size: int, params) -> Iterator[tuple]:
    import pyarrow.parquet as pq

    for batch in pq.ParquetFile(notes_parquet).iter_batches(
        batch_size=size, columns=["ROW_ID", "SUBJECT_ID", "HADM_ID", "TEXT"]
    ):
        cols = batch.to_pydict()
        yield (list(zip(cols["ROW_ID"], cols["SUBJECT_ID"], cols["HADM_ID"], cols["TEXT"])), *params)


def process_notes(
    notes_parquet: str | Path,
    tokenizer_dir: str | Path,
    sequences_out: str | Path,
    counts_out: str | Path,
    threads: int,
    min_pieces: int = 20,
    window: int = 512,
    stride: int = 256,
    max_windows: int = 10,
    batch_size: int = 500,
) -> dict[str, int]:
    """Process every note of ``notes_parquet``; write sequences and counts Parquet; return totals."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from tqdm import tqdm

    seq_schema = pa.schema(
        [
            ("ROW_ID", pa.int64()),
            ("SUBJECT_ID", pa.int64()),
            ("HADM_ID", pa.int64()),
            ("seq_index", pa.int32()),
            ("n_pieces", pa.int32()),
            ("text", pa.string()),
        ]
    )
    count_schema = pa.schema(
        [("ROW_ID", pa.int64()), ("n_pieces", pa.int32()), ("n_sequences", pa.int32()), ("n_windows", pa.int32())]
    )
    totals = {"notes": 0, "sequences": 0, "pieces": 0, "empty_notes": 0}
    params = (min_pieces, window, stride, max_windows)
    with (
        pq.ParquetWriter(str(sequences_out), seq_schema) as seq_writer,
        pq.ParquetWriter(str(counts_out), count_schema) as count_writer,
        Pool(max(1, threads), initializer=_init_worker, initargs=(str(tokenizer_dir),)) as pool,
    ):
        for result in tqdm(
            pool.imap(_process_batch, _batches(str(notes_parquet), batch_size, params)),
            desc="note batches",
            mininterval=10,
        ):
            seq_rows: dict[str, list] = {k: [] for k in seq_schema.names}
            count_rows: dict[str, list] = {k: [] for k in count_schema.names}
            for row_id, subject_id, hadm_id, sequences, total, n_windows in result:
                for i, (text, n) in enumerate(sequences):
                    for key, value in zip(seq_schema.names, (row_id, subject_id, hadm_id, i, n, text)):
                        seq_rows[key].append(value)
                for key, value in zip(count_schema.names, (row_id, total, len(sequences), n_windows)):
                    count_rows[key].append(value)
                totals["notes"] += 1
                totals["sequences"] += len(sequences)
                totals["pieces"] += total
                totals["empty_notes"] += total == 0
            seq_writer.write_table(pa.table(seq_rows, schema=seq_schema))
            count_writer.write_table(pa.table(count_rows, schema=count_schema))
    return totals
