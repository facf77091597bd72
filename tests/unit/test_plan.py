"""medbias.pipeline.plan: the studies' decisions about what the DAG builds, on hand-written configs."""

from __future__ import annotations

import pytest

from medbias.pipeline import plan

REGISTRY = {
    "bert": {"source": "b", "kind": "masked"},
    "gpt": {"source": "g", "kind": "causal"},
    "ofa": {"source": "o", "kind": "seq2seq", "loader": "ofa"},
}


def _plm(models, methods, dropout_models=(), downstream_models=()):
    return {
        "models": list(models),
        "debias": {"methods": list(methods), "dropout": {"models": list(dropout_models)}},
        "downstream": {"models": list(downstream_models)},
    }


def test_plm_evaluations_are_model_major_and_skip_what_a_model_cannot_take():
    config = _plm(["ofa", "bert", "gpt"], ["dropout", "sentencedebias", "inlp"], dropout_models=["gpt"])
    assert plan.plm_evaluations(config, REGISTRY) == [
        ("ofa", "none"),  # not loadable: its row stays, marked
        ("bert", "none"),
        ("bert", "sentencedebias"),
        ("bert", "inlp"),  # Dropout only where listed
        ("gpt", "none"),
        ("gpt", "dropout"),
        ("gpt", "sentencedebias"),
        ("gpt", "inlp"),
    ]
    assert plan.plm_evaluations(_plm(["bert"], []), REGISTRY) == [("bert", "none")]


def test_plm_finetunes_are_the_downstream_models_evaluations():
    config = _plm(["bert", "gpt", "ofa"], ["inlp"], downstream_models=["gpt", "ofa"])
    assert plan.plm_finetunes(config, REGISTRY) == [("gpt", "none"), ("gpt", "inlp"), ("ofa", "none")]
    assert plan.plm_finetunes(_plm(["bert"], ["inlp"]), REGISTRY) == []


@pytest.mark.parametrize(
    ("models", "tables", "figure_a1"),
    [
        (["scibert", "baseline"], {}, None),
        (
            ["baseline", "adv_insurance", "adv_gender"],
            {"table5_debiased_gender": "gender", "tableD7_debiased_insurance": "insurance"},
            "adv_gender",
        ),
        (
            ["baseline", "adv_language", "adv_ethnicity"],
            {"tableD5_debiased_language": "language", "tableD6_debiased_ethnicity": "ethnicity"},
            "adv_language",
        ),
    ],
)
def test_debiased_tables_and_figure_a1_follow_the_analysed_models(models, tables, figure_a1):
    assert plan.debiased_tables(models) == tables
    assert list(plan.debiased_tables(models)) == list(tables)  # the paper's order, not the config's
    assert plan.figure_a1_model(models) == figure_a1


def test_variants_and_their_attributes():
    assert plan.variant_attribute("baseline") is None and plan.variant_attribute("adv_ethnicity") == "ethnicity"
    assert plan.debiased_attributes(["baseline", "adv_gender", "adv_insurance"]) == ["gender", "insurance"]


def test_audit_sections_and_skips_follow_the_entry_kind():
    assert plan.audit_sections("word_vectors") == ["weat"]
    causal_sections = plan.audit_sections("contextual", "causal")
    assert causal_sections[:3] == ["seat", "stereoset", "summary"] and "logprob" not in causal_sections
    assert {"benchmark_crows_pairs", "benchmark_summary"} <= set(causal_sections)  # every model: the benchmarks
    assert plan.audit_sections("contextual", "masked")[-3:] == ["logprob", "logprob_words", "fill_blank"]
    assert causal_sections[-3:] == [
        "vignettes",
        "vignette_scores",
        "vignette_option_mass",
    ]  # causal and chat: vignettes
    masked = plan.audit_skipped("contextual", "masked")
    assert [section for section, _ in masked] == ["WEAT", "clinical vignettes"]
    assert "needs a causal or chat model" in masked[1][1] and "kind is masked" in masked[1][1]
    causal = plan.audit_skipped("contextual", "causal")
    assert [s for s, _ in causal] == ["WEAT", "log-probability gender score", "fill-in-the-blank"]
    assert "this entry's kind is causal" in causal[1][1]
    assert plan.audit_skipped("word_vectors")[0][0].startswith("SEAT")


