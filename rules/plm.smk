# Study "plm" (Xie et al. 2024): SEAT and StereoSet-style race and LGBTQ+ tests of registry models,
# SentenceDebias / INLP / Dropout, and the tables that compare them.


rule plm_examples:
    input:
        wordsets=config["resources"]["xie2024_wordsets"],
    output:
        sentences=f"{PLM}/stereoset/sentences.parquet",
        pairs=f"{PLM}/stereoset/pairs.parquet",
        counts=f"{PLM}/stereoset/counts.json",
    log:
        f"{LOGS}/plm/examples.log",
    benchmark:
        f"{TIMINGS}/plm/examples.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("plm_examples.py"),
        templates=PLM_CONFIG["stereoset"]["templates"],
        families=PLM_CONFIG["stereoset"]["families"],
        unrelated=PLM_CONFIG["stereoset"]["unrelated"],
    script:
        f"{SCRIPTS}/plm_examples.py"


rule plm_dropout:
    input:
        model=lambda wc: model_inputs(wc.model),
        corpus=PLM_CONFIG["debias"]["dropout"]["corpus"],
    output:
        directory(f"{PLM}/dropout_models/{{model}}"),
    log:
        f"{LOGS}/plm/dropout_{{model}}.log",
    cache: CACHE
    conda:
        "../envs/gpu.yaml"
    threads: 2
    resources:
        gpu=PLM_CONFIG["debias"]["dropout"]["gpus"],
        mem_mb=16000,
    params:
        code=library_code("plm_continued_pretraining.py"),
        method="dropout",
        pairs={},
        model=lambda wc: wc.model,
        entry=lambda wc: config["models"][wc.model],
        settings=PLM_DROPOUT_TRAINING,
        seed=seed_for("plm_dropout"),
    script:
        f"{SCRIPTS}/plm_continued_pretraining.py"


rule plm_cda:
    input:
        model=lambda wc: model_inputs(wc.model),
        corpus=PLM_CONFIG["debias"]["dropout"]["corpus"],
        kept_phrases=config["resources"]["cda_kept_phrases"],
    output:
        directory(f"{PLM}/cda_{{cda_type}}_models/{{model}}"),
    log:
        f"{LOGS}/plm/cda_{{cda_type}}_{{model}}.log",
    cache: CACHE
    conda:
        "../envs/gpu.yaml"
    threads: 2
    resources:
        gpu=PLM_CONFIG["debias"]["dropout"]["gpus"],
        mem_mb=16000,
    params:
        code=library_code("plm_continued_pretraining.py"),
        method="cda",
        pairs=lambda wc: {
            wc.cda_type: PLM_CONFIG["debias"]["cda"]["pairs"][wc.cda_type]
        },
        model=lambda wc: wc.model,
        entry=lambda wc: config["models"][wc.model],
        settings=PLM_DROPOUT_TRAINING,
        seed=seed_for("plm_cda"),
    script:
        f"{SCRIPTS}/plm_continued_pretraining.py"


rule plm_projection:
    input:
        model=lambda wc: model_inputs(wc.model),
        sentences=f"{PLM}/stereoset/sentences.parquet",
        pairs=f"{PLM}/stereoset/pairs.parquet",
    output:
        projection=f"{PLM}/projections/{{model}}/{{method}}.npz",
        report=f"{PLM}/projections/{{model}}/{{method}}.json",
    log:
        f"{LOGS}/plm/projection_{{model}}_{{method}}.log",
    benchmark:
        f"{TIMINGS}/plm/projection_{{model}}_{{method}}.tsv"
    conda:
        "../envs/gpu.yaml"
    threads: 2
    resources:
        gpu=PLM_CONFIG["gpus"],
        mem_mb=16000,
    params:
        code=library_code("plm_projection.py"),
        model=lambda wc: wc.model,
        method=lambda wc: wc.method,
        entry=lambda wc: config["models"][wc.model],
        settings=lambda wc: PLM_CONFIG["debias"][wc.method],
        families=list(PLM_CONFIG["stereoset"]["families"]),
        pooling=PLM_CONFIG["seat"]["pooling"],
        batch_size=PLM_CONFIG["batch_size"],
        max_length=PLM_CONFIG["max_length"],
        seed=seed_for("plm_projection"),
    script:
        f"{SCRIPTS}/plm_projection.py"


