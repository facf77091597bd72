# Study "mental" (Sogancioglu et al. 2023): gender bias in embeddings and mental-health phenotyping.
# Treated note text lives only under config["intermediate"]; results hold ids, numbers and single words.


rule mental_data:
    input:
        annotations=INPUTS["phenotype_annotations"],
        notes=f"{TEXT_DIR}/mimic/notes.parquet",
        patients=f"{MIMIC}/tables/patients.parquet",
    output:
        texts=f"{TEXT_DIR}/mental/texts.parquet",
        labels=f"{MENTAL}/labels.parquet",
        summary=f"{MENTAL}/data.json",
        table2_csv=f"{MENTAL}/table2_split.csv",
        table2_md=f"{MENTAL}/table2_split.md",
        fig1_csv=f"{MENTAL}/fig1_annotated_counts.csv",
        fig1_png=f"{MENTAL}/fig1_annotated_counts.png",
        fig1_pdf=f"{MENTAL}/fig1_annotated_counts.pdf",
    log:
        f"{LOGS}/mental/data.log",
    benchmark:
        f"{TIMINGS}/mental/data.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("mental_data.py"),
        tasks=MENTAL_CONFIG["tasks"],
        train_fraction=MENTAL_CONFIG["split"]["train_fraction"],
        per_cell=MENTAL_CONFIG["split"]["per_cell"],
        equal_cells=MENTAL_CONFIG["split"]["equal_cells"],
        seed=seed_for("mental_data"),
    script:
        f"{SCRIPTS}/mental_data.py"


rule mental_reference_tables:
    output:
        table1_csv=f"{MENTAL}/table1_phenotypes.csv",
        table1_md=f"{MENTAL}/table1_phenotypes.md",
        table3_csv=f"{MENTAL}/table3_gender_terms.csv",
        table3_md=f"{MENTAL}/table3_gender_terms.md",
    log:
        f"{LOGS}/mental/reference_tables.log",
    benchmark:
        f"{TIMINGS}/mental/reference_tables.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("mental_reference_tables.py"),
        tasks=MENTAL_CONFIG["tasks"],
    script:
        f"{SCRIPTS}/mental_reference_tables.py"


rule mental_features:
    input:
        embedding=lambda wc: model_inputs(wc.embedding),
        texts=f"{TEXT_DIR}/mental/texts.parquet",
    output:
        features=f"{MENTAL}/features/{{embedding}}.npy",
        index=f"{MENTAL}/features/{{embedding}}.parquet",
        summary=f"{MENTAL}/features/{{embedding}}.json",
    log:
        f"{LOGS}/mental/features_{{embedding}}.log",
    cache: CACHE
    conda:
        "../envs/gpu.yaml"
    threads: 2
    resources:
        mem_mb=16000,
        gpu=lambda wc: mental_embedding_gpus(wc.embedding),
    params:
        code=library_code("mental_features.py"),
        name=lambda wc: wc.embedding,
        entry=lambda wc: model_entry(wc.embedding),
        contextual=MENTAL_CONFIG["contextual"],
        seed=seed_for("mental_features"),
    script:
        f"{SCRIPTS}/mental_features.py"


rule mental_classify:
    input:
        features=f"{MENTAL}/features/{{embedding}}.npy",
        index=f"{MENTAL}/features/{{embedding}}.parquet",
        labels=f"{MENTAL}/labels.parquet",
    output:
        predictions=f"{MENTAL}/classify/{{embedding}}/predictions.parquet",
        selection=f"{MENTAL}/classify/{{embedding}}/selection.csv",
        gender=f"{MENTAL}/classify/{{embedding}}/gender_classifier.csv",
        models=f"{MENTAL}/classify/{{embedding}}/classifiers.joblib",
        null=f"{MENTAL}/classify/{{embedding}}/gender_null.csv",
    log:
        f"{LOGS}/mental/classify_{{embedding}}.log",
    benchmark:
        f"{TIMINGS}/mental/classify_{{embedding}}.tsv"
    conda:
        "../envs/cpu.yaml"
    threads: 1
    params:
        code=library_code("mental_classify.py"),
        name=lambda wc: wc.embedding,
        tasks=MENTAL_CONFIG["tasks"],
        treatments=MENTAL_CONFIG["treatments"],
        learners=MENTAL_CONFIG["learners"],
        svm=MENTAL_CONFIG["svm"],
        rf=MENTAL_CONFIG["rf"],
        mlp=MENTAL_CONFIG["mlp"],
        gender_task=MENTAL_CONFIG["gender_classifier_task"],
        null=MENTAL_CONFIG["gender_null"],
        seed=seed_for("mental_classify"),
    script:
        f"{SCRIPTS}/mental_classify.py"


