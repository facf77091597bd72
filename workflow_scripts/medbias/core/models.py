"""The one door to transformers: resolving a registry source (hub id or local folder), checking it,
choosing the job's device, and loading tokenizers, configs and weights.

Every ``from_pretrained`` of the workflow is in this module: a registry entry by its kind
(``load_model_and_tokenizer``), an encoder without a language-model head (``load_encoder``), the
pretraining heads the hurtful study continues (``load_for_pretraining``), fresh random weights of a
checkpoint's architecture (``untrained_copy``), and a tokenizer or config alone. The same loader
serves a Hugging Face hub id, a user's ``save_pretrained`` folder and the demo world's tiny models,
so the demo exercises the real loading code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from medbias.core.errors import MedbiasInputError

ModelKind = Literal["masked", "causal", "seq2seq", "encoder"]
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".h5", ".msgpack")
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.txt",
    "vocab.json",
    "spiece.model",
    "sentencepiece.bpe.model",
    "tokenizer.model",
)

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
                f"config key 'models.{name}.source': folder {source} has no config.json (expected a "
                f"save_pretrained folder)"
            )
        if loader == "auto":
            check_local_checkpoint(name, expanded, kind)
        return ModelSource(name, str(expanded), kind, True, dtype, loader)
    if expanded.is_file():
        raise MedbiasInputError(
            f"config key 'models.{name}.source': {source} is a file; expected the folder that save_pretrained wrote "
            "(config.json and the weights), or a hub id"
        )
    if _looks_like_path(source):
        if allow_missing:
            return ModelSource(name, source, kind, True, dtype, loader)
        raise MedbiasInputError(f"config key 'models.{name}.source': local model folder {source} does not exist")
    if not _HUB_ID.match(source):
        raise MedbiasInputError(
            f"config key 'models.{name}.source': {source!r} is neither an existing folder nor a hub id (owner/name)"
        )
    return ModelSource(name, source, kind, False, dtype, loader)


def transformer_depth(folder: str | Path) -> int | None:
    """The number of transformer layers a local ``save_pretrained`` folder's config.json declares
    (``num_hidden_layers``, or GPT-2's ``n_layer``); None when the folder or the key is absent."""
    import json

    path = Path(folder).expanduser() / "config.json"
    if not path.is_file():
        return None
    try:
        config = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    depth = config.get("num_hidden_layers", config.get("n_layer"))
    return int(depth) if isinstance(depth, int) else None


def check_feature_layers(layers: list[int], depth: int, model: str) -> None:
    """Stop with one line when ``hurtful.downstream.layers`` (negative indices into the hidden states:
    the embeddings and one per transformer layer) reaches deeper than ``model``'s ``depth`` layers."""
    if max(-layer for layer in layers) > depth + 1:
        raise MedbiasInputError(
            f"config key 'hurtful.downstream.layers': {list(layers)} asks for more layers than "
            f"{model} has ({depth} transformer layers plus the embeddings)"
        )


def _architecture(folder: Path) -> tuple[str, list[str]]:
    import json

    try:
        config = json.loads((folder / "config.json").read_text())
    except (OSError, ValueError) as error:
        raise MedbiasInputError(f"{folder / 'config.json'}: not a readable JSON model config ({error})") from None
    return str(config.get("model_type", "")), [str(a) for a in config.get("architectures") or []]


def _kind_fits(kind: str, model_type: str, architectures: list[str]) -> bool:
    """Whether transformers has the class ``kind`` needs for ``model_type``; a model type that also
    has a masked-LM class is taken as causal only when its checkpoint says so (a BERT is not causal)."""
    from transformers.models.auto import modeling_auto as auto

    if kind == "encoder":
        return model_type in auto.MODEL_MAPPING_NAMES
    if kind == "masked":
        return model_type in auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES
    if kind == "seq2seq":
        return model_type in auto.MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES
    causal = model_type in auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    if model_type in auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES:
        return causal and any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in architectures)
    return causal


def check_local_checkpoint(name: str, folder: Path, kind: str) -> None:
    """Before any job: a local checkpoint has weights, a tokenizer, and an architecture that the
    declared kind fits (``kind: causal`` for a BERT, ``masked`` for a GPT-2: one line naming the entry)."""
    key = f"config key 'models.{name}"
    files = [p.name for p in folder.iterdir() if p.is_file()]
    if not any(f.endswith(WEIGHT_SUFFIXES) for f in files):
        raise MedbiasInputError(f"{key}.source': folder {folder} has no weights (*.safetensors or *.bin)")
    if not any(f in TOKENIZER_FILES for f in files):
        raise MedbiasInputError(
            f"{key}.source': folder {folder} has no tokenizer (tokenizer.json, vocab.txt, ...): "
            "save the tokenizer beside the model"
        )
    model_type, architectures = _architecture(folder)
    if not _kind_fits(kind, model_type, architectures):
        raise MedbiasInputError(
            f"{key}.kind': {kind!r} does not fit the checkpoint's architecture "
            f"({model_type or 'no model_type'}: {', '.join(architectures) or 'no architectures'})"
        )


