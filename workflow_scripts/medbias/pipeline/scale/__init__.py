"""The scale planner: a measured plan for the full real run (all of MIMIC-III, the PubMed baseline, the
15 PLMs), run as ``python -m medbias.pipeline.scale`` or ``scripts/plan_scale.py`` (docs/planning.md).

It measures the cost of one unit of every heavy rule on the machine it runs on, at the real model sizes
(``measure``: BERT-base for frozen features, PLL, SEAT and the probe; the real classifier grid on 3,076
features; the real skip-gram search; the real bootstrap), or reads costs recorded earlier; multiplies
them by the real counts (``config/scale_plan.yaml`` and the repository's own config) stage by stage
(``rows``); and projects the wall time on one 16-core, 4-GPU SLURM node from each job's threads and
GPUs (``schedule``: a greedy list schedule, rule by rule, so a little pessimistic).

GPU costs come from a JSON that ``--measure-gpu`` writes on a GPU machine, else they are derived from
FLOPs at an assumed share of a card's peak and marked "not measured" (``costs``). Costs of PLMs other
than BERT-base are the BERT-base cost scaled by compute-equivalent parameters, and marked so.
"""
