"""What the hurtful study builds for a configuration (Zhang et al. 2020): the attribute of each
adversarial variant, the debiased tables (Table 5, D5-D7), Figure A1's model and the mitigation
stage's jobs. Pure; the rule files reach it through ``medbias.pipeline.plan``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from medbias.studies.hurtful.variants import adversarial_variant, variant_attribute

# Zhang et al. 2020: the downstream table of each adversarially debiased model (Table 5 for gender,
# Tables D5-D7 in the appendix for the other attributes)
DEBIASED_TABLES = {"gender": "table5", "language": "tableD5", "ethnicity": "tableD6", "insurance": "tableD7"}
# the file stem of each: "<table>_debiased_<attribute>", as rule hurtful_downstream_tables declares it
DEBIASED_TABLE_NAMES = {attribute: f"{table}_debiased_{attribute}" for attribute, table in DEBIASED_TABLES.items()}


def debiased_tables(downstream_models: Sequence[str]) -> dict[str, str]:
    """Table 5 / D5-D7 name -> attribute, for each attribute whose debiased model the downstream
    analysis reads, in the paper's order."""
    return {
        name: attribute
        for attribute, name in DEBIASED_TABLE_NAMES.items()
        if adversarial_variant(attribute) in downstream_models
    }


def figure_a1_model(downstream_models: Sequence[str]) -> str | None:
    """The debiased model Figure A1 compares with the baseline: the gender-debiased one when analysed
    (the paper's), else the first debiased model listed, else None (no Figure A1)."""
    debiased = [m for m in downstream_models if variant_attribute(m)]
    if adversarial_variant("gender") in debiased:
        return adversarial_variant("gender")
    return debiased[0] if debiased else None


def mitigation_jobs(mitigation: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The (model, method) jobs of the mitigation stage (``hurtful.mitigation``): every mitigated
    model with every configured method that runs as a job of its own (``Mitigation.runs_as_job``;
    ``none`` and ``adversarial`` read predictions that exist)."""
    return [
        (model, method)
        for model in mitigation["models"]
        for method in mitigation["methods"]
        if mitigation_method(method).runs_as_job
    ]


def mitigation_method(name: str):
    """The registered mitigation ``name`` (``medbias.studies.hurtful.mitigation.MITIGATIONS``)."""
    from medbias.studies.hurtful.mitigation import mitigation

    return mitigation(name)


def mitigation_gpus(method: str, classify_gpus: int) -> int:
    """The GPUs a mitigation job asks for: the classifiers' (``classify_gpus``) for a method that trains
    their networks again (``Mitigation.uses_classifier_gpus``), else none."""
    return classify_gpus if mitigation_method(method).uses_classifier_gpus else 0


def adversarial_encoders(downstream_models: Sequence[str], mitigation: Mapping[str, Any]) -> dict[str, str]:
    """Attribute -> the downstream model on that attribute's adversarial encoder, for the mitigated
    attributes that have one, when ``adversarial`` is a configured method and the baseline (the
    encoder they were pretrained from) is mitigated; otherwise empty."""
    if "adversarial" not in mitigation["methods"] or "baseline" not in mitigation["models"]:
        return {}
    return {a: adversarial_variant(a) for a in mitigation["attributes"] if adversarial_variant(a) in downstream_models}


# the crossings whose task x cell figures report/items.yaml captions (the schema's default)
CAPTIONED_CROSSINGS = ("gender_x_ethnicity_x_insurance", "gender_x_age_band")


def report_left_out(
    probe: bool, mitigation: bool, intersections: bool, crossing_slugs: Sequence[str]
) -> tuple[str, ...]:
    """The hurtful report items a run does not make: Table D4 without an adversarial variant, the
    mitigation stage's without a mitigated model, the intersections' without an analysed model, and
    the figure of a captioned crossing the run does not cross."""
    left_out = [] if probe else ["hurtful/tableD4_probe.md"]
    if not mitigation:
        left_out += [
            "hurtful/downstream/mitigation/summary.md",
            "hurtful/downstream/mitigation/cost.md",
            "hurtful/downstream/mitigation/gap_vs_cost.png",
        ]
    if not intersections:
        left_out.append("hurtful/downstream/intersections/worst_cells.md")
    left_out += [
        f"hurtful/downstream/intersections/cells_{slug}.png"
        for slug in CAPTIONED_CROSSINGS
        if not intersections or slug not in crossing_slugs
    ]
    return tuple(left_out)