LM_HEAD_CLASSES = (
    "ForMaskedLM",
    "ForPreTraining",
    "ForCausalLM",
    "LMHeadModel",
    "ForConditionalGeneration",
    "WithLMHead",
)


def declares_lm_head(entry: dict[str, Any]) -> bool:
    """Whether a registry entry is expected to carry a trained language-model head, as far as can be
    told before loading: not for ``kind: encoder``, not for a local checkpoint whose config.json
    names only head-less classes (``BertModel``, ``...ForSequenceClassification``); hub ids and
    checkpoints that name no class are taken at their word until the load-time check."""
    if entry["kind"] == "encoder":
        return False
    folder = Path(str(entry["source"])).expanduser()
    if not (folder / "config.json").is_file():
        return True
    _, architectures = _architecture(folder)
    return not architectures or any(a.endswith(LM_HEAD_CLASSES) for a in architectures)


def untrained_head_keys(model, missing_keys) -> list[str]:
    """The weights of ``model`` that the checkpoint did not hold (transformers' loading report) and
    that lie outside its base model: the language-model head was newly initialised, so any score read
    from it is noise. Missing weights of the base model itself stop with one line instead (the
    checkpoint is not the architecture it was loaded as)."""
    prefix = f"{model.base_model_prefix}."
    missing = sorted(missing_keys)
    inside = [k for k in missing if k.startswith(prefix)]
    if inside:
        raise MedbiasInputError(
            f"{model.name_or_path}: the checkpoint lacks {len(inside)} weights of the encoder "
            f"itself (e.g. {inside[0]}): it is not a {type(model).__name__}"
        )
    return missing


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
        str(path)
        for path in folder.rglob("*")
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    )


