"""Template sentences, one home for their slots: the check that a template holds each slot exactly
once (one error line naming the config key) and the filling of slots with words.

The slots of the studies: ``[W]`` (SEAT, Direct Bias: the word put in context), ``[IDENTITY]`` and
``[BIAS]`` (Xie et al.'s StereoSet-style templates), ``[GEND]`` and the attribute slot of Kurita et
al.'s log-probability templates, ``[RACE]`` and ``[MASK]`` (Zhang et al.'s fill-in-the-blank prompts).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from medbias.core.errors import MedbiasInputError

WORD_SLOT = "[W]"
IDENTITY_SLOT, BIAS_SLOT = "[IDENTITY]", "[BIAS]"


def check_template(template: str, slots: Iterable[str], where: str) -> None:
    """Stop with one line naming the config key ``where`` unless ``template`` holds every slot exactly once."""
    for slot in slots:
        if template.count(slot) != 1:
            raise MedbiasInputError(f"config key '{where}': template {template!r} needs exactly one {slot} slot")


def check_templates(templates: Iterable[str] | Mapping[str, str], slots: Iterable[str], where: str) -> None:
    """``check_template`` of every template of a list (key ``where``) or a named map (key
    ``where.<name>``); an empty list or map is one error too."""
    slots = list(slots)
    if not templates:
        raise MedbiasInputError(f"config key '{where}': no templates")
    named = templates.items() if isinstance(templates, Mapping) else ((None, t) for t in templates)
    for name, template in named:
        check_template(template, slots, where if name is None else f"{where}.{name}")


def fill_template(template: str, values: Mapping[str, str]) -> str:
    """``template`` with every occurrence of each slot replaced by its value, slot by slot in order."""
    for slot, value in values.items():
        template = template.replace(slot, value)
    return template


def fill_with_span(template: str, slot: str, word: str) -> tuple[str, tuple[int, int]]:
    """``template`` with its first ``slot`` replaced by ``word``, and the character span of ``word``
    in the sentence (for reading the word's own pieces out of a contextual model)."""
    start = template.index(slot)
    return template.replace(slot, word, 1), (start, start + len(word))
