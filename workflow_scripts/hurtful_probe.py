"""Rule script (hurtful): Table D4, how well a post-hoc classifier predicts each protected attribute
from the final-layer [CLS] vectors of the baseline and of the model debiased for that attribute.

Rows are sequences of the downstream test subjects (held out of pretraining by default), split by
subject into the probe's training and test parts.
"""

import pandas as pd
import torch

from medbias.core.batching import cls_vectors
from medbias.core.logs import setup_rule_logging
from medbias.core.models import load_encoder, load_tokenizer
from medbias.io.tables import write_paper_table
from medbias.studies.hurtful.pretrain import attribute_codes
from medbias.studies.hurtful.probe import probe_attribute, split_by_subject, table_d4

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
torch.set_num_threads(snakemake.threads)

samples = pd.read_parquet(snakemake.input.samples, columns=["SUBJECT_ID", "split"])
test_subjects = set(samples.loc[samples["split"] == "test", "SUBJECT_ID"])
sequences = pd.read_parquet(snakemake.input.sequences, columns=["SUBJECT_ID", "HADM_ID", "text"])
sequences = sequences[sequences["SUBJECT_ID"].isin(test_subjects)]
if len(sequences) > p.max_sequences:
    sequences = sequences.sample(p.max_sequences, random_state=p.seed)
sequences = sequences.reset_index(drop=True)
demographics = pd.read_parquet(snakemake.input.demographics).set_index("HADM_ID")
is_test = split_by_subject(sequences["SUBJECT_ID"].to_numpy(), p.test_fraction, p.seed)
log.info(
    "%d sequences of %d test subjects; probe test share %.2f by subject",
    len(sequences),
    sequences["SUBJECT_ID"].nunique(),
    p.test_fraction,
)

features = {}
for variant, folder in zip(p.variants, snakemake.input.models):
    encoder = load_encoder(folder, pooling=False)
    tokenizer = load_tokenizer(folder)
    features[variant] = cls_vectors(
        encoder, tokenizer, sequences["text"].tolist(), batch_size=128, max_length=p.max_length
    )

rows = []
for attribute in p.attributes:
    labels = attribute_codes(demographics[attribute].reindex(sequences["HADM_ID"]), attribute)
    for variant in ("baseline", f"adv_{attribute}"):
        metrics = probe_attribute(features[variant], labels, is_test, p.hidden, p.seed, positive=1)
        log.info("%s probe on %s: %s", attribute, variant, {k: round(v, 4) for k, v in metrics.items()})
        rows.append({"attribute": attribute, "model": "baseline" if variant == "baseline" else "debiased", **metrics})
long = pd.DataFrame(rows)
long.to_csv(snakemake.output.long, index=False)
write_paper_table(table_d4(long, tuple(p.settings)), snakemake.output.csv, snakemake.output.md)
