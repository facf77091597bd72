"""The cluster path as users type it, from the repository root: `--profile slurm` found by its name,
the sbatch lines the SLURM plugin would send (built by the plugin's own code), caching that is
opt-in, the README's real-world commands over a fake input tree, and model folders as inputs."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import REPO, snakemake_bin, write_config
from test_config_helpers import fake_real_config, tiny_word2vec

pytestmark = pytest.mark.wiring
PROFILE = yaml.safe_load((REPO / "cluster" / "slurm" / "config.yaml").read_text())
SBATCH_CALLS = REPO / "tests" / "integration" / "sbatch_calls.py"
# rules whose jobs run one model on a GPU (hurtful_pretrain: one process per GPU)
GPU_RULES = {
    "hurtful_pretrain",
    "hurtful_features",
    "hurtful_classify",
    "hurtful_classify_replicate",
    "mental_features",
    "plm_dropout",
    "plm_cda",
    "plm_projection",
    "plm_evaluate",
    "plm_benchmark",
    "plm_finetune",
    "vignette_scores",
}
STUDY_TARGETS = {"all", "rios", "hurtful", "mental", "plm", "vignettes"}


def _environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SNAKEMAKE_OUTPUT_CACHE"}
    return {**env, **extra}


def _as_typed(args: list[str], workdir: Path, env: dict[str, str] | None = None, program=None):
    """Run snakemake from the repository root, as a user does, with results under ``workdir``."""
    command = program or [snakemake_bin()]
    return subprocess.run(
        [*command, *args, "-d", str(workdir)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        env=env or _environment(),
    )


@pytest.fixture
def fake_real(tmp_path) -> tuple[Path, dict]:
    config = fake_real_config(tmp_path)
    return write_config(tmp_path / "mimic.yaml", config), config


def _sbatch_lines(
    configfile: Path, workdir: Path, extra: tuple[str, ...] = ()
) -> tuple[list[tuple[str, dict, str]], set[str]]:
    result = _as_typed(
        ["-n", "--profile", "slurm", "--configfile", str(configfile), *extra],
        workdir,
        program=[sys.executable, str(SBATCH_CALLS)],
    )
    assert result.returncode == 0, result.stderr[-3000:]
    calls, local = [], set()
    for line in result.stdout.splitlines():
        if line.startswith("SBATCH-CALL "):
            _, rule, rest = line.split(" ", 2)
            wildcards, call = rest.split("} ", 1)
            calls.append((rule, json.loads(wildcards + "}"), call))
        elif line.startswith("LOCAL-JOB "):
            local.add(line.split()[1])
    return calls, local


def _flag(call: str, pattern: str) -> list[str]:
    return re.findall(pattern, call)


def test_every_job_asks_slurm_for_its_gpus_cpus_memory_and_time(fake_real, tmp_path):
    configfile, config = fake_real
    calls, local = _sbatch_lines(configfile, tmp_path)
    # the collecting target, the report's pages (a file rendered in a second) and each results folder's list
    # of them run in the main process
    assert local == {"all", "report_page", "report_front_door", "study_index"}
    assert not STUDY_TARGETS & {rule for rule, _, _ in calls}
    assert {rule for rule, _, _ in calls} >= GPU_RULES | {"mimic_notes", "rios_word2vec", "hurtful_classify"}
    expected_threads = {
        "mimic_notes": config["mimic"]["threads"],
        "rios_word2vec": config["rios"]["word2vec"]["threads"],
        "hurtful_pretrain": config["hurtful"]["pretrain"]["threads"],
        **PROFILE["set-threads"],
    }
    assert expected_threads["mimic_notes"] == 16 and expected_threads["rios_word2vec"] == 8  # the real config's
    for rule, wildcards, call in calls:
        contextual = rule != "mental_features" or wildcards["embedding"] not in config["embeddings"]
        gpus = _flag(call, r"--gpus=(\d+)")
        # the mitigation stage's only method that trains a network asks for the classifiers' GPU
        wants = (rule in GPU_RULES and contextual) or (
            rule == "hurtful_mitigate" and wildcards["method"] == "reweighing"
        )
        assert gpus == (["1"] if wants else []), (rule, wildcards, call)
        assert len(_flag(call, r"--cpus-per-task=(\d+)")) == 1, call
        resources = {**PROFILE["default-resources"], **PROFILE["set-resources"].get(rule, {})}
        assert _flag(call, r"--mem (\d+)") == [str(resources["mem_mb"])], (rule, call)
        assert _flag(call, r"-t (\d+)") == [str(resources["runtime"])], (rule, call)
    for rule, cpus in expected_threads.items():  # the threads reach SLURM; no default overrides them
        rule_calls = [call for r, _, call in calls if r == rule]
        assert rule_calls and all(f"--cpus-per-task={cpus} " in c for c in rule_calls), rule


def test_several_pretraining_gpus_are_requested_and_single_process_rules_refuse_them(tmp_path):
    config = fake_real_config(tmp_path)
    config["hurtful"]["pretrain"]["gpus"] = 2
    calls, _ = _sbatch_lines(write_config(tmp_path / "two.yaml", config), tmp_path)
    pretrain = [call for rule, _, call in calls if rule == "hurtful_pretrain"]
    assert len(pretrain) == len(config["hurtful"]["variants"]) and all("--gpus=2" in c for c in pretrain)

    config["plm"]["gpus"] = 2
    result = _as_typed(["-n", "--configfile", str(write_config(tmp_path / "bad.yaml", config))], tmp_path)
    assert result.returncode != 0
    assert [line for line in result.stderr.splitlines() if line.startswith("medbias:")] == [
        "medbias: config key 'plm.gpus': got 2, expected a value <= 1"
    ]


@pytest.mark.parametrize("profile", ["slurm", "cluster/slurm"])
def test_profile_plans_every_job_without_a_cache_variable(fake_real, tmp_path, profile):
    configfile, _ = fake_real
    started = time.monotonic()
    result = _as_typed(["-n", "--profile", profile, "--configfile", str(configfile)], tmp_path)
    seconds = time.monotonic() - started
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    assert output.count("medbias: output caching is off (SNAKEMAKE_OUTPUT_CACHE is not set)") == 1
    assert "between-workflow cache" not in output
    total = int(re.search(r"^total\s+(\d+)$", output, re.M).group(1))
    # 169 before rios.replicates, + 12 more skip-gram jobs (3 seeds x 6 decades), + 24 classifier seed
    # jobs (hurtful.downstream.replicates: 2 more seeds x classify and gaps x 6 models), + 38 report pages
    # (report/items.yaml without the demo world's own), + 6 document-level null jobs (one per decade), + the
    # mental study's Tables I and III (1 job, 2 report pages), + the PubMed map step's one parse job per
    # file (the fake tree has one file), + one list of tables per results folder (inputs, rios, mimic,
    # hurtful, mental, plm), + the field's benchmarks: 12 CDA trainings, their 12 evaluations and 3 fine-tunings
    # (Table 6's models among CDA's), 78 benchmark jobs (67 plm evaluations and 11 Self-Debias rows of the
    # loadable masked and causal models), the items they score, the benchmark table and its 3 report pages,
    # + CDA per bias type (race and sexual orientation beside gender): 24 trainings, 24 evaluations, 24
    # benchmark jobs and 6 fine-tunings (78),
    # + the clinical vignettes: scores and contrasts of the 5 causal entries (10), the summary, its 2 report
    # pages and the folder's list of tables
    # + the mitigation stage (the post-processor's and reweighing's jobs, the tables) and the intersections
    # (4), and their 6 report pages (10)
    # + the report's front door (1)
    # + the mental study's paired treatment leans, one report page (1)
    assert total == 212 + 40 + 1 + 6 + 110 + 14 + 78 + 10 + 1 + 1, total
    print(f"--profile {profile}: {total} jobs planned in {seconds:.1f} s")


def test_with_a_cache_location_the_profile_caches_its_rules(fake_real, tmp_path):
    configfile, _ = fake_real
    cache = tmp_path / "cache"
    cache.mkdir()
    result = _as_typed(
        ["-n", "--profile", "slurm", "--configfile", str(configfile)],
        tmp_path,
        env=_environment(SNAKEMAKE_OUTPUT_CACHE=str(cache)),
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    assert "output caching is off" not in output
    cached = set(re.findall(r"Output file results/(\S+) will be written to global between-workflow cache", output))

    def count(pattern: str) -> int:
        return sum(bool(re.fullmatch(pattern, path)) for path in cached)

    # every real-world cached rule's jobs: 6 decades x 3 seeds, 5 variants, 6 feature models, 4 embeddings,
    # 12 Dropouts and 12 CDAs per bias type (gender, race, sexual orientation)
    assert count(r"rios/models/\d{4}-\d{4}/replicate\d\.w2v\.bin") == 18  # x 3 seed replicates
    assert count(r"hurtful/models/\w+") == 5
    assert count(r"hurtful/downstream/\w+/features\.npy") == 6
    assert count(r"mental/features/\w+\.npy") == 4
    assert count(r"plm/dropout_models/\w+") == 12
    assert count(r"plm/cda_(gender|race|sexual_orientation)_models/\w+") == 36


def _section(document: str, title: str) -> str:
    """The ``## title`` section of a Markdown file of the repository (up to the next ``## ``)."""
    text = (REPO / document).read_text()
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


