"""The audit card's pieces: Caliskan's WEATs on constructed vectors (planted and null), the sections'
contents and the card's layout."""

from __future__ import annotations

import numpy as np
import pandas as pd

from medbias.io.tables import page_markdown
from medbias.io.word_vectors import vector_spellings
from medbias.studies.audit.card import (
    CALISKAN_TESTS,
    card_page,
    seat_section,
    stereoset_section,
    weat_rows,
    weat_section,
)


def _planted_vectors(wordsets, strength: float, seed: int = 0):
    """Vectors in which every X word leans towards the A direction and every Y word towards B."""
    rng = np.random.default_rng(seed)
    dim = 20
    a_dir, b_dir = np.eye(dim)[0], np.eye(dim)[1]
    vectors = {}
    for name, (x, y, a, b) in CALISKAN_TESTS.items():
        for word in wordsets[a]:
            vectors[word] = a_dir + 0.3 * rng.normal(size=dim)
        for word in wordsets[b]:
            vectors[word] = b_dir + 0.3 * rng.normal(size=dim)
        for word in wordsets[x]:
            vectors[word.lower()] = strength * a_dir + 0.3 * rng.normal(size=dim)
        for word in wordsets[y]:
            vectors[word.lower()] = strength * b_dir + 0.3 * rng.normal(size=dim)
    return vectors


def _wordsets():
    import json

    from conftest import REPO

    return json.loads((REPO / "config" / "resources" / "weat" / "WEAT.json").read_text())


def test_weat_rows_find_a_planted_association_and_none_where_nothing_is_planted():
    wordsets = _wordsets()
    planted = weat_rows(
        _planted_vectors(wordsets, 1.0), wordsets, seed=1, budget=2000, n_bootstrap=100, min_fraction=0.5
    ).set_index("test")
    assert (planted["status"] == "ok").all()
    assert (planted["effect_size"] > 1.5).all() and (planted["p_value"] < 0.01).all()
    null = weat_rows(
        _planted_vectors(wordsets, 0.0, seed=2), wordsets, seed=1, budget=2000, n_bootstrap=100, min_fraction=0.5
    ).set_index("test")
    assert (null["effect_size"].abs() < 1.0).all()
    # names are capitalised in WEAT.json and looked up lower-cased, as GloVe spells them
    assert planted.at["career_family", "coverage"].startswith("male_names 8/8")


def _with_filler(vectors, n: int = 3000, dim: int = 20, seed: int = 5):
    """``vectors`` followed by ``n`` random words (the vocabulary the calibrated null draws from)."""
    rng = np.random.default_rng(seed)
    return {**vectors, **{f"filler{i}": rng.normal(size=dim) for i in range(n)}}


def _clustered_vectors(wordsets, seed: int = 3):
    """Nothing planted, but the words of each target set share one context: X words are one point
    plus a little noise, Y words another, and every attribute word is random."""
    rng = np.random.default_rng(seed)
    dim = 20
    vectors = {}
    for name, (x, y, a, b) in CALISKAN_TESTS.items():
        centre_x, centre_y = rng.normal(size=dim), rng.normal(size=dim)
        for word in (*wordsets[a], *wordsets[b]):
            vectors.setdefault(word, rng.normal(size=dim))
        for word in wordsets[x]:
            vectors[word.lower()] = centre_x + 0.05 * rng.normal(size=dim)
        for word in wordsets[y]:
            vectors[word.lower()] = centre_y + 0.05 * rng.normal(size=dim)
    return vectors


def test_calibrated_p_finds_the_planted_association_and_not_the_shared_context():
    """Planted vectors: the word-permutation p and the calibrated p (random attribute sets from the
    vocabulary) are both small. Clustered targets with random attributes (nothing planted): the
    permutation p is tiny wherever the two clusters happen to lie on the A side, because it takes
    the words of a cluster for independent evidence; the calibrated p sees one random direction
    among random directions and stays large."""
    wordsets = _wordsets()
    planted = weat_rows(
        _with_filler(_planted_vectors(wordsets, 1.0)),
        wordsets,
        seed=1,
        budget=2000,
        n_bootstrap=0,
        min_fraction=0.5,
        null_draws=2000,
    ).set_index("test")
    assert (planted["p_value"] < 0.01).all() and (planted["p_calibrated"] < 0.01).all(), planted["p_calibrated"]
    assert (planted["null_draws"] == 2000).all()

    clustered = weat_rows(
        _with_filler(_clustered_vectors(wordsets)),
        wordsets,
        seed=1,
        budget=2000,
        n_bootstrap=0,
        min_fraction=0.5,
        null_draws=2000,
    ).set_index("test")
    on_a_side = clustered[clustered["effect_size"] > 0]
    assert len(on_a_side) >= 1 and (on_a_side["p_value"] < 0.001).all(), clustered[["effect_size", "p_value"]]
    assert (clustered["p_calibrated"] > 0.05).all(), clustered["p_calibrated"]
    section = weat_section(clustered.reset_index())
    assert "| calibrated p |" in section and "2,000 random attribute-set pairs" in section


def test_without_null_draws_the_section_has_no_calibrated_column():
    wordsets = _wordsets()
    rows = weat_rows(_planted_vectors(wordsets, 1.0), wordsets, seed=1, budget=500, n_bootstrap=0, min_fraction=0.5)
    assert rows["p_calibrated"].isna().all() and (rows["null_draws"] == 0).all()
    section = weat_section(rows)
    assert "calibrated p" not in section and "target words permuted between X and Y" in section


