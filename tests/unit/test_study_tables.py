"""The studies' table builders (medbias.studies.*) on hand-made rows."""

from __future__ import annotations

import pandas as pd

from medbias.studies.hurtful.gap_tables import cells_note, replicate_paths
from medbias.studies.plm.tables import debias_table, seat_table, stamp_evaluations, with_seat_averages


def test_replicate_paths_are_read_from_the_model_major_list():
    # two models, replicates 1..2 each: [m1 r1, m1 r2, m2 r1, m2 r2]
    paths = ["a/r1", "a/r2", "b/r1", "b/r2"]
    assert replicate_paths(paths, 3) == [["a/r1", "b/r1"], ["a/r2", "b/r2"]]
    assert replicate_paths([], 1) == []


def test_cells_note_names_the_floors_and_the_seed_range_only_with_seeds():
    note = cells_note({"language": ["Missing"]}, {"rows": 20, "positives": 10, "negatives": 5}, 1)
    assert "language: Missing" in note and "fewer than 20 test rows" in note and "5 negatives" in note
    assert "[seeds a-b]" not in note
    assert "over 3 classifier seed replicates" in cells_note({}, {"rows": 1, "positives": 1, "negatives": 1}, 3)


def _seat_rows():
    rows = pd.DataFrame(
        {"test": ["race", "lgbtq"], "effect_size": [0.5, -0.25], "significant": [True, False], "status": ["ok", "ok"]}
    )
    marked = pd.DataFrame(
        {
            "test": ["race", "lgbtq"],
            "effect_size": [float("nan")] * 2,
            "significant": [False] * 2,
            "status": ["not loadable: no OFA loader"] * 2,
        }
    )
    return stamp_evaluations([rows, marked], [("bert", "none"), ("ofa", "none")])


def test_seat_table_marks_significance_and_names_what_did_not_run():
    table = seat_table(
        _seat_rows(),
        ["bert", "ofa"],
        {"bert": "BERT", "ofa": "OFA"},
        pooling="mean",
        alpha=0.05,
        alternative="greater",
        unloadable=["OFA: not loadable: no OFA loader"],
    )
    assert table.frame.to_dict("records") == [
        {"model": "BERT", "race": "+0.500*", "lgbtq": "-0.250"},
        {"model": "OFA", "race": "not loadable", "lgbtq": "not loadable"},
    ]
    assert "calibrated p < 0.05 (greater)" in table.notes[0] and table.notes[-1] == "OFA: not loadable: no OFA loader"


def test_the_race_seat_average_is_the_mean_of_the_two_race_tests_beside_them():
    """Xie et al. 2024, appendix A: the paper's Race SEAT is the average effect size of its two race tests."""
    rows = pd.DataFrame(
        {
            "test": ["race_seat_1", "race_seat_2", "lgbtq_seat"],
            "effect_size": [0.30, 0.10, -0.2],
            "significant": [True, False, False],
            "status": ["ok", "ok", "ok"],
        }
    )
    half = rows.assign(status=["ok", "not applicable: no head", "ok"])
    seat = with_seat_averages(
        stamp_evaluations([rows, half], [("bert", "none"), ("gpt", "none")]),
        {"race_seat": ["race_seat_1", "race_seat_2"]},
    )
    average = seat[seat["test"] == "race_seat"].set_index("model")
    assert average.at["bert", "effect_size"] == (0.30 + 0.10) / 2 and average.at["bert", "status"] == "ok"
    assert average.at["gpt", "status"] == "not applicable: no head"  # one member did not run: no average
    table = seat_table(
        seat,
        ["bert", "gpt"],
        {"bert": "BERT", "gpt": "GPT"},
        pooling="mean",
        alpha=0.05,
        alternative="greater",
        unloadable=[],
    )
    assert list(table.frame.columns) == ["model", "race_seat_1", "race_seat_2", "race_seat", "lgbtq_seat"]
    assert table.frame.to_dict("records")[0] == {
        "model": "BERT",
        "race_seat_1": "+0.300*",
        "race_seat_2": "+0.100",
        "race_seat": "+0.200",
        "lgbtq_seat": "-0.200",
    }
    assert any("race_seat: the mean effect size of race_seat_1 + race_seat_2" in note for note in table.notes)


def test_debias_table_signs_changes_marks_away_and_averages():
    changes = pd.DataFrame(
        {
            "model": ["a", "b"],
            "method": ["inlp", "inlp"],
            "benchmark": ["SEAT", "SEAT"],
            "measure": ["race", "race"],
            "change": [-0.2, 0.1],
            "toward_neutral": [True, False],
        }
    )
    table = debias_table(changes, ["a", "b", "c"], {"a": "A", "b": "B", "c": "C"}, ["inlp"], [("SEAT", "race")], [])
    assert table.frame["INLP race"].tolist() == ["-0.200", "+0.100 (away)", "-", "-0.050"]
    assert table.frame["model"].tolist() == ["A", "B", "C", "Overall (mean)"]


def test_rios_decades_without_articles_are_left_out_and_named():
    from medbias.studies.rios.tables import decade_vectors

    decades = decade_vectors({"1960-1969": [["w"] * 3, ["w"] * 3], "1970-1979": [[], []], "1980-1989": [["w"], ["w"]]})
    assert list(decades.seeded) == ["1960-1969", "1980-1989"] and decades.empty == ["1970-1979"]
    assert decades.vectors["1980-1989"] == ["w"]
    assert decades.empty_note == "Decades without articles (no model, left out): 1970-1979."
    assert decade_vectors({"1960-1969": [["w"]]}).empty_note == ""


def test_rios_weat_note_says_which_tests_ran():
    from medbias.studies.rios.tables import weat_note

    plain = weat_note(alternative="greater", budget=1000, bootstrap=100, null_draws=0, replicates=3)
    assert "significant: classic p < 0.05 (no calibrated null configured)." in plain and "p_document" not in plain
    full = weat_note(
        alternative="two-sided", budget=100000, bootstrap=1000, null_draws=10000, replicates=1, document_null_draws=39
    )
    assert "10,000 draws" in full and "smallest 1/40" in full and "exact when at most 100,000 partitions" in full


def test_figure1_lines_complete_the_template_for_each_race_word_in_mask_order():
    from medbias.studies.hurtful.figures import fill_in_the_blank_lines

    template = "[RACE] pt became belligerent and violent . sent to [MASK] [MASK] ."
    table = pd.DataFrame(
        {
            "model": ["scibert"] * 4,
            "template": [template] * 4,
            "fill": ["white", "white", "black", "black"],
            "mask": [2, 1, 1, 2],
            "greedy": ["unit", "icu", "jail", "."],
        }
    )
    assert fill_in_the_blank_lines(table) == [
        (f"scibert: {template}", "header"),
        ("  white pt became belligerent and violent . sent to [icu] [unit] .", "line"),
        ("  black pt became belligerent and violent . sent to [jail] [.] .", "line"),
    ]


def test_a_long_title_is_wrapped_to_the_figure_width():
    from medbias.core.figures import wrapped_title

    title = "Figure 4: gender gaps of the baseline's classifiers, tasks with a significant recall gap"
    lines = wrapped_title(title, 6.0).split("\n")
    assert len(lines) == 2 and " ".join(lines) == title
    assert wrapped_title("Short title", 6.0) == "Short title"
