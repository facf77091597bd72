"""Every study setting says where its default comes from, and the tables print it."""

from pathlib import Path

import pytest
import yaml

from medbias.io.tables import PaperTable
from medbias.pipeline.config import config_reference, load_config, read_schema
from medbias.pipeline.hyperparameters import (
    leaf_schemas,
    settings_note,
    settings_notes,
    source_kind,
    unsourced_keys,
    with_settings,
)

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = read_schema(ROOT / "config" / "schema.yaml")  # with the plug-ins' own sections
DEMO = load_config(ROOT / "config" / "config.yaml", ROOT / "config" / "schema.yaml")


def test_every_study_key_names_the_source_of_its_default():
    assert len(leaf_schemas(SCHEMA)) > 150
    assert unsourced_keys(SCHEMA) == []


def test_a_key_without_a_known_source_kind_is_reported():
    broken = yaml.safe_load((ROOT / "config" / "schema.yaml").read_text())
    downstream = broken["properties"]["hurtful"]["properties"]["downstream"]["properties"]
    downstream["c_grid"]["x-source"] = "the paper's"  # no kind before a colon
    del downstream["patience"]["x-source"]
    assert unsourced_keys(broken) == ["hurtful.downstream.c_grid", "hurtful.downstream.patience"]


@pytest.mark.parametrize(
    "text, kind",
    [
        ("paper: Zhang et al. 2020 §4", "paper"),
        ("reference code: finetune_on_target.py", "reference code"),
        ("our choice: why", "our choice"),
        ("the paper's", None),
        ("papers: x", None),
    ],
)
def test_source_kind(text, kind):
    assert source_kind(text) == kind


def test_the_settings_the_papers_do_not_state_say_so():
    """The issue's two cases: the MLP grid and the pretraining learning rate are not the paper's."""
    leaves = leaf_schemas(SCHEMA)
    for key in (
        "hurtful.downstream.grid.layers",
        "hurtful.downstream.grid.width_ratio",
        "hurtful.downstream.grid.dropout",
        "hurtful.pretrain.learning_rate",
    ):
        assert source_kind(leaves[key]["x-source"]) == "reference code", key
    assert leaves["hurtful.pretrain.learning_rate"]["default"] == pytest.approx(3e-5)
    assert source_kind(leaves["plm.downstream.settings"]["x-source"]) == "paper"
    assert source_kind(leaves["plm.debias.dropout.learning_rate"]["x-source"]) == "our choice"


def test_settings_notes_give_the_value_used_and_mark_a_changed_default():
    lines = settings_notes(SCHEMA, DEMO, ["hurtful.downstream"])
    assert lines[0].startswith("\nSettings that shaped these numbers")
    by_key = {line.split("`")[1]: line for line in lines[1:]}
    # the demo sets its own grid: the note gives the demo's value and the default with its source
    assert by_key["hurtful.downstream.grid.layers"].startswith(
        "- `hurtful.downstream.grid.layers` = `[1, 2]` (set in this run's config; default `[1, 2, 3, 4]`): "
        "reference code:"
    )
    # the demo keeps the default bootstrap: value and source, no "set in this run's config"
    assert by_key["hurtful.downstream.bootstrap"] == (
        "- `hurtful.downstream.bootstrap` = `1000`: paper: Zhang et al. 2020 §4 (1000 bootstrap samples over the "
        "test set)"
    )
    # run settings (resources) are left out: they do not change the numbers
    assert "hurtful.downstream.feature_gpus" not in by_key and "hurtful.downstream.feature_batch_size" not in by_key
    assert set(by_key) <= {k for k in leaf_schemas(SCHEMA) if k.startswith("hurtful.downstream.")}


def test_a_settings_note_is_tracked_by_one_record_per_key_and_reaches_its_script_as_its_lines():
    """What Snakemake records of a rule's note (its repr) is short and the same for any values; each key
    it lists has its own ``key = value`` record, so a dry run's reason names the changed key only."""
    import copy
    import pickle

    note = settings_note(SCHEMA, DEMO, ["rios.ripa_top", "rios.min_set_fraction"])
    assert list(note) == settings_notes(SCHEMA, DEMO, ["rios.ripa_top", "rios.min_set_fraction"])
    assert note.records == ("rios.min_set_fraction = 0.5", "rios.ripa_top = 10")
    changed = copy.deepcopy(DEMO)
    changed["rios"]["ripa_top"] = 15
    other = settings_note(SCHEMA, changed, ["rios.ripa_top", "rios.min_set_fraction"])
    assert repr(note) == repr(other) == "settings note of 2 keys"
    assert set(other.records) - set(note.records) == {"rios.ripa_top = 15"}
    assert "15" in other[-1] and "set in this run's config" in other[-1]
    unpickled = pickle.loads(pickle.dumps(other))
    assert type(unpickled) is list and unpickled == list(other)
    # run settings have no record, as they have no line
    records = settings_note(SCHEMA, DEMO, ["hurtful"]).records
    assert records and not any(r.startswith("hurtful.downstream.feature_") for r in records)


def test_settings_notes_stop_on_a_prefix_that_names_no_key():
    with pytest.raises(KeyError, match="hurtful.downstrem"):
        settings_notes(SCHEMA, DEMO, ["hurtful.downstrem"])


def test_with_settings_puts_the_lines_after_the_table_notes():
    import pandas as pd

    table = PaperTable(pd.DataFrame({"a": [1]}), "T", notes=("own note",))
    assert with_settings(table, ["\nSettings", "- x"]).notes == ("own note", "\nSettings", "- x")
    assert table.notes == ("own note",)


def test_the_config_reference_prints_each_source():
    text = config_reference(SCHEMA)
    row = next(line for line in text.splitlines() if line.startswith("| `hurtful.downstream.c_grid` |"))
    assert row.rstrip(" |").endswith("the paper tunes c per task without giving values")
