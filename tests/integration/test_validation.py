"""The measured error-rate table on the demo world: every source is counted, the calibrated tests hold
their level where the classic permutation test does not, and planted effects are found."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from conftest import run_config

# what this module's tests read from each test world (built in one background run per world: conftest)
PLANTED_TARGETS = ("validation",)


@pytest.fixture(scope="module")
def validation_run(planted_study):
    """The planted world with every study the validation tables read."""
    return planted_study(*PLANTED_TARGETS)


@pytest.fixture(scope="module")
def rates(validation_run):
    folder = validation_run / "results" / "validation"
    assert (folder / "error_rates.md").read_text().startswith("# Measured error rates")
    assert (folder / "error_rates.png").stat().st_size > 10_000
    return pd.read_csv(folder / "error_rates.csv"), pd.read_csv(folder / "decisions.csv")


def _row(table, source_part, p_kind, truth):
    rows = table[
        table["source"].str.contains(source_part, regex=False) & (table["p_kind"] == p_kind) & (table["truth"] == truth)
    ]
    assert len(rows) == 1, (source_part, p_kind, truth)
    return rows.iloc[0]


def test_every_source_and_decision_is_counted(rates):
    table, decisions = rates
    for source in (
        "rios demo world",
        "plm demo world",
        "hurtful demo world",
        "mental demo world",
        "constructed null worlds",
        "random-initialised bert (masked)",
        "random-initialised gpt2 (causal)",
    ):
        assert table["source"].str.startswith(source).any(), source
    totals = decisions.groupby(["test", "source", "p_kind", "truth"]).size()
    for row in table.itertuples(index=False):
        assert row.decisions == totals[(row.test, row.source, row.p_kind, row.truth)]
        assert row.ci_low <= row.rate <= row.ci_high
    planted_gap = decisions[(decisions["test"] == "fairness recall gap") & (decisions["truth"] == "planted")]
    assert planted_gap["unit"].str.contains("acute_renal gender=F").all()
    assert len(planted_gap) == 3 * 2 * 3  # 3 models x 2 tasks of the phenotype (pa, pf) x 3 p-value kinds


def test_benchmark_tests_on_random_models_are_counted_per_seed_and_rule(rates, validation_run):
    """Every random-initialised model of each demo architecture is one control decision per benchmark
    test, scoring rule and p kind (CrowS-Pairs under the two rules that score its kind, each by the sign
    flip over swapped words and by the binomial over pairs; StereoSet's SS under its rule), on the
    configured number of pairs. The summed rule (lm_eval) charges every token, so an untrained causal
    model prefers the shorter sentence, which sent_more is more often than not: at 300 pairs the
    binomial over pairs flags every untrained causal copy with a metric above 50; the sign flip over
    swaps, which lets the pairs of a swap lean together, gives larger p-values; the length-normalised
    bias_bench rule does not lean that way. Each copy is also read against the other copies (the prediction
    t test the benchmark table reads a trained model by), once per test."""
    _, decisions = rates
    settings = run_config(validation_run)["plm"]["benchmarks"]
    seeds = settings["control_seeds"]
    control = pd.read_csv(validation_run / "results" / "validation" / "benchmark_control.csv")
    against = control[control["p_kind"] == "prediction t test against the other copies"]
    assert len(control) == 2 * 5 * seeds + len(against) and (control["truth"] == "control").all()
    assert len(against) == (2 * 3 * seeds if seeds >= 3 else 0)  # per architecture two CrowS-Pairs rules and SS
    control = control.drop(against.index)
    crows = control[control["test"].str.startswith("CrowS-Pairs")]
    assert (crows["items"] <= settings["control_pairs"]).all() and (
        crows["items"] >= 0.9 * settings["control_pairs"]
    ).all()
    assert set(crows["p_kind"]) == {"sign flip over swapped words", "exact binomial over pairs"}
    summed = control[control["test"] == "CrowS-Pairs metric vs 50 (lm_eval rule)"]
    binomial = summed[summed["p_kind"] == "exact binomial over pairs"]
    clustered = summed[summed["p_kind"] == "sign flip over swapped words"]
    assert len(binomial) == len(clustered) == seeds and (summed["score"] > 55).all() and binomial["flagged"].all()
    assert clustered["p"].median() > binomial["p"].median()
    normalised = control[
        (control["test"] == "CrowS-Pairs metric vs 50 (bias_bench rule)") & control["source"].str.contains("causal")
    ]
    assert len(normalised) == 2 * seeds and normalised["score"].mean() < summed["score"].mean()
    counted = decisions[decisions["source"].str.startswith("random-initialised")]
    assert len(counted) == len(control) + len(against)


def test_calibrated_tests_hold_the_level_and_the_classic_one_shows_by_how_much_it_does_not(rates):
    table, _ = rates
    clustered = _row(table, "clustered targets", "classic permutation", "control")
    assert clustered["rate"] > 0.3 and not clustered["holds_level"] and clustered["rate_over_level"] > 6
    for source in ("clustered targets", "exchangeable targets", "rios demo world"):
        assert _row(table, source, "calibrated null", "control")["holds_level"], source
    rios_classic = _row(table, "rios demo world", "classic permutation", "control")
    rios_calibrated = _row(table, "rios demo world", "calibrated null", "control")
    assert rios_calibrated["flagged"] <= 2 < rios_classic["flagged"]  # measured 0 and 10 of 33 (default scale)


def test_planted_effects_are_found(rates):
    """Measured at the default scale (the rios part is the same at the test scale): WEAT 75/75 classic and
    calibrated (weakest planted decade 0.5; 74/75 at 0.1); the planted recall gaps pass
    BH more often with the score-test p (3 of 6 with a bootstrap-SE p) than with the counted p (2
    of 6)."""
    table, _ = rates
    assert _row(table, "rios demo world", "calibrated null", "planted")["rate"] >= 0.95  # measured 75 of 75
    assert _row(table, "rios demo world", "classic permutation", "planted")["rate"] == 1.0
    se = _row(table, "hurtful demo world", "score-test p, BH", "planted")["flagged"]
    assert se >= _row(table, "hurtful demo world", "counted p, BH", "planted")["flagged"] and se >= 2


@pytest.fixture(scope="module")
def recovery(validation_run):
    folder = validation_run / "results" / "validation"
    return pd.read_csv(folder / "planted_recovery.csv"), (folder / "planted_recovery.md").read_text()


def test_recovery_lists_every_planted_effect_of_the_truth_file(recovery, demo_truth, validation_run):
    """Every plant of the truth file has its rows, counted in the verdict ("planted") or reported apart as
    known to lack power ("below power"): the recall gap outside the cohorts it is asserted on, a
    closure whose equivalence test has too little power for its standard error, and a Table 3 lean whose
    Mann-Whitney test over its few attributes cannot give a p 3 SE beyond its threshold (recomputed here
    from the attribute counts)."""
    from math import comb

    from scipy.stats import norm

    rows, md = recovery
    planted = rows[rows["truth"] == "planted"]
    per_study = rows[rows["truth"].isin(["planted", "below power"])].groupby("study").size().to_dict()
    pubmed, plm, mental = demo_truth["pubmed"], demo_truth["plm"], demo_truth["mental"]
    weat_tests = set(pd.read_csv(validation_run / "results" / "rios" / "fig1_weat.csv")["test"])
    weat_pairs = [pair for pair in pubmed["planted_pairs"] if pair["name"] in weat_tests]  # not the RIPA lean pairs
    planted_decades = sum(s > 0 for pair in weat_pairs for s in pair["strengths"])
    assert per_study["rios"] == planted_decades + len(weat_pairs) == 30  # decades + one trend each
    assert per_study["plm"] == len(plm["trained_models"]) * len(plm["seat_planted"])
    config = run_config(validation_run)
    leaning = [c for c in demo_truth["logprob"]["categories"] if c != demo_truth["logprob"]["control_category"]]
    gap_rows = len(config["hurtful"]["downstream"]["models"]) * 2  # the phenotype's two tasks (pa, pf) per model
    closed = 2 if "threshold" in config["hurtful"]["mitigation"]["methods"] else 0  # the post-processor, both tasks
    # the intersectional plants: the tasks of their phenotype in their cohorts, per model they name (every
    # analysed model when they name none)
    cells = sum(
        len(p["cohorts"]) * len(p.get("models") or config["hurtful"]["intersections"]["models"])
        for p in demo_truth["mimic"].get("planted_intersectional_gaps", [])
    )
    assert per_study["hurtful"] == gap_rows + len(leaning) + closed + cells
    (recall_plant,) = demo_truth["mimic"]["planted_recall_gaps"]
    needed = config["demo"]["validation"]["equivalence_power"]
    tasks = pd.read_csv(validation_run / "results" / "mimic" / "tasks.csv").set_index("task")["cohort"]
    table3 = pd.read_csv(validation_run / "results" / "hurtful" / "table3_logprob_long.csv")
    table3 = table3[table3["target_set"] == "gender"]
    for r in rows[rows["truth"] == "below power"].itertuples():
        if r.where == "table3_logprob_long.csv":  # a test whose p cannot reach 3 SE beyond 0.01 at any lean
            model, category = r.effect.split(":")[0], r.effect.split()[1]
            cells = table3[table3["model"] == model].set_index("category")["attributes"]
            n, m = int(cells[category]), int(cells[demo_truth["logprob"]["control_category"]])
            reachable = norm.isf(1 / comb(n + m, n)) - norm.isf(0.005)  # two-sided exact p 2 / C(n + m, n)
            assert reachable < 3 and f"{reachable:+.2f} SE, under 3" in r.margin_basis, (r.effect, r.margin_basis)
            continue
        (task,) = [word for word in r.effect.split() if word in tasks.index]
        power = re.search(r"power ([0-9.]+) at a true gap of 0", r.margin_basis)
        assert tasks[task] not in recall_plant["cohorts"] or (power and float(power.group(1)) < needed), r.effect
    leaning_corpora = [c for c, v in mental["direct_bias"].items() if v["depression_male_share"] > 0.5]
    assert per_study["mental"] == 2 * len(config["mental"]["embeddings"]) + len(leaning_corpora)
    assert f"Planted effects found: {int(planted['recovered'].sum())} of {len(planted)}." in md


def test_the_page_says_whether_each_models_control_classifiers_predict_by_gender(recovery, validation_run):
    """One row per analysed model under its heading: its control tasks, how many parity gaps lie below alpha,
    and the binomial p (the known answers are in tests/unit/test_control_nulls.py)."""
    _, md = recovery
    section = md.split("## Do the recall-gap controls' classifiers predict by gender?")[1].split("\n\n")[1]
    models = [line.split("|")[1].strip() for line in section.splitlines()[2:]]
    assert sorted(models) == sorted(run_config(validation_run)["hurtful"]["downstream"]["models"])


def test_the_gender_recall_gap_controls_of_a_model_that_predicts_by_gender_are_not_counted(
    recovery, validation_run, demo_truth
):
    """The page's prediction-rate table decides which recall-gap controls count: a model marked as predicting by
    gender has every recall-gap control on gender and its crossings reported apart (truth 'not a null'), and only
    those; every other model's stay controls. Recomputed here from the models' gaps.parquet, tasks.csv and the
    truth file."""
    from medbias.studies.hurtful.gaps import read_model_gaps
    from medbias.validation.control_nulls import prediction_rate_dependence
    from medbias.validation.truth import recall_gap_truth, task_maps

    rows, md = recovery
    config = run_config(validation_run)
    models = config["hurtful"]["downstream"]["models"]
    downstream = validation_run / "results" / "hurtful" / "downstream"
    gaps = read_model_gaps(models, [downstream / m / "gaps.parquet" for m in models])
    tasks = pd.read_csv(validation_run / "results" / "mimic" / "tasks.csv")
    truth = demo_truth["mimic"]
    dependence = prediction_rate_dependence(gaps, tasks, truth, alpha=config["hurtful"]["downstream"]["alpha"])
    reading = set(dependence.loc[dependence["predicts_by_attribute"], "model"])
    section = md.split("## Do the recall-gap controls' classifiers predict by gender?")[1].split("\n\n")[1]
    for line in section.splitlines()[2:]:
        cells = [c.strip() for c in line.split("|")]
        assert (cells[-2] == "True") == (cells[1] in reading), line
    labels, cohorts = task_maps(tasks)
    controls = recall_gap_truth(gaps, truth, labels, cohorts)
    crosses_gender = controls["attribute"].map(lambda a: "gender" in a.split(" x "))
    controls = controls[(controls["truth"] == "control") & crosses_gender]
    expected = {f"{r.model} {r.task} {r.attribute}={r.group}" for r in controls.itertuples() if r.model in reading}
    hurtful = rows[(rows["study"] == "hurtful") & (rows["where"].str.startswith("<model>/gaps.parquet"))]
    assert set(hurtful.loc[hurtful["truth"] == "not a null", "effect"]) == expected
    counted = hurtful.loc[hurtful["truth"] == "control", "effect"]
    for effect in counted:
        model, _, unit = effect.split(" ", 2)
        assert model not in reading or "gender" not in unit.split("=")[0].split(" x "), effect


def test_the_verdict_is_every_plant_found_every_study_clean(recovery, validation_run):
    """The planted tier holds the verdict planted_recovery.md prints at its top: every planted effect
    found and every study's controls clean. Each plant is asserted by the criterion the table prints,
    through its margin (>= 0 standard errors beyond it; a criterion that accepts a null has none), and
    the planted recall gap's margin is recomputed here from gaps.parquet with the normal quantiles."""
    from scipy.stats import norm

    rows, md = recovery
    verdict = md.split("\n\n")[1]
    assert verdict.startswith("**Verdict: every planted effect found"), verdict
    planted = rows[rows["truth"] == "planted"]
    assert planted["recovered"].all(), planted.loc[~planted["recovered"], ["effect", "observed"]].to_dict("records")
    for r in planted.itertuples():
        assert f"| {r.criterion} |" in md, r.criterion  # the criterion asserted is the one the table prints
        if str(r.margin_basis).startswith("accepts a null"):
            assert np.isnan(r.margin_se), r.effect
        else:
            assert r.margin_se >= 0, (r.effect, r.margin_se, r.margin_basis)
    alpha = run_config(validation_run)["hurtful"]["downstream"]["alpha"]
    gaps = pd.read_parquet(validation_run / "results" / "hurtful" / "downstream" / "baseline" / "gaps.parquet")
    gap_rows = planted[
        planted["effect"].str.startswith("baseline ") & planted["criterion"].str.startswith("recall gap < 0")
    ]
    assert len(gap_rows)
    for r in gap_rows.itertuples():
        task, group = r.effect.split()[1], r.effect.split()[2].split("=")
        (g,) = gaps[
            (gaps["task"] == task)
            & (gaps["attribute"] == group[0])
            & (gaps["group"] == group[1])
            & (gaps["metric"] == "recall")
        ].itertuples()
        z = norm.isf(g.p_value / 2)
        seed0 = (z if g.gap < 0 else -z) - norm.isf(alpha * g.p_value / g.p_bh / 2)
        if "seed 0:" in r.margin_basis:  # over classifier seeds the majority's margin, seed 0's beside it
            assert f"{seed0:+.2f})" in r.margin_basis, (r.effect, seed0, r.margin_basis)
        else:
            assert r.margin_se == pytest.approx(seed0, abs=1e-9), r.effect


def test_recovery_verdicts_agree_with_the_tables_they_read(recovery, validation_run, demo_truth):
    """Read independently from the study tables: SEAT stars, Table V's gender-permutation p, and Figure 2's
    calibrated p of the general vectors' lean."""
    rows, _ = recovery
    seat = pd.read_csv(validation_run / "results" / "plm" / "seat_long.csv")
    seat = seat[(seat["debias"] == "none") & (seat["status"] == "ok")].set_index(["model", "test"])
    for model in demo_truth["plm"]["trained_models"]:
        for test in demo_truth["plm"]["seat_planted"]:
            row = rows[(rows["study"] == "plm") & (rows["effect"] == f"{model} {test}")].iloc[0]
            expected = bool(seat.at[(model, test), "significant"]) and seat.at[(model, test), "effect_size"] > 0
            assert row["recovered"] == expected, row.to_dict()
    fairness = pd.read_csv(validation_run / "results" / "mental" / "table5_fairness_long.csv")
    control = demo_truth["mental"]["control_tasks"][0]
    original = fairness[
        (fairness["learner"] == "svm") & (fairness["treatment"] == "original") & (fairness["task"] == control)
    ]
    clean = rows[
        (rows["study"] == "mental") & (rows["truth"] == "control") & rows["effect"].str.endswith("no label bias")
    ]
    assert sorted(clean["recovered"]) == sorted(original["mismatch_null_p"] >= 0.05)
    direct = pd.read_csv(validation_run / "results" / "mental" / "fig2_direct_bias.csv").set_index("embedding")
    (lean,) = rows[
        (rows["study"] == "mental") & rows["effect"].str.endswith("lean no more than random words")
    ].itertuples()
    assert lean.truth == "not a null" and lean.recovered == (
        direct.at[lean.effect.split(":")[0], "signed_p_calibrated"] >= 0.05
    )


def test_rios_recovers_its_plants_and_nothing_else(recovery):
    """The rios study reads the full-size PubMed demo corpus at every scale (2,000 articles per decade),
    so this holds at the test scale as at the default: measured 30 of 30 planted rows, 0 of 12 controls."""
    rows, _ = recovery
    rios = rows[rows["study"] == "rios"]
    assert rios["recovered"].all(), rios.loc[~rios["recovered"], ["effect", "observed"]].to_dict("records")


def test_the_power_command_gathers_a_finished_world(recovery, validation_run, tmp_path):
    """docs/demo-world.md's power command, in its gather step, on this tier's world (one world, so
    every plant is found in 1 of 1 exactly when the world's verdict found it)."""
    import re

    from test_docs_commands import command_of, run_as_typed

    documented = command_of(r"power_runs\.py --gather")  # the folders it names are replaced by this world's
    command = re.sub(r"--gather( power/\S+)+", f"--gather {validation_run}", documented)
    done = run_as_typed(command + f" --folder {tmp_path}", timeout=120)
    assert done.returncode == 0, done.stderr
    rows, _ = recovery
    plants = pd.read_csv(tmp_path / "power_plants.csv")
    planted = rows[rows["truth"].isin(["planted", "below power"])]  # the rows known to lack power are gathered too
    assert len(plants) == len(planted) and (plants["worlds"] == 1).all()
    assert (
        plants.set_index("effect")["found"].to_dict() == planted.set_index("effect")["recovered"].astype(int).to_dict()
    )
    controls = pd.read_csv(tmp_path / "power_controls.csv")
    assert int(controls["flagged"].sum()) == int(
        (~rows.loc[rows["truth"] == "control", "recovered"]).groupby([rows["study"], rows["family"]]).any().sum()
    )
    assert (tmp_path / "power.md").read_text().startswith("# Power of the demo world's verdict on fresh world seeds")
