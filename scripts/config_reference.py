"""Write config/README.md, the table of every config key with its default and meaning, from config/schema.yaml."""

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow_scripts"))

from medbias.pipeline.config import config_reference, read_schema  # noqa: E402

if __name__ == "__main__":
    schema = read_schema(REPO / "config" / "schema.yaml")
    (REPO / "config" / "README.md").write_text(config_reference(schema))
    print(f"wrote {REPO / 'config' / 'README.md'}")
