"""Every random seed of the workflow, derived from the config's one ``seed``.

- ``rule_seed(seed, rule) = seed + RULE_SEED_OFFSETS[rule]``: each rule's seed. The rules call it
  through ``seed_for("<rule>")`` (rules/common.smk), so a seed is never a number written in a rule
  file, and a unit test checks that each rule asks for its own name. The offsets are the ones the demo
  world is calibrated with (with these seeds its tiny models learn the planted effects); a hash of the
  rule name would need no table but would move every number of the demo with it. Rules that share an
  offset draw for unrelated purposes (a permutation test and a data split do not interact).
- ``replicate_seed``: replicate 0 of a training keeps its rule's seed (its outputs equal a run without
  replicates); replicate r > 0 takes a seed derived from (seed, r) by NumPy's SeedSequence, so seeds
  are never hand-picked offsets that can collide.
- ``document_null_seed``: the seed of one draw of the rios study's document-level null (its coin flips
  and its training run), in a SeedSequence stream of its own.
"""

from __future__ import annotations

import numpy as np

RULE_SEED_OFFSETS = {
    # the demo world
    "synth_mimic": 0,
    "synth_truth": 0,
    "synth_pubmed": 10,
    "synth_tiny_model": 20,
    "synth_word_vectors": 30,
    "synth_plm_corpus": 40,
    "synth_plm_model": 50,
    "synth_plm_downstream": 60,
    "synth_vignette_model": 80,
    # rios
    # (rios_word2vec_replicate trains rios_word2vec's replicates r > 0: the same base seed, so replicate r's
    # seed is the same whichever of the two rules trains it)
    "rios_word2vec": 0,
    "rios_word2vec_replicate": 0,
    "rios_document_null": 0,
    "rios_weat": 0,
    "rios_ect": 0,
    # mimic and hurtful
    "mimic_cohorts": 0,
    "hurtful_pretrain": 500,
    "hurtful_probe": 510,
    "hurtful_classify": 600,
    "hurtful_gaps": 700,
    # the mitigation stage: reweighing retrains each task's classifier under hurtful_classify's seed, and
    # the before/after tables draw hurtful_gaps's resamples (so their 'before' intervals are gaps.parquet's)
    "hurtful_mitigate": 600,
    "hurtful_mitigation": 700,
    "hurtful_intersections": 720,
    # mental
    "mental_data": 700,
    "mental_features": 710,
    "mental_classify": 720,
    "mental_tables": 730,
    "mental_direct_bias": 740,
    "mental_lime": 750,
    # plm
    "plm_dropout": 800,
    "plm_cda": 805,
    "plm_projection": 810,
    "plm_evaluate": 820,
    "plm_finetune": 830,
    "plm_benchmark": 840,
    # the sample of items; plm_benchmark's draws are SEAT's and the untrained copies' (seed, seed + 1, ...)
    "plm_benchmark_items": 840,
    "plm_benchmark_tables": 850,
    # vignettes
    "vignette_contrasts": 870,
    # audit and validation
    "audit_weat": 900,
    "audit_card": 910,
    "validation_error_rates": 0,
    "validation_post_processor_coverage": 920,
    "validation_benchmark_control": 860,
}


def rule_seed(seed: int, rule: str) -> int:
    """The seed of ``rule``'s job under the config's ``seed``; a rule without an entry is an error
    (a new rule that draws random numbers gets its own line above)."""
    if rule not in RULE_SEED_OFFSETS:
        raise KeyError(f"rule {rule!r} has no seed offset in medbias.core.seeds.RULE_SEED_OFFSETS")
    return seed + RULE_SEED_OFFSETS[rule]


def replicate_seed(seed: int, replicate: int) -> int:
    """The seed of training replicate ``replicate`` (module docstring)."""
    if replicate == 0:
        return seed
    return int(np.random.SeedSequence([seed, replicate]).generate_state(1)[0] % (2**31 - 1))


def document_null_seed(seed: int, draw: int) -> int:
    """The seed of document-null draw ``draw`` (its swap coins and its training run): derived from
    (seed, draw) by SeedSequence in a stream of its own, so it never equals a replicate's seed."""
    return int(np.random.SeedSequence([seed, draw, 0xD0C]).generate_state(1)[0] % (2**31 - 1))
