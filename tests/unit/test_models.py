"""The registry: hub ids and local folders resolve, and the tiny models load with the real loader."""

from __future__ import annotations

import json

import pytest
import torch

from medbias.core.errors import MedbiasInputError
from medbias.core.models import load_model_and_tokenizer, resolve_model_source
from medbias.synth.tiny_models import build_tiny_model, train_byte_bpe, train_wordpiece

TEXTS = ["she has afib on diltiazem drip.", "he reports alcohol abuse on ciwa scale.", "t 98.6 f hr 80"] * 50
SMALL = {
    "bert": dict(
        hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32, max_position_embeddings=64
    ),
    "gpt2": dict(n_embd=16, n_layer=1, n_head=2, n_positions=64),
    "bart": dict(
        d_model=16,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=64,
    ),
}
KIND = {"bert": "masked", "gpt2": "causal", "bart": "seq2seq"}


@pytest.mark.parametrize("source", ["bert-base-cased", "allenai/scibert_scivocab_uncased", "gpt2"])
def test_hub_ids_resolve_without_network(source):
    model = resolve_model_source("m", {"source": source, "kind": "masked"})
    assert not model.is_local and model.source == source


def test_folder_without_config_is_rejected(tmp_path):
    with pytest.raises(MedbiasInputError, match="has no config.json"):
        resolve_model_source("m", {"source": str(tmp_path), "kind": "masked"})


def test_ofa_loader_gives_one_clear_error():
    model = resolve_model_source(
        "biomedgpt", {"source": "PanaceaAI/BiomedGPT-Base-Pretrained", "kind": "seq2seq", "loader": "ofa"}
    )
    with pytest.raises(MedbiasInputError, match="biomedgpt.*OFA-based"):
        load_model_and_tokenizer(model)


@pytest.mark.parametrize("arch", ["bert", "gpt2", "bart"])
def test_tiny_models_round_trip_through_the_registry_loader(tmp_path, arch):
    tokenizer = (
        train_wordpiece(TEXTS, 200) if arch == "bert" else train_byte_bpe(TEXTS, 300, add_bos_eos=arch == "bart")
    )
    model = build_tiny_model(arch, tokenizer, SMALL[arch], seed=1)
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    source = resolve_model_source(arch, {"source": str(tmp_path), "kind": KIND[arch]})
    assert source.is_local
    loaded, loaded_tokenizer = load_model_and_tokenizer(source)
    batch = loaded_tokenizer(["she has afib"], return_tensors="pt")
    with torch.inference_mode():
        if arch == "bart":
            logits = loaded(**batch, decoder_input_ids=batch["input_ids"]).logits
        else:
            logits = loaded(**batch).logits
    assert logits.shape[-1] == len(tokenizer)
    rebuilt = build_tiny_model(arch, tokenizer, SMALL[arch], seed=1)
    for name, tensor in rebuilt.state_dict().items():  # same seed, same weights
        assert torch.equal(tensor, model.state_dict()[name]), name


def test_wordpiece_vocabulary_merges_by_count_then_alphabetically():
    """Hand-computed: 'aab' x3 and 'ab' x2 start as a ##a ##b and a ##b. (a, ##a) and (##a, ##b) both
    count 3; the tie goes to ('##a', '##b') (alphabetically first), then (a, ##ab) = 3, then (a, ##b) = 2."""
    from medbias.synth.tiny_models import wordpiece_vocabulary

    vocab = wordpiece_vocabulary({"aab": 3, "ab": 2}, vocab_size=10, special=["[PAD]"])
    assert vocab == ["[PAD]", "##a", "##b", "a", "##ab", "aab", "ab"]
    assert wordpiece_vocabulary({"aab": 3, "ab": 2}, vocab_size=5, special=["[PAD]"])[-1] == "##ab"


def test_wordpiece_tokenizer_is_identical_across_processes():
    """The tokenizers library's trainer numbered '##' characters in hash-map order, so two processes
    trained different vocabularies from the same texts; ours must not."""
    import subprocess
    import sys

    code = (
        "import json, random\n"
        "from medbias.synth.tiny_models import train_wordpiece\n"
        "rng = random.Random(0)\n"
        "words = [''.join(rng.choice('abcdefghij') for _ in range(rng.randint(2, 9))) for _ in range(400)]\n"
        "texts = [' '.join(rng.choice(words) for _ in range(12)) for _ in range(300)]\n"
        "print(json.dumps(sorted(train_wordpiece(texts, 300).get_vocab().items())))\n"
    )
    runs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        for _ in range(3)
    }
    assert len(runs) == 1
    vocab = dict(json.loads(runs.pop()))
    assert len(vocab) == 300 and vocab["[PAD]"] == 0


