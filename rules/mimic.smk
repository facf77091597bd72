# MIMIC-III ingest, note processing and the 57 downstream cohorts (Zhang et al. 2020).
# Note text lives only in the intermediate tables under config["intermediate"], never under results/.


rule mimic_ingest:
    input:
        tables=mimic_table_files(),
        categories=config["resources"]["note_categories"],
    output:
        notes=f"{TEXT_DIR}/mimic/notes.parquet",
        patients=f"{MIMIC}/tables/patients.parquet",
        admissions=f"{MIMIC}/tables/admissions.parquet",
        icustays=f"{MIMIC}/tables/icustays.parquet",
        diagnoses_icd=f"{MIMIC}/tables/diagnoses_icd.parquet",
        demographics=f"{MIMIC}/demographics.parquet",
        ethnicity_mapping=f"{MIMIC}/ethnicity_mapping.csv",
        counts=f"{MIMIC}/ingest_counts.json",
    log:
        f"{LOGS}/mimic/ingest.log",
    benchmark:
        f"{TIMINGS}/mimic/ingest.tsv"
    priority: CRITICAL_PATH_PRIORITY
    conda:
        "../envs/cpu.yaml"
    resources:
        mem_mb=8000,
    params:
        code=library_code("mimic_ingest.py"),
        mimic_dir=lambda w, input: os.path.dirname(input.tables[0]),
        chunk_size=config["mimic"]["chunk_size"],
    script:
        f"{SCRIPTS}/mimic_ingest.py"


rule mimic_tokenizer:
    input:
        model_inputs(config["mimic"]["base_model"]),
    output:
        directory(f"{MIMIC}/tokenizer"),
    log:
        f"{LOGS}/mimic/tokenizer.log",
    benchmark:
        f"{TIMINGS}/mimic/tokenizer.tsv"
    priority: CRITICAL_PATH_PRIORITY
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("mimic_tokenizer.py"),
        name=config["mimic"]["base_model"],
        entry=config["models"][config["mimic"]["base_model"]],
    script:
        f"{SCRIPTS}/mimic_tokenizer.py"


rule mimic_notes:
    input:
        notes=f"{TEXT_DIR}/mimic/notes.parquet",
        tokenizer=f"{MIMIC}/tokenizer",
    output:
        sequences=f"{TEXT_DIR}/mimic/sequences.parquet",
        counts=f"{MIMIC}/note_counts.parquet",
        summary=f"{MIMIC}/note_processing.json",
    log:
        f"{LOGS}/mimic/notes.log",
    benchmark:
        f"{TIMINGS}/mimic/notes.tsv"
    priority: CRITICAL_PATH_PRIORITY
    conda:
        "../envs/cpu.yaml"
    threads: config["mimic"]["threads"]
    resources:
        mem_mb=8000,
    params:
        code=library_code("mimic_notes.py"),
        min_pieces=config["mimic"]["min_pieces"],
        window=config["mimic"]["window"],
        stride=config["mimic"]["stride"],
        max_windows_per_note=config["mimic"]["max_windows_per_note"],
    script:
        f"{SCRIPTS}/mimic_notes.py"


rule mimic_cohorts:
    input:
        patients=f"{MIMIC}/tables/patients.parquet",
        admissions=f"{MIMIC}/tables/admissions.parquet",
        icustays=f"{MIMIC}/tables/icustays.parquet",
        diagnoses_icd=f"{MIMIC}/tables/diagnoses_icd.parquet",
        demographics=f"{MIMIC}/demographics.parquet",
        notes=f"{TEXT_DIR}/mimic/notes.parquet",
        note_counts=f"{MIMIC}/note_counts.parquet",
        hcup=config["resources"]["hcup_definitions"],
        testset=INPUTS["benchmark_testset"],
        acuity=acuity_files(),
    output:
        samples=f"{MIMIC}/task_samples.parquet",
        windows=f"{MIMIC}/cohort_windows.parquet",
        catalogue=f"{MIMIC}/tasks.csv",
        table_a1_csv=f"{MIMIC}/tableA1_tasks.csv",
        table_a1_md=f"{MIMIC}/tableA1_tasks.md",
        stats_csv=f"{MIMIC}/cohort_statistics.csv",
        stats_md=f"{MIMIC}/cohort_statistics.md",
        counts=f"{MIMIC}/cohort_counts.json",
    log:
        f"{LOGS}/mimic/cohorts.log",
    benchmark:
        f"{TIMINGS}/mimic/cohorts.tsv"
    priority: CRITICAL_PATH_PRIORITY
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("mimic_cohorts.py"),
        acuity_dir=lambda w, input: os.path.dirname(input.acuity[0]),
        acuity_missing=config["mimic"]["acuity_missing"],
        first_hours=config["mimic"]["first_hours"],
        max_windows_per_stay=config["mimic"]["max_windows_per_stay"],
        validation_fraction=config["mimic"]["validation_fraction"],
        seed=seed_for("mimic_cohorts"),
    script:
        f"{SCRIPTS}/mimic_cohorts.py"


rule mimic:
    input:
        rules.mimic_notes.output.sequences,
        rules.mimic_cohorts.output.table_a1_md,
        rules.mimic_cohorts.output.stats_md,
        rules.mimic_ingest.output.ethnicity_mapping,
        study_index("mimic"),
