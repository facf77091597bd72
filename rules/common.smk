# Paths, wildcard constraints and helpers shared by every rule file. No rule logic here.

from medbias.io import ACUITY_EXPORTS, MIMIC_TABLES

RESULTS = config["results"]
LOGS = "logs"
BENCHMARKS = "benchmarks"
INPUTS = config["inputs"]
SCRIPTS = str(Path(workflow.basedir) / "workflow_scripts")

TINY_ARCHS = ["bert", "gpt2", "bart"]
WORD_VECTOR_CORPORA = ["general", "bio"]


wildcard_constraints:
    arch="|".join(TINY_ARCHS),
    corpus="|".join(WORD_VECTOR_CORPORA),
    model="[A-Za-z0-9_]+",


def all_targets():
    """Everything the default target builds; each study's rule file adds its own."""
    targets = [f"{RESULTS}/inputs/manifest.json"]
    if config["world"] == "demo":
        targets += demo_world_targets()
    return targets
