"""Sizes of the demo world: the configured sizes times ``demo.scale``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DemoSizes:
    patients: int
    pubmed_articles_per_decade: int
    pubmed_files: int
    annotated_notes: int


def demo_sizes(demo: dict[str, Any]) -> DemoSizes:
    """Apply ``demo.scale`` to the configured sizes, with floors that keep every table non-trivial."""
    scale = float(demo["scale"])
    return DemoSizes(
        patients=max(60, round(demo["patients"] * scale)),
        pubmed_articles_per_decade=max(20, round(demo["pubmed_articles_per_decade"] * scale)),
        pubmed_files=int(demo["pubmed_files"]),
        annotated_notes=max(20, round(demo["annotated_notes"] * scale)),
    )
