"""The audit card: every intrinsic bias test that applies to one registry entry, on one page.

A contextual model gets SEAT (Xie et al. 2024, appendix A: race, LGBTQ+ and the birthday
controls), the StereoSet-style scores (Xie et al. 2024, section 3.2), the log-probability gender
score on the clinical templates (Zhang et al. 2020, Table 3; masked models) and fill-in-the-blank
completions by race (Zhang et al. 2020, Figure 1; masked models). A word-vector entry gets WEAT with
Caliskan et al.'s (2017) word sets. What does not apply, or could not run, is listed with the
reason; the manifest lines of the entry's inputs close the card.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from medbias.core.errors import MedbiasInputError
from medbias.io.tables import PaperPage, markdown_table
from medbias.io.word_vectors import vector_spellings
from medbias.metrics.benchmarks import headlines

# Caliskan et al. (2017), Table 1: the WEATs whose word sets WEAT.json holds (X, Y, A, B)
CALISKAN_TESTS = {
    "flowers_insects": ("flowers", "insects", "pleasant_5", "unpleasant_5a"),
    "instruments_weapons": ("instruments", "weapons", "pleasant_5", "unpleasant_5a"),
    "career_family": ("male_names", "female_names", "career", "family"),
    "math_arts": ("male_terms", "female_terms", "math", "arts"),
}
# what Caliskan et al. report on GloVe 840B (effect size d), for the reader's comparison
CALISKAN_PUBLISHED = {"flowers_insects": 1.50, "instruments_weapons": 1.53, "career_family": 1.81, "math_arts": 1.06}


def vocabulary_in_frequency_order(vectors) -> list[str]:
    """The words of ``vectors`` most frequent first: gensim's ``index_to_key`` (the order of word2vec
    and GloVe files, which their tools write by descending count), else the mapping's own order."""
    order = getattr(vectors, "index_to_key", None)
    return list(order) if order is not None else list(vectors)


def weat_rows(
    vectors,
    wordsets: Mapping[str, Sequence[str]],
    *,
    seed: int,
    budget: int,
    n_bootstrap: int,
    min_fraction: float,
    null_draws: int = 0,
) -> pd.DataFrame:
    """Caliskan et al.'s WEATs on word vectors through the association engine (effect size with
    ddof=1, one-sided permutation p, bootstrap interval), with each set's coverage; a test whose set
    has fewer than ``min_fraction`` of its words in the vocabulary is a row with the reason instead.

    With ``null_draws`` > 0, also the calibrated null of each test (``calibrated_null``: A and B
    replaced by ``null_draws`` random vocabulary words of the same frequency bins, never a word of
    any Caliskan set; columns of ``calibrated_columns``): the word-permutation p treats target words
    as exchangeable, which words that share contexts are not, so it can be far too small."""
    from medbias.metrics.association import NullVocabulary, calibrated_columns, weat

    vocabulary = None
    if null_draws > 0:
        every_word = {w for words in wordsets.values() for w in words}
        vocabulary = NullVocabulary(
            vocabulary_in_frequency_order(vectors), frozenset(every_word | {w.lower() for w in every_word}), null_draws
        )
    rows = []
    for i, (name, keys) in enumerate(CALISKAN_TESTS.items()):
        sets, missing = {}, {}
        for key in keys:
            sets[key], missing[key] = vector_spellings(vectors, wordsets[key])
        row = {
            "test": name,
            "X": keys[0],
            "Y": keys[1],
            "A": keys[2],
            "B": keys[3],
            "coverage": "; ".join(f"{k} {len(sets[k])}/{len(wordsets[k])}" for k in keys),
            "missing": "; ".join(f"{k}: {', '.join(v)}" for k, v in missing.items() if v),
            "published_d": CALISKAN_PUBLISHED[name],
        }
        # coverage against the published sets (the spellings found are all the engine sees)
        short = [k for k in keys if len(set(sets[k])) < max(1, min_fraction * len(set(wordsets[k])))]
        if short:
            k = short[0]
            rows.append(
                {
                    **row,
                    "status": f"skipped: word set '{k}': {len(sets[k])} of {len(wordsets[k])} words have "
                    f"vectors (minimum fraction {min_fraction})",
                }
            )
            continue
        try:
            result = weat(
                vectors,
                *(sets[k] for k in keys),
                rng=np.random.default_rng(seed + i),
                budget=budget,
                n_bootstrap=n_bootstrap,
                min_fraction=0.0,
                names=keys,
                null_vocabulary=vocabulary,
            )
        except MedbiasInputError as error:
            rows.append({**row, "status": f"skipped: {error}"})
            continue
        rows.append(
            {
                **row,
                "status": "ok",
                "effect_size": result.effect_size,
                "p_value": result.p_value,
                "ci_low": result.ci_low,
                "ci_high": result.ci_high,
                "mean_difference": result.mean_difference,
                **calibrated_columns(result.calibrated),
            }
        )
    return pd.DataFrame(rows)


