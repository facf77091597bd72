"""Rule script (hurtful): frozen window features of one model for every window the downstream cohorts
use (``medbias.studies.hurtful.window_features``): the concatenated [CLS] states of the configured
layers (the last four), in length-sorted batches under inference mode (bf16 on a GPU that supports
it). One file per model, shared by all 57 tasks."""

import time

import numpy as np
import pandas as pd
import torch

from medbias.core.batching import cls_vectors_of_ids
from medbias.core.logs import progress_logger, setup_rule_logging
from medbias.core.models import check_feature_layers, job_device, load_encoder, load_tokenizer, resolve_model_source
from medbias.io.jsonio import write_json
from medbias.studies.hurtful.window_features import cohort_window_inputs

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p, inp, out = snakemake.params, snakemake.input, snakemake.output
torch.set_num_threads(snakemake.threads)
device = job_device()
tokenizer = load_tokenizer(inp.tokenizer)
source = resolve_model_source(p.model, p.entry)
encoder = load_encoder(source.source, device, bf16_on_gpu=True)
check_feature_layers(p.layers, encoder.config.num_hidden_layers, p.model)  # also before any job, for local folders
windows = cohort_window_inputs(
    pd.read_parquet(inp.windows, columns=["ROW_ID", "window"]),
    pd.read_parquet(inp.sequences, columns=["ROW_ID", "seq_index", "text"]),
    tokenizer,
    encoder.get_input_embeddings().num_embeddings,
    window=p.window,
    stride=p.stride,
    max_windows=p.max_windows,
    where=(inp.sequences, inp.windows),
)
log.info(
    "%s (%s): %d windows of %d notes on %s; %d placeholder pieces outside its vocabulary read as [UNK]",
    p.model,
    source.source,
    len(windows.inputs),
    windows.notes,
    device,
    windows.unknown,
)
started = time.time()
features = cls_vectors_of_ids(
    encoder, windows.inputs, tokenizer.pad_token_id, p.layers, p.batch_size, progress_logger(log, "features", "windows")
)
np.save(out.features, features)
windows.index.to_parquet(out.index, index=False)
seconds = time.time() - started
write_json(
    out.summary,
    {
        "model": p.model,
        "source": source.source,
        "layers": list(p.layers),
        "windows": len(windows.inputs),
        "notes": windows.notes,
        "dimensions": int(features.shape[1]),
        "unknown_placeholder_pieces": windows.unknown,
        "device": device,
        "seconds": round(seconds, 1),
        "windows_per_second": round(len(windows.inputs) / max(seconds, 1e-9), 1),
    },
)
