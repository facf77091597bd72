"""The model registry: resolving a source (hub id or local folder) and loading it by kind.

The same loader serves a Hugging Face hub id, a user's ``save_pretrained`` folder and the demo
world's tiny models, so the demo exercises the real loading code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from medbias.errors import MedbiasInputError

ModelKind = Literal["masked", "causal", "seq2seq"]

# owner/name or name, as the hub spells them (no path separators beyond the one slash)
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)?$")


@dataclass(frozen=True)
class ModelSource:
    """A resolved registry entry: where the weights come from and which head to load."""

    name: str
    source: str
    kind: ModelKind
    is_local: bool
    dtype: str = "float32"
    loader: str = "auto"


def _looks_like_path(source: str) -> bool:
    return source.startswith(("/", "./", "../", "~")) or source.count("/") > 1


def resolve_model_source(name: str, entry: dict[str, Any], allow_missing: bool = False) -> ModelSource:
    """Decide whether ``entry['source']`` is a local folder or a hub id, and check it.

    An existing folder must hold a ``config.json`` (a ``save_pretrained`` folder). A source that
    looks like a path (absolute, ``./``, ``~`` or more than one slash) must exist unless
    ``allow_missing`` (the demo world builds it). Anything else must be a well-formed hub id; it is
    resolved by transformers at load time (from the local Hugging Face cache when offline).
    """
    source = str(entry["source"])
    kind = entry["kind"]
    dtype = entry.get("dtype", "float32")
    loader = entry.get("loader", "auto")
    expanded = Path(source).expanduser()
    if expanded.is_dir():
        if not (expanded / "config.json").is_file():
            raise MedbiasInputError(
                f"config key 'models.{name}.source': folder {source} has no config.json (expected a save_pretrained folder)"
            )
        return ModelSource(name, str(expanded), kind, True, dtype, loader)
    if _looks_like_path(source):
        if allow_missing:
            return ModelSource(name, source, kind, True, dtype, loader)
        raise MedbiasInputError(f"config key 'models.{name}.source': local model folder {source} does not exist")
    if not _HUB_ID.match(source):
        raise MedbiasInputError(
            f"config key 'models.{name}.source': {source!r} is neither an existing folder nor a hub id (owner/name)"
        )
    return ModelSource(name, source, kind, False, dtype, loader)


def model_folder_files(source: str | Path) -> list[str]:
    """Every file of a local model folder (recursively, hidden folders such as ``.cache`` left out),
    sorted; an empty list for a hub id or a path that does not exist.

    A rule that reads a model lists these as its inputs rather than the folder: re-saving a model in
    place rewrites its files but not the folder's own modification time, so only the files show the
    jobs as stale.
    """
    folder = Path(str(source)).expanduser()
    if not folder.is_dir():
        return []
    return sorted(
        str(path) for path in folder.rglob("*")
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    )


_AUTO_CLASS = {"masked": "AutoModelForMaskedLM", "causal": "AutoModelForCausalLM", "seq2seq": "AutoModelForSeq2SeqLM"}


def load_model_and_tokenizer(model: ModelSource, device: str = "cpu", config_overrides: dict | None = None):
    """Load the tokenizer and the language-model head that ``model.kind`` names, in eval mode
    (``config_overrides`` set model config values, e.g. dropout, before the weights load).

    ``loader: ofa`` (BiomedGPT) has no transformers class: it stops with one clear error naming the
    model, so its rows can be marked rather than silently missing.
    """
    import torch
    import transformers

    if model.loader == "ofa":
        raise MedbiasInputError(
            f"model '{model.name}' ({model.source}) is OFA-based: transformers has no loader for it; install an OFA loader or remove it from the registry"
        )
    auto = getattr(transformers, _AUTO_CLASS[model.kind])
    tokenizer = transformers.AutoTokenizer.from_pretrained(model.source)
    lm = auto.from_pretrained(model.source, dtype=getattr(torch, model.dtype), **(config_overrides or {}))
    lm.to(device).eval()
    return lm, tokenizer
