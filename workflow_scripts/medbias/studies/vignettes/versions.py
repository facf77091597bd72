"""Every version of every vignette of a set, and the question put to the model for each decision.

A demographic version takes one value of each attribute, one name of its cell (by index) and one
value of each detail; a neutral version fills the demographic slots with the set's neutral values
(one per combination of details). Version columns are strings, so that matched pairs compare alike.
"""

from __future__ import annotations

import itertools

import pandas as pd

from medbias.io.vignettes import NAME_SLOT, VignetteSet, cell_key, fill_slots
from medbias.metrics.vignette_contrasts import Contrast, set_contrasts

NEUTRAL = "neutral"


def version_table(vset: VignetteSet) -> pd.DataFrame:
    """One row per version: ``version`` (its id), ``neutral``, one column per attribute ("" when
    neutral), ``name_index`` ("" when neutral), one column per detail, and ``fills`` (slot -> text)."""
    attributes = list(vset.attributes)
    detail_slots = list(vset.details)
    detail_combos = list(itertools.product(*(vset.details[s] for s in detail_slots)))
    names_per_cell = len(next(iter(vset.names.values())))
    rows = []
    for values in itertools.product(*(vset.attributes[a] for a in attributes)):
        chosen = dict(zip(attributes, values))
        fills: dict[str, str] = {}
        for attribute, value in chosen.items():
            fills.update(vset.attributes[attribute][value])
        names = vset.names[cell_key(chosen, vset.name_by)]
        for index, detail_values in itertools.product(range(names_per_cell), detail_combos):
            details = dict(zip(detail_slots, detail_values))
            rows.append(
                {
                    "version": ";".join(
                        [
                            *(f"{a}={v}" for a, v in chosen.items()),
                            f"name={index}",
                            *(f"{s}={v}" for s, v in details.items()),
                        ]
                    ),
                    "neutral": False,
                    **chosen,
                    "name_index": str(index),
                    **details,
                    "fills": {**fills, NAME_SLOT: names[index], **details},
                }
            )
    for detail_values in detail_combos:
        details = dict(zip(detail_slots, detail_values))
        rows.append(
            {
                "version": ";".join([NEUTRAL, *(f"{s}={v}" for s, v in details.items())]),
                "neutral": True,
                **dict.fromkeys(attributes, ""),
                "name_index": "",
                **details,
                "fills": {**vset.neutral, **details},
            }
        )
    return pd.DataFrame(rows)


def options_phrase(options) -> str:
    """The options as a question lists them: "Yes or No", "1, 2, 3, 4 or 5"."""
    options = list(options)
    return options[0] if len(options) == 1 else f"{', '.join(options[:-1])} or {options[-1]}"


def question_rows(vset: VignetteSet, template: str) -> pd.DataFrame:
    """One row per vignette x decision x version: the ids and version columns, and ``message``, the
    text put to the model (``template`` with {vignette}, {question} and {options} filled)."""
    versions = version_table(vset)
    rows = []
    for vignette in vset.vignettes:
        for key in vignette.decisions:
            decision = vset.decisions[key]
            for version in versions.to_dict("records"):
                fills = version.pop("fills")
                message = template.format(
                    vignette=fill_slots(vignette.text, fills),
                    question=fill_slots(decision.question, fills),
                    options=options_phrase(decision.options),
                )
                rows.append(
                    {
                        "set": vset.name,
                        "vignette": vignette.id,
                        "case": vignette.case,
                        "context": vignette.context,
                        "decision": key,
                        **version,
                        "message": message,
                    }
                )
    return pd.DataFrame(rows)


def contrasts_of(vset: VignetteSet) -> list[Contrast]:
    """The set's demographic contrasts and its control swaps (``metrics.vignette_contrasts``)."""
    cells = [
        dict(zip(vset.name_by, values)) for values in itertools.product(*(vset.attributes[a] for a in vset.name_by))
    ]
    return set_contrasts(
        list(vset.attributes),
        vset.contrasts,
        vset.name_by,
        cells,
        len(next(iter(vset.names.values()))),
        vset.details,
    )
