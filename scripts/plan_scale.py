"""The scale planner, as ``python -m medbias.pipeline.scale`` runs it (docs/planning.md).

.venv/bin/python scripts/plan_scale.py --tokenizer BERT_FOLDER [--gpu-costs FILE.json] [--markdown OUT.md]
.venv/bin/python scripts/plan_scale.py --cpu-costs FILE.json [--gpu-costs FILE.json] [--markdown OUT.md]
.venv/bin/python scripts/plan_scale.py --measure-gpu OUT.json --tokenizer BERT_FOLDER  # with CUDA
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow_scripts"))

from medbias.pipeline.scale.__main__ import main  # noqa: E402

if __name__ == "__main__":
    main()
