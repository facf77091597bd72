"""medbias: measure and mitigate social bias in clinical and biomedical language models.

The library behind the Snakemake workflow: small, typed, pure functions; the rule scripts in
``workflow_scripts/`` only read ``snakemake.input/output/params``, call into it and write. Layers,
each importing only the ones above it in this list:

- ``core``: the machinery every study shares, one of each: the model registry and loading
  (``models``), sentence encoders and pooling (``encoders``), batched inference (``batching``),
  sentence likelihoods (``sentence_likelihood``), language-model training (``lm_training``),
  template slots (``templates``), note text and its parallel pipeline (``note_text``,
  ``note_pipeline``), skip-gram embeddings (``embeddings``), the figure style (``figures``), errors,
  logs and code fingerprints.
- ``io``: reading the real inputs (``mimic``, ``pubmed``, ``formats``, ``resources``,
  ``word_vectors``, ``manifest``) and writing JSON and paper tables (``jsonio``, ``tables``).
- ``metrics``: the association tests (WEAT/SEAT, ECT, RIPA, Direct Bias), group and counterfactual
  fairness, performance, the log-probability and StereoSet-style scores, the bootstrap and
  replication statistics.
- ``studies``: one package per paper (``hurtful``: Zhang et al. 2020; ``mental``: Sogancioglu et al.
  2023; ``plm``: Xie et al. 2024; ``rios``: Rios et al. 2020) plus the ``audit`` card: each study's
  analyses, table builders and figures.
- ``synth`` (the demo world with its planted effects) and ``validation`` (the tests' measured error
  rates on it).
- ``pipeline``: the workflow itself: the configuration (``config``), what it asks the DAG to build
  (``plan``), seeds, report pages and cluster settings. ``rules/common.smk`` imports only this layer,
  ``core.provenance``, ``io.formats`` and ``synth.sizes``.

From an output file to the code that computed it: the rule that writes it (``rules/*.smk``) names
its script, and the script's docstring names the library function.
"""

__version__ = "0.1.0"
