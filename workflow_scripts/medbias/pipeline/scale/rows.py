"""The plan's rows, one function per stage: each heavy rule's jobs, units, cost per unit, where the
cost was measured, core- and GPU-hours, and the rules it waits for."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from medbias.pipeline.cost_probes import REPO, classifier_grid
from medbias.pipeline.scale.costs import grid_cost_with_workers, stacked_grid_cost


@dataclass
class Row:
    """One heavy rule at the real scale: ``jobs`` jobs of ``threads`` CPUs and ``gpus`` GPUs, each
    taking ``job_hours`` of wall time; ``core_hours``/``gpu_hours`` the totals; ``after`` the rules it
    waits for."""

    rule: str
    jobs: int
    units: str
    cost: str
    where: str
    core_hours: float
    gpu_hours: float
    threads: int
    gpus: int
    job_hours: float
    after: tuple[str, ...] = ()
    pretraining: bool = False
    notes: list[str] = field(default_factory=list)


def cpu_row(rule, jobs, units, cost, where, core_seconds_total, threads, after=(), **extra) -> Row:
    hours = core_seconds_total / 3600
    return Row(rule, jobs, units, cost, where, hours, 0.0, threads, 0, hours / jobs / threads, tuple(after), **extra)


def gpu_row(rule, jobs, units, cost, where, gpu_seconds_total, threads, after=(), **extra) -> Row:
    hours = gpu_seconds_total / 3600
    return Row(rule, jobs, units, cost, where, 0.0, hours, threads, 1, hours / jobs, tuple(after), **extra)


def real_config(path: Path) -> dict:
    """The resolved real-world config (defaults from the schema, registry models enrolled)."""
    from medbias.pipeline.config import enrol_registry_models, load_config

    return enrol_registry_models(load_config(path, REPO / "config/schema.yaml"))


def build_plan(
    config: dict, counts: dict, cpu: dict[str, float], gpu: dict[str, float], gpu_where: str, cpu_where: str
) -> list[Row]:
    """Every row of the plan, stage by stage: the notes and the clinical BERT, the downstream classifiers,
    the PubMed study, the mental study and the PLM study."""
    threads = job_threads(config)
    stages = (notes_and_pretraining_rows, classifier_rows, rios_rows, mental_rows, plm_rows)
    return [row for stage in stages for row in stage(config, counts, cpu, gpu, (cpu_where, gpu_where), threads)]


def job_threads(config: dict) -> dict[str, int]:
    """Threads per rule: the cluster profile's set-threads, and the config keys that set a rule's own."""
    profile = __import__("yaml").safe_load((REPO / "cluster/slurm/config.yaml").read_text())
    return {
        **profile.get("set-threads", {}),
        "mimic_notes": config["mimic"]["threads"],
        "rios_word2vec": config["rios"]["word2vec"]["threads"],
        "rios_document_null": config["rios"]["word2vec"]["threads"],
        "hurtful_pretrain": config["hurtful"]["pretrain"]["threads"],
    }


def notes_and_pretraining_rows(
    config: dict,
    counts: dict,
    cpu: dict[str, float],
    gpu: dict[str, float],
    where: tuple[str, str],
    threads: dict[str, int],
) -> list[Row]:
    """NOTEEVENTS ingest and processing, the clinical BERT pretraining, the frozen features."""
    import pandas as pd

    cpu_where, gpu_where = where
    m = counts["mimic"]
    lengths = pd.read_csv(
        REPO / "config/resources/mimic-facts/note_lengths.tsv", sep="\t", comment="#", keep_default_na=False
    )
    text_mb = float((lengths["notes"] * lengths["mean_chars"]).sum()) / 1e6
    windows = sum(m["stays"][c] * m["windows_per_stay"][c] for c in m["stays"])
    models = len(config["hurtful"]["downstream"]["models"])
    variants = len(config["hurtful"]["variants"])
    rows: list[Row] = []

    rows.append(
        cpu_row(
            "mimic_ingest",
            1,
            f"{text_mb:,.0f} MB of note text",
            f"{cpu['note_ingest_s_per_mb']:.3f} s/MB",
            cpu_where,
            text_mb * cpu["note_ingest_s_per_mb"],
            1,
        )
    )
    rows.append(
        cpu_row(
            "mimic_notes",
            1,
            f"{text_mb:,.0f} MB of note text",
            f"{cpu['note_processing_core_s_per_mb']:.2f} core-s/MB",
            cpu_where,
            text_mb * cpu["note_processing_core_s_per_mb"],
            threads["mimic_notes"],
            ["mimic_ingest"],
        )
    )
    pretrain_tokens = sum(int(length) * n for length, n in m["pretrain_sequences"].items())
    pretrain_s = sum(
        int(length) * n / gpu[f"pretrain_tokens_per_s_{length}"] for length, n in m["pretrain_sequences"].items()
    )
    rows.append(
        gpu_row(
            "hurtful_pretrain",
            variants,
            f"{variants} x {pretrain_tokens / 1e9:.2f} G tokens",
            f"{gpu['pretrain_tokens_per_s_128']:,.0f} / {gpu['pretrain_tokens_per_s_512']:,.0f} tokens/s (128 / 512)",
            gpu_where,
            variants * pretrain_s,
            threads["hurtful_pretrain"],
            ["mimic_notes"],
            pretraining=True,
        )
    )
    rows.append(
        gpu_row(
            "hurtful_features",
            models,
            f"{models} x {windows / 1e6:.2f} M windows",
            f"{gpu['window_gpu_s_bf16'] * 1e3:.2f} ms/window (bf16)",
            gpu_where,
            models * windows * gpu["window_gpu_s_bf16"],
            threads["hurtful_features"],
            ["hurtful_pretrain", "mimic_notes"],
        )
    )
    return rows


# long: the classifier rows share the sizes and per-unit costs computed once at its top
def classifier_rows(
    config: dict,
    counts: dict,
    cpu: dict[str, float],
    gpu: dict[str, float],
    where: tuple[str, str],
    threads: dict[str, int],
) -> list[Row]:
    """The downstream classifier grid (stacked phenotypes), its replicates, the gaps, the mitigation
    stage and the probe."""
    cpu_where, gpu_where = where
    m = counts["mimic"]
    train_rows = sum(m["tasks"][c] * m["stays"][c] * m["windows_per_stay"][c] * m["train_share"] for c in m["tasks"])
    tasks = sum(m["tasks"].values())
    down = config["hurtful"]["downstream"]
    models, replicates = len(down["models"]), down["replicates"]
    variants = len(config["hurtful"]["variants"])
    rows: list[Row] = []
    grid_size = len(classifier_grid())
    row_epochs = train_rows * m["epochs_per_fit"]
    # the cohorts of several tasks (the phenotypes) train as stacks on the GPU; a cohort of one task alone
    stacked_rows = (
        sum(
            m["tasks"][c] * m["stays"][c] * m["windows_per_stay"][c] * m["train_share"]
            for c in m["tasks"]
            if m["tasks"][c] > 1
        )
        * m["epochs_per_fit"]
    )
    classify_jobs = models * replicates
    searched = models if down["replicates_search"] == "once" else classify_jobs  # jobs that search the whole grid
    stacked_s, stacked_how = stacked_grid_cost(gpu)
    alone_s, alone_how = grid_cost_with_workers(gpu, 1)
    unstacked_s = grid_cost_with_workers(gpu, down["classify_workers"])[0]
    job_s = (stacked_rows * stacked_s + (row_epochs - stacked_rows) * alone_s) / 1000
    cost = (
        f"{stacked_s:.4f} s per 1k task-row-epochs of the grid, phenotypes stacked ({stacked_how}); "
        f"{alone_s:.3f} for the one mortality task (measured, {alone_how})"
    )
    classify_rule = "hurtful_classify" if searched < classify_jobs else "hurtful_classify (+ replicates)"
    rows.append(
        gpu_row(
            classify_rule,
            searched,
            f"{searched} x {row_epochs / 1e6:.0f} M row-epochs x {grid_size} networks",
            cost,
            gpu_where,
            searched * job_s,
            threads["hurtful_classify"],
            ["hurtful_features"],
            notes=[
                f"one task at a time instead (4 tasks at once in processes, measured): "
                f"{unstacked_s:.3f} s per 1k row-epochs = "
                f"{searched * row_epochs / 1000 * unstacked_s / 3600:,.0f} GPU-hours; on the CPU: "
                f"{cpu['mlp_grid_core_s_per_1k_rows']:.2f} core-s per 1k row-epochs = "
                f"{classify_jobs * row_epochs / 1000 * cpu['mlp_grid_core_s_per_1k_rows'] / 3600:,.0f} core-hours "
                f"for every replicate's grid"
            ],
        )
    )
    if searched < classify_jobs:  # replicates_search: once
        retrained = classify_jobs - searched
        rows.append(
            gpu_row(
                "hurtful_classify_replicate",
                retrained,
                f"{retrained} x {row_epochs / 1e6:.0f} M row-epochs x 1 network (each task's chosen one)",
                "the grid's cost per network (its mean)",
                gpu_where,
                retrained * job_s / grid_size,
                threads["hurtful_classify"],
                ["hurtful_classify"],
            )
        )
    classifiers = [r.rule for r in rows if r.rule.startswith("hurtful_classify")]
    test_rows = int(m["stays"]["pa"] * m["test_share"])
    rows.append(
        cpu_row(
            "hurtful_gaps (+ replicates)",
            classify_jobs,
            f"{classify_jobs} x {tasks} tasks",
            f"{cpu['bootstrap_s_per_task']:.2f} s/task ({test_rows:,} test stays, 4 attributes, 1,000 replicates)",
            cpu_where,
            classify_jobs * tasks * cpu["bootstrap_s_per_task"],
            1,
            classifiers,
        )
    )
    rows += mitigation_rows(config, m, cpu, cpu_where, gpu, gpu_where, job_s / grid_size, threads)
    probe_units = config["hurtful"]["probe"]["max_sequences"] * variants
    rows.append(
        cpu_row(
            "hurtful_probe",
            1,
            f"{probe_units / 1e3:,.0f} k sequences of ~{m['probe_tokens_per_sequence']} pieces",
            f"{cpu['probe_sequence_core_s'] * 1e3:.0f} core-ms/sequence",
            cpu_where,
            probe_units * cpu["probe_sequence_core_s"],
            threads["hurtful_probe"],
            ["hurtful_pretrain"],
        )
    )

    return rows


def rios_rows(
    config: dict,
    counts: dict,
    cpu: dict[str, float],
    gpu: dict[str, float],
    where: tuple[str, str],
    threads: dict[str, int],
) -> list[Row]:
    """PubMed parsing and ingest, and the skip-gram trainings (``word2vec_rows``)."""
    cpu_where, gpu_where = where
    pm = counts["pubmed"]
    rows: list[Row] = []
    rows.append(
        cpu_row(
            "rios_parse",
            pm["files"],
            f"{pm['xml_mb'] / 1e3:,.0f} GB of XML",
            f"{cpu['pubmed_parse_core_s_per_mb']:.2f} core-s/MB",
            cpu_where,
            pm["xml_mb"] * cpu["pubmed_parse_core_s_per_mb"],
            1,
        )
    )
    rows.append(
        cpu_row(
            "rios_ingest",
            1,
            f"{pm['xml_mb'] / 1e3:,.0f} GB of XML",
            f"{cpu['pubmed_reduce_s_per_mb']:.3f} s/MB",
            cpu_where,
            pm["xml_mb"] * cpu["pubmed_reduce_s_per_mb"],
            1,
            ["rios_parse"],
        )
    )
    rows += word2vec_rows(config["rios"], pm, cpu, cpu_where, threads)

    return rows


def mental_rows(
    config: dict,
    counts: dict,
    cpu: dict[str, float],
    gpu: dict[str, float],
    where: tuple[str, str],
    threads: dict[str, int],
) -> list[Row]:
    """The mental study's contextual features, one job per contextual embedding."""
    cpu_where, gpu_where = where
    rows: list[Row] = []
    mn = counts["mental"]
    contextual = sum(1 for name in config["mental"].get("embeddings") or [] if name in config["models"]) or 2
    mental_windows = contextual * mn["notes"] * mn["windows_per_note"] * mn["treatments"]
    rows.append(
        gpu_row(
            "mental_features",
            contextual,
            f"{mental_windows / 1e3:,.0f} k windows",
            f"{gpu['window_gpu_s_bf16'] * 1e3:.2f} ms/window (bf16)",
            gpu_where,
            mental_windows * gpu["window_gpu_s_bf16"],
            2,
        )
    )

    return rows


