"""What the plm study builds for a configuration (Xie et al. 2024): which (model, debias)
evaluations exist and which are fine-tuned for Table 6. Pure; the rule files reach it through
``medbias.pipeline.plan``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def is_loadable(entry: Mapping[str, Any]) -> bool:
    """Whether transformers can load a registry entry (a ``loader: ofa`` entry keeps marked rows instead)."""
    return entry.get("loader", "auto") == "auto"


METHOD_NAMES = {"dropout": "Dropout", "cda": "CDA", "sentencedebias": "SentenceDebias", "inlp": "INLP"}
CDA_PREFIX = "cda_"


def debias_values(plm: Mapping[str, Any]) -> list[str]:
    """The ``{debias}`` values of the configured methods, in method order: CDA once per bias type of
    ``plm.debias.cda.bias_types`` (``cda_<type>``), as bias-bench trains one CDA model per bias type,
    each on its own attribute's swaps."""
    out = []
    for method in plm["debias"]["methods"]:
        if method == "cda":
            out += [f"{CDA_PREFIX}{t}" for t in plm["debias"]["cda"]["bias_types"]]
        else:
            out.append(method)
    return out


def method_of(debias: str) -> str:
    """The debiasing method of a ``{debias}`` value (``cda_gender`` -> ``cda``)."""
    return "cda" if debias.startswith(CDA_PREFIX) else debias


def debias_label(debias: str) -> str:
    """A reader's name of a ``{debias}`` value: 'Dropout', 'CDA (gender)'."""
    method = method_of(debias)
    if method == "cda":
        return f"CDA ({debias[len(CDA_PREFIX) :].replace('_', ' ')})"
    return METHOD_NAMES.get(method, method)


def plm_evaluations(plm: Mapping[str, Any], registry: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(model, debias) pairs the plm tables need, model-major in ``plm.models`` order: ``none`` for every
    model; each configured debias value (``debias_values``) for the loadable models, Dropout and CDA only
    for the models they list."""
    pairs = []
    for model in plm["models"]:
        pairs.append((model, "none"))
        if not is_loadable(registry[model]):
            continue
        pairs += [
            (model, debias)
            for debias in debias_values(plm)
            if method_of(debias) not in ("dropout", "cda") or model in plm["debias"][method_of(debias)]["models"]
        ]
    return pairs


def plm_finetunes(plm: Mapping[str, Any], registry: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(model, debias) pairs fine-tuned for Table 6: the evaluations of the downstream models."""
    return [(m, d) for m, d in plm_evaluations(plm, registry) if m in plm["downstream"]["models"]]


def plm_benchmark_evaluations(
    plm: Mapping[str, Any], registry: Mapping[str, Mapping[str, Any]]
) -> list[tuple[str, str]]:
    """(model, debias) pairs the benchmark table scores: every plm evaluation, and with
    ``plm.benchmarks.self_debias.enabled`` a ``selfdebias`` row for each loadable masked or causal model
    (Self-Debias acts at scoring time, so it has no row in the paper's tables)."""
    pairs = plm_evaluations(plm, registry)
    if not plm["benchmarks"]["self_debias"]["enabled"]:
        return pairs
    extra = [
        (m, "selfdebias")
        for m in plm["models"]
        if is_loadable(registry[m]) and registry[m].get("kind") in ("masked", "causal")
    ]
    out = []
    for model, debias in pairs:
        out.append((model, debias))
        if debias == "none" and (model, "selfdebias") in extra:
            out.append((model, "selfdebias"))
    return out
