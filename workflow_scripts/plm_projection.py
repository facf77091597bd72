"""Rule script: fit a SentenceDebias or INLP projection on one plm model's sentence vectors.

SentenceDebias (Liang et al. 2020): per family (race, LGBTQ+), PCA of the pair-centred vectors of
counterfactual StereoSet-style sentences (same template and disease, majority vs minority identity);
the families' top components are joined into one subspace and projected out. INLP (Ravfogel et al.
2020, as Xie et al. 2024 section 5.3): linear classifiers trained to tell the stereotypical from
the anti-stereotypical sentences, their directions projected out, iteratively.
"""

import numpy as np
import pandas as pd
import torch

from medbias.studies.plm.debias import INLP, SentenceDebias, projection_from_basis
from medbias.io.jsonio import write_json
from medbias.core.logs import setup_rule_logging
from medbias.core.models import load_model_and_tokenizer, resolve_model_source
from medbias.core.encoders import pooled_sentence_vectors, projection_checks, sentence_encoder
from medbias.studies.plm.stereoset import counterfactual_identity_pairs, stereotype_labels

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
torch.set_num_threads(snakemake.threads)
device = "cuda" if torch.cuda.is_available() else "cpu"
source = resolve_model_source(p.model, p.entry)
model, tokenizer = load_model_and_tokenizer(source, device)
encoder = sentence_encoder(model, source.kind)
sentences = pd.read_parquet(snakemake.input.sentences).sort_values("sentence_id")
pairs = pd.read_parquet(snakemake.input.pairs)
meaningful = sentences[sentences["bias_kind"] != "unrelated"]
meaningful = meaningful[meaningful["identity_group"] != "unrelated"]
vectors = np.zeros((len(sentences), encoder.config.hidden_size), dtype=np.float64)
vectors[meaningful["sentence_id"].to_numpy()] = pooled_sentence_vectors(
    encoder, tokenizer, meaningful["text"].tolist(), p.pooling, p.batch_size, p.max_length,
    prepend_bos=(source.kind == "causal"))
dim = vectors.shape[1]
report = {"model": p.model, "method": p.method, "dimension": dim}

if p.method == "sentencedebias":
    bases = []
    for family in p.families:
        first, second = counterfactual_identity_pairs(sentences, family)
        fitted = SentenceDebias(k=p.settings["components"]).fit(vectors[first], vectors[second])
        bases.append(fitted.basis_)
        report[f"{family}_pairs"] = len(first)
        report[f"{family}_explained_variance_ratio"] = fitted.explained_variance_ratio_.tolist()
        log.info("SentenceDebias %s: %d counterfactual pairs, explained variance %s", family, len(first),
                 np.round(fitted.explained_variance_ratio_, 3).tolist())
    basis = np.hstack(bases)
    projection = projection_from_basis(basis, dim)
    report.update(projection_checks(projection, vectors[meaningful["sentence_id"].to_numpy()], basis=basis))
else:
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC

    ids, labels = stereotype_labels(pairs)
    make = {"linear_svc": lambda: LinearSVC(dual="auto", max_iter=5000),
            "logistic": lambda: LogisticRegression(max_iter=2000)}[p.settings["classifier"]]
    fitted = INLP(n_iterations=p.settings["iterations"], make_classifier=make, seed=p.seed).fit(vectors[ids], np.asarray(labels))
    projection = fitted.projection_
    report["sentences"] = len(ids)
    report["stereotypical"] = int(sum(labels))
    report["iteration_accuracies"] = fitted.accuracies_
    report.update(projection_checks(projection, vectors[ids], labels=np.asarray(labels), make_classifier=make))
    log.info("INLP: accuracy by iteration %s; after: %.3f", np.round(fitted.accuracies_, 3).tolist(),
             report["accuracy_after"])
log.info("projection checks: %s", {k: v for k, v in report.items() if k.endswith("_error")})
np.savez(snakemake.output.projection, projection=projection.astype(np.float32))
write_json(snakemake.output.report, report)
