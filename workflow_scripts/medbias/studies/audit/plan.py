"""What an audit card holds for an entry's type and kind: the evaluations it gathers and the tests
it lists as skipped, with the reason. Pure; the rule files reach it through
``medbias.pipeline.plan``."""

from __future__ import annotations

from collections.abc import Sequence

# tests of the audit card that an entry's type or kind rules out, with the reason the card prints
_WORD_VECTOR_SKIPS = [
    (
        "SEAT, StereoSet-style, log-probability, fill-in-the-blank",
        "word vectors: the sentence- and likelihood-based tests need a contextual model",
    )
]
_CONTEXTUAL_SKIPS = [("WEAT", "the WEAT card section is for word-vector entries (SEAT is its sentence form)")]


def audit_skipped(entry_type: str, kind: str | None = None) -> list[tuple[str, str]]:
    """(section, reason) of the audit card's tests that a word-vector entry, or a model of ``kind``,
    cannot take; the card lists them instead of running them."""
    if entry_type == "word_vectors":
        return list(_WORD_VECTOR_SKIPS)
    skipped = list(_CONTEXTUAL_SKIPS)
    if kind != "causal":
        skipped.append(
            ("clinical vignettes", f"needs a causal or chat model (option probabilities); this entry's kind is {kind}")
        )
    if kind != "masked":
        skipped += [
            ("log-probability gender score", f"needs a masked LM (Kurita et al.); this entry's kind is {kind}"),
            ("fill-in-the-blank", f"needs a masked LM; this entry's kind is {kind}"),
        ]
    return skipped


def audit_sections(entry_type: str, kind: str | None = None, suite: Sequence[str] | None = None) -> list[str]:
    """The evaluations an audit card gathers: WEAT for word vectors; SEAT, StereoSet-style and the
    field's benchmarks (every file of the benchmark plug-ins of ``suite``, all registered ones when
    None, ``benchmark_<file key>``, and their summary) for every model; the log-probability score and
    fill-in-the-blank for masked LMs; the clinical vignettes for causal ones."""
    from medbias.metrics.benchmarks import REGISTRY, evaluation_files

    if entry_type == "word_vectors":
        return ["weat"]
    return [
        "seat",
        "stereoset",
        "summary",
        *(f"benchmark_{key}" for key in evaluation_files(list(REGISTRY) if suite is None else suite)),
        "benchmark_summary",
        *(["logprob", "logprob_words", "fill_blank"] if kind == "masked" else []),
        *(["vignettes", "vignette_scores", "vignette_option_mass"] if kind == "causal" else []),
    ]
