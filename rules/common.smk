import functools
import re

# Paths, wildcard constraints and helpers shared by every rule file. No rule logic here.

from medbias.core.provenance import code_fingerprint
from medbias.io.formats import ACUITY_EXPORTS, MIMIC_TABLES, find_table
from medbias.pipeline import plan
from medbias.pipeline.hyperparameters import load_schema, settings_note
from medbias.pipeline.report import caption_rst, folder_pages, load_items
from medbias.core.seeds import rule_seed
from medbias.synth.sizes import demo_sizes

RESULTS = config["results"]
LOGS = "logs"
TIMINGS = "timings"
INPUTS = config["inputs"]
SCRIPTS = str(Path(workflow.basedir) / "workflow_scripts")

RIOS = f"{RESULTS}/rios"
MIMIC = f"{RESULTS}/mimic"
HURTFUL = f"{RESULTS}/hurtful"
MENTAL = f"{RESULTS}/mental"
PLM = f"{RESULTS}/plm"
AUDIT = f"{RESULTS}/audit"
VIGNETTE_DIR = f"{RESULTS}/vignettes"
TEXT_DIR = config["intermediate"]
RIOS_DECADES = [f"{start}-{end}" for start, end in config["rios"]["decades"]]
RIOS_REPLICATES = list(range(config["rios"]["replicates"]))
# replicates_search "once": replicate 0 searches (rios_word2vec) and r > 0 retrain its choice
# (rios_word2vec_replicate); "each": every replicate searches and the retraining rule matches nothing
RIOS_SEARCH_ONCE = config["rios"]["word2vec"]["replicates_search"] == "once"
RIOS_SEARCHED_REPLICATES = "0" if RIOS_SEARCH_ONCE else r"\d+"
RIOS_RETRAINED_REPLICATES = r"[1-9]\d*" if RIOS_SEARCH_ONCE else "(?!)"

# the chain to the clinical BERT pretraining (the demo's MIMIC tables and tiny BERT, the note pipeline,
# the cohorts, the pretraining itself) is the longest in the DAG: its jobs go first whenever they are
# ready. Left to Snakemake's default order, a 2-core demo ran the other studies first and the two
# pretrainings last, one after the other.
CRITICAL_PATH_PRIORITY = 10
# the rios study needs no model of the other studies and costs about 3 job-minutes, and a report page
# costs a fraction of a second: they go before everything, so that rios's tables and each study's pages
# come as soon as they can. With every job on one thread, a 2-core demo is busy on both cores to its
# end either way; left behind the trainings, rios finished near the run's end, not at its start.
EARLY_PRIORITY = 20
# the long trainings that only their own studies wait on (the plm and vignette studies' tiny models):
# after the critical path, before the short jobs, so that none is left for the run's end. Without it
# the vignette models trained last in a 2-core demo, one job alone on the cores for minutes.
LONG_TRAINING_PRIORITY = 5
TINY_ARCHS = ["bert", "gpt2", "bart"]
PLM_ARCHS = ["bert", "gpt2"]  # tiny models trained on the plm corpus (demo world)
PLM_ARCH_KINDS = {"bert": "masked", "gpt2": "causal"}
VIGNETTE_ARCHS = [
    "gpt2",
    "chat",
]  # the demo's vignette models: plain causal, and chat (Llama architecture)
WORD_VECTOR_CORPORA = ["general", "bio"]
# the demo world's planted recovery (a real run has no demo section)
RECOVERY_STUDIES = config.get("demo", {}).get("validation", {}).get("studies", [])


wildcard_constraints:
    arch="|".join(TINY_ARCHS),
    corpus="|".join(WORD_VECTOR_CORPORA),
    model="[A-Za-z0-9_]+",
    decade="|".join(RIOS_DECADES),
    replicate=r"\d+",
    variant="|".join(config["hurtful"]["variants"]),
    embedding="|".join(config["mental"]["embeddings"]),
    debias="none|dropout|cda_[a-z_]+|sentencedebias|inlp|selfdebias",
    cda_type="[a-z_]+",
    method="sentencedebias|inlp",
    plm_arch="bert|gpt2|bart",
    vignette_arch="|".join(VIGNETTE_ARCHS),
    pubmed_file=r"pubmed[^/.]+",


# study "hurtful": pretrained variants and the analyses' settings
VARIANTS = config["hurtful"][
    "variants"
]  # includes the baseline (checked with the config)
LOGPROB = config["hurtful"]["logprob"]
DOWNSTREAM = config["hurtful"]["downstream"]
DOWNSTREAM_DIR = f"{HURTFUL}/downstream"
FILL_BLANK = config["hurtful"]["fill_blank"]