rule plm_evaluate:
    input:
        unpack(plm_evaluation_inputs),
        wordsets=config["resources"]["xie2024_wordsets"],
        sentences=f"{PLM}/stereoset/sentences.parquet",
        pairs=f"{PLM}/stereoset/pairs.parquet",
    output:
        seat=f"{PLM}/scores/{{model}}/{{debias}}/seat.csv",
        stereoset=f"{PLM}/scores/{{model}}/{{debias}}/stereoset.csv",
        sentence_scores=f"{PLM}/scores/{{model}}/{{debias}}/sentence_scores.parquet",
        summary=f"{PLM}/scores/{{model}}/{{debias}}/summary.json",
    log:
        f"{LOGS}/plm/evaluate_{{model}}_{{debias}}.log",
    benchmark:
        f"{TIMINGS}/plm/evaluate_{{model}}_{{debias}}.tsv"
    conda:
        "../envs/gpu.yaml"
    threads: 2
    resources:
        gpu=PLM_CONFIG["gpus"],
        mem_mb=16000,
    params:
        code=library_code("plm_evaluate.py"),
        model=lambda wc: wc.model,
        debias=lambda wc: wc.debias,
        entry=lambda wc: plm_model_entry(wc.model, wc.debias),
        seat=SEAT_RUN,
        families=list(PLM_CONFIG["stereoset"]["families"]),
        ties_as_half=PLM_CONFIG["stereoset"]["ties_as_half"],
        batch_size=PLM_CONFIG["batch_size"],
        max_length=PLM_CONFIG["max_length"],
        seed=seed_for("plm_evaluate"),
    script:
        f"{SCRIPTS}/plm_evaluate.py"


rule plm_benchmark_items:
    input:
        crows_pairs=config["resources"]["crows_pairs"],
        stereoset=config["resources"]["stereoset"],
    output:
        crows_pairs=f"{PLM}/benchmark_items/crows_pairs.parquet",
        intrasentence=f"{PLM}/benchmark_items/intrasentence.parquet",
        intersentence=f"{PLM}/benchmark_items/intersentence.parquet",
        excluded=f"{PLM}/benchmark_items/excluded.json",
    log:
        f"{LOGS}/plm/benchmark_items.log",
    benchmark:
        f"{TIMINGS}/plm/benchmark_items.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("plm_benchmark_items.py"),
        sample=PLM_BENCHMARKS["sample"],
        seed=seed_for("plm_benchmark_items"),
    script:
        f"{SCRIPTS}/plm_benchmark_items.py"


rule plm_benchmark:
    input:
        unpack(plm_evaluation_inputs),
        # what the suite's plug-ins read (medbias.metrics.benchmarks), and the items set aside
        **BENCHMARK_INPUTS,
        excluded=rules.plm_benchmark_items.output.excluded,
    output:
        # one file per plug-in file key (medbias.metrics.benchmarks.evaluation_files)
        **{
            key: f"{PLM}/benchmarks/{{model}}/{{debias}}/{file}"
            for key, file in BENCHMARK_FILES.items()
        },
        summary=f"{PLM}/benchmarks/{{model}}/{{debias}}/summary.json",
    log:
        f"{LOGS}/plm/benchmark_{{model}}_{{debias}}.log",
    benchmark:
        f"{TIMINGS}/plm/benchmark_{{model}}_{{debias}}.tsv"
    conda:
        "../envs/gpu.yaml"
    threads: 2
    resources:
        gpu=PLM_CONFIG["gpus"],
        mem_mb=16000,
    params:
        code=library_code("plm_benchmark.py"),
        model=lambda wc: wc.model,
        debias=lambda wc: wc.debias,
        entry=lambda wc: plm_model_entry(wc.model, wc.debias),
        settings=BENCHMARK_RUN,
        seat={k: SEAT_RUN[k] for k in ("permutation_budget", "alternative")},
        held_out_texts=PLM_CONFIG["debias"]["dropout"]["held_out_texts"],
        perplexity_length=PLM_CONFIG["debias"]["dropout"]["max_length"],
        batch_size=PLM_CONFIG["batch_size"],
        max_length=PLM_CONFIG["max_length"],
        seed=seed_for("plm_benchmark"),
    script:
        f"{SCRIPTS}/plm_benchmark.py"


rule plm_benchmark_tables:
    input:
        **{
            key: [
                f"{PLM}/benchmarks/{m}/{d}/{file}"
                for m, d in plm_benchmark_evaluations()
            ]
            for key, file in BENCHMARK_FILES.items()
        },
        summary=[
            f"{PLM}/benchmarks/{m}/{d}/summary.json"
            for m, d in plm_benchmark_evaluations()
        ],
    output:
        csv=f"{PLM}/benchmarks.csv",
        md=f"{PLM}/benchmarks.md",
        long=f"{PLM}/benchmarks_long.csv",
        paired_csv=f"{PLM}/benchmarks_paired.csv",
        paired_md=f"{PLM}/benchmarks_paired.md",
        png=f"{PLM}/fig_benchmarks.png",
        pdf=f"{PLM}/fig_benchmarks.pdf",
    log:
        f"{LOGS}/plm/benchmark_tables.log",
    benchmark:
        f"{TIMINGS}/plm/benchmark_tables.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("plm_benchmark_tables.py"),
        settings=hyperparameter_notes(
            "plm.benchmarks", "plm.debias.dropout.held_out_texts"
        ),
        evaluations=plm_benchmark_evaluations(),
        labels=PLM_CONFIG["labels"],
        benchmarks=PLM_BENCHMARKS,
        seed=seed_for("plm_benchmark_tables"),
    script:
        f"{SCRIPTS}/plm_benchmark_tables.py"