def test_docs_and_profile_name_the_same_cached_rules():
    caching = _section("docs/cluster.md", "Caching")
    listed = re.search(r"Cached rules: (.+?)\.(\s|$)", caching, re.S).group(1)
    assert set(re.findall(r"`(\w+)`", listed)) == set(PROFILE["cache"])


def _readme_commands() -> list[str]:
    section = _section("README.md", "Your data, your models, your cluster")
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", section, re.S):
        for line in block.splitlines():
            line = line.split("  #", 1)[0].strip()
            if line.startswith("snakemake"):
                commands.append(line)
    return commands


def test_account_and_partition_from_the_command_line(fake_real, tmp_path):
    """docs/cluster.md's command as printed (config/mimic.yaml: the fake tree's), dry-run through the
    plugin's own sbatch line: every job names the account and partition, and the profile's defaults the
    command restates (60 minutes, 4 GB) stay on the light rules, the heavy rules' own sizes on theirs."""
    configfile, _ = fake_real
    section = _section("docs/cluster.md", "The SLURM profile")
    command = [line for line in section.splitlines() if "slurm_account=" in line]
    assert len(command) == 1 and command[0].startswith("snakemake --profile slurm --configfile config/mimic.yaml ")
    extra = shlex.split(command[0].split("config/mimic.yaml", 1)[1])
    calls, _ = _sbatch_lines(configfile, tmp_path, tuple(extra))
    assert calls and all(" -A my_account" in call and " -p my_partition" in call for _, _, call in calls)
    light = [call for rule, _, call in calls if rule not in PROFILE["set-resources"]]
    assert light and all(" -t 60 " in call and " --mem 4000 " in call for call in light)
    ingest = next(call for rule, _, call in calls if rule == "mimic_ingest")
    assert " -t 240 " in ingest and " --mem 32000 " in ingest


