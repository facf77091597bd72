"""Rule script: skip-gram word vectors on demo text, written in word2vec binary format.

Sources: the synthetic notes, the PubMed abstracts, and the "mental" study's depression-context
sentences (``medbias.synth.mental``: depression synonyms with male words in the bio corpus, with both
genders alike in the general one)."""

import gzip
import json

import pandas as pd

from medbias.core.logs import setup_rule_logging
from medbias.synth.mental import DEPRESSION_MALE_SHARE, DEPRESSION_SENTENCES, depression_context_sentences
from medbias.synth.tiny_models import simple_tokens, train_word_vectors

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
male_share = DEPRESSION_MALE_SHARE[snakemake.wildcards.corpus]
texts = []
if "notes" in p.sources:
    texts += pd.read_csv(snakemake.input.notes, usecols=["TEXT"])["TEXT"].tolist()
if "abstracts" in p.sources:
    with gzip.open(snakemake.input.corpus, "rt", encoding="utf-8") as handle:
        texts += handle.read().splitlines()
if "depression" in p.sources:
    pairs = json.loads(open(snakemake.input.pairs, encoding="utf-8").read())
    synonyms = json.loads(open(snakemake.input.synonyms, encoding="utf-8").read())["depression"]
    texts += depression_context_sentences(pairs, synonyms, male_share, DEPRESSION_SENTENCES, p.seed)
    log.info("added %d depression-context sentences (male share %.2f)", DEPRESSION_SENTENCES, male_share)
sentences = list(simple_tokens(texts))
log.info("training word2vec on %d texts from %s", len(sentences), ", ".join(p.sources))
vectors = train_word_vectors(sentences, dict(p.w2v), p.seed)
vectors.save_word2vec_format(snakemake.output[0], binary=True)
log.info("wrote %d vectors of dimension %d", len(vectors), vectors.vector_size)
