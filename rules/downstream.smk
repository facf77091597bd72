# Study "hurtful", downstream (Zhang et al. 2020, sections 4.1, 4.2, 5.2, 5.3, appendices A, C, D):
# frozen window features per model, one classifier per task, fairness gaps with bootstrap and BH,
# and the paper's tables and figures.


rule hurtful_features:
    input:
        model=lambda wc: model_inputs(wc.model),
        sequences=f"{TEXT_DIR}/mimic/sequences.parquet",
        windows=f"{MIMIC}/cohort_windows.parquet",
        tokenizer=f"{MIMIC}/tokenizer",
    output:
        features=f"{DOWNSTREAM_DIR}/{{model}}/features.npy",
        index=f"{DOWNSTREAM_DIR}/{{model}}/features_windows.parquet",
        summary=f"{DOWNSTREAM_DIR}/{{model}}/features.json",
    log:
        f"{LOGS}/hurtful/features_{{model}}.log",
    cache: CACHE
    conda:
        "../envs/gpu.yaml"
    threads: 2
    resources:
        mem_mb=16000,
        gpu=DOWNSTREAM["feature_gpus"],
    params:
        code=library_code("hurtful_features.py"),
        model=lambda wc: wc.model,
        entry=lambda wc: model_entry(wc.model),
        layers=DOWNSTREAM["layers"],
        batch_size=DOWNSTREAM["feature_batch_size"],
        window=config["mimic"]["window"],
        stride=config["mimic"]["stride"],
        max_windows=config["mimic"]["max_windows_per_note"],
    script:
        f"{SCRIPTS}/hurtful_features.py"


# the classifiers' inputs, shared by replicate 0 and the seed replicates (which may add replicate 0's choice)
CLASSIFY_INPUT = {
    "features": f"{DOWNSTREAM_DIR}/{{model}}/features.npy",
    "index": f"{DOWNSTREAM_DIR}/{{model}}/features_windows.parquet",
    "samples": f"{MIMIC}/task_samples.parquet",
    "windows": f"{MIMIC}/cohort_windows.parquet",
    "tasks": f"{MIMIC}/tasks.csv",
}


rule hurtful_classify:
    input:
        **CLASSIFY_INPUT,
    output:
        predictions=f"{DOWNSTREAM_DIR}/{{model}}/test_predictions.parquet",
        validation=f"{DOWNSTREAM_DIR}/{{model}}/validation_predictions.parquet",
        selection=f"{DOWNSTREAM_DIR}/{{model}}/selection.csv",
        grid=f"{DOWNSTREAM_DIR}/{{model}}/grid.csv",
        classifiers=f"{DOWNSTREAM_DIR}/{{model}}/classifiers.pt",
    log:
        f"{LOGS}/hurtful/classify_{{model}}.log",
    benchmark:
        f"{TIMINGS}/hurtful/classify_{{model}}.tsv"
    conda:
        "../envs/cpu.yaml"
    threads: 2
    resources:
        mem_mb=16000,
        gpu=DOWNSTREAM["classify_gpus"],
    params:
        code=library_code("hurtful_classify.py"),
        model=lambda wc: wc.model,
        grid=DOWNSTREAM["grid"],
        c_grid=DOWNSTREAM["c_grid"],
        max_epochs=DOWNSTREAM["max_epochs"],
        patience=DOWNSTREAM["patience"],
        batch_size=DOWNSTREAM["batch_size"],
        learning_rate=DOWNSTREAM["learning_rate"],
        workers=DOWNSTREAM["classify_workers"],
        seed=seed_for("hurtful_classify"),
        replicate=0,
    script:
        f"{SCRIPTS}/hurtful_classify.py"


