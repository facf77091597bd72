"""The workflow as users type it: lint, dry-runs on the real config, and bad input stopping early."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import REPO, demo_config, run_snakemake, snakemake_bin, wiring_config, write_config
from test_config_helpers import fake_real_config

pytestmark = pytest.mark.wiring


def test_lint_is_clean(tmp_path):
    result = run_snakemake(["--lint"], REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Congratulations, your workflow is in a good condition!" in result.stdout + result.stderr


def test_snakefmt_is_clean():
    import subprocess

    snakefmt = str(Path(snakemake_bin()).with_name("snakefmt"))
    result = subprocess.run([snakefmt, "--check", "Snakefile", "rules"], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_dry_run_on_real_config_lists_the_expected_jobs(tmp_path):
    configfile = write_config(tmp_path / "mimic.yaml", fake_real_config(tmp_path))
    result = run_snakemake(["-n", "--configfile", str(configfile)], tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout + result.stderr
    assert "rule input_manifest:" in out
    for rule in (
        "rios_ingest",
        "rios_word2vec",
        "rios_weat",
        "rios_ect",
        "rios_ripa",
        "rios_table3",
        "mimic_ingest",
        "mimic_tokenizer",
        "mimic_notes",
        "mimic_cohorts",
    ):
        assert f"rule {rule}:" in out, rule
    assert "synth_" not in out  # the real world never runs the demo generators
    assert not (tmp_path / "results").exists()


def test_dry_run_on_real_config_plans_the_mitigation_stage(tmp_path):
    """The real config (the schema's defaults) mitigates the baseline with the default methods that run
    as jobs (the post-processor and reweighing; reductions on request), for every attribute, and
    analyses its intersections."""
    import re

    configfile = write_config(tmp_path / "mimic.yaml", fake_real_config(tmp_path))
    result = run_snakemake(["-n", "--configfile", str(configfile)], tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout + result.stderr
    jobs = dict(re.findall(r"^(hurtful_mitigat\w+|hurtful_intersections)\s+(\d+)$", out, re.M))
    assert jobs == {"hurtful_mitigate": "2", "hurtful_mitigation": "1", "hurtful_intersections": "1"}, jobs
    for method in ("threshold", "reweighing"):
        assert f"method={method}" in out, method
    assert "method=reductions" not in out


def test_demo_dry_run_lists_the_whole_demo_dag(tmp_path):
    configfile = write_config(tmp_path / "config.yaml", demo_config())
    result = run_snakemake(["-n", "--configfile", str(configfile)], tmp_path)
    out = result.stdout + result.stderr
    for rule in (
        "synth_mimic",
        "synth_pubmed",
        "synth_truth",
        "synth_tiny_model",
        "synth_word_vectors",
        "demo_world_summary",
        "input_manifest",
        "rios_ingest",
        "rios_word2vec",
        "rios_weat",
    ):
        assert f"rule {rule}:" in out, rule


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda c, t: c["demo"].__setitem__("scale", 0),
            "medbias: config key 'demo.scale': got 0, expected a value > 0",
        ),
        (
            lambda c, t: c["models"].__setitem__("mine", {"source": str(t / "nowhere"), "kind": "masked"}),
            "medbias: config key 'models.mine.source': local model folder",
        ),
        (lambda c, t: c["models"]["gpt2"].__setitem__("kind", "decoder"), "medbias: config key 'models.gpt2.kind'"),
    ],
)
def test_bad_demo_config_stops_with_one_line_and_no_outputs(tmp_path, edit, message):
    config = demo_config()
    edit(config, tmp_path)
    configfile = write_config(tmp_path / "config.yaml", config)
    result = run_snakemake(["--cores", "1", "--configfile", str(configfile)], tmp_path)
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.startswith("medbias:")]
    assert len(lines) == 1 and lines[0].startswith(message), result.stderr
    assert not (tmp_path / "results").exists() and not (tmp_path / "logs").exists()


def test_missing_mimic_column_stops_before_any_job(tmp_path):
    config = fake_real_config(tmp_path)
    notes = Path(config["inputs"]["mimic_dir"]) / "NOTEEVENTS.csv"
    notes.write_text(notes.read_text().replace(",TEXT", ""))
    configfile = write_config(tmp_path / "mimic.yaml", config)
    result = run_snakemake(["--cores", "1", "--configfile", str(configfile)], tmp_path)
    assert result.returncode != 0
    assert "medbias: " in result.stderr and "NOTEEVENTS.csv: missing column 'TEXT'" in result.stderr
    assert not (tmp_path / "results").exists()


def _ingest_jobs(output: str) -> dict[str, int]:
    """Job counts of the PubMed map and reduce rules in a dry run's job table."""
    return {rule: int(count) for rule, count in re.findall(r"^(rios_parse|rios_ingest)\s+(\d+)$", output, re.M)}


def test_a_changed_or_added_pubmed_file_reruns_its_own_parse_job_and_the_reduce_only(tmp_path):
    """PubMed as map and reduce: one parse job per file, one reduce. After a full ingest, a
    changed update file reruns its parse job and the reduce, not the other files' jobs; so does a new
    update file; and the new file's deletion reaches an article that another file's job parsed."""
    import gzip

    import pandas as pd
    from pubmed_helpers import article, write

    config = fake_real_config(tmp_path)
    folder = Path(config["inputs"]["pubmed_dir"])
    (folder / "pubmed26n0001.xml.gz").unlink()
    for number, pmid in ((1, 100), (2, 200), (3, 300)):
        write(
            folder / f"pubmed26n000{number}.xml.gz",
            article(pmid, "<Year>1985</Year>", f"article {pmid}")
            + article(pmid + 1, "<Year>1986</Year>", f"article {pmid + 1}"),
        )
    configfile = write_config(tmp_path / "mimic.yaml", config)
    until = ["--configfile", str(configfile), "--until", "rios_ingest", "--cores", "2"]
    first = run_snakemake(until, tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    assert _ingest_jobs(first.stdout + first.stderr) == {"rios_parse": 3, "rios_ingest": 1}
    corpus = tmp_path / "results" / "rios" / "corpus" / "1980-1989.parquet"
    assert pd.read_parquet(corpus)["pmid"].tolist() == [100, 101, 200, 201, 300, 301]

    # an unchanged file whose time stamp moved reruns nothing (Snakemake compares checksums)
    (folder / "pubmed26n0002.xml.gz").touch()
    assert _ingest_jobs(run_snakemake(["-n", *until], tmp_path).stdout) == {}

    # a changed file: its own parse job and the reduce
    write(folder / "pubmed26n0002.xml.gz", article(200, "<Year>1985</Year>", "article 200 revised"))
    dry = run_snakemake(["-n", *until], tmp_path)
    assert _ingest_jobs(dry.stdout + dry.stderr) == {"rios_parse": 1, "rios_ingest": 1}, dry.stdout[-3000:]
    assert "pubmed_file=pubmed26n0002" in dry.stdout

    # a new update file that deletes a baseline article: its parse job and the reduce
    (folder / "pubmed26n1400.xml.gz").write_bytes(
        gzip.compress(
            b'<?xml version="1.0"?>\n<PubmedArticleSet><DeleteCitation><PMID Version="1">101</PMID>'
            b"</DeleteCitation></PubmedArticleSet>\n"
        )
    )
    dry = run_snakemake(["-n", *until], tmp_path)
    assert _ingest_jobs(dry.stdout + dry.stderr) == {"rios_parse": 2, "rios_ingest": 1}  # 0002's still pending
    assert run_snakemake(until, tmp_path).returncode == 0
    assert pd.read_parquet(corpus)["pmid"].tolist() == [100, 200, 300, 301]  # 101 deleted, 201 gone with its file


RULE_START = re.compile(r"^(?:(?:local)?rule (\w+):|checkpoint (\w+):|use rule \w+ as (\w+) with:)", re.M)
CONSTANT = re.compile(r"\b([A-Z][A-Z0-9_]{3,})\b")


def rule_blocks() -> dict[str, str]:
    """Each rule's text in Snakefile and rules/*.smk, from its header to the next rule's."""
    blocks = {}
    for path in [REPO / "Snakefile", *sorted((REPO / "rules").glob("*.smk"))]:
        text = path.read_text(encoding="utf-8")
        starts = list(RULE_START.finditer(text))
        for here, after in zip(starts, [*starts[1:], None]):
            name = next(group for group in here.groups() if group)
            blocks[name] = text[here.start() : after.start() if after else len(text)]
    return blocks


WILDCARD = re.compile(r"\{\{[^}]*\}\}|\{[^}]*\}")
MULTIEXT = re.compile(r'multiext\(\s*f?"([^"\n]*)"((?:\s*,\s*"[^"\n]*")+)')


def name_patterns(text: str) -> list[re.Pattern]:
    """The paths that ``text``'s string literals spell (``multiext``'s stem with each extension), each
    {...} (a wildcard or a value formatted in) read as any text. A literal that spells fewer than three
    characters of its own besides its extension and slashes ("{DIR}/{stem}.{ext}") names no file, so it
    is no pattern."""
    literals = re.findall(r'"([^"\n]*)"', text)
    for stem, extensions in MULTIEXT.findall(text):
        literals += [stem + extension for extension in re.findall(r'"([^"\n]*)"', extensions)]
    patterns = []
    for literal in literals:
        spelled = WILDCARD.sub("", literal).rsplit(".", 1)[0].replace("/", "")
        if len(spelled) >= 3:
            patterns.append(
                re.compile(".*" + WILDCARD.sub(".+", re.escape(literal).replace("\\{", "{").replace("\\}", "}")))
            )
    return patterns


def rule_spells(block: str, path: str, common: str) -> bool:
    """Whether a rule's text spells the file ``path``: in its own literals, or in the definition of a
    constant it names (one grep away: e.g. PUBMED_FILES in rules/common.smk)."""
    texts = [block]
    for constant in set(CONSTANT.findall(block)):
        definition = re.search(rf"^\s*{constant} = .*(?:\n(?!\S).*)*", common, re.M)
        if definition:
            texts.append(definition.group(0))
    return any(pattern.fullmatch(path) for text in texts for pattern in name_patterns(text))


@pytest.mark.unit
def test_grep_on_an_output_file_name_finds_the_rule_that_writes_it():
    """Every file of the default DAG (snakemake --summary: file and rule) is spelled in the rule that
    writes it (its literal, or a {wildcard} pattern of it), so `grep -n table4_gaps rules/*.smk` lands on
    the rule; and every report item (report/items.yaml) is one of those files."""
    import yaml

    result = run_snakemake(["--summary", "--cores", "1"], REPO)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = [line.split("\t") for line in result.stdout.splitlines() if line.count("\t") >= 2][1:]
    assert len(rows) > 300
    from medbias.pipeline.config import load_config

    blocks, common = rule_blocks(), (REPO / "rules" / "common.smk").read_text(encoding="utf-8")
    # the demo world writes the real world's input files where the config's inputs say; their names are
    # the data's own (MIMIC-III tables, mimic-code exports, the annotation and split files), not a rule's
    inputs = [str(v) for v in load_config(REPO / "config" / "config.yaml")["inputs"].values()]
    rows = [row for row in rows if not (row[2] == "synth_mimic" and row[0].startswith(tuple(inputs)))]
    unspelled = [f"{rule}: {path}" for path, _, rule, *_ in rows if not rule_spells(blocks[rule], path, common)]
    assert unspelled == []
    outputs = {path for path, *_ in rows}
    items = yaml.safe_load((REPO / "report" / "items.yaml").read_text(encoding="utf-8"))
    assert {f"results/{key}" for key in items} - outputs == set()


@pytest.mark.unit
def test_the_spelling_check_sees_a_name_no_rule_spells():
    block = (
        'rule tables:\n    output:\n        table4=f"{DIR}/table4_gaps.md",\n'
        '        figures=f"{DIR}/{{name}}_gaps.png",\n'
    )
    assert rule_spells(block, "results/t/table4_gaps.md", "") and rule_spells(block, "results/t/fig4_gaps.png", "")
    assert not rule_spells(block, "results/t/tableC3_gaps_fdr.md", "")
    assert not rule_spells('        files=f"{DIR}/{stem}.{ext}",\n', "results/t/tableC3_gaps_fdr.md", "")
    assert rule_spells('        t=multiext(f"{DIR}/table4_gaps", ".csv", ".md"),\n', "results/t/table4_gaps.csv", "")
    assert rule_spells(
        "    input:\n        ABSTRACTS,\n", "results/d/abstracts.txt.gz", 'ABSTRACTS = f"{DEMO}/abstracts.txt.gz"\n'
    )


def test_a_repository_and_config_in_folders_with_spaces_run_as_typed(tmp_path):
    """The repository cloned into ``my projects/med bias`` and a config named ``my demo.yaml``: the dry
    run and the demo's first jobs (the synthetic world, MIMIC-III ingest with the note text, the tiny
    BERT and its tokenizer, the note windows with their worker processes, a PubMed parse) run from
    there as a user types them."""
    import shutil
    import subprocess

    clone = tmp_path / "my projects" / "med bias"
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    for name in files:
        if (REPO / name).is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, clone / name)
    configfile = write_config(clone / "config" / "my demo.yaml", wiring_config())

    def as_typed(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [snakemake_bin(), *args, "--configfile", "config/my demo.yaml"],
            cwd=clone,
            capture_output=True,
            text=True,
            timeout=900,
        )

    dry = as_typed("-n")
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert "rule hurtful_pretrain:" in dry.stdout + dry.stderr
    first = as_typed("--cores", "2", "results/mimic/note_processing.json", "results/rios/parsed/pubmed26n0001.parquet")
    assert first.returncode == 0, (first.stdout + first.stderr)[-3000:]
    assert (clone / "results" / "mimic" / "note_processing.json").is_file() and configfile.is_file()
    assert (clone / "results" / "rios" / "parsed" / "pubmed26n0001.parquet").is_file()


DEMO_BUDGET = REPO / "tests" / "performance" / "demo_budget.tsv"


def test_every_rule_of_the_demo_has_a_budget_line(tmp_path):
    """The demo's job-seconds per rule (``tests/performance/demo_budget.tsv``, written from a measured
    run by ``scripts/profile_run.py --write-budget``) name exactly the rules the default demo plans: a
    change that adds a rule to the demo adds its measured line (the wall time itself is the profile's
    to measure, not a timed test's)."""
    from medbias.pipeline.profile import read_budget

    configfile = write_config(tmp_path / "config.yaml", demo_config())
    result = run_snakemake(["-n", "--configfile", str(configfile)], tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout + result.stderr
    stats = out[out.index("Job stats:") : out.index("\ntotal", out.index("Job stats:"))].splitlines()[3:]
    planned = {line.split()[0] for line in stats if line.strip()}
    budget = read_budget(DEMO_BUDGET)
    assert planned - set(budget) == set(), "rules without a budget line: measure a demo run and write it"
    assert set(budget) - planned == set(), "budget lines of rules the demo no longer plans"
    assert all(seconds >= 0 and jobs >= 1 for jobs, seconds in budget.values())


def test_nested_command_line_values_are_typed_and_a_quoted_number_in_a_file_is_refused(tmp_path):
    """``--config 'rios={ripa_top: 15}'`` (Snakemake hands the nested 15 over as text) plans the demo with
    15; the same key quoted in a settings file ("15") stops with one line: only the command line's values
    are read as the schema types them."""
    configfile = write_config(tmp_path / "config.yaml", demo_config())
    typed = run_snakemake(["-n", "--configfile", str(configfile), "--config", "rios={ripa_top: 15}"], tmp_path)
    assert typed.returncode == 0, (typed.stdout + typed.stderr)[-3000:]
    (tmp_path / "my_settings.yaml").write_text('rios:\n  ripa_top: "15"\n')
    quoted = run_snakemake(["-n", "--configfile", str(configfile), "my_settings.yaml"], tmp_path)
    lines = [line for line in (quoted.stdout + quoted.stderr).splitlines() if line.startswith("medbias:")]
    assert quoted.returncode != 0 and lines == ["medbias: config key 'rios.ripa_top': got '15', expected integer"]
    assert not (tmp_path / "results").exists()
