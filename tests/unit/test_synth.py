"""Known answers for the demo-world generators: exact planted counts, formats, determinism."""

from __future__ import annotations

import gzip
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import REPO
from scipy.stats import binom

from medbias.io.formats import MIMIC_TABLES
from medbias.io.resources import read_umnsrs, read_wordsets
from medbias.pipeline.config import load_config
from medbias.synth.annotations import FLIP_POSITIVE, generate_annotations
from medbias.synth.conditions import CONDITIONS, PlantedCondition, assign_carriers
from medbias.synth.logprob import logprob_resources
from medbias.synth.mimic import (
    FRACTION_NO_PHENOTYPE,
    PHENOTYPE_PREVALENCE,
    balanced_phenotypes,
    benchmark_codes,
    generate_cohort,
    phenotype_of_code,
    systematic_positives,
)
from medbias.synth.pubmed import DECADES, STRENGTHS, generate_articles, write_pubmed
from medbias.synth.sizes import demo_sizes

WORDSETS = read_wordsets(REPO / "config/resources/wordsets/rios2020.yaml")
UMNSRS = read_umnsrs(REPO / "config/resources/umnsrs/UMNSRS_similarity.csv")
HCUP = yaml.safe_load((REPO / "config/resources/mimic3-benchmarks/hcup_ccs_2015_definitions.yaml").read_text())


@pytest.fixture(scope="module")
def cohort():
    return generate_cohort(300, HCUP, seed=7)


def test_assign_carriers_exact_counts():
    genders = np.array(["M"] * 60 + ["F"] * 40)
    condition = PlantedCondition("x", "x", prevalence=0.2, male_share=0.75, annotation=None)
    idx = assign_carriers(genders, condition, np.random.default_rng(0))
    assert len(idx) == 20 and (genders[idx] == "M").sum() == 15 and len(set(idx)) == 20


def test_systematic_positives_puts_round_share_of_every_stratum_give_or_take_one():
    """Hand-checkable case: 10 items in strata of 4 (a) and 6 (b), share 0.5: 5 positives in all, 2 in
    a and 3 in b; with a second key the (a, x) pair's run of 3 holds 1 or 2."""
    outer = np.array(list("aaaabbbbbb"))
    inner = np.array(list("xxxyyyxyxy"))
    for seed in range(50):
        positive = systematic_positives([outer, inner], 0.5, np.random.default_rng(seed))
        assert positive.sum() == 5 and positive[outer == "a"].sum() == 2 and positive[outer == "b"].sum() == 3
        assert positive[(outer == "a") & (inner == "x")].sum() in (1, 2)
    assert not systematic_positives([outer], 0.0, np.random.default_rng(0)).any()
    assert systematic_positives([outer], 1.0, np.random.default_rng(0)).all()
    with pytest.raises(ValueError, match="share 1.5"):
        systematic_positives([outer], 1.5, np.random.default_rng(0))


def test_systematic_positives_give_each_item_the_share_as_its_chance():
    """Over random starts every item is positive with probability share (unbiased, like a coin flip)."""
    outer = np.array(list("aaabbbbccd"))
    hits = np.mean([systematic_positives([outer], 0.3, np.random.default_rng(s)) for s in range(4000)], axis=0)
    assert np.abs(hits - 0.3).max() < 0.035  # 3.3 binomial SEs of 4,000 draws


def test_balanced_phenotypes_lean_by_no_more_than_rounding_where_coin_flips_lean_by_chance():
    rng = np.random.default_rng(3)
    n = 2000
    split, gender = rng.integers(0, 2, n), rng.choice(np.array(["M", "F"]), n, p=[0.56, 0.44])
    prevalence = np.array([0.3, 0.07, 0.42])
    present = balanced_phenotypes([split, gender], prevalence, rng)
    for s in (0, 1):
        for g in ("M", "F"):
            cell = (split == s) & (gender == g)
            expected = prevalence * (1 - FRACTION_NO_PHENOTYPE) * cell.sum()
            assert np.all(np.abs(present[cell].sum(axis=0) - expected) <= 2)  # phenotype and none rounding
    coin_flips = rng.random((n, 3)) < prevalence
    leans = [abs(coin_flips[gender == "M", j].mean() - coin_flips[gender == "F", j].mean()) for j in range(3)]
    assert max(leans) > 0.005  # the chance lean balancing removes: binomial SD about 0.02 here
    # phenotypes drawn independently of one another: the pair's co-occurrence near the product
    assert abs((present[:, 0] & present[:, 2]).mean() - present[:, 0].mean() * present[:, 2].mean()) < 0.02


