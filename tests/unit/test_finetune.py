"""Table 6's pieces: the benchmark readers (formats and errors), the metrics by hand, word-piece
alignment for tagging, and a fine-tuning run that learns a trivial task."""

from __future__ import annotations

import json

import pytest

from medbias.core.errors import MedbiasInputError
from medbias.studies.plm.finetune import (
    bio_spans,
    encode_words,
    entity_f1,
    finetune_and_score,
    micro_f1,
    read_bc5cdr,
    read_glue_task,
    read_hoc,
    read_pubmedqa,
)
from medbias.synth.plm_downstream import write_downstream_sets

SIZES = {
    "glue": {"train": 40, "test": 20},
    "pubmedqa": {"train": 30, "dev": 5, "test": 20},
    "hoc": {"train": 30, "dev": 5, "test": 20},
    "bc5cdr": {"train": 30, "dev": 5, "test": 20},
}


def test_bio_spans_and_entity_f1_by_hand():
    assert bio_spans(["B-Chemical", "I-Chemical", "O", "B-Disease", "B-Disease", "I-Chemical"]) == {
        (0, 2, "Chemical"),
        (3, 4, "Disease"),
        (4, 5, "Disease"),
        (5, 6, "Chemical"),
    }
    gold = [["B-Chemical", "I-Chemical", "O", "B-Disease"]]
    # one exact match of two gold and two predicted spans (the chemical's end differs)
    assert entity_f1(gold, [["B-Chemical", "O", "O", "B-Disease"]]) == pytest.approx(0.5)
    assert entity_f1(gold, gold) == 1.0


def test_micro_f1_by_hand():
    # gold pairs {(0,1), (0,2), (1,0)}, predicted {(0,1), (1,2)}: 1 hit -> 2*1/(3+2)
    assert micro_f1([[1, 2], [0]], [[1], [2]]) == pytest.approx(0.4)


def test_readers_accept_the_written_formats(tmp_path):
    folders = write_downstream_sets(tmp_path, SIZES, seed=0)
    sst, rte = read_glue_task(folders["glue"], "SST-2"), read_glue_task(folders["glue"], "RTE")
    assert len(sst.train.texts) == 40 and sst.train.pairs is None and sst.label_names == ["0", "1"]
    assert rte.train.pairs is not None and rte.label_names == ["entailment", "not_entailment"]
    qa = read_pubmedqa(folders["pubmedqa"])
    assert len(qa.train.texts) == 30 and len(qa.test.texts) == 20 and set(qa.train.labels) <= {0, 1, 2}
    hoc = read_hoc(folders["hoc"])
    assert hoc.kind == "multilabel" and all(isinstance(labels, list) for labels in hoc.train.labels)
    ner = read_bc5cdr(folders["bc5cdr"])
    assert "B-Chemical" in ner.label_names and all(len(w) == len(t) for w, t in zip(ner.train.texts, ner.train.labels))


def test_bad_benchmark_files_are_one_clear_error(tmp_path):
    folders = write_downstream_sets(tmp_path, SIZES, seed=0)
    (tmp_path / "glue" / "SST-2" / "dev.tsv").write_text("text\tlabel\nfine\t1\n")
    with pytest.raises(MedbiasInputError, match=r"dev.tsv: no column 'sentence'"):
        read_glue_task(folders["glue"], "SST-2")
    with pytest.raises(MedbiasInputError, match=r"GLUE task CoLA: file .*CoLA/train.tsv does not exist"):
        read_glue_task(folders["glue"], "CoLA")
    path = tmp_path / "pubmedqa" / "test_set.json"
    path.write_text(json.dumps({"1": {"QUESTION": "q", "CONTEXTS": ["c"], "final_decision": "perhaps"}}))
    with pytest.raises(MedbiasInputError, match=r"item 1 has final_decision 'perhaps'"):
        read_pubmedqa(folders["pubmedqa"])
    (tmp_path / "bc5cdr" / "test.tsv").write_text("aspirin B-Chemical\n")
    with pytest.raises(MedbiasInputError, match=r"test.tsv, line 1: expected 'token<TAB>tag'"):
        read_bc5cdr(folders["bc5cdr"])


def test_word_alignment_points_at_each_words_first_piece():
    from medbias.synth.tiny_models import train_byte_bpe, train_wordpiece

    texts = ["valproic acid induced renal failure in rats"] * 10
    for tokenizer, leading in ((train_wordpiece(texts, 60), False), (train_byte_bpe(texts, 280, True), True)):
        words = ["valproic", "acid", "induced", "renal"]
        ids, firsts = encode_words(tokenizer, words, 64, leading)
        assert ids == tokenizer(" ".join(words))["input_ids"]
        for word, position in zip(words, firsts):
            piece = tokenizer.convert_ids_to_tokens(ids[position]).replace("Ġ", "")
            assert word.startswith(piece)
        short_ids, short_firsts = encode_words(tokenizer, words, 4, leading)
        assert len(short_ids) == 4 and short_firsts[-1] == -1


def test_fine_tuning_learns_a_cue_word_task(tmp_path):
    from medbias.synth.tiny_models import build_tiny_model, train_wordpiece

    folders = write_downstream_sets(tmp_path, {**SIZES, "glue": {"train": 200, "test": 60}}, seed=1)
    task = read_glue_task(folders["glue"], "SST-2")
    tokenizer = train_wordpiece(task.train.texts, 200)
    model = build_tiny_model(
        "bert",
        tokenizer,
        {
            "hidden_size": 32,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "intermediate_size": 64,
            "max_position_embeddings": 64,
        },
        0,
        masked_only=True,
    )
    result = finetune_and_score(
        model.base_model,
        tokenizer,
        task,
        learning_rate=1e-3,
        batch_size=16,
        epochs=5,
        max_length=32,
        seed=0,
        leading_space=False,
    )
    assert result["metric"] == "accuracy" and result["score"] > 90 and result["last_loss"] < result["first_loss"]
