"""Rule script: merge the demo world's truth parts into one truth file."""

from medbias.io.jsonio import read_json, write_json

snakemake = globals()["snakemake"]
truth = {"seed": snakemake.params.seed, "scale": snakemake.params.scale}
for part in snakemake.input:
    overlap = set(truth) & set(read_json(part))
    if overlap:
        raise RuntimeError(f"truth part {part} redefines {sorted(overlap)}")
    truth.update(read_json(part))
write_json(snakemake.output[0], truth)