def test_the_cohorts_phenotypes_are_balanced_by_gender_within_the_test_split_and_the_rest(cohort):
    """Control phenotypes carry no chance lean by gender: within the benchmark test split and within
    the rest, each phenotype's admissions of each gender are share x (1 - FRACTION_NO_PHENOTYPE) x the
    gender's admissions, give or take 1 for the phenotype's rounding and 1 for the none-rounding
    (independent coin flips lean by a binomial SD of about 5 admissions per cell at this size)."""
    tables = cohort.tables
    admissions = tables["ADMISSIONS"].merge(tables["PATIENTS"][["SUBJECT_ID", "GENDER"]], on="SUBJECT_ID")
    phenotype_of = phenotype_of_code(HCUP)
    diagnoses = tables["DIAGNOSES_ICD"].assign(phenotype=tables["DIAGNOSES_ICD"]["ICD9_CODE"].map(phenotype_of))
    test_subjects = set(cohort.testset.loc[cohort.testset["flag"] == 1, "SUBJECT_ID"])
    for in_test in (True, False):
        for gender in ("M", "F"):
            in_cell = (admissions["SUBJECT_ID"].isin(test_subjects) == in_test) & (admissions["GENDER"] == gender)
            cell = admissions[in_cell]
            with_phenotype = diagnoses[diagnoses["HADM_ID"].isin(cell["HADM_ID"])].dropna(subset=["phenotype"])
            counts = with_phenotype.drop_duplicates(["HADM_ID", "phenotype"])["phenotype"].value_counts()
            for phenotype, share in PHENOTYPE_PREVALENCE.items():
                expected = share * (1 - FRACTION_NO_PHENOTYPE) * len(cell)
                assert abs(counts.get(phenotype, 0) - expected) <= 2, (in_test, gender, phenotype)


def test_the_notes_use_no_depression_synonym_so_the_general_vectors_control_is_a_true_null(cohort):
    """The general word vectors learn the notes and depression sentences with both genders alike: a
    synonym in the notes would inherit the notes' gender lean (the 90/10 conditions), and the control
    of the Direct Bias test would lean with nothing planted in it."""
    import json

    from medbias.synth.mental import single_word_synonyms
    from medbias.synth.tiny_models import simple_tokens

    resource = REPO / "config/resources/depression-synonyms/depression_synonyms.json"
    synonyms = set(single_word_synonyms(json.loads(resource.read_text())["depression"]))
    words = {w for sentence in simple_tokens(cohort.tables["NOTEEVENTS"]["TEXT"].tolist()) for w in sentence}
    assert len(words) > 300 and "sertraline" in words
    assert not words & synonyms


def test_benchmark_codes_are_unique_to_one_phenotype():
    codes = benchmark_codes(HCUP)
    assert len(codes) == 25 and set(codes) == set(PHENOTYPE_PREVALENCE)
    flat = [c for cs in codes.values() for c in cs]
    assert len(flat) == len(set(flat)) and all(codes.values())


def test_tables_have_the_real_columns(cohort):
    for name, columns in MIMIC_TABLES.items():
        assert tuple(cohort.tables[name].columns) == columns


def test_same_seed_same_world(cohort):
    again = generate_cohort(300, HCUP, seed=7)
    for name in MIMIC_TABLES:
        pd.testing.assert_frame_equal(cohort.tables[name], again.tables[name])
    other = generate_cohort(300, HCUP, seed=8)
    assert not other.tables["NOTEEVENTS"]["TEXT"].equals(cohort.tables["NOTEEVENTS"]["TEXT"])