# classifier seed replicates r >= 1 (replicate 0 is hurtful_classify's own output); with
# replicates_search "once" each retrains replicate 0's chosen classifiers (its selection.csv)
use rule hurtful_classify as hurtful_classify_replicate with:
    input:
        **CLASSIFY_INPUT,
        chosen=(
            f"{DOWNSTREAM_DIR}/{{model}}/selection.csv"
            if DOWNSTREAM["replicates_search"] == "once"
            else []
        ),
    output:
        predictions=f"{DOWNSTREAM_DIR}/{{model}}/replicate{{replicate}}/test_predictions.parquet",
        validation=f"{DOWNSTREAM_DIR}/{{model}}/replicate{{replicate}}/validation_predictions.parquet",
        selection=f"{DOWNSTREAM_DIR}/{{model}}/replicate{{replicate}}/selection.csv",
        grid=f"{DOWNSTREAM_DIR}/{{model}}/replicate{{replicate}}/grid.csv",
        classifiers=f"{DOWNSTREAM_DIR}/{{model}}/replicate{{replicate}}/classifiers.pt",
    log:
        f"{LOGS}/hurtful/classify_{{model}}_replicate{{replicate}}.log",
    benchmark:
        f"{TIMINGS}/hurtful/classify_{{model}}_replicate{{replicate}}.tsv"
    params:
        replicate=lambda wc: int(wc.replicate),


rule hurtful_gaps:
    input:
        predictions=f"{DOWNSTREAM_DIR}/{{model}}/test_predictions.parquet",
        tasks=f"{MIMIC}/tasks.csv",
    output:
        gaps=f"{DOWNSTREAM_DIR}/{{model}}/gaps.parquet",
        cells=f"{DOWNSTREAM_DIR}/{{model}}/intersectional_cells.csv",
        performance=f"{DOWNSTREAM_DIR}/{{model}}/performance.csv",
    log:
        f"{LOGS}/hurtful/gaps_{{model}}.log",
    benchmark:
        f"{TIMINGS}/hurtful/gaps_{{model}}.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("hurtful_gaps.py"),
        model=lambda wc: wc.model,
        attributes=DOWNSTREAM["attributes"],
        excluded=DOWNSTREAM["excluded_subgroups"],
        bootstrap=DOWNSTREAM["bootstrap"],
        alpha=DOWNSTREAM["alpha"],
        intersectional=DOWNSTREAM["intersectional"],
        minimum=DOWNSTREAM["min_group"],
        seed=seed_for("hurtful_gaps"),
    script:
        f"{SCRIPTS}/hurtful_gaps.py"


use rule hurtful_gaps as hurtful_gaps_replicate with:
    input:
        predictions=f"{DOWNSTREAM_DIR}/{{model}}/replicate{{replicate}}/test_predictions.parquet",
        tasks=f"{MIMIC}/tasks.csv",
    output:
        gaps=f"{DOWNSTREAM_DIR}/{{model}}/replicate{{replicate}}/gaps.parquet",
        cells=f"{DOWNSTREAM_DIR}/{{model}}/replicate{{replicate}}/intersectional_cells.csv",
        performance=f"{DOWNSTREAM_DIR}/{{model}}/replicate{{replicate}}/performance.csv",
    log:
        f"{LOGS}/hurtful/gaps_{{model}}_replicate{{replicate}}.log",
    benchmark:
        f"{TIMINGS}/hurtful/gaps_{{model}}_replicate{{replicate}}.tsv"


