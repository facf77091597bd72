"""YAML files read strictly: a key written twice in one mapping, a syntax error or a file that is not
a mapping stops with one line naming the file (and the line), where plain YAML keeps the last value
of a repeated key without a word."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from medbias.core.errors import MedbiasInputError, reading


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key repeated within one mapping."""


def _mapping_without_repeats(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in seen:
            raise MedbiasInputError(
                f"key {key!r} is written twice in one mapping (lines {seen[key]} and "
                f"{key_node.start_mark.line + 1}); YAML would silently keep the last"
            )
        seen[key] = key_node.start_mark.line + 1
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_without_repeats)


def load_yaml(path: str | Path, mapping: bool = True) -> Any:
    """The YAML document in ``path``; MedbiasInputError naming the file for a repeated key, a syntax
    error, a file that is not UTF-8 and (``mapping``) a document that is empty or not a mapping."""
    with reading(path):
        text = Path(path).read_text(encoding="utf-8")
    try:
        data = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except MedbiasInputError as error:
        raise MedbiasInputError(f"{path}: {error}") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise MedbiasInputError(f"{path}: not valid YAML ({where}{problem})") from None
    if mapping and not isinstance(data, dict):
        got = "an empty file" if data is None else f"a {type(data).__name__}"
        raise MedbiasInputError(f"{path}: expected a mapping of keys at the top level, got {got}")
    return data