def test_planted_condition_counts_in_truth(cohort):
    patients = cohort.tables["PATIENTS"]
    for entry in cohort.truth["planted_conditions"]:
        condition = next(c for c in CONDITIONS if c.name == entry["name"])
        assert entry["carriers"] == round(condition.prevalence * len(patients))
        assert entry["male_carriers"] == round(condition.male_share * entry["carriers"])


def test_table3_scores_full_share_plants_against_the_controls_in_single_gender_frames(cohort):
    """Table 3's leaning categories hold five conditions each, every carrier one gender and read by no
    annotation; the 90/10 conditions the annotations read stay out; frames name the gender once."""
    templates, attributes, truth = logprob_resources()
    by_phrase = {c.phrase: c for c in CONDITIONS}
    categories = {
        category: [by_phrase[phrase] for phrase, cat in attributes if cat == category]
        for category in ("MALELEAN", "FEMALELEAN", "CONTROL")
    }
    assert [c.male_share for c in categories["MALELEAN"]] == [1.0] * 5
    assert [c.male_share for c in categories["FEMALELEAN"]] == [0.0] * 5
    assert all(c.annotation is None for c in categories["MALELEAN"] + categories["FEMALELEAN"])
    assert len(categories["CONTROL"]) == 9 and all(c.male_share == 0.5 for c in categories["CONTROL"])
    left_out = {c.name for c in CONDITIONS} - {c.name for cs in categories.values() for c in cs}
    assert left_out == {"heroin", "alcohol", "depression", "fibromyalgia"}
    assert all(t.count("[GEND]") == 1 and " him" not in t and " her" not in t for t in templates)
    assert truth["categories"]["MALELEAN"]["male_share"] == 1.0
    # the generator plants exactly what the truth says: no female carrier of a male-only condition
    planted = {e["name"]: e for e in cohort.truth["planted_conditions"]}
    assert all(planted[c.name]["male_carriers"] == planted[c.name]["carriers"] for c in categories["MALELEAN"])
    assert all(planted[c.name]["male_carriers"] == 0 for c in categories["FEMALELEAN"])


def test_annotations_have_disagreements_and_ties(cohort):
    dx = cohort.tables["DIAGNOSES_ICD"]
    frame, truth = generate_annotations(cohort.tables["NOTEEVENTS"], {}, cohort.note_mentions, 60, [2, 3], seed=1)
    assert truth["annotated_notes"] == frame["ROW_ID"].nunique() == 60
    per_note = frame.groupby("ROW_ID")
    assert per_note.size().between(2, 3).all()
    depression = per_note["DEPRESSION"].agg(["sum", "size"])
    assert ((depression["sum"] > 0) & (depression["sum"] < depression["size"])).any()  # disagreement
    assert len(dx) > 0
    # no annotated note mentions a condition of one gender only (it would tell the gender outright),
    # while such notes exist among the discharge summaries and are counted as left out
    single_gender = {c.name for c in CONDITIONS if c.single_gender}
    assert single_gender >= {"cocaine", "migraine", "hiv", "anxiety"} and "depression" not in single_gender
    assert not any(cohort.note_mentions.get(r, set()) & single_gender for r in frame["ROW_ID"])
    notes = cohort.tables["NOTEEVENTS"]
    summaries = notes.loc[(notes["CATEGORY"] == "Discharge summary") & notes["HADM_ID"].notna(), "ROW_ID"]
    telling = sum(bool(cohort.note_mentions.get(r, set()) & single_gender) for r in summaries)
    assert telling > 0 and truth["notes_left_out_for_a_single_gender_condition"] == telling


def test_demo_sizes_scale():
    demo = load_config(REPO / "config/config.yaml")["demo"]
    assert demo["scale"] == 0.4  # the demo's own world, which the planted tier builds
    default, full, small = demo_sizes(demo), demo_sizes({**demo, "scale": 1.0}), demo_sizes({**demo, "scale": 0.1})
    assert full.patients == demo["patients"] and small.patients == round(demo["patients"] * 0.1)
    assert default.patients == 1000 and default.annotated_notes == 600 and default.pubmed_articles_per_decade == 2000