def plm_rows(
    config: dict,
    counts: dict,
    cpu: dict[str, float],
    gpu: dict[str, float],
    where: tuple[str, str],
    threads: dict[str, int],
) -> list[Row]:
    """The PLM evaluations, the Dropout and CDA pretrainings and the fine-tunings, each model's cost the
    BERT-base cost scaled by its parameters."""
    from medbias.pipeline.plan import plm_evaluations, plm_finetunes

    cpu_where, gpu_where = where
    pl = counts["plm"]
    rows: list[Row] = []
    evaluations = plm_evaluations(config["plm"], config["models"])
    size = {name: pl["params_m"][name] / pl["reference_params_m"] for name in pl["params_m"]}
    sentence_s = 0.0
    for model, _ in evaluations:
        kind = config["models"][model]["kind"]
        per_sentence = gpu["pll_sentence_gpu_s_fp32"] * (1 if kind == "masked" else 1 / pl["tokens_per_sentence"])
        sentence_s += size[model] * (
            pl["pll_sentences"] * per_sentence + pl["seat_sentences"] * gpu["window_gpu_s_bf16"] * 16 / 512
        )
    rows.append(
        gpu_row(
            "plm_evaluate",
            len(evaluations),
            f"{len(evaluations)} x ({pl['pll_sentences']:,} likelihood + ~{pl['seat_sentences']:,} SEAT sentences)",
            f"{gpu['pll_sentence_gpu_s_fp32'] * 1e3:.2f} ms/PLL sentence at BERT-base, scaled by parameters",
            gpu_where,
            sentence_s,
            threads["plm_evaluate"],
            ["plm_dropout"],
        )
    )
    dropout = config["plm"]["debias"]["dropout"]
    dropout_tokens = dropout["steps"] * dropout["batch_size"] * dropout["max_length"]
    dropout_s = sum(size[name] * dropout_tokens / gpu["pretrain_tokens_per_s_128"] for name in dropout["models"])
    rows.append(
        gpu_row(
            "plm_dropout",
            len(dropout["models"]),
            f"{len(dropout['models'])} x {dropout_tokens / 1e6:.0f} M tokens",
            "pretraining tokens/s at 128, scaled by parameters",
            gpu_where,
            dropout_s,
            threads["plm_dropout"],
            pretraining=True,
        )
    )
    cda = config["plm"]["debias"]["cda"]
    if "cda" in config["plm"]["debias"]["methods"] and cda["models"]:
        per_type = sum(size[name] * dropout_tokens / gpu["pretrain_tokens_per_s_128"] for name in cda["models"])
        jobs = len(cda["models"]) * len(cda["bias_types"])
        rows.append(
            gpu_row(
                "plm_cda",
                jobs,
                f"{len(cda['models'])} models x {len(cda['bias_types'])} bias types x "
                f"{dropout_tokens / 1e6:.0f} M tokens",
                "pretraining tokens/s at 128, scaled by parameters (the Dropout recipe on the augmented corpus)",
                gpu_where,
                per_type * len(cda["bias_types"]),
                threads.get("plm_cda", threads["plm_dropout"]),
                pretraining=True,
            )
        )
    finetunes = plm_finetunes(config["plm"], config["models"])
    ft_tokens = pl["finetune_examples"] * pl["finetune_tokens_per_example"] * pl["finetune_epochs"]
    ft_s = sum(size[model] * ft_tokens / gpu["pretrain_tokens_per_s_128"] for model, _ in finetunes)
    rows.append(
        gpu_row(
            "plm_finetune",
            len(finetunes),
            f"{len(finetunes)} x {ft_tokens / 1e9:.2f} G tokens",
            "pretraining tokens/s at 128, scaled by parameters",
            gpu_where,
            ft_s,
            threads["plm_finetune"],
            ["plm_dropout"],
        )
    )
    return rows


