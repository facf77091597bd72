"""Pretraining pieces: NSP pairs, whole-word masking with the 80/10/10 rule, gradient reversal, and
the proof that the adversary's reversed gradient reaches the encoder."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import BertConfig, BertForPreTraining

from medbias.studies.hurtful.pretrain import AdversarialPretrainer, make_nsp_pairs, reverse_gradient, whole_word_mask


def test_nsp_pairs_half_true_and_never_across_note_ends():
    notes = np.repeat(np.arange(200), 6)
    pairs = make_nsp_pairs(notes, np.random.default_rng(0))
    assert len(pairs) == 200 * 5  # the last sequence of each note has no successor
    true = [p for p in pairs if p.is_next]
    assert 0.45 < len(true) / len(pairs) < 0.55
    assert all(p.second == p.first + 1 and notes[p.second] == notes[p.first] for p in true)
    assert all(notes[p.second] != notes[p.first] for p in pairs if not p.is_next)


def test_whole_word_masking_rates_and_word_integrity():
    generator = torch.Generator().manual_seed(0)
    n_words, pieces_per_word = 40, 3
    ids = torch.arange(100, 100 + n_words * pieces_per_word)
    word_ids = [None] + [w for w in range(n_words) for _ in range(pieces_per_word)][1:]  # first piece special
    chosen = replaced = randomised = kept = 0
    for _ in range(400):
        masked, labels = whole_word_mask(ids, word_ids, mask_token_id=1, vocab_size=1000, generator=generator)
        assert labels[0] == -100  # special tokens are never masked
        for w in range(1, n_words):  # every piece of a word is chosen together
            span = [i for i, x in enumerate(word_ids) if x == w]
            states = {bool(labels[i] != -100) for i in span}
            assert len(states) == 1
            if states.pop():
                chosen += 1
                if all(masked[i] == 1 for i in span):
                    replaced += 1
                elif all(masked[i] == ids[i] for i in span):
                    kept += 1
                else:
                    randomised += 1
    assert chosen / (400 * (n_words - 1)) == pytest.approx(0.15, abs=0.01)
    assert replaced / chosen == pytest.approx(0.8, abs=0.03)
    assert kept / chosen == pytest.approx(0.1, abs=0.03) and randomised / chosen == pytest.approx(0.1, abs=0.03)


def test_reverse_gradient_flips_and_scales():
    x = torch.ones(3, requires_grad=True)
    (reverse_gradient(x, 0.5) * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert torch.equal(x.grad, torch.tensor([-0.5, -1.0, -1.5]))


def _batch(vocab=50, batch=6, length=12):
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(5, vocab, (batch, length), generator=g)
    return dict(
        input_ids=ids,
        attention_mask=torch.ones_like(ids),
        token_type_ids=torch.zeros_like(ids),
        mlm_labels=torch.where(torch.rand(batch, length, generator=g) < 0.2, ids, torch.full_like(ids, -100)),
        nsp_labels=torch.randint(0, 2, (batch,), generator=g),
        attribute=torch.randint(0, 2, (batch,), generator=g),
    )


def test_adversarial_gradient_reaches_the_encoder_reversed():
    torch.manual_seed(0)
    bert = BertForPreTraining(
        BertConfig(
            vocab_size=50,
            hidden_size=16,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=32,
            max_position_embeddings=32,
        )
    )
    model = AdversarialPretrainer(bert, n_classes=2, weight=1.0)
    batch = _batch()
    _, losses = model(**batch)
    adversary_loss = sum(v for k, v in losses.items() if k.startswith("adversary"))
    assert adversary_loss.item() > 0
    # gradient of the adversary's loss alone, through the reversal, at an encoder weight
    encoder_weight = bert.bert.encoder.layer[0].attention.self.query.weight
    out = bert(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], output_hidden_states=True)
    cls = out.hidden_states[-1][:, 0]
    adv = sum(
        torch.nn.functional.cross_entropy(d(reverse_gradient(cls, 1.0)), batch["attribute"])
        for d in model.discriminators
    )
    reversed_grad = torch.autograd.grad(adv, encoder_weight, retain_graph=True)[0]
    plain = sum(torch.nn.functional.cross_entropy(d(cls), batch["attribute"]) for d in model.discriminators)
    plain_grad = torch.autograd.grad(plain, encoder_weight)[0]
    assert reversed_grad.abs().sum() > 0  # it reaches the encoder
    assert torch.allclose(reversed_grad, -plain_grad)  # reversed
    # and through the module's own forward: the full loss's encoder gradient differs from the baseline's
    model.zero_grad()
    loss, _ = model(**batch)
    loss.backward()
    with_adversary = encoder_weight.grad.clone()
    model.zero_grad()
    base_loss, _ = model(**{k: v for k, v in batch.items() if k != "attribute"})
    base_loss.backward()
    assert not torch.allclose(with_adversary, encoder_weight.grad)


def test_pretraining_loss_and_gradients_equal_bert_for_pretraining():
    """The MLM head on the masked positions only gives BertForPreTraining's own loss (MLM over the
    labelled tokens + NSP) and the same gradients: the other positions add nothing."""
    torch.manual_seed(0)
    bert = BertForPreTraining(
        BertConfig(
            vocab_size=50,
            hidden_size=16,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=32,
            max_position_embeddings=32,
            hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
        )
    )
    model = AdversarialPretrainer(bert, n_classes=0)
    batch = _batch()
    batch["attention_mask"][:, -3:] = 0  # padding at the end of every row
    ours, losses = model(**batch)
    ours.backward()
    ours_grads = {name: p.grad.clone() for name, p in bert.named_parameters() if p.grad is not None}
    bert.zero_grad()
    peer = bert(
        input_ids=batch["input_ids"],
        attention_mask=batch["attention_mask"],
        token_type_ids=batch["token_type_ids"],
        labels=batch["mlm_labels"],
        next_sentence_label=batch["nsp_labels"],
    ).loss
    peer.backward()
    assert torch.isclose(ours, peer, atol=1e-6) and torch.isclose(losses["mlm_nsp"], peer, atol=1e-6)
    peer_grads = {name: p.grad for name, p in bert.named_parameters() if p.grad is not None}
    assert ours_grads.keys() == peer_grads.keys() and len(peer_grads) > 10
    for name, grad in peer_grads.items():
        assert torch.allclose(ours_grads[name], grad, atol=1e-6), name


def _tiny_pretrainer(seed=0):
    torch.manual_seed(seed)
    bert = BertForPreTraining(
        BertConfig(
            vocab_size=50,
            hidden_size=16,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=32,
            max_position_embeddings=32,
            hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
        )
    )
    return AdversarialPretrainer(bert, n_classes=2, weight=1.0)


def _batch_at(step):
    g = torch.Generator().manual_seed(1000 + step)  # data and masking seeded by the step
    ids = torch.randint(5, 50, (4, 10), generator=g)
    return dict(
        input_ids=ids,
        attention_mask=torch.ones_like(ids),
        token_type_ids=torch.zeros_like(ids),
        mlm_labels=torch.where(torch.rand(4, 10, generator=g) < 0.3, ids, torch.full_like(ids, -100)),
        nsp_labels=torch.randint(0, 2, (4,), generator=g),
        attribute=torch.randint(0, 2, (4,), generator=g),
    )


def test_killed_run_resumes_to_the_same_weights(tmp_path):
    from medbias.studies.hurtful.pretrain import train_steps

    def evaluate(model):  # a number that depends on the weights
        return {"weight_sum": float(model.model.cls.predictions.bias.detach().sum())}

    straight, straight_record = _tiny_pretrainer(), []
    assert (
        train_steps(
            straight,
            _batch_at,
            8,
            1e-2,
            2,
            str(tmp_path / "a"),
            checkpoint_every=3,
            evaluate=evaluate,
            eval_every=2,
            record=straight_record,
        )
        == 8
    )
    interrupted = _tiny_pretrainer()
    assert (
        train_steps(
            interrupted,
            _batch_at,
            8,
            1e-2,
            2,
            str(tmp_path / "b"),
            checkpoint_every=3,
            stop_after=5,
            evaluate=evaluate,
            eval_every=2,
            record=[],
        )
        == 5
    )
    resumed, resumed_record = _tiny_pretrainer(seed=99), []  # a fresh process: other weights, restored from step 3
    assert (
        train_steps(
            resumed,
            _batch_at,
            8,
            1e-2,
            2,
            str(tmp_path / "b"),
            checkpoint_every=3,
            evaluate=evaluate,
            eval_every=2,
            record=resumed_record,
        )
        == 8
    )
    for (name, a), b in zip(straight.state_dict().items(), resumed.state_dict().values()):
        assert torch.equal(a, b), name
    # the evaluation record (steps 2, 4, 6, 8) survives the kill: steps 2 from the checkpoint, 4-8 recomputed
    assert [r["step"] for r in resumed_record] == [2, 4, 6, 8]
    assert resumed_record == straight_record
    untrained = _tiny_pretrainer()
    assert not torch.equal(
        untrained.state_dict()["model.cls.predictions.bias"], straight.state_dict()["model.cls.predictions.bias"]
    )


def test_pretraining_data_and_deterministic_batches():
    import pandas as pd

    from medbias.studies.hurtful.pretrain import batch_maker, build_pretraining_data
    from medbias.synth.tiny_models import train_wordpiece

    texts = ["he has chf and copd .", "she reports depression on sertraline .", "pain controlled , sleeping well ."]
    tokenizer = train_wordpiece(texts * 30, 150)
    sequences = pd.DataFrame(
        {
            "ROW_ID": np.repeat(np.arange(1, 31), 4),
            "SUBJECT_ID": np.repeat(np.arange(101, 131), 4),
            "HADM_ID": np.repeat(np.arange(1001, 1031), 4),
            "seq_index": np.tile(np.arange(4), 30),
            "text": [texts[i % 3] for i in range(120)],
        }
    )
    demographics = pd.DataFrame(
        {
            "HADM_ID": np.arange(1001, 1031),
            "gender": ["M", "F"] * 15,
            "language": "English",
            "ethnicity": "WHITE",
            "insurance": "Medicare",
        }
    )
    data = build_pretraining_data(sequences, demographics, tokenizer, 32, seed=0, exclude_subjects={101, 102})
    assert data.excluded_subjects == 2 and len(data.input_ids) == 28 * 3
    first, second = data.attributes["gender"]
    assert set(first) == {0, 1} and len(second) == len(first)
    types = data.token_type_ids[0]
    assert types[0] == 0 and types[-1] == 1 and types == sorted(types)  # [CLS] A [SEP] are 0, B [SEP] are 1
    batch_at, per_epoch = batch_maker(data, tokenizer, 8, seed=5, attribute="gender")
    a, b = batch_at(3), batch_at(3)
    assert all(torch.equal(a[k], b[k]) for k in a)  # the same step gives the same batch (resumable)
    assert not torch.equal(batch_at(4)["input_ids"], a["input_ids"])
    assert (a["mlm_labels"] != -100).any() and set(a["nsp_labels"].tolist()) <= {0, 1}
    sample = data.sample(20, seed=3)
    assert len(sample.input_ids) == 20 and sample.input_ids == data.sample(20, seed=3).input_ids

    def pairs(d):  # every field of each pair, so a sampled pair must keep its own fields together
        return [
            (
                tuple(d.input_ids[i]),
                tuple(d.token_type_ids[i]),
                tuple(d.word_keys[i]),
                d.nsp_labels[i],
                d.attributes["gender"][0][i],
                d.attributes["gender"][1][i],
            )
            for i in range(len(d.input_ids))
        ]

    from collections import Counter

    assert not Counter(pairs(sample)) - Counter(pairs(data))
    assert sample.input_ids != data.input_ids[:20]  # drawn from the whole set, not its first pairs
    assert len(data.sample(10_000, seed=3).input_ids) == len(data.input_ids)


def test_discriminator_evaluation_standardises_with_the_evaluated_set():
    """Held-out logits use the set's own mean and variance: a drift of every [CLS] by a constant (as
    while the encoder trains) changes nothing, and the running statistics are left alone."""
    from medbias.studies.hurtful.pretrain import Discriminator

    torch.manual_seed(0)
    disc = Discriminator(8, 2)
    disc.train()
    disc(torch.randn(64, 8) * 3 + 1)  # running statistics move away from (0, 1)
    disc.eval()
    running = disc.layers[0].running_mean.clone()
    cls = torch.randn(100, 8) * 0.01 + 0.8
    expected = disc.layers[1:]((cls - cls.mean(0)) / torch.sqrt(cls.var(0, unbiased=False) + disc.layers[0].eps))
    torch.testing.assert_close(disc.population_logits(cls), expected)
    torch.testing.assert_close(disc.population_logits(cls + 5.0), expected, atol=1e-3, rtol=1e-3)
    assert torch.equal(disc.layers[0].running_mean, running)
    assert not torch.allclose(disc(cls), expected, atol=1e-2)  # running statistics would mislead here


@pytest.mark.parametrize("attribute", ["language", "ethnicity", "insurance"])
def test_every_attribute_trains_an_adversary_with_its_classes(attribute):
    import pandas as pd
    from transformers import BertConfig, BertForPreTraining

    from medbias.studies.hurtful.demographics import ATTRIBUTE_CLASSES
    from medbias.studies.hurtful.pretrain import AdversarialPretrainer, batch_maker, build_pretraining_data
    from medbias.synth.tiny_models import train_wordpiece

    texts = ["he has chf and copd .", "she reports depression .", "pain controlled ."]
    tokenizer = train_wordpiece(texts * 30, 150)
    n = 24
    sequences = pd.DataFrame(
        {
            "ROW_ID": np.repeat(np.arange(n), 3),
            "SUBJECT_ID": np.repeat(np.arange(n), 3),
            "HADM_ID": np.repeat(np.arange(n), 3),
            "seq_index": np.tile(np.arange(3), n),
            "text": [texts[i % 3] for i in range(3 * n)],
        }
    )
    classes = ATTRIBUTE_CLASSES[attribute]
    values = [classes[i % len(classes)] for i in range(n)]
    values[0] = "SOMETHING ELSE"  # an unexpected value falls into the last class, never out of range
    demographics = pd.DataFrame(
        {"HADM_ID": np.arange(n), "gender": "M", "language": "English", "ethnicity": "WHITE", "insurance": "Medicare"}
    )
    demographics[attribute] = values
    data = build_pretraining_data(sequences, demographics, tokenizer, 32, seed=0)
    first, _ = data.attributes[attribute]
    assert set(first) == set(range(len(classes)))
    batch_at, _ = batch_maker(data, tokenizer, 16, seed=0, attribute=attribute)
    bert = BertForPreTraining(
        BertConfig(
            vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32
        )
    )
    model = AdversarialPretrainer(bert, n_classes=len(classes))
    loss, losses = model(**batch_at(0))
    loss.backward()
    assert {"adversary_0", "adversary_1"} <= set(losses) and torch.isfinite(loss)


def test_adversary_warmup_keeps_the_reversed_gradient_from_the_encoder():
    torch.manual_seed(0)
    bert = BertForPreTraining(
        BertConfig(
            vocab_size=50,
            hidden_size=16,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=32,
            max_position_embeddings=32,
            hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
        )
    )
    model = AdversarialPretrainer(bert, n_classes=2, weight=1.0)
    batch = _batch()
    encoder_weight = bert.bert.encoder.layer[0].attention.self.query.weight
    grads = {}
    for name, extra in (
        ("off", {"reversal_on": torch.tensor(0.0)}),
        ("baseline", {"attribute": None}),
        ("on", {"reversal_on": torch.tensor(1.0)}),
    ):
        model.zero_grad()
        loss, _ = model(**{**batch, **extra})
        loss.backward()
        grads[name] = encoder_weight.grad.clone()
        if name == "off":
            assert model.discriminators[0].layers[1].weight.grad.abs().sum() > 0  # the adversary still learns
    assert torch.allclose(grads["off"], grads["baseline"])  # nothing of the adversary reaches the encoder
    assert not torch.allclose(grads["on"], grads["baseline"])


def test_length_chunks_give_the_whole_batchs_loss_and_gradients():
    """The encoder run over runs of rows of similar length, each trimmed to its longest row: the loss
    (MLM + NSP + both adversaries, whose batch norm standardises over every row) and every gradient
    equal the unchunked step's up to rounding."""
    batch = _batch(batch=8, length=12)
    lengths = torch.tensor([12, 3, 7, 12, 5, 9, 4, 10])
    batch["attention_mask"] = (torch.arange(12)[None, :] < lengths[:, None]).long()
    batch["mlm_labels"][batch["attention_mask"] == 0] = -100  # no label on padding
    batch["mlm_labels"][:, 1] = batch["input_ids"][:, 1]  # a label in every row
    results = []
    for chunks in (1, 3):
        model = _tiny_pretrainer(seed=4)
        model.length_chunks = chunks
        loss, losses = model(**batch)
        loss.backward()
        grads = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}
        results.append((loss.detach(), losses, grads))
    (plain, plain_parts, plain_grads), (chunked, chunked_parts, chunked_grads) = results
    assert torch.isclose(plain, chunked, atol=1e-6) and set(plain_parts) == {"mlm_nsp", "adversary_0", "adversary_1"}
    assert all(torch.isclose(plain_parts[k], chunked_parts[k], atol=1e-6) for k in plain_parts)
    assert plain_grads.keys() == chunked_grads.keys() and len(plain_grads) > 10
    for name, grad in plain_grads.items():
        assert torch.allclose(chunked_grads[name], grad, atol=1e-6), name


def test_length_chunks_sort_rows_by_length_and_trim_each_run():
    from medbias.core.batching import length_chunks

    mask = (torch.arange(6)[None, :] < torch.tensor([6, 1, 4, 2, 5, 3])[:, None]).long()
    runs = length_chunks(mask, 3)
    assert [(rows.tolist(), width) for rows, width in runs] == [([1, 3], 2), ([5, 2], 4), ([4, 0], 6)]
    ((rows, width),) = length_chunks(mask, 1)
    assert rows.tolist() == list(range(6)) and width == 6
    assert len(length_chunks(mask, 10)) == 6  # never an empty run
