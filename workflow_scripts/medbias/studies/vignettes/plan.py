"""Which registry models answer the vignettes, and why the others do not. Pure; the rule files reach
it through ``medbias.pipeline.plan``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def vignette_skip_reason(entry: Mapping[str, Any]) -> str | None:
    """Why a registry entry gives no option probabilities (None: it does). A closed question's
    answer is the model's next tokens after the prompt, which only a causal (decoder) model gives."""
    kind = entry.get("kind")
    if kind != "causal":
        return (
            f"not applicable: kind {kind} gives no next-token probabilities after a prompt (the vignettes need a "
            "causal or chat model)"
        )
    if entry.get("loader", "auto") != "auto":
        return f"not applicable: loader {entry['loader']} has no transformers class"
    return None


NOT_CHOSEN = "not chosen: not in vignettes.models (its audit card still scores it)"


def vignette_models(models: Mapping[str, Mapping[str, Any]], chosen: Sequence[str] | None = None) -> list[str]:
    """The registry models that answer the vignettes (causal, loadable), in registry order; with
    ``chosen`` (the config's ``vignettes.models``), those of them that it names."""
    capable = [name for name, entry in models.items() if vignette_skip_reason(entry) is None]
    return capable if chosen is None else [name for name in capable if name in set(chosen)]


def chosen_vignette_problem(models: Mapping[str, Mapping[str, Any]], chosen: Sequence[str]) -> str | None:
    """Why a name in ``vignettes.models`` cannot answer the vignettes (None: every one can)."""
    for name in chosen:
        if name not in models:
            return f"{name!r} is not a registry model (models)"
        reason = vignette_skip_reason(models[name])
        if reason is not None:
            return f"{name!r} is {reason}"
    return None
