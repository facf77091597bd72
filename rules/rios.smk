# Study "rios": 60 years of gender bias in PubMed word2vec (Rios, Joshi and Shin 2020).
# Rules only; the logic lives in medbias.io.pubmed, medbias.core.skipgram, medbias.studies.rios and medbias.metrics.


rule rios_parse:
    input:
        xml=lambda wc: pubmed_file(wc.pubmed_file),
    output:
        parsed=f"{RIOS}/parsed/{{pubmed_file}}.parquet",
    log:
        f"{LOGS}/rios/parse_{{pubmed_file}}.log",
    benchmark:
        f"{TIMINGS}/rios/parse_{{pubmed_file}}.tsv"
    priority: EARLY_PRIORITY
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("rios_parse.py"),
    script:
        f"{SCRIPTS}/rios_parse.py"


rule rios_ingest:
    input:
        parsed=expand(
            f"{RIOS}/parsed/{{pubmed_file}}.parquet", pubmed_file=pubmed_file_stems()
        ),
    output:
        corpora=expand(f"{RIOS}/corpus/{{decade}}.parquet", decade=RIOS_DECADES),
        summary=f"{RIOS}/ingest_summary.json",
        table_csv=f"{RIOS}/table1_articles.csv",
        table_md=f"{RIOS}/table1_articles.md",
    log:
        f"{LOGS}/rios/ingest.log",
    benchmark:
        f"{TIMINGS}/rios/ingest.tsv"
    priority: EARLY_PRIORITY
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("rios_ingest.py"),
        decades=config["rios"]["decades"],
    script:
        f"{SCRIPTS}/rios_ingest.py"


rule rios_word2vec:
    input:
        corpus=f"{RIOS}/corpus/{{decade}}.parquet",
        umnsrs=config["resources"]["umnsrs_similarity"],
    output:
        vectors=f"{RIOS}/models/{{decade}}/replicate{{replicate}}.w2v.bin",
        search=f"{RIOS}/models/{{decade}}/replicate{{replicate}}.search.json",
    log:
        f"{LOGS}/rios/word2vec_{{decade}}_replicate{{replicate}}.log",
    wildcard_constraints:
        replicate=RIOS_SEARCHED_REPLICATES,
    cache: CACHE
    priority: EARLY_PRIORITY
    conda:
        "../envs/cpu.yaml"
    threads: config["rios"]["word2vec"]["threads"]
    resources:
        mem_mb=8000,
    params:
        code=library_code("rios_word2vec.py"),
        decade=lambda wc: wc.decade,
        defaults=config["rios"]["word2vec"]["defaults"],
        grid=config["rios"]["word2vec"]["grid"],
        strategy=config["rios"]["word2vec"]["search"],
        search_tokens=config["rios"]["word2vec"]["search_tokens"],
        epochs=config["rios"]["word2vec"]["epochs"],
        seed=seed_for("rios_word2vec"),
        replicate=lambda wc: int(wc.replicate),
    script:
        f"{SCRIPTS}/rios_word2vec.py"


# seed replicates r > 0 of replicate 0's chosen setting (replicates_search: once)
rule rios_word2vec_replicate:
    input:
        corpus=f"{RIOS}/corpus/{{decade}}.parquet",
        search=f"{RIOS}/models/{{decade}}/replicate0.search.json",
        umnsrs=config["resources"]["umnsrs_similarity"],
    output:
        vectors=f"{RIOS}/models/{{decade}}/replicate{{replicate}}.w2v.bin",
        search=f"{RIOS}/models/{{decade}}/replicate{{replicate}}.search.json",
    log:
        f"{LOGS}/rios/word2vec_{{decade}}_replicate{{replicate}}.log",
    wildcard_constraints:
        replicate=RIOS_RETRAINED_REPLICATES,
    cache: CACHE
    priority: EARLY_PRIORITY
    conda:
        "../envs/cpu.yaml"
    threads: config["rios"]["word2vec"]["threads"]
    resources:
        mem_mb=8000,
    params:
        code=library_code("rios_word2vec_replicate.py"),
        decade=lambda wc: wc.decade,
        defaults=config["rios"]["word2vec"]["defaults"],
        epochs=config["rios"]["word2vec"]["epochs"],
        seed=seed_for("rios_word2vec_replicate"),
        replicate=lambda wc: int(wc.replicate),
    script:
        f"{SCRIPTS}/rios_word2vec_replicate.py"


rule rios_document_null:
    input:
        corpus=f"{RIOS}/corpus/{{decade}}.parquet",
        search=f"{RIOS}/models/{{decade}}/replicate0.search.json",
        wordsets=config["resources"]["rios_wordsets"],
    output:
        csv=f"{RIOS}/document_null/{{decade}}.csv",
    log:
        f"{LOGS}/rios/document_null_{{decade}}.log",
    benchmark:
        f"{TIMINGS}/rios/document_null_{{decade}}.tsv"
    priority: EARLY_PRIORITY
    conda:
        "../envs/cpu.yaml"
    threads: config["rios"]["word2vec"]["threads"]
    resources:
        mem_mb=8000,
    params:
        code=library_code("rios_document_null.py"),
        decade=lambda wc: wc.decade,
        draws=config["rios"]["document_null_draws"],
        sample_tokens=config["rios"]["document_null_tokens"],
        defaults=config["rios"]["word2vec"]["defaults"],
        epochs=config["rios"]["word2vec"]["epochs"],
        seed=seed_for("rios_document_null"),
        min_fraction=config["rios"]["min_set_fraction"],
    script:
        f"{SCRIPTS}/rios_document_null.py"