def _save_bert(folder, head: bool, tokenizer=True):
    """A tiny BERT saved with its masked-LM head, or as a bare encoder (like a sentence-transformer)."""
    from transformers import BertConfig, BertForMaskedLM, BertModel

    words = train_wordpiece(TEXTS, 120)
    config = BertConfig(vocab_size=len(words), **SMALL["bert"])
    torch.manual_seed(0)
    (BertForMaskedLM if head else BertModel)(config).save_pretrained(folder)
    if tokenizer:
        words.save_pretrained(folder)
    return folder


def test_a_checkpoint_without_its_lm_head_is_found_and_refused_for_likelihoods(tmp_path):
    from medbias.core.models import lm_head_problem

    bare = resolve_model_source("bare", {"source": str(_save_bert(tmp_path / "bare", head=False)), "kind": "masked"})
    model, _ = load_model_and_tokenizer(bare)
    problem = lm_head_problem(model, "masked")
    assert problem.startswith("not applicable: the checkpoint has no trained language-model head")
    assert "cls.predictions.bias" in problem and "more" in problem  # the newly initialised weights, named
    whole = resolve_model_source("whole", {"source": str(_save_bert(tmp_path / "whole", head=True)), "kind": "masked"})
    assert lm_head_problem(load_model_and_tokenizer(whole)[0], "masked") is None
    encoder = resolve_model_source("enc", {"source": str(tmp_path / "bare"), "kind": "encoder"})
    model, _ = load_model_and_tokenizer(encoder)
    assert type(model).__name__ == "BertModel" and lm_head_problem(model, "encoder").startswith(
        "not applicable: kind encoder"
    )


def test_declared_lm_head_from_the_checkpoint_config(tmp_path):
    from medbias.core.models import declares_lm_head

    assert not declares_lm_head({"source": str(_save_bert(tmp_path / "bare", head=False)), "kind": "masked"})
    assert declares_lm_head({"source": str(_save_bert(tmp_path / "whole", head=True)), "kind": "masked"})
    assert not declares_lm_head({"source": str(tmp_path / "whole"), "kind": "encoder"})
    assert declares_lm_head({"source": "bert-base-uncased", "kind": "masked"})  # a hub id: checked at load time


@pytest.mark.parametrize(
    ("kind", "make", "message"),
    [
        (
            "causal",
            lambda f: _save_bert(f, head=True),
            r"models\.m\.kind': 'causal' does not fit the checkpoint's "
            r"architecture \(bert: BertForMaskedLM\)",
        ),
        (
            "masked",
            lambda f: _save_bert(f, head=True, tokenizer=False),
            r"models\.m\.source': folder .* has no tokenizer",
        ),
        (
            "masked",
            lambda f: (
                f.mkdir(),
                (f / "config.json").write_text('{"model_type": "bert"}'),
                (f / "vocab.txt").write_text("a\n"),
            ),
            r"models\.m\.source': folder .* has no weights",
        ),
    ],
)
def test_local_checkpoints_that_cannot_serve_their_kind_stop_with_one_line(tmp_path, kind, make, message):
    make(tmp_path / "model")
    with pytest.raises(MedbiasInputError, match=rf"^config key '{message}"):
        resolve_model_source("m", {"source": str(tmp_path / "model"), "kind": kind})


def test_a_gpt2_folder_declared_masked_stops(tmp_path):
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = train_byte_bpe(TEXTS, 300, add_bos_eos=False)
    GPT2LMHeadModel(GPT2Config(vocab_size=len(tokenizer), **SMALL["gpt2"])).save_pretrained(tmp_path / "g")
    tokenizer.save_pretrained(tmp_path / "g")
    with pytest.raises(MedbiasInputError, match=r"models\.m\.kind': 'masked' does not fit .*gpt2: GPT2LMHeadModel"):
        resolve_model_source("m", {"source": str(tmp_path / "g"), "kind": "masked"})
    assert resolve_model_source("m", {"source": str(tmp_path / "g"), "kind": "causal"}).kind == "causal"