def test_readme_real_world_commands_run_over_the_fake_input_tree(fake_real, tmp_path):
    """Each command as printed, with config/mimic.yaml replaced by the fake tree's config and the
    results put under a temporary folder. A command that submits to SLURM is dry-run here (the
    SLURM test submits for real); the report is made of the outputs that exist (the rebuilt one)."""
    configfile, _ = fake_real
    commands = _readme_commands()
    assert len(commands) >= 5, commands
    assert any("--profile slurm" in c and " -n" not in c for c in commands)
    rebuilt = [c for c in commands if "--cores" in c and " -n" not in c]
    assert len(rebuilt) == 1, "the README shows one local single-output rebuild"
    rebuilt_target = next(word for word in shlex.split(rebuilt[0]) if word.startswith("results/"))
    ordered = sorted(commands, key=lambda c: "--report" in c)  # the report reads what the others made
    for command in ordered:
        words = [str(configfile) if w == "config/mimic.yaml" else w for w in shlex.split(command)]
        assert words[0] == "snakemake"
        if "--profile" in words and "-n" not in words:
            words.insert(1, "-n")
        if "--report" in words:
            at = words.index("--report") + 1
            words[at] = str(tmp_path / words[at])
            words.insert(at + 1, rebuilt_target)  # before --configfile, which would swallow it
        result = _as_typed(words[1:], tmp_path)
        assert result.returncode == 0, (command, (result.stdout + result.stderr)[-3000:])
        if command in rebuilt:
            manifest = json.loads((tmp_path / rebuilt_target).read_text())
            assert manifest, command
    assert (tmp_path / "report.zip").stat().st_size > 0


