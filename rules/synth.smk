# The demo world: synthetic inputs in the exact formats of the real ones, and tiny local models.
# Included only when world == demo, so a real-world run can never write into the user's data folders.


rule synth_mimic:
    input:
        hcup=config["resources"]["hcup_definitions"],
    output:
        tables=expand(
            f"{INPUTS['mimic_dir']}/{{table}}.csv.gz", table=list(MIMIC_TABLES)
        ),
        acuity=expand(f"{INPUTS['acuity_dir']}/{{name}}.csv", name=list(ACUITY_EXPORTS)),
        annotations=INPUTS["phenotype_annotations"],
        testset=INPUTS["benchmark_testset"],
        truth=f"{DEMO}/truth/mimic.json",
    log:
        f"{LOGS}/synth/mimic.log",
    benchmark:
        f"{TIMINGS}/synth/mimic.tsv"
    priority: CRITICAL_PATH_PRIORITY
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("synth_mimic.py"),
        patients=SIZES.patients,
        annotated_notes=SIZES.annotated_notes,
        annotators_per_note=config["demo"]["annotators_per_note"],
        seed=seed_for("synth_mimic"),
    script:
        f"{SCRIPTS}/synth_mimic.py"


rule synth_pubmed:
    input:
        wordsets=config["resources"]["rios_wordsets"],
        umnsrs=config["resources"]["umnsrs_similarity"],
    output:
        files=PUBMED_FILES,
        corpus=ABSTRACTS,
        truth=f"{DEMO}/truth/pubmed.json",
    log:
        f"{LOGS}/synth/pubmed.log",
    benchmark:
        f"{TIMINGS}/synth/pubmed.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("synth_pubmed.py"),
        articles_per_decade=SIZES.pubmed_articles_per_decade,
        n_files=SIZES.pubmed_files,
        seed=seed_for("synth_pubmed"),
    script:
        f"{SCRIPTS}/synth_pubmed.py"


rule synth_logprob_resources:
    output:
        templates=f"{DEMO}/hurtful/logprob_templates.txt",
        attributes=f"{DEMO}/hurtful/logprob_attributes.csv",
        truth=f"{DEMO}/truth/logprob.json",
    log:
        f"{LOGS}/synth/logprob_resources.log",
    benchmark:
        f"{TIMINGS}/synth/logprob_resources.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("synth_logprob_resources.py"),
    script:
        f"{SCRIPTS}/synth_logprob_resources.py"


rule synth_mental_truth:
    output:
        f"{DEMO}/truth/mental.json",
    log:
        f"{LOGS}/synth/mental_truth.log",
    benchmark:
        f"{TIMINGS}/synth/mental_truth.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("synth_mental_truth.py"),
    script:
        f"{SCRIPTS}/synth_mental_truth.py"


rule synth_plm_corpus:
    input:
        wordsets=config["resources"]["xie2024_wordsets"],
    output:
        corpus=PLM_CORPUS,
        truth=f"{DEMO}/truth/plm.json",
    log:
        f"{LOGS}/synth/plm_corpus.log",
    benchmark:
        f"{TIMINGS}/synth/plm_corpus.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("synth_plm_corpus.py"),
        mentions_per_group=config["demo"]["plm"]["mentions_per_group"],
        trained_models=PLM_TRAINED_MODELS,
        seed=seed_for("synth_plm_corpus"),
    script:
        f"{SCRIPTS}/synth_plm_corpus.py"


rule synth_plm_model:
    input:
        corpus=PLM_CORPUS,
    output:
        directory(f"{DEMO}/models/tiny-plm-{{plm_arch}}"),
    log:
        f"{LOGS}/synth/tiny_plm_model_{{plm_arch}}.log",
    cache: CACHE
    priority: LONG_TRAINING_PRIORITY
    conda:
        "../envs/cpu.yaml"
    threads: 2
    resources:
        mem_mb=4000,
    params:
        code=library_code("synth_plm_model.py"),
        arch=lambda wc: wc.plm_arch,
        vocab_size=lambda wc: TINY_TOKENIZER_VOCAB[wc.plm_arch],
        model_params=lambda wc: config["demo"][wc.plm_arch],
        training=config["demo"]["plm"],
        seed=seed_for("synth_plm_model"),
    script:
        f"{SCRIPTS}/synth_plm_model.py"


rule synth_plm_downstream:
    output:
        directory(f"{DEMO}/plm-downstream"),
    log:
        f"{LOGS}/synth/plm_downstream.log",
    benchmark:
        f"{TIMINGS}/synth/plm_downstream.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("synth_plm_downstream.py"),
        seed=seed_for("synth_plm_downstream"),
    script:
        f"{SCRIPTS}/synth_plm_downstream.py"


