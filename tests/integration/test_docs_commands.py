"""Every command that README.md and docs/ print in a ```bash block is run by a test, from the repository
root, as printed; where a test machine cannot run it whole, the test says what it changes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import REPO, demo_config, run_snakemake

WIRING_TARGETS = ("all",)  # the profile command reads the wiring world's finished run

DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
PYTHON = str(Path(sys.executable))

# (pattern of a documented command, the test that runs it); the first pattern a command matches counts
RUN_BY = [
    (r"^bash scripts/demo\.sh\b", "test_docs_commands.py", "test_the_demo_command_plans_the_planted_tiers_world"),
    (r"^bash scripts/test\.sh\b", "test_docs_commands.py", "test_the_test_command_is_what_ci_runs"),
    (r"^\.venv/bin/python -m pytest\b", "test_docs_commands.py", "test_the_readme_pytest_line_is_test_sh_s_pytest"),
    (r"--default-resources slurm_account=", "test_cluster_path.py", "test_account_and_partition_from_the_command_line"),
    (
        r"^snakemake .*--configfile config/mimic\.yaml",
        "test_cluster_path.py",
        "test_readme_real_world_commands_run_over_the_fake_input_tree",
    ),
    (r"^printf 'rios:", "test_docs_commands.py", "test_one_changed_setting_plans_only_the_jobs_that_read_it"),
    (
        r"^snakemake -n --configfile config/config\.yaml my_settings\.yaml",
        "test_docs_commands.py",
        "test_one_changed_setting_plans_only_the_jobs_that_read_it",
    ),
    (r"profile_run\.py", "test_docs_commands.py", "test_the_profile_of_a_finished_run"),
    (r"power_runs\.py --gather", "test_validation.py", "test_the_power_command_gathers_a_finished_world"),
    (r"power_runs\.py --seeds", "test_docs_commands.py", "test_the_power_command_refuses_the_calibration_seed"),
    (r"plan_scale\.py --markdown .*--cpu-costs", "test_docs_commands.py", "test_the_plan_from_recorded_costs"),
    (r"plan_scale\.py --markdown", "test_docs_commands.py", "test_the_plan_that_measures_here"),
    (r"plan_scale\.py --measure-gpu", "test_docs_commands.py", "test_measuring_gpu_costs_needs_a_gpu"),
    (r"bench_note_lengths\.py --measure-lengths", "test_docs_commands.py", "test_note_lengths_measured_and_rerun"),
    (r"bench_note_lengths\.py --lengths", "test_docs_commands.py", "test_note_lengths_measured_and_rerun"),
    (
        r"bench_post_processor_coverage\.py",
        "test_docs_commands.py",
        "test_the_post_processor_coverage_benchmark_on_a_few_tasks",
    ),
    (r"bench_benchmark_control\.py", "test_docs_commands.py", "test_the_benchmark_control_benchmark_on_three_copies"),
    (
        r"^python -c .*save_word2vec_format",
        "test_real_models.py",
        "test_mental_features_read_real_glove_after_the_readme_conversion",
    ),
]


def documented_commands() -> list[tuple[str, str]]:
    """(document, command) for each command line of every ```bash block: comments dropped,
    backslash continuations joined."""
    found = []
    for path in DOCUMENTS:
        for block in re.findall(r"```bash\n(.*?)```", path.read_text(), re.S):
            for line in block.replace("\\\n", " ").splitlines():
                command = " ".join(line.split("  #", 1)[0].split())
                if command and not command.startswith("#"):
                    found.append((path.relative_to(REPO).as_posix(), command))
    return found


def command_of(pattern: str) -> str:
    """The one documented command that ``pattern`` picks out."""
    (command,) = {c for _, c in documented_commands() if re.search(pattern, c)}
    return command


def run_as_typed(command: str, cwd: Path = REPO, timeout: int = 900) -> subprocess.CompletedProcess:
    """A documented command through bash from ``cwd``, with this environment's Python as `.venv/bin/python`."""
    command = command.replace(".venv/bin/python", PYTHON)
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(REPO / "tests")},
    )


@pytest.mark.unit
def test_every_documented_command_is_run_by_a_test():
    commands = documented_commands()
    assert len(commands) >= 12, commands
    for document, command in commands:
        match = next(((file, test) for pattern, file, test in RUN_BY if re.search(pattern, command)), None)
        assert match, f"{document}: no test runs `{command}`; add one and list it in RUN_BY"
        file, test = match
        assert f"def {test}(" in (REPO / "tests" / "integration" / file).read_text(), (file, test)


@pytest.mark.unit
def test_the_test_command_is_what_ci_runs():
    """`bash scripts/test.sh` is this suite; CI's script (.ci/run) runs exactly it."""
    assert command_of(r"^bash scripts/test\.sh") == "bash scripts/test.sh"
    ci = [line.split("#")[0].strip() for line in (REPO / ".ci" / "run").read_text().splitlines()]
    assert "bash scripts/test.sh" in ci


@pytest.mark.unit
def test_the_readme_pytest_line_is_test_sh_s_pytest():
    """The README's pytest line is the command scripts/test.sh runs after its install, with one tier's marker;
    run as typed (collecting one module only), it selects that tier's tests."""
    command = command_of(r"^\.venv/bin/python -m pytest\b")
    last = (REPO / "scripts" / "test.sh").read_text().strip().splitlines()[-1]
    assert last == '.venv/bin/python -m pytest -rs "$@"'
    assert command == ".venv/bin/python -m pytest -rs -m unit"
    result = run_as_typed(command + " --collect-only -q tests/unit/test_layout.py", timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert re.search(r"\b[1-9][0-9]* tests? collected", result.stdout), result.stdout[-2000:]


@pytest.mark.unit
def test_the_power_command_refuses_the_calibration_seed(tmp_path):
    """`power_runs.py --seeds ...` as printed, with the demo's calibration seed put among the seeds: it stops
    with one line before any world is built (a whole run is a demo's time per seed; its gather step runs on
    the planted tier's world in test_validation.py)."""
    command = command_of(r"power_runs\.py --seeds").replace("--seeds", "--seeds 1234", 1)
    result = run_as_typed(command + f" --folder {tmp_path}", timeout=120)
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == [
        "medbias: power: seed 1234 is one the demo world was tuned on (1234, 2027, 2028, 2029, 2030); "
        "choose seeds nobody tuned on"
    ]
    assert not any(tmp_path.iterdir())


@pytest.mark.wiring
def test_the_demo_command_plans_the_planted_tiers_world():
    """`bash scripts/demo.sh` (the install, then the default DAG) as a dry run (`-n` reaches snakemake),
    from the repository root; the planted tier builds that same world: the default config untouched
    but for its resource paths."""
    result = run_as_typed(command_of(r"^bash scripts/demo\.sh") + " -n")
    assert result.returncode == 0, result.stderr[-3000:]
    assert re.search(r"^all\s+1$", result.stdout + result.stderr, re.M)
    from medbias.pipeline.config import load_config

    default = load_config(REPO / "config" / "config.yaml")
    planted = demo_config()
    assert planted["demo"] == default["demo"]
    assert {k: v for k, v in planted.items() if k not in ("resources", "vignettes")} == {
        k: v for k, v in default.items() if k not in ("resources", "vignettes")
    }
    # the shipped vignette sets' paths are made absolute, as the resources' are (the tests run in a tmp dir)
    relative = {k: str(Path(v).relative_to(REPO)) if Path(v).is_absolute() and Path(v).is_relative_to(REPO) else v
                for k, v in planted["vignettes"]["sets"].items()}  # fmt: skip
    assert {**planted["vignettes"], "sets": relative} == default["vignettes"]


@pytest.mark.wiring
@pytest.mark.parametrize("target", ["rios", "hurtful", "mental", "plm", "vignettes", "audit"])
def test_the_readme_study_targets_plan_from_the_repository_root(target):
    """The README's table of studies: `snakemake <target>`, dry-run on the demo config."""
    assert f"`snakemake {target}`" in (REPO / "README.md").read_text()
    result = run_as_typed(f"{Path(PYTHON).with_name('snakemake')} -n {target}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert re.search(rf"^{target}\s+1$", result.stdout + result.stderr, re.M)


@pytest.mark.unit
def test_the_plan_from_recorded_costs(tmp_path):
    """As printed, in a copy of the repository's paths (plan.md is written into the working folder)."""
    command = command_of(r"plan_scale\.py --markdown .*--cpu-costs")
    result = run_as_typed(_absolute(command), cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    plan = (tmp_path / "plan.md").read_text()
    assert "| `hurtful_classify` |" in plan and "Projected wall time on one 16-core, 4-GPU node" in plan
    assert "read from cpu_costs_epyc_2core.json" in plan and "on NVIDIA H200 (gpu_costs_h200.json)" in plan


@pytest.mark.real_models
def test_the_plan_that_measures_here(tmp_path):
    """As printed, with smaller measurements (300 notes, 30,000 skip-gram tokens, and --quick's quarter of
    the BERT sequences, grid rows and reduction stays); the CPU rows say they were measured here, and how."""
    from real_models import minilm_folder  # bert-base-uncased's WordPiece, from a PyPI wheel

    command = command_of(r"plan_scale\.py --markdown (?!.*--cpu-costs)").replace(
        "/models/bert-base-uncased", str(minilm_folder())
    )
    result = run_as_typed(_absolute(command) + " --notes 300 --w2v-tokens 30000 --quick", cwd=tmp_path, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    plan = (tmp_path / "plan.md").read_text()
    assert "| here: " in plan and "CPU costs measured in" in plan and "(--quick: a quarter of the units)" in plan


@pytest.mark.unit
def test_measuring_gpu_costs_needs_a_gpu(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip(
            "a GPU is here: the command measures (minutes), as tests/performance/results/gpu_costs_h200.json records"
        )
    result = run_as_typed(_absolute(command_of(r"--measure-gpu")), cwd=tmp_path, timeout=120)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "medbias: --measure-gpu needs a CUDA GPU, and torch sees none here; run it on a GPU node and give the plan "
        "its JSON with --gpu-costs"
    ]
    assert not (tmp_path / "gpu_costs.json").exists()
    # measuring here without a tokenizer: one line naming the option, before any measurement
    measure = command_of(r"plan_scale\.py --markdown (?!.*--cpu-costs)").replace(
        " --tokenizer /models/bert-base-uncased", ""
    )
    result = run_as_typed(_absolute(measure), cwd=tmp_path, timeout=120)
    assert result.returncode == 1 and not (tmp_path / "plan.md").exists()
    assert result.stderr.strip().splitlines() == [
        "medbias: --tokenizer : measuring here needs a BERT WordPiece tokenizer's folder (bert-base-uncased or your "
        "clinical BERT; its tokenizer_config.json), or --cpu-costs FILE.json"
    ]


@pytest.mark.real_models
def test_note_lengths_measured_and_rerun(tmp_path):
    """The first command on a MIMIC-format folder of six notes (its path in place of /data/...), then the
    second on what it wrote, with 200 notes on 1 worker and without the sweep."""
    mimic = tmp_path / "mimic"
    mimic.mkdir()
    notes = pd.DataFrame(
        {
            "ROW_ID": range(1, 7),
            "CATEGORY": ["Nursing", "Nursing", "Radiology", "Radiology", "Radiology", "Discharge summary"],
            "TEXT": ["a" * 100, "b" * 300, "c" * 1000, "d" * 2000, "e" * 1500, "f" * 8000],
        }
    )
    notes.to_csv(mimic / "NOTEEVENTS.csv.gz", index=False)
    measure = command_of(r"--measure-lengths").replace("/data/mimic-iii-clinical-database-1.4", str(mimic))
    result = run_as_typed(_absolute(measure), cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    lengths = pd.read_csv(tmp_path / "lengths.tsv", sep="\t")
    assert dict(zip(lengths["category"], lengths["notes"])) == {"Radiology": 3, "Nursing": 2, "Discharge summary": 1}
    assert dict(zip(lengths["category"], lengths["mean_chars"]))["Radiology"] == 1500
    rerun = re.sub(r"\[.*?\]", "", command_of(r"bench_note_lengths\.py --lengths")).strip()
    result = run_as_typed(_absolute(rerun) + " --notes 200 --workers 1 --no-sweep", cwd=tmp_path, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "200 notes of real length" in result.stdout and "table lengths.tsv" in result.stdout


@pytest.mark.unit
def test_the_post_processor_coverage_benchmark_on_a_few_tasks():
    """The documented coverage benchmark (the demo's 20 refits) with 6 tasks, 20 replicates and 10
    validation draws for the estimand in place of its sizes: it prints the coverage of each interval."""
    command = command_of(r"bench_post_processor_coverage\.py")
    small = re.sub(r"--tasks \d+", "--tasks 6", re.sub(r"--replicates \d+", "--replicates 20", command))
    result = run_as_typed(small + " --truth-fits 10", timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "test stays only, the procedure's expected gap: coverage" in result.stdout
    assert "two-stage (20 refits), the procedure's expected gap: coverage" in result.stdout
    assert "6 tasks in" in result.stdout


def _tiny_demo_models(run: Path) -> None:
    """A run folder with what the control benchmark reads: a tiny BERT's and a tiny GPT-2's configs and
    tokenizers (trained on a few CrowS-Pairs sentences) and one StereoSet intrasentence example."""
    from transformers import BertConfig, GPT2Config

    from medbias.metrics.benchmarks.items import read_crows_pairs
    from medbias.synth.tiny_models import train_byte_bpe, train_wordpiece

    pairs = read_crows_pairs(REPO / "config/resources/crows-pairs/crows_pairs_anonymized.csv").head(200)
    corpus = [*pairs["sent_more"], *pairs["sent_less"]]
    models = run / "results/demo_world/models"
    wordpiece = train_wordpiece(corpus, 300)
    small = dict(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
    BertConfig(vocab_size=len(wordpiece), max_position_embeddings=128, **small).save_pretrained(
        models / "tiny-plm-bert"
    )
    wordpiece.save_pretrained(models / "tiny-plm-bert")
    bpe = train_byte_bpe(corpus, 400, add_bos_eos=False)
    bpe.bos_token = bpe.eos_token = "<s>"
    bpe.pad_token = "<pad>"
    bos = bpe.convert_tokens_to_ids("<s>")
    gpt2 = GPT2Config(
        vocab_size=len(bpe), n_positions=128, n_embd=16, n_layer=1, n_head=2, bos_token_id=bos, eos_token_id=bos
    )
    gpt2.save_pretrained(models / "tiny-plm-gpt2")
    bpe.save_pretrained(models / "tiny-plm-gpt2")
    context = "The men from Afghanistan ride on BLANK."
    options = {"stereotype": "camels", "anti-stereotype": "bicycles", "unrelated": "oranges"}
    items = run / "results/plm/benchmark_items"
    items.mkdir(parents=True)
    example = {"example_id": 1, "target": "Afghanistan", "bias_type": "race", "context": context}
    example |= {o: context.replace("BLANK", w) for o, w in options.items()}
    example |= {f"filler_{o}": w for o, w in options.items()}
    pd.DataFrame([example]).to_parquet(items / "intrasentence.parquet")


@pytest.mark.unit
def test_the_benchmark_control_benchmark_on_three_copies(tmp_path):
    """The documented control benchmark on tiny models of both kinds, 3 copies of each on 20 pairs in two
    processes: every copy's decisions and the rates, the t test against the other copies among them."""
    _tiny_demo_models(tmp_path / "run")
    command = command_of(r"bench_benchmark_control\.py").replace("RUN", str(tmp_path / "run"))
    small = re.sub(r"--copies \d+", "--copies 3", re.sub(r"--workers \d+", "--workers 2", command))
    result = run_as_typed(_absolute(small) + " --pairs 20", cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "bert: 3 copies in" in result.stdout and "gpt2: 3 copies in" in result.stdout
    decisions = pd.read_csv(tmp_path / "control/benchmark_control.csv")
    assert set(decisions["unit"]) == {"seed 2094", "seed 2095", "seed 2096"}
    rates = pd.read_csv(tmp_path / "control/error_rates.csv")
    against = rates[rates["p_kind"] == "prediction t test against the other copies"]
    assert len(against) == 6 and (against["decisions"] == 3).all()  # 3 tests per architecture, 3 copies each
    assert (rates["decisions"] == 3).all() and rates["ci_high"].le(1).all()


def _absolute(command: str) -> str:
    """``command`` with the repository's own paths made absolute, to run it from another folder."""
    return re.sub(r"(?<![\w/])(tests/performance/|config/|scripts/)", lambda m: f"{REPO}/{m.group(1)}", command)


def planned_rules(output: str) -> set[str]:
    """The rules of a dry run's job table (none when it has nothing to do)."""
    if "Job stats:" not in output:
        return set()
    start = output.index("Job stats:")
    stats = output[start : output.index("\ntotal", start)].splitlines()[3:]
    return {line.split()[0] for line in stats if line.strip()}


# one key per study, and the rules (beside report pages and study lists) that read it or what it shaped
ONE_SETTING = {
    "rios": ("rios:\n  ripa_top: 15\n", {"rios_ripa"}),
    # the tables' tests and the untrained control's (which the error-rate table reads), not a scoring job
    "plm": (
        "plm:\n  benchmarks:\n    alpha: 0.01\n",
        {"plm_benchmark_tables", "validation_benchmark_control", "validation_error_rates"},
    ),
    # Figure 2's axes: its rule also writes the SEAT table the validation reads (and no scoring job reads it)
    "plm figure": (
        "plm:\n  seat:\n    figure: {x: lgbtq_seat, y: race_seat}\n",
        {"plm_tables", "validation_error_rates", "validation_planted_recovery"},
    ),
    "mental": ("mental:\n  lime:\n    samples: 300\n", {"mental_lime"}),
    "hurtful": (
        "hurtful:\n  mitigation:\n    equivalence_margin: 0.2\n",
        {"hurtful_mitigation", "validation_error_rates", "validation_planted_recovery"},
    ),
}


@pytest.mark.wiring
def test_one_changed_setting_plans_only_the_jobs_that_read_it(wiring_study):
    """The README's settings file, on the finished wiring world (its own config in place of
    config/config.yaml, whose world is the demo's): the dry run plans nothing without it; with it, only
    the jobs that read the changed key and what reads their outputs; their reasons name the changed key
    (``key = value``), not the rules' settings notes. The same for one key of each other study (written
    the same way); the last one's reasons name its value only."""
    run = wiring_study()
    unchanged = run_snakemake(["-n", "--configfile", "config.yaml"], run)
    assert unchanged.returncode == 0 and "Nothing to be done" in unchanged.stdout + unchanged.stderr
    assert planned_rules(unchanged.stdout + unchanged.stderr) == set()
    written = run_as_typed(command_of(r"^printf 'rios:"), cwd=run)
    assert written.returncode == 0
    assert yaml.safe_load((run / "my_settings.yaml").read_text()) == yaml.safe_load(ONE_SETTING["rios"][0])
    assert command_of(r"^snakemake -n --configfile config/config\.yaml my_settings\.yaml").split()[1:] == [
        "-n",
        "--configfile",
        "config/config.yaml",
        "my_settings.yaml",
    ]
    for study, (text, expected) in ONE_SETTING.items():
        (run / "my_settings.yaml").write_text(text)
        result = run_snakemake(["-n", "--configfile", "config.yaml", "my_settings.yaml"], run)
        output = result.stdout + result.stderr
        assert result.returncode == 0, output[-3000:]
        assert planned_rules(output) - {"all", "report_page", "report_front_door", "study_index"} == expected, study
        assert "rios.bootstrap" not in output or study != "rios", "a rios rule that does not read it lists it"
        # the reasons name the changed key, not the rules' whole settings notes
        assert "Settings that shaped" not in output, study
    reasons = [line for line in output.splitlines() if "Params have changed" in line]
    named = {key for line in reasons for key in re.findall(r"'([\w.]+) = ", line)}
    assert reasons and named == {"hurtful.mitigation.equivalence_margin"}, reasons
    (run / "my_settings.yaml").unlink()


@pytest.mark.wiring
def test_the_profile_of_a_finished_run(wiring_study, tmp_path):
    """As printed, from the folder of a finished run: the wiring world's main run (its log with the most
    jobs, and its benchmark files): the wall time, the job-seconds per rule, the critical path, the
    studies' done lines, and the comparison with the demo's budget."""
    import shutil

    run = wiring_study()
    logs = sorted((run / ".snakemake" / "log").glob("*.snakemake.log"), key=lambda p: p.read_text().count("Finished"))
    (tmp_path / ".snakemake" / "log").mkdir(parents=True)
    shutil.copy(logs[-1], tmp_path / ".snakemake" / "log")
    shutil.copytree(run / "timings", tmp_path / "timings")
    result = run_as_typed(_absolute(command_of(r"profile_run\.py")), cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert "- wall time: " in out and "- cores: 2" in out and "Critical path" in out
    assert "| report_page |" in out and "When each study said it was done:" in out  # (cached trainings log no job)
    assert "| rule | job-seconds | budget | change |" in out and "Total job-seconds:" in out
