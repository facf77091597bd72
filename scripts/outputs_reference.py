"""Rewrite the tables-and-figures part of docs/outputs.md from report/items.yaml (the report's captions)."""

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow_scripts"))

from medbias.pipeline.report import load_items, outputs_reference, with_outputs_reference  # noqa: E402

if __name__ == "__main__":
    doc = REPO / "docs" / "outputs.md"
    items = load_items(REPO / "report" / "items.yaml", "demo")
    doc.write_text(with_outputs_reference(doc.read_text(), outputs_reference(items)))
    print(f"wrote {doc}")
