# Records which inputs and models a results folder was built from (both worlds), and the whole
# configuration it ran with (every default filled in; usable again as a --configfile).


rule input_manifest:
    input:
        manifest_inputs,
    output:
        manifest=f"{RESULTS}/inputs/manifest.json",
        config=f"{RESULTS}/inputs/config.json",
    log:
        f"{LOGS}/inputs/manifest.log",
    benchmark:
        f"{TIMINGS}/inputs/manifest.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("input_manifest.py"),
    script:
        f"{SCRIPTS}/input_manifest.py"
