"""medbias: measure and mitigate social bias in clinical and biomedical language models.

The library behind the Snakemake workflow: small, typed, pure functions; the rule scripts in
``workflow_scripts/`` only read ``snakemake.input/output/params`` and call into it.
"""

__version__ = "0.1.0"