def _interval(low: float, high: float) -> str:
    return "" if pd.isna(low) else f"[{low:+.2f}, {high:+.2f}]"


# where each test's calibrated null draws its random attribute words from (association_note)
WEAT_NULL_WORDS = (
    "vocabulary words of the same frequency bins by rank in the vectors' file, never a word of any Caliskan set"
)
SEAT_NULL_WORDS = (
    "whole words of the model's tokenizer in the attribute templates, drawn uniformly since a "
    "tokenizer carries no frequencies"
)


def calibrated_p_column(p_calibrated: pd.Series | None) -> dict[str, list[str]]:
    """The "calibrated p" column of a WEAT/SEAT section (blank where NaN), or nothing when no row has
    one (the evaluation ran without the calibrated null)."""
    if p_calibrated is None or p_calibrated.isna().all():
        return {}
    return {"calibrated p": ["" if pd.isna(v) else f"{v:.2g}" for v in p_calibrated]}


def association_note(table: pd.DataFrame, null_words: str) -> str:
    """What the interval and the p-values of a WEAT/SEAT section mean, and the null each one uses;
    ``null_words``: where the calibrated null's random attribute words come from."""
    note = (
        "d: effect size (Caliskan et al. 2017); 95% CI: percentile bootstrap over the words of each set. "
        "p: the target words permuted between X and Y (one-sided unless the study's `alternative` says "
        "two-sided); it treats words as exchangeable, which words that share contexts are not, so it can "
        "be too small."
    )
    draws = table["null_draws"].max() if "null_draws" in table else 0
    if draws and draws > 0:
        note += (
            f" calibrated p: the share of {int(draws):,} random attribute-set pairs of the same sizes whose "
            "projection of X - Y on their direction is at least as extreme as the observed one "
            f"(medbias.metrics.association.calibrated_null); their words: {null_words}. Read this one."
        )
    return note + "\n"


def seat_section(seat: pd.DataFrame) -> str:
    """SEAT: one line per test (effect size, 95% interval, permutation p, the calibrated p of random
    attribute sets when the evaluation ran it, set sizes, unknown words)."""
    ok = seat[seat["status"] == "ok"]
    if ok.empty:
        return f"Not run: {seat['status'].iloc[0]}\n"
    table = pd.DataFrame(
        {
            "test": ok["test"],
            "d": ok["effect_size"].map("{:+.3f}".format),
            "95% CI": [_interval(lo, hi) for lo, hi in zip(ok["ci_low"], ok["ci_high"])],
            "p": ok["p_value"].map("{:.2g}".format),
            **calibrated_p_column(ok.get("p_calibrated")),
            "n (X, Y, A, B)": [f"{a}, {b}, {c}, {d}" for a, b, c, d in zip(ok["n_X"], ok["n_Y"], ok["n_A"], ok["n_B"])],
            "out of vocabulary": ["" if pd.isna(v) else v for v in ok["out_of_vocabulary"]],
        }
    )
    return markdown_table(table) + "\n" + association_note(ok, SEAT_NULL_WORDS)


def stereoset_section(stereo: pd.DataFrame) -> str:
    """StereoSet-style: ss, lms, ICAT, ties and pairs per family, or why there is no score."""
    if (stereo["status"] != "ok").all():
        return f"{stereo['status'].iloc[0][0].upper()}{stereo['status'].iloc[0][1:]}.\n"
    whole = stereo[(stereo["status"] == "ok") & (stereo["blank"] == "all") & (stereo["template"] == "all")]
    return markdown_table(whole[["family", "ss", "lms", "icat", "ties", "pairs"]], digits=1)


def _score_interval(low: float, high: float) -> str:
    return "" if np.isnan(low) else f"[{low:.2f}, {high:.2f}]"