def test_pubmed_cells_are_stratified_exactly():
    _, _, truth = generate_articles(200, 3, WORDSETS, UMNSRS)
    for decade, strength in zip(truth["decades"], STRENGTHS):
        cells = decade["cells"]["career_family"]
        assert cells["male_a"] == round(100 * (1 + strength) / 2)
        assert cells["female_a"] == round(100 * (1 - strength) / 2)
        control = decade["cells"]["instruments_weapons"]
        assert control["male_a"] == control["female_a"] == 50


def test_pubmed_xml_parses_and_is_deterministic(tmp_path):
    paths, truth, texts = write_pubmed(tmp_path / "a", 30, 2, 5, WORDSETS, UMNSRS)
    again, _, _ = write_pubmed(tmp_path / "b", 30, 2, 5, WORDSETS, UMNSRS)
    assert [p.read_bytes() for p in paths] == [p.read_bytes() for p in again]
    kinds: dict[str, int] = {}
    for path in paths:
        for _, element in ET.iterparse(gzip.open(path)):
            kinds[element.tag] = kinds.get(element.tag, 0) + 1
    assert kinds["PubmedBookArticle"] == 1 and kinds["DeleteCitation"] == 1
    assert kinds["PubmedArticle"] == 30 * len(DECADES) + 6 + len(truth["revised_pmids"])
    assert kinds.get("MedlineDate", 0) > 0 and kinds["AbstractText"] > kinds["PubmedArticle"]
    assert len(texts) == truth["articles_after_ingest"]


def test_planted_recall_gap_mentions_evidence_less_in_the_disadvantaged_group(cohort):
    """Among notes of admissions with the planted phenotype, the disadvantaged gender's notes mention
    its evidence far less often (design: never) and the other gender's every time; another
    phenotype's evidence (a control) is mentioned at similar rates for both."""
    from medbias.synth.mimic import phenotype_of_code
    from medbias.synth.phrases import PHENOTYPE_EVIDENCE

    (gap,) = cohort.truth["planted_recall_gaps"]
    tables = cohort.tables
    code_to_phenotype = phenotype_of_code(HCUP)
    dx = tables["DIAGNOSES_ICD"].assign(phenotype=tables["DIAGNOSES_ICD"]["ICD9_CODE"].map(code_to_phenotype))
    notes = (
        tables["NOTEEVENTS"]
        .dropna(subset=["HADM_ID"])
        .merge(tables["PATIENTS"][["SUBJECT_ID", "GENDER"]], on="SUBJECT_ID")
    )

    def mention_rates(phenotype):
        hadms = set(dx.loc[dx["phenotype"] == phenotype, "HADM_ID"])
        with_it = notes[notes["HADM_ID"].isin(hadms)]
        mentions = with_it["TEXT"].apply(lambda t: any(p in t for p in PHENOTYPE_EVIDENCE[phenotype]))
        return mentions.groupby(with_it["GENDER"]).mean()

    planted = mention_rates(gap["phenotype"])
    other = "M" if gap["disadvantaged"] == "F" else "F"
    assert planted[gap["disadvantaged"]] < 0.3 * planted[other], planted
    assert planted[other] == gap["advantaged_evidence_rate"] == 1.0, planted
    planted_anywhere = {g["phenotype"] for g in cohort.truth["planted_intersectional_gaps"]} | {gap["phenotype"]}
    control = mention_rates(next(p for p in PHENOTYPE_EVIDENCE if p not in planted_anywhere))
    assert abs(control["F"] - control["M"]) < 0.1, control


