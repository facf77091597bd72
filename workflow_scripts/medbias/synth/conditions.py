"""Conditions planted in the synthetic notes, with their gender lean (the truth of the demo world).

Carriers are assigned with exact counts, not coin flips: a condition with prevalence p and male share
m has round(p * N) carriers, round(m * carriers) of them male. Neutral conditions (m = 0.5) are the
controls where nothing is planted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PlantedCondition:
    name: str
    phrase: str
    prevalence: float
    male_share: float
    annotation: str | None  # column of the PhysioNet phenotype-annotation file it feeds, if any

    @property
    def lean(self) -> str:
        if self.male_share > 0.5:
            return "male"
        if self.male_share < 0.5:
            return "female"
        return "none"

    @property
    def single_gender(self) -> bool:
        """Every carrier is of one gender: a mention of it tells the patient's gender outright."""
        return self.male_share in (0.0, 1.0)


CONDITIONS: tuple[PlantedCondition, ...] = (
    PlantedCondition("hiv", "hiv positive on haart", 0.07, 1.0, None),
    PlantedCondition("heroin", "history of heroin use", 0.06, 0.9, "OTHER.SUBSTANCE.ABUSE"),
    PlantedCondition("alcohol", "alcohol abuse on ciwa scale", 0.08, 0.9, "ALCOHOL.ABUSE"),
    # worded without a depression synonym of the mental study's list: "depression on sertraline" gave the
    # word "depression" the notes' female lean, so the general vectors' synonyms (the Direct Bias
    # control, no lean planted) leaned beyond random words on two of three fresh worlds
    PlantedCondition("depression", "low mood on sertraline", 0.10, 0.1, "DEPRESSION"),
    PlantedCondition("fibromyalgia", "fibromyalgia with chronic pain", 0.05, 0.1, "CHRONIC.PAIN.FIBROMYALGIA"),
    PlantedCondition("anxiety", "anxiety with lorazepam as needed", 0.07, 0.0, None),
    PlantedCondition(
        "schizophrenia", "schizophrenia on olanzapine", 0.04, 0.5, "SCHIZOPHRENIA.AND.OTHER.PSYCHIATRIC.DISORDERS"
    ),
    PlantedCondition("gout", "gout flare in the right toe", 0.05, 0.5, None),
    PlantedCondition("glaucoma", "glaucoma with eye drops continued", 0.05, 0.5, None),
    PlantedCondition("cancer", "metastatic cancer on palliative chemo", 0.05, 0.5, "ADVANCED.CANCER"),
    PlantedCondition("dementia", "dementia oriented to self only", 0.05, 0.5, "DEMENTIA"),
    PlantedCondition("obesity", "morbid obesity needing a bariatric bed", 0.06, 0.5, "OBESITY"),
    PlantedCondition(
        "delay", "developmental delay with group home support", 0.02, 0.5, "DEVELOPMENTAL.DELAY.RETARDATION"
    ),
    PlantedCondition("nonadherence", "missed home doses, nonadherent", 0.05, 0.5, "NON.ADHERENCE"),
    PlantedCondition("parkinson", "parkinson disease with tremor", 0.03, 0.5, "CHRONIC.NEUROLOGICAL.DYSTROPHIES"),
    # Table 3's planted leans (medbias.synth.logprob): conditions no phenotype annotation reads are
    # planted at a full share (every carrier of one gender), five per lean, in words shared with no
    # phenotype's evidence, at 7% of patients each: a smaller share or prevalence let a tiny BERT place a
    # leaning condition among the controls (docs/demo-world.md). With 5 leaning against 9 control
    # attributes the smallest two-sided Mann-Whitney p is 2 / C(14, 5) = 0.001, so the test's margin is
    # bounded however strong the lean
    PlantedCondition("cocaine", "cocaine found on tox screen", 0.07, 1.0, None),
    PlantedCondition("cigars", "smokes cigars since youth", 0.07, 1.0, None),
    PlantedCondition("steroids", "anabolic steroid use at the gym", 0.07, 1.0, None),
    PlantedCondition("gambling", "gambling with large debts", 0.07, 1.0, None),
    PlantedCondition("migraine", "migraine with aura on sumatriptan", 0.07, 0.0, None),
    PlantedCondition("hypothyroidism", "hypothyroidism on levothyroxine", 0.07, 0.0, None),
    PlantedCondition("lupus", "lupus on hydroxychloroquine", 0.07, 0.0, None),
    PlantedCondition("osteoporosis", "osteoporosis on alendronate", 0.07, 0.0, None),
)


def assign_carriers(genders: np.ndarray, condition: PlantedCondition, rng: np.random.Generator) -> np.ndarray:
    """Indices of patients carrying ``condition``: exactly round(p*N) carriers, round(m*n) male.

    Raises ValueError when a gender has too few patients for its share.
    """
    n_carriers = round(condition.prevalence * len(genders))
    n_male = round(condition.male_share * n_carriers)
    n_female = n_carriers - n_male
    males = np.flatnonzero(genders == "M")
    females = np.flatnonzero(genders == "F")
    if n_male > len(males) or n_female > len(females):
        raise ValueError(f"too few patients to plant condition {condition.name!r}")
    chosen = np.concatenate([rng.choice(males, n_male, replace=False), rng.choice(females, n_female, replace=False)])
    return np.sort(chosen)