def benchmark_section(
    rows: pd.DataFrame,
    settings: Mapping[str, Any],
    published: Sequence = (),
    published_elsewhere: Sequence[str] = (),
) -> str:
    """The field's benchmarks of the entry's plain evaluation (``metrics.benchmarks.scores``): each plug-in
    headline that has a card line (``medbias.metrics.benchmarks.headlines`` under ``settings``,
    ``plm.benchmarks``: CrowS-Pairs once per rule, StereoSet, bias-bench's SEAT summaries, perplexity)
    with its scoring rule, 95% interval and p against 50, and the benchmarks that do not apply with the
    reason. ``published``: the published values of this entry's own model (``published_for_source``);
    ``published_elsewhere``: the models the suite has published values for, named when none is this one."""
    found = list(rows.itertuples(index=False))
    shown = []
    for headline in (h for h in headlines(settings) if h.card):
        row = headline.row_in(found)
        if row is None:
            continue
        shown.append(
            {
                "score": headline.card,
                "rule": row.rule,
                "value": f"{row.value:.{headline.digits}f}",
                "95% CI": _score_interval(row.ci_low, row.ci_high),
                "p vs 50": "" if np.isnan(row.p_value) else f"{row.p_value:.2g}",
                "items": row.items,
            }
        )
    status = [f"- {r.benchmark}: {r.status}" for r in rows.itertuples(index=False) if r.measure == "status"]
    per_type = rows[(rows["benchmark"] == "crows_pairs") & (rows["measure"] == "metric") & (rows["bias_type"] != "all")]
    parts = [markdown_table(pd.DataFrame(shown))] if shown else []
    if len(per_type):
        parts.append(
            "CrowS-Pairs by bias type:\n\n"
            + markdown_table(
                pd.DataFrame(
                    {
                        "bias type": per_type["bias_type"],
                        "rule": per_type["rule"],
                        "metric": per_type["value"].map("{:.2f}".format),
                        "95% CI": [_score_interval(lo, hi) for lo, hi in zip(per_type["ci_low"], per_type["ci_high"])],
                        "p vs 50": per_type["p_value"].map("{:.2g}".format),
                        "pairs": per_type["items"],
                    }
                )
            )
        )
    if status:
        parts.append("Not applicable:\n\n" + "\n".join(status) + "\n")
    parts.append(benchmark_reference(published, published_elsewhere))
    return "\n".join(parts)


def benchmark_reference(published: Sequence = (), published_elsewhere: Sequence[str] = ()) -> str:
    """How the card's benchmark scores were made, and the published values of the entry's own model
    (``published``) with the rule of each; when there are none, which models have them."""
    from medbias.metrics.benchmarks.published import published_note

    if published:
        yardstick = published_note(published)
    elif published_elsewhere:
        yardstick = (
            f"No published values for this model: the suite's sources publish {', '.join(published_elsewhere)}, "
            "whose numbers are no yardstick for another model."
        )
    else:
        yardstick = ""
    return (
        "Scored by the published tools' rules, each named in the rule column (CrowS-Pairs: nangia = Nangia et al.'s "
        "metric.py, bias_bench = bias-bench's crows.py, lm_eval = lm-evaluation-harness; StereoSet: nadeem = the "
        "authors' masked scorer, bias_bench = bias-bench's generative scorer); the intervals, tests and untrained "
        "copies are medbias's own. SEAT mean |d|: bias-bench's summary; its 95% CI is a parametric bootstrap (each "
        "test's d redrawn from a normal with the SE its own interval implies, medbias.metrics.benchmarks.peer."
        "seat_summary_interval). "
        + yardstick
        + " Every row per bias type: results/plm/benchmarks_long.csv when the entry is in the plm study.\n"
    )


def logprob_section(table: pd.DataFrame, gender_set: str) -> str:
    """The log-probability gender score per category: both groups' means, the paired difference and
    the Wilcoxon p (Zhang et al. 2020, Table 3)."""
    rows = table[table["target_set"] == gender_set]
    return markdown_table(
        rows[
            [
                "category",
                "reference_group",
                "group",
                "reference_mean",
                "group_mean",
                "mean_difference",
                "wilcoxon_p",
                "items",
            ]
        ]
    )


def fill_blank_section(frame: pd.DataFrame) -> str:
    """Greedy fill-in-the-blank completions per template and race word (the masks in order)."""
    completions = (
        frame.sort_values("mask").groupby(["template", "fill"], sort=False)["greedy"].agg(" / ".join).reset_index()
    )
    return markdown_table(completions.rename(columns={"fill": "race word", "greedy": "greedy completion"}))


