"""Rule script (hurtful): frozen window features of one model for every window the downstream cohorts
use: the concatenated [CLS] states of the configured layers (the last four), in length-sorted batches
under inference mode (bf16 on a GPU that supports it). One file per model, shared by all 57 tasks.

Windows are rebuilt from the packed sequences with the extended MIMIC tokenizer, at the offsets the
cohorts counted. A model without the placeholder tokens in its vocabulary (the base model) reads
them as [UNK]; the count is logged.
"""

import time

import numpy as np
import pandas as pd
import torch
from transformers import AutoModel, AutoTokenizer

from medbias.core.errors import MedbiasInputError
from medbias.core.batching import cls_vectors_of_ids, note_piece_ids, note_windows
from medbias.io.jsonio import write_json
from medbias.core.logs import setup_rule_logging
from medbias.core.models import check_feature_layers, resolve_model_source

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
torch.set_num_threads(snakemake.threads)
device = "cuda" if torch.cuda.is_available() else "cpu"

windows = pd.read_parquet(snakemake.input.windows, columns=["ROW_ID", "window"]).drop_duplicates()
windows = windows.sort_values(["ROW_ID", "window"]).reset_index(drop=True)
tokenizer = AutoTokenizer.from_pretrained(snakemake.input.tokenizer)
sequences = pd.read_parquet(snakemake.input.sequences, columns=["ROW_ID", "seq_index", "text"])
pieces = note_piece_ids(sequences, tokenizer, windows["ROW_ID"].unique())
missing = sorted(set(windows["ROW_ID"]) - set(pieces))
if missing:
    raise MedbiasInputError(f"{snakemake.input.sequences}: no sequences for {len(missing)} cohort notes (ROW_ID {missing[:5]})")

source = resolve_model_source(p.model, p.entry)
encoder = AutoModel.from_pretrained(source.source).to(device).eval()
if device == "cuda" and torch.cuda.is_bf16_supported():
    encoder = encoder.to(torch.bfloat16)
vocabulary = encoder.get_input_embeddings().num_embeddings
check_feature_layers(p.layers, encoder.config.num_hidden_layers, p.model)  # also before any job, for local folders
inputs, unknown = [], 0
by_note = {row_id: note_windows(ids, tokenizer.cls_token_id, tokenizer.sep_token_id, p.window, p.stride,
                                p.max_windows) for row_id, ids in pieces.items()}
for row_id, window in zip(windows["ROW_ID"], windows["window"]):
    note = by_note[row_id]
    if window >= len(note):
        raise MedbiasInputError(f"{snakemake.input.windows}: note {row_id} has {len(note)} windows, cohort asks for window {window}")
    ids = np.asarray(note[window])
    outside = ids >= vocabulary
    unknown += int(outside.sum())
    inputs.append(np.where(outside, tokenizer.unk_token_id, ids).tolist())
log.info("%s (%s): %d windows of %d notes on %s; %d placeholder pieces outside its vocabulary read as [UNK]",
         p.model, source.source, len(inputs), len(by_note), device, unknown)

started, last = time.time(), [0.0]


def progress(done, total):
    if time.time() - last[0] > 30 or done == total:
        last[0] = time.time()
        log.info("features: %d/%d windows (%.1f windows/s)", done, total, done / max(1e-9, time.time() - started))


features = cls_vectors_of_ids(encoder, inputs, tokenizer.pad_token_id, p.layers, p.batch_size, progress)
np.save(snakemake.output.features, features)
windows.to_parquet(snakemake.output.index, index=False)
seconds = time.time() - started
write_json(snakemake.output.summary, {
    "model": p.model, "source": source.source, "layers": list(p.layers), "windows": len(inputs),
    "notes": len(by_note), "dimensions": int(features.shape[1]), "unknown_placeholder_pieces": unknown,
    "device": device, "seconds": round(seconds, 1), "windows_per_second": round(len(inputs) / max(seconds, 1e-9), 1),
})
