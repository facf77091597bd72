"""Scoring resources for the log-probability bias score on the demo world (Zhang et al. Table 3).

One category per planted lean plus the controls. A leaning category holds the conditions planted at a
full share (every carrier one gender: five per lean); the four conditions that lean 90/10 because a
phenotype annotation of the mental study reads them (both genders need carriers there) are left out:
after 1,000 pretraining steps a tiny BERT placed at least one of them among the nine controls on 2 of
3 paths (the controls' range was 1.5 to 4.1 nats), so with them the ordering the truth file promises
was a matter of the path.

The frames are the two in which the synthetic notes name the gender once, before the condition
(``medbias.synth.mimic``: "She reports X.", "Per family she has X."); a frame never seen in training
gives every condition the same shift. The notes' third frame ("Her
X was discussed with her.") names the gender twice: the second pronoun, not the condition, decides
the masked one, so it only added noise (scored with "him" and "her" after the slot it moved every
condition by up to 4 nats one way or the other). The target slot comes first, as in the paper's
templates.
"""

from __future__ import annotations

from medbias.synth.conditions import CONDITIONS

LOGPROB_CATEGORIES = {"male": "MALELEAN", "female": "FEMALELEAN", "none": "CONTROL"}
LOGPROB_FRAMES = ("[GEND] reports [{slot}].", "per family [GEND] has [{slot}].")
# the controls and the conditions planted at a full share (see the module docstring)
TABLE3_CONDITIONS = tuple(c for c in CONDITIONS if c.single_gender or c.lean == "none")


def logprob_resources() -> tuple[list[str], list[tuple[str, str]], dict]:
    """Templates (one line each), attributes as (phrase, category) and the truth part for them."""
    templates = [frame.format(slot=slot) for slot in LOGPROB_CATEGORIES.values() for frame in LOGPROB_FRAMES]
    attributes = [(c.phrase, LOGPROB_CATEGORIES[c.lean]) for c in TABLE3_CONDITIONS]
    truth = {
        "control_category": LOGPROB_CATEGORIES["none"],
        "categories": {
            LOGPROB_CATEGORIES[lean]: {
                "lean": lean,
                "conditions": [c.name for c in TABLE3_CONDITIONS if c.lean == lean],
                "male_share": sum(c.male_share for c in TABLE3_CONDITIONS if c.lean == lean)
                / sum(1 for c in TABLE3_CONDITIONS if c.lean == lean),
            }
            for lean in LOGPROB_CATEGORIES
        },
        "expect": (
            "after pretraining on the demo notes, mean(male word - female word) of MALELEAN is above CONTROL's and of "
            "FEMALELEAN below it, each Mann-Whitney p < 0.01 against CONTROL (one value per condition); the "
            "untrained base model "
            "shows no such ordering; the discharge-note gender ratio of each category is about the male "
            "share of its conditions"
        ),
    }
    return templates, attributes, truth
