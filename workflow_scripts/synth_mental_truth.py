"""Rule script (demo world): the truth part of the "mental" study (what its planted effects should
produce)."""

from medbias.io.jsonio import write_json
from medbias.synth.mental import mental_truth

snakemake = globals()["snakemake"]
write_json(snakemake.output[0], mental_truth())
