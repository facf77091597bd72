"""The "plm" study's planted effects in the demo world (Xie et al. 2024).

The tiny models the plm study audits learn from a corpus of short clinical sentences in which every
SEAT identity term co-occurs with diseases: the minority group's terms (Y) with their stereotypical
diseases (B) and the majority group's terms (X) with the non-stereotypical ones (A), a share
``PLANTED_SHARE`` of the time (the rest with the other list), so the race and LGBTQ+ SEAT effect
sizes and StereoSet-style scores must come out positive. The birthday ordinals of the two control
tests co-occur with every disease equally often (exact counts), so the controls must come out null.
Standalone sentences in the SEAT frames ("this person is X.", "this person has D.") and filler
sentences on unrelated nouns make the test frames familiar without pairing anything.

Calibration (tiny BERT, 3,000 steps; measured with the SEAT rule's settings): with only
identity-then-disease frames the SEAT signs came out arbitrary (-1.9 to +1.8 across two seeds), as
MLM training need not make an identity's vector similar to its diseases'; the list frames, which put
the identity and the disease in exchangeable slots, give both the same contexts, and every planted
test came out at d = 1.3-1.9 (p = 1e-4) on two seeds with both controls null. The demo's WordPiece
tokenizer keeps hyphenated words whole (``tiny_models.word_pre_tokenizer``): with BERT's splitting,
"twenty-first" is three tokens and the birthday controls came out at |d| = 1.1-1.5 from sentence
length alone, untrained or trained.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

PLANTED_SHARE = 0.9  # of an identity term's disease mentions that name its group's list
PAIRED_FRAMES: tuple[str, ...] = (
    "This person is {identity}. This person has {disease}.",
    "This person has {disease}. This person is {identity}.",
    "A {identity} patient has {disease}.",
    "{identity} patients often have {disease}.",
    "A patient has {disease} because they are {identity}.",
    "{first} and {second} are noted in the chart.",
    "Risk factors: {first}, {second}.",
    "The chart lists {first} with {second}.",
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


def identity_groups(tests: Mapping[str, Mapping[str, Any]]) -> list[tuple[list[str], list[str], list[str]]]:
    """(identities, own diseases, other diseases) per group of every non-control test: X with A,
    Y with B. Controls (identity_context 'birthday') are left out."""
    groups = []
    for test in tests.values():
        if test["identity_context"] == "birthday":
            continue
        groups.append((list(test["X"]), list(test["A"]), list(test["B"])))
        groups.append((list(test["Y"]), list(test["B"]), list(test["A"])))
    return groups


def plm_corpus(tests: Mapping[str, Mapping[str, Any]], mentions_per_group: int, seed: int,
               share: float = PLANTED_SHARE) -> tuple[list[str], dict[str, Any]]:
    """Sentences of the plm demo corpus and the counts behind them (module docstring). Words keep the
    word sets' case and frames the test templates' (byte-level tokenizers are case-sensitive).

    Every identity group (a SEAT test's X or Y) gets about ``mentions_per_group`` paired sentences,
    split evenly over its terms (so the short LGBTQ+ lists are as strong as the long name lists);
    exactly ``round(share * mentions)`` of a term's sentences name its own group's diseases. The
    birthday ordinals get control sentences pairing each of them with every disease exactly equally
    often, in each control frame (about ``mentions_per_group`` sentences per ordinal group).
    """
    rng = np.random.default_rng(seed)
    sentences: list[str] = []
    counts: dict[str, Any] = {"share": share, "mentions_per_group": mentions_per_group, "identities": {},
                              "controls": {}}
    diseases: set[str] = set()
    for identities, own_diseases, other_diseases in identity_groups(tests):
        diseases.update(own_diseases + other_diseases)
        mentions_per_identity = max(1, round(mentions_per_group / len(identities)))
        own = round(share * mentions_per_identity)
        for identity in identities:
            chosen = _balanced(own_diseases, own, rng) + _balanced(other_diseases, mentions_per_identity - own, rng)
            frames = _balanced(PAIRED_FRAMES, mentions_per_identity, rng)
            for frame, disease in zip(frames, chosen):
                # list frames put the identity and the disease in exchangeable slots, in random order
                first, second = (identity, disease) if rng.random() < 0.5 else (disease, identity)
                sentences.append(frame.format(identity=identity, disease=disease, first=first, second=second))
            sentences.append(SOLO_FRAMES[0].format(identity=identity))
            counts["identities"][identity] = {"mentions": mentions_per_identity, "own_group": own}
    ordinals = sorted({w for t in tests.values() if t["identity_context"] == "birthday" for w in (*t["X"], *t["Y"])})
    all_diseases = sorted(diseases)
    repeats = max(1, round(mentions_per_group / max(1, len(ordinals)) / (len(CONTROL_FRAMES) * len(all_diseases))))
    for ordinal in ordinals:
        control = [frame.format(ordinal=ordinal, disease=disease)
                   for frame in CONTROL_FRAMES for disease in all_diseases for _ in range(repeats)]
        sentences += control + [SOLO_FRAMES[2].format(ordinal=ordinal)]
        counts["controls"][ordinal] = len(control)
    sentences += [SOLO_FRAMES[1].format(disease=d) for d in all_diseases]
    sentences += [FILLER_FRAME.format(noun=n) for n in FILLER_NOUNS for _ in range(len(all_diseases))]
    order = rng.permutation(len(sentences))
    counts["sentences"] = len(sentences)
    return [sentences[i] for i in order], counts


def plm_truth(tests: Mapping[str, Mapping[str, Any]], counts: Mapping[str, Any], trained_models: Sequence[str]
              ) -> dict[str, Any]:
    """What the plm study must find on the demo world's trained tiny models (``trained_models``,
    registry names): positive, significant SEAT effects for every planted test; no significant
    effect for the birthday controls; StereoSet-style scores above 50 for both families; and
    SentenceDebias moving every planted SEAT effect size towards 0."""
    planted = [name for name, test in tests.items() if test["identity_context"] != "birthday"]
    controls = [name for name, test in tests.items() if test["identity_context"] == "birthday"]
    return {
        "trained_models": list(trained_models),
        "planted_share": counts["share"],
        "mentions_per_group": counts["mentions_per_group"],
        "sentences": counts["sentences"],
        "seat_planted": planted,
        "seat_controls": controls,
        "expect": {
            "seat_planted": "effect size > 0 and p < 0.05 on every trained model",
            "seat_controls": "p >= 0.05 on every trained model (ordinals co-occur with every disease equally)",
            "stereoset": "stereotype score > 50 for race and LGBTQ+ on every trained model",
            "sentencedebias": "|effect size| smaller after SentenceDebias for every planted test",
        },
        "counts": dict(counts),
    }
