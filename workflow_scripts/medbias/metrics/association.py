"""The association-test engine: WEAT/SEAT, ECT and RIPA over any word-to-vector mapping.

One implementation shared by the studies: ``rios`` passes word2vec vectors, ``mental`` and ``plm``
pass sentence or contextual embeddings. Everything is vectorised over precomputed cosine tables:
s(w, A, B) is computed once per word, and permutations and bootstrap replicates only re-index it.

Conventions (pinned, and written into every output):
- s(w, A, B) = mean_a cos(w, a) - mean_b cos(w, b) (Caliskan et al. 2017, eq. for s(w, A, B); the
  Rios et al. paper writes sums, which only rescale it for fixed set sizes).
- Effect size d = (mean_X s - mean_Y s) / std_{X u Y} s with ddof=1, as sent-bias and bias-bench
  (WEFE uses ddof=0, which gives a larger |d| for small sets).
- Test statistic S = sum_X s - sum_Y s. Permutation p-values re-partition X u Y into sets of the
  original sizes: exact enumeration of all partitions when their number is within the budget,
  otherwise that many distinct partitions sampled without replacement (the observed one excluded),
  p = (k + 1) / (N + 1). One-sided (H1: S larger than by chance) or two-sided (|S - E[S]| as
  extreme), both against the same null distribution (WEFE samples with replacement and compares
  |S| with the signed observation; neither is done here).
- The permutation test treats the target words as exchangeable. Words of one set that share
  documents or sentences (male words, race terms in one template) move together, so on trained
  embeddings it is anti-conservative. The calibrated null (``calibrated_null``) keeps the targets as
  they are and replaces the attribute sets A and B by random vocabulary words of the same sizes and
  frequency profile: it asks whether X and Y differ more along A - B than along directions of random
  word sets, which holds the targets' shared component fixed. Its statistic is the projection of the
  X - Y centroid difference on the unit A - B direction (d saturates). Its p-value and its
  test-inverted intervals are reported beside the classic ones.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import combinations
from typing import Literal

import numpy as np
from scipy.stats import rankdata, spearmanr

from medbias.core.errors import MedbiasInputError
from medbias.metrics.bootstrap import percentile_interval, resample_indices, resample_weights

Alternative = Literal["greater", "two-sided"]


@dataclass(frozen=True)
class WordSetCoverage:
    """Which words of a set had vectors; missing words are reported, never silently dropped."""

    name: str
    requested: int
    found: tuple[str, ...]
    missing: tuple[str, ...]

    @property
    def fraction(self) -> float:
        return len(self.found) / self.requested if self.requested else 0.0


def lookup(
    vectors: Mapping[str, np.ndarray], words: Sequence[str], name: str, min_fraction: float = 0.0
) -> tuple[np.ndarray, WordSetCoverage]:
    """Stack the vectors of ``words`` (duplicates dropped, order kept) and record coverage.

    Raises MedbiasInputError naming the set when fewer than ``min_fraction`` of its words (or none)
    have vectors.
    """
    unique = list(dict.fromkeys(words))
    found = [w for w in unique if w in vectors]
    missing = tuple(w for w in unique if w not in vectors)
    coverage = WordSetCoverage(name, len(unique), tuple(found), missing)
    if not found or coverage.fraction < min_fraction:
        raise MedbiasInputError(
            f"word set '{name}': {len(found)} of {len(unique)} words have vectors "
            f"(minimum fraction {min_fraction}); missing: "
            f"{', '.join(missing[:20])}{' ...' if len(missing) > 20 else ''}"
        )
    return np.stack([np.asarray(vectors[w], dtype=np.float64) for w in found]), coverage


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero)."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def cosine_table(targets: np.ndarray, attributes: np.ndarray) -> np.ndarray:
    """cos(t_i, a_j) for every target row i and attribute row j."""
    return unit_rows(targets) @ unit_rows(attributes).T


def association_scores(targets: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """s(w, A, B) = mean_a cos(w, a) - mean_b cos(w, b) for every target row w (Caliskan et al.)."""
    return cosine_table(targets, a).mean(axis=1) - cosine_table(targets, b).mean(axis=1)


def effect_size(s_x: np.ndarray, s_y: np.ndarray) -> float:
    """WEAT effect size d = (mean s_X - mean s_Y) / std(s over X u Y, ddof=1)."""
    union = np.concatenate([s_x, s_y])
    sd = union.std(ddof=1)
    return float((s_x.mean() - s_y.mean()) / sd) if sd > 0 else float("nan")


def weat_statistic(s_x: np.ndarray, s_y: np.ndarray) -> float:
    """WEAT test statistic S = sum_X s - sum_Y s."""
    return float(s_x.sum() - s_y.sum())


def _partition_stats(s: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """S for each partition given as a boolean matrix (rows: partitions; True = in X)."""
    total = s.sum()
    in_x = masks.astype(np.float64) @ s
    return in_x - (total - in_x)


def _exact_masks(n: int, n_x: int) -> np.ndarray:
    combos = np.array(list(combinations(range(n), n_x)), dtype=np.int64)
    masks = np.zeros((len(combos), n), dtype=bool)
    np.put_along_axis(masks, combos, True, axis=1)
    return masks


def _sampled_masks(n: int, n_x: int, n_samples: int, rng: np.random.Generator, observed: np.ndarray) -> np.ndarray:
    """``n_samples`` distinct random partitions, none equal to the observed one (no replacement)."""
    seen = {np.packbits(observed).tobytes()}
    chosen: list[np.ndarray] = []
    while len(chosen) < n_samples:
        batch = min(max(2 * (n_samples - len(chosen)), 1024), 200_000)
        order = rng.random((batch, n)).argsort(axis=1)[:, :n_x]
        masks = np.zeros((batch, n), dtype=bool)
        np.put_along_axis(masks, order, True, axis=1)
        for row, key in zip(masks, (r.tobytes() for r in np.packbits(masks, axis=1))):
            if key not in seen:
                seen.add(key)
                chosen.append(row)
                if len(chosen) == n_samples:
                    break
    return np.array(chosen)


@dataclass(frozen=True)
class PermutationResult:
    p_value: float
    exact: bool
    n_partitions: int  # partitions compared (all of them when exact)
    alternative: str


def permutation_p_value(
    s_x: np.ndarray,
    s_y: np.ndarray,
    budget: int = 100_000,
    rng: np.random.Generator | None = None,
    alternative: Alternative = "greater",
) -> PermutationResult:
    """Permutation p-value of S over re-partitions of X u Y (module docstring for the rules).

    Exact: p = #{partitions with stat >= observed} / #partitions (the observed partition counted).
    Sampled: p = (k + 1) / (N + 1) over N distinct sampled partitions other than the observed.
    """
    s = np.concatenate([s_x, s_y])
    n, n_x = len(s), len(s_x)
    n_y = n - n_x
    observed_mask = np.zeros(n, dtype=bool)
    observed_mask[:n_x] = True
    observed = float(_partition_stats(s, observed_mask[None, :])[0])
    expected = (n_x - n_y) / n * s.sum()  # E[S] under random partitions
    total = math.comb(n, n_x)
    exact = total <= budget
    if exact:
        stats = _partition_stats(s, _exact_masks(n, n_x))
    else:
        rng = rng if rng is not None else np.random.default_rng(0)
        stats = _partition_stats(s, _sampled_masks(n, n_x, budget, rng, observed_mask))
    tol = 1e-12 * max(1.0, abs(observed))
    if alternative == "greater":
        hits = stats >= observed - tol
    elif alternative == "two-sided":
        hits = np.abs(stats - expected) >= abs(observed - expected) - tol
    else:
        raise ValueError(f"alternative must be 'greater' or 'two-sided', not {alternative!r}")
    k = int(hits.sum())
    p = k / len(stats) if exact else (k + 1) / (len(stats) + 1)
    return PermutationResult(float(p), exact, int(len(stats)), alternative)


def bootstrap_effect_sizes(
    x: np.ndarray, y: np.ndarray, a: np.ndarray, b: np.ndarray, n_replicates: int, rng: np.random.Generator
) -> np.ndarray:
    """Effect sizes of ``n_replicates`` bootstrap replicates, resampling words within each of X, Y, A, B.

    Vectorised: one cosine table, attribute resamples as weight matrices, target resamples as index
    matrices; no loop over replicates.
    """
    targets = np.vstack([x, y])
    wa = resample_weights(len(a), n_replicates, rng)
    wb = resample_weights(len(b), n_replicates, rng)
    s_all = cosine_table(targets, a) @ wa.T - cosine_table(targets, b) @ wb.T  # (|X|+|Y|, R)
    ix = resample_indices(len(x), n_replicates, rng)
    iy = resample_indices(len(y), n_replicates, rng) + len(x)
    cols = np.arange(n_replicates)[:, None]
    sx, sy = s_all[ix, cols], s_all[iy, cols]
    union = np.hstack([sx, sy])
    sd = union.std(axis=1, ddof=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (sx.mean(axis=1) - sy.mean(axis=1)) / sd


def frequency_bins(
    vocabulary_size: int, ranks: Sequence[int], excluded: np.ndarray, *, first: int = 25, factor: float = 2.0
) -> list[np.ndarray]:
    """Candidate vocabulary indices for each word of rank ``ranks[i]``: the not-``excluded`` words of
    its frequency bin. Bins are disjoint rank ranges that grow by ``factor`` ([0, 25), [25, 50),
    [50, 100), ...: under Zipf's law a doubling of rank about halves the frequency); a bin with fewer
    candidates than its words need is joined with the next one (the last with the previous)."""
    edges = [0, first]
    while edges[-1] < vocabulary_size:
        edges.append(int(math.ceil(edges[-1] * factor)))
    edges[-1] = vocabulary_size
    allowed = np.ones(vocabulary_size, dtype=bool)
    allowed[excluded] = False
    bin_of = np.searchsorted(edges, np.asarray(ranks), side="right") - 1
    bins = [np.flatnonzero(allowed[lo:hi]) + lo for lo, hi in zip(edges[:-1], edges[1:])]
    need = np.bincount(bin_of, minlength=len(bins))
    # join short bins with their neighbours until every needed bin has room for its words
    groups = [[b] for b in range(len(bins))]
    merged = True
    while merged:
        merged = False
        for g, members in enumerate(groups):
            size = sum(len(bins[b]) for b in members)
            needed = sum(need[b] for b in members)
            if needed and size < 2 * needed + 8 and len(groups) > 1:
                other = g + 1 if g + 1 < len(groups) else g - 1
                lo, hi = sorted((g, other))
                groups[lo] = groups[lo] + groups[hi]
                del groups[hi]
                merged = True
                break
    group_of = {b: g for g, members in enumerate(groups) for b in members}
    pools = [np.concatenate([bins[b] for b in members]) for members in groups]
    if sum(len(p) for p in pools) < len(ranks):
        raise MedbiasInputError(
            f"calibrated null: the vocabulary has {sum(len(p) for p in pools)} words outside the test's "
            f"sets, fewer than the {len(ranks)} that one random draw needs"
        )
    return [pools[group_of[b]] for b in bin_of]


def draw_matched_sets(candidates: Sequence[np.ndarray], n_draws: int, rng: np.random.Generator) -> np.ndarray:
    """(n_draws, len(candidates)) vocabulary indices: column i drawn uniformly from ``candidates[i]``,
    no index twice in a row. Columns that share a candidate pool (one frequency bin) are drawn
    together without replacement: by ranking random keys for a pool of up to 4,096 words, otherwise
    with replacement and redrawing the (rare) rows with a repeat."""
    draws = np.empty((n_draws, len(candidates)), dtype=np.int64)
    pools: dict[bytes, list[int]] = {}
    for i, c in enumerate(candidates):
        pools.setdefault(np.asarray(c).tobytes(), []).append(i)
    for columns in pools.values():
        pool, k = np.asarray(candidates[columns[0]]), len(columns)
        if len(pool) < k:
            raise MedbiasInputError(f"calibrated null: a frequency bin has {len(pool)} candidate words for {k} words")
        if len(pool) <= 4096:
            keys = rng.random((n_draws, len(pool)))
            picks = np.argpartition(keys, k - 1, axis=1)[:, :k] if k < len(pool) else np.argsort(keys, axis=1)
        else:
            picks = rng.integers(0, len(pool), size=(n_draws, k))
            for _ in range(1000):
                ordered = np.sort(picks, axis=1)
                repeated = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
                if len(repeated) == 0:
                    break
                picks[repeated] = rng.integers(0, len(pool), size=(len(repeated), k))
        draws[:, columns] = pool[picks]
    return draws


@dataclass(frozen=True)
class CalibratedNull:
    """The random-attribute-set null of one WEAT/SEAT (``calibrated_null``)."""

    p_value: float  # (1 + #draws at least as extreme) / (draws + 1), on the projection statistic
    ci_low: float  # effect size d minus the null's 97.5% / 2.5% deviations of d from its centre
    ci_high: float
    md_ci_low: float  # the mean difference's interval, from the projection statistic's null
    md_ci_high: float
    null_center: float  # mean projection of the random sets (not 0 when A and B differ in frequency)
    draws: int
    candidates: int  # vocabulary words the draws came from
    projection: float = float("nan")  # the observed projection statistic
    null_z: float = float("nan")  # (projection - null_center) / the null's SD (ddof 1): its distance in null SDs


def calibrated_columns(null: CalibratedNull | None) -> dict[str, float]:
    """The table columns of a calibrated null (NaN, and 0 draws, when none ran): one spelling for
    every study's WEAT/SEAT table."""
    if null is None:
        return {
            "p_calibrated": float("nan"),
            "calibrated_ci_low": float("nan"),
            "calibrated_ci_high": float("nan"),
            "md_ci_low": float("nan"),
            "md_ci_high": float("nan"),
            "null_center": float("nan"),
            "null_z": float("nan"),
            "null_draws": 0,
        }
    return {
        "p_calibrated": null.p_value,
        "calibrated_ci_low": null.ci_low,
        "calibrated_ci_high": null.ci_high,
        "md_ci_low": null.md_ci_low,
        "md_ci_high": null.md_ci_high,
        "null_center": null.null_center,
        "null_z": null.null_z,
        "null_draws": null.draws,
    }


def attribute_direction(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Delta = mean of the unit A rows - mean of the unit B rows: s(w, A, B) = unit(w) . Delta."""
    return unit_rows(a).mean(axis=0) - unit_rows(b).mean(axis=0)


def calibrated_null(
    targets: np.ndarray,
    n_x: int,
    pool: np.ndarray,
    a_draws: np.ndarray,
    b_draws: np.ndarray,
    *,
    effect: float,
    mean_difference: float,
    direction_norm: float,
    alternative: Alternative = "greater",
    level: float = 0.95,
    item_groups: np.ndarray | None = None,
) -> CalibratedNull:
    """Null distribution of WEAT/SEAT when A and B are replaced by random word sets.

    ``targets``: the X rows then the Y rows (fixed). ``pool``: vectors of the candidate words (or, for
    SEAT, of their sentences, with ``item_groups[k]`` the pool word of sentence row k: a word's
    association is then the mean over its sentences, as in the test itself). ``a_draws``/``b_draws``:
    (draws, |A|) and (draws, |B|) indices into the pool words.

    Since s(w, A, B) = unit(w) . Delta with Delta = ``attribute_direction(A, B)``, the mean difference
    is the X - Y centroid difference of the unit targets projected on Delta. The test statistic is
    that projection on the *unit* direction, md / |Delta| (``direction_norm`` for the observed sets):
    it does not depend on how coherent A and B are (random words give a short Delta), and unlike d
    it does not saturate when X and Y are two tight clusters (then almost any direction separates
    them and d sits near its maximum for real and random sets alike, which costs all power).
    p counts draws at least as large (one-sided) or at least as far from the null's centre
    (two-sided), p = (k + 1) / (N + 1); ``null_z`` is the observed projection's distance from the
    null's centre in the null's standard deviations, which still measures an effect beyond the
    smallest p the draws allow (a normal approximation of the null's tail). Intervals invert the
    test under a shift: for the mean difference md - |Delta| * q(T' - c), for d its own null's
    deviations. Exact when directions of
    word sets are exchangeable with the tested one (isotropy); an approximation otherwise."""
    unit_pool = unit_rows(pool)
    if item_groups is not None:
        n_words = int(item_groups.max()) + 1
        counts = np.bincount(item_groups, minlength=n_words)[:, None]
        word_means = np.zeros((n_words, pool.shape[1]))
        np.add.at(word_means, item_groups, unit_pool)
        unit_pool = word_means / counts
    directions = unit_pool[a_draws].mean(axis=1) - unit_pool[b_draws].mean(axis=1)  # (draws, dim)
    s = unit_rows(targets) @ directions.T  # (T, draws)
    differences = s[:n_x].mean(axis=0) - s[n_x:].mean(axis=0)
    norms = np.linalg.norm(directions, axis=1)
    sd = s.std(axis=0, ddof=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        projections = np.where(norms > 0, differences / norms, np.nan)
        d_null = np.where(sd > 0, differences / sd, np.nan)
    projections, d_null = projections[np.isfinite(projections)], d_null[np.isfinite(d_null)]
    observed = mean_difference / direction_norm if direction_norm > 0 else float("nan")
    center = float(projections.mean())
    if alternative == "greater":
        hits = int(np.sum(projections >= observed))
    else:
        hits = int(np.sum(np.abs(projections - center) >= abs(observed - center)))
    alpha = (1 - level) / 2
    lo, hi = np.quantile(d_null - d_null.mean(), [alpha, 1 - alpha])
    t_lo, t_hi = np.quantile(projections - center, [alpha, 1 - alpha])
    spread = float(projections.std(ddof=1)) if len(projections) > 1 else float("nan")
    return CalibratedNull(
        (hits + 1) / (len(projections) + 1),
        float(effect - hi),
        float(effect - lo),
        float(mean_difference - direction_norm * t_hi),
        float(mean_difference - direction_norm * t_lo),
        center,
        int(len(projections)),
        0,
        float(observed),
        float((observed - center) / spread) if spread > 0 else float("nan"),
    )


@dataclass(frozen=True)
class NullVocabulary:
    """What the calibrated null draws from: the model's vocabulary in descending frequency order (the
    order of word2vec and GloVe files), words to keep out (every word of the study's word sets), the
    number of random set pairs, and whether to run it at all."""

    words: Sequence[str]
    exclude: frozenset[str] = frozenset()
    draws: int = 10_000

    @cached_property
    def rank(self) -> dict[str, int]:
        return {w: i for i, w in enumerate(self.words)}


@dataclass(frozen=True)
class WeatResult:
    effect_size: float
    statistic: float
    mean_difference: float  # mean_X s - mean_Y s, unnormalised (tracks strength once d saturates)
    p_value: float
    p_exact: bool
    n_partitions: int
    alternative: str
    ci_low: float
    ci_high: float
    coverage: dict[str, WordSetCoverage] = field(default_factory=dict)
    calibrated: CalibratedNull | None = None


def weat(
    vectors: Mapping[str, np.ndarray],
    x_words: Sequence[str],
    y_words: Sequence[str],
    a_words: Sequence[str],
    b_words: Sequence[str],
    *,
    rng: np.random.Generator,
    budget: int = 100_000,
    alternative: Alternative = "greater",
    n_bootstrap: int = 1000,
    min_fraction: float = 0.5,
    names: tuple[str, str, str, str] = ("X", "Y", "A", "B"),
    null_vocabulary: NullVocabulary | None = None,
) -> WeatResult:
    """WEAT of targets X vs Y against attributes A vs B (positive: X closer to A than Y is).

    p: the permutation test over re-partitions of X u Y; interval: percentile bootstrap of d
    resampling words within each set (it shrinks towards 0 on null data, so it is conservative and
    can disagree with p). With ``null_vocabulary``, also the calibrated null (``calibrated_null``):
    random A and B of the same sizes, each word drawn from the frequency bin of the word it stands for."""
    x, cx = lookup(vectors, x_words, names[0], min_fraction)
    y, cy = lookup(vectors, y_words, names[1], min_fraction)
    a, ca = lookup(vectors, a_words, names[2], min_fraction)
    b, cb = lookup(vectors, b_words, names[3], min_fraction)
    s_x, s_y = association_scores(x, a, b), association_scores(y, a, b)
    perm = permutation_p_value(s_x, s_y, budget, rng, alternative)
    lo, hi = (
        percentile_interval(bootstrap_effect_sizes(x, y, a, b, n_bootstrap, rng)) if n_bootstrap else (np.nan, np.nan)
    )
    d, md = effect_size(s_x, s_y), float(s_x.mean() - s_y.mean())
    calibrated = None
    if null_vocabulary is not None and null_vocabulary.draws > 0:
        calibrated = word_vector_null(
            vectors,
            np.vstack([x, y]),
            len(x),
            ca.found,
            cb.found,
            null_vocabulary,
            effect=d,
            mean_difference=md,
            direction_norm=float(np.linalg.norm(attribute_direction(a, b))),
            alternative=alternative,
            rng=rng,
            exclude_also=(*cx.found, *cy.found),
        )
    return WeatResult(
        d,
        weat_statistic(s_x, s_y),
        md,
        perm.p_value,
        perm.exact,
        perm.n_partitions,
        perm.alternative,
        lo,
        hi,
        {c.name: c for c in (cx, cy, ca, cb)},
        calibrated,
    )


def word_vector_null(
    vectors: Mapping[str, np.ndarray],
    targets: np.ndarray,
    n_x: int,
    a_words: Sequence[str],
    b_words: Sequence[str],
    vocabulary: NullVocabulary,
    *,
    effect: float,
    mean_difference: float,
    direction_norm: float,
    alternative: Alternative,
    rng: np.random.Generator,
    exclude_also: Sequence[str] = (),
) -> CalibratedNull:
    """``calibrated_null`` for word vectors: each word of A and B is replaced by a random vocabulary
    word of its frequency bin (``frequency_bins``; rank = position in ``vocabulary.words``), never a
    word of the test or of ``vocabulary.exclude``."""
    rank = vocabulary.rank
    missing = [w for w in (*a_words, *b_words) if w not in rank]
    if missing:
        raise MedbiasInputError(f"calibrated null: {', '.join(missing[:5])} not in the vocabulary list")
    excluded = np.array(
        sorted({rank[w] for w in (*a_words, *b_words, *exclude_also, *vocabulary.exclude) if w in rank}), dtype=np.int64
    )
    ranks = [rank[w] for w in (*a_words, *b_words)]
    candidates = frequency_bins(len(vocabulary.words), ranks, excluded)
    draws = draw_matched_sets(candidates, vocabulary.draws, rng)
    used, local = np.unique(draws, return_inverse=True)
    local = local.reshape(draws.shape)
    pool = np.stack([np.asarray(vectors[vocabulary.words[i]], dtype=np.float64) for i in used])
    result = calibrated_null(
        targets,
        n_x,
        pool,
        local[:, : len(a_words)],
        local[:, len(a_words) :],
        effect=effect,
        mean_difference=mean_difference,
        direction_norm=direction_norm,
        alternative=alternative,
    )
    return replace(result, candidates=int(len(np.unique(np.concatenate(candidates)))))


def sentence_null(
    vectors: Mapping[str, np.ndarray],
    sentences: Mapping[str, Sequence[str]],
    n_a_words: int,
    pool: np.ndarray,
    pool_groups: np.ndarray,
    candidates: Sequence[np.ndarray],
    draws: int,
    rng: np.random.Generator,
    *,
    effect: float,
    mean_difference: float,
    alternative: Alternative,
) -> CalibratedNull:
    """``calibrated_null`` for sentence encoders (SEAT): each word of A and B is replaced by a random
    phrase of the pool (``candidates[i]``: the pool items that can stand for word i, e.g. phrases of as
    many tokens), a phrase's vector the mean over its sentences (``pool_groups``: the item of each row of
    ``pool``). ``vectors`` maps every sentence of ``sentences`` (X, Y, A, B; a word's sentences in
    order, A's words first among the draws' columns: ``n_a_words`` of them) to its vector; the targets
    are the distinct X then Y sentences."""
    drawn = draw_matched_sets(candidates, draws, rng)
    x_sentences, y_sentences = (list(dict.fromkeys(sentences[k])) for k in ("X", "Y"))
    targets = np.stack([vectors[s] for s in (*x_sentences, *y_sentences)]).astype(np.float64)
    direction = attribute_direction(*(np.stack([vectors[s] for s in sentences[k]]).astype(np.float64) for k in "AB"))
    return calibrated_null(
        targets,
        len(x_sentences),
        pool,
        drawn[:, :n_a_words],
        drawn[:, n_a_words:],
        effect=effect,
        mean_difference=mean_difference,
        direction_norm=float(np.linalg.norm(direction)),
        alternative=alternative,
        item_groups=pool_groups,
    )


def ect_score(targets: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
    """Embedding Coherence Test (Dev & Phillips 2019): Spearman's rho between cos(t, mean X) and
    cos(t, mean Y) over the targets t. 1 = no bias; lower = more bias."""
    s_x = cosine_table(targets, x.mean(axis=0, keepdims=True))[:, 0]
    s_y = cosine_table(targets, y.mean(axis=0, keepdims=True))[:, 0]
    return float(spearmanr(s_x, s_y).statistic)


def bootstrap_ect(
    targets: np.ndarray, x: np.ndarray, y: np.ndarray, n_replicates: int, rng: np.random.Generator
) -> np.ndarray:
    """ECT of bootstrap replicates resampling the targets and the words of X and Y (vectorised)."""
    mean_x = resample_weights(len(x), n_replicates, rng) @ x  # (R, d)
    mean_y = resample_weights(len(y), n_replicates, rng) @ y
    unit_t = unit_rows(targets)
    s_x = unit_t @ unit_rows(mean_x).T  # (T, R)
    s_y = unit_t @ unit_rows(mean_y).T
    it = resample_indices(len(targets), n_replicates, rng)
    cols = np.arange(n_replicates)[:, None]
    rx = rankdata(s_x[it, cols], axis=1)
    ry = rankdata(s_y[it, cols], axis=1)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rx * ry).sum(axis=1) / np.sqrt((rx**2).sum(axis=1) * (ry**2).sum(axis=1))


def relation_vector(x_pairs: np.ndarray, y_pairs: np.ndarray) -> np.ndarray:
    """RIPA relation vector (Ethayarajh et al. 2019): the first principal component of the pair
    differences x_i - y_i, taken without centring (centring would remove the shared direction that
    the pairs define), unit length, signed so that the mean difference projects positively."""
    diffs = x_pairs - y_pairs
    _, _, vt = np.linalg.svd(diffs, full_matrices=False)
    g = vt[0]
    if diffs.mean(axis=0) @ g < 0:
        g = -g
    return g / np.linalg.norm(g)


def ripa_scores(words: np.ndarray, g: np.ndarray) -> np.ndarray:
    """RIPA score of each word: its dot product with the relation vector (positive: the x side)."""
    return words @ g


@dataclass(frozen=True)
class DirectBias:
    """Direct Bias of a word set (Bolukbasi et al. 2016; Sogancioglu et al. 2023, eq. 1)."""

    direct_bias: float  # mean |cos(w, g)| (eq. 1, c = 1)
    signed: float  # mean cos(w, g): > 0 leans to the first (female) words of the pairs
    signed_low: float
    signed_high: float
    words: int
    pairs: int
    explained_variance: float  # share of the pair differences' variance along g
    direct_bias_low: float = float("nan")  # 95% interval of Direct Bias, from the same resamples as the signed mean's
    direct_bias_high: float = float("nan")


def lean_against_random_words(
    observed: float, random_cosines: np.ndarray, n_words: int, draws: int, rng: np.random.Generator
) -> tuple[float, float]:
    """The calibrated lean: the signed mean cosine ``observed`` of ``n_words`` words against the signed mean
    cosines of ``draws`` random sets of ``n_words`` drawn from ``random_cosines`` (the cosines of random
    words with the same gender direction; without replacement where there are enough). Returns the null's
    mean (how far random words lean) and the two-sided p, 2 x the smaller tail share with the observed
    set counted in the null, at most 1. A set of words with no lean of its own matches random words
    rather than 0: word vectors share directions that make any set lean a little."""
    pool = np.asarray(random_cosines, dtype=float)
    replace = len(pool) < n_words
    null = np.array([pool[rng.choice(len(pool), n_words, replace=replace)].mean() for _ in range(draws)])
    below, above = (1 + np.sum(null <= observed)) / (draws + 1), (1 + np.sum(null >= observed)) / (draws + 1)
    return float(null.mean()), float(min(1.0, 2 * min(below, above)))


def direct_bias(
    words: np.ndarray,
    female: np.ndarray,
    male: np.ndarray,
    n_replicates: int = 0,
    rng: np.random.Generator | None = None,
) -> DirectBias:
    """Direct Bias of ``words`` (rows) against the gender direction g of the definitional pairs
    (``female[i]``, ``male[i]``): g = ``relation_vector`` (the first principal component of the pair
    differences, uncentred, signed towards the female words). The signed mean says which side the
    words lean to. The 95% intervals of both come from the same resamples of the words."""
    g = relation_vector(female, male)
    diffs = female - male
    total = float((diffs**2).sum())
    explained = float(((diffs @ g) ** 2).sum() / total) if total > 0 else float("nan")
    cosines = unit_rows(words) @ g
    low = high = db_low = db_high = float("nan")
    if n_replicates > 0:
        generator = rng if rng is not None else np.random.default_rng(0)
        resampled = cosines[resample_indices(len(cosines), n_replicates, generator)]
        low, high = percentile_interval(resampled.mean(axis=1))
        db_low, db_high = percentile_interval(np.abs(resampled).mean(axis=1))
    return DirectBias(
        float(np.abs(cosines).mean()),
        float(cosines.mean()),
        low,
        high,
        len(words),
        len(female),
        explained,
        db_low,
        db_high,
    )