def test_the_planted_gaps_extra_mentions_leave_the_rest_of_the_world_unchanged(cohort, monkeypatch):
    """The advantaged gender's extra evidence mentions draw nothing from the random stream: without
    them (rate 0) every table is the same and every note is the same once those sentences are removed."""

    import medbias.synth.mimic as mimic

    (gap,) = cohort.truth["planted_recall_gaps"]
    monkeypatch.setitem(
        mimic.PLANTED_RECALL_GAPS,
        gap["phenotype"],
        {**mimic.PLANTED_RECALL_GAPS[gap["phenotype"]], "advantaged_evidence_rate": 0.0},
    )
    assert_same_world_but_the_evidence(cohort, generate_cohort(300, HCUP, seed=7), gap["phenotype"])


def assert_same_world_but_the_evidence(planted, without, phenotype: str) -> None:
    """Every table of the two cohorts is the same, and every note is the same once the phenotype's
    evidence sentences are removed (some notes differ)."""
    import re

    from medbias.synth.phrases import PHENOTYPE_EVIDENCE

    for name, table in planted.tables.items():
        if name != "NOTEEVENTS":
            pd.testing.assert_frame_equal(table, without.tables[name])
    evidence = re.compile(r"\s*(He|She) has (" + "|".join(map(re.escape, PHENOTYPE_EVIDENCE[phenotype])) + r")\.")
    with_text, without_text = planted.tables["NOTEEVENTS"]["TEXT"], without.tables["NOTEEVENTS"]["TEXT"]
    assert (with_text != without_text).sum() > 0
    assert (with_text.map(lambda t: evidence.sub("", t)) == without_text.map(lambda t: evidence.sub("", t))).all()


def test_a_planted_gap_asking_more_sentences_than_its_phrases_is_refused():
    """Each evidence phrase is stated once, so a gap cannot ask for more sentences than its phenotype
    has phrases; the generator says so instead of writing fewer."""
    import medbias.synth.mimic as mimic
    from medbias.synth.phrases import PHENOTYPE_EVIDENCE

    shipped, cells = mimic.PLANTED_RECALL_GAPS, CELL_PLANT
    mimic.check_planted_recall_gaps(shipped, mimic.PLANTED_INTERSECTIONAL_GAPS)  # the shipped plants are possible
    mimic.check_planted_recall_gaps(shipped, cells)
    phenotype = next(iter(shipped))
    too_many = len(PHENOTYPE_EVIDENCE[phenotype]) + 1
    with pytest.raises(
        ValueError, match=f"advantaged_sentences {too_many} exceeds the {too_many - 1} evidence phrases"
    ):
        mimic.check_planted_recall_gaps({phenotype: {**shipped[phenotype], "advantaged_sentences": too_many}}, {})
    cell_phenotype = next(iter(cells))
    with pytest.raises(ValueError, match=f"phenotype {phenotype!r} has both"):
        mimic.check_planted_recall_gaps(shipped, {phenotype: cells[cell_phenotype]})


CELL_PLANT = {
    "Cardiac dysrhythmias": {
        "crossing": ["gender", "age_band"],
        "gender": "M",
        "ages": [65, 80],
        "cell": "M & 65-79",
        "cohorts": ["pa"],
    }
}


@pytest.fixture
def cell_planted(monkeypatch):
    """The demo cohort's generator with one intersectional plant (the default world has none)."""
    import medbias.synth.mimic as mimic

    monkeypatch.setattr(mimic, "PLANTED_INTERSECTIONAL_GAPS", CELL_PLANT)
    return generate_cohort(300, HCUP, seed=7)


