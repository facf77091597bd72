# The demo world: synthetic inputs in the exact formats of the real ones, and tiny local models.
# Included only when world == demo, so a real-world run can never write into the user's data folders.

from medbias.synth.sizes import demo_sizes

DEMO = config["demo"]["dir"]
SIZES = demo_sizes(config["demo"])
SEED = config["seed"]
PUBMED_FILES = [
    f"{INPUTS['pubmed_dir']}/pubmed26n{i:04d}.xml.gz" for i in range(1, SIZES.pubmed_files + 2)
]
ABSTRACTS = f"{DEMO}/corpora/pubmed_abstracts.txt.gz"
NOTES = f"{INPUTS['mimic_dir']}/NOTEEVENTS.csv.gz"
TINY_TOKENIZER_VOCAB = {
    "bert": config["demo"]["tokenizer"]["wordpiece_vocab_size"],
    "gpt2": config["demo"]["tokenizer"]["bpe_vocab_size"],
    "bart": config["demo"]["tokenizer"]["bpe_vocab_size"],
}
WORD_VECTOR_SOURCES = {"general": ["notes"], "bio": ["abstracts", "notes"]}


def demo_world_targets():
    return [
        f"{DEMO}/truth.json",
        *expand(f"{DEMO}/models/tiny-{{arch}}", arch=TINY_ARCHS),
        *expand(f"{DEMO}/word-vectors/{{corpus}}-w2v.bin", corpus=WORD_VECTOR_CORPORA),
        f"{RESULTS}/demo_world/fig_demo_world.png",
    ]


rule synth_mimic:
    input:
        hcup=config["resources"]["hcup_definitions"],
    output:
        tables=expand(f"{INPUTS['mimic_dir']}/{{table}}.csv.gz", table=list(MIMIC_TABLES)),
        acuity=expand(f"{INPUTS['acuity_dir']}/{{name}}.csv", name=list(ACUITY_EXPORTS)),
        annotations=INPUTS["phenotype_annotations"],
        testset=INPUTS["benchmark_testset"],
        truth=f"{DEMO}/truth/mimic.json",
    params:
        patients=SIZES.patients,
        annotated_notes=SIZES.annotated_notes,
        annotators_per_note=config["demo"]["annotators_per_note"],
        seed=SEED,
    log:
        f"{LOGS}/synth/mimic.log",
    benchmark:
        f"{BENCHMARKS}/synth/mimic.tsv"
    script:
        f"{SCRIPTS}/synth_mimic.py"


rule synth_pubmed:
    output:
        files=PUBMED_FILES,
        corpus=ABSTRACTS,
        truth=f"{DEMO}/truth/pubmed.json",
    params:
        articles_per_decade=SIZES.pubmed_articles_per_decade,
        n_files=SIZES.pubmed_files,
        seed=SEED + 10,
    log:
        f"{LOGS}/synth/pubmed.log",
    benchmark:
        f"{BENCHMARKS}/synth/pubmed.tsv"
    script:
        f"{SCRIPTS}/synth_pubmed.py"


rule synth_truth:
    input:
        f"{DEMO}/truth/mimic.json",
        f"{DEMO}/truth/pubmed.json",
    output:
        f"{DEMO}/truth.json",
    params:
        seed=SEED,
        scale=config["demo"]["scale"],
    log:
        f"{LOGS}/synth/truth.log",
    script:
        f"{SCRIPTS}/synth_truth.py"


rule synth_tiny_model:
    input:
        notes=NOTES,
        corpus=ABSTRACTS,
    output:
        directory(f"{DEMO}/models/tiny-{{arch}}"),
    params:
        arch=lambda wc: wc.arch,
        vocab_size=lambda wc: TINY_TOKENIZER_VOCAB[wc.arch],
        model_params=lambda wc: config["demo"][wc.arch],
        seed=SEED + 20,
    threads: 2
    resources:
        mem_mb=4000,
    cache: "omit-software"
    log:
        f"{LOGS}/synth/tiny_model_{{arch}}.log",
    script:
        f"{SCRIPTS}/synth_tiny_model.py"


rule synth_word_vectors:
    input:
        notes=NOTES,
        corpus=ABSTRACTS,
    output:
        f"{DEMO}/word-vectors/{{corpus}}-w2v.bin",
    params:
        sources=lambda wc: WORD_VECTOR_SOURCES[wc.corpus],
        w2v=config["demo"]["word_vectors"],
        seed=lambda wc: SEED + 30 + WORD_VECTOR_CORPORA.index(wc.corpus),
    threads: 1
    cache: "omit-software"
    log:
        f"{LOGS}/synth/word_vectors_{{corpus}}.log",
    script:
        f"{SCRIPTS}/synth_word_vectors.py"


rule demo_world_summary:
    input:
        truth=f"{DEMO}/truth.json",
    output:
        png=report(
            f"{RESULTS}/demo_world/fig_demo_world.png",
            caption="../report/demo_world.rst",
            category="Demo world",
        ),
        pdf=f"{RESULTS}/demo_world/fig_demo_world.pdf",
        phenotypes_csv=f"{RESULTS}/demo_world/table_phenotypes.csv",
        planted_csv=report(
            f"{RESULTS}/demo_world/table_planted_effects.csv",
            caption="../report/demo_world_planted.rst",
            category="Demo world",
        ),
        planted_md=f"{RESULTS}/demo_world/table_planted_effects.md",
    log:
        f"{LOGS}/synth/summary.log",
    script:
        f"{SCRIPTS}/demo_world_summary.py"
