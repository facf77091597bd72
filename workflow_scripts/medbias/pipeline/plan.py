"""What a configuration asks the DAG to build: the studies' decisions about which evaluations exist,
which tables are written and which model a figure shows.

The rule files hold paths and wildcards and call these functions with config sections; the decisions
live here, pure and unit-tested, so that the same choice is not spelled out in a rule file and again
in a script. Nothing here imports torch or reads a file: the Snakefile imports it at parse time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# Zhang et al. 2020: the downstream table of each adversarially debiased model (Table 5 for gender,
# Tables D5-D7 in the appendix for the other attributes)
DEBIASED_TABLE_NAMES = {
    "gender": "table5_debiased_gender",
    "language": "tableD5_debiased_language",
    "ethnicity": "tableD6_debiased_ethnicity",
    "insurance": "tableD7_debiased_insurance",
}

# tests of the audit card that an entry's type or kind rules out, with the reason the card prints
_WORD_VECTOR_SKIPS = [("SEAT, StereoSet-style, log-probability, fill-in-the-blank",
                       "word vectors: the sentence- and likelihood-based tests need a contextual model")]
_CONTEXTUAL_SKIPS = [("WEAT", "the WEAT card section is for word-vector entries (SEAT is its sentence form)")]


def variant_attribute(variant: str) -> str | None:
    """The protected attribute of an adversarial variant (adv_gender -> gender); None for the baseline."""
    return variant[len("adv_"):] if variant.startswith("adv_") else None


def debiased_attributes(variants: Sequence[str]) -> list[str]:
    """The attributes of the pretrained adversarial variants, in the config's order (Table D4's rows)."""
    return [a for a in map(variant_attribute, variants) if a]


def debiased_tables(downstream_models: Sequence[str]) -> dict[str, str]:
    """Table 5 / D5-D7 name -> attribute, for each attribute whose debiased model the downstream
    analysis reads, in the paper's order."""
    return {name: attribute for attribute, name in DEBIASED_TABLE_NAMES.items()
            if f"adv_{attribute}" in downstream_models}


def figure_a1_model(downstream_models: Sequence[str]) -> str | None:
    """The debiased model Figure A1 compares with the baseline: the gender-debiased one when analysed
    (the paper's), else the first debiased model listed, else None (no Figure A1)."""
    debiased = [m for m in downstream_models if m.startswith("adv_")]
    if "adv_gender" in debiased:
        return "adv_gender"
    return debiased[0] if debiased else None


def downstream_table_names(downstream: Mapping[str, Any]) -> list[str]:
    """Every file (relative to the downstream folder) that the downstream tables job writes for the
    ``hurtful.downstream`` section: Tables 4, C3, A2, the debiased tables, the gap figures, Figure A1
    when a debiased model is analysed, and the intersectional table."""
    names = ["table4_gaps", "tableC3_gaps_fdr", "tableA2_performance", *debiased_tables(downstream["models"])]
    files = [f"{n}.{ext}" for n in names for ext in ("csv", "md")]
    files += ["tableA2_performance_long.csv", "gap_seeds.csv"]
    for name, figure in downstream["figures"].items():
        files += [f"{name}_gaps_{figure['attribute']}.{ext}" for ext in ("png", "pdf")]
    if figure_a1_model(downstream["models"]):
        files += [f"figA1_auprc.{ext}" for ext in ("png", "pdf")]
    files += [f"intersectional_gaps.{ext}" for ext in ("csv", "md")]
    files.append("intersectional_skipped.csv")
    return files


def is_loadable(entry: Mapping[str, Any]) -> bool:
    """Whether transformers can load a registry entry (a ``loader: ofa`` entry keeps marked rows instead)."""
    return entry.get("loader", "auto") == "auto"


def plm_evaluations(plm: Mapping[str, Any], registry: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(model, debias) pairs the plm tables need, model-major in ``plm.models`` order: ``none`` for every
    model; each configured method for the loadable models, Dropout only for the models it lists."""
    pairs = []
    for model in plm["models"]:
        pairs.append((model, "none"))
        if not is_loadable(registry[model]):
            continue
        pairs += [(model, method) for method in plm["debias"]["methods"]
                  if method != "dropout" or model in plm["debias"]["dropout"]["models"]]
    return pairs


def plm_finetunes(plm: Mapping[str, Any], registry: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(model, debias) pairs fine-tuned for Table 6: the evaluations of the downstream models."""
    return [(m, d) for m, d in plm_evaluations(plm, registry) if m in plm["downstream"]["models"]]


def audit_skipped(entry_type: str, kind: str | None = None) -> list[tuple[str, str]]:
    """(section, reason) of the audit card's tests that a word-vector entry, or a model of ``kind``,
    cannot take; the card lists them instead of running them."""
    if entry_type == "word_vectors":
        return list(_WORD_VECTOR_SKIPS)
    skipped = list(_CONTEXTUAL_SKIPS)
    if kind != "masked":
        skipped += [("log-probability gender score", f"needs a masked LM (Kurita et al.); this entry's kind is {kind}"),
                    ("fill-in-the-blank", f"needs a masked LM; this entry's kind is {kind}")]
    return skipped


def audit_sections(entry_type: str, kind: str | None = None) -> list[str]:
    """The evaluations an audit card gathers: WEAT for word vectors; SEAT and StereoSet-style for
    every model; the log-probability score and fill-in-the-blank for masked LMs."""
    if entry_type == "word_vectors":
        return ["weat"]
    return ["seat", "stereoset", "summary", *(["logprob", "logprob_words", "fill_blank"] if kind == "masked" else [])]


def model_entry(config: Mapping[str, Any], name: str, variants_dir: str) -> dict[str, Any]:
    """What a job loads for ``name``, the one resolver of every study: word vectors (``embeddings:``,
    type ``word_vectors``), a pretrained variant of the hurtful study (a local masked LM in
    ``variants_dir``), or a registry model (both of type ``contextual``)."""
    if name in config["embeddings"]:
        return {"type": "word_vectors", **config["embeddings"][name]}
    if name in config["hurtful"]["variants"]:
        return {"type": "contextual", "source": f"{variants_dir}/{name}", "kind": "masked"}
    return {"type": "contextual", **config["models"][name]}


def model_input_files(config: Mapping[str, Any], name: str, variants_dir: str) -> list[str]:
    """The files a job that loads ``name`` waits for: the word-vector file, the variant's folder (a
    pretraining output), the folder the demo world builds, or every file of a local save_pretrained
    folder (so a model re-saved in place makes its jobs stale); nothing for a hub id."""
    from medbias.core.models import model_folder_files
    from medbias.pipeline.config import built_by_demo

    entry = model_entry(config, name, variants_dir)
    if entry["type"] == "word_vectors":
        return [entry["source"]]
    if name in config["hurtful"]["variants"] or built_by_demo(entry["source"], config):
        return [entry["source"]]
    return model_folder_files(entry["source"])