# the mitigation stage (docs/mitigation.md): one job per mitigated model and method that computes
# predictions (medbias.studies.hurtful.mitigation); none and adversarial read predictions that exist
rule hurtful_mitigate:
    input:
        unpack(mitigation_inputs),
    output:
        predictions=f"{DOWNSTREAM_DIR}/{{model}}/mitigation/{{method}}/predictions.parquet",
        fit=f"{DOWNSTREAM_DIR}/{{model}}/mitigation/{{method}}/fit.csv",
    log:
        f"{LOGS}/hurtful/mitigate_{{model}}_{{method}}.log",
    benchmark:
        f"{TIMINGS}/hurtful/mitigate_{{model}}_{{method}}.tsv"
    wildcard_constraints:
        method="|".join(MITIGATION_JOB_METHODS) or "none^",
    conda:
        "../envs/cpu.yaml"
    threads: 2
    resources:
        mem_mb=16000,
        # a method that trains the classifiers' networks again does it on their GPUs (its declaration)
        gpu=lambda wc: plan.mitigation_gpus(wc.method, DOWNSTREAM["classify_gpus"]),
    params:
        code=library_code("hurtful_mitigate.py"),
        model=lambda wc: wc.model,
        method=lambda wc: wc.method,
        attributes=MITIGATION["attributes"],
        settings=lambda wc: MITIGATION.get(wc.method, {}),
        max_epochs=DOWNSTREAM["max_epochs"],
        patience=DOWNSTREAM["patience"],
        batch_size=DOWNSTREAM["batch_size"],
        learning_rate=DOWNSTREAM["learning_rate"],
        workers=DOWNSTREAM["classify_workers"],
        seed=seed_for("hurtful_mitigate"),
    script:
        f"{SCRIPTS}/hurtful_mitigate.py"


rule hurtful_mitigation:
    input:
        unpack(mitigation_effect_inputs),
    output:
        predictions=f"{MITIGATION_DIR}/predictions.parquet",
        fit=f"{MITIGATION_DIR}/fit.csv",
        gaps=f"{MITIGATION_DIR}/gap_changes.parquet",
        performance=f"{MITIGATION_DIR}/performance_changes.csv",
        summary=multiext(f"{MITIGATION_DIR}/summary", ".csv", ".md"),
        cost=multiext(f"{MITIGATION_DIR}/cost", ".csv", ".md"),
        figure=multiext(f"{MITIGATION_DIR}/gap_vs_cost", ".png", ".pdf"),
    log:
        f"{LOGS}/hurtful/mitigation.log",
    benchmark:
        f"{TIMINGS}/hurtful/mitigation.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("hurtful_mitigation.py"),
        settings=hyperparameter_notes(*CLASSIFIER_KEYS, *GAP_KEYS, "hurtful.mitigation"),
        models=MITIGATION["models"],
        methods=MITIGATION["methods"],
        jobs=plan.mitigation_jobs(MITIGATION),
        attributes=MITIGATION["attributes"],
        encoders=MITIGATION_ENCODERS,
        downstream_attributes=DOWNSTREAM["attributes"],
        excluded=DOWNSTREAM["excluded_subgroups"],
        minimum=DOWNSTREAM["min_group"],
        bootstrap=DOWNSTREAM["bootstrap"],
        alpha=DOWNSTREAM["alpha"],
        equivalence_margin=MITIGATION["equivalence_margin"],
        seed=seed_for("hurtful_mitigation"),
    script:
        f"{SCRIPTS}/hurtful_mitigation.py"


# intersectional groups (docs/mitigation.md): worst cells with a permutation test, differential fairness
rule hurtful_intersections:
    input:
        predictions=expand(
            f"{DOWNSTREAM_DIR}/{{model}}/test_predictions.parquet",
            model=INTERSECTIONS["models"],
        ),
        tasks=f"{MIMIC}/tasks.csv",
    output:
        table=f"{INTERSECTIONS_DIR}/worst_cells.csv",
        md=f"{INTERSECTIONS_DIR}/worst_cells.md",
        cells=f"{INTERSECTIONS_DIR}/cells.csv",
        figures=[
            f"{INTERSECTIONS_DIR}/cells_{slug}.{ext}"
            for slug in INTERSECTION_SLUGS
            for ext in ("png", "pdf")
        ],
    log:
        f"{LOGS}/hurtful/intersections.log",
    benchmark:
        f"{TIMINGS}/hurtful/intersections.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("hurtful_intersections.py"),
        settings_notes=hyperparameter_notes("hurtful.intersections"),
        models=INTERSECTIONS["models"],
        crossings=INTERSECTIONS["crossings"],
        settings=INTERSECTIONS,
        excluded=DOWNSTREAM["excluded_subgroups"],
        bootstrap=DOWNSTREAM["bootstrap"],
        alpha=DOWNSTREAM["alpha"],
        seed=seed_for("hurtful_intersections"),
    script:
        f"{SCRIPTS}/hurtful_intersections.py"


