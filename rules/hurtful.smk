# Study "hurtful" (Zhang et al. 2020): log-probability bias scores (Table 3), fill-in-the-blank
# completions (Figure 1) and the post-hoc attribute probe of the debiased models (Table D4).


rule hurtful_logprob:
    input:
        model=lambda wc: model_inputs(wc.model),
        templates=LOGPROB["templates"],
        attributes=LOGPROB["attributes"],
    output:
        scores=f"{HURTFUL}/logprob/{{model}}.parquet",
        words=f"{HURTFUL}/logprob/{{model}}_words.json",
    log:
        f"{LOGS}/hurtful/logprob_{{model}}.log",
    benchmark:
        f"{TIMINGS}/hurtful/logprob_{{model}}.tsv"
    conda:
        "../envs/cpu.yaml"
    threads: 2
    params:
        code=library_code("hurtful_logprob.py"),
        model=lambda wc: wc.model,
        entry=lambda wc: model_entry(wc.model),
        target_sets=LOGPROB["target_sets"],
        batch_size=LOGPROB["batch_size"],
    script:
        f"{SCRIPTS}/hurtful_logprob.py"


rule hurtful_table3:
    input:
        scores=expand(f"{HURTFUL}/logprob/{{model}}.parquet", model=LOGPROB["models"]),
        words=expand(f"{HURTFUL}/logprob/{{model}}_words.json", model=LOGPROB["models"]),
        templates=LOGPROB["templates"],
        attributes=LOGPROB["attributes"],
        notes=f"{TEXT_DIR}/mimic/notes.parquet",
        patients=f"{MIMIC}/tables/patients.parquet",
    output:
        long=f"{HURTFUL}/table3_logprob_long.csv",
        csv=f"{HURTFUL}/table3_logprob.csv",
        md=f"{HURTFUL}/table3_logprob.md",
        fixes=f"{HURTFUL}/logprob_template_fixes.md",
    log:
        f"{LOGS}/hurtful/table3.log",
    benchmark:
        f"{TIMINGS}/hurtful/table3.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("hurtful_table3.py"),
        settings=hyperparameter_notes("hurtful.pretrain", "hurtful.logprob"),
        models=LOGPROB["models"],
        target_sets=LOGPROB["target_sets"],
        gender_set=LOGPROB["gender_set"],
        control_category=LOGPROB["control_category"],
        alpha=LOGPROB["alpha"],
    script:
        f"{SCRIPTS}/hurtful_table3.py"


rule hurtful_fill_blank:
    input:
        models=[model_inputs(m) for m in FILL_BLANK["models"]],
    output:
        csv=f"{HURTFUL}/fig1_fill_in_the_blank.csv",
        md=f"{HURTFUL}/fig1_fill_in_the_blank.md",
        png=f"{HURTFUL}/fig1_fill_in_the_blank.png",
        pdf=f"{HURTFUL}/fig1_fill_in_the_blank.pdf",
    log:
        f"{LOGS}/hurtful/fill_blank.log",
    benchmark:
        f"{TIMINGS}/hurtful/fill_blank.tsv"
    conda:
        "../envs/cpu.yaml"
    threads: 2
    params:
        code=library_code("hurtful_fill_blank.py"),
        settings=hyperparameter_notes("hurtful.pretrain", "hurtful.fill_blank"),
        models=FILL_BLANK["models"],
        entries=[model_entry(m) for m in FILL_BLANK["models"]],
        templates=FILL_BLANK["templates"],
        fills=FILL_BLANK["race_words"],
        top_k=FILL_BLANK["top_k"],
    script:
        f"{SCRIPTS}/hurtful_fill_blank.py"


rule hurtful_probe:
    input:
        models=expand(f"{HURTFUL}/models/{{variant}}", variant=VARIANTS),
        sequences=f"{TEXT_DIR}/mimic/sequences.parquet",
        demographics=f"{MIMIC}/demographics.parquet",
        samples=f"{MIMIC}/task_samples.parquet",
    output:
        long=f"{HURTFUL}/tableD4_probe_long.csv",
        csv=f"{HURTFUL}/tableD4_probe.csv",
        md=f"{HURTFUL}/tableD4_probe.md",
    log:
        f"{LOGS}/hurtful/probe.log",
    benchmark:
        f"{TIMINGS}/hurtful/probe.tsv"
    conda:
        "../envs/cpu.yaml"
    threads: 2
    params:
        code=library_code("hurtful_probe.py"),
        settings=hyperparameter_notes("hurtful.pretrain", "hurtful.probe"),
        variants=VARIANTS,
        attributes=DEBIASED_ATTRIBUTES,
        max_sequences=config["hurtful"]["probe"]["max_sequences"],
        test_fraction=config["hurtful"]["probe"]["test_fraction"],
        hidden=config["hurtful"]["probe"]["hidden"],
        max_length=config["hurtful"]["probe"]["max_length"],
        seed=seed_for("hurtful_probe"),
    script:
        f"{SCRIPTS}/hurtful_probe.py"
