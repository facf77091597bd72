"""Study "plm" (Xie et al. 2024): SEAT word sets, contextualising templates and sentence encoders.

SEAT (May et al. 2019) puts every word of a set into template sentences and runs the WEAT of
``medbias.metrics.association`` on the sentence vectors: X and Y are the identity sentences, A and B
the disease sentences; a positive effect size means X's sentences sit closer to A's than Y's do (the
majority group with the non-stereotypical diseases, the minority group with its stereotypical ones).
Sentence vectors are the attention-mask-aware mean of the last hidden states (the encoder's for
seq2seq models, the decoder stack's for causal models, with BOS in front).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from medbias.errors import MedbiasInputError

SLOT = "[W]"
SEAT_SETS = ("X", "Y", "A", "B")


def read_seat_tests(path: str | Path) -> dict[str, dict[str, Any]]:
    """The SEAT tests of a word-set file (``tests: {name: {X, Y, A, B, identity_context}}``); a missing
    or empty set, or a word listed twice in one set, is one error naming the file, test and set."""
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    tests = data.get("tests")
    if not isinstance(tests, dict) or not tests:
        raise MedbiasInputError(f"{path}: no 'tests' mapping of SEAT tests")
    for name, test in tests.items():
        for key in (*SEAT_SETS, "identity_context"):
            if not test.get(key):
                raise MedbiasInputError(f"{path}: test '{name}' has no (or an empty) '{key}'")
        for key in SEAT_SETS:
            words = [str(w) for w in test[key]]
            repeated = sorted({w for w in words if words.count(w) > 1})
            if repeated:
                raise MedbiasInputError(f"{path}: test '{name}' set {key} lists {repeated[0]!r} more than once")
            test[key] = words
    return tests


def contextualise(words: Sequence[str], templates: Sequence[str], where: str) -> list[tuple[str, str]]:
    """(word, sentence) for every word in every template; a template without exactly one [W] slot is
    one error naming ``where`` (the config key) and the template."""
    for template in templates:
        if template.count(SLOT) != 1:
            raise MedbiasInputError(f"config key '{where}': template {template!r} needs exactly one {SLOT} slot")
    return [(word, template.replace(SLOT, word)) for word in words for template in templates]


def seat_sentences(test: Mapping[str, Any], templates: Mapping[str, Sequence[str]]) -> dict[str, list[tuple[str, str]]]:
    """The contextualised sentences of each set of a SEAT test: identities with the templates of the
    test's ``identity_context``, diseases with the ``disease`` templates."""
    context = test["identity_context"]
    if context not in templates:
        raise MedbiasInputError(f"config key 'plm.seat.templates': no templates for identity context {context!r}")
    return {
        "X": contextualise(test["X"], templates[context], f"plm.seat.templates.{context}"),
        "Y": contextualise(test["Y"], templates[context], f"plm.seat.templates.{context}"),
        "A": contextualise(test["A"], templates["disease"], "plm.seat.templates.disease"),
        "B": contextualise(test["B"], templates["disease"], "plm.seat.templates.disease"),
    }


def sentence_encoder(model, kind: str):
    """The module whose last hidden states represent a sentence: the base model of a masked or
    causal LM, the encoder of a seq2seq LM."""
    if kind == "seq2seq":
        return model.get_encoder()
    if kind in ("masked", "causal"):
        return model.base_model
    raise MedbiasInputError(f"unknown model kind {kind!r} (masked, causal, seq2seq)")
