"""Which registry models answer the vignettes, and why the others do not. Pure; the rule files reach
it through ``medbias.pipeline.plan``."""

from __future__ import annotations

from collections.abc import Mapping
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


def vignette_models(models: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The registry models that answer the vignettes (causal, loadable), in registry order."""
    return [name for name, entry in models.items() if vignette_skip_reason(entry) is None]