rule synth_vignettes:
    output:
        vignettes=f"{DEMO}/vignettes/demo.yaml",
        truth=f"{DEMO}/truth/vignettes.json",
    log:
        f"{LOGS}/synth/vignettes.log",
    benchmark:
        f"{TIMINGS}/synth/vignettes.tsv"
    priority: LONG_TRAINING_PRIORITY
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("synth_vignettes.py"),
        settings=config["demo"]["vignettes"],
        trained_models=VIGNETTE_TRAINED_MODELS,
        set_name=next(
            (
                name
                for name, path in VIGNETTES["sets"].items()
                if path == f"{DEMO}/vignettes/demo.yaml"
            ),
            "demo",
        ),
    script:
        f"{SCRIPTS}/synth_vignettes.py"


rule synth_vignette_model:
    input:
        vignettes=rules.synth_vignettes.output.vignettes,
    output:
        directory(f"{DEMO}/models/tiny-vignette-{{vignette_arch}}"),
    log:
        f"{LOGS}/synth/tiny_vignette_model_{{vignette_arch}}.log",
    cache: CACHE
    priority: LONG_TRAINING_PRIORITY
    conda:
        "../envs/cpu.yaml"
    threads: 2
    resources:
        mem_mb=4000,
    params:
        code=library_code("synth_vignette_model.py"),
        arch=lambda wc: wc.vignette_arch,
        settings=config["demo"]["vignettes"],
        gpt2=config["demo"]["gpt2"],
        vocab_size=config["demo"]["tokenizer"]["bpe_vocab_size"],
        prompts={
            key: VIGNETTES[key] for key in ("prompt", "chat_prompt", "system_prompt")
        },
        seed=seed_for("synth_vignette_model"),
    script:
        f"{SCRIPTS}/synth_vignette_model.py"


rule synth_truth:
    input:
        f"{DEMO}/truth/mimic.json",
        f"{DEMO}/truth/pubmed.json",
        f"{DEMO}/truth/logprob.json",
        f"{DEMO}/truth/mental.json",
        f"{DEMO}/truth/plm.json",
        f"{DEMO}/truth/vignettes.json",
    output:
        f"{DEMO}/truth.json",
    log:
        f"{LOGS}/synth/truth.log",
    benchmark:
        f"{TIMINGS}/synth/truth.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("synth_truth.py"),
        seed=seed_for("synth_truth"),
        scale=config["demo"]["scale"],
    script:
        f"{SCRIPTS}/synth_truth.py"


rule synth_tiny_model:
    input:
        notes=NOTES,
        corpus=ABSTRACTS,
    output:
        directory(f"{DEMO}/models/tiny-{{arch}}"),
    log:
        f"{LOGS}/synth/tiny_model_{{arch}}.log",
    cache: CACHE
    priority: CRITICAL_PATH_PRIORITY
    conda:
        "../envs/cpu.yaml"
    threads: 2
    resources:
        mem_mb=4000,
    params:
        code=library_code("synth_tiny_model.py"),
        arch=lambda wc: wc.arch,
        vocab_size=lambda wc: TINY_TOKENIZER_VOCAB[wc.arch],
        model_params=lambda wc: config["demo"][wc.arch],
        seed=seed_for("synth_tiny_model"),
    script:
        f"{SCRIPTS}/synth_tiny_model.py"


rule synth_word_vectors:
    input:
        notes=NOTES,
        corpus=ABSTRACTS,
        pairs=config["resources"]["gender_pairs"],
        synonyms=config["resources"]["depression_synonyms"],
    output:
        f"{DEMO}/word-vectors/{{corpus}}-w2v.bin",
    log:
        f"{LOGS}/synth/word_vectors_{{corpus}}.log",
    cache: CACHE
    conda:
        "../envs/cpu.yaml"
    threads: 1
    params:
        code=library_code("synth_word_vectors.py"),
        sources=lambda wc: WORD_VECTOR_SOURCES[wc.corpus],
        w2v=config["demo"]["word_vectors"],
        seed=lambda wc: seed_for("synth_word_vectors")
        + WORD_VECTOR_CORPORA.index(wc.corpus),
    script:
        f"{SCRIPTS}/synth_word_vectors.py"


rule demo_world_summary:
    input:
        truth=f"{DEMO}/truth.json",
    output:
        png=f"{RESULTS}/demo_world/fig_demo_world.png",
        pdf=f"{RESULTS}/demo_world/fig_demo_world.pdf",
        phenotypes_csv=f"{RESULTS}/demo_world/table_phenotypes.csv",
        planted_csv=f"{RESULTS}/demo_world/table_planted_effects.csv",
        planted_md=f"{RESULTS}/demo_world/table_planted_effects.md",
    log:
        f"{LOGS}/synth/summary.log",
    benchmark:
        f"{TIMINGS}/synth/summary.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("demo_world_summary.py"),
    script:
        f"{SCRIPTS}/demo_world_summary.py"


# a target that only collects files (runs in the main process on a cluster)
localrules:
    demo_world,


rule demo_world:
    input:
        demo_world_targets(),
        study_index("demo_world"),
