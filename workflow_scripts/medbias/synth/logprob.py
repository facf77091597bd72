"""Scoring resources for the log-probability bias score on the demo world (Zhang et al. Table 3).

One category per planted lean, with frames that occur in the synthetic notes (a frame never seen in
training gives every condition the same shift; shared/notes/demo-calibration.md). The target slot
comes first, as in the paper's templates.
"""

from __future__ import annotations

from medbias.synth.conditions import CONDITIONS


LOGPROB_CATEGORIES = {"male": "MALELEAN", "female": "FEMALELEAN", "none": "CONTROL"}
LOGPROB_FRAMES = ("[GEND] reports [{slot}].", "per family [GEND] has [{slot}].", "[GEND] has [{slot}].",
                  "[GEND] [{slot}] was discussed with family.")


def logprob_resources() -> tuple[list[str], list[tuple[str, str]], dict]:
    """Templates (one line each), attributes as (phrase, category) and the truth part for them."""
    templates = [frame.format(slot=slot) for slot in LOGPROB_CATEGORIES.values() for frame in LOGPROB_FRAMES]
    attributes = [(c.phrase, LOGPROB_CATEGORIES[c.lean]) for c in CONDITIONS]
    truth = {
        "control_category": LOGPROB_CATEGORIES["none"],
        "categories": {
            LOGPROB_CATEGORIES[lean]: {
                "lean": lean,
                "conditions": [c.name for c in CONDITIONS if c.lean == lean],
                "male_share": sum(c.male_share for c in CONDITIONS if c.lean == lean)
                / sum(1 for c in CONDITIONS if c.lean == lean),
            }
            for lean in LOGPROB_CATEGORIES
        },
        "expect": ("after pretraining on the demo notes, mean(male word - female word) of MALELEAN is above CONTROL's and of "
                   "FEMALELEAN below it, each Mann-Whitney p < 0.01 against CONTROL; the untrained base model "
                   "shows no such ordering; the discharge-note gender ratio of each category is about the male "
                   "share of its conditions"),
    }
    return templates, attributes, truth