def test_a_set_mostly_out_of_vocabulary_is_skipped_with_the_reason():
    wordsets = _wordsets()
    vectors = _planted_vectors(wordsets, 1.0)
    for word in wordsets["insects"][3:]:
        vectors.pop(word)
    rows = weat_rows(vectors, wordsets, seed=1, budget=500, n_bootstrap=0, min_fraction=0.5).set_index("test")
    assert rows.at["flowers_insects", "status"].startswith("skipped: word set 'insects': 3 of 25 words have vectors")
    assert rows.at["career_family", "status"] == "ok"
    assert vector_spellings({"rose": 1, "john": 2}, ["rose", "John", "Zed"]) == (["rose", "john"], ["Zed"])


def test_a_card_whose_every_weat_test_is_skipped_lists_the_reasons():
    """Vectors that miss most of Caliskan et al.'s words (a small domain vocabulary) skip every test:
    the rows then carry no result columns, and the section still lists each test with its reason."""
    wordsets = _wordsets()
    vectors = {
        word: vector for word, vector in _planted_vectors(wordsets, 1.0).items() if word in set(wordsets["pleasant_5"])
    }  # no target word of any test has a vector
    rows = weat_rows(vectors, wordsets, seed=1, budget=500, n_bootstrap=0, min_fraction=0.5)
    assert (rows["status"] != "ok").all() and "effect_size" not in rows
    rows = rows.assign(published_d=1.5)  # as audit_weat.py adds it
    section = weat_section(rows)
    assert "| flowers_insects |" in section and "skipped: word set 'flowers': 0 of 25 words have vectors" in section
    assert section.count("skipped: word set") == len(rows)


def test_card_sections_and_layout():
    seat = pd.DataFrame(
        {
            "status": ["ok"],
            "test": ["race_seat_2"],
            "effect_size": [0.5],
            "ci_low": [0.1],
            "ci_high": [0.9],
            "p_value": [0.003],
            "n_X": [4],
            "n_Y": [4],
            "n_A": [6],
            "n_B": [6],
            "out_of_vocabulary": [np.nan],
        }
    )
    assert "| race_seat_2 | +0.500 | [+0.10, +0.90] | 0.003 | 4, 4, 6, 6 |  |" in seat_section(seat)
    calibrated = seat_section(seat.assign(p_calibrated=0.04))
    assert (
        "| calibrated p |" in calibrated
        and "| race_seat_2 | +0.500 | [+0.10, +0.90] | 0.003 | 0.04 | 4, 4, 6, 6 |  |" in calibrated
    )
    marked = pd.DataFrame({"family": ["race"], "status": ["not applicable: no head"]})
    assert stereoset_section(marked) == "Not applicable: no head.\n"
    card = page_markdown(
        card_page(
            "m",
            "My model",
            {"source": "/x", "kind": "masked"},
            [("SEAT", "table\n")],
            [("fill-in-the-blank", "no head")],
            {"entry": {"source": "/x"}},
            "card.png",
        )
    )
    assert card.startswith("# Audit card: My model (`m`)\n\nSource `/x`, kind `masked`.")
    assert "## SEAT\n\ntable\n" in card and "- fill-in-the-blank: no head" in card
    assert "![effect sizes](card.png)" in card and '"source": "/x"' in card
    assert card.endswith("## Inputs (manifest)\n\n```json\n" + '{\n "entry": {\n  "source": "/x"\n }\n}' + "\n```\n")


def test_the_card_lists_the_settings_that_shaped_it_before_its_manifest():
    """The run's settings (the demo's reduced ones among them) as ``settings_notes`` writes them."""
    from medbias.pipeline.config import load_config
    from medbias.pipeline.hyperparameters import load_schema, settings_notes

    root = __import__("pathlib").Path(__file__).resolve().parents[2]
    demo = load_config(root / "config" / "config.yaml", root / "config" / "schema.yaml")
    notes = settings_notes(load_schema(root / "config" / "schema.yaml"), demo, ["plm.seat"])
    card = page_markdown(
        card_page("m", "My model", {"source": "/x"}, [("SEAT", "table\n")], [], {"entry": {}}, "c.png", notes)
    )
    settings = card[card.index("## Settings") : card.index("## Inputs (manifest)")]
    assert settings.startswith("## Settings\n\nSettings that shaped these numbers")
    assert all(line.strip("\n") in settings for line in notes)
    assert "- `plm.seat." in settings and "set in this run's config" in settings  # the demo's own SEAT items


def test_the_benchmark_section_gives_mean_abs_d_its_interval_and_only_the_entrys_own_published_values():
    from medbias.metrics.benchmarks import published_values
    from medbias.metrics.benchmarks.published import published_for_source, published_models
    from medbias.studies.audit.card import benchmark_section

    rows = pd.DataFrame(
        [
            {
                "benchmark": "seat",
                "rule": "may",
                "bias_type": "gender",
                "measure": "mean_abs_d",
                "value": 0.5,
                "ci_low": 0.36,
                "ci_high": 0.64,
                "p_value": np.nan,
                "items": 2,
                "status": "ok",
            },
        ]
    )
    published = published_values(["crows_pairs", "stereoset", "seat_may"])
    assert {v.model for v in published_for_source(published, "/models/hub/GPT2/")} == {"gpt2"}
    assert published_for_source(published, "sentence-transformers/all-MiniLM-L6-v2") == []
    encoder = benchmark_section(rows, {"seat_may": {"summaries": {"gender": []}}}, [], published_models(published))
    assert "| SEAT gender: mean \\|d\\| | may | 0.500 | [0.36, 0.64] |" in encoder
    assert "No published values for this model: the suite's sources publish" in encoder
    assert "57.25" not in encoder  # bert-base-uncased's CrowS-Pairs gender metric is no yardstick here
    own = benchmark_section(
        rows, {"seat_may": {"summaries": {"gender": []}}}, published_for_source(published, "bert-base-uncased")
    )
    assert "57.25" in own and "No published values" not in own and "gpt2" not in own