def test_parameters_are_counted_without_memory_and_a_model_that_cannot_fit_stops():
    import transformers

    from medbias.core.models import check_fits, parameter_count

    config = transformers.BertConfig(vocab_size=100, **SMALL["bert"])
    built = transformers.BertForMaskedLM(config)
    assert parameter_count(transformers.AutoModelForMaskedLM, config) == sum(p.numel() for p in built.parameters())
    # LLaMA-2 13B in bf16 on a 24 GiB GPU: 13,015,864,320 x 2 bytes = 24.2 GiB
    with pytest.raises(
        MedbiasInputError,
        match=r"^model 'llama2_13b' needs about 24\.2 GiB on cuda:0 "
        r"\(13,015,864,320 parameters x 2 bytes in bfloat16\) but the job has 24\.0 GiB",
    ):
        check_fits("llama2_13b", 13_015_864_320, "bfloat16", "cuda:0", 24 * 2**30)
    check_fits("llama2_13b", 13_015_864_320, "bfloat16", "cuda:0", 80 * 2**30)  # an 80 GB GPU holds it
    check_fits("tiny", 1000, "float32", "cpu", 4000)
    with pytest.raises(MedbiasInputError, match="needs about 0.0 GiB on cpu"):
        check_fits("tiny", 1001, "float32", "cpu", 4000)


def test_the_other_doors_load_the_saved_weights_and_fresh_copies_follow_their_seed(tmp_path):
    """A tiny BERT with both pretraining heads, saved: load_for_pretraining gives back its weights (with
    config overrides applied), load_encoder its encoder with or without the pooler, load_tokenizer its
    tokenizer; untrained_copy builds the same architecture with new weights, equal for one seed and
    different for another; the job's device on this machine is the CPU."""
    from medbias.core.models import (
        job_device,
        load_config,
        load_encoder,
        load_for_pretraining,
        load_tokenizer,
        untrained_copy,
    )

    tokenizer = train_wordpiece(TEXTS, 200)
    model = build_tiny_model("bert", tokenizer, SMALL["bert"], seed=1)
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    assert load_tokenizer(tmp_path).get_vocab() == tokenizer.get_vocab()
    assert load_config(tmp_path, hidden_dropout_prob=0.3).hidden_dropout_prob == 0.3
    pretraining = load_for_pretraining(tmp_path, {"hidden_dropout_prob": 0.2})
    assert pretraining.config.hidden_dropout_prob == 0.2
    for name, tensor in model.state_dict().items():
        assert torch.equal(tensor, pretraining.state_dict()[name]), name
    encoder = load_encoder(tmp_path, pooling=False)
    assert encoder.pooler is None and not encoder.training
    assert torch.equal(encoder.embeddings.word_embeddings.weight, model.bert.embeddings.word_embeddings.weight)
    assert load_encoder(tmp_path).pooler is not None
    first, again, other = (untrained_copy(tmp_path, "masked", seed) for seed in (5, 5, 6))
    weights = "bert.encoder.layer.0.attention.self.query.weight"
    assert torch.equal(first.state_dict()[weights], again.state_dict()[weights])
    assert not torch.equal(first.state_dict()[weights], other.state_dict()[weights])
    assert not torch.equal(first.state_dict()[weights], model.state_dict()[weights])
    assert job_device() == ("cuda" if torch.cuda.is_available() else "cpu")


def test_a_model_too_large_for_one_gpu_is_spread_over_the_jobs_gpus(monkeypatch):
    """weight_placement with two GPUs of 10 GiB free each (torch.cuda answered by hand): 8 GiB of bf16
    weights go onto the GPU, 16 GiB are spread across both (device_map auto), 24 GiB stop with one line."""
    import torch

    from medbias.core.errors import MedbiasInputError
    from medbias.core.models import weight_placement

    free = 10 * 2**30
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (free, 80 * 2**30))
    gib = 2**30 // 2  # bf16 parameters per GiB
    assert weight_placement("m", 8 * gib, "bfloat16", "cuda") == {"device_map": "cuda"}
    assert weight_placement("m", 16 * gib, "bfloat16", "cuda") == {"device_map": "auto"}
    with pytest.raises(MedbiasInputError, match=r"model 'm' needs about 24\.0 GiB on 2 GPUs together .* has 20\.0 GiB"):
        weight_placement("m", 24 * gib, "bfloat16", "cuda")
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    with pytest.raises(MedbiasInputError, match=r"needs about 16\.0 GiB on cuda"):
        weight_placement("m", 16 * gib, "bfloat16", "cuda")