rule mental_tables:
    input:
        predictions=expand(
            f"{MENTAL}/classify/{{embedding}}/predictions.parquet",
            embedding=MENTAL_CONFIG["embeddings"],
        ),
        gender=expand(
            f"{MENTAL}/classify/{{embedding}}/gender_classifier.csv",
            embedding=MENTAL_CONFIG["embeddings"],
        ),
        null=expand(
            f"{MENTAL}/classify/{{embedding}}/gender_null.csv",
            embedding=MENTAL_CONFIG["embeddings"],
        ),
    output:
        table5_csv=f"{MENTAL}/table5_fairness.csv",
        table5_md=f"{MENTAL}/table5_fairness.md",
        table5_long=f"{MENTAL}/table5_fairness_long.csv",
        table5_learners_md=f"{MENTAL}/table5_fairness_all_learners.md",
        treatment_leans=f"{MENTAL}/treatment_leans.csv",
        table4_csv=f"{MENTAL}/table4_gender_uar.csv",
        table4_md=f"{MENTAL}/table4_gender_uar.md",
    log:
        f"{LOGS}/mental/tables.log",
    benchmark:
        f"{TIMINGS}/mental/tables.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("mental_tables.py"),
        settings=hyperparameter_notes(
            "mental.tasks",
            "mental.treatments",
            "mental.learners",
            "mental.split",
            "mental.svm",
            "mental.rf",
            "mental.mlp",
            "mental.contextual",
            "mental.bootstrap",
            "mental.gender_classifier_task",
            "mental.gender_null",
        ),
        embeddings=MENTAL_CONFIG["embeddings"],
        labels=MENTAL_CONFIG["labels"],
        tasks=MENTAL_CONFIG["tasks"],
        treatments=MENTAL_CONFIG["treatments"],
        learners=MENTAL_CONFIG["learners"],
        bootstrap=MENTAL_CONFIG["bootstrap"],
        seed=seed_for("mental_tables"),
    script:
        f"{SCRIPTS}/mental_tables.py"


rule mental_direct_bias:
    input:
        embeddings=[
            path for name in MENTAL_CONFIG["embeddings"] for path in model_inputs(name)
        ],
        pairs=config["resources"]["gender_pairs"],
        synonyms=config["resources"]["depression_synonyms"],
    output:
        csv=f"{MENTAL}/fig2_direct_bias.csv",
        coverage=f"{MENTAL}/fig2_direct_bias_coverage.json",
        png=f"{MENTAL}/fig2_direct_bias.png",
        pdf=f"{MENTAL}/fig2_direct_bias.pdf",
    log:
        f"{LOGS}/mental/direct_bias.log",
    benchmark:
        f"{TIMINGS}/mental/direct_bias.tsv"
    conda:
        "../envs/gpu.yaml"
    params:
        code=library_code("mental_direct_bias.py"),
        embeddings=MENTAL_CONFIG["embeddings"],
        entries={n: model_entry(n) for n in MENTAL_CONFIG["embeddings"]},
        labels=MENTAL_CONFIG["labels"],
        pair_templates=MENTAL_CONFIG["direct_bias"]["pair_templates"],
        synonym_template=MENTAL_CONFIG["direct_bias"]["synonym_template"],
        min_pairs=MENTAL_CONFIG["direct_bias"]["min_pairs"],
        bootstrap=MENTAL_CONFIG["direct_bias"]["bootstrap"],
        random_words=MENTAL_CONFIG["direct_bias"]["random_words"],
        null_draws=MENTAL_CONFIG["direct_bias"]["null_draws"],
        seed=seed_for("mental_direct_bias"),
    script:
        f"{SCRIPTS}/mental_direct_bias.py"


rule mental_lime:
    input:
        embedding=model_inputs(MENTAL_CONFIG["lime"]["embedding"]),
        texts=f"{TEXT_DIR}/mental/texts.parquet",
        predictions=f"{MENTAL}/classify/{MENTAL_CONFIG['lime']['embedding']}/predictions.parquet",
        models=f"{MENTAL}/classify/{MENTAL_CONFIG['lime']['embedding']}/classifiers.joblib",
    output:
        csv=f"{MENTAL}/fig3_lime.csv",
        png=f"{MENTAL}/fig3_lime.png",
        pdf=f"{MENTAL}/fig3_lime.pdf",
    log:
        f"{LOGS}/mental/lime.log",
    benchmark:
        f"{TIMINGS}/mental/lime.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("mental_lime.py"),
        name=MENTAL_CONFIG["lime"]["embedding"],
        label=MENTAL_CONFIG["labels"].get(
            MENTAL_CONFIG["lime"]["embedding"], MENTAL_CONFIG["lime"]["embedding"]
        ),
        entry=model_entry(MENTAL_CONFIG["lime"]["embedding"]),
        lime=MENTAL_CONFIG["lime"],
        contextual=MENTAL_CONFIG["contextual"],
        seed=seed_for("mental_lime"),
    script:
        f"{SCRIPTS}/mental_lime.py"


rule mental:
    input:
        rules.mental_reference_tables.output.table1_md,
        rules.mental_data.output.table2_md,
        rules.mental_reference_tables.output.table3_md,
        rules.mental_data.output.fig1_png,
        rules.mental_tables.output.table4_md,
        rules.mental_tables.output.table5_md,
        rules.mental_direct_bias.output.png,
        rules.mental_lime.output.png,
        study_index("mental"),
