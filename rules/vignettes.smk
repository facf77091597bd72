# Study "vignettes": clinical decisions of causal and chat models on counterfactual vignettes
# (medbias.studies.vignettes): every causal registry entry's option probabilities, its contrasts with
# intervals and flip rates, and the summary over the registry. `snakemake vignettes` runs it.


rule vignette_scores:
    input:
        model=lambda wc: model_inputs(wc.model),
        sets=list(VIGNETTES["sets"].values()),
    output:
        scores=f"{VIGNETTE_DIR}/{{model}}/scores.parquet",
        summary=f"{VIGNETTE_DIR}/{{model}}/scores.json",
    log:
        f"{LOGS}/vignettes/scores_{{model}}.log",
    benchmark:
        f"{TIMINGS}/vignettes/scores_{{model}}.tsv"
    wildcard_constraints:
        model="|".join(VIGNETTE_CAPABLE_MODELS) or "(?!)",
    conda:
        "../envs/gpu.yaml"
    threads: 2
    resources:
        gpu=VIGNETTES["gpus"],
        mem_mb=16000,
    params:
        code=library_code("vignette_scores.py"),
        model=lambda wc: wc.model,
        entry=lambda wc: model_entry(wc.model),
        sets=VIGNETTES["sets"],
        prompts={
            key: VIGNETTES[key] for key in ("prompt", "chat_prompt", "system_prompt")
        },
        batch_size=VIGNETTES["batch_size"],
        generation_tokens=VIGNETTES["generation_tokens"],
    script:
        f"{SCRIPTS}/vignette_scores.py"


rule vignette_contrasts:
    input:
        scores=rules.vignette_scores.output.scores,
        summary=rules.vignette_scores.output.summary,
        sets=list(VIGNETTES["sets"].values()),
    output:
        csv=f"{VIGNETTE_DIR}/{{model}}/contrasts.csv",
        md=f"{VIGNETTE_DIR}/{{model}}/contrasts.md",
        png=f"{VIGNETTE_DIR}/{{model}}/fig_contrasts.png",
        pdf=f"{VIGNETTE_DIR}/{{model}}/fig_contrasts.pdf",
        option_mass=f"{VIGNETTE_DIR}/{{model}}/option_mass.json",
    log:
        f"{LOGS}/vignettes/contrasts_{{model}}.log",
    benchmark:
        f"{TIMINGS}/vignettes/contrasts_{{model}}.tsv"
    wildcard_constraints:
        model="|".join(VIGNETTE_CAPABLE_MODELS) or "(?!)",
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("vignette_contrasts.py"),
        label=lambda wc: audit_label(wc.model),
        sets=VIGNETTES["sets"],
        settings={
            key: VIGNETTES[key]
            for key in (
                "bootstrap",
                "permutations",
                "alpha",
                "min_difference",
                "min_option_mass",
            )
        },
        seed=seed_for("vignette_contrasts"),
    script:
        f"{SCRIPTS}/vignette_contrasts.py"


rule vignette_summary:
    input:
        contrasts=[f"{VIGNETTE_DIR}/{m}/contrasts.csv" for m in VIGNETTE_MODELS],
        scores=[f"{VIGNETTE_DIR}/{m}/scores.json" for m in VIGNETTE_MODELS],
        option_mass=[f"{VIGNETTE_DIR}/{m}/option_mass.json" for m in VIGNETTE_MODELS],
    output:
        csv=f"{VIGNETTE_DIR}/summary.csv",
        md=f"{VIGNETTE_DIR}/summary.md",
        long=f"{VIGNETTE_DIR}/contrasts_long.csv",
        png=f"{VIGNETTE_DIR}/fig_contrasts.png",
        pdf=f"{VIGNETTE_DIR}/fig_contrasts.pdf",
    log:
        f"{LOGS}/vignettes/summary.log",
    benchmark:
        f"{TIMINGS}/vignettes/summary.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("vignette_summary.py"),
        models=config["models"],
        scored=VIGNETTE_MODELS,
        labels={name: audit_label(name) for name in config["models"]},
        settings={
            key: VIGNETTES[key]
            for key in (
                "bootstrap",
                "permutations",
                "alpha",
                "min_difference",
                "min_option_mass",
            )
        },
    script:
        f"{SCRIPTS}/vignette_summary.py"


# a target that only collects files (runs in the main process on a cluster)
localrules:
    vignettes,


rule vignettes:
    input:
        rules.vignette_summary.output.md,
        [f"{VIGNETTE_DIR}/{m}/contrasts.md" for m in VIGNETTE_MODELS],
        study_index("vignettes"),
