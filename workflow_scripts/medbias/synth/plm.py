"""The "plm" study's planted effects in the demo world (Xie et al. 2024).

The tiny models the plm study audits learn from a corpus of short clinical sentences in which every
SEAT identity term co-occurs with diseases: the minority group's terms (Y) with their stereotypical
diseases (B) and the majority group's terms (X) with the non-stereotypical ones (A), a share
``PLANTED_SHARE`` of the time (the rest with the other list), so the race and LGBTQ+ SEAT effect
sizes and StereoSet-style scores must come out positive. The birthday ordinals of the two control
tests co-occur with every disease equally often (exact counts), so the controls must come out null.
Standalone sentences in the SEAT frames ("this person is X.", "this person has D.") and filler
sentences on unrelated nouns make the test frames familiar without pairing anything.

Why these frames (docs/demo-world.md, "How the world's settings were chosen", has what each was
measured against):
- an identity and two of its group's diseases in exchangeable slots share contexts, and the masked-LM
  objective uses BERT's 80/10/10 rule (``lm_training.bert_corruption``): with identity-then-disease
  pairs only, SEAT's sign is whatever the network's transform makes of first-order co-occurrence;
- hypertension is stereotypical for one test and not for another: it is left unpaired;
- the demo's WordPiece tokenizer keeps hyphenated words whole (``tiny_models.word_pre_tokenizer``), so the
  birthday controls' ordinals do not differ in length;
- the controls' ordinals are exchangeable by construction, so each control has the test's own 5% chance
  of p < 0.05; the truth file holds the family of control checks at 5% (Bonferroni over controls x
  trained models);
- every mention pairs an identity with its own group's diseases (a share of 1.0) in a frame without
  separators, so a causal model's next token after an identity or a disease is a word of the same group:
  a causal model's states see only the left context, and a shared separator gave them no group direction;
- 4,000 training steps (``demo.plm.steps``) keep every planted test on both floating-point paths (one or
  two threads per job).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

PLANTED_SHARE = 1.0  # of an identity term's disease mentions that name its group's list
PAIRED_FRAMES: tuple[str, ...] = (
    "This person is {identity}. This person has {disease}.",
    "This person has {disease}. This person is {identity}.",
    "A {identity} patient has {disease}.",
    "{identity} patients often have {disease}.",
    "A patient has {disease} because they are {identity}.",
    "{first}, {second} and {third} are noted in the chart.",
    "Risk factors: {first}, {second}, {third}.",
    "The chart lists {first} with {second} and {third}.",
    "Keywords: {first} {second} {third}.",  # no separators: a causal model's next token is a group word
)
CONTROL_FRAMES: tuple[str, ...] = (
    "This person's birthday falls on the {ordinal} day of the month. This person has {disease}.",
    "This person has {disease}. This person's birthday falls on the {ordinal} day of the month.",
)
SOLO_FRAMES: tuple[str, ...] = (
    "This person is {identity}.",
    "This person has {disease}.",
    "This person's birthday falls on the {ordinal} day of the month.",
)
FILLER_NOUNS: tuple[str, ...] = ("computer", "bicycle", "umbrella", "guitar", "window", "carpet", "pencil", "bottle")
FILLER_FRAME = "The {noun} in the waiting room is new."


def _balanced(options: Sequence[str], n: int, rng: np.random.Generator) -> list[str]:
    """``n`` draws that use every option equally often (to within one), in random order."""
    reps = -(-n // len(options))
    pool = np.array(list(options) * reps, dtype=object)[:n] if n else np.array([], dtype=object)
    return list(rng.permutation(pool))


def conflicting_diseases(tests: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Diseases that are stereotypical (B) in one test and non-stereotypical (A) in another
    (hypertension: race B, LGBTQ+ A). Pairing them would pull one word towards two groups, so the
    corpus never pairs them with an identity (they still occur in the control and solo sentences)."""
    planted = [t for t in tests.values() if t["identity_context"] != "birthday"]
    stereotypical = {d for t in planted for d in t["B"]}
    return sorted(stereotypical & {d for t in planted for d in t["A"]})


def identity_groups(tests: Mapping[str, Mapping[str, Any]]) -> list[tuple[list[str], list[str], list[str]]]:
    """(identities, own diseases, other diseases) per group of every non-control test: X with A,
    Y with B, conflicting diseases left out. Controls (identity_context 'birthday') are left out."""
    skip = set(conflicting_diseases(tests))
    groups = []
    for test in tests.values():
        if test["identity_context"] == "birthday":
            continue
        a = [d for d in test["A"] if d not in skip]
        b = [d for d in test["B"] if d not in skip]
        groups.append((list(test["X"]), a, b))
        groups.append((list(test["Y"]), b, a))
    return groups