# demo-world paths and sizes (used by rules/synth.smk, which is included only in the demo world)
if config["world"] == "demo":
    DEMO = config["demo"]["dir"]
    SIZES = demo_sizes(config["demo"])
    PUBMED_FILES = [
        f"{INPUTS['pubmed_dir']}/pubmed26n{i:04d}.xml.gz"
        for i in range(1, SIZES.pubmed_files + 2)
    ]
    ABSTRACTS = f"{DEMO}/corpora/pubmed_abstracts.txt.gz"
    NOTES = f"{INPUTS['mimic_dir']}/NOTEEVENTS.csv.gz"
    PLM_CORPUS = f"{DEMO}/corpora/plm_sentences.txt.gz"
    # the plm study's registry entries that the demo's trained plm models stand behind (the truth
    # file's expectations; another study may use the same models as stand-ins of its own)
    PLM_TRAINED_MODELS = [
        name
        for name, entry in config["models"].items()
        if Path(str(entry["source"])).name.startswith("tiny-plm-")
        and name in config["plm"]["models"]
    ]
    # the registry entries that the demo's vignette models stand behind, by model folder (gpt2, chat)
    VIGNETTE_TRAINED_MODELS = {
        name: Path(str(entry["source"])).name.removeprefix("tiny-vignette-")
        for name, entry in config["models"].items()
        if Path(str(entry["source"])).name.startswith("tiny-vignette-")
    }
    TINY_TOKENIZER_VOCAB = {
        "bert": config["demo"]["tokenizer"]["wordpiece_vocab_size"],
        "gpt2": config["demo"]["tokenizer"]["bpe_vocab_size"],
        "bart": config["demo"]["tokenizer"]["bpe_vocab_size"],
    }
    WORD_VECTOR_SOURCES = {
        "general": ["notes", "depression"],
        "bio": ["abstracts", "notes", "depression"],
    }

    def demo_world_targets():
        """The demo world itself: its truth file, input tables, corpora, tiny models and vectors."""
        return [
            f"{DEMO}/truth.json",
            *mimic_table_files(),
            *acuity_files(),
            INPUTS["phenotype_annotations"],
            INPUTS["benchmark_testset"],
            *pubmed_files(),
            *expand(f"{DEMO}/models/tiny-{{arch}}", arch=TINY_ARCHS),
            *expand(
                f"{DEMO}/word-vectors/{{corpus}}-w2v.bin", corpus=WORD_VECTOR_CORPORA
            ),
            f"{RESULTS}/demo_world/fig_demo_world.png",
            *expand(f"{DEMO}/models/tiny-plm-{{plm_arch}}", plm_arch=PLM_ARCHS),
            *expand(
                f"{DEMO}/models/tiny-vignette-{{vignette_arch}}",
                vignette_arch=VIGNETTE_ARCHS,
            ),
        ]


@functools.cache
def pubmed_files_by_stem():
    """The PubMed files, the demo world's (built by synth_pubmed) or the real folder's, in name order,
    keyed by the name without .xml(.gz): the wildcard of each file's parse job (rios_parse). Read once:
    the folder holds about 1,300 files."""
    if config["world"] == "demo":
        files = PUBMED_FILES
    else:
        files = sorted(str(p) for p in Path(INPUTS["pubmed_dir"]).glob("pubmed*.xml*"))
    return {Path(path).name.split(".xml")[0]: path for path in files}


def pubmed_files():
    return list(pubmed_files_by_stem().values())


def pubmed_file_stems():
    return list(pubmed_files_by_stem())


def pubmed_file(stem):
    return pubmed_files_by_stem()[stem]


def mimic_table_files():
    """The five MIMIC-III tables: the demo world's (built by synth_mimic) or the user's files."""
    if config["world"] == "demo":
        return [f"{INPUTS['mimic_dir']}/{t}.csv.gz" for t in MIMIC_TABLES]
    return [str(find_table(INPUTS["mimic_dir"], t)) for t in MIMIC_TABLES]


def acuity_files():
    if config["world"] == "demo":
        return [f"{INPUTS['acuity_dir']}/{a}.csv" for a in ACUITY_EXPORTS]
    return [str(find_table(INPUTS["acuity_dir"], a)) for a in ACUITY_EXPORTS]


def model_entry(name):
    """What a job loads for a registry model, word-vector entry or pretrained variant (medbias.pipeline.plan)."""
    return plan.model_entry(config, name, f"{HURTFUL}/models")