def job_device() -> str:
    """The device a job's models run on: ``cuda`` (the GPU SLURM granted the job, which CUDA numbers
    0) when torch sees one, otherwise ``cpu``."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def load_tokenizer(source: str | Path):
    """The tokenizer saved in a folder (or of a hub id)."""
    import transformers

    return transformers.AutoTokenizer.from_pretrained(str(source))


def load_config(source: str | Path, **overrides):
    """The model config of a folder (or hub id), with ``overrides`` set (e.g. dropout rates)."""
    import transformers

    return transformers.AutoConfig.from_pretrained(str(source), **overrides)


def load_encoder(source: str | Path, device: str = "cpu", pooling: bool = True, bf16_on_gpu: bool = False):
    """The base model of a checkpoint (no language-model head; ``pooling=False`` leaves out BERT's
    pooler, which [CLS] features do not read) in eval mode on ``device``; in bfloat16 when
    ``bf16_on_gpu`` and the GPU supports it."""
    import torch
    import transformers

    extra = {} if pooling else {"add_pooling_layer": False}
    encoder = transformers.AutoModel.from_pretrained(str(source), **extra).to(device).eval()
    if bf16_on_gpu and device != "cpu" and torch.cuda.is_bf16_supported():
        encoder = encoder.to(torch.bfloat16)
    return encoder


def load_for_pretraining(source: str | Path, config_overrides: dict | None = None):
    """A BERT checkpoint with both pretraining heads (masked LM and next-sentence prediction), for
    continued pretraining (``config_overrides``: e.g. dropout rates)."""
    import transformers

    return transformers.BertForPreTraining.from_pretrained(str(source), **(config_overrides or {}))


def load_next_sentence_head(source: str | Path, device: str = "cpu"):
    """(model, None): the checkpoint with its next-sentence-prediction head (BERT's pretraining
    objective), in eval mode on ``device``; or (None, reason) when its architecture has no such head or
    the checkpoint holds no trained one (it would be newly initialised)."""
    import transformers

    try:
        model, report = transformers.AutoModelForNextSentencePrediction.from_pretrained(
            str(source), output_loading_info=True
        )
    except ValueError as error:
        return None, f"not applicable: no next-sentence head for this architecture ({str(error).splitlines()[0]})"
    prefix = f"{model.base_model_prefix}."
    untrained = sorted(k for k in report["missing_keys"] if not k.startswith(prefix))
    if untrained:
        return (
            None,
            f"not applicable: the checkpoint has no trained next-sentence head (newly initialised: {untrained[0]})",
        )
    return model.to(device).eval(), None


def untrained_copy(source: str | Path, kind: ModelKind, seed: int):
    """A model of ``kind`` with the architecture of the checkpoint at ``source`` and fresh random
    weights drawn under torch seed ``seed``, in eval mode: a model that learned nothing."""
    import torch
    import transformers

    config = load_config(source)
    torch.manual_seed(seed)
    return getattr(transformers, _AUTO_CLASS[kind]).from_config(config).eval()


_AUTO_CLASS = {
    "masked": "AutoModelForMaskedLM",
    "causal": "AutoModelForCausalLM",
    "seq2seq": "AutoModelForSeq2SeqLM",
    "encoder": "AutoModel",
}


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
            f"model '{model.name}' ({model.source}) is OFA-based: transformers has no loader for it; install "
            f"an OFA loader or remove it from the registry"
        )
    auto = getattr(transformers, _AUTO_CLASS[model.kind])
    tokenizer = load_tokenizer(model.source)
    try:
        config = load_config(model.source, **(config_overrides or {}))
        placement = weight_placement(model.name, parameter_count(auto, config), model.dtype, device)
        lm, report = auto.from_pretrained(
            model.source, config=config, dtype=getattr(torch, model.dtype), output_loading_info=True, **placement
        )
    except ValueError as error:  # transformers: no class of this kind for the checkpoint's configuration
        raise MedbiasInputError(
            f"model '{model.name}' ({model.source}): kind {model.kind!r} does not fit: {str(error).splitlines()[0]}"
        ) from None
    # which head weights were newly initialised: read by lm_head_problem()
    lm.medbias_untrained_head = [] if model.kind == "encoder" else untrained_head_keys(lm, report["missing_keys"])
    if placement.get("device_map") == "auto":
        lm.eval()  # spread over the job's GPUs by accelerate: inputs go to the first layer's device
    else:
        lm.to(device).eval()
    return lm, tokenizer


def weight_placement(name: str, parameters: int, dtype: str, device: str) -> dict[str, Any]:
    """Where ``from_pretrained`` puts the weights, after the fit check: nowhere special on the CPU;
    straight onto the GPU (a 13 B model in bf16 never passes through the host's memory whole); and
    when the weights fit none of the job's GPUs alone but fit all of them together, spread across
    them (``device_map="auto"``). Too large for all of them: one line saying so, before loading."""
    if device == "cpu":
        check_fits(name, parameters, dtype, device, available_memory(device))
        return {}
    import torch

    free = [int(torch.cuda.mem_get_info(torch.device(f"cuda:{i}"))[0]) for i in range(torch.cuda.device_count())]
    if len(free) > 1 and parameters * BYTES_PER_PARAMETER[dtype] > free[0]:
        check_fits(name, parameters, dtype, f"{len(free)} GPUs together", sum(free))
        return {"device_map": "auto"}
    check_fits(name, parameters, dtype, device, available_memory(device))
    return {"device_map": device}


BYTES_PER_PARAMETER = {"float32": 4, "bfloat16": 2, "float16": 2}


def parameter_count(auto_class, config) -> int:
    """Parameters of the model ``auto_class`` builds from ``config``, counted on the meta device
    (no memory is allocated)."""
    import torch

    with torch.device("meta"):
        return sum(p.numel() for p in auto_class.from_config(config).parameters())


def available_memory(device: str) -> int:
    """Bytes the job can fill on ``device``: free memory of the GPU, or on the CPU the smaller of the
    cgroup's limit (what SLURM granted) and the memory the kernel reports available."""
    import torch

    if device != "cpu":
        return int(torch.cuda.mem_get_info(torch.device(device))[0])
    limits = []
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            value = Path(path).read_text().strip()
        except OSError:
            continue
        if value.isdigit():
            limits.append(int(value))
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                limits.append(int(line.split()[1]) * 1024)
    except OSError:
        pass
    return min(limits) if limits else 2**62


def check_fits(name: str, parameters: int, dtype: str, device: str, available: int) -> None:
    """Stop with one line, before any weight is loaded, when the parameters alone (count x bytes per
    parameter of ``dtype``) exceed the memory the job has on ``device`` (an out-of-memory kill would
    say nothing about which model or why)."""
    needed = parameters * BYTES_PER_PARAMETER[dtype]
    if needed > available:
        raise MedbiasInputError(
            f"model '{name}' needs about {needed / 2**30:.1f} GiB on {device} ({parameters:,} parameters x "
            f"{BYTES_PER_PARAMETER[dtype]} bytes in {dtype}) but the job has {available / 2**30:.1f} GiB: ask for "
            "more memory or a larger GPU (set-resources in the profile), or a smaller dtype in the registry"
        )


def lm_head_problem(model, kind: str) -> str | None:
    """Why a loaded model gives no likelihood-based score (StereoSet-style, log-probability,
    fill-in-the-blank, Dropout), or None when its language-model head was loaded trained."""
    if kind == "encoder":
        return "not applicable: kind encoder has no language-model head"
    untrained = getattr(model, "medbias_untrained_head", [])
    if untrained:
        shown = ", ".join(untrained[:3]) + (f" and {len(untrained) - 3} more" if len(untrained) > 3 else "")
        return f"not applicable: the checkpoint has no trained language-model head (newly initialised: {shown})"
    return None