def mitigation_rows(
    config: dict, m: dict, cpu: dict[str, float], cpu_where: str, gpu: dict, gpu_where: str, network_s: float, threads
) -> list[Row]:
    """The mitigation stage's jobs (one per mitigated model and method that runs as a job), its tables,
    and the intersectional analysis, at the real counts. ``network_s``: one classifier job's cost per
    network of the grid (what reweighing retrains once per attribute)."""
    from medbias.pipeline.plan import mitigation_jobs

    mitigation, sections = config["hurtful"]["mitigation"], config["hurtful"]["intersections"]
    models, attributes = len(mitigation["models"]), len(mitigation["attributes"])
    tasks = sum(m["tasks"].values())
    train_stays = sum(m["tasks"][c] * m["stays"][c] * m["train_share"] for c in m["tasks"])  # over every task
    methods = {method for _, method in mitigation_jobs(mitigation)}
    rows: list[Row] = []
    units = f"{models} x {attributes} attributes x {tasks} tasks"
    if "threshold" in methods:
        rows.append(
            cpu_row(
                "hurtful_mitigate (threshold)",
                models,
                units,
                f"{cpu['threshold_s_per_task_attribute']:.2f} s per task and attribute (measured)",
                cpu_where,
                models * attributes * tasks * cpu["threshold_s_per_task_attribute"],
                1,
                ["hurtful_classify"],
            )
        )
    if "reductions" in methods:
        rows.append(
            cpu_row(
                "hurtful_mitigate (reductions)",
                models,
                f"{units}, {train_stays / tasks / 1e3:,.1f} k training stays each",
                f"{cpu['reductions_s_per_1k_stays']:.2f} s per 1k stays of 3,080 features (measured at 2k, "
                "linear in rows)",
                cpu_where,
                models * attributes * train_stays / 1000 * cpu["reductions_s_per_1k_stays"],
                1,
                ["hurtful_classify"],
            )
        )
    if "reweighing" in methods:
        rows.append(
            gpu_row(
                "hurtful_mitigate (reweighing)",
                models,
                f"{units}, each task's chosen network trained again",
                "the classifier grid's cost per network, once per attribute",
                gpu_where,
                models * attributes * network_s,
                threads["hurtful_classify"],
                ["hurtful_classify"],
            )
        )
    compared = len([method for method in mitigation["methods"] if method != "none"])
    rows.append(
        cpu_row(
            "hurtful_mitigation",
            1,
            f"{models} x {compared} methods x {attributes} attributes x {tasks} tasks",
            f"{cpu['mitigation_effects_s_per_unit']:.2f} s per task, attribute and method (1,000 replicates)",
            cpu_where,
            models * compared * attributes * tasks * cpu["mitigation_effects_s_per_unit"],
            1,
            [r.rule for r in rows],
        )
    )
    crossings = len(sections["crossings"])
    rows.append(
        cpu_row(
            "hurtful_intersections",
            1,
            f"{len(sections['models'])} x {crossings} crossings x {tasks} tasks",
            f"{cpu['intersections_s_per_task_crossing']:.2f} s per task and crossing (4,999 null draws per metric)",
            cpu_where,
            len(sections["models"]) * crossings * tasks * cpu["intersections_s_per_task_crossing"],
            1,
            ["hurtful_classify"],
        )
    )
    return rows


