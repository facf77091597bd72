"""Rule script (mental): features of every treated text for one embedding: the mean of the
in-vocabulary word vectors (word-vector models) or the attention-mask-aware mean of the last hidden
states over all windows of the text (contextual models). Coverage is recorded per text."""

import time

import numpy as np
import pandas as pd

from medbias.core.logs import progress_logger, setup_rule_logging
from medbias.core.models import job_device
from medbias.io.jsonio import write_json
from medbias.studies.mental.features import load_featurizer

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
entry = p.entry
texts = pd.read_parquet(snakemake.input.texts)
start = time.perf_counter()
device = "cpu"
if entry["type"] != "word_vectors":
    import torch

    torch.manual_seed(p.seed)
    device = job_device()
featurizer = load_featurizer(p.name, entry, p.contextual, device)
features, counts = featurizer.features(texts["text"].tolist(), progress_logger(log, p.name, "windows"))
index = texts[["ROW_ID", "version"]].assign(**counts)
if featurizer.kind == "word_vectors":
    tokens, found = counts["tokens"], counts["in_vocabulary"]
    summary = {
        "type": "word_vectors",
        "texts": len(texts),
        "tokens": int(tokens.sum()),
        "in_vocabulary": int(found.sum()),
        "coverage": float(found.sum() / max(tokens.sum(), 1)),
        "texts_without_vectors": int((found == 0).sum()),
    }
    log.info(
        "%s: %d texts, %.1f%% of %d tokens have vectors; %d texts without any",
        p.name,
        len(texts),
        100 * summary["coverage"],
        tokens.sum(),
        summary["texts_without_vectors"],
    )
else:
    tokenizer = featurizer.tokenizer
    ids = tokenizer(texts["text"].tolist(), add_special_tokens=False)["input_ids"]
    pieces = sum(len(i) for i in ids)
    unknown = sum(sum(t == tokenizer.unk_token_id for t in i) for i in ids) if tokenizer.unk_token_id is not None else 0
    summary = {
        "type": "contextual",
        "texts": len(texts),
        "windows": int(counts["windows"].sum()),
        "device": device,
        "unknown_piece_share": unknown / max(pieces, 1),
    }
summary["seconds"] = round(time.perf_counter() - start, 1)
log.info("%s: %d x %d features in %.1f s", p.name, *features.shape, summary["seconds"])
np.save(snakemake.output.features, features)
index.to_parquet(snakemake.output.index, index=False)
write_json(snakemake.output.summary, summary)
