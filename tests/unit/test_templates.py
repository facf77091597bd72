"""medbias.core.templates: one check and one filler for every study's template slots."""

from __future__ import annotations

import pytest

from medbias.core.errors import MedbiasInputError
from medbias.core.templates import WORD_SLOT, check_template, fill_template, fill_with_span


def test_fill_with_span_points_at_the_word():
    sentence, (start, end) = fill_with_span("[W] came in today.", WORD_SLOT, "the nurse")
    assert sentence == "the nurse came in today." and sentence[start:end] == "the nurse"
    sentence, (start, end) = fill_with_span("this is [W].", WORD_SLOT, "she")
    assert (sentence, start, end) == ("this is she.", 8, 11)


def test_fill_template_replaces_slots_in_order():
    assert (
        fill_template("A [IDENTITY] patient has [BIAS].", {"[IDENTITY]": "Black", "[BIAS]": "sickle cell"})
        == "A Black patient has sickle cell."
    )
    # slots are replaced one after the other, so a value may itself hold a later slot (the fill-in-the-blank
    # prompts' [MASK] becomes the tokenizer's mask token after [RACE] is filled)
    assert fill_template("[RACE] pt has [MASK].", {"[RACE]": "white", "[MASK]": "<mask>"}) == "white pt has <mask>."


@pytest.mark.parametrize("template", ["This is here.", "[W] and [W]."])
def test_a_template_without_exactly_one_slot_names_the_key(template):
    with pytest.raises(MedbiasInputError) as error:
        check_template(template, [WORD_SLOT], "plm.seat.templates.person")
    assert (
        str(error.value) == f"config key 'plm.seat.templates.person': template {template!r} needs exactly one [W] slot"
    )
    check_template("This is [W].", [WORD_SLOT], "plm.seat.templates.person")  # one slot: no error