def _resolver_config(tmp_path, world="real"):
    local = tmp_path / "local-bert"
    (local / "sub").mkdir(parents=True, exist_ok=True)
    (local / "config.json").write_text("{}")
    (local / "sub" / "vocab.txt").write_text("[PAD]\n")
    return {
        "world": world,
        "demo": {"dir": str(tmp_path / "demo")},
        "embeddings": {"news": {"source": "vectors/news.bin", "format": "word2vec_binary"}},
        "models": {
            "hub": {"source": "org/some-bert", "kind": "masked"},
            "local": {"source": str(local), "kind": "masked"},
            "built": {"source": str(tmp_path / "demo" / "models" / "tiny-bert"), "kind": "masked"},
        },
        "hurtful": {"variants": ["baseline", "adv_gender"]},
    }


def test_one_resolver_gives_every_study_the_same_entry_for_a_name(tmp_path):
    config = _resolver_config(tmp_path)
    assert plan.model_entry(config, "news", "out/models") == {
        "type": "word_vectors",
        "source": "vectors/news.bin",
        "format": "word2vec_binary",
    }
    assert plan.model_entry(config, "adv_gender", "out/models") == {
        "type": "contextual",
        "source": "out/models/adv_gender",
        "kind": "masked",
    }
    assert plan.model_entry(config, "hub", "out/models") == {
        "type": "contextual",
        "source": "org/some-bert",
        "kind": "masked",
    }
    with pytest.raises(KeyError):
        plan.model_entry(config, "nowhere", "out/models")


def test_model_input_files_are_what_a_job_waits_for(tmp_path):
    config = _resolver_config(tmp_path)
    assert plan.model_input_files(config, "news", "out/models") == ["vectors/news.bin"]
    assert plan.model_input_files(config, "baseline", "out/models") == ["out/models/baseline"]  # a pretraining output
    assert plan.model_input_files(config, "hub", "out/models") == []  # a hub id: nothing local to wait for
    local = str(tmp_path / "local-bert")
    assert plan.model_input_files(config, "local", "out/models") == [f"{local}/config.json", f"{local}/sub/vocab.txt"]
    built = str(tmp_path / "demo" / "models" / "tiny-bert")
    assert (
        plan.model_input_files(config, "built", "out/models") == []
    )  # real world: a missing folder is not ours to build
    assert plan.model_input_files(_resolver_config(tmp_path, "demo"), "built", "out/models") == [
        built
    ]  # the demo builds it


def test_the_vignettes_go_to_every_loadable_causal_entry_and_say_why_not_to_the_others():
    models = {
        "bert": {"source": "bert-base-uncased", "kind": "masked"},
        "llama": {"source": "meta-llama/Llama-2-7b-hf", "kind": "causal"},
        "chat": {"source": "local/chat", "kind": "causal", "chat": True},
        "bart": {"source": "facebook/bart-base", "kind": "seq2seq"},
        "ofa": {"source": "PanaceaAI/BiomedGPT-Base-Pretrained", "kind": "seq2seq", "loader": "ofa"},
    }
    assert plan.vignette_models(models) == ["llama", "chat"]
    assert plan.vignette_models(models, ["chat", "bert"]) == ["chat"]  # chosen, in registry order, if they can

    assert plan.vignette_skip_reason(models["bert"]).startswith("not applicable: kind masked")
    assert "kind seq2seq" in plan.vignette_skip_reason(models["bart"])
    assert plan.vignette_skip_reason(models["chat"]) is None


def test_a_chosen_vignette_model_that_cannot_answer_is_named():
    from medbias.studies.vignettes.plan import chosen_vignette_problem

    models = {"bert": {"source": "b", "kind": "masked"}, "llama": {"source": "l", "kind": "causal"}}
    assert chosen_vignette_problem(models, ["llama"]) is None
    assert chosen_vignette_problem(models, ["llama", "gpt5"]) == "'gpt5' is not a registry model (models)"
    assert chosen_vignette_problem(models, ["bert"]).startswith("'bert' is not applicable: kind masked")