def model_inputs(name):
    """The files a job that loads ``name`` waits for (medbias.pipeline.plan.model_input_files)."""
    return plan.model_input_files(config, name, f"{HURTFUL}/models")


DEBIASED_ATTRIBUTES = plan.debiased_attributes(VARIANTS)

# the mitigation stage and the intersectional groups (docs/mitigation.md)
MITIGATION = config["hurtful"]["mitigation"]
INTERSECTIONS = config["hurtful"]["intersections"]
INTERSECTION_SLUGS = ["_x_".join(crossing) for crossing in INTERSECTIONS["crossings"]]

# the report's pages: every paper table and figure of the run (report/items.yaml, rules/report.smk)
REPORT_ITEMS = load_items(
    Path(workflow.basedir) / "report" / "items.yaml",
    config["world"],
    left_out=plan.report_left_out(
        bool(DEBIASED_ATTRIBUTES),
        bool(MITIGATION["models"]),
        bool(INTERSECTIONS["models"]),
        INTERSECTION_SLUGS,
    ),
)
REPORT_FOLDERS = folder_pages(REPORT_ITEMS)


def for_recovery(study, paths):
    """The planted recovery's inputs of ``study``: none when the config leaves the study out."""
    return paths if study in RECOVERY_STUDIES else []


def study_index(folder):
    """The list of a results folder's tables and figures (rule study_index, which logs where they are)."""
    return f"{RESULTS}/{folder}/index.md"


def downstream_debiased_tables():
    """Table 5 / D5-D7 name -> attribute, for each attribute whose debiased model is analysed."""
    return plan.debiased_tables(DOWNSTREAM["models"])


def figure_a1_model():
    """The debiased model Figure A1 compares with the baseline, or None (medbias.pipeline.plan)."""
    return plan.figure_a1_model(DOWNSTREAM["models"])


MITIGATION_DIR = f"{DOWNSTREAM_DIR}/mitigation"  # the stage's tables and figure (per model: <model>/mitigation/)
MITIGATION_JOB_METHODS = sorted(
    {method for _, method in plan.mitigation_jobs(MITIGATION)}
)
MITIGATION_ENCODERS = plan.adversarial_encoders(DOWNSTREAM["models"], MITIGATION)
# the validation reads the post-processor's closing of the planted gap when the stage computes it
MITIGATION_ASSESSED = (
    "baseline" in MITIGATION["models"] and "threshold" in MITIGATION["methods"]
)


INTERSECTIONS_DIR = f"{DOWNSTREAM_DIR}/intersections"


def mitigation_inputs(wildcards):
    """What a mitigation job reads: the model's test and validation predictions, and for a method
    that retrains (medbias.studies.hurtful.mitigation) the classifiers' features and choices.
    """
    inputs = {
        "test": f"{DOWNSTREAM_DIR}/{wildcards.model}/test_predictions.parquet",
        "validation": f"{DOWNSTREAM_DIR}/{wildcards.model}/validation_predictions.parquet",
        "tasks": f"{MIMIC}/tasks.csv",
    }
    if plan.mitigation_method(wildcards.method).retrains:
        inputs.update(
            {k: v.format(model=wildcards.model) for k, v in CLASSIFY_INPUT.items()}
        )
        inputs["selection"] = f"{DOWNSTREAM_DIR}/{wildcards.model}/selection.csv"
    return inputs


def mitigation_effect_inputs(wildcards):
    """What the mitigation tables read: each mitigated model's test predictions, every job's
    predictions and fit report, and the adversarial encoders' classifiers' test predictions.
    """
    jobs = plan.mitigation_jobs(MITIGATION)
    return {
        "tasks": f"{MIMIC}/tasks.csv",
        "test": [
            f"{DOWNSTREAM_DIR}/{m}/test_predictions.parquet"
            for m in MITIGATION["models"]
        ],
        "predictions": [
            f"{DOWNSTREAM_DIR}/{m}/mitigation/{k}/predictions.parquet" for m, k in jobs
        ],
        "fits": [f"{DOWNSTREAM_DIR}/{m}/mitigation/{k}/fit.csv" for m, k in jobs],
        "encoders": [
            f"{DOWNSTREAM_DIR}/{m}/test_predictions.parquet"
            for m in MITIGATION_ENCODERS.values()
        ],
    }


def downstream_replicate_gaps():
    """The gaps of every model's classifier seed replicates r >= 1, model-major (replicate 0 is
    {model}/gaps.parquet)."""
    return [
        f"{DOWNSTREAM_DIR}/{model}/replicate{r}/gaps.parquet"
        for model in DOWNSTREAM["models"]
        for r in range(1, DOWNSTREAM["replicates"])
    ]


