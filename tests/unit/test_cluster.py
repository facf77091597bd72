"""The cluster helpers: opt-in caching, and data-parallel training in one process per GPU, run here
on the CPU with two processes (gloo) against the one-process result."""

from __future__ import annotations

import json
import os

import pytest
import torch
from torch import nn

from medbias.pipeline.cluster import processes_for_gpus, run_in_processes, usable_cache_rules
from medbias.studies.hurtful.pretrain import shard_batch, train_steps


def test_cache_rules_kept_only_with_a_cache_location():
    rules = ["rios_word2vec", "hurtful_pretrain"]
    kept, notice = usable_cache_rules(rules, {"SNAKEMAKE_OUTPUT_CACHE": "/shared/cache"})
    assert kept == rules and notice is None
    dropped, notice = usable_cache_rules(rules, {})
    assert dropped is None
    assert notice.startswith("medbias: output caching is off") and "rios_word2vec, hurtful_pretrain" in notice
    assert "\n" not in notice
    assert usable_cache_rules(rules, {"SNAKEMAKE_OUTPUT_CACHE": "  "})[0] is None
    assert usable_cache_rules(None, {}) == (None, None)  # no --cache: nothing to say


def test_processes_follow_the_reserved_gpus():
    assert processes_for_gpus(0, 0) == 1
    assert processes_for_gpus(1, 1) == 1
    assert processes_for_gpus(2, 2) == 2
    assert processes_for_gpus(2, 4) == 2
    with pytest.raises(RuntimeError, match="reserved 2 GPUs but sees 1"):
        processes_for_gpus(2, 1)


def test_shard_batch_gives_equal_contiguous_blocks_and_shares_flags():
    batch = {"x": torch.arange(8).reshape(4, 2), "flag": torch.tensor(1.0)}
    first, second = shard_batch(batch, 0, 2), shard_batch(batch, 1, 2)
    assert torch.equal(first["x"], torch.tensor([[0, 1], [2, 3]]))
    assert torch.equal(second["x"], torch.tensor([[4, 5], [6, 7]]))
    assert first["flag"] is batch["flag"] and second["flag"] is batch["flag"]
    assert shard_batch(batch, 0, 1) is batch
    with pytest.raises(ValueError, match="cannot be shared by 8 processes"):
        shard_batch(batch, 0, 8)


