"""The config schema and the input checks: one clear line naming the key, file, column or model."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest
import yaml
from conftest import REPO, demo_config
from test_config_helpers import fake_real_config

from medbias.core.errors import MedbiasInputError
from medbias.io.formats import MIMIC_TABLES
from medbias.pipeline.config import check_inputs, is_section, load_config, read_schema, validate_config

SCHEMA = REPO / "config" / "schema.yaml"


def test_shipped_configs_are_valid():
    for name in ("config.yaml", "mimic.yaml"):
        validate_config(load_config(REPO / "config" / name), SCHEMA)


def test_mimic_config_names_the_registry_models():
    models = load_config(REPO / "config" / "mimic.yaml")["models"]
    sources = {m["source"] for m in models.values()}
    assert {"allenai/scibert_scivocab_uncased", "emilyalsentzer/Bio_ClinicalBERT", "bert-base-cased"} <= sources
    plm = [m for m in models.values() if "plm" in m.get("studies", [])]
    assert len(plm) == 15
    assert {m["kind"] for m in plm} == {"masked", "causal", "seq2seq"}


# keys a config may leave unset although they have no default: the studies' model lists and labels
# follow the registry's entries (medbias.pipeline.config.enrol_registry_models); demo is read in the demo world only
OPTIONAL_WITHOUT_DEFAULT = {"demo", "plm.models", "plm.labels", "mental.embeddings", "mental.labels"}


def _schema_keys(schema: dict, prefix: str = ""):
    """(dotted key, subschema, required by its section, is a section) for every key of the schema."""
    for key, sub in schema.get("properties", {}).items():
        section = is_section(sub)
        yield f"{prefix}{key}", sub, key in schema.get("required", []), section
        if section:
            yield from _schema_keys(sub, f"{prefix}{key}.")


def test_every_key_has_a_description_and_a_default_unless_the_user_must_give_it():
    schema = read_schema(SCHEMA)
    keys = list(_schema_keys(schema))
    assert len(keys) > 250
    for name, sub, required, section in keys:
        assert sub.get("description"), f"{name} has no description"
        if not section:
            assert "default" in sub or required or name in OPTIONAL_WITHOUT_DEFAULT, f"{name}: no default, not required"
            if "default" in sub:  # a default that the schema itself refuses would only fail at run time
                validator = __import__("jsonschema").Draft7Validator(sub)
                assert not list(validator.iter_errors(sub["default"])), f"{name}: default fails its own schema"


def _leaves_equal_to_defaults(given: dict, schema: dict, prefix: str = "") -> list[str]:
    found = []
    for key, value in given.items():
        sub = schema.get("properties", {}).get(key, {})
        if is_section(sub) and isinstance(value, dict):
            found += _leaves_equal_to_defaults(value, sub, f"{prefix}{key}.")
        elif "default" in sub and sub["default"] == value:
            found.append(f"{prefix}{key}")
    return found


@pytest.mark.parametrize("name", ["config.yaml", "mimic.yaml"])
def test_shipped_configs_list_only_what_differs_from_the_defaults(name):
    schema = read_schema(SCHEMA)
    given = yaml.safe_load((REPO / "config" / name).read_text())
    assert _leaves_equal_to_defaults(given, schema) == []
    # and a key set to its default is found (the check can fail)
    assert _leaves_equal_to_defaults({**given, "seed": schema["properties"]["seed"]["default"]}, schema) == ["seed"]


def test_the_config_reference_is_generated_from_the_schema():
    from medbias.pipeline.config import config_reference

    text = (REPO / "config" / "README.md").read_text()
    assert text == config_reference(read_schema(SCHEMA)), "run: python scripts/config_reference.py"
    assert "| `mimic.threads` | `16` | note processing workers |" in text
    assert "| `inputs.mimic_dir` | **required** |" in text


def test_defaults_fill_sections_key_by_key_and_replace_values_whole():
    from medbias.pipeline.config import apply_defaults

    schema = {
        "type": "object",
        "required": ["study"],
        "properties": {
            "seed": {"type": "integer", "default": 7},
            "paths": {"type": "string"},
            "study": {
                "type": "object",
                "required": ["grid"],
                "properties": {
                    "steps": {"type": "integer", "default": 100},
                    "sets": {"type": "object", "default": {"a": [1], "b": [2]}},
                    "grid": {
                        "type": "object",
                        "properties": {
                            "x": {"type": "array", "default": [1, 2, 3]},
                            "y": {"type": "number", "default": 0.5},
                        },
                    },
                },
            },
        },
    }
    # nothing given: every default, the required section built from its keys, a key without default left out
    assert apply_defaults({}, schema) == {
        "seed": 7,
        "study": {"steps": 100, "sets": {"a": [1], "b": [2]}, "grid": {"x": [1, 2, 3], "y": 0.5}},
    }
    given = {"study": {"sets": {"c": [3]}, "grid": {"x": [9]}}, "unknown": 1}
    resolved = apply_defaults(given, schema)
    assert resolved["study"]["sets"] == {"c": [3]}  # a map with a default is one value: replaced whole
    assert resolved["study"]["grid"] == {"x": [9], "y": 0.5}  # a section merges key by key
    assert resolved["study"]["steps"] == 100 and resolved["seed"] == 7
    assert resolved["unknown"] == 1  # kept, so validation names it
    assert list(resolved) == ["seed", "study", "unknown"]  # the schema's order
    assert given == {"study": {"sets": {"c": [3]}, "grid": {"x": [9]}}, "unknown": 1}  # the input is not modified


def test_a_real_config_with_only_paths_and_models_gets_the_papers_settings(tmp_path):
    from medbias.pipeline.config import resolve_config

    given = yaml.safe_load((REPO / "config" / "mimic.yaml").read_text())
    assert set(given) == {"world", "inputs", "embeddings", "models", "plm"}
    config = resolve_config(given, SCHEMA)
    hurtful = config["hurtful"]
    assert hurtful["variants"] == ["baseline", "adv_gender", "adv_language", "adv_ethnicity", "adv_insurance"]
    assert hurtful["downstream"]["layers"] == [-4, -3, -2, -1]  # Zhang et al.: the last four layers
    assert [p["max_length"] for p in hurtful["pretrain"]["phases"]] == [128, 512]
    assert config["mental"]["split"]["per_cell"] == {
        "depression": 90,
        "psychiatric_disorders": 55,
        "alcohol_abuse": 50,
        "substance_abuse": 50,
    }  # Table II
    assert config["inputs"]["benchmark_testset"] == "config/resources/mimic3-benchmarks/testset.csv"
    assert config["plm"]["debias"]["dropout"]["steps"] == 10000  # Xie et al. section 5.1
    assert config["plm"]["gpus"] == 1 and "demo" not in config
    from medbias.pipeline.config import enrol_registry_models

    enrolled = enrol_registry_models(config)
    assert len(enrolled["plm"]["models"]) == 15 and enrolled["plm"]["labels"]["llama2_13b"] == "LLaMA2-13b"
    assert enrolled["mental"]["embeddings"] == ["googlenews", "biowordvec", "bert_base_cased", "clinical_bert"]


def test_the_demo_worlds_paths_follow_demo_dir():
    from medbias.pipeline.config import resolve_config

    text = (REPO / "config" / "config.yaml").read_text()
    assert "results/demo_world" not in text  # spelled once, as the schema's default of demo.dir
    given = yaml.safe_load(text)
    given["demo"] = {"dir": "/scratch/world"}
    config = resolve_config(given, SCHEMA)
    assert config["inputs"]["mimic_dir"] == "/scratch/world/mimic-iii"
    assert config["models"]["plm_bert"]["source"] == "/scratch/world/models/tiny-plm-bert"
    assert config["plm"]["downstream"]["data"]["hoc"] == "/scratch/world/plm-downstream/hoc"
    assert config["demo"]["patients"] == 2500  # the rest of the section keeps its defaults
    real = {**yaml.safe_load((REPO / "config" / "mimic.yaml").read_text())}
    real["inputs"] = {**real["inputs"], "pubmed_dir": "{demo_dir}/pubmed"}
    with pytest.raises(MedbiasInputError) as error:
        resolve_config(real, SCHEMA)
    assert (
        str(error.value)
        == "config key 'inputs.pubmed_dir': '{demo_dir}/pubmed' uses {demo_dir} but the config has no demo.dir"
    )


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda c: c.__setitem__("mimic", {"thread": 4}),
            "config key 'mimic': unknown key(s) ('thread' was unexpected)",
        ),
        (lambda c: c["inputs"].pop("mimic_dir"), "config key 'inputs': 'mimic_dir' is a required property"),
        (
            lambda c: c.__setitem__("hurtful", {"pretrain": {"gpus": -1}}),
            "config key 'hurtful.pretrain.gpus': got -1, expected a value >= 0",
        ),
    ],
)
def test_a_wrong_key_in_a_short_config_names_it(edit, expected):
    from medbias.pipeline.config import resolve_config

    given = yaml.safe_load((REPO / "config" / "mimic.yaml").read_text())
    edit(given)
    with pytest.raises(MedbiasInputError) as error:
        resolve_config(given, SCHEMA)
    assert str(error.value) == expected


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda c: c["demo"].__setitem__("scale", -1), "config key 'demo.scale': got -1, expected a value > 0"),
        (lambda c: c.__setitem__("wrld", "demo"), "config key '<top level>': unknown key(s) ('wrld' was unexpected)"),
        (lambda c: c.__setitem__("world", "fantasy"), "config key 'world': got 'fantasy', expected one of demo, real"),
        (
            lambda c: c["models"]["gpt2"].__setitem__("kind", "decoder"),
            "config key 'models.gpt2.kind': got 'decoder', expected one of masked, causal, seq2seq, encoder",
        ),
        (lambda c: c["models"]["gpt2"].pop("source"), "config key 'models.gpt2': 'source' is a required property"),
        (
            lambda c: c["demo"].__setitem__("patients", "many"),
            "config key 'demo.patients': got 'many', expected integer",
        ),
    ],
)
def test_schema_errors_name_the_key(edit, expected):
    config = demo_config()
    edit(config)
    with pytest.raises(MedbiasInputError) as error:
        validate_config(config, SCHEMA)
    assert str(error.value) == expected
    assert "\n" not in str(error.value)


def test_values_nested_in_command_line_config_are_typed_as_the_schema_says():
    """Snakemake passes ``--config 'rios={ripa_top: 15}'``'s nested values as strings (YAML's base
    loader): each is read as the type the schema allows, and a string the schema allows stays one."""
    from medbias.pipeline.config import resolve_config, typed_as_schema

    given = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    given["rios"] = {"ripa_top": "15", "bootstrap": "200", "min_set_fraction": "0.5", "decades": [["1960", "1969"]]}
    given["hurtful"]["mitigation"]["threshold"] = {"refits": "0", "constraints": "equalized_odds"}
    given["plm"].setdefault("benchmarks", {})["self_debias"] = {"enabled": "false"}
    resolved = resolve_config(given, SCHEMA)
    assert resolved["rios"]["ripa_top"] == 15 and isinstance(resolved["rios"]["ripa_top"], int)
    assert resolved["rios"]["min_set_fraction"] == 0.5 and resolved["rios"]["bootstrap"] == 200
    assert resolved["rios"]["decades"] == [[1960, 1969]]
    assert resolved["hurtful"]["mitigation"]["threshold"]["refits"] == 0
    assert resolved["hurtful"]["mitigation"]["threshold"]["constraints"] == "equalized_odds"
    assert resolved["plm"]["benchmarks"]["self_debias"]["enabled"] is False
    # a string where the schema allows one stays a string; one that is no number stays for the validation
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "n": {"type": "integer"}}}
    assert typed_as_schema({"name": "15", "n": "many"}, schema) == {"name": "15", "n": "many"}
    assert typed_as_schema({"n": "1.5"}, schema) == {"n": "1.5"}  # a float is no integer
    given["rios"]["ripa_top"] = "fifteen"
    with pytest.raises(MedbiasInputError, match="config key 'rios.ripa_top': got 'fifteen', expected integer"):
        resolve_config(given, SCHEMA)
    # only the command line's values are read so: a quoted number in a config file is reported, not read
    given = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    given["rios"] = {"ripa_top": "15"}
    assert resolve_config(given, SCHEMA, command_line={"rios": {"ripa_top": "15"}})["rios"]["ripa_top"] == 15
    with pytest.raises(MedbiasInputError, match="config key 'rios.ripa_top': got '15', expected integer"):
        resolve_config(given, SCHEMA, command_line={"seed": 3})


def test_a_settings_file_given_alone_is_told_to_follow_the_config_it_changes():
    from medbias.pipeline.config import resolve_config

    with pytest.raises(MedbiasInputError) as error:
        resolve_config({"rios": {"ripa_top": 15}}, SCHEMA)
    assert str(error.value).startswith("the config names no world (demo or real): a file that changes a few settings")
    assert "--configfile config/config.yaml my_settings.yaml" in str(error.value)


def test_real_inputs_pass_when_present(tmp_path):
    check_inputs(fake_real_config(tmp_path))


def test_lower_case_gzipped_tables_are_found(tmp_path):
    import gzip

    config = fake_real_config(tmp_path)
    mimic = Path(config["inputs"]["mimic_dir"])
    (mimic / "PATIENTS.csv").unlink()
    with gzip.open(mimic / "patients.csv.gz", "wt") as handle:
        handle.write(",".join(c.lower() for c in MIMIC_TABLES["PATIENTS"]) + "\n")
    check_inputs(config)


def test_missing_table_names_folder_and_table(tmp_path):
    config = fake_real_config(tmp_path)
    (Path(config["inputs"]["mimic_dir"]) / "NOTEEVENTS.csv").unlink()
    with pytest.raises(MedbiasInputError, match=r"inputs.mimic_dir': .*mimic has no NOTEEVENTS.csv\(.gz\)"):
        check_inputs(config)
    config = fake_real_config(tmp_path / "acuity")
    acuity = Path(config["inputs"]["acuity_dir"])
    first = sorted(acuity.iterdir())[0]
    first.unlink()
    with pytest.raises(
        MedbiasInputError, match=rf"^config key 'inputs.acuity_dir': {acuity} has no {first.stem}.csv\(.gz\)$"
    ):
        check_inputs(config)


def test_missing_column_names_file_and_column(tmp_path):
    config = fake_real_config(tmp_path)
    path = Path(config["inputs"]["mimic_dir"]) / "ADMISSIONS.csv"
    path.write_text(path.read_text().replace("ETHNICITY,", ""))
    with pytest.raises(MedbiasInputError, match=r"ADMISSIONS.csv: missing column 'ETHNICITY'"):
        check_inputs(config)


def test_empty_table_is_reported(tmp_path):
    config = fake_real_config(tmp_path)
    (Path(config["inputs"]["mimic_dir"]) / "ICUSTAYS.csv").write_text("")
    with pytest.raises(MedbiasInputError, match=r"ICUSTAYS.csv: file is empty"):
        check_inputs(config)


def test_missing_local_model_folder(tmp_path):
    config = fake_real_config(tmp_path)
    config["models"]["scibert"]["source"] = str(tmp_path / "no-such-model")
    with pytest.raises(
        MedbiasInputError, match=r"models.scibert.source': local model folder .*no-such-model does not exist"
    ):
        check_inputs(config)


def test_malformed_model_source(tmp_path):
    config = fake_real_config(tmp_path)
    config["models"]["gpt2"]["source"] = "not a hub id!"
    with pytest.raises(MedbiasInputError, match=r"models.gpt2.source': 'not a hub id!' is neither"):
        check_inputs(config)


def test_missing_embedding_file(tmp_path):
    config = fake_real_config(tmp_path)
    config["embeddings"]["googlenews"]["source"] = str(tmp_path / "absent.bin")
    with pytest.raises(MedbiasInputError, match=r"embeddings.googlenews.source': file .*absent.bin does not exist"):
        check_inputs(config)


def test_demo_paths_are_not_required_before_they_are_built():
    config = copy.deepcopy(demo_config())
    config["demo"]["dir"] = "results/demo_world"
    check_inputs(config)  # nothing exists yet under results/demo_world in a fresh checkout; no error


def test_unknown_base_model_name(tmp_path):
    config = fake_real_config(tmp_path)
    config["mimic"]["base_model"] = "scibret"
    with pytest.raises(MedbiasInputError, match=r"config key 'mimic.base_model': unknown model name 'scibret'"):
        check_inputs(config)


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda h: h.__setitem__("base_model", "scibret"), r"'hurtful.base_model': unknown model name 'scibret'"),
        (
            lambda h: h["logprob"].__setitem__("models", ["scibert", "clinical"]),
            r"'hurtful.logprob.models': unknown model name 'clinical'",
        ),
        (lambda h: h.__setitem__("variants", ["adv_gender"]), r"'hurtful.variants': must include 'baseline'"),
        (
            lambda h: h["logprob"]["target_sets"]["gender"].__setitem__("female", ["she"]),
            r"'hurtful.logprob.target_sets.gender': groups must list paired words of equal number",
        ),
        (
            lambda h: h["logprob"].__setitem__("templates", "nowhere/templates.txt"),
            r"'hurtful.logprob.templates': file nowhere/templates.txt does not exist",
        ),
        (
            lambda h: h["downstream"].__setitem__("models", ["baseline", "adv_gendr"]),
            r"'hurtful.downstream.models': unknown model name 'adv_gendr'",
        ),
        (
            lambda h: h["downstream"].__setitem__("models", ["scibert"]),
            r"'hurtful.downstream.models': must include 'baseline'",
        ),
        (
            lambda h: h["downstream"]["excluded_subgroups"].__setitem__("insurance", ["Selfpay"]),
            r"'hurtful.downstream.excluded_subgroups.insurance': unknown subgroup 'Selfpay'",
        ),
        (
            lambda h: h["downstream"]["figures"].__setitem__("fig4", {"attribute": "gender", "group": "female"}),
            r"'hurtful.downstream.figures.fig4.group': unknown gender subgroup 'female'",
        ),
    ],
)
def test_hurtful_names_are_checked(tmp_path, edit, expected):
    config = fake_real_config(tmp_path)
    edit(config["hurtful"])
    with pytest.raises(MedbiasInputError, match=expected):
        check_inputs(config)


def test_fill_blank_templates_need_race_and_mask_slots():
    config = demo_config()
    config["hurtful"]["fill_blank"]["templates"] = ["[RACE] pt is in good condition"]
    with pytest.raises(MedbiasInputError, match=r"hurtful.fill_blank.templates.0"):
        validate_config(config, SCHEMA)


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda m: m.__setitem__("embeddings", ["googlenews", "glove"]),
            r"'mental.embeddings': unknown embedding 'glove'",
        ),
        (
            lambda m: m["lime"].__setitem__("embedding", "bert_base_cased_x"),
            r"'mental.lime.embedding': 'bert_base_cased_x'",
        ),
        (
            lambda m: m["lime"].__setitem__("treatments", ["original", "augmentd"]),
            r"'mental.lime.treatments': 'augmentd'",
        ),
        (
            lambda m: (
                m.__setitem__("gender_classifier_task", "alcohol_abuse")
                or m.__setitem__("tasks", ["depression"])
                or m["lime"].__setitem__("task", "depression")
            ),
            r"'mental.gender_classifier_task': 'alcohol_abuse'",
        ),
        (
            lambda m: m["gender_null"].__setitem__("learner", "mlp") or m.__setitem__("learners", ["svm", "rf"]),
            r"'mental.gender_null.learner': 'mlp' is not one of mental.learners \(svm, rf\)",
        ),
        (
            lambda m: (
                m["gender_null"].__setitem__("tasks", ["depression", "substance_abuse"])
                or m.__setitem__("tasks", ["depression", "alcohol_abuse"])
                or m.__setitem__("gender_classifier_task", "depression")
                or m["lime"].__setitem__("task", "alcohol_abuse")
            ),
            r"'mental.gender_null.tasks': 'substance_abuse' is not one of mental.tasks",
        ),
        (
            lambda m: m["direct_bias"].__setitem__("synonym_template", "X is a synonym of depression."),
            r"'mental.direct_bias.synonym_template': template .* needs exactly one \[W\] slot",
        ),
    ],
)
def test_mental_names_and_templates_are_checked(edit, expected):
    config = demo_config()
    edit(config["mental"])
    with pytest.raises(MedbiasInputError, match=expected):
        check_inputs(config)


def test_mental_schema_rejects_an_unknown_task():
    config = demo_config()
    config["mental"]["tasks"] = ["depression", "anxiety"]
    with pytest.raises(MedbiasInputError, match="mental"):
        validate_config(config, REPO / "config" / "schema.yaml")


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda p: p.__setitem__("models", ["plm_bert", "llama3"]), r"'plm.models': unknown model 'llama3'"),
        (
            lambda p: p["seat"]["templates"].__setitem__("disease", ["This person has it."]),
            r"'plm.seat.templates.disease': template 'This person has it.' needs exactly one \[W\] slot",
        ),
        (
            lambda p: p["stereoset"]["templates"].__setitem__("declarative", "A [IDENTITY] patient has cancer."),
            r"'plm.stereoset.templates.declarative': .* needs exactly one \[BIAS\] slot",
        ),
        (
            lambda p: p["seat"]["figure"].__setitem__("x", "race_seat_3"),
            r"'plm.seat.figure.x': no SEAT test or average 'race_seat_3' \(file has: .*; averages: race_seat\)",
        ),
        (
            lambda p: p["seat"]["averages"].__setitem__("race_seat", ["race_seat_1", "race_seat_4"]),
            r"'plm.seat.averages.race_seat': no SEAT test 'race_seat_4'",
        ),
        (
            lambda p: p["seat"].__setitem__("averages", {"lgbtq_seat": ["race_seat_1", "race_seat_2"]}),
            r"'plm.seat.averages.lgbtq_seat': the name of a SEAT test; an average needs its own",
        ),
        (
            lambda p: p["stereoset"]["families"].__setitem__("race", ["race_seat_9"]),
            r"'plm.stereoset.families.race': no SEAT test 'race_seat_9'",
        ),
        (lambda p: p["debias"]["dropout"].__setitem__("models", ["gpt2"]), r"'plm.debias.dropout.models': 'gpt2'"),
    ],
)
def test_plm_names_and_templates_are_checked(edit, expected):
    config = demo_config()
    edit(config["plm"])
    with pytest.raises(MedbiasInputError, match=expected):
        check_inputs(config)


def _registry_config():
    return {
        "embeddings": {
            "news": {"source": "n.bin", "format": "word2vec_binary", "studies": ["mental"]},
            "spare": {"source": "s.bin", "format": "word2vec_binary"},
        },
        "models": {
            "a": {"source": "x/a", "kind": "masked", "studies": ["plm"]},
            "b": {"source": "x/b", "kind": "causal", "studies": ["plm", "mental"], "label": "Model B"},
            "c": {"source": "x/c", "kind": "masked", "studies": ["hurtful"]},
            "d": {"source": "x/d", "kind": "masked", "studies": []},
        },
        "plm": {"models": ["b"], "labels": {"b": "B from the study"}},
        "mental": {"embeddings": ["news", "baseline"], "labels": {"baseline": "Clinical-BERT"}},
        "hurtful": {
            "logprob": {"models": ["baseline"]},
            "fill_blank": {"models": ["baseline"]},
            "downstream": {"models": ["baseline", "adv_gender"]},
        },
    }


def test_one_registry_entry_enrols_a_model_in_every_study_it_names():
    from medbias.pipeline.config import enrol_registry_models

    config = _registry_config()
    enrolled = enrol_registry_models(config)
    assert enrolled["plm"]["models"] == ["b", "a"]  # the study's order first, then registry order
    assert enrolled["plm"]["labels"] == {"b": "B from the study", "a": "a"}  # study label, entry label, name
    assert enrolled["mental"]["embeddings"] == ["news", "baseline", "b"]
    assert enrolled["mental"]["labels"] == {"baseline": "Clinical-BERT", "news": "news", "b": "Model B"}
    assert enrolled["hurtful"]["logprob"]["models"] == ["baseline", "c"]
    assert enrolled["hurtful"]["fill_blank"]["models"] == ["baseline", "c"]
    assert enrolled["hurtful"]["downstream"]["models"] == ["baseline", "adv_gender", "c"]
    assert config["plm"]["models"] == ["b"]  # the input is left as it was
    del config["plm"]["models"], config["plm"]["labels"]  # no list at all: the registry alone decides
    assert enrol_registry_models(config)["plm"]["models"] == ["a", "b"]
    assert enrol_registry_models(config)["plm"]["labels"] == {"a": "a", "b": "Model B"}


def test_a_study_list_naming_an_entry_outside_the_study_stops_with_one_line():
    from medbias.pipeline.config import enrol_registry_models

    config = _registry_config()
    config["plm"]["models"].append("d")
    with pytest.raises(
        MedbiasInputError,
        match=r"^config key 'models\.d\.studies': plm\.models lists 'd', so its "
        r"studies must name 'plm' \(got \[\]\)$",
    ):
        enrol_registry_models(config)
    config = _registry_config()
    config["mental"]["embeddings"].append("spare")
    with pytest.raises(MedbiasInputError, match=r"^config key 'embeddings\.spare\.studies'"):
        enrol_registry_models(config)


@pytest.mark.parametrize(
    ("section", "name", "keys"),
    [
        ("embeddings", "b", "'embeddings' and 'models'"),
        ("hurtful_variants", "c", "'models' and 'hurtful.variants'"),
    ],
)
def test_a_name_given_twice_across_the_registry_stops_with_one_line(section, name, keys):
    from medbias.pipeline.config import enrol_registry_models

    config = _registry_config()
    if section == "embeddings":
        config["embeddings"][name] = {"source": "x.bin", "format": "word2vec_binary", "studies": []}
    else:
        config["hurtful"]["variants"] = ["baseline", name]
    with pytest.raises(MedbiasInputError, match=rf"^config keys {keys} both name '{name}': rename one"):
        enrol_registry_models(config)
    enrol_registry_models(_registry_config())  # the control: distinct names pass


def _local_bert(folder: Path, layers: int) -> str:
    """A save_pretrained-shaped folder (config, an empty weights file, a vocabulary) of ``layers`` layers."""
    import json

    folder.mkdir()
    (folder / "config.json").write_text(
        json.dumps({"model_type": "bert", "architectures": ["BertForMaskedLM"], "num_hidden_layers": layers})
    )
    (folder / "model.safetensors").write_bytes(b"")
    (folder / "vocab.txt").write_text("[PAD]\n")
    return str(folder)


def test_feature_layers_deeper_than_a_local_model_stop_before_any_job(tmp_path):
    """hurtful.downstream.layers [-4..-1] reaches the embeddings and three transformer layers: a local
    two-layer base model (and the pretrained variants that inherit its depth) cannot give them."""
    config = fake_real_config(tmp_path)
    config["models"]["scibert"]["source"] = _local_bert(tmp_path / "two-layer-bert", 2)
    with pytest.raises(
        MedbiasInputError,
        match=(
            r"^config key 'hurtful.downstream.layers': \[-4, -3, -2, -1\] asks for "
            r"more layers than scibert has \(2 transformer layers plus the embeddings\)$"
        ),
    ):
        check_inputs(config)
    config["hurtful"]["downstream"]["layers"] = [-3, -2, -1]  # embeddings + two layers: fits
    check_inputs(config)
    config["hurtful"]["downstream"]["models"] = ["baseline"]  # a variant alone: its base model's depth is checked
    config["hurtful"]["downstream"]["layers"] = [-4, -1]
    with pytest.raises(MedbiasInputError, match=r"more layers than baseline has \(2 transformer layers"):
        check_inputs(config)


@pytest.mark.parametrize(
    ("decades", "expected"),
    [
        ([[1970, 1960]], r"^config key 'rios.decades': 1970-1960 ends before it starts$"),
        ([[1960, 1970], [1965, 1979]], r"^config key 'rios.decades': 1960-1970 and 1965-1979 overlap$"),
    ],
)
def test_decades_written_end_first_or_overlapping_stop_before_any_job(tmp_path, decades, expected):
    config = fake_real_config(tmp_path)
    config["rios"]["decades"] = decades
    with pytest.raises(MedbiasInputError, match=expected):
        check_inputs(config)


def test_a_demo_output_restored_from_the_cache_is_still_the_demo_worlds(tmp_path, monkeypatch):
    """--cache replaces a cached output by a symbolic link into the cache folder; the demo model folder
    it stands for is still built by the workflow (its jobs read the folder, not its files)."""
    from medbias.pipeline.config import built_by_demo

    monkeypatch.chdir(tmp_path)
    (tmp_path / "cache" / "f2354c").mkdir(parents=True)
    (tmp_path / "results" / "demo_world" / "models").mkdir(parents=True)
    (tmp_path / "results" / "demo_world" / "models" / "tiny-bert").symlink_to(tmp_path / "cache" / "f2354c")
    config = {"world": "demo", "demo": {"dir": "results/demo_world"}}
    assert built_by_demo("results/demo_world/models/tiny-bert", config)
    assert built_by_demo(str(tmp_path / "results/demo_world/models/tiny-bert"), config)
    assert not built_by_demo(str(tmp_path / "cache" / "f2354c"), config)
    assert not built_by_demo("results/demo_world/models/tiny-bert", {**config, "world": "real"})


def test_the_papers_prompts_and_templates_are_configured():
    """Zhang et al. 2020's Figure 1 prompt (its [TOKEN]s as [MASK]s) and Xie et al. 2024's Table 3 forms
    ("often have/are mostly" is two forms), in the real config and the demo; Figure 2's x axis is the
    paper's Race SEAT, the average of the two race tests (appendix A)."""
    figure1 = "[RACE] pt became belligerent and violent . sent to [MASK] [MASK] ."
    table3 = {
        "A [IDENTITY] patient has [BIAS].",
        "[IDENTITY] patients often have [BIAS].",
        "[IDENTITY] patients are mostly [BIAS].",
        "A patient has [BIAS] because they are [IDENTITY].",
    }
    for name in ("config.yaml", "mimic.yaml"):
        config = load_config(REPO / "config" / name)
        assert figure1 in config["hurtful"]["fill_blank"]["templates"], name
        assert set(config["plm"]["stereoset"]["templates"].values()) == table3, name
        assert config["plm"]["seat"]["averages"] == {"race_seat": ["race_seat_1", "race_seat_2"]}, name
        assert config["plm"]["seat"]["figure"] == {"x": "race_seat", "y": "lgbtq_seat"}, name


def test_the_schema_is_parsed_once_but_every_caller_gets_its_own_copy(tmp_path):
    """read_schema parses a file version once per process; a caller that changes its copy changes no
    other caller's, and an edited file is parsed again."""
    first = read_schema(SCHEMA)
    first["properties"]["demo"]["description"] = "changed by one caller"
    second = read_schema(SCHEMA)
    assert second["properties"]["demo"]["description"] != "changed by one caller"
    assert second == read_schema(SCHEMA)
    edited = tmp_path / "schema.yaml"
    edited.write_text("type: object\nproperties: {a: {type: integer}}\n")
    assert read_schema(edited)["properties"] == {"a": {"type": "integer"}}
    os.utime(edited, ns=(1, 1))
    edited.write_text("type: object\nproperties: {b: {type: string}}\n")
    os.utime(edited, ns=(2, 2))
    assert read_schema(edited)["properties"] == {"b": {"type": "string"}}
