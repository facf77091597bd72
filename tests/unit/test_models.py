"""The registry: hub ids and local folders resolve, and the tiny models load with the real loader."""

from __future__ import annotations

import json

import pytest
import torch

from medbias.errors import MedbiasInputError
from medbias.models import load_model_and_tokenizer, resolve_model_source
from medbias.synth.tiny_models import build_tiny_model, train_byte_bpe, train_wordpiece

TEXTS = ["she has afib on diltiazem drip.", "he reports alcohol abuse on ciwa scale.", "t 98.6 f hr 80"] * 50
SMALL = {
    "bert": dict(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32, max_position_embeddings=64),
    "gpt2": dict(n_embd=16, n_layer=1, n_head=2, n_positions=64),
    "bart": dict(d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2, decoder_attention_heads=2,
                 encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=64),
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
    model = resolve_model_source("biomedgpt", {"source": "PanaceaAI/BiomedGPT-Base-Pretrained", "kind": "seq2seq",
                                               "loader": "ofa"})
    with pytest.raises(MedbiasInputError, match="biomedgpt.*OFA-based"):
        load_model_and_tokenizer(model)


@pytest.mark.parametrize("arch", ["bert", "gpt2", "bart"])
def test_tiny_models_round_trip_through_the_registry_loader(tmp_path, arch):
    tokenizer = train_wordpiece(TEXTS, 200) if arch == "bert" else train_byte_bpe(TEXTS, 300, add_bos_eos=arch == "bart")
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
    runs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
            for _ in range(3)}
    assert len(runs) == 1
    vocab = dict(json.loads(runs.pop()))
    assert len(vocab) == 300 and vocab["[PAD]"] == 0
