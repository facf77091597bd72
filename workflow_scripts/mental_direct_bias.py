"""Rule script (mental): Direct Bias of the depression synonyms for every embedding (Figure 2;
medbias.studies.mental.direct_bias). Coverage is written per embedding."""

import json

import numpy as np
import pandas as pd

from medbias.core.logs import setup_rule_logging
from medbias.core.models import load_model_and_tokenizer, resolve_model_source
from medbias.io.jsonio import write_json
from medbias.io.word_vectors import load_word_vectors
from medbias.metrics.similarity import term_vector
from medbias.studies.mental.direct_bias import contextual_word_vectors, direct_bias_row, random_words
from medbias.studies.mental.features import word_vector
from medbias.studies.mental.figures import plot_direct_bias

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
pairs = [tuple(pair) for pair in json.loads(open(snakemake.input.pairs, encoding="utf-8").read())]
synonyms = list(dict.fromkeys(json.loads(open(snakemake.input.synonyms, encoding="utf-8").read())["depression"]))

rows, coverage = [], {}
rng = np.random.default_rng(p.seed)
used_words = {
    w.lower() for term in [*synonyms, *(w for pair in pairs for w in pair)] for w in term.replace("-", " ").split()
}
for name in p.embeddings:
    entry = p.entries[name]
    if entry["type"] == "word_vectors":
        vectors = load_word_vectors(entry["source"], entry["format"])
        pair_vectors = [(word_vector(vectors, f), word_vector(vectors, m)) for f, m in pairs]
        synonym_vectors = [
            term_vector(
                vectors, s, lambda term: term.replace("-", " ").split(), lambda word: word_vector(vectors, word)
            )
            for s in synonyms
        ]
        random_vectors = [
            word_vector(vectors, w) for w in random_words(vectors.index_to_key, used_words, p.random_words, rng)
        ]
    else:
        model, tokenizer = load_model_and_tokenizer(resolve_model_source(name, entry))
        flat = contextual_word_vectors(model, tokenizer, [w for pair in pairs for w in pair], p.pair_templates)
        pair_vectors = [(flat[2 * i], flat[2 * i + 1]) for i in range(len(pairs))]
        synonym_vectors = contextual_word_vectors(model, tokenizer, synonyms, [p.synonym_template])
        vocabulary = sorted(tokenizer.get_vocab(), key=tokenizer.get_vocab().get)
        random_vectors = contextual_word_vectors(
            model, tokenizer, random_words(vocabulary, used_words, p.random_words, rng), [p.synonym_template]
        )
    row, coverage[name] = direct_bias_row(
        name,
        entry,
        p.labels.get(name, name),
        pairs,
        pair_vectors,
        synonyms,
        synonym_vectors,
        random_vectors,
        min_pairs=p.min_pairs,
        bootstrap=p.bootstrap,
        null_draws=p.null_draws,
        rng=rng,
    )
    log.info(
        "%s: %d of %d definitional pairs and %d of %d synonyms have vectors; lean %+.3f, random words' %+.3f "
        "(calibrated p %.3g)",
        name,
        coverage[name]["pairs_used"],
        len(pairs),
        coverage[name]["synonyms_used"],
        len(synonyms),
        row["signed_mean_cos"],
        row["random_words_signed_mean"],
        row["signed_p_calibrated"],
    )
    rows.append(row)
table = pd.DataFrame(rows)
table.to_csv(snakemake.output.csv, index=False)
write_json(snakemake.output.coverage, coverage)
plot_direct_bias(table, snakemake.output.png, snakemake.output.pdf)
