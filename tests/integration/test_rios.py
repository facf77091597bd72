"""Study "rios" end to end on the demo world: the planted trend is recovered, controls and the null
decade stay near zero, planted words land on the right side of RIPA, and nothing is dropped silently."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from conftest import wiring_config

# what this module's tests read from each test world (built in one background run per world: conftest)
PLANTED_TARGETS = ("rios",)
WIRING_TARGETS = ("rios",)


@pytest.fixture(scope="module")
def rios(planted_study):
    return planted_study(*PLANTED_TARGETS) / "results" / "rios"


@pytest.fixture(scope="module")
def rios_wiring(wiring_study):
    return wiring_study(*WIRING_TARGETS) / "results" / "rios"


@pytest.fixture(scope="module")
def truth(demo_truth):
    return demo_truth["pubmed"]


def test_table1_counts_agree_with_the_truth(rios, truth):
    table = pd.read_csv(rios / "table1_articles.csv")
    summary = json.loads((rios / "ingest_summary.json").read_text())
    assert table.iloc[-1]["# Articles"] == truth["articles_after_ingest"]
    assert summary["deleted"] == len(truth["deleted_pmids"]) and summary["undated"] == len(truth["undated_pmids"])
    assert summary["book_articles"] == 1 and summary["replaced_versions"] == len(truth["revised_pmids"])
    for row, decade in zip(table.iloc[:-1].itertuples(), truth["decades"]):
        assert row.Year == decade["decade"] and row._2 >= decade["articles"]  # planted + the neutral pool
    assert "undated" in (rios / "table1_articles.md").read_text()


def test_table3_models_track_umnsrs(rios):
    table = pd.read_csv(rios / "table3_embedding_quality.csv")
    assert len(table) == 6 and (table["Sim"] > 0.15).all() and (table["Pair Cnt"] > 100).all()


def test_weat_recovers_the_fading_planted_stereotypes(rios, truth):
    weat = pd.read_csv(rios / "fig1_weat.csv")
    planted = [p["name"] for p in truth["planted_pairs"] if p["name"] in set(weat["test"])]
    assert len(planted) == 5
    strengths = truth["planted_pairs"][0]["strengths"]
    decades = list(dict.fromkeys(weat["decade"]))
    for test in planted:
        part = weat[weat["test"] == test].set_index("decade")
        md = part["mean_difference"]
        for decade, s in zip(decades, strengths):
            if s > 0:  # every planted decade (weakest 0.5): significant, positive, CI above zero, and by the
                # calibrated null on every seed, its interval of the mean difference above 0
                assert part.loc[decade, "p_value"] < 0.01 and part.loc[decade, "ci_low"] > 0, (test, decade)
                assert part.loc[decade, "significant_seeds"] == part.loc[decade, "seeds"] == 3, (test, decade)
                assert part.loc[decade, "md_ci_low"] > 0, (test, decade)
        # the unnormalised association falls with the planted strength, decade by decade
        assert all(md.iloc[i] > md.iloc[i + 1] for i in range(4)), (test, md.tolist())
        assert abs(md.iloc[-1]) < 0.15 * md.iloc[0], (test, md.tolist())  # null decade: near zero


def test_calibrated_null_keeps_controls_clean_where_the_permutation_test_does_not(rios, truth):
    """Controls: the control test in every decade and every planted test in the null decade, on every
    seed (33 decisions). The calibrated p flags none of them here (a 5% test would flag 1.65 on
    average; at most 2 is allowed); the classic permutation p is reported beside it and flags more."""
    seeds = pd.read_csv(rios / "fig1_weat_seeds.csv")
    null_decade = [d for d, s in zip(dict.fromkeys(seeds["decade"]), truth["planted_pairs"][0]["strengths"]) if s == 0]
    controls = seeds[seeds["control"] | seeds["decade"].isin(null_decade)]
    assert len(controls) == 33
    assert (controls["p_calibrated"] < 0.05).sum() <= 2, controls[["decade", "test", "replicate", "p_calibrated"]]
    assert (controls["p_value"] < 0.05).sum() > (
        controls["p_calibrated"] < 0.05
    ).sum()  # measured: 10 of 33 vs 0 (default scale)


def test_trend_over_decades_uses_the_seeds(rios):
    trend = pd.read_csv(rios / "fig1_weat_trend.csv").set_index("test")
    planted, control = trend[~trend["control"]], trend[trend["control"]]
    assert (planted["md_slope"] < 0).all() and (planted["md_trend_p"] < 0.01).all()  # 2/720 is the floor
    assert (control["md_trend_p"] > 0.05).all()
    assert (trend["seeds"] == 3).all() and (trend["md_slope_seed_sd"] > 0).all()


def test_controls_show_no_association(rios):
    weat = pd.read_csv(rios / "fig1_weat.csv")
    strongest = weat[~weat["control"] & weat["decade"].str.startswith("1960")]["mean_difference"].min()
    controls = weat[weat["control"]]
    assert len(controls) == 6
    assert (controls["mean_difference"].abs() < 0.15 * strongest).all(), controls[["decade", "mean_difference"]]


def test_ripa_puts_planted_words_on_their_side(rios, truth):
    top = pd.read_csv(rios / "table4_ripa_top.csv")
    lean = truth["lean_words"]
    for word_set, key in (("occupations", "occupations"), ("mental_health", "mental_health")):
        for decade in top["decade"].unique():
            part = top[(top["decade"] == decade) & (top["word_set"] == word_set)]
            male_top = set(part[part["side"] == "male"]["word"])
            female_top = set(part[part["side"] == "female"]["word"])
            assert len(male_top & set(lean[key]["male"])) >= 6 and not male_top & set(lean[key]["female"])
            assert len(female_top & set(lean[key]["female"])) >= 6 and not female_top & set(lean[key]["male"])
    wide = pd.read_csv(rios / "table4_ripa.csv")
    assert any(c.endswith("1960-1969") for c in wide.columns)  # the appendix's 1960s table


def test_missing_words_are_reported_not_dropped(rios_wiring):
    rios = rios_wiring
    coverage = pd.read_csv(rios / "fig2_ect_coverage.csv", keep_default_na=False)
    mental = coverage[coverage["word_set"] == "mental_health"].iloc[0]
    assert mental["requested"] == mental["found"] + mental["missing_count"]
    assert "obsessive-compulsive" in mental["missing"].split()  # split by the tokenizer, so never a token
    ect = pd.read_csv(rios / "fig2_ect.csv")
    assert ((ect["ect"] > -1) & (ect["ect"] <= 1)).all() and (ect["ci_low"] <= ect["ect"]).all()
    weat_cov = pd.read_csv(rios / "table2_wordset_coverage.csv")
    assert set(weat_cov["word_set"]) >= {"male", "female", "career_family.a", "instruments_weapons.b"}


def test_document_null_draws_are_wired_into_figure_1(rios_wiring):
    """The wiring profile turns the document-level null on (3 draws): every decade has a file of
    draws x tests, each draw swapped about half of the articles, and Figure 1's table carries p_document
    on the (k+1)/(K+1) grid beside the classic and calibrated p (its behaviour: tests/unit/test_document_null.py)."""
    config = wiring_config()["rios"]
    draws = config["document_null_draws"]
    weat = pd.read_csv(rios_wiring / "fig1_weat.csv")
    tests = weat["test"].nunique()
    for decade in weat["decade"].unique():
        null = pd.read_csv(rios_wiring / "document_null" / f"{decade}.csv")
        # the profile's decades exceed document_null_tokens: the draws train on a sample, and draw -1 is
        # the sample's own model, the value Figure 1 compares them with
        assert len(null) == (draws + 1) * tests and sorted(null["draw"].unique()) == list(range(-1, draws))
        assert (null["documents"] < null["decade_documents"]).all()
        swapped = null[null["draw"] >= 0]
        share = swapped["swapped_documents"] / swapped["documents"]
        assert ((share > 0.35) & (share < 0.65)).all(), share.tolist()
        own = null[null["draw"] == -1].set_index("test")["mean_difference"]
        rows = weat[weat["decade"] == decade].set_index("test")
        assert rows["md_document_observed"].to_dict() == pytest.approx(own.to_dict(), nan_ok=True)
    assert set(weat["p_document"].round(6)) <= {round(k / (draws + 1), 6) for k in range(1, draws + 2)}
    assert (weat["document_draws"] + weat["document_draws_unscored"] == draws).all()
    assert "p_document" in (rios_wiring / "fig1_weat.md").read_text()
    assert "draw -1 in the file" in (rios_wiring / "fig1_weat.md").read_text()


def test_the_search_runs_on_a_sample_and_replicates_retrain_its_choice(rios_wiring):
    """The wiring profile caps the search's sample below the decades' size: Table 3 says how many
    tokens the search trained on and rates the model of the whole decade; replicate 1 retrains
    replicate 0's chosen setting (replicates_search: once) under its own seed."""
    cap = wiring_config()["rios"]["word2vec"]["search_tokens"]
    table = pd.read_csv(rios_wiring / "table3_embedding_quality.csv")
    assert (table["searched on (tokens)"] <= cap).all() and (table["decade tokens"] > cap).all()
    for decade in table["Year"]:
        first = json.loads((rios_wiring / "models" / decade / "replicate0.search.json").read_text())
        second = json.loads((rios_wiring / "models" / decade / "replicate1.search.json").read_text())
        chosen = first["candidates"][first["best_candidate"]]
        assert second["setting"] == {key: chosen[key] for key in second["setting"]}
        assert second["seed"] != first["seed"] and first["final"]["vocabulary"] > 0
        assert first["final"]["trained_on"].startswith("the whole decade (the chosen setting")
