# Records which inputs and models a results folder was built from (both worlds).


def manifest_inputs(wildcards):
    """In the demo world the manifest waits for the world to be built; real inputs already exist."""
    return demo_world_targets() if config["world"] == "demo" else []


rule input_manifest:
    input:
        manifest_inputs,
    output:
        f"{RESULTS}/inputs/manifest.json",
    log:
        f"{LOGS}/inputs/manifest.log",
    script:
        f"{SCRIPTS}/input_manifest.py"
