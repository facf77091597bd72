"""Rule script (mental): Direct Bias of the depression synonyms for every embedding (Figure 2).

Word-vector models: each word's vector (a multi-word synonym: the mean of its words' vectors, all
of which must have one). Contextual models: each word inside template sentences, represented by the
mean last hidden state of its own word pieces (gender words averaged over the pair templates; every
synonym, multi-word ones whole, in the synonym template). Coverage is written per embedding."""

import json

import numpy as np
import pandas as pd

from medbias.embeddings import load_word_vectors, term_vector
from medbias.errors import MedbiasInputError
from medbias.features import span_vectors
from medbias.jsonio import write_json
from medbias.logs import setup_rule_logging
from medbias.mental import word_vector
from medbias.metrics.association import direct_bias
from medbias.models import load_model_and_tokenizer, resolve_model_source
from medbias.plots import plot_direct_bias

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
pairs = [tuple(pair) for pair in json.loads(open(snakemake.input.pairs, encoding="utf-8").read())]
synonyms = list(dict.fromkeys(json.loads(open(snakemake.input.synonyms, encoding="utf-8").read())["depression"]))


def fill(template: str, word: str) -> tuple[str, tuple[int, int]]:
    start = template.index("[W]")
    return template.replace("[W]", word, 1), (start, start + len(word))


def contextual_vectors(model_entry, name, words, templates):
    """Per word: mean over ``templates`` of its in-context vector; words whose pieces are all unknown
    get None."""
    model, tokenizer = load_model_and_tokenizer(resolve_model_source(name, model_entry))
    sentences, spans, owner = [], [], []
    for i, word in enumerate(words):
        for template in templates:
            sentence, span = fill(template, word)
            sentences.append(sentence)
            spans.append(span)
            owner.append(i)
    vectors, unknown = span_vectors(model.base_model, tokenizer, sentences, spans)
    owner = np.array(owner)
    out = []
    for i in range(len(words)):
        rows = owner == i
        out.append(None if unknown[rows].all() else vectors[rows].mean(axis=0))
    return out


rows, coverage = [], {}
rng = np.random.default_rng(p.seed)
for name in p.embeddings:
    entry = p.entries[name]
    if entry["type"] == "word_vectors":
        vectors = load_word_vectors(entry["source"], entry["format"])
        pair_vectors = [(word_vector(vectors, f), word_vector(vectors, m)) for f, m in pairs]
        synonym_vectors = [term_vector(vectors, s, lambda term: term.replace("-", " ").split(),
                                       lambda word: word_vector(vectors, word)) for s in synonyms]
    else:
        words = [w for pair in pairs for w in pair]
        flat = contextual_vectors(entry, name, words, p.pair_templates)
        pair_vectors = [(flat[2 * i], flat[2 * i + 1]) for i in range(len(pairs))]
        synonym_vectors = contextual_vectors(entry, name, synonyms, [p.synonym_template])
    used = [(f, m) for f, m in pair_vectors if f is not None and m is not None]
    missing_pairs = [f"{a}/{b}" for (a, b), (f, m) in zip(pairs, pair_vectors) if f is None or m is None]
    found = [v for v in synonym_vectors if v is not None]
    missing_synonyms = [s for s, v in zip(synonyms, synonym_vectors) if v is None]
    coverage[name] = {"pairs_used": len(used), "pairs_missing": missing_pairs, "synonyms_used": len(found),
                      "synonyms_requested": len(synonyms), "synonyms_missing": missing_synonyms}
    log.info("%s: %d of %d definitional pairs and %d of %d synonyms have vectors", name, len(used), len(pairs),
             len(found), len(synonyms))
    if len(used) < p.min_pairs:
        raise MedbiasInputError(f"mental.direct_bias: embedding {name!r} has vectors for {len(used)} definitional pairs "
                                f"(minimum {p.min_pairs}); missing: {', '.join(missing_pairs)}")
    if not found:
        raise MedbiasInputError(f"mental.direct_bias: embedding {name!r} has no vector for any depression synonym")
    result = direct_bias(np.stack(found).astype(float), np.stack([f for f, _ in used]).astype(float),
                         np.stack([m for _, m in used]).astype(float), p.bootstrap, rng)
    lean = "female" if result.signed_low > 0 else "male" if result.signed_high < 0 else "none (interval holds 0)"
    rows.append({"embedding": name, "label": p.labels.get(name, name), "type": entry["type"],
                 "direct_bias": result.direct_bias, "signed_mean_cos": result.signed, "signed_low": result.signed_low,
                 "signed_high": result.signed_high, "lean": lean, "synonyms": result.words, "pairs": result.pairs,
                 "gender_direction_variance": result.explained_variance})
table = pd.DataFrame(rows)
table.to_csv(snakemake.output.csv, index=False)
write_json(snakemake.output.coverage, coverage)
plot_direct_bias(table, snakemake.output.png, snakemake.output.pdf)
