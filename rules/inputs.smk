# Records which inputs and models a results folder was built from (both worlds).


rule input_manifest:
    input:
        manifest_inputs,
    output:
        f"{RESULTS}/inputs/manifest.json",
    log:
        f"{LOGS}/inputs/manifest.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("input_manifest.py"),
    script:
        f"{SCRIPTS}/input_manifest.py"