class _Regression(nn.Module):
    """A loss that is a mean over rows, for which data parallelism must equal the whole batch."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.linear = nn.Linear(3, 1)

    def forward(self, x, y):
        loss = ((self.linear(x).squeeze(-1) - y) ** 2).mean()
        return loss, {"mse": loss.detach()}


def _regression_batch(step: int) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(100 + step)
    x = torch.randn(8, 3, generator=g)
    return {"x": x, "y": x @ torch.tensor([1.0, -2.0, 0.5]) + 0.1 * torch.randn(8, generator=g)}


def _train_regression(folder: str) -> None:
    from accelerate import PartialState

    torch.set_num_threads(1)
    model, record = _Regression(), []
    train_steps(
        model,
        _regression_batch,
        6,
        0.05,
        1,
        os.path.join(folder, "checkpoints"),
        checkpoint_every=100,
        evaluate=lambda m: {},
        eval_every=3,
        record=record,
    )
    state = PartialState()
    tag = f"{state.process_index}of{state.num_processes}"
    torch.save(model.state_dict(), os.path.join(folder, f"weights_{tag}.pt"))
    with open(os.path.join(folder, f"record_{tag}.json"), "w") as handle:
        json.dump(record, handle)


def test_two_processes_train_like_one_on_the_whole_batch(tmp_path):
    single, parallel = tmp_path / "single", tmp_path / "parallel"
    single.mkdir(), parallel.mkdir()
    _train_regression(str(single))
    run_in_processes(_train_regression, (str(parallel),), 2)

    assert sorted(p.name for p in parallel.glob("weights_*")) == ["weights_0of2.pt", "weights_1of2.pt"]
    one = torch.load(single / "weights_0of1.pt")
    first, second = (torch.load(parallel / f"weights_{r}of2.pt") for r in (0, 1))
    trained_from = _Regression().state_dict()
    for name in one:
        assert torch.equal(first[name], second[name]), name  # the processes stay in step
        assert torch.allclose(first[name], one[name], atol=1e-6), name  # averaged gradients = whole batch
        assert not torch.allclose(one[name], trained_from[name]), name  # it did train
    # the recorded losses are the mean of the two halves' mean losses, i.e. the whole batch's loss
    single_record = json.loads((single / "record_0of1.json").read_text())
    parallel_record = json.loads((parallel / "record_0of2.json").read_text())
    assert [r["step"] for r in parallel_record] == [3, 6]
    for a, b in zip(single_record, parallel_record):
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-5)


def _pretraining_job(folder, seed_texts):
    """Inputs and parameters of one adversarial pretraining job on a tiny BERT (hurtful_pretrain)."""
    import numpy as np
    import pandas as pd
    from transformers import BertConfig, BertForPreTraining

    from medbias.synth.tiny_models import train_wordpiece

    tokenizer = train_wordpiece(seed_texts * 30, 150)
    tokenizer.save_pretrained(folder / "tokenizer")
    tokenizer.save_pretrained(folder / "base")
    BertForPreTraining(
        BertConfig(
            vocab_size=len(tokenizer),
            hidden_size=16,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=32,
            max_position_embeddings=64,
            hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
        )
    ).save_pretrained(folder / "base")
    pd.DataFrame(
        {
            "ROW_ID": np.repeat(np.arange(1, 31), 4),
            "SUBJECT_ID": np.repeat(np.arange(101, 131), 4),
            "HADM_ID": np.repeat(np.arange(1001, 1031), 4),
            "seq_index": np.tile(np.arange(4), 30),
            "text": [seed_texts[i % 3] for i in range(120)],
        }
    ).to_parquet(folder / "sequences.parquet")
    pd.DataFrame(
        {
            "HADM_ID": np.arange(1001, 1031),
            "gender": ["M", "F"] * 15,
            "language": "English",
            "ethnicity": "WHITE",
            "insurance": "Medicare",
        }
    ).to_parquet(folder / "demographics.parquet")
    pd.DataFrame({"SUBJECT_ID": np.arange(101, 131), "split": ["train"] * 20 + ["val"] * 4 + ["test"] * 6}).to_parquet(
        folder / "samples.parquet"
    )
    inputs = {name: str(folder / f"{name}.parquet") for name in ("sequences", "demographics", "samples")}
    inputs["tokenizer"] = str(folder / "tokenizer")
    outputs = {
        "model": str(folder / "out" / "model"),
        "curve": str(folder / "out" / "curve.csv"),
        "summary": str(folder / "out" / "summary.json"),
    }
    pretrain = {
        "exclude_heldout_subjects": True,
        "dropout": None,
        "adversary_lambda": 1.0,
        "length_chunks": 2,  # each process runs its share of a batch as two runs of similar length
        "adversary_warmup_steps": 0,
        "phases": [{"max_length": 32, "batch_size": 8, "epochs": 1, "max_steps": 4}],
        "learning_rate": 1e-3,
        "warmup_fraction": 0.25,
        "checkpoint_every": 100,
        "eval_every": 2,
        "eval_pairs": 16,
    }
    params = {
        "pretrain": pretrain,
        "seed": 7,
        "base_name": "tiny",
        "base_entry": {"source": str(folder / "base"), "kind": "masked"},
        "attribute": "gender",
        "variant": "adv_gender",
        "checkpoints": str(folder / "ckpt"),
    }
    return inputs, outputs, params


def test_pretraining_job_trains_in_two_processes_and_writes_one_model(tmp_path):
    """hurtful_pretrain's job with two reserved GPUs starts two processes: both train, the first
    writes the outputs once (here on the CPU, with gloo)."""
    from medbias.studies.hurtful.pretrain_job import run_pretraining

    texts = ["he has chf and copd .", "she reports depression on sertraline .", "pain controlled , sleeping well ."]
    inputs, outputs, params = _pretraining_job(tmp_path, texts)
    log = tmp_path / "pretrain.log"
    run_in_processes(run_pretraining, (inputs, outputs, params, 2, str(log)), 2)

    summary = json.loads(open(outputs["summary"]).read())
    assert summary["processes"] == 2 and summary["phases"][0]["steps"] == 4
    assert (tmp_path / "out" / "model" / "model.safetensors").is_file()
    text = log.read_text()
    assert "2 process(es) on CPU" in text and "data parallel: 2 processes" in text
    assert text.count("done in") == 1  # one process logs and writes
    import pandas as pd

    curve = pd.read_csv(outputs["curve"])
    assert curve["step"].tolist() == [2, 4] and {"heldout_accuracy_0", "mlm_nsp"} <= set(curve.columns)
    assert not (tmp_path / "ckpt").exists()  # checkpoints are removed once the model is written


def test_a_phase_trains_at_its_own_learning_rate(tmp_path):
    """A phase's ``learning_rate`` replaces the section's peak rate for that phase alone: a second
    phase at a vanishing rate leaves phase 1's weights where they were; at the section's rate it
    moves them. The summary records each phase's rate."""
    from safetensors.torch import load_file

    from medbias.studies.hurtful.pretrain_job import run_pretraining

    texts = ["he has chf and copd .", "she reports depression on sertraline .", "pain controlled , sleeping well ."]
    phase = {"max_length": 32, "batch_size": 8, "epochs": 1, "max_steps": 4}

    def pretrain(name, phases):
        folder = tmp_path / name
        folder.mkdir()
        torch.manual_seed(0)  # the same random base model in every folder
        inputs, outputs, params = _pretraining_job(folder, texts)
        params["pretrain"]["phases"] = phases
        run_pretraining(inputs, outputs, params, 1, str(folder / "pretrain.log"))
        return load_file(folder / "out" / "model" / "model.safetensors"), json.loads(open(outputs["summary"]).read())

    phase_one, _ = pretrain("one", [phase])
    still, summary = pretrain("still", [phase, {**phase, "learning_rate": 1e-12}])
    moved, moved_summary = pretrain("moved", [phase, phase])
    assert [p["learning_rate"] for p in summary["phases"]] == [1e-3, 1e-12]
    assert [p["learning_rate"] for p in moved_summary["phases"]] == [1e-3, 1e-3]
    assert all(torch.allclose(phase_one[name], still[name], atol=1e-7) for name in phase_one)
    assert not all(torch.allclose(phase_one[name], moved[name], atol=1e-4) for name in phase_one)