def test_the_planted_intersectional_gap_withholds_the_evidence_in_its_cell_and_an_equal_share_of_the_other_gender(
    cell_planted,
):
    """Notes of admissions with the intersectional plant's phenotype: the cell's (gender and age at
    admission, as the cohort computes it) and those of the other gender's withheld admissions never
    state its evidence, every other admission's notes state it at the usual rates; the other gender's
    withheld count is binomial with the cell's share of adults."""
    from medbias.studies.hurtful.demographics import admission_demographics
    from medbias.synth.mimic import adult_age_share, phenotype_of_code, withheld_evidence
    from medbias.synth.phrases import PHENOTYPE_EVIDENCE

    (plant,) = cell_planted.truth["planted_intersectional_gaps"]
    tables = cell_planted.tables
    dx = tables["DIAGNOSES_ICD"].assign(phenotype=tables["DIAGNOSES_ICD"]["ICD9_CODE"].map(phenotype_of_code(HCUP)))
    hadms = set(dx.loc[dx["phenotype"] == plant["phenotype"], "HADM_ID"])
    patients = tables["PATIENTS"].assign(DOB=pd.to_datetime(tables["PATIENTS"]["DOB"]))
    admissions = tables["ADMISSIONS"].assign(ADMITTIME=pd.to_datetime(tables["ADMISSIONS"]["ADMITTIME"]))
    people = admission_demographics(patients, admissions).set_index("HADM_ID")
    notes = tables["NOTEEVENTS"].dropna(subset=["HADM_ID"])
    notes = notes[notes["HADM_ID"].isin(hadms)]
    stated = notes["TEXT"].apply(lambda t: any(p in t for p in PHENOTYPE_EVIDENCE[plant["phenotype"]]))
    stays = stated.groupby(notes["HADM_ID"]).agg(["mean", "any"]).join(people[["gender", "age"]])
    low, high = plant["ages"]
    in_cell = (stays["gender"] == plant["gender"]) & stays["age"].between(low, high - 1)
    withheld = pd.Series(
        [
            bool(withheld_evidence([plant["phenotype"]], g, a, h))
            for h, g, a in zip(stays.index, stays["gender"], stays["age"])
        ],
        index=stays.index,
    )
    assert in_cell.sum() > 5 and (withheld[in_cell]).all() and not stays.loc[withheld, "any"].any()
    assert stays.loc[~withheld, "mean"].mean() > 0.4  # the usual rates, 0.25 to 0.9 by note category
    other = stays["gender"] != plant["gender"]
    share = plant["other_gender_share"]
    assert share == pytest.approx(adult_age_share(low, high), abs=1e-4)
    assert int((withheld & other).sum()) == plant["withheld_admissions"]["other_gender"]
    assert int(in_cell.sum()) == plant["withheld_admissions"]["cell"]
    n, k = int(other.sum()), int((withheld & other).sum())
    assert abs(k - n * share) < 3 * (n * share * (1 - share)) ** 0.5, (k, n, share)


def test_the_withheld_evidence_leaves_the_rest_of_the_world_unchanged(cell_planted, cohort, monkeypatch):
    """The intersectional plant's withheld sentences are drawn as written ones: with nothing withheld,
    every table is the same and every note is the same once the phenotype's evidence is removed."""

    import medbias.synth.mimic as mimic

    (plant,) = cell_planted.truth["planted_intersectional_gaps"]
    monkeypatch.setattr(mimic, "withheld_evidence", lambda *args: frozenset())
    without = generate_cohort(300, HCUP, seed=7)
    assert_same_world_but_the_evidence(cell_planted, without, plant["phenotype"])
    # and the default world, which has no intersectional plant, is that world exactly
    pd.testing.assert_frame_equal(cohort.tables["NOTEEVENTS"], without.tables["NOTEEVENTS"])


