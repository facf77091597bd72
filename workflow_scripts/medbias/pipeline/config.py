"""Configuration validation: the schema, then the inputs it names, before any job starts.

Every failure is a MedbiasInputError whose message is one line naming the key, file, column or
model that is wrong and what was expected.
"""

from __future__ import annotations

import copy
import functools
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from medbias.core.errors import MedbiasInputError, reading
from medbias.core.models import check_feature_layers, resolve_model_source, transformer_depth
from medbias.io.formats import ACUITY_EXPORTS, MIMIC_TABLES, check_columns, find_table
from medbias.io.mimic import read_annotations, read_benchmark_split
from medbias.io.word_vectors import check_word_vector_file
from medbias.io.yamlfile import load_yaml


def _key_path(error: jsonschema.ValidationError) -> str:
    return ".".join(str(p) for p in error.absolute_path) or "<top level>"


def _describe(error: jsonschema.ValidationError) -> str:
    """A short statement of what the schema expected at the failing key."""
    validator, expected = error.validator, error.validator_value
    if validator == "additionalProperties":
        return error.message.replace("Additional properties are not allowed", "unknown key(s)")
    if validator == "required":
        return error.message
    if validator == "enum":
        return f"got {error.instance!r}, expected one of {', '.join(map(str, expected))}"
    if validator == "type":
        return f"got {error.instance!r}, expected {expected}"
    if validator in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        words = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}
        return f"got {error.instance!r}, expected a value {words[validator]} {expected}"
    if validator == "pattern":
        import re

        slot = re.fullmatch(r"\\\[([A-Z_]+)\\\]", str(expected))
        if slot:
            return f"got {error.instance!r}, which lacks the slot [{slot.group(1)}]"
        if expected == "^[A-Za-z0-9_]+$":
            return f"got {error.instance!r}, expected a name of letters, digits and underscores"
        return f"got {error.instance!r}, expected text matching {expected}"
    if validator == "propertyNames":
        return f"got {error.instance!r}, expected a name of letters, digits and underscores"
    return error.message


DEMO_DIR_TOKEN = "{demo_dir}"


def is_section(subschema: dict[str, Any]) -> bool:
    """A section is an object of named keys that the loader fills key by key; an object with a
    ``default`` of its own (a free-form map such as ``plm.seat.templates``) is one value, replaced whole."""
    return subschema.get("type") == "object" and "properties" in subschema and "default" not in subschema


