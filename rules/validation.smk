# Demo world only: measured error rates of the bias tests against the truth file.
# Rules only; the logic lives in medbias.validation (decisions, null_worlds, error_rates, recovery) and medbias.metrics.


rule validation_benchmark_control:
    input:
        models=expand(f"{DEMO}/models/tiny-plm-{{arch}}", arch=PLM_ARCHS),
        # the whole CrowS-Pairs file (the control draws plm.benchmarks.control_pairs of it) and the
        # benchmark table's StereoSet items (rule plm_benchmark_items)
        crows_pairs=config["resources"]["crows_pairs"],
        intrasentence=f"{PLM}/benchmark_items/intrasentence.parquet",
    output:
        f"{RESULTS}/validation/benchmark_control.csv",
    log:
        f"{LOGS}/validation/benchmark_control.log",
    benchmark:
        f"{TIMINGS}/validation/benchmark_control.tsv"
    conda:
        "../envs/cpu.yaml"
    threads: 2
    params:
        code=library_code("validation_benchmark_control.py"),
        architectures=PLM_ARCHS,
        kinds=[PLM_ARCH_KINDS[arch] for arch in PLM_ARCHS],
        settings={
            **{
                k: PLM_BENCHMARKS[k]
                for k in ("control_pairs", "control_seeds", "permutations", "alpha")
            },
            "crows_rules": PLM_BENCHMARKS["crows_pairs"]["rules"],
            "causal_score": PLM_BENCHMARKS["stereoset"]["causal_score"],
        },
        batch_size=PLM_CONFIG["batch_size"],
        seed=seed_for("validation_benchmark_control"),
    script:
        f"{SCRIPTS}/validation_benchmark_control.py"


# the post-processor's interval coverage on simulated tasks (medbias.validation.post_processor_coverage)
rule validation_post_processor_coverage:
    output:
        f"{RESULTS}/validation/post_processor_coverage.csv",
    log:
        f"{LOGS}/validation/post_processor_coverage.log",
    benchmark:
        f"{TIMINGS}/validation/post_processor_coverage.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("validation_post_processor_coverage.py"),
        tasks=config["demo"]["validation"]["post_processor_tasks"],
        replicates=DOWNSTREAM["bootstrap"],
        settings=MITIGATION["threshold"],
        seed=seed_for("validation_post_processor_coverage"),
    script:
        f"{SCRIPTS}/validation_post_processor_coverage.py"


rule validation_error_rates:
    input:
        truth=f"{DEMO}/truth.json",
        benchmark_control=rules.validation_benchmark_control.output[0],
        weat_seeds=f"{RIOS}/fig1_weat_seeds.csv",
        weat=f"{RIOS}/fig1_weat.csv",
        seat=f"{PLM}/seat_long.csv",
        tasks=f"{MIMIC}/tasks.csv",
        gaps=expand(
            f"{DOWNSTREAM_DIR}/{{model}}/gaps.parquet", model=DOWNSTREAM["models"]
        ),
        fairness=f"{MENTAL}/table5_fairness_long.csv",
        # the post-processor's changes (assessed when the baseline is mitigated with threshold)
        gap_changes=(
            f"{MITIGATION_DIR}/gap_changes.parquet" if MITIGATION_ASSESSED else []
        ),
        # the intersectional worst cells (assessed when the baseline is analysed)
        worst_cells=(
            f"{INTERSECTIONS_DIR}/worst_cells.csv"
            if "baseline" in INTERSECTIONS["models"]
            else []
        ),
        logprob=f"{HURTFUL}/table3_logprob_long.csv",
        base_model=model_inputs(config["hurtful"]["base_model"]),
        templates=LOGPROB["templates"],
        attributes=LOGPROB["attributes"],
        vignettes=[f"{VIGNETTE_DIR}/{m}/contrasts.csv" for m in VIGNETTE_TRAINED_MODELS],
        post_processor=(
            rules.validation_post_processor_coverage.output[0]
            if MITIGATION_ASSESSED
            and config["demo"]["validation"]["post_processor_tasks"]
            else []
        ),
    output:
        csv=f"{RESULTS}/validation/error_rates.csv",
        md=f"{RESULTS}/validation/error_rates.md",
        decisions=f"{RESULTS}/validation/decisions.csv",
        coverage=f"{RESULTS}/validation/vignette_coverage.csv",
        level=f"{RESULTS}/validation/vignette_test_level.csv",
        png=f"{RESULTS}/validation/error_rates.png",
        pdf=f"{RESULTS}/validation/error_rates.pdf",
    log:
        f"{LOGS}/validation/error_rates.log",
    benchmark:
        f"{TIMINGS}/validation/error_rates.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("validation_error_rates.py"),
        models=DOWNSTREAM["models"],
        alpha=DOWNSTREAM["alpha"],
        logprob_models=LOGPROB["models"],
        variants=VARIANTS,
        base_model=config["hurtful"]["base_model"],
        null_worlds=config["demo"]["validation"]["null_worlds"],
        null_draws=config["demo"]["validation"]["null_draws"],
        null_models=config["demo"]["validation"]["null_models"],
        coverage_sets=config["demo"]["validation"]["vignette_coverage_sets"],
        vignette_bootstrap=VIGNETTES["bootstrap"],
        vignette_min_difference=VIGNETTES["min_difference"],
        vignette_alpha=VIGNETTES["alpha"],
        base_model_entry=config["models"][config["hurtful"]["base_model"]],
        target_sets=LOGPROB["target_sets"],
        gender_set=LOGPROB["gender_set"],
        vignette_models=list(VIGNETTE_TRAINED_MODELS),
        seed=seed_for("validation_error_rates"),
    script:
        f"{SCRIPTS}/validation_error_rates.py"