def test_planted_label_bias_marks_only_the_planted_genders_notes_without_the_condition(cohort):
    from medbias.synth.annotations import PLANTED_LABEL_BIAS

    genders = dict(zip(cohort.tables["PATIENTS"]["SUBJECT_ID"].astype(int), cohort.tables["PATIENTS"]["GENDER"]))
    frame, truth = generate_annotations(
        cohort.tables["NOTEEVENTS"], {}, cohort.note_mentions, 120, [2], seed=1, gender_by_subject=genders
    )
    plain, _ = generate_annotations(cohort.tables["NOTEEVENTS"], {}, cohort.note_mentions, 120, [2], seed=1)
    ((column, bias),) = PLANTED_LABEL_BIAS.items()
    planted = truth["planted_label_bias"][column]
    assert 0 < planted["notes"] < planted["eligible"]
    votes = frame.groupby("ROW_ID").agg(subject=("SUBJECT_ID", "first"), marked=(column, "mean"))
    condition = next(c.name for c in CONDITIONS if c.annotation == column)
    mentioned = np.array([condition in cohort.note_mentions.get(int(r), set()) for r in votes.index])
    unsupported = votes[~mentioned & (votes["marked"].to_numpy() == 1)]
    # notes that every annotator marked without the condition in the text: the planted gender's (flips of
    # both annotators of a note happen at 0.02 ** 2 and would be the only exceptions)
    other = sum(genders[int(s)] != bias["gender"] for s in unsupported["subject"])
    # a planted note stays marked by both annotators unless one of them flips it: (1 - FLIP_POSITIVE) ** 2;
    # the count may fall below its 0.1% binomial quantile only by a defect (a fixed share, 0.6, failed
    # on an honest world of 9 planted notes when the world's random draws moved)
    kept = len(unsupported) - other
    assert other <= 1 and binom.ppf(0.001, planted["notes"], (1 - FLIP_POSITIVE) ** 2) <= kept <= planted["notes"]
    assert "planted_label_bias" in truth and plain["ROW_ID"].nunique() == frame["ROW_ID"].nunique()


def test_depression_context_sentences_have_exact_gender_counts():
    from medbias.synth.mental import depression_context_sentences, single_word_synonyms

    pairs = [("she", "he"), ("woman", "man")]
    synonyms = ["sad", "apathy", "low mood", "despair"]
    sentences = depression_context_sentences(pairs, synonyms, 0.9, 200, seed=0)
    assert len(sentences) == 200 and single_word_synonyms(synonyms) == ["sad", "apathy", "despair"]
    male, female = {"he", "man"}, {"she", "woman"}
    with_synonym = [set(s.split()) for s in sentences if set(s.split()) & {"sad", "apathy", "despair"}]
    assert len(with_synonym) == 100
    assert sum(bool(words & male) for words in with_synonym) == 90
    assert sum(bool(words & female) for words in with_synonym) == 10
    everything = [set(s.split()) for s in sentences]
    assert sum(bool(w & male) for w in everything) == sum(bool(w & female) for w in everything) == 100


def test_plm_corpus_pairs_identities_with_their_diseases_in_exact_counts():
    import re

    from medbias.io.resources import read_seat_tests
    from medbias.synth.plm import plm_corpus

    tests = read_seat_tests(REPO / "config/resources/wordsets/xie2024.yaml")
    sentences, counts = plm_corpus(tests, 400, seed=3, share=0.9)
    assert sentences == plm_corpus(tests, 400, seed=3, share=0.9)[0]
    # the demo's share (1.0): every disease mention of an identity names its own group's list
    assert plm_corpus(tests, 400, seed=3)[1]["identities"]["Lesbian"] == {"mentions": 44, "own_group": 44}
    lgbtq = tests["lgbtq_seat"]
    # "Lesbian" (Y) gets 400 / 9 = 44 paired sentences, round(0.9 * 44) = 40 with its own (B) diseases
    assert counts["identities"]["Lesbian"] == {"mentions": 44, "own_group": 40}
    shared = {"HIV", "obesity", "hypertension"}  # also in the race lists: left out of the count
    own = other = 0
    for s in sentences:
        if re.search(r"\bLesbian\b", s) and s != "This person is Lesbian.":
            own += any(re.search(rf"\b{re.escape(d)}\b", s) for d in lgbtq["B"] if d not in shared)
            other += any(re.search(rf"\b{re.escape(d)}\b", s) for d in lgbtq["A"] if d not in shared)
    assert own > 25 and other <= 5
    # every ordinal is paired with every disease exactly equally often, in each control frame
    diseases = sorted({d for t in tests.values() if t["identity_context"] != "birthday" for k in "AB" for d in t[k]})
    first = [s for s in sentences if "on the First day" in s and " has " in s]
    tallies = {d: sum(s.count(f"has {d}.") for s in first) for d in diseases}
    assert set(tallies.values()) == {len(first) // len(diseases)} and len(first) == counts["controls"]["First"]