# study "mental": embeddings are word vectors (`embeddings:`), registry models or hurtful variants
MENTAL_CONFIG = config["mental"]


def mental_embedding_gpus(name):
    """GPUs a mental features job asks for: the contextual setting for models, none for word vectors."""
    if name in config["embeddings"]:
        return 0
    return MENTAL_CONFIG["contextual"]["gpus"]


# study "plm": every model plain, and debiased by each configured method it can take
PLM_CONFIG = config["plm"]
PLM_BENCHMARKS = PLM_CONFIG["benchmarks"]
# what one model's SEAT run and benchmark job read (their params): the tables' averages, figure, alpha and
# sample sizes are the table rules', and the untrained control's seeds and pairs its own rule's
SEAT_RUN = {
    k: v for k, v in PLM_CONFIG["seat"].items() if k not in ("averages", "figure")
}
BENCHMARK_RUN = plan.benchmark_run_settings(PLM_BENCHMARKS)
# the benchmark plug-ins' per-evaluation files (key -> file name) and what their scoring job reads
BENCHMARK_FILES = plan.benchmark_files(PLM_BENCHMARKS["suite"])
BENCHMARK_INPUTS = plan.benchmark_inputs(PLM_BENCHMARKS["suite"], config, PLM)
# what a Dropout job reads: not the model list (adding a model retrains no other), the corpus (an input) or gpus
PLM_DROPOUT_TRAINING = {
    key: value
    for key, value in PLM_CONFIG["debias"]["dropout"].items()
    if key not in ("models", "corpus", "gpus")
}


def plm_evaluations():
    """(model, debias) pairs the plm tables need (medbias.pipeline.plan.plm_evaluations)."""
    return plan.plm_evaluations(PLM_CONFIG, config["models"])


def plm_benchmark_evaluations():
    """(model, debias) pairs of the benchmark table: the plm evaluations and the Self-Debias rows."""
    return plan.plm_benchmark_evaluations(PLM_CONFIG, config["models"])


def plm_finetunes():
    """(model, debias) pairs fine-tuned for Table 6."""
    return plan.plm_finetunes(PLM_CONFIG, config["models"])


def plm_debias_values():
    """The debias values of the configured methods, CDA once per bias type (medbias.pipeline.plan)."""
    return plan.debias_values(PLM_CONFIG)


def plm_downstream_inputs():
    """The benchmark folders: built by the demo world (one folder rule), or the user's copies."""
    if config["world"] == "demo":
        return [f"{DEMO}/plm-downstream"]
    return list(PLM_CONFIG["downstream"]["data"].values())


def plm_model_entry(model, debias):
    """The entry a plm evaluation loads: the Dropout or CDA folder for those methods."""
    if plan.method_of(debias) in ("dropout", "cda"):
        return {**model_entry(model), "source": f"{PLM}/{debias}_models/{model}"}
    return model_entry(model)


def plm_evaluation_inputs(wildcards):
    """The model folder (demo), the Dropout or CDA folder or the fitted projection of one evaluation."""
    files = {"model": model_inputs(wildcards.model)}
    if plan.method_of(wildcards.debias) in ("dropout", "cda"):
        files["model"] = [f"{PLM}/{wildcards.debias}_models/{wildcards.model}"]
    elif wildcards.debias in ("sentencedebias", "inlp"):
        files["projection"] = (
            f"{PLM}/projections/{wildcards.model}/{wildcards.debias}.npz"
        )
    return files


# study "vignettes": the chosen causal registry entries (vignettes.models; unset: every one) answer every
# configured vignette set; any causal entry can (its audit card asks)
VIGNETTES = config["vignettes"]
VIGNETTE_CAPABLE_MODELS = plan.vignette_models(config["models"])
VIGNETTE_MODELS = plan.vignette_models(config["models"], VIGNETTES["models"])


# the audit card: every registry entry, each with the tests its kind allows
def audit_entries():
    """Every registry model and word-vector entry (the `audit` target's cards)."""
    return [*config["models"], *config["embeddings"]]


def audit_label(name):
    return {**config["embeddings"], **config["models"]}[name].get("label", name)


def audit_skipped(name):
    """(section, reason) of the tests the entry's type or kind rules out before anything runs."""
    entry = model_entry(name)
    return plan.audit_skipped(entry["type"], entry.get("kind"))