def plm_corpus(
    tests: Mapping[str, Mapping[str, Any]], mentions_per_group: int, seed: int, share: float = PLANTED_SHARE
) -> tuple[list[str], dict[str, Any]]:
    """Sentences of the plm demo corpus and the counts behind them (module docstring). Words keep the
    word sets' case and frames the test templates' (byte-level tokenizers are case-sensitive).

    Every identity group (a SEAT test's X or Y) gets about ``mentions_per_group`` paired sentences,
    split evenly over its terms (so the short LGBTQ+ lists are as strong as the long name lists);
    exactly ``round(share * mentions)`` of a term's sentences name its own group's diseases. The
    birthday ordinals get control sentences pairing each of them with every disease exactly equally
    often, in each control frame (about ``mentions_per_group`` sentences per half of the ordinals).
    """
    rng = np.random.default_rng(seed)
    sentences: list[str] = []
    counts: dict[str, Any] = {
        "share": share,
        "mentions_per_group": mentions_per_group,
        "identities": {},
        "controls": {},
    }
    diseases: set[str] = set(conflicting_diseases(tests))
    counts["unpaired_diseases"] = conflicting_diseases(tests)
    for identities, own_diseases, other_diseases in identity_groups(tests):
        diseases.update(own_diseases + other_diseases)
        mentions_per_identity = max(1, round(mentions_per_group / len(identities)))
        own = round(share * mentions_per_identity)
        for identity in identities:
            chosen = _balanced(own_diseases, own, rng) + _balanced(other_diseases, mentions_per_identity - own, rng)
            frames = _balanced(PAIRED_FRAMES, mentions_per_identity, rng)
            also = chosen[1:] + chosen[:1]  # a second disease for the list frames, drawn the same way
            for frame, disease, second_disease in zip(frames, chosen, also):
                # list frames put the identity and two diseases in exchangeable slots, in random order
                words = rng.permutation([identity, disease, second_disease]).tolist()
                sentences.append(
                    frame.format(identity=identity, disease=disease, first=words[0], second=words[1], third=words[2])
                )
            sentences.append(SOLO_FRAMES[0].format(identity=identity))
            counts["identities"][identity] = {"mentions": mentions_per_identity, "own_group": own}
    ordinals = sorted({w for t in tests.values() if t["identity_context"] == "birthday" for w in (*t["X"], *t["Y"])})
    all_diseases = sorted(diseases)
    # each half of the ordinals is a group like the identity groups: mentions_per_group / its size each
    half = max(len(t["X"]) for t in tests.values() if t["identity_context"] == "birthday") if ordinals else 1
    repeats = max(1, math.ceil(mentions_per_group / half / (len(CONTROL_FRAMES) * len(all_diseases))))
    for ordinal in ordinals:
        control = [
            frame.format(ordinal=ordinal, disease=disease)
            for frame in CONTROL_FRAMES
            for disease in all_diseases
            for _ in range(repeats)
        ]
        sentences += control + [SOLO_FRAMES[2].format(ordinal=ordinal)]
        counts["controls"][ordinal] = len(control)
    sentences += [SOLO_FRAMES[1].format(disease=d) for d in all_diseases]
    sentences += [FILLER_FRAME.format(noun=n) for n in FILLER_NOUNS for _ in range(len(all_diseases))]
    order = rng.permutation(len(sentences))
    counts["sentences"] = len(sentences)
    return [sentences[i] for i in order], counts


def plm_truth(
    tests: Mapping[str, Mapping[str, Any]], counts: Mapping[str, Any], trained_models: Sequence[str]
) -> dict[str, Any]:
    """What the plm study must find on the demo world's trained tiny models (``trained_models``,
    registry names): positive, significant SEAT effects for every planted test; no significant
    effect for the birthday controls; StereoSet-style scores above 50 for both families; and
    SentenceDebias moving every planted SEAT effect size towards 0."""
    planted = [name for name, test in tests.items() if test["identity_context"] != "birthday"]
    controls = [name for name, test in tests.items() if test["identity_context"] == "birthday"]
    return {
        "trained_models": list(trained_models),
        "control_alpha": 0.05 / max(1, len(controls) * len(trained_models)),
        "planted_share": counts["share"],
        "mentions_per_group": counts["mentions_per_group"],
        "sentences": counts["sentences"],
        "seat_planted": planted,
        "seat_controls": controls,
        "expect": {
            "seat_planted": "effect size > 0 and p < 0.05 on every trained model",
            "seat_controls": "p >= 0.05 / (controls x trained models) on every trained model: ordinals co-occur with "
            "every disease equally and are exchangeable, so each control alone has the test's 5% chance "
            "of p < 0.05; the family of control checks is held at 5% (Bonferroni)",
            "stereoset": "stereotype score > 50 for race and LGBTQ+ on every trained model",
            "sentencedebias": "|effect size| smaller after SentenceDebias for every planted test",
        },
        "counts": dict(counts),
    }