def _tiny_local_bert(folder: Path) -> Path:
    """A colleague's save_pretrained folder: a tiny BERT with its masked-LM head and its tokenizer; three
    layers, so that the real config's features (hurtful.downstream.layers: the last four hidden states,
    the embeddings' included) fit it, which the config check verifies before any job."""
    from transformers import BertConfig, BertForMaskedLM

    from medbias.synth.tiny_models import train_wordpiece

    tokenizer = train_wordpiece(["the patient has chf and copd .", "she reports pain ."] * 20, 60)
    BertForMaskedLM(
        BertConfig(
            vocab_size=len(tokenizer), hidden_size=8, num_hidden_layers=3, num_attention_heads=2, intermediate_size=16
        )
    ).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_a_model_saved_again_in_place_makes_its_jobs_stale(tmp_path):
    from transformers import BertForMaskedLM

    config = fake_real_config(tmp_path)
    folder = _tiny_local_bert(tmp_path / "my-scibert")
    config["models"]["scibert"]["source"] = str(folder)
    configfile = write_config(tmp_path / "mimic.yaml", config)
    target = "results/mimic/tokenizer"
    time.sleep(1.1)
    (tmp_path / target).mkdir(parents=True)
    (tmp_path / target / "vocab.txt").write_text("[PAD]\n")  # a tokenizer built from the model as it was

    def stale() -> str:
        result = _as_typed(["-n", target, "--configfile", str(configfile)], tmp_path)
        assert result.returncode == 0, result.stderr[-2000:]
        return result.stdout + result.stderr

    assert "Nothing to be done" in stale()
    time.sleep(1.1)
    BertForMaskedLM.from_pretrained(folder).save_pretrained(folder)  # the same folder, saved again
    planned = stale()
    assert re.search(r"updated input files:\s+mimic_tokenizer", planned), planned[-2000:]


def test_one_registry_line_adds_the_models_jobs_in_every_study_it_names(tmp_path):
    """The real config over the fake tree, plus one model entry and one word-vector entry and
    nothing else edited: the dry run plans their jobs in every study they name."""
    config = fake_real_config(tmp_path)
    folder = _tiny_local_bert(tmp_path / "my-clinical-bert")
    config["models"]["my_model"] = {
        "source": str(folder),
        "kind": "masked",
        "studies": ["hurtful", "mental", "plm"],
        "label": "My clinical BERT",
    }
    tiny_word2vec(tmp_path / "my-vectors.bin")
    config["embeddings"]["my_vectors"] = {
        "source": str(tmp_path / "my-vectors.bin"),
        "format": "word2vec_binary",
        "studies": ["mental"],
    }
    result = _as_typed(["-n", "--configfile", str(write_config(tmp_path / "mine.yaml", config))], tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    jobs = re.findall(r"rule (\w+):\n(?:    .*\n)*?    wildcards: ([^\n]*)", output)
    planned = {(rule, wildcards) for rule, wildcards in jobs}
    for rule, wildcards in [
        ("plm_evaluate", "model=my_model, debias=none"),
        ("plm_evaluate", "model=my_model, debias=sentencedebias"),
        ("plm_projection", "model=my_model, method=inlp"),
        ("mental_features", "embedding=my_model"),
        ("mental_classify", "embedding=my_model"),
        ("mental_features", "embedding=my_vectors"),
        ("hurtful_logprob", "model=my_model"),
        ("hurtful_features", "model=my_model"),
        ("hurtful_gaps", "model=my_model"),
    ]:
        assert (rule, wildcards) in planned, (rule, wildcards)
    assert not any("my_model" in w for r, w in planned if r == "plm_dropout")  # Dropout stays opt-in
    total = int(re.search(r"^total\s+(\d+)$", output, re.M).group(1))
    # 21 new jobs: plm 3 evaluations (none, sentencedebias, inlp) + 2 projections; mental features and
    # classifiers of the model and of the vectors (4); hurtful log-probability, features, classifiers, gaps (4)
    # and 2 more classifier seeds' classifiers and gaps (4); and 4 benchmark jobs (its 3 evaluations and Self-Debias)
    assert total == 212 + 40 + 1 + 6 + 110 + 14 + 78 + 10 + 1 + 1 + 21, total
