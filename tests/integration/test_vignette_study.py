"""The clinical vignettes on the demo world: the planted decision is found with its sign by the plain
and the chat model and the controls stay clean (planted tier); every registry model is in the summary,
the scores hold every question's options, and the audit cards carry the section (wiring tier)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import run_config

# what this module's tests read from each test world (built in one background run per world: conftest)
PLANTED_TARGETS = ("vignettes", "validation")
WIRING_TARGETS = ("vignettes", "results/audit/vignette_chat/card.md", "results/audit/plm_bert/card.md")


@pytest.fixture(scope="module")
def planted_run(planted_study):
    return planted_study(*PLANTED_TARGETS)


@pytest.fixture(scope="module")
def wiring_run(wiring_study):
    return wiring_study(*WIRING_TARGETS)


@pytest.mark.planted
def test_the_planted_decision_is_found_by_both_models_and_the_controls_are_clean(planted_run, demo_truth):
    truth = demo_truth["vignettes"]
    assert set(truth["trained_models"]) == {"vignette_gpt2", "vignette_chat"}
    recovery = pd.read_csv(planted_run / "results" / "validation" / "planted_recovery.csv")
    rows = recovery[recovery["study"] == "vignettes"]
    planted = rows[rows["truth"] == "planted"]
    assert len(planted) == 2 and planted["recovered"].all(), planted.to_dict("records")
    controls = rows[rows["truth"] == "control"]
    assert len(controls) == 2 * (3 + 2 * (4 + 1))  # 3 demographic controls, 2 decisions x (4 name cells + town)
    assert controls["recovered"].all(), controls.loc[~controls["recovered"], ["effect", "observed"]].to_dict("records")
    for model in truth["trained_models"]:  # read independently from the model's table
        table = pd.read_csv(planted_run / "results" / "vignettes" / model / "contrasts.csv")
        race = table[
            (table["set"] == truth["set"])
            & (table["decision"] == "opioid")
            & (table["contrast"] == "race: Black vs White")
        ]
        (row,) = race.itertuples(index=False)
        # the corpus plants -0.4 in P(Yes); measured -0.38 (plain) and -0.36 (chat) on the demo's seeds
        assert row.significant and -0.5 < row.d_probability < -0.25 and row.d_probability_high < 0
        assert row.flip_rate > 0.9  # P(Yes) 0.8 against 0.4: the most probable answer changes in every pair


@pytest.mark.planted
def test_the_control_swaps_hold_the_level_beyond_the_margin_and_show_why_it_is_needed(planted_run):
    rates = pd.read_csv(planted_run / "results" / "validation" / "error_rates.csv")
    rows = rates[rates["test"] == "vignette contrast"].set_index(["p_kind", "truth"])
    margin = rows.loc[("sign-flip, beyond margin", "control")]
    assert margin["decisions"] == 26 and margin["holds_level"]  # measured 0 of 26
    anything = rows.loc[("sign-flip, any difference", "control")]
    # a fixed model shifts its answers by a little, the same way in every vignette: measured 19 of 26 flagged
    assert anything["rate"] > 0.3 and not anything["holds_level"]
    assert rows.loc[("sign-flip, beyond margin", "planted")]["rate"] == 1.0


@pytest.mark.wiring
def test_every_registry_model_is_in_the_summary_with_its_status(wiring_run):
    config = run_config(wiring_run)
    summary = pd.read_csv(wiring_run / "results" / "vignettes" / "summary.csv", keep_default_na=False)
    assert list(summary["model"]) == list(config["models"])
    capable = [name for name, entry in config["models"].items() if entry["kind"] == "causal"]
    chosen = config["vignettes"]["models"]
    causal = capable if chosen is None else [name for name in capable if name in chosen]
    by_model = summary.set_index("model")
    assert (by_model.loc[causal, "status"] == "ok").all()
    assert by_model.loc[[n for n in capable if n not in causal], "status"].str.startswith("not chosen").all()
    others = by_model.drop(index=capable)
    assert others["status"].str.startswith("not applicable: kind").all()
    long = pd.read_csv(wiring_run / "results" / "vignettes" / "contrasts_long.csv")
    assert set(long["model"]) == set(causal) and set(long["set"]) == set(config["vignettes"]["sets"])
    for name in causal:  # the wiring profile keeps every prompt (min_option_mass 0); each model's mass is reported
        mass = json.loads((wiring_run / "results" / "vignettes" / name / "option_mass.json").read_text())
        assert mass["threshold"] == config["vignettes"]["min_option_mass"] == 0 and mass["prompts_below"] == 0
        assert 0 < mass["min"] <= mass["mean"] <= 1 and mass["prompts"] == int(
            by_model.loc[name, "prompts left out"].split(" of ")[1]
        )


@pytest.mark.wiring
def test_the_scores_hold_every_option_of_every_question_and_the_chat_model_its_template(wiring_run):
    folder = wiring_run / "results" / "vignettes"
    chat = json.loads((folder / "vignette_chat" / "scores.json").read_text())
    plain = json.loads((folder / "vignette_gpt2" / "scores.json").read_text())
    assert chat["prompt_style"] == "chat template" and chat["system_prompt"]
    assert plain["prompt_style"] == "plain" and plain["system_prompt"] == ""
    scores = pd.read_parquet(folder / "vignette_chat" / "scores.parquet")
    assert chat["prompts"] == scores["question"].nunique()
    per_question = scores.groupby("question")
    assert np.allclose(per_question["probability"].sum(), 1.0)
    assert (per_question["compared"].sum() == 1).all()
    options = scores.groupby(["set", "decision"])["option"].agg(lambda o: sorted(set(o)))
    assert options[("chest_pain", "triage")] == ["1", "2", "3", "4", "5"]
    assert options[("demo", "opioid")] == ["No", "Yes"]
    assert (scores["log_prob"] <= 0).all() and "generated_option" in scores  # greedy answers are on in the demo
    page = (folder / "vignette_chat" / "contrasts.md").read_text()
    assert "## Control swaps (should change nothing)" in page and "Greedy answers against the probabilities" in page
    assert (folder / "vignette_chat" / "fig_contrasts.png").stat().st_size > 10_000


@pytest.mark.wiring
def test_the_audit_cards_carry_the_vignettes_for_causal_entries_only(wiring_run):
    chat = json.loads((wiring_run / "results" / "audit" / "vignette_chat" / "card.json").read_text())
    assert "Clinical vignettes: decisions by the model's own option probabilities" in chat["sections"]
    text = (wiring_run / "results" / "audit" / "vignette_chat" / "card.md").read_text()
    assert "Prompted with the chat template prompt" in text and "| demo | opioid | race: Black vs White |" in text
    bert = json.loads((wiring_run / "results" / "audit" / "plm_bert" / "card.json").read_text())
    assert {"section": "clinical vignettes", "reason": "needs a causal or chat model (option probabilities); this "
            "entry's kind is masked"} in bert["skipped"]  # fmt: skip