rule validation_planted_recovery:
    input:
        truth=f"{DEMO}/truth.json",
        weat=for_recovery("rios", f"{RIOS}/fig1_weat.csv"),
        weat_trend=for_recovery("rios", f"{RIOS}/fig1_weat_trend.csv"),
        seat=for_recovery("plm", f"{PLM}/seat_long.csv"),
        tasks=for_recovery("hurtful", f"{MIMIC}/tasks.csv"),
        gaps=for_recovery(
            "hurtful",
            expand(
                f"{DOWNSTREAM_DIR}/{{model}}/gaps.parquet", model=DOWNSTREAM["models"]
            ),
        ),
        gap_seeds=for_recovery("hurtful", f"{DOWNSTREAM_DIR}/gap_seeds.csv"),
        # the post-processor's planted gap (assessed when the baseline is mitigated with threshold)
        gap_changes=for_recovery(
            "hurtful",
            f"{MITIGATION_DIR}/gap_changes.parquet" if MITIGATION_ASSESSED else [],
        ),
        performance_changes=for_recovery(
            "hurtful",
            f"{MITIGATION_DIR}/performance_changes.csv" if MITIGATION_ASSESSED else [],
        ),
        logprob=for_recovery("hurtful", f"{HURTFUL}/table3_logprob_long.csv"),
        worst_cells=for_recovery(
            "hurtful",
            (
                f"{INTERSECTIONS_DIR}/worst_cells.csv"
                if "baseline" in INTERSECTIONS["models"]
                else []
            ),
        ),
        fairness=for_recovery("mental", f"{MENTAL}/table5_fairness_long.csv"),
        treatment_leans=for_recovery("mental", f"{MENTAL}/treatment_leans.csv"),
        direct_bias=for_recovery("mental", f"{MENTAL}/fig2_direct_bias.csv"),
        vignettes=for_recovery(
            "vignettes",
            [f"{VIGNETTE_DIR}/{m}/contrasts.csv" for m in VIGNETTE_TRAINED_MODELS],
        ),
    output:
        csv=f"{RESULTS}/validation/planted_recovery.csv",
        md=f"{RESULTS}/validation/planted_recovery.md",
    log:
        f"{LOGS}/validation/planted_recovery.log",
    benchmark:
        f"{TIMINGS}/validation/planted_recovery.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("validation_planted_recovery.py"),
        models=DOWNSTREAM["models"],
        logprob_models=LOGPROB["models"],
        variants=VARIANTS,
        base_model=config["hurtful"]["base_model"],
        embeddings=config["embeddings"],
        vignette_models=list(VIGNETTE_TRAINED_MODELS),
        studies=RECOVERY_STUDIES,
        # the levels, sidedness and permutation counts behind each criterion and its margin
        criteria={
            "rios_alternative": config["rios"]["alternative"],
            "seat_alternative": PLM_CONFIG["seat"]["alternative"],
            "seat_alpha": PLM_CONFIG["seat"]["alpha"],
            "downstream_alpha": DOWNSTREAM["alpha"],
            "intersection_null_draws": INTERSECTIONS["null_draws"],
            "logprob_alpha": LOGPROB["alpha"],
            "direct_bias_null_draws": config["mental"]["direct_bias"]["null_draws"],
            "vignette_alpha": VIGNETTES["alpha"],
            "vignette_permutations": VIGNETTES["permutations"],
            "equivalence_margin": MITIGATION["equivalence_margin"],
            "equivalence_power": config["demo"]["validation"]["equivalence_power"],
            "removal_share": config["demo"]["validation"]["removal_share"],
        },
    script:
        f"{SCRIPTS}/validation_planted_recovery.py"


# a target that only collects files (runs in the main process on a cluster)
localrules:
    validation,


rule validation:
    input:
        rules.validation_error_rates.output.md,
        rules.validation_planted_recovery.output.md,
        study_index("validation"),