def apply_defaults(given: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """``given`` laid over the schema's defaults: a copy in which every missing key of a section takes its
    ``default``, and every missing section listed in ``required`` is filled the same way.

    Sections merge key by key; values (scalars, lists, and objects that carry a default) replace the
    default whole, so a free-form map never mixes the default's entries with the user's. Keys come out in
    the schema's order, then any key the schema does not name (validation reports those)."""
    import copy

    properties, required = schema.get("properties", {}), set(schema.get("required", []))
    resolved: dict[str, Any] = {}
    for key, subschema in properties.items():
        if key in given:
            value = given[key]
            resolved[key] = (
                apply_defaults(value, subschema)
                if is_section(subschema) and isinstance(value, dict)
                else copy.deepcopy(value)
            )
        elif "default" in subschema:
            resolved[key] = copy.deepcopy(subschema["default"])
        elif is_section(subschema) and key in required:
            resolved[key] = apply_defaults({}, subschema)
    resolved.update({key: copy.deepcopy(value) for key, value in given.items() if key not in properties})
    return resolved


SCALAR_TYPES = {"integer": int, "number": (int, float), "boolean": bool, "null": type(None)}


ANYWHERE = object()  # typed_as_schema's ``where`` for "every value"


def typed_as_schema(value: Any, schema: dict[str, Any], where: Any = ANYWHERE) -> Any:
    """``value`` with every string that stands where the schema allows no string, only integers,
    numbers, booleans or null, read as YAML's plain scalar of that type: Snakemake passes the values
    nested in ``--config 'rios={ripa_top: 15}'`` as strings. A string that reads as none of the allowed
    types stays as it is, for the validation to report. ``where``: the command line's ``--config``
    values (the same nesting); only the values it also holds are read, so a quoted ``"15"`` in a config
    file stays a string and the validation reports it."""
    if where is None:
        return value
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        return {
            k: typed_as_schema(v, properties.get(k, extra if isinstance(extra, dict) else {}), _inside(where, k))
            for k, v in value.items()
        }
    if isinstance(value, list):
        items = schema.get("items")
        return [typed_as_schema(v, items, where) for v in value] if isinstance(items, dict) else value
    allowed = schema.get("type")
    allowed = [allowed] if isinstance(allowed, str) else list(allowed or [])
    if not isinstance(value, str) or not allowed or "string" in allowed:
        return value
    try:
        read = yaml.safe_load(value)
    except yaml.YAMLError:
        return value
    if isinstance(read, bool) and "boolean" not in allowed:
        return value
    matches = any(isinstance(read, SCALAR_TYPES[t]) for t in allowed if t in SCALAR_TYPES)
    return read if matches else value


def _inside(where: Any, key: str) -> Any:
    """The part of ``where`` under ``key`` (None: nothing of the command line's there)."""
    if where is ANYWHERE:
        return ANYWHERE
    return where.get(key) if isinstance(where, dict) else (ANYWHERE if where is not None else None)


def expand_demo_dir(config: Any, demo_dir: str | None, key: str = "") -> Any:
    """``config`` with ``{demo_dir}`` in every string replaced by ``demo.dir``, so the demo world's paths
    are spelled once. A ``{demo_dir}`` in a config without ``demo.dir`` stops with the key that holds it."""
    if isinstance(config, dict):
        return {k: expand_demo_dir(v, demo_dir, f"{key}.{k}" if key else str(k)) for k, v in config.items()}
    if isinstance(config, list):
        return [expand_demo_dir(v, demo_dir, f"{key}.{i}") for i, v in enumerate(config)]
    if isinstance(config, str) and DEMO_DIR_TOKEN in config:
        if demo_dir is None:
            raise MedbiasInputError(
                f"config key '{key}': {config!r} uses {DEMO_DIR_TOKEN} but the config has no demo.dir"
            )
        return config.replace(DEMO_DIR_TOKEN, demo_dir)
    return config


# keys that moved into a plug-in's own section: a config that still sets one is told where it went
MOVED_KEYS = {
    "plm.benchmarks.crows_rules": "plm.benchmarks.crows_pairs.rules",
    "plm.benchmarks.causal_score": "plm.benchmarks.stereoset.causal_score",
    "plm.benchmarks.seat_tests": "plm.benchmarks.seat_may.tests",
    "plm.benchmarks.seat_summaries": "plm.benchmarks.seat_may.summaries",
    "plm.benchmarks.seat_null_draws": "plm.benchmarks.seat_may.null_draws",
    "plm.benchmarks.seat_null_words": "plm.benchmarks.seat_may.null_words",
    "plm.benchmarks.seat_null_templates": "plm.benchmarks.seat_may.null_templates",
    "plm.benchmarks.wikitext_paragraphs": "plm.benchmarks.perplexity.wikitext_paragraphs",
}


def check_moved_keys(given: Mapping[str, Any]) -> None:
    """A key of ``MOVED_KEYS`` in the config is an error naming where it lives now."""
    for old, new in MOVED_KEYS.items():
        section: Any = given
        for part in old.split(".")[:-1]:
            section = section.get(part) if isinstance(section, Mapping) else None
        if isinstance(section, Mapping) and old.split(".")[-1] in section:
            raise MedbiasInputError(
                f"config key '{old}' is now '{new}': each benchmark plug-in's settings are a section of their own"
            )


def resolve_config(
    given: dict[str, Any], schema_path: str | Path, command_line: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The full configuration from a config file's keys: the schema's defaults filled in (the demo section
    too when ``world`` is demo), ``{demo_dir}`` expanded, then validated (``validate_config``).
    ``command_line``: the ``--config`` values among ``given``, whose nested strings are read as the
    schema types them (``typed_as_schema``); without it, every value is.

    A config file therefore lists only what differs from the defaults (``config/mimic.yaml``: the user's
    paths and models); ``config/README.md`` lists every key with its default and meaning."""
    schema = read_schema(schema_path)
    given = dict(given)
    check_moved_keys(given)
    worlds = schema["properties"]["world"]["enum"]
    if "world" not in given:
        raise MedbiasInputError(
            f"the config names no world ({' or '.join(worlds)}): a file that changes a few settings goes after the "
            "config it changes, --configfile config/config.yaml my_settings.yaml (README.md: Changing a setting)"
        )
    if given["world"] not in worlds:  # before {demo_dir}, which only the demo world defines
        raise MedbiasInputError(f"config key 'world': got {given['world']!r}, expected one of {', '.join(worlds)}")
    given = typed_as_schema(given, schema, ANYWHERE if command_line is None else command_line)
    if given.get("world") == "demo" and given.get("demo") is None:
        given["demo"] = {}
    resolved = apply_defaults(given, schema)
    demo = resolved.get("demo")
    resolved = expand_demo_dir(resolved, demo.get("dir") if isinstance(demo, dict) else None)
    check_against_schema(resolved, schema)  # the schema parsed once: the Snakefile resolves in every job
    return resolved


def registry_settings() -> dict[str, dict[str, Mapping[str, Any]]]:
    """Registry -> plug-in name -> the settings it declares (its config section as a JSON schema object
    without its type; empty when it has none): the names fill the schema keys that name a plug-in
    (``x-registry``), so a method or benchmark added to its registry is a valid config value with no
    schema edit, and the settings the sections that hold them (``x-registry-sections``)."""
    from medbias.metrics.benchmarks import REGISTRY as BENCHMARKS
    from medbias.studies.hurtful.mitigation import MITIGATIONS

    return {
        "benchmarks": {name: b.settings for name, b in BENCHMARKS.items()},
        "mitigation": {name: m.settings for name, m in MITIGATIONS.items()},
    }


def with_registry_sections(schema: dict[str, Any], declared: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """A section schema that says ``x-registry-sections`` with one required subsection per plug-in that
    declares settings (``declared``: name -> its declaration), so that each plug-in's defaults fill in. A
    plug-in whose name or setting repeats a key the section already has is an error: its settings are
    laid over the section's shared ones when it runs."""
    properties, required = dict(schema["properties"]), list(schema.get("required", []))
    for name, settings in declared.items():
        if not settings:
            continue
        clashes = sorted({name} & set(properties) | set(settings.get("properties", {})) & set(properties))
        if clashes:
            raise ValueError(f"plug-in {name!r}: its settings repeat the section's own keys {clashes}")
        properties[name] = {"type": "object", "additionalProperties": False, **settings}
        required.append(name)
    return {**schema, "properties": properties, "required": required}


def with_registry_enums(schema: Any, sections: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None) -> Any:
    """``schema`` with an ``enum`` of the registry's names wherever a subschema says ``x-registry``, and
    each plug-in's declared section wherever one says ``x-registry-sections`` (``with_registry_sections``)."""
    sections = registry_settings() if sections is None else sections
    if isinstance(schema, list):
        return [with_registry_enums(item, sections) for item in schema]
    if not isinstance(schema, dict):
        return schema
    filled = {key: with_registry_enums(value, sections) for key, value in schema.items()}
    if "x-registry" in filled:
        filled["enum"] = list(sections[filled["x-registry"]])
    if "x-registry-sections" in filled:
        filled = with_registry_sections(filled, sections[filled["x-registry-sections"]])
    return filled


def read_schema(path: str | Path) -> dict[str, Any]:
    """The config schema at ``path``, its registry keys filled from the registries as they are now
    (``with_registry_enums``); the file is parsed once per process and version, and every call gets its
    own copy."""
    resolved = Path(path).resolve()
    return with_registry_enums(copy.deepcopy(_parsed_schema(str(resolved), resolved.stat().st_mtime_ns)))


@functools.lru_cache(maxsize=4)
def _parsed_schema(path: str, modified_ns: int) -> dict[str, Any]:
    # libyaml's parser where PyYAML has it: the schema is the largest file every snakemake start reads
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(Path(path).read_text(encoding="utf-8"), Loader=loader)  # noqa: S506


def load_config(path: str | Path, schema_path: str | Path | None = None) -> dict[str, Any]:
    """``resolve_config`` of the YAML file at ``path`` (the schema next to it by default)."""
    given = load_yaml(path)
    return resolve_config(given, schema_path or Path(__file__).resolve().parents[3] / "config" / "schema.yaml")


def with_repo_paths(config: dict[str, Any], repo: Path) -> dict[str, Any]:
    """``config`` with its shipped files (``resources``, and the vignette sets under ``config/``) made
    absolute against the repository ``repo``, so that it runs in any working directory (a test world,
    a fresh world of the power runs); an absolute path stays as it is. A copy: ``config`` is unchanged."""
    located = dict(config)
    located["resources"] = {k: str(repo / v) for k, v in config["resources"].items()}
    vignettes = dict(config["vignettes"])
    vignettes["sets"] = {k: str(repo / v) if v.startswith("config/") else v for k, v in vignettes["sets"].items()}
    located["vignettes"] = vignettes
    return located


def check_config_files(paths: list[str | Path]) -> None:
    """Each config file must be a YAML mapping without a key written twice (``medbias.io.yamlfile``):
    Snakemake's own reader keeps the last of two entries of one name without a word."""
    for path in paths:
        if Path(path).is_file() and Path(path).suffix.lower() != ".json":
            load_yaml(path)


def validate_config(config: dict[str, Any], schema_path: str | Path) -> None:
    """Validate ``config`` against the JSON schema in ``schema_path``.

    Raises MedbiasInputError with one line: ``config key 'demo.scale': got -1, expected a value > 0``.
    The error reported is the one at the deepest key, so the message points at the real culprit.
    """
    check_against_schema(config, read_schema(schema_path))


def check_against_schema(config: dict[str, Any], schema: dict[str, Any]) -> None:
    """``validate_config`` with the schema already parsed."""
    validator = jsonschema.Draft7Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: (-len(e.absolute_path), e.message))
    if errors:
        first = errors[0]
        raise MedbiasInputError(f"config key '{_key_path(first)}': {_describe(first)}")


STUDY_MODEL_LISTS = {
    "plm": [("plm", "models")],
    "mental": [("mental", "embeddings")],
    "hurtful": [
        ("hurtful", "logprob", "models"),
        ("hurtful", "fill_blank", "models"),
        ("hurtful", "downstream", "models"),
    ],
}
STUDY_LABELS = {"plm": ("plm", "labels"), "mental": ("mental", "labels")}


def _at(config: dict[str, Any], keys: tuple[str, ...]):
    for key in keys:
        config = config[key]
    return config


def check_unique_model_names(config: dict[str, Any]) -> None:
    """A name means one thing in every study (``medbias.pipeline.plan.model_entry`` resolves it):
    a name given to more than one of a word-vector entry, a registry model and a pretrained variant
    of the hurtful study stops with one line naming both keys."""
    places = [
        ("embeddings", list(config.get("embeddings", {}))),
        ("models", list(config.get("models", {}))),
        ("hurtful.variants", list(config.get("hurtful", {}).get("variants", []))),
    ]
    for i, (first, first_names) in enumerate(places):
        for second, second_names in places[i + 1 :]:
            shared = [name for name in first_names if name in second_names]
            if shared:
                raise MedbiasInputError(
                    f"config keys '{first}' and '{second}' both name {shared[0]!r}: "
                    "rename one, a model name must mean one thing in every study"
                )


def enrol_registry_models(config: dict[str, Any]) -> dict[str, Any]:
    """The config with every study's model lists derived from the registry: one entry in ``models:``
    (or ``embeddings:``) whose ``studies`` names a study enrols it there.

    A study's own list (``plm.models``, ``mental.embeddings``, ``hurtful.logprob.models``,
    ``hurtful.fill_blank.models``, ``hurtful.downstream.models``) is optional: what it lists keeps
    its order (and may add the hurtful study's pretrained variants); enrolled entries it does not
    list follow in registry order. A registry entry that a study's list names although its
    ``studies`` does not name the study stops with one line. Labels (``plm.labels``,
    ``mental.labels``) come from the study's label map, else the entry's ``label``, else its name.
    The opt-in subsets (``plm.debias.dropout.models``, ``plm.downstream.models``) are not extended.
    """
    import copy

    config = copy.deepcopy(config)
    check_unique_model_names(config)
    registry = {**config.get("embeddings", {}), **config["models"]}
    for study, lists in STUDY_MODEL_LISTS.items():
        if study not in config:
            continue
        enrolled = [name for name, entry in registry.items() if study in entry.get("studies", [])]
        for keys in lists:
            parent = _at(config, keys[:-1])
            listed = list(parent.get(keys[-1]) or [])
            for name in listed:
                if name in registry and study not in registry[name].get("studies", []):
                    kind = "embeddings" if name in config.get("embeddings", {}) else "models"
                    raise MedbiasInputError(
                        f"config key '{kind}.{name}.studies': {'.'.join(keys)} lists {name!r}, so its studies "
                        f"must name {study!r} (got {registry[name].get('studies', [])})"
                    )
            parent[keys[-1]] = listed + [name for name in enrolled if name not in listed]
        if study in STUDY_LABELS:
            labels_parent = _at(config, STUDY_LABELS[study][:-1])
            given = labels_parent.get(STUDY_LABELS[study][-1]) or {}
            names = _at(config, lists[0])
            label_key = ".".join(STUDY_LABELS[study])
            for name in given:
                if name not in names:
                    raise MedbiasInputError(
                        f"config key '{label_key}.{name}': {name!r} is not in the {study} study "
                        f"(it has: {', '.join(names) or 'none'}); a label for it would be ignored"
                    )
            labels_parent[STUDY_LABELS[study][-1]] = {
                **given,
                **{n: registry.get(n, {}).get("label", n) for n in names if n not in given},
            }
    if "hurtful" in config:
        check_downstream_subsets(config["hurtful"])
        check_age_bands(config["hurtful"].get("intersections", {}).get("age_bands", []))
    return config


def check_downstream_subsets(hurtful: dict[str, Any]) -> None:
    """The models the mitigation stage mitigates and the intersectional analysis reads must have
    downstream classifiers (``hurtful.downstream.models``); else one line naming the key and model."""
    downstream = hurtful["downstream"]["models"]
    for section in ("mitigation", "intersections"):
        for name in hurtful.get(section, {}).get("models", []):
            if name not in downstream:
                raise MedbiasInputError(
                    f"config key 'hurtful.{section}.models': {name!r} has no downstream classifiers "
                    f"(hurtful.downstream.models: {', '.join(downstream)})"
                )


def check_age_bands(edges: list[int]) -> None:
    """The age bands' lower bounds must rise strictly (each band runs to the next bound): unsorted or
    repeated bounds would put ages into bands their labels do not name, or make an empty band."""
    for lower, upper in zip(edges, edges[1:]):
        if upper <= lower:
            raise MedbiasInputError(
                f"config key 'hurtful.intersections.age_bands': {edges} must rise strictly ({upper} follows "
                f"{lower}); each value is the lower bound of a band that runs to the next"
            )


def built_by_demo(path: str | Path, config: dict[str, Any]) -> bool:
    """True when ``path`` lies under the demo world's folder, i.e. the workflow itself builds it.

    The paths are made absolute without following symbolic links: ``--cache`` replaces a cached
    output (a demo model folder) by a link into the cache, and the path is still the demo world's."""
    if config.get("world") != "demo":
        return False
    demo_dir = Path(os.path.abspath(Path(config["demo"]["dir"]).expanduser()))
    absolute = Path(os.path.abspath(Path(path).expanduser()))
    return absolute == demo_dir or demo_dir in absolute.parents


def _check_table_folder(key: str, folder: str, tables: dict[str, Any], lower_case_too: bool) -> None:
    """The folder exists and holds every table (``find_table``) with its columns; else one line."""
    if not Path(folder).is_dir():
        raise MedbiasInputError(f"config key '{key}': folder {folder} does not exist")
    for table, columns in tables.items():
        path = find_table(folder, table)
        if path is None:
            also = f" (nor {table.lower()}.csv(.gz))" if lower_case_too else ""
            raise MedbiasInputError(f"config key '{key}': {folder} has no {table}.csv(.gz){also}")
        check_columns(path, columns)


def check_intermediate_folder(config: dict[str, Any]) -> None:
    """``intermediate`` holds note text, so it may not lie inside ``results`` or the logs (which the
    privacy rule keeps free of note text and which users share)."""
    intermediate = Path(os.path.abspath(config["intermediate"]))
    for key, folder in (("results", config["results"]), ("logs", "logs")):
        other = Path(os.path.abspath(folder))
        if intermediate == other or other in intermediate.parents:
            raise MedbiasInputError(
                f"config key 'intermediate': {config['intermediate']!r} overlaps the {key} folder {folder!r}; the "
                f"intermediate tables hold note text, which may never be written under {key}/ (choose a folder "
                f"beside it)"
            )


FOLDER_RESOURCES = ("seat_may2019",)  # resources that are folders of files (one SEAT test per file)


def demo_model_depth(source: str, config: dict[str, Any]) -> int | None:
    """The transformer depth of a tiny model the demo world builds (``<demo_dir>/models/tiny-[plm-|vignette-]<arch>``),
    from the demo's own settings for that architecture; None for any other path."""
    name = Path(source).name
    for prefix in ("tiny-plm-", "tiny-vignette-", "tiny-"):
        if name.startswith(prefix):
            settings = config.get("demo", {}).get(name[len(prefix) :], {})
            depth = settings.get("num_hidden_layers", settings.get("encoder_layers"))
            return int(depth) if isinstance(depth, int) else None
    return None


def check_inputs(config: dict[str, Any]) -> None:  # config as enrol_registry_models returns it
    """Check that every input the config names exists and has the columns the workflow reads.

    Paths that the demo world builds are skipped (they do not exist before the first run). Header
    checks read one line per file, so this is cheap even on the 4 GB NOTEEVENTS.
    """
    if config["world"] == "demo" and "demo" not in config:
        raise MedbiasInputError("config key 'demo': required when world is 'demo'")
    check_intermediate_folder(config)
    inputs = config["inputs"]

    def skip(path: str) -> bool:
        return built_by_demo(path, config)

    mimic_dir = inputs["mimic_dir"]
    if not skip(mimic_dir):
        _check_table_folder("inputs.mimic_dir", mimic_dir, MIMIC_TABLES, lower_case_too=True)
    acuity_dir = inputs["acuity_dir"]
    if not skip(acuity_dir):
        _check_table_folder("inputs.acuity_dir", acuity_dir, ACUITY_EXPORTS, lower_case_too=False)

    annotations = inputs["phenotype_annotations"]
    if not skip(annotations):
        if not Path(annotations).is_file():
            raise MedbiasInputError(f"config key 'inputs.phenotype_annotations': file {annotations} does not exist")
        read_annotations(annotations)  # a few thousand rows: every label is checked before any job

    pubmed_dir = inputs["pubmed_dir"]
    if not skip(pubmed_dir):
        if not Path(pubmed_dir).is_dir():
            raise MedbiasInputError(f"config key 'inputs.pubmed_dir': folder {pubmed_dir} does not exist")
        if not any(Path(pubmed_dir).glob("pubmed*.xml*")):
            raise MedbiasInputError(
                f"config key 'inputs.pubmed_dir': {pubmed_dir} holds no pubmed*.xml or pubmed*.xml.gz file"
            )

    testset = inputs["benchmark_testset"]
    if not skip(testset):
        if not Path(testset).is_file():
            raise MedbiasInputError(f"config key 'inputs.benchmark_testset': file {testset} does not exist")
        read_benchmark_split(testset)  # about 47,000 short rows: checked whole before any job

    for name, entry in config["embeddings"].items():
        if skip(entry["source"]):
            continue
        if not Path(entry["source"]).is_file():
            raise MedbiasInputError(f"config key 'embeddings.{name}.source': file {entry['source']} does not exist")
        check_word_vector_file(entry["source"], entry["format"])

    for name, entry in config["models"].items():
        resolve_model_source(name, entry, allow_missing=skip(entry["source"]))

    base = config.get("mimic", {}).get("base_model")
    if base is not None and base not in config["models"]:
        raise MedbiasInputError(
            f"config key 'mimic.base_model': unknown model name {base!r} (registry has: {', '.join(config['models'])})"
        )

    for key, path in config["resources"].items():
        if key in FOLDER_RESOURCES:
            if not Path(path).is_dir():
                raise MedbiasInputError(f"config key 'resources.{key}': folder {path} does not exist")
        elif not Path(path).is_file():
            raise MedbiasInputError(f"config key 'resources.{key}': file {path} does not exist")
    from medbias.metrics.benchmarks import check_benchmark_inputs

    check_benchmark_inputs(config["resources"], config["plm"]["benchmarks"])

    _check_windows(config)
    if "rios" in config:
        from medbias.io.pubmed import parse_decades

        parse_decades(config["rios"]["decades"])  # ordered, none ending before it starts, no overlap
    if "hurtful" in config:
        _check_hurtful(config, skip)
    if "mental" in config:
        _check_mental(config)
    if "plm" in config:
        _check_plm(config, skip)
    if "vignettes" in config:
        _check_vignettes(config, skip)


PROMPT_FIELDS = {"vignette", "question", "options"}


def _check_windows(config: dict[str, Any]) -> None:
    """A sliding window's stride may not exceed the word pieces it holds (its length less [CLS] and
    [SEP]): the pieces between one window's end and the next one's start would never be read."""
    settings = []
    if "mimic" in config:
        settings.append(("mimic.stride", config["mimic"]["stride"], "mimic.window", config["mimic"]["window"]))
    if "mental" in config:
        contextual = config["mental"]["contextual"]
        settings.append(
            ("mental.contextual.stride", contextual["stride"], "mental.contextual.max_length", contextual["max_length"])
        )
    for key, stride, window_key, window in settings:
        if stride > window - 2:
            raise MedbiasInputError(
                f"config key '{key}': {stride} is more than the {window - 2} word pieces a window of {window_key} "
                f"{window} holds ([CLS] and [SEP] take two); the pieces between windows would never be read"
            )


def folder_has_chat_template(folder: str | Path) -> bool:
    """Whether a local model folder's tokenizer carries a chat template (``chat_template`` in
    tokenizer_config.json, or a chat_template.jinja / chat_template.json file beside it)."""
    import json

    folder = Path(folder)
    if (folder / "chat_template.jinja").is_file() or (folder / "chat_template.json").is_file():
        return True
    config_file = folder / "tokenizer_config.json"
    if not config_file.is_file():
        return False
    try:
        return bool(json.loads(config_file.read_text(encoding="utf-8")).get("chat_template"))
    except (OSError, ValueError):
        return False


def _check_vignettes(config: dict[str, Any], skip) -> None:
    """Every vignette file read and checked whole (``io.vignettes``); the prompts write only their
    three fields; a registry entry with chat: true whose local folder has no chat template is named."""
    from medbias.io.vignettes import read_vignette_sets, slots_of
    from medbias.studies.vignettes.plan import chosen_vignette_problem

    settings = config["vignettes"]
    if settings.get("models") is not None:
        problem = chosen_vignette_problem(config["models"], settings["models"])
        if problem:
            raise MedbiasInputError(f"config key 'vignettes.models': {problem}")
    for key in ("prompt", "chat_prompt"):
        fields = set(slots_of(settings[key]))
        if fields - PROMPT_FIELDS or "vignette" not in fields or "question" not in fields:
            raise MedbiasInputError(
                f"config key 'vignettes.{key}': writes {{{', '.join(sorted(fields))}}}; it must write {{vignette}} and "
                "{question}, and may write {options}, nothing else"
            )
    sets = read_vignette_sets({name: path for name, path in settings["sets"].items() if not skip(path)})
    for name, entry in config["models"].items():
        folder = Path(entry["source"]).expanduser()
        if entry.get("kind") != "causal" or skip(entry["source"]) or not folder.is_dir():
            continue  # a hub id is checked in its scoring job, before it scores anything
        templated = folder_has_chat_template(folder)
        if entry.get("chat") and not templated:
            raise MedbiasInputError(
                f"config key 'models.{name}': chat: true but the tokenizer in {folder} has no chat template "
                "(tokenizer_config.json 'chat_template' or chat_template.jinja); set chat: false for the plain prompt"
            )
        if sets:
            _check_options_tokenize(name, folder, sets, chat=entry.get("chat", templated))


def _check_options_tokenize(name: str, folder: Path, sets, chat: bool) -> None:
    """Every option of every set gives at least one token under a local model's tokenizer (after the
    separator its prompt style puts in front: ``core.option_scoring``)."""
    from medbias.core.models import load_tokenizer

    tokenizer = load_tokenizer(folder)
    separator = "" if chat else " "
    for vset in sets:
        for decision in vset.decisions.values():
            for option in decision.options:
                if not tokenizer(separator + option, add_special_tokens=False)["input_ids"]:
                    raise MedbiasInputError(
                        f"{vset.path}: decision {decision.name}: option {option!r} tokenizes to nothing under the "
                        f"tokenizer of model '{name}' ({folder})"
                    )


# long: one check per plm setting that refers to another, each with its own one-line error
def _check_plm(config: dict[str, Any], skip) -> None:
    """Models must be registry entries; templates need their slots; the figure's axes, the
    StereoSet families and the Dropout models must refer to what the study has."""
    from medbias.core.templates import BIAS_SLOT, IDENTITY_SLOT, WORD_SLOT, check_templates
    from medbias.io.resources import read_seat_tests

    plm = config["plm"]
    if not plm.get("models"):
        raise MedbiasInputError(
            "config key 'plm.models': no model is enrolled (add studies: [plm] to a registry entry)"
        )
    for name in plm["models"]:
        if name not in config["models"]:
            raise MedbiasInputError(
                f"config key 'plm.models': unknown model {name!r} (registry has: {', '.join(config['models'])})"
            )
    for context, templates in plm["seat"]["templates"].items():
        check_templates(templates, [WORD_SLOT], f"plm.seat.templates.{context}")
    check_templates(plm["stereoset"]["templates"], (IDENTITY_SLOT, BIAS_SLOT), "plm.stereoset.templates")
    tests = read_seat_tests(config["resources"]["xie2024_wordsets"])
    averages = plm["seat"]["averages"]
    for name, members in averages.items():
        if name in tests:
            raise MedbiasInputError(
                f"config key 'plm.seat.averages.{name}': the name of a SEAT test; an average needs its own"
            )
        for test in members:
            if test not in tests:
                raise MedbiasInputError(
                    f"config key 'plm.seat.averages.{name}': no SEAT test {test!r} (file has: {', '.join(tests)})"
                )
    for axis, test in plm["seat"]["figure"].items():
        if test not in tests and test not in averages:
            raise MedbiasInputError(
                f"config key 'plm.seat.figure.{axis}': no SEAT test or average {test!r} "
                f"(file has: {', '.join(tests)}; averages: {', '.join(averages) or 'none'})"
            )
    for name, test in tests.items():
        if test["identity_context"] not in plm["seat"]["templates"]:
            raise MedbiasInputError(
                f"config key 'plm.seat.templates': no templates for identity context "
                f"{test['identity_context']!r} (test {name!r})"
            )
    for family, names in plm["stereoset"]["families"].items():
        for test in names:
            if test not in tests:
                raise MedbiasInputError(f"config key 'plm.stereoset.families.{family}': no SEAT test {test!r}")
    from medbias.core.models import declares_lm_head

    for method in ("dropout", "cda"):
        for name in plm["debias"][method]["models"]:
            if name in config["models"] and not declares_lm_head(config["models"][name]):
                raise MedbiasInputError(
                    f"config key 'plm.debias.{method}.models': {name!r} has no trained language-model head "
                    f"({method} continues its masked/causal LM pretraining); remove it from the list"
                )
    from medbias.metrics.benchmarks import REGISTRY

    for name in plm["benchmarks"]["suite"]:
        if name not in REGISTRY:
            raise MedbiasInputError(
                f"config key 'plm.benchmarks.suite': no benchmark plug-in {name!r} "
                f"(medbias.metrics.benchmarks has: {', '.join(REGISTRY)})"
            )
    for bias_type in plm["debias"]["cda"]["bias_types"]:
        if bias_type not in plm["debias"]["cda"]["pairs"]:
            raise MedbiasInputError(
                f"config key 'plm.debias.cda.bias_types': {bias_type!r} has no word pairs in plm.debias.cda.pairs "
                f"(has: {', '.join(plm['debias']['cda']['pairs'])})"
            )
    for key in ("debias.dropout.models", "debias.cda.models", "downstream.models"):
        section = plm["debias"][key.split(".")[1]] if key.startswith("debias") else plm["downstream"]
        for name in section["models"]:
            if name not in plm["models"]:
                raise MedbiasInputError(f"config key 'plm.{key}': {name!r} is not one of plm.models")
    corpus = plm["debias"]["dropout"]["corpus"]
    if (
        not skip(corpus) and not Path(corpus).is_file()
    ):  # Dropout and CDA train on it, every model's perplexity reads it
        raise MedbiasInputError(f"config key 'plm.debias.dropout.corpus': file {corpus} does not exist")
    if plm["downstream"]["models"]:
        for benchmark, folder in plm["downstream"]["data"].items():
            if not skip(folder) and not Path(folder).is_dir():
                raise MedbiasInputError(
                    f"config key 'plm.downstream.data.{benchmark}': folder {folder} does not exist (local "
                    f"copies only: no hub access)"
                )


def _check_mental(config: dict[str, Any]) -> None:
    """Embeddings must name word vectors, registry models or hurtful variants; the Figure 3 and
    Table IV settings must refer to what the study runs; templates need their [W] slot."""
    mental = config["mental"]
    if not mental.get("embeddings"):
        raise MedbiasInputError(
            "config key 'mental.embeddings': no embedding is enrolled (add studies: [mental] to a registry or "
            "embeddings entry)"
        )
    variants = config.get("hurtful", {}).get("variants", [])
    known = [*config["embeddings"], *config["models"], *variants]
    for name in mental["embeddings"]:
        if name not in known:
            raise MedbiasInputError(
                f"config key 'mental.embeddings': unknown embedding {name!r} (word vectors: "
                f"{', '.join(config['embeddings'])}; "
                f"registry: {', '.join(config['models'])}; variants: {', '.join(variants)})"
            )
    lime = mental["lime"]
    for key, value, allowed in (
        ("embedding", lime["embedding"], mental["embeddings"]),
        ("task", lime["task"], mental["tasks"]),
        ("learner", lime["learner"], mental["learners"]),
    ):
        if value not in allowed:
            raise MedbiasInputError(
                f"config key 'mental.lime.{key}': {value!r} is not one of mental.{key}s ({', '.join(allowed)})"
            )
    missing = [t for t in lime["treatments"] if t not in mental["treatments"]]
    if missing or "original" not in mental["treatments"]:
        raise MedbiasInputError(
            f"config key 'mental.lime.treatments': {missing[0] if missing else 'original'!r} is not one of "
            f"mental.treatments "
            "(the original treatment is needed to choose the pairs)"
        )
    if mental["gender_classifier_task"] not in mental["tasks"]:
        raise MedbiasInputError(
            f"config key 'mental.gender_classifier_task': {mental['gender_classifier_task']!r} is not one of "
            f"mental.tasks"
        )
    null = mental["gender_null"]
    if null["learner"] not in mental["learners"]:
        raise MedbiasInputError(
            f"config key 'mental.gender_null.learner': {null['learner']!r} is not one of mental.learners "
            f"({', '.join(mental['learners'])})"
        )
    stray = [t for t in null["tasks"] or [] if t not in mental["tasks"]]
    if stray:
        raise MedbiasInputError(f"config key 'mental.gender_null.tasks': {stray[0]!r} is not one of mental.tasks")
    pairs_file = config["resources"]["gender_pairs"]
    with reading(pairs_file):
        pairs = json.loads(Path(pairs_file).read_text(encoding="utf-8"))
    if mental["direct_bias"]["min_pairs"] > len(pairs):
        raise MedbiasInputError(
            f"config key 'mental.direct_bias.min_pairs': {mental['direct_bias']['min_pairs']} is more than the "
            f"{len(pairs)} definitional pairs of resources.gender_pairs ({pairs_file})"
        )
    templates = [("pair_templates", t) for t in mental["direct_bias"]["pair_templates"]]
    templates.append(("synonym_template", mental["direct_bias"]["synonym_template"]))
    from medbias.core.templates import WORD_SLOT, check_template

    for key, template in templates:
        check_template(template, [WORD_SLOT], f"mental.direct_bias.{key}")


def _check_hurtful(config: dict[str, Any], skip) -> None:
    """Names in the hurtful section must exist: the base model, the models each analysis reads (registry
    entries or pretrained variants), the template files; target groups pair their words one to one."""
    hurtful = config["hurtful"]
    registry = config["models"]
    variants = hurtful["variants"]
    names = f"registry: {', '.join(registry)}; variants: {', '.join(variants)}"
    if hurtful["base_model"] not in registry:
        raise MedbiasInputError(
            f"config key 'hurtful.base_model': unknown model name {hurtful['base_model']!r} ({names})"
        )
    if "baseline" not in variants:
        raise MedbiasInputError(
            "config key 'hurtful.variants': must include 'baseline' (the debiased models are compared with it)"
        )
    for key in ("logprob", "fill_blank"):
        for model in hurtful[key]["models"]:
            if model not in registry and model not in variants:
                raise MedbiasInputError(f"config key 'hurtful.{key}.models': unknown model name {model!r} ({names})")
    for model in hurtful["downstream"]["models"]:
        if model not in registry and model not in variants:
            raise MedbiasInputError(f"config key 'hurtful.downstream.models': unknown model name {model!r} ({names})")
    if "baseline" not in hurtful["downstream"]["models"]:
        raise MedbiasInputError(
            "config key 'hurtful.downstream.models': must include 'baseline' (Tables 4 and 5 are about it)"
        )
    for model in hurtful["downstream"]["models"]:  # a variant has its base model's depth
        source = registry[model if model in registry else hurtful["base_model"]]["source"]
        depth = demo_model_depth(source, config) if skip(source) else transformer_depth(source)
        if depth is not None:  # a local folder that exists or a demo model (hub ids are checked in the job)
            check_feature_layers(hurtful["downstream"]["layers"], depth, model)
    gpus = hurtful["pretrain"]["gpus"]
    for number, phase in enumerate(hurtful["pretrain"]["phases"], start=1):
        if gpus > 1 and phase["batch_size"] % gpus:
            raise MedbiasInputError(
                f"config key 'hurtful.pretrain.gpus': {gpus} GPUs do not divide phase {number}'s batch_size "
                f"{phase['batch_size']} (each GPU's process takes an equal share of every batch)"
            )
    from medbias.studies.hurtful.demographics import ATTRIBUTE_CLASSES

    for attribute, excluded in hurtful["downstream"]["excluded_subgroups"].items():
        unknown = sorted(set(excluded) - set(ATTRIBUTE_CLASSES[attribute]))
        if unknown:
            raise MedbiasInputError(
                f"config key 'hurtful.downstream.excluded_subgroups.{attribute}': unknown subgroup {unknown[0]!r} "
                f"(subgroups: {', '.join(ATTRIBUTE_CLASSES[attribute])})"
            )
    for name, figure in hurtful["downstream"]["figures"].items():
        if figure["group"] not in ATTRIBUTE_CLASSES[figure["attribute"]]:
            raise MedbiasInputError(
                f"config key 'hurtful.downstream.figures.{name}.group': unknown {figure['attribute']} subgroup "
                f"{figure['group']!r} (subgroups: {', '.join(ATTRIBUTE_CLASSES[figure['attribute']])})"
            )
    for key in ("templates", "attributes"):
        path = hurtful["logprob"][key]
        if not skip(path) and not Path(path).is_file():
            raise MedbiasInputError(f"config key 'hurtful.logprob.{key}': file {path} does not exist")
    for set_name, groups in hurtful["logprob"]["target_sets"].items():
        sizes = {group: len(words) for group, words in groups.items()}
        if len(set(sizes.values())) != 1:
            raise MedbiasInputError(
                f"config key 'hurtful.logprob.target_sets.{set_name}': groups must list paired words of equal "
                f"number (got {sizes})"
            )
    if hurtful["logprob"]["gender_set"] not in hurtful["logprob"]["target_sets"]:
        raise MedbiasInputError(
            f"config key 'hurtful.logprob.gender_set': {hurtful['logprob']['gender_set']!r} is not a key of "
            f"hurtful.logprob.target_sets"
        )


def _cell(text: str) -> str:
    """Text for a Markdown table cell (a literal | would end the cell)."""
    return text.replace("|", "\\|")


def flow_yaml(value: Any) -> str:
    """``value`` as one line of flow-style YAML, as a config file would write it."""
    # a scalar's YAML document ends with "...": the value is the text before it
    text = yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=10**6)
    return text.removesuffix("...\n").strip()