rule rios_table3:
    input:
        expand(f"{RIOS}/models/{{decade}}/replicate0.search.json", decade=RIOS_DECADES),
    output:
        csv=f"{RIOS}/table3_embedding_quality.csv",
        md=f"{RIOS}/table3_embedding_quality.md",
    log:
        f"{LOGS}/rios/table3.log",
    benchmark:
        f"{TIMINGS}/rios/table3.tsv"
    priority: EARLY_PRIORITY
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("rios_table3.py"),
        settings=hyperparameter_notes("rios.word2vec"),
    script:
        f"{SCRIPTS}/rios_table3.py"


rule rios_weat:
    input:
        vectors=expand(
            f"{RIOS}/models/{{decade}}/replicate{{replicate}}.w2v.bin",
            decade=RIOS_DECADES,
            replicate=RIOS_REPLICATES,
        ),
        wordsets=config["resources"]["rios_wordsets"],
        document_null=(
            expand(f"{RIOS}/document_null/{{decade}}.csv", decade=RIOS_DECADES)
            if config["rios"]["document_null_draws"]
            else []
        ),
    output:
        csv=f"{RIOS}/fig1_weat.csv",
        md=f"{RIOS}/fig1_weat.md",
        seeds_csv=f"{RIOS}/fig1_weat_seeds.csv",
        trend_csv=f"{RIOS}/fig1_weat_trend.csv",
        trend_md=f"{RIOS}/fig1_weat_trend.md",
        coverage_csv=f"{RIOS}/table2_wordset_coverage.csv",
        coverage_md=f"{RIOS}/table2_wordset_coverage.md",
        png=f"{RIOS}/fig1_weat.png",
        pdf=f"{RIOS}/fig1_weat.pdf",
    log:
        f"{LOGS}/rios/weat.log",
    benchmark:
        f"{TIMINGS}/rios/weat.tsv"
    priority: EARLY_PRIORITY
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("rios_weat.py"),
        settings=hyperparameter_notes(
            "rios.decades",
            "rios.replicates",
            "rios.word2vec",
            "rios.permutation_budget",
            "rios.calibrated_null_draws",
            "rios.document_null_draws",
            "rios.document_null_tokens",
            "rios.alternative",
            "rios.bootstrap",
            "rios.min_set_fraction",
        ),
        decades=RIOS_DECADES,
        seed=seed_for("rios_weat"),
        budget=config["rios"]["permutation_budget"],
        alternative=config["rios"]["alternative"],
        bootstrap=config["rios"]["bootstrap"],
        min_fraction=config["rios"]["min_set_fraction"],
        replicates=len(RIOS_REPLICATES),
        null_draws=config["rios"]["calibrated_null_draws"],
        document_null_draws=config["rios"]["document_null_draws"],
    script:
        f"{SCRIPTS}/rios_weat.py"


rule rios_ect:
    input:
        vectors=expand(
            f"{RIOS}/models/{{decade}}/replicate0.w2v.bin", decade=RIOS_DECADES
        ),
        wordsets=config["resources"]["rios_wordsets"],
    output:
        csv=f"{RIOS}/fig2_ect.csv",
        md=f"{RIOS}/fig2_ect.md",
        coverage_csv=f"{RIOS}/fig2_ect_coverage.csv",
        coverage_md=f"{RIOS}/fig2_ect_coverage.md",
        png=f"{RIOS}/fig2_ect.png",
        pdf=f"{RIOS}/fig2_ect.pdf",
    log:
        f"{LOGS}/rios/ect.log",
    benchmark:
        f"{TIMINGS}/rios/ect.tsv"
    priority: EARLY_PRIORITY
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("rios_ect.py"),
        settings=hyperparameter_notes(
            "rios.decades", "rios.word2vec", "rios.bootstrap", "rios.min_set_fraction"
        ),
        decades=RIOS_DECADES,
        seed=seed_for("rios_ect"),
        bootstrap=config["rios"]["bootstrap"],
        min_fraction=config["rios"]["min_set_fraction"],
    script:
        f"{SCRIPTS}/rios_ect.py"


rule rios_ripa:
    input:
        vectors=expand(
            f"{RIOS}/models/{{decade}}/replicate0.w2v.bin", decade=RIOS_DECADES
        ),
        wordsets=config["resources"]["rios_wordsets"],
    output:
        csv=f"{RIOS}/table4_ripa_top.csv",
        md=f"{RIOS}/table4_ripa_top.md",
        wide_csv=f"{RIOS}/table4_ripa.csv",
        wide_md=f"{RIOS}/table4_ripa.md",
        scores_csv=f"{RIOS}/table4_ripa_all_scores.csv",
        pairs_csv=f"{RIOS}/table4_ripa_pairs.csv",
        pairs_md=f"{RIOS}/table4_ripa_pairs.md",
    log:
        f"{LOGS}/rios/ripa.log",
    benchmark:
        f"{TIMINGS}/rios/ripa.tsv"
    priority: EARLY_PRIORITY
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("rios_ripa.py"),
        settings=hyperparameter_notes(
            "rios.decades", "rios.word2vec", "rios.min_set_fraction", "rios.ripa_top"
        ),
        decades=RIOS_DECADES,
        top=config["rios"]["ripa_top"],
        min_fraction=config["rios"]["min_set_fraction"],
    script:
        f"{SCRIPTS}/rios_ripa.py"


rule rios:
    input:
        rules.rios_ingest.output.table_md,
        rules.rios_table3.output.md,
        rules.rios_weat.output.png,
        rules.rios_ect.output.png,
        rules.rios_ripa.output.md,
        study_index("rios"),
