"""Where each setting of the studies comes from, and the notes that say so under the tables.

Every key of the study sections of ``config/schema.yaml`` (``mimic``, ``rios``, ``hurtful``, ``mental``,
``plm``) carries an ``x-source``: one of SOURCE_KINDS, a colon, then where exactly (the paper's section or
table, the reference code's file, whose default it is, or why we chose it). JSON Schema ignores keywords
it does not know, so the annotation costs the validation nothing. ``config/README.md`` prints it beside
each key's default, and ``settings_notes`` prints it under each table the settings shaped, with the value
the run used, so a reader comparing a table with the paper sees which numbers rest on the paper's settings
and which on ours.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from medbias.io.tables import PaperTable
from medbias.pipeline.config import flow_yaml, is_section, read_schema

SOURCE_KINDS = ("paper", "reference code", "cited default", "our choice", "run setting")
STUDY_SECTIONS = ("mimic", "rios", "hurtful", "mental", "plm")
RUN_SETTING = "run setting"


def load_schema(path: str | Path) -> dict[str, Any]:
    """The schema as a dict, its registry keys filled (``medbias.pipeline.config.read_schema``)."""
    return read_schema(path)


def leaf_schemas(schema: Mapping[str, Any], sections: Sequence[str] = STUDY_SECTIONS) -> dict[str, dict[str, Any]]:
    """Dotted key -> schema of every leaf key (not a section) under the given top-level sections."""
    leaves: dict[str, dict[str, Any]] = {}

    def walk(subschema: Mapping[str, Any], prefix: str) -> None:
        for key, child in subschema.get("properties", {}).items():
            if is_section(child):
                walk(child, f"{prefix}{key}.")
            else:
                leaves[f"{prefix}{key}"] = dict(child)

    for section in sections:
        walk(schema["properties"][section], f"{section}.")
    return leaves


def source_kind(source: str) -> str | None:
    """The kind an ``x-source`` names (the text before its first colon), or None when it names none."""
    kind = source.split(":", 1)[0].strip()
    return kind if kind in SOURCE_KINDS and ":" in source else None


def unsourced_keys(schema: Mapping[str, Any]) -> list[str]:
    """Study keys whose ``x-source`` is missing or does not start with one of SOURCE_KINDS."""
    return [key for key, sub in leaf_schemas(schema).items() if source_kind(str(sub.get("x-source", ""))) is None]


def _value(config: Mapping[str, Any], key: str) -> Any:
    value: Any = config
    for part in key.split("."):
        value = value[part]
    return value


class SettingsNote(list):
    """The lines of a settings note (``settings_notes``) as a rule carries them in its params, with one
    ``key = value`` record per key it lists (``records``).

    Snakemake records each param of a job by its repr and, when one changed, prints the old and the new
    repr in the dry run's reason: a whole note is kilobytes, and it names every key of the rule. So the
    note's repr names only how many keys it lists, and the workflow gives the rule one param per record
    (``track_settings_by_key`` in ``rules/common.smk``): the reason then names the key that changed, and
    the job still reruns when any of them does. Pickled (for the rule's script) it is a plain list."""

    def __init__(self, lines: Sequence[str], records: Sequence[str]) -> None:
        super().__init__(lines)
        self.records = tuple(records)

    def __repr__(self) -> str:
        return f"settings note of {len(self.records)} keys"

    def __reduce__(self) -> tuple[type, tuple[list[str]]]:
        return (list, (list(self),))


def settings_note(schema: Mapping[str, Any], config: Mapping[str, Any], prefixes: Sequence[str]) -> SettingsNote:
    """``settings_notes`` with the ``key = value`` record of each key it lists."""
    keys = noted_keys(schema, prefixes)
    return SettingsNote(
        settings_notes(schema, config, prefixes), [f"{key} = {flow_yaml(_value(config, key))}" for key in keys]
    )


def noted_keys(schema: Mapping[str, Any], prefixes: Sequence[str]) -> list[str]:
    """The keys under ``prefixes`` that a settings note lists: those whose source is a kind other than
    a run setting (threads, GPUs and paths do not change the numbers), in the schema's order."""
    leaves = leaf_schemas(schema)
    keys = [k for k in leaves if any(k == p or k.startswith(f"{p}.") for p in prefixes)]
    unknown = [p for p in prefixes if not any(k == p or k.startswith(f"{p}.") for k in leaves)]
    if unknown:
        raise KeyError(f"settings_notes: no study key under {', '.join(unknown)}")
    return [k for k in keys if source_kind(str(leaves[k].get("x-source", ""))) not in (None, RUN_SETTING)]


def settings_notes(schema: Mapping[str, Any], config: Mapping[str, Any], prefixes: Sequence[str]) -> list[str]:
    """The notes printed under a table: every setting under the config keys ``prefixes`` that can change
    its numbers (run settings such as threads, GPUs and paths are left out), with the value this run used
    and where the default comes from; a value that differs from the default says so.

    Returns Markdown lines: a heading line (after a blank line), then one list item per key."""
    leaves = leaf_schemas(schema)
    lines = []
    for key in noted_keys(schema, prefixes):
        sub = leaves[key]
        source = str(sub.get("x-source", ""))
        value = _value(config, key)
        if "default" in sub and value != sub["default"]:
            lines.append(
                f"- `{key}` = `{flow_yaml(value)}` (set in this run's config; default `{flow_yaml(sub['default'])}`): "
                f"{source}"
            )
        else:
            lines.append(f"- `{key}` = `{flow_yaml(value)}`: {source}")
    if not lines:
        return []
    # the heading opens with a newline: write_paper_table drops empty notes, and the blank line ends the
    # paragraph of the notes above it
    return [
        "\nSettings that shaped these numbers (config key = value: where it comes from; "
        "paper, reference code, cited default or our choice):",
        *lines,
    ]


def with_settings(table: PaperTable, settings: Sequence[str]) -> PaperTable:
    """``table`` with ``settings`` (the lines ``settings_notes`` made, which the rule passes as a param)
    printed after its own notes."""
    return replace(table, notes=(*table.notes, *settings))