def audit_inputs(wildcards):
    """The evaluations a card gathers, by the entry's kind (its manifest lines are read directly)."""
    name = wildcards.model
    entry = model_entry(name)
    files = {
        "weat": f"{AUDIT}/{name}/weat.csv",
        "seat": f"{PLM}/scores/{name}/none/seat.csv",
        "stereoset": f"{PLM}/scores/{name}/none/stereoset.csv",
        "summary": f"{PLM}/scores/{name}/none/summary.json",
        "logprob": f"{HURTFUL}/logprob/{name}.parquet",
        "logprob_words": f"{HURTFUL}/logprob/{name}_words.json",
        "fill_blank": f"{AUDIT}/{name}/fill_blank.csv",
        **{
            f"benchmark_{key}": rules.plm_benchmark.output[key]
            for key in BENCHMARK_FILES
        },
        "benchmark_summary": rules.plm_benchmark.output.summary,
        "vignettes": f"{VIGNETTE_DIR}/{name}/contrasts.csv",
        "vignette_scores": f"{VIGNETTE_DIR}/{name}/scores.json",
        "vignette_option_mass": f"{VIGNETTE_DIR}/{name}/option_mass.json",
    }
    return {
        section: files[section].format(model=name, debias="none")
        for section in plan.audit_sections(
            entry["type"], entry.get("kind"), PLM_BENCHMARKS["suite"]
        )
    }


def manifest_inputs(wildcards):
    """In the demo world the manifest waits for the world to be built; real inputs already exist."""
    return demo_world_targets() if config["world"] == "demo" else []


def seed_for(rule):
    """The seed of a rule's jobs: the config's one seed and the rule's name (medbias.core.seeds)."""
    return rule_seed(config["seed"], rule)


def library_code(script):
    """Fingerprint of the medbias modules that a script imports. A change to them makes its job
    stale and changes the between-workflow cache hash; Snakemake itself tracks only the script.
    """
    return code_fingerprint(f"{SCRIPTS}/{script}", f"{SCRIPTS}/medbias")


SCHEMA = load_schema(Path(workflow.basedir) / "config" / "schema.yaml")


# the settings that shape the downstream classifiers, and the gaps measured on their predictions: a rule's
# settings note (a param) names only the keys its outputs depend on, so another key does not rerun it
CLASSIFIER_KEYS = tuple(
    f"hurtful.downstream.{k}"
    for k in (
        "layers",
        "grid",
        "c_grid",
        "max_epochs",
        "patience",
        "batch_size",
        "learning_rate",
    )
)
GAP_KEYS = tuple(
    f"hurtful.downstream.{k}"
    for k in ("bootstrap", "alpha", "attributes", "min_group", "excluded_subgroups")
)


def hyperparameter_notes(*prefixes):
    """The lines under a table that list the settings under these config keys: value and source. A
    function of the wildcards, so that Snakemake keeps the note whole (it rewrites a plain list) and
    tracks it by its short repr; ``track_settings_by_key`` adds its keys' records."""
    note = settings_note(SCHEMA, config, prefixes)

    def lines(wildcards):
        return note

    lines.settings_records = note.records
    return lines


def _constant(value):
    return lambda wildcards: value


def track_settings_by_key():
    """Give every rule whose params hold a settings note one param per key the note lists
    (``key = value``), so that a changed key reruns the rule and the dry run's reason names that key
    only (``medbias.pipeline.hyperparameters.SettingsNote``). Called after every rule is defined.
    """
    for each in workflow.rules:
        records = [
            r for item in each.params for r in getattr(item, "settings_records", ())
        ]
        each.set_params(*[_constant(record) for record in sorted(set(records))])


def all_targets():
    """Everything the default target builds: every study target rule's files (each names the rules
    whose outputs it collects), the input manifest, the report's pages and the study indexes.
    """
    studies = [
        rules.rios,
        rules.mimic,
        rules.hurtful,
        rules.mental,
        rules.plm,
        rules.vignettes,
    ]
    if config["world"] == "demo":
        studies += [rules.demo_world, rules.validation]
    targets = [f"{RESULTS}/inputs/manifest.json"]
    for study in studies:
        targets += [path for path in study.input if path not in targets]
    return (
        targets
        + report_pages()
        + [f"{RESULTS}/report/index.html"]
        + [
            study_index(folder)
            for folder in REPORT_FOLDERS
            if study_index(folder) not in targets
        ]
    )


def report_pages():
    """The report's HTML pages (rule report_page), one per paper table and figure of the run."""
    return [f"{RESULTS}/report/{page}.html" for page in REPORT_ITEMS]
