"""The coverage table of the post-processor's intervals (error_rates.md): the simulated stays, the
recall gap by hand, the table's arithmetic and repeatability, and its section on the page."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from medbias.io.tables import page_markdown
from medbias.validation.error_rates import error_rates_page
from medbias.validation.post_processor_coverage import (
    COLUMNS,
    post_processor_coverage,
    recall_gap_of_women,
    simulated_stays,
)

pytestmark = pytest.mark.unit
SETTINGS = {"constraints": "true_positive_rate_parity", "objective": "balanced_accuracy_score", "grid_size": 200}


def test_the_simulated_stays_have_the_planted_recall_gap():
    stays = simulated_stays(4000, 4000, np.random.default_rng(0))
    assert stays["label"].mean() == pytest.approx(0.25, abs=0.02)
    positives = stays[stays["label"] == 1].groupby("gender")["probability"].mean()
    # Beta(2.5, 3) has mean 0.4545 and Beta(4, 2) 0.6667
    assert positives["F"] == pytest.approx(2.5 / 5.5, abs=0.02) and positives["M"] == pytest.approx(4 / 6, abs=0.02)


def test_the_recall_gap_of_women_by_hand():
    stays = pd.DataFrame({"gender": ["F", "F", "F", "M", "M", "M"], "label": [1, 1, 0, 1, 1, 0]})
    # women's positives decided 1 and 0.5 (expected recall 0.75), men's 1 and 1: gap -0.25
    assert recall_gap_of_women(np.array([1, 0.5, 1, 1, 1, 0]), stays) == pytest.approx(-0.25)
    index = np.array([[0, 0, 2, 3, 4, 5]])  # women's first positive twice: recall 1, gap 0
    assert recall_gap_of_women(np.array([1, 0.5, 1, 1, 1, 0]), stays, index)[0] == pytest.approx(0.0)


def test_the_table_counts_covered_tasks_and_repeats_exactly():
    table = post_processor_coverage(4, 40, 5, 3, SETTINGS, seed=1)
    assert list(table.columns) == list(COLUMNS) and len(table) == 3
    assert (table["coverage"] == table["covered"] / 4).all()
    assert np.allclose(table["mc_se"], np.sqrt(table["coverage"] * (1 - table["coverage"]) / 4))
    assert table["refits"].tolist() == [0, 0, 5] and (table["replicates"] == 40).all()
    assert table.equals(post_processor_coverage(4, 40, 5, 3, SETTINGS, seed=1))
    known = post_processor_coverage(4, 40, 0, 3, SETTINGS, seed=1)
    assert known["interval"].tolist() == ["test stays only", "test stays only"]
    with pytest.raises(ValueError, match="at least 1 task"):
        post_processor_coverage(0, 40, 5, 3, SETTINGS, seed=1)


def test_the_page_shows_the_table_with_its_notes():
    rates = pd.DataFrame(
        {
            "test": ["t"],
            "source": ["s"],
            "p_kind": ["k"],
            "truth": ["control"],
            "measures": ["false-positive rate"],
            "flagged": [0],
            "decisions": [10],
            "rate": [0.0],
            "ci_low": [0.0],
            "ci_high": [0.3],
            "level": [0.05],
            "holds_level": [True],
            "rate_over_level": [0.0],
        }
    )
    table = post_processor_coverage(2, 20, 3, 2, SETTINGS, seed=0)
    text = page_markdown(error_rates_page(rates, post_processor=table))
    section = text[text.index("## Coverage of the post-processor's recall-gap intervals") :]
    assert "| two-stage (3 refits) | the procedure's expected gap | 2 |" in section
    assert "hurtful.mitigation.threshold.refits" in section
    assert "## Coverage of the post-processor" not in page_markdown(error_rates_page(rates))