def weat_section(rows: pd.DataFrame) -> str:
    """WEAT rows: effect size with interval, the word-permutation p and (when it ran) the calibrated p
    of random attribute sets, beside the published GloVe value, and coverage."""
    ok = rows["status"] == "ok"

    def column(name: str) -> pd.Series:  # absent when every test was skipped (no result columns were written)
        return rows[name] if name in rows else pd.Series(np.nan, index=rows.index)

    shown = pd.DataFrame(
        {
            "test": rows["test"],
            "X vs Y, A vs B": rows["X"] + " vs " + rows["Y"] + ", " + rows["A"] + " vs " + rows["B"],
            "d": [f"{d:+.2f}" if s == "ok" else s for d, s in zip(column("effect_size"), rows["status"])],
            "95% CI": [
                _interval(lo, hi) if s == "ok" else ""
                for lo, hi, s in zip(column("ci_low"), column("ci_high"), rows["status"])
            ],
            "p": [f"{p:.2g}" if s == "ok" else "" for p, s in zip(column("p_value"), rows["status"])],
            **calibrated_p_column(rows["p_calibrated"].where(ok) if "p_calibrated" in rows else None),
            "Caliskan et al. d (GloVe 840B)": rows["published_d"].map("{:.2f}".format),
            "coverage": rows["coverage"],
        }
    )
    return markdown_table(shown) + "\n" + association_note(rows[ok], WEAT_NULL_WORDS)


def card_page(
    name: str,
    label: str,
    entry: Mapping[str, Any],
    sections: Sequence[tuple[str, str]],
    skipped: Sequence[tuple[str, str]],
    manifest: Mapping[str, Any],
    figure: str,
    settings: Sequence[str] = (),
) -> PaperPage:
    """The card: a header naming the entry, each section that ran, what was skipped and why, the
    summary figure, the settings that shaped its numbers (``settings_notes``: the run's config, the
    demo's reduced ones included, with each key's source) and the manifest lines of its inputs."""
    import json

    source = (
        f"Source `{entry['source']}`, kind `{entry.get('kind', 'word vectors')}`"
        + (f", dtype `{entry['dtype']}`" if entry.get("dtype") else "")
        + "."
    )
    skipped_lines = [f"- {section}: {reason}" for section, reason in skipped] or ["- nothing"]
    manifest_json = json.dumps(manifest, indent=1, sort_keys=True, default=str)
    return PaperPage(
        f"Audit card: {label} (`{name}`)",
        (
            source,
            *(f"## {title}\n\n{body.rstrip()}" for title, body in sections),
            "## Skipped\n\n" + "\n".join(skipped_lines),
            f"## Summary figure\n\n![effect sizes]({figure})",
            *(["## Settings\n\n" + "\n".join(line.strip("\n") for line in settings)] if settings else []),
            f"## Inputs (manifest)\n\n```json\n{manifest_json}\n```",
        ),
    )


