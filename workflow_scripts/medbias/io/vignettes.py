"""Clinical vignette sets: the file format, read and checked whole before any job.

A set is one YAML file (the shipped ones are under ``config/resources/vignettes/``)::

    title: Pain management               # shown with the tables
    written_by: who wrote the cases
    license: CC-BY-4.0
    attributes:                          # demographic attribute -> value -> the slots it fills
      race: {Black: {race: Black}, White: {race: white}}
      gender:
        woman: {gender: woman, they: she, them: her, their: her}
        man: {gender: man, they: he, them: him, their: his}
    names:                               # the patient's name, by the values of the attributes in `by`
      by: [race, gender]
      lists: {Black/woman: [Imani Jackson, Keisha Robinson], ...}   # two or more per cell
    details: {town: [Springfield, Fairview]}   # slots whose value should change nothing (control swaps)
    neutral: {race: "", gender: patient, they: they, them: them, their: their, name: The patient}
    contrasts: [[race, Black, White], [gender, woman, man]]        # attribute, value, reference
    decisions:
      opioid:
        question: Would you offer {them} an opioid for this pain?
        options: {"Yes": 1, "No": 0}     # option text -> its value (the expected decision weighs them)
        compared: "No"                   # the option whose probability the contrasts compare
    vignettes:
      - {id: cancer_acute_1, case: cancer_acute_1, context: acute cancer pain, text: "{name} is ...",
         decisions: [opioid]}

Slots are written ``{slot}`` in a vignette's text and a decision's question; ``{They}`` is the slot
``they`` with a capital first letter. A demographic version fills every slot: one value of each
attribute, one name of its cell, one value of each detail; the neutral version fills the demographic
slots with ``neutral`` (the case without demographic detail, the model's baseline).
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medbias.core.errors import MedbiasInputError
from medbias.io.yamlfile import load_yaml

NAME_SLOT = "name"


@dataclass(frozen=True)
class Decision:
    """A closed question: its text, the options with their values, the option compared."""

    name: str
    question: str
    options: dict[str, float]
    compared: str


@dataclass(frozen=True)
class Vignette:
    """One case text and the decisions asked of it; ``case`` groups phrasings of one case."""

    id: str
    case: str
    context: str
    text: str
    decisions: tuple[str, ...]


@dataclass(frozen=True)
class VignetteSet:
    """A vignette file, checked (module docstring)."""

    name: str
    path: str
    title: str
    written_by: str
    license: str
    attributes: dict[str, dict[str, dict[str, str]]]
    name_by: tuple[str, ...]
    names: dict[str, list[str]]
    details: dict[str, list[str]]
    neutral: dict[str, str]
    contrasts: tuple[tuple[str, str, str], ...]
    decisions: dict[str, Decision]
    vignettes: tuple[Vignette, ...]


def slots_of(text: str) -> list[str]:
    """The slot names a text writes as ``{slot}``, in order (``{They}`` is slot ``They``)."""
    try:
        return [field for _, field, _, _ in string.Formatter().parse(text) if field is not None]
    except ValueError as error:
        raise MedbiasInputError(f"unbalanced braces ({error})") from None


def fill_slots(text: str, values: Mapping[str, str]) -> str:
    """``text`` with every slot filled from ``values`` (``{They}``: ``they``'s value capitalised) and
    runs of spaces (an empty value's) closed up."""
    filled = {}
    for slot in slots_of(text):
        if slot in values:
            filled[slot] = values[slot]
        else:
            value = values[slot[:1].lower() + slot[1:]]
            filled[slot] = value[:1].upper() + value[1:]
    import re

    return re.sub(r" +([,.;:?])", r"\1", re.sub(r" {2,}", " ", text.format(**filled))).strip()


def _mapping(value: Any, where: str) -> dict:
    if not isinstance(value, dict) or not value:
        raise MedbiasInputError(f"{where}: expected a non-empty mapping")
    return value


def _strings(value: Any, where: str, minimum: int = 1) -> list[str]:
    if not isinstance(value, list) or len(value) < minimum or not all(isinstance(v, str) and v.strip() for v in value):
        raise MedbiasInputError(f"{where}: expected a list of at least {minimum} non-empty strings")
    return value


def cell_key(values: Mapping[str, str], by: Sequence[str]) -> str:
    """The names table's key of a version: its values of the ``by`` attributes joined with '/'."""
    return "/".join(values[a] for a in by)


# long: one check per key of the vignette format, each with its one-line error, in the file's order
def read_vignette_set(name: str, path: str | Path) -> VignetteSet:
    """The vignette set in ``path``, checked whole: every key the format needs, every slot of every
    text filled by every demographic version and by the neutral one, names for every cell, options
    that are not empty, contrasts between values that exist. A fault stops with one line naming the
    file, the vignette or decision, and the slot or key."""
    data = load_yaml(path)
    where = str(path)
    for key in ("attributes", "names", "neutral", "decisions", "vignettes"):
        if key not in data:
            raise MedbiasInputError(f"{where}: key '{key}' is missing")
    attributes = {
        attribute: {
            value: {
                slot: str(fill) for slot, fill in _mapping(slots, f"{where}: attributes.{attribute}.{value}").items()
            }
            for value, slots in _mapping(values, f"{where}: attributes.{attribute}").items()
        }
        for attribute, values in _mapping(data["attributes"], f"{where}: attributes").items()
    }
    names_block = _mapping(data["names"], f"{where}: names")
    name_by = tuple(_strings(names_block.get("by"), f"{where}: names.by"))
    for attribute in name_by:
        if attribute not in attributes:
            raise MedbiasInputError(f"{where}: names.by: {attribute!r} is not an attribute ({', '.join(attributes)})")
    lists = _mapping(names_block.get("lists"), f"{where}: names.lists")
    names = {str(k): _strings(v, f"{where}: names.lists.{k}", minimum=1) for k, v in lists.items()}
    details = {
        slot: _strings(values, f"{where}: details.{slot}", minimum=2)
        for slot, values in (data.get("details") or {}).items()
    }
    neutral = {slot: str(v) for slot, v in _mapping(data["neutral"], f"{where}: neutral").items()}
    decisions = {}
    for key, block in _mapping(data["decisions"], f"{where}: decisions").items():
        block = _mapping(block, f"{where}: decisions.{key}")
        options = _mapping(block.get("options"), f"{where}: decisions.{key}.options")
        for option, value in options.items():
            if not isinstance(option, str) or not option.strip():
                raise MedbiasInputError(f"{where}: decision {key}: option {option!r} is empty")
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise MedbiasInputError(f"{where}: decision {key}: option {option!r} has value {value!r}, not a number")
        if len(options) < 2:
            raise MedbiasInputError(f"{where}: decision {key}: a closed question needs two or more options")
        compared = block.get("compared")
        if compared not in options:
            raise MedbiasInputError(
                f"{where}: decision {key}: compared option {compared!r} is not one of its options "
                f"({', '.join(options)})"
            )
        if not isinstance(block.get("question"), str) or not block["question"].strip():
            raise MedbiasInputError(f"{where}: decision {key}: key 'question' is missing or empty")
        decisions[key] = Decision(key, block["question"], {o: float(v) for o, v in options.items()}, compared)
    if not isinstance(data["vignettes"], list) or not data["vignettes"]:
        raise MedbiasInputError(f"{where}: vignettes: expected a non-empty list")
    vignettes, seen = [], set()
    for i, item in enumerate(data["vignettes"]):
        item = _mapping(item, f"{where}: vignettes[{i}]")
        vid = str(item.get("id", "")).strip()
        if not vid or vid in seen:
            raise MedbiasInputError(f"{where}: vignettes[{i}]: id {vid!r} is missing or repeated")
        seen.add(vid)
        asked = tuple(_strings(item.get("decisions"), f"{where}: vignette {vid}: decisions"))
        for key in asked:
            if key not in decisions:
                raise MedbiasInputError(
                    f"{where}: vignette {vid}: decision {key!r} is not defined ({', '.join(decisions)})"
                )
        if not isinstance(item.get("text"), str) or not item["text"].strip():
            raise MedbiasInputError(f"{where}: vignette {vid}: key 'text' is missing or empty")
        vignettes.append(Vignette(vid, str(item.get("case", vid)), str(item.get("context", "")), item["text"], asked))
    contrasts = []
    for contrast in data.get("contrasts") or []:
        if not (isinstance(contrast, list) and len(contrast) == 3):
            raise MedbiasInputError(f"{where}: contrasts: {contrast!r} is not [attribute, value, reference]")
        attribute, value, reference = (str(c) for c in contrast)
        if attribute not in attributes or value not in attributes[attribute] or reference not in attributes[attribute]:
            raise MedbiasInputError(f"{where}: contrasts: {contrast!r} names a value its attribute does not have")
        contrasts.append((attribute, value, reference))
    vset = VignetteSet(
        name,
        str(path),
        str(data.get("title", name)),
        str(data.get("written_by", "")),
        str(data.get("license", "")),
        attributes,
        name_by,
        names,
        details,
        neutral,
        tuple(contrasts),
        decisions,
        tuple(vignettes),
    )
    check_slots(vset)
    return vset


def _cells(vset: VignetteSet) -> list[dict[str, str]]:
    import itertools

    return [
        dict(zip(vset.name_by, values)) for values in itertools.product(*(vset.attributes[a] for a in vset.name_by))
    ]


def check_slots(vset: VignetteSet) -> None:
    """Every cell of the names table has a list (all of one length, two or more for the same-group
    names control), and every slot a vignette or its questions write is filled by every demographic
    version and by the neutral version."""
    lengths = set()
    for cell in _cells(vset):
        key = cell_key(cell, vset.name_by)
        if key not in vset.names:
            raise MedbiasInputError(f"{vset.path}: names.lists has no names for {key!r}")
        lengths.add(len(vset.names[key]))
    if len(lengths) > 1:
        raise MedbiasInputError(
            f"{vset.path}: names.lists: every cell needs the same number of names (found {sorted(lengths)})"
        )
    for vignette in vset.vignettes:
        texts = [("text", vignette.text)] + [(f"decision {d}", vset.decisions[d].question) for d in vignette.decisions]
        for part, text in texts:
            try:
                slots = slots_of(text)
            except MedbiasInputError as error:
                raise MedbiasInputError(f"{vset.path}: vignette {vignette.id}, {part}: {error}") from None
            for slot in slots:
                base = slot[:1].lower() + slot[1:]
                if base in vset.details:
                    continue
                filled_by_attribute = any(
                    all(base in fills for fills in values.values()) for values in vset.attributes.values()
                )
                if base != NAME_SLOT and not filled_by_attribute:
                    partly = [a for a, values in vset.attributes.items() if any(base in f for f in values.values())]
                    attribute = partly[0] if partly else next(iter(vset.attributes))
                    value = next(v for v, f in vset.attributes[attribute].items() if base not in f)
                    lacking = f"{attribute}={value}"
                    raise MedbiasInputError(
                        f"{vset.path}: vignette {vignette.id}, {part}: slot {{{slot}}} is not filled by the "
                        f"demographic version {lacking}" + ("" if partly else " (no attribute fills it)")
                    )
                if base not in vset.neutral:
                    raise MedbiasInputError(
                        f"{vset.path}: vignette {vignette.id}, {part}: slot {{{slot}}} is not filled by the neutral "
                        "version"
                    )


def read_vignette_sets(sets: Mapping[str, str]) -> list[VignetteSet]:
    """Every configured set (name -> file), checked; a missing file is one line naming the key."""
    out = []
    for name, path in sets.items():
        if not Path(path).is_file():
            raise MedbiasInputError(f"config key 'vignettes.sets.{name}': file {path} does not exist")
        out.append(read_vignette_set(name, path))
    return out
