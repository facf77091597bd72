# The audit card (medbias.studies.audit.card): every intrinsic test that applies to one registry entry, on one
# page. `snakemake results/audit/<entry>/card.md`, or the target `audit` for every entry.


rule audit_fill_blank:
    input:
        model=lambda wc: model_inputs(wc.model),
    output:
        f"{AUDIT}/{{model}}/fill_blank.csv",
    log:
        f"{LOGS}/audit/fill_blank_{{model}}.log",
    benchmark:
        f"{TIMINGS}/audit/fill_blank_{{model}}.tsv"
    conda:
        "../envs/gpu.yaml"
    threads: 2
    params:
        code=library_code("audit_fill_blank.py"),
        model=lambda wc: wc.model,
        entry=lambda wc: config["models"][wc.model],
        templates=FILL_BLANK["templates"],
        fills=FILL_BLANK["race_words"],
        top_k=FILL_BLANK["top_k"],
    script:
        f"{SCRIPTS}/audit_fill_blank.py"


rule audit_weat:
    input:
        vectors=lambda wc: config["embeddings"][wc.model]["source"],
        wordsets=config["resources"]["caliskan_wordsets"],
    output:
        f"{AUDIT}/{{model}}/weat.csv",
    log:
        f"{LOGS}/audit/weat_{{model}}.log",
    benchmark:
        f"{TIMINGS}/audit/weat_{{model}}.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("audit_weat.py"),
        model=lambda wc: wc.model,
        entry=lambda wc: config["embeddings"][wc.model],
        budget=config["rios"]["permutation_budget"],
        bootstrap=config["rios"]["bootstrap"],
        min_fraction=config["rios"]["min_set_fraction"],
        null_draws=config["rios"]["calibrated_null_draws"],
        seed=seed_for("audit_weat"),
    script:
        f"{SCRIPTS}/audit_weat.py"


rule audit_card:
    input:
        unpack(audit_inputs),
    output:
        md=report(
            f"{AUDIT}/{{model}}/card.md",
            caption="../report/audit.rst",
            category="Audit cards",
            subcategory="{model}",
        ),
        json=f"{AUDIT}/{{model}}/card.json",
        png=f"{AUDIT}/{{model}}/card.png",
        pdf=f"{AUDIT}/{{model}}/card.pdf",
    log:
        f"{LOGS}/audit/card_{{model}}.log",
    benchmark:
        f"{TIMINGS}/audit/card_{{model}}.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("audit_card.py"),
        model=lambda wc: wc.model,
        entry=lambda wc: model_entry(wc.model),
        label=lambda wc: audit_label(wc.model),
        skipped=lambda wc: audit_skipped(wc.model),
        target_sets=LOGPROB["target_sets"],
        gender_set=LOGPROB["gender_set"],
        control_category=LOGPROB["control_category"],
        benchmarks=PLM_BENCHMARKS,
        seed=seed_for("audit_card"),
        settings_vectors=hyperparameter_notes(
            "rios.permutation_budget",
            "rios.bootstrap",
            "rios.min_set_fraction",
            "rios.calibrated_null_draws",
        ),
        settings_models=hyperparameter_notes(
            "plm.max_length",
            "plm.seat",
            "plm.stereoset",
            "plm.benchmarks",
            "hurtful.logprob",
            "hurtful.fill_blank",
        ),
    message:
        "{wildcards.model}: the audit card is {output.md} (its figure: {output.png})"
    script:
        f"{SCRIPTS}/audit_card.py"


rule audit:
    input:
        [f"{AUDIT}/{name}/card.md" for name in audit_entries()],
