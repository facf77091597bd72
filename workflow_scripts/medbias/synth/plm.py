"""The "plm" study's planted effects in the demo world (Xie et al. 2024).

The tiny models the plm study audits learn from a corpus of short clinical sentences in which every
SEAT identity term co-occurs with diseases: the minority group's terms (Y) with their stereotypical
diseases (B) and the majority group's terms (X) with the non-stereotypical ones (A), a share
``PLANTED_SHARE`` of the time (the rest with the other list), so the race and LGBTQ+ SEAT effect
sizes and StereoSet-style scores must come out positive. The birthday ordinals of the two control
tests co-occur with every disease equally often (exact counts), so the controls must come out null.
Standalone sentences in the SEAT frames ("this person is X.", "this person has D.") and filler
sentences on unrelated nouns make the test frames familiar without pairing anything.

Why these frames (tiny BERT, 3,000 steps, the SEAT rule's settings):
- with identity-then-disease frames only, SEAT signs came out arbitrary across seeds (-1.9 to +1.8):
  a pair gives first-order co-occurrence only, whose sign the network's transform decides. List
  frames of an identity and two of its group's diseases in exchangeable slots give them shared
  contexts; still, the last layer's states of visible words (what SEAT pools) kept an arbitrary
  geometry until the masked-LM objective used BERT's 80/10/10 rule (``lm_training.bert_corruption``),
  after which every planted test came out at d = 1.85-1.95 (p = 1e-4) on both seeds tried;
- hypertension is stereotypical for one test and not for another: it is left unpaired;
- the demo's WordPiece tokenizer keeps hyphenated words whole (``tiny_models.word_pre_tokenizer``):
  with BERT's splitting "twenty-first" is three tokens and the birthday controls came out at
  |d| = 1.1-1.5 from sentence length alone, untrained or trained;
- the controls' ordinals are exchangeable by construction, so each control has the test's own 5%
  chance of p < 0.05 for any seed: with the final recipe, two of eight control results had
  p < 0.05 (0.026, 0.034), none below 0.0125; the truth file holds the family of control checks at
  5% (Bonferroni over controls x trained models);
- at a share of 0.9 the tiny GPT-2's LGBTQ+ SEAT had d = 1.90 and classic p = 9e-5 but calibrated
  p = 0.051 (the same at the default and the test scale: the plm corpus does not scale), a planted
  effect missed; a causal model's identity states see only the left context, so the 10% of
  mentions with the other group's diseases weigh more. At a share of 1.0 (one seed): GPT-2 race
  calibrated p 1e-4 and 2e-4, LGBTQ+ 1e-4, controls 0.11 and 0.71; tiny BERT race 0.0017 and
  0.0021, LGBTQ+ 1e-4, controls 0.59 and 0.12;
- that recipe did not keep the GPT-2's LGBTQ+ test across training paths: calibrated p 1e-4 in one
  run, 0.19 and 0.63 in the next two (d 1.87 and -0.80), while its StereoSet-style LGBTQ+ score was
  100 in all three. A causal model's last-layer state at a word is trained to predict the next token,
  and after an identity or a disease the corpus always put a comma, a period or a fixed word there,
  the same for every group (with the short LGBTQ+ lists, 167 or 214 mentions per term, the model can
  also predict a term's diseases from the term alone). The separator-free keyword frame makes the
  next token a word of the same group (identity or disease), so the pooled states share a group
  direction. With it (planted test world, one thread per job, seeds 1, 2, 3 and 1234): every planted
  test of both models found, 24 of 24 (GPT-2 LGBTQ+ calibrated p 1e-4 to 0.003, d 1.76-1.93; race
  1e-4 to 0.0015; BERT 1e-4 to 0.0135); controls: classic p 0.013-0.97 (none below the truth file's
  0.0125), calibrated p below 0.05 in 1 of 16 (GPT-2 control_1, seed 1: 0.003); StereoSet-style ss
  88-97 (race) and 100 (LGBTQ+);
- the default demo (two threads per job, another floating-point path) at 3,000 steps missed the
  BERT's race_seat_2 (d 1.90, calibrated p 0.071; race_seat_1 0.024; the same on two runs, as the
  path is deterministic): its calibrated null's centre had moved to 0.024 of a 0.049 mean
  difference. At 4,000 steps (config ``demo.plm.steps``), on both paths, every planted test of both
  models was found (calibrated p 1e-4 to 0.0033; d 1.70-1.95) and the controls stayed clean
  (classic p 0.11-0.88, calibrated 0.21-0.92).
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
