"""Between-workflow caching: a second results folder restores the expensive deterministic outputs
from $SNAKEMAKE_OUTPUT_CACHE by content hash; a changed parameter recomputes them."""

from __future__ import annotations

import pytest
from conftest import demo_config, run_snakemake, write_config

pytestmark = pytest.mark.wiring
TARGET = "results/demo_world/word-vectors/general-w2v.bin"
CACHED_RULES = ["synth_word_vectors"]


def _run(workdir, cache, config):
    workdir.mkdir()
    configfile = write_config(workdir / "config.yaml", config)
    args = ["--cores", "2", "--configfile", str(configfile), "--cache", *CACHED_RULES, "--", TARGET]
    result = run_snakemake(args, workdir, env={"SNAKEMAKE_OUTPUT_CACHE": str(cache)})
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout + result.stderr


def test_second_results_folder_restores_from_cache_and_changed_param_recomputes(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    config = demo_config(scale=0.05)

    first = _run(tmp_path / "a", cache, config)
    assert f"Moving output file {TARGET} to cache." in first
    assert (tmp_path / "a/logs/synth/word_vectors_general.log").read_text().count("training word2vec") == 1
    assert len(list(cache.iterdir())) == 1

    second = _run(tmp_path / "b", cache, config)
    assert f"Symlinking output file {TARGET} from cache." in second
    assert "Moving output file" not in second
    assert "training word2vec" not in (tmp_path / "b/logs/synth/word_vectors_general.log").read_text()
    assert (tmp_path / "b" / TARGET).read_bytes() == (tmp_path / "a" / TARGET).read_bytes()

    config["demo"]["word_vectors"]["vector_size"] += 2
    third = _run(tmp_path / "c", cache, config)
    assert f"Moving output file {TARGET} to cache." in third
    assert "training word2vec" in (tmp_path / "c/logs/synth/word_vectors_general.log").read_text()
    assert len(list(cache.iterdir())) == 2
