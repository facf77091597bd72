"""Rule script (plm): the continued-pretraining debiasers on the Dropout corpus, the model saved with its
tokenizer. Dropout (Xie et al. 2024, section 5.1; Webster et al. 2020): raised hidden-state dropout.
CDA (Webster et al. 2020, bias-bench): one model per bias type, the model's own dropout, the corpus
augmented two-sided with the counterfactual of every text that holds a word of that bias type's pairs,
kept phrases left unswapped (``medbias.core.augmentation``); the swaps and kept phrases are logged and
written to the training record."""

import json
from pathlib import Path

import torch

from medbias.core.augmentation import read_kept_phrases, swap_mapping, two_sided_augmentation
from medbias.core.lm_training import dropout_overrides, train_language_model
from medbias.core.logs import setup_rule_logging
from medbias.core.models import job_device, lm_head_problem, load_config, load_model_and_tokenizer, resolve_model_source
from medbias.io.gzipped import read_corpus_split

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
torch.set_num_threads(snakemake.threads)
settings = p.settings
corpus = Path(snakemake.input.corpus)
texts, _ = read_corpus_split(corpus, settings["held_out_texts"], settings["max_texts"])
source = resolve_model_source(p.model, p.entry)
device = job_device()
counterfactuals, swap_record = 0, {}
if p.method == "cda":
    overrides = {}
    kept_phrases = [
        phrase for phrase, attribute in read_kept_phrases(snakemake.input.kept_phrases) if attribute in p.pairs
    ]
    texts, counts = two_sided_augmentation(texts, swap_mapping(p.pairs), kept_phrases)
    counterfactuals = counts.counterfactuals
    log.info(
        "CDA (%s): %d counterfactual texts added to the corpus's %d; %d words swapped; "
        "%d swap words kept in %d phrases",
        ", ".join(p.pairs),
        counterfactuals,
        len(texts) - counterfactuals,
        counts.swaps,
        sum(counts.kept.values()),
        len(counts.kept),
    )
    for phrase, times in counts.kept.most_common():
        log.info("CDA kept phrase %r: %d times", phrase, times)
    swap_record = {
        "bias_types": list(p.pairs),
        "words_swapped": counts.swaps,
        "kept_phrases": dict(counts.kept.most_common()),
    }
else:
    overrides = dropout_overrides(load_config(source.source), settings["dropout"])
model, tokenizer = load_model_and_tokenizer(source, device, config_overrides=overrides)
no_head = lm_head_problem(model, source.kind)
if no_head:  # a hub checkpoint found head-less only now (local folders are refused before any job)
    raise SystemExit(f"medbias: plm.debias.{p.method}.models: {p.model}: {p.method} {no_head}; remove it from the list")
log.info(
    "%s: continued pretraining for %d steps on %d texts of %s with %s",
    p.model,
    settings["steps"],
    len(texts),
    corpus,
    overrides,
)
losses = train_language_model(
    model,
    tokenizer,
    source.kind,
    texts,
    steps=settings["steps"],
    batch_size=settings["batch_size"],
    learning_rate=settings["learning_rate"],
    seed=p.seed,
    max_length=settings["max_length"],
    log=log,
)
out = Path(snakemake.output[0])
model.save_pretrained(out)
tokenizer.save_pretrained(out)
(out / f"{p.method}_training.json").write_text(
    json.dumps(
        {
            "model": p.model,
            "source": source.source,
            "texts": len(texts),
            "counterfactual_texts": counterfactuals,
            **swap_record,
            "held_out_texts": settings["held_out_texts"],
            "corpus": str(corpus),
            "overrides": overrides,
            **{k: settings[k] for k in ("steps", "batch_size", "learning_rate", "max_length")},
            "loss_first_100": sum(losses[:100]) / len(losses[:100]),
            "loss_last_100": sum(losses[-100:]) / len(losses[-100:]),
        },
        indent=2,
    )
)
