"""The "mental" study's planted effects in the demo world (Sogancioglu et al. 2023).

1. Label bias (``medbias.synth.annotations.PLANTED_LABEL_BIAS``): men's notes are labelled with
   alcohol abuse beyond what they say, so gender words predict that label.
2. Embedding bias: the "bio" word vectors (BioWordVec's stand-in) learn from extra sentences in
   which depression synonyms go with male words (``DEPRESSION_MALE_SHARE['bio']``); the "general"
   vectors (W2VecNews' stand-in) learn from the same sentences with both genders alike (the
   control). Direct Bias of the bio vectors must lean male and exceed the general vectors'.

Sentences pair one gender word with two depression synonyms, or (the other gender, so that every
gender word is equally frequent) with two physical symptoms, in frames of words found nowhere else
in the corpora. Gender words come from the ten definitional pairs, so every pair sees the same
treatment. Counts are exact, not coin flips.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from medbias.synth.annotations import PLANTED_LABEL_BIAS

DEPRESSION_MALE_SHARE: dict[str, float] = {"general": 0.5, "bio": 1.0}
DEPRESSION_SENTENCES = 4000  # per corpus: half with depression synonyms, half with symptoms
PHYSICAL_SYMPTOMS: tuple[str, ...] = (
    "cough",
    "fever",
    "rash",
    "nausea",
    "vomiting",
    "diarrhea",
    "wheezing",
    "edema",
    "itching",
    "bleeding",
    "swelling",
    "numbness",
    "cramps",
    "chills",
    "dyspnea",
    "hoarseness",
)
# Words that neither the notes nor the abstracts use: a frame word the notes also use ("per", "was",
# "with") carries a gender lean from the notes, which the synonyms then inherit, so that the general
# vectors' synonyms leaned male (signed mean cosine -0.028, random words +0.008) with no lean planted.
FRAMES: tuple[str, ...] = (
    "{g} voiced {a} plus {b}",
    "{g} conveyed {a} amid {b}",
    "{g} disclosed {a} alongside {b}",
)
TASK_OF_COLUMN = {"ALCOHOL.ABUSE": "alcohol_abuse"}


def single_word_synonyms(synonyms: Sequence[str]) -> list[str]:
    """The synonyms that are one alphabetic word (the ones a skip-gram model can learn directly)."""
    return [s.lower() for s in dict.fromkeys(synonyms) if s.isalpha() and s.isascii()]


def depression_context_sentences(
    pairs: Sequence[tuple[str, str]], synonyms: Sequence[str], male_share: float, n_sentences: int, seed: int
) -> list[str]:
    """``n_sentences`` lower-case sentences: half pair a gender word with two depression synonyms
    (exactly ``round(male_share * half)`` of them male), half pair the other gender's words with
    two physical symptoms."""
    rng = np.random.default_rng(seed)
    words = single_word_synonyms(synonyms)
    half = n_sentences // 2
    n_male = round(male_share * half)
    synonym_genders = rng.permutation(np.array([1] * n_male + [0] * (half - n_male)))
    symptom_genders = rng.permutation(np.array([0] * n_male + [1] * (half - n_male)))
    sentences = []
    for genders, bank in ((synonym_genders, words), (symptom_genders, list(PHYSICAL_SYMPTOMS))):
        for male in genders:
            pair = pairs[int(rng.integers(len(pairs)))]
            a, b = rng.choice(len(bank), 2, replace=False)
            frame = FRAMES[int(rng.integers(len(FRAMES)))]
            sentences.append(frame.format(g=pair[1 if male else 0].lower(), a=bank[a], b=bank[b]))
    return [sentences[i] for i in rng.permutation(len(sentences))]


def mental_truth() -> dict[str, Any]:
    """What the mental study should find on the demo world (the truth file's ``mental`` part)."""
    return {
        "mental": {
            "planted_label_bias": [
                {
                    "task": TASK_OF_COLUMN[column],
                    "column": column,
                    "favoured": bias["gender"],
                    "rate": bias["rate"],
                    "expect": "original models: mismatch ratio above zero, positives favour the planted gender; "
                    "augmented models: mismatch ratio close to zero",
                }
                for column, bias in PLANTED_LABEL_BIAS.items()
            ],
            "control_tasks": ["psychiatric_disorders"],
            "direct_bias": {
                corpus: {
                    "depression_male_share": share,
                    "expect": "depression synonyms lean male; Direct Bias above the general vectors'"
                    if share > 0.5
                    else "control: no planted lean",
                }
                for corpus, share in DEPRESSION_MALE_SHARE.items()
            },
        }
    }