rule plm_tables:
    input:
        seat=[f"{PLM}/scores/{m}/{d}/seat.csv" for m, d in plm_evaluations()],
        stereoset=[f"{PLM}/scores/{m}/{d}/stereoset.csv" for m, d in plm_evaluations()],
        summary=[f"{PLM}/scores/{m}/{d}/summary.json" for m, d in plm_evaluations()],
    output:
        seat_long=f"{PLM}/seat_long.csv",
        stereoset_long=f"{PLM}/stereoset_long.csv",
        table2_csv=f"{PLM}/table2_seat.csv",
        table2_md=f"{PLM}/table2_seat.md",
        table4_csv=f"{PLM}/table4_stereoset.csv",
        table4_md=f"{PLM}/table4_stereoset.md",
        table5_csv=f"{PLM}/table5_debias.csv",
        table5_md=f"{PLM}/table5_debias.md",
        table5_long=f"{PLM}/table5_debias_long.csv",
        fig2_png=f"{PLM}/fig2_seat.png",
        fig2_pdf=f"{PLM}/fig2_seat.pdf",
    log:
        f"{LOGS}/plm/tables.log",
    benchmark:
        f"{TIMINGS}/plm/tables.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("plm_tables.py"),
        settings=hyperparameter_notes(
            "plm.max_length", "plm.seat", "plm.stereoset", "plm.debias"
        ),
        evaluations=plm_evaluations(),
        models=PLM_CONFIG["models"],
        labels=PLM_CONFIG["labels"],
        methods=plm_debias_values(),
        families=list(PLM_CONFIG["stereoset"]["families"]),
        figure=PLM_CONFIG["seat"]["figure"],
        averages=PLM_CONFIG["seat"]["averages"],
        pooling=PLM_CONFIG["seat"]["pooling"],
        alternative=PLM_CONFIG["seat"]["alternative"],
        alpha=PLM_CONFIG["seat"]["alpha"],
    script:
        f"{SCRIPTS}/plm_tables.py"


rule plm_finetune:
    input:
        unpack(plm_evaluation_inputs),
        data=plm_downstream_inputs(),
    output:
        f"{PLM}/downstream/{{model}}/{{debias}}.json",
    log:
        f"{LOGS}/plm/finetune_{{model}}_{{debias}}.log",
    benchmark:
        f"{TIMINGS}/plm/finetune_{{model}}_{{debias}}.tsv"
    conda:
        "../envs/gpu.yaml"
    threads: 2
    resources:
        gpu=PLM_CONFIG["downstream"]["gpus"],
        mem_mb=16000,
    params:
        code=library_code("plm_finetune.py"),
        model=lambda wc: wc.model,
        debias=lambda wc: wc.debias,
        entry=lambda wc: plm_model_entry(wc.model, wc.debias),
        data=PLM_CONFIG["downstream"]["data"],
        glue_tasks=PLM_CONFIG["downstream"]["glue_tasks"],
        settings=PLM_CONFIG["downstream"]["settings"],
        max_length=PLM_CONFIG["downstream"]["max_length"],
        seed=seed_for("plm_finetune"),
    script:
        f"{SCRIPTS}/plm_finetune.py"


rule plm_table6:
    input:
        [f"{PLM}/downstream/{m}/{d}.json" for m, d in plm_finetunes()],
    output:
        csv=f"{PLM}/table6_downstream.csv",
        md=f"{PLM}/table6_downstream.md",
        long=f"{PLM}/table6_downstream_long.csv",
    log:
        f"{LOGS}/plm/table6.log",
    benchmark:
        f"{TIMINGS}/plm/table6.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("plm_table6.py"),
        settings=hyperparameter_notes("plm.debias", "plm.downstream"),
        models=PLM_CONFIG["downstream"]["models"],
        labels=PLM_CONFIG["labels"],
        methods=plm_debias_values(),
    script:
        f"{SCRIPTS}/plm_table6.py"


rule plm:
    input:
        rules.plm_tables.output.table2_md,
        rules.plm_tables.output.table4_md,
        rules.plm_tables.output.table5_md,
        rules.plm_tables.output.fig2_png,
        rules.plm_benchmark_tables.output.md,
        rules.plm_benchmark_tables.output.paired_md,
        rules.plm_benchmark_tables.output.png,
        rules.plm_table6.output.md if plm_finetunes() else [],
        study_index("plm"),