def card_sections(
    inputs: Mapping[str, str],
    skipped: Sequence[tuple[str, str]],
    *,
    target_sets: Mapping[str, Any],
    control_category: str,
    gender_set: str,
    benchmarks: Mapping[str, Any] | None = None,
    source: str = "",
) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, float, float, float]]]:
    """The card's (title, Markdown) sections from the evaluation files in ``inputs`` (the sections
    ``medbias.studies.audit.plan.audit_sections`` chose for the entry's kind), the (section, reason) of
    every test skipped (those ruled out before anything ran, then those whose evaluation marked
    itself), and the (test, d, low, high) effect sizes of the summary figure. ``source``: the entry's hub
    id or folder, whose last component picks the published values shown beside its scores."""
    from medbias.io.jsonio import read_json
    from medbias.metrics.logprob_tests import logprob_table

    sections, skipped, effects = [], list(skipped), []
    if "weat" in inputs:
        weat = pd.read_csv(inputs["weat"])
        sections.append(("WEAT (Caliskan et al. 2017)", weat_section(weat)))
        skipped += [(f"WEAT {r.test}", r.status) for r in weat.itertuples() if r.status != "ok"]
        effects = [(r.test, r.effect_size, r.ci_low, r.ci_high) for r in weat.itertuples() if r.status == "ok"]
        return sections, skipped, effects
    seat = pd.read_csv(inputs["seat"])
    sections.append(("SEAT (Xie et al. 2024, appendix A)", seat_section(seat)))
    effects = [(r.test, r.effect_size, r.ci_low, r.ci_high) for r in seat.itertuples() if r.status == "ok"]
    stereo = pd.read_csv(inputs["stereoset"])
    sections.append(("StereoSet-style scores (Xie et al. 2024, section 3.2)", stereoset_section(stereo)))
    if (stereo["status"] != "ok").all():
        skipped.append(("StereoSet-style scores", stereo["status"].iloc[0]))
    if "benchmark_summary" in inputs:
        from medbias.metrics.benchmarks import evaluation_files, published_values
        from medbias.metrics.benchmarks.published import published_for_source, published_models
        from medbias.metrics.benchmarks.scores import evaluation_rows, read_evaluation_frames

        names = benchmarks["suite"]
        published = published_values(names)
        frames = read_evaluation_frames({key: inputs[f"benchmark_{key}"] for key in evaluation_files(names)}, names)
        status = read_json(inputs["benchmark_summary"])["status"]
        rows = pd.DataFrame(evaluation_rows(frames, status, benchmarks, np.random.default_rng(benchmarks["seed"])))
        sections.append(
            (
                "The field's benchmarks: CrowS-Pairs, StereoSet, SEAT of May et al.",
                benchmark_section(
                    rows,
                    benchmarks,
                    published_for_source(published, source),
                    published_models(published),
                ),
            )
        )
    if "logprob" in inputs:
        words = read_json(inputs["logprob_words"])
        if words.get("status", "ok") != "ok":
            skipped.append(("log-probability gender score", words["status"]))
        else:
            table = logprob_table(pd.read_parquet(inputs["logprob"]), target_sets, control_category)
            if table.empty or not (table["target_set"] == gender_set).any():
                # e.g. a vocabulary in which only the male words are single tokens: no pair to compare
                skipped.append(
                    (
                        "log-probability gender score",
                        f"no scored pair of the {gender_set!r} words (scored: "
                        f"{', '.join(words.get('scored_words', [])) or 'none'}; not single tokens: "
                        f"{', '.join(words.get('rejected_words', [])) or 'none'})",
                    )
                )
            else:
                sections.append(
                    ("Log-probability gender score (Zhang et al. 2020, Table 3)", logprob_section(table, gender_set))
                )
        fill = pd.read_csv(inputs["fill_blank"])
        if (fill["status"] != "ok").all():
            skipped.append(("fill-in-the-blank", fill["status"].iloc[0]))
        else:
            sections.append(("Fill-in-the-blank by race (Zhang et al. 2020, Figure 1)", fill_blank_section(fill)))
    if "vignettes" in inputs:
        status = read_json(inputs["vignette_scores"])
        if status["status"] != "ok":
            skipped.append(("clinical vignettes", status["status"]))
        else:
            table = pd.read_csv(inputs["vignettes"], keep_default_na=False, na_values=[""])
            mass = read_json(inputs["vignette_option_mass"]) if "vignette_option_mass" in inputs else {}
            sections.append(
                (
                    "Clinical vignettes: decisions by the model's own option probabilities",
                    vignette_section(table, status, mass),
                )
            )
    return sections, skipped, effects


def vignette_section(table: pd.DataFrame, status: Mapping[str, Any], mass: Mapping[str, Any] | None = None) -> str:
    """The entry's vignette contrasts (``studies.vignettes.tables``): how much probability it puts on
    the offered options (mean, minimum, prompts left out, flagged when little), the demographic
    contrasts with intervals, p, q, noise floor and flip rates, the count of control swaps flagged, how
    it was prompted and how fast it ran."""
    from medbias.metrics.vignette_contrasts import DESIGNS, mass_line, shown_contrasts

    demographic = table[table["kind"] == "demographic"]
    controls = table[table["kind"] != "demographic"]
    header = (
        f"Prompted with the {status['prompt_style']} prompt on {status['device']} ({status['dtype']}); "
        f"{status['prompts']:,} prompts at {status['prompts_per_second']:.1f} prompts/s. Significant demographic "
        f"contrasts (BH): {int(demographic['significant'].sum())} of {len(demographic)}; control swaps with p "
        f"(beyond margin) < 0.05: {int((controls['d_probability_p_min'] < 0.05).sum())} of {len(controls)}.\n"
    )
    if mass:
        header = mass_line(mass) + "\n\n" + header
    shown = shown_contrasts(demographic).drop(columns=["kind"])
    return (
        header
        + "\n"
        + markdown_table(shown)
        + "\nEvery contrast, the controls, group means and the figure: results/vignettes/<entry>/contrasts.md. "
        + DESIGNS
        + "\n"
    )


def card_manifest_lines(name: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    """The entry's manifest lines (as ``input_manifest`` writes them) and its local files with sizes."""
    from pathlib import Path

    from medbias.core.models import model_folder_files
    from medbias.io.manifest import embedding_manifest_entry, model_manifest_entry

    registry_fields = {k: v for k, v in entry.items() if k != "type"}
    entry_lines = (
        embedding_manifest_entry(registry_fields)
        if entry["type"] == "word_vectors"
        else model_manifest_entry(name, registry_fields)
    )
    return {
        "entry": entry_lines,
        "files": [{"path": f, "bytes": Path(f).stat().st_size} for f in model_folder_files(entry["source"])],
    }
