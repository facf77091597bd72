"""Study hurtful (Zhang et al. 2020): clinical BERT on MIMIC-III, adversarial debiasing, fairness gaps."""