def _default_cell(subschema: dict[str, Any], required: bool) -> str:
    if "default" in subschema:
        return _cell(f"`{flow_yaml(subschema['default'])}`")
    return "**required**" if required else "(none)"


def _reference_rows(schema: dict[str, Any], prefix: str) -> list[str]:
    rows: list[str] = []
    required = set(schema.get("required", []))
    for key, sub in schema.get("properties", {}).items():
        name = f"{prefix}{key}"
        if is_section(sub):
            rows.append(f"| `{name}` | (section) | {sub['description']} | |")
            rows += _reference_rows(sub, f"{name}.")
            continue
        source = _cell(sub.get("x-source", ""))
        rows.append(f"| `{name}` | {_default_cell(sub, key in required)} | {_cell(sub['description'])} | {source} |")
        entry = sub.get("additionalProperties")
        if isinstance(entry, dict) and "properties" in entry and prefix == "":  # the registry's entries
            entry_required = set(entry.get("required", []))
            for field, field_schema in entry["properties"].items():
                mark = "**required**" if field in entry_required else "(none)"
                rows.append(f"| `{name}.<name>.{field}` | {mark} | {_cell(field_schema['description'])} | |")
    return rows


def config_reference(schema: dict[str, Any]) -> str:
    """config/README.md: every key of the schema with its default, meaning and (for the studies' keys) the
    source of its default, one table per top-level section (generated by scripts/config_reference.py; a
    unit test keeps it equal to the schema)."""
    lines = [
        "# Configuration keys",
        "",
        "Generated from `config/schema.yaml` by `python scripts/config_reference.py`; edit the schema, not this file.",
        "",
        schema["description"],
        "",
        "A key shown as **required** has no default: a config file must give it. `(section)` rows hold the "
        "keys below them.",
        "",
        "The source column says where a study setting's default comes from: *paper* (the study's own text), "
        "*reference code* (the authors' published code, where the paper is silent), *cited default* (the "
        "default of a method or library the study cites), *our choice* (the paper and its code are silent; "
        "why we chose it), or *run setting* (resources, paths and names: no effect on the numbers). The "
        "tables print the same sources under their settings (medbias.pipeline.hyperparameters).",
        "",
    ]
    properties = schema["properties"]
    leaves = [k for k, s in properties.items() if not is_section(s)]
    lines += ["## Top level", "", "| key | default | meaning | source |", "|---|---|---|---|"]
    lines += [row for row in _reference_rows({**schema, "properties": {k: properties[k] for k in leaves}}, "")]
    for key, sub in properties.items():
        if is_section(sub):
            lines += [
                "",
                f"## `{key}`",
                "",
                sub["description"],
                "",
                "| key | default | meaning | source |",
                "|---|---|---|---|",
            ]
            lines += _reference_rows(sub, f"{key}.")
    return "\n".join(lines) + "\n"