def word2vec_rows(rios: dict, pm: dict, cpu: dict[str, float], cpu_where: str, threads: dict) -> list[Row]:
    """The rios study's skip-gram rows: per decade, the search over min(search_tokens, decade) tokens
    and, where that was a sample, the chosen setting trained on the whole decade; the replicates that
    retrain the chosen setting (replicates_search: once) or search again (each); the document null's
    draws over min(document_null_tokens, decade), plus the sample's own model. A setting not yet chosen
    costs what the default setting costs."""
    w2v = rios["word2vec"]
    decade_mtokens = [pm["articles"][d] * pm["tokens_per_article"][d] / 1e6 for d in pm["articles"]]
    decades, replicates, epochs = len(decade_mtokens), rios["replicates"], w2v["epochs"]
    search_cost, train_cost = cpu["w2v_search_core_s_per_mtoken_epoch"], cpu["w2v_default_core_s_per_mtoken_epoch"]

    def capped(cap: int) -> list[float]:
        return [min(cap / 1e6, n) if cap else n for n in decade_mtokens]

    searched_on = capped(w2v["search_tokens"])
    retrain = sum(n for n, s in zip(decade_mtokens, searched_on) if s < n)  # decades searched on a sample
    searches = 1 if w2v["replicates_search"] == "once" else replicates
    total = sum(decade_mtokens)
    rows = [
        cpu_row(
            "rios_word2vec",
            decades * searches,
            f"{searches} x {cpu['w2v_candidates']:.0f} settings over {sum(searched_on):,.0f} M tokens"
            + (
                f" (samples of at most {w2v['search_tokens'] / 1e6:g} M per decade), then the chosen setting over "
                f"{retrain:,.0f} M"
                if retrain
                else ""
            )
            + f"; x {epochs} epochs",
            f"{search_cost:.0f} core-s per M token-epochs (all settings), {train_cost:.1f} (one setting)",
            cpu_where,
            searches * epochs * (sum(searched_on) * search_cost + retrain * train_cost),
            threads["rios_word2vec"],
            ["rios_ingest"],
        )
    ]
    if searches == 1 and replicates > 1:
        rows.append(
            cpu_row(
                "rios_word2vec_replicate",
                decades * (replicates - 1),
                f"{replicates - 1} x the chosen setting over {total / 1e3:.1f} G tokens x {epochs} epochs",
                f"{train_cost:.1f} core-s per M token-epochs (one setting)",
                cpu_where,
                (replicates - 1) * total * epochs * train_cost,
                threads["rios_word2vec"],
                ["rios_word2vec"],
                notes=[
                    f"its jobs differ by decade: the longest (the largest decade, {max(decade_mtokens):,.0f} M "
                    f"tokens) takes "
                    f"{max(decade_mtokens) * epochs * train_cost / threads['rios_word2vec'] / 3600:.1f} h "
                    f"on {threads['rios_word2vec']} cores"
                ],
            )
        )
    draws = rios["document_null_draws"]
    if draws:
        null_on = capped(rios["document_null_tokens"])
        trainings = sum((draws + (s < n)) * s for s, n in zip(null_on, decade_mtokens))
        rows.append(
            cpu_row(
                "rios_document_null",
                decades,
                f"{draws} draws over {sum(null_on):,.0f} M tokens"
                + (
                    f" (samples of at most {rios['document_null_tokens'] / 1e6:g} M per decade, plus each "
                    f"sample's own model)"
                    if sum(null_on) < total
                    else ""
                )
                + f" x {epochs} epochs",
                f"{train_cost:.1f} core-s per M token-epochs (one setting)",
                cpu_where,
                trainings * epochs * train_cost,
                threads["rios_document_null"],
                ["rios_word2vec"],
            )
        )
    return rows