rule hurtful_downstream_tables:
    input:
        gaps=expand(
            f"{DOWNSTREAM_DIR}/{{model}}/gaps.parquet", model=DOWNSTREAM["models"]
        ),
        cells=expand(
            f"{DOWNSTREAM_DIR}/{{model}}/intersectional_cells.csv",
            model=DOWNSTREAM["models"],
        ),
        performance=expand(
            f"{DOWNSTREAM_DIR}/{{model}}/performance.csv", model=DOWNSTREAM["models"]
        ),
        replicate_gaps=downstream_replicate_gaps(),
        tasks=f"{MIMIC}/tasks.csv",
    output:
        table4=multiext(f"{DOWNSTREAM_DIR}/table4_gaps", ".csv", ".md"),
        tableC3=multiext(f"{DOWNSTREAM_DIR}/tableC3_gaps_fdr", ".csv", ".md"),
        tableA2=multiext(f"{DOWNSTREAM_DIR}/tableA2_performance", ".csv", ".md"),
        tableA2_long=f"{DOWNSTREAM_DIR}/tableA2_performance_long.csv",
        gap_seeds=f"{DOWNSTREAM_DIR}/gap_seeds.csv",
        intersectional=multiext(f"{DOWNSTREAM_DIR}/intersectional_gaps", ".csv", ".md"),
        intersectional_skipped=f"{DOWNSTREAM_DIR}/intersectional_skipped.csv",
        # Table 5 and D5-D7: one per analysed debiased model (medbias.pipeline.plan.DEBIASED_TABLES)
        debiased=[
            f"{DOWNSTREAM_DIR}/{plan.DEBIASED_TABLES[attribute]}_debiased_{attribute}.{ext}"
            for attribute in downstream_debiased_tables().values()
            for ext in ("csv", "md")
        ],
        # Figures 4 and 5 (hurtful.downstream.figures): <figure>_gaps_<attribute>
        gap_figures=[
            f"{DOWNSTREAM_DIR}/{name}_gaps_{figure['attribute']}.{ext}"
            for name, figure in DOWNSTREAM["figures"].items()
            for ext in ("png", "pdf")
        ],
        figA1=(
            multiext(f"{DOWNSTREAM_DIR}/figA1_auprc", ".png", ".pdf")
            if figure_a1_model()
            else []
        ),
    log:
        f"{LOGS}/hurtful/downstream_tables.log",
    benchmark:
        f"{TIMINGS}/hurtful/downstream_tables.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("hurtful_downstream_tables.py"),
        settings=hyperparameter_notes("mimic", "hurtful.pretrain", "hurtful.downstream"),
        models=DOWNSTREAM["models"],
        attributes=DOWNSTREAM["attributes"],
        excluded=DOWNSTREAM["excluded_subgroups"],
        minimum=DOWNSTREAM["min_group"],
        alpha=DOWNSTREAM["alpha"],
        bootstrap=DOWNSTREAM["bootstrap"],
        intersectional=DOWNSTREAM["intersectional"],
        figures=DOWNSTREAM["figures"],
        debiased_tables=downstream_debiased_tables(),
        figure_a1_model=figure_a1_model(),
        replicates=DOWNSTREAM["replicates"],
    script:
        f"{SCRIPTS}/hurtful_downstream_tables.py"


# the hurtful study's target (here, after the downstream rules it names)
rule hurtful:
    input:
        rules.hurtful_table3.output.md,
        rules.hurtful_fill_blank.output.png,
        expand(rules.hurtful_pretrain.output.summary, variant=VARIANTS),
        rules.hurtful_probe.output.md if DEBIASED_ATTRIBUTES else [],
        rules.hurtful_downstream_tables.output.table4,
        rules.hurtful_mitigation.output.summary if MITIGATION["models"] else [],
        rules.hurtful_intersections.output.md if INTERSECTIONS["models"] else [],
        study_index("hurtful"),
