"""Reliability of human judgments and the correlation it allows a metric: Krippendorff's alpha, split-half
reliability with the Spearman-Brown correction, and the noise ceiling.

Ratings are an array ``(N, M, A)``: N systems x M inputs x A annotator slots, NaN where a slot is empty (the
shape of :meth:`metaeval.datasets.Dataset.ratings`). :func:`krippendorff_alpha` also takes a 2-D
``(units, coders)`` array, the layout of Krippendorff (2011).

* :func:`krippendorff_alpha`: agreement among annotators corrected for chance, for nominal, ordinal,
  interval and ratio data, computed from the coincidence matrix as in Krippendorff (2011), "Computing
  Krippendorff's Alpha-Reliability", https://repository.upenn.edu/asc_papers/43.
* :func:`split_half_reliability`: the reliability r_kk of the mean of the k annotators at a level, from the
  correlation of two halves of the annotators computed as a metric's is, stepped up to k annotators with the
  Spearman-Brown prophecy formula (Spearman, 1910; Brown, 1910), with a Boot-Both CI.
* :func:`noise_ceiling`: what a perfect metric (one equal to the true score) is expected to reach against
  the k-annotator mean at a level, per coefficient: the expected coefficient at population correlation
  sqrt(r_kk) (Lord & Novick, 1968, eq. 3.7.3; validated by simulation, ``benchmarks/bench_ceiling.py``).
* :func:`disattenuate`: Spearman's (1904) correction for attenuation, r / sqrt(r_kk) for an error-free metric;
  an estimate of the Pearson correlation with the true score, reported only as a labelled, separate number
  (a correction of covariances: there is none for rank coefficients here).
* :data:`MIN_SIZES`: the smallest design (5 systems and 5 inputs) on which any of these is reported; below
  it, "cannot be tested".
"""

from __future__ import annotations

import functools
import itertools
import warnings
from dataclasses import dataclass

import numba
import numpy as np
from scipy.special import gammaln, hyp2f1

from metaeval._warnings import warn_degenerate
from metaeval.stats.correlation import ConfidenceInterval, check_confidence_level, check_rng, level_corr, rescale
from metaeval.stats.resampling import check_n_resamples, draw_indices, percentile_interval

__all__ = [
    "AlphaResult",
    "SplitHalfResult",
    "NoiseCeilingResult",
    "MinimumSizes",
    "MIN_SIZES",
    "expected_correlation",
    "krippendorff_alpha",
    "split_half_reliability",
    "noise_ceiling",
    "disattenuate",
    "spearman_brown",
    "ALPHA_LEVELS",
    "RELIABILITY_LEVELS",
    "CEILING_COEFFICIENTS",
]

ALPHA_LEVELS = ("nominal", "ordinal", "interval", "ratio")
RELIABILITY_LEVELS = ("system", "summary", "global")
#: the coefficients a noise ceiling is computed for (each its own: a Pearson ceiling is no bound on a rank row)
CEILING_COEFFICIENTS = ("pearson", "spearman", "kendall")


# ----------------------------------------------------------------------------------------------------
# Krippendorff's alpha


@dataclass(frozen=True)
class AlphaResult:
    """Krippendorff's alpha.

    Attributes
    ----------
    alpha : float
        1 - D_o / D_e (NaN where the expected disagreement is 0: every pairable value is the same).
    level : str
        The level of measurement (metric of differences).
    observed_disagreement, expected_disagreement : float
        D_o and D_e of Krippendorff (2011).
    n_units : int
        Units with at least two values (the pairable units; the others do not enter alpha).
    n_values : int
        Pairable values (n.. in Krippendorff, 2011).
    """

    alpha: float
    level: str
    observed_disagreement: float
    expected_disagreement: float
    n_units: int
    n_values: int


def _units_by_coders(ratings) -> tuple[np.ndarray, np.ndarray | None]:
    """``(values, labels)``: a float units x coders array (NaN = not rated) and, for labels that are not
    numbers (strings: nominal data), the distinct labels whose codes 0, 1, ... the array holds instead."""
    raw = np.asarray(ratings, dtype=object) if not isinstance(ratings, np.ndarray) else ratings
    labels = None
    if raw.dtype.kind in "OUS":
        flat = raw.ravel()
        missing = np.array([v is None or (isinstance(v, float) and v != v) for v in flat], dtype=bool)
        try:
            arr = np.asarray(np.where(missing, np.nan, flat).reshape(raw.shape), dtype=float)
        except (TypeError, ValueError):
            # labels (strings ...): only equality is defined, which is all the nominal level needs
            names = np.array([str(v) for v in flat[~missing]], dtype=object)
            labels, codes = np.unique(names, return_inverse=True) if names.size else (np.empty(0, object), [])
            arr = np.full(flat.shape, np.nan)
            arr[~missing] = codes
            arr = arr.reshape(raw.shape)
    else:
        try:
            arr = np.asarray(raw, dtype=float)
        except (TypeError, ValueError):
            raise TypeError("ratings must be numbers (or, at level='nominal', labels) with NaN or None for a "
                            "missing rating") from None
    if arr.ndim == 3:
        arr = arr.reshape(-1, arr.shape[2])
    if arr.ndim != 2:
        raise ValueError(
            "ratings must be 2-D (units x coders) or 3-D (systems x inputs x annotators), "
            f"got shape {arr.shape}"
        )
    if np.isinf(arr).any():
        raise ValueError("ratings contain infinite values; use NaN for a missing rating")
    return arr, labels


def _sum_sq_dev(v: np.ndarray, axis=None) -> np.ndarray:
    """Sum of squared deviations from the mean (two passes: no cancellation), NaN entries ignored."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows give NaN means, not used
        mean = np.nanmean(v, axis=axis, keepdims=True)
    return np.nansum((v - mean) ** 2, axis=axis)


def _midranks(arr: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Every pairable value replaced by its midrank among all pairable values (NaN stays NaN). The ordinal
    delta^2_ck = (sum_{g=c}^{k} n_g - (n_c + n_k) / 2)^2 of Krippendorff (2011) is (a_k - a_c)^2 with a_c =
    sum_{g<c} n_g + n_c / 2, the midrank of c: the ordinal alpha is the interval alpha of the midranks."""
    values, inverse, counts = np.unique(present, return_inverse=True, return_counts=True)
    cum = np.concatenate([[0.0], np.cumsum(counts, dtype=float)])
    out = np.full(arr.shape, np.nan)
    out[~np.isnan(arr)] = (cum[:-1] + counts / 2.0)[inverse]
    return out


def _ratio_delta2(c: np.ndarray, k: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        d = ((c - k) / (c + k)) ** 2
    return np.where(c == k, 0.0, d)


@numba.njit(cache=True)
def _ratio_expected(values, counts):  # pragma: no cover - compiled
    """sum_{c != k} n_c n_k ((c - k) / (c + k))^2 over the distinct (positive or zero) values: O(K^2) time in
    O(1) memory (20,000 distinct values in about a second), where the matrix would take K^2 floats."""
    total = 0.0
    for i in range(values.shape[0]):
        row = 0.0
        for j in range(i + 1, values.shape[0]):
            d = (values[i] - values[j]) / (values[i] + values[j])
            row += counts[j] * d * d
        total += 2.0 * counts[i] * row
    return total


def _disagreements(arr: np.ndarray, m_u: np.ndarray, level: str) -> tuple[float, float, float]:
    """(D_o, D_e, n..) of Krippendorff (2011) without the coincidence matrix: interval and ordinal from sums of
    squared deviations (O(n log n)), nominal from value counts, ratio by a compiled loop over distinct values."""
    present = arr[~np.isnan(arr)]
    n = float(present.size)
    weight = 1.0 / (m_u - 1)
    if level in ("interval", "ordinal"):
        # sum_{i != j} (v_i - v_j)^2 = 2 m sum_i (v_i - mean)^2, within each unit and over all pairable values
        t = arr if level == "interval" else _midranks(arr, present)
        d_o = float(np.sum(weight * 2.0 * m_u * _sum_sq_dev(t, axis=1)) / n)
        d_e = float(2.0 * _sum_sq_dev(t[~np.isnan(t)]) / (n - 1))
        return d_o, d_e, n
    values, inverse, n_c = np.unique(present, return_inverse=True, return_counts=True)
    codes = np.full(arr.shape, -1)
    codes[~np.isnan(arr)] = inverse
    if level == "nominal":
        # ordered pairs of a unit with different values: m_u^2 - sum_c n_uc^2
        rows = np.broadcast_to(np.arange(arr.shape[0])[:, None], arr.shape)[codes >= 0]
        keys, n_uc = np.unique(rows * values.size + codes[codes >= 0], return_counts=True)
        unit_of = keys // values.size
        same = np.bincount(unit_of, weights=n_uc.astype(float) ** 2, minlength=arr.shape[0])
        d_o = float(np.sum(weight * (m_u.astype(float) ** 2 - same)) / n)
        d_e = float((n * n - np.sum(n_c.astype(float) ** 2)) / (n * (n - 1)))
        return d_o, d_e, n
    # ratio: the pairs within units (coders^2 per unit), then every two distinct values in blocks
    d_o = 0.0
    for i in range(arr.shape[1]):
        for j in range(arr.shape[1]):
            if i != j:
                ok = ~np.isnan(arr[:, i]) & ~np.isnan(arr[:, j])
                d_o += float(np.sum(weight[ok] * _ratio_delta2(arr[ok, i], arr[ok, j])))
    d_e = float(_ratio_expected(values, n_c.astype(float)))
    return d_o / n, d_e / (n * (n - 1)), n


def krippendorff_alpha(ratings, *, level: str = "interval") -> AlphaResult:
    """Krippendorff's alpha of the annotators' agreement (Krippendorff, 2011).

    Parameters
    ----------
    ratings : array_like
        ``(units, coders)`` or ``(N, M, A)`` (every system x input cell is a unit); NaN (or None) = not
        rated. At ``level="nominal"`` the ratings may be labels (strings): only their equality counts.
    level : {"nominal", "ordinal", "interval", "ratio"}
        The level of measurement; Likert scores are ordinal or interval.

    Returns
    -------
    AlphaResult

    Notes
    -----
    With the coincidence matrix o_ck = sum_u sum_{i != j} [v_ui = c][v_uj = k] / (m_u - 1) over units with
    m_u >= 2 values, n_c its margins and n.. their sum, alpha = 1 - (n.. - 1) sum o_ck d2_ck /
    sum_{c,k} n_c n_k d2_ck. Units with one value cannot be paired and do not count. The sums are not taken
    over the matrix, whose size is the square of the number of distinct values (continuous ratings): for the
    interval level d2_ck = (c - k)^2 and both sums are sums of squared deviations (within each unit, and over
    all pairable values); the ordinal level is the interval level of the values' midranks; the nominal level
    counts equal pairs; the ratio level sums its d2 over every two distinct values in a compiled loop (no
    matrix). Ratings whose squares would leave float64's range (one of 1e308, all times 1e200) are scaled by a
    power of 2 first, which alpha does not depend on (exact); D_o and D_e are reported in the ratings' units.

    Examples
    --------
    Krippendorff's (2011) worked example (12 units, 4 observers, values 1-5; p. 8 of the paper):

    >>> import numpy as np
    >>> nan = np.nan
    >>> data = np.array([[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    ...                  [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    ...                  [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    ...                  [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]]).T
    >>> [round(krippendorff_alpha(data, level=m).alpha, 3) for m in ("nominal", "ordinal", "interval")]
    [0.743, 0.815, 0.849]
    >>> round(krippendorff_alpha([["a", "a"], ["b", "b"], ["a", "b"]], level="nominal").alpha, 3)
    0.444
    """
    if level not in ALPHA_LEVELS:
        raise ValueError(f"level must be one of {ALPHA_LEVELS}, got {level!r}")
    arr, labels = _units_by_coders(ratings)
    if labels is not None and level != "nominal":
        raise ValueError(f"ratings are labels ({', '.join(map(repr, labels[:3]))}, ...), which have no order or "
                         f"distance: level={level!r} needs numbers; use level='nominal' for labels")
    if level == "ratio" and (arr[~np.isnan(arr)] < 0).any():
        raise ValueError("level='ratio' needs non-negative ratings; use level='interval' for signed scores")
    m_u = (~np.isnan(arr)).sum(axis=1)
    arr = arr[m_u >= 2]
    m_u = m_u[m_u >= 2]
    if not arr.size:
        warn_degenerate("krippendorff_alpha: no unit has two ratings, so no pair of ratings can be compared; "
                        "alpha is NaN")
        return AlphaResult(np.nan, level, np.nan, np.nan, 0, 0)
    # a power of 2 keeps the squares in range (alpha is scale-free at every level; exact)
    scaled = rescale(arr) if level in ("interval", "ratio") else arr
    d_o, d_e, n = _disagreements(scaled, m_u, level)
    alpha_value = 1.0 - d_o / d_e if d_e > 0 else np.nan
    if level == "interval" and scaled is not arr:
        exponent = 2 * int(np.frexp(np.nanmax(np.abs(arr)))[1])  # back to the ratings' units (inf if beyond)
        with np.errstate(over="ignore"):
            d_o, d_e = float(np.ldexp(d_o, exponent)), float(np.ldexp(d_e, exponent))
    if not alpha_value == alpha_value:
        warn_degenerate("krippendorff_alpha: every pairable rating has the same value, so the expected "
                        "disagreement is 0 and alpha is undefined (NaN)")
    return AlphaResult(alpha_value, level, d_o, d_e, int(arr.shape[0]), int(round(n)))


# ----------------------------------------------------------------------------------------------------
# Split-half reliability and the noise ceiling


def spearman_brown(r, factor):
    """The Spearman-Brown prophecy: reliability of a mean of ``factor`` times as many parallel ratings.

    ``factor * r / (1 + (factor - 1) * r)``.

    Examples
    --------
    >>> spearman_brown(0.5, 2)
    0.6666666666666666
    """
    r = np.asarray(r, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = factor * r / (1 + (factor - 1) * r)
    return out if out.ndim else float(out)


def _single_from_halves(r, a: int, b: int):
    """The single-annotator reliability rho of parallel annotators whose a- and b-annotator means correlate r.

    Under the parallel model corr(mean_a, mean_b) = sqrt(rho_a rho_b) with rho_a = a rho / (1 + (a-1) rho);
    squaring gives (ab - r^2 (a-1)(b-1)) rho^2 - r^2 (a+b-2) rho - r^2 = 0, whose positive root is rho. For
    a = b this is the usual Spearman-Brown step from a half to the whole. r <= 0 (halves that do not agree)
    gives rho = r / sqrt(ab) (no reliability to step up; the sign is kept so the mean shows it).
    """
    r = np.asarray(r, dtype=float)
    r2 = r * r
    qa = a * b - r2 * (a - 1) * (b - 1)
    qb = -r2 * (a + b - 2)
    qc = -r2
    with np.errstate(invalid="ignore", divide="ignore"):
        root = (-qb + np.sqrt(qb * qb - 4 * qa * qc)) / (2 * qa)
    return np.where(r > 0, root, r / np.sqrt(a * b))


# ----------------------------------------------------------------------------------------------------
# Minimum sizes


@dataclass(frozen=True)
class MinimumSizes:
    """The smallest design on which a reliability, a noise ceiling or a Boot-Both interval is reported.

    Below it the statistic is not a number but "cannot be tested: <shortfall>". Why 5 of each: a correlation
    of 2 points is always +-1 and one of 3 points takes few values; a bootstrap of n units draws
    n (1 - (1 - 1/n)^n) distinct units on average (2.1 of 3, 3.4 of 5) and all draws are the same unit (an
    undefined correlation) with probability n^(1 - n) (11 % of resamples at n = 3, 0.16 % at n = 5). Systems
    and inputs are both resampled by Boot-Both, so both are required (a summary-level correlation is over
    systems within each input, a system-level one over system means of the inputs).

    Attributes
    ----------
    systems, inputs : int
        The minimum numbers of systems and of inputs.
    """

    systems: int = 5
    inputs: int = 5

    def shortfall(self, n_systems: int, n_inputs: int) -> str | None:
        """None if ``n_systems`` x ``n_inputs`` is large enough, else what is missing, for a "cannot be tested"
        message.

        >>> MIN_SIZES.shortfall(3, 100)
        '3 systems (at least 5 needed)'
        >>> MIN_SIZES.shortfall(16, 100) is None
        True
        """
        short = []
        if n_systems < self.systems:
            short.append(f"{n_systems} systems (at least {self.systems} needed)")
        if n_inputs < self.inputs:
            short.append(f"{n_inputs} inputs (at least {self.inputs} needed)")
        return " and ".join(short) or None


#: the one record of minimum sizes (systems AND inputs) for reliability, ceilings and bootstrap-based verdicts
MIN_SIZES = MinimumSizes()


# ----------------------------------------------------------------------------------------------------
# The expected sample coefficient of a bivariate normal, and its inverse


def expected_correlation(rho, n: int, coefficient: str = "pearson"):
    """The expected sample coefficient of ``n`` pairs from a bivariate normal with correlation ``rho``.

    * Pearson: E[r] = rho (2 / (n-1)) (Gamma(n/2) / Gamma((n-1)/2))^2 2F1(1/2, 1/2; (n+1)/2; rho^2)
      (Ghosh, 1966, "Asymptotic expansions for the moments of the distribution of correlation coefficient",
      Biometrika 53; the bias Olkin & Pratt, 1958, correct); E[r] < rho for small n.
    * Spearman: E[r_s] = 6 / (pi (n+1)) (asin(rho) + (n-2) asin(rho/2)) (Moran, 1948, Biometrika 35).
    * Kendall: E[tau] = (2/pi) asin(rho) for every n (Greiner's relation; Kendall, 1949: tau is unbiased).

    Continuous scores are assumed (no ties).

    Examples
    --------
    >>> round(expected_correlation(0.9, 5), 4), round(expected_correlation(0.9, 10**6), 4)
    (0.8687, 0.9)
    >>> round(expected_correlation(0.5, 5, "kendall"), 4)  # (2/pi) asin(1/2) = 1/3
    0.3333
    """
    if coefficient not in CEILING_COEFFICIENTS:
        raise ValueError(f"coefficient must be one of {CEILING_COEFFICIENTS}, got {coefficient!r}")
    rho = np.clip(np.asarray(rho, dtype=float), -1.0, 1.0)
    if coefficient == "kendall":
        out = 2 / np.pi * np.arcsin(rho)
    elif coefficient == "spearman":
        out = 6 / (np.pi * (n + 1)) * (np.arcsin(rho) + (n - 2) * np.arcsin(rho / 2))
    else:
        const = np.exp(2 * (gammaln(n / 2) - gammaln((n - 1) / 2))) * 2 / (n - 1)
        with np.errstate(invalid="ignore"):
            series = hyp2f1(0.5, 0.5, (n + 1) / 2, rho * rho)
        # at |rho| = 1 every sample has r = rho (scipy's 2F1 at 1 is NaN for large n)
        out = np.where(np.abs(rho) == 1.0, rho, rho * const * series)
    return out if out.ndim else float(out)


@functools.lru_cache(maxsize=64)
def _expectation_grid(n: int, coefficient: str) -> tuple[np.ndarray, np.ndarray]:
    rho = np.linspace(-1.0, 1.0, 4001)
    return rho, np.asarray(expected_correlation(rho, n, coefficient))


def _population_correlation(r, n: int, coefficient: str):
    """The inverse of :func:`expected_correlation`: the rho whose expected sample coefficient is ``r``
    (monotone in rho; interpolated on a grid of step 5e-4; ``|r|`` beyond E at rho = +-1 maps to +-1)."""
    rho, expected = _expectation_grid(int(n), coefficient)
    r = np.asarray(r, dtype=float)
    return np.where(np.isnan(r), np.nan, np.interp(r, expected, rho))


# ----------------------------------------------------------------------------------------------------
# Split halves and the noise ceiling


@dataclass(frozen=True)
class SplitHalfResult:
    """Split-half reliability of the mean of k annotators at a level, stepped up with Spearman-Brown.

    Attributes
    ----------
    reliability : float
        r_kk: the reliability of the k-annotator mean at this level (the squared correlation of the mean with
        its true score, on the Pearson scale), averaged over the splits.
    half_correlation : float
        The mean over splits of the halves' observed coefficient at this level (``coefficient``, computed as
        :func:`metaeval.correlate` computes it: at summary level the average of the per-input coefficients).
    single_reliability : float
        The reliability of one annotator implied by the halves (mean over splits).
    confidence_interval : ConfidenceInterval
        Boot-Both percentile interval of ``reliability`` (systems and inputs resampled together).
    level : str
    n_annotators : int
        k, the annotator slots with at least one rating.
    n_splits : int
        Splits of the annotators averaged (every split when there are at most ``n_splits`` of them).
    coefficient : str
        The coefficient the halves were correlated with.
    n : int
        The sample size of one coefficient (systems at system and summary level, cells at global level), the
        n of the finite-sample map :func:`expected_correlation`.
    """

    reliability: float
    half_correlation: float
    single_reliability: float
    confidence_interval: ConfidenceInterval
    level: str
    n_annotators: int
    n_splits: int
    coefficient: str = "pearson"
    n: int = 0


@dataclass(frozen=True)
class NoiseCeilingResult:
    """The noise ceiling: the expected coefficient of a perfect metric with the mean human score.

    Attributes
    ----------
    ceiling : float
        E[coefficient] of n pairs at correlation sqrt(r_kk) (:func:`expected_correlation`); NaN with a warning
        when r_kk <= 0 (the annotators' means do not agree at this level).
    confidence_interval : ConfidenceInterval
        The reliability's Boot-Both percentile interval mapped the same way (percentiles commute with the
        monotone map; a bound <= 0 maps to 0).
    reliability : SplitHalfResult
        The split-half estimate it rests on.
    level : str
    coefficient : str
    estimator : str
        A sentence naming the estimator and its source.
    """

    ceiling: float
    confidence_interval: ConfidenceInterval
    reliability: SplitHalfResult
    level: str
    estimator: str
    coefficient: str = "pearson"


def _check_ratings(ratings) -> np.ndarray:
    arr = np.asarray(ratings, dtype=float)
    if arr.ndim != 3:
        raise ValueError(
            f"ratings must be an array (systems, inputs, annotators) as Dataset.ratings returns, got shape "
            f"{arr.shape}"
        )
    if np.isinf(arr).any():
        raise ValueError("ratings contain infinite values; use NaN for a missing rating")
    used = ~np.all(np.isnan(arr), axis=(0, 1))
    arr = arr[:, :, used]
    if arr.shape[2] < 2:
        raise ValueError(
            f"ratings need at least 2 annotators with ratings to split, got {arr.shape[2]}; a dataset with one "
            "rating per item has no split-half reliability"
        )
    rated = ~np.all(np.isnan(arr), axis=2)
    short = MIN_SIZES.shortfall(int(rated.any(axis=1).sum()), int(rated.any(axis=0).sum()))
    if short:
        raise ValueError(f"ratings: cannot be tested: {short} for a reliability (MIN_SIZES), got shape {arr.shape}")
    return arr


def _splits(k: int, n_splits: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Annotator masks of the first half: every split if there are at most n_splits, else a random sample."""
    a = k // 2
    combos = list(itertools.combinations(range(k), a))
    if 2 * a == k:  # {S, complement} and {complement, S} are the same split
        combos = [c for c in combos if 0 in c]
    if len(combos) > n_splits:
        pick = rng.choice(len(combos), size=n_splits, replace=False)
        combos = [combos[i] for i in np.sort(pick)]
    return [np.isin(np.arange(k), c) for c in combos]


def _nanmean(values, axis=None):
    """``np.nanmean`` without its warning for an all-NaN slice (NaN there, which the callers expect)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(values, axis=axis)


def _half_means(arr: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # a cell without ratings in one half is NaN: masked by the callers
    return _nanmean(arr[:, :, mask], axis=2), _nanmean(arr[:, :, ~mask], axis=2)


def _sample_size(arr: np.ndarray, level: str) -> int:
    """n of one coefficient at ``level``: systems (system level; summary level: the median number of systems
    rated per input), or the rated cells (global level)."""
    rated = ~np.all(np.isnan(arr), axis=2)
    if level == "system":
        return int(rated.any(axis=1).sum())
    if level == "summary":
        return int(np.median(rated.sum(axis=0)))
    return int(rated.sum())


def _why_undefined(arr: np.ndarray, mask: np.ndarray, level: str) -> str:
    """Why one split's half coefficient is undefined, in words (the real reason, for the warning)."""
    H1, H2 = _half_means(arr, mask)
    ok = ~(np.isnan(H1) | np.isnan(H2))
    if not ok.any():
        return "no cell is rated by both halves: the two halves' annotators rated disjoint cells"
    halves = (("first", H1), ("second", H2))
    if level == "summary":
        inputs = ok.sum(axis=0) >= 2
        if not inputs.any():
            return "no input has 2 systems rated by both halves"
        const = [name for name, H in halves
                 if all(np.ptp(H[ok[:, j], j]) == 0 for j in np.flatnonzero(inputs))]
        if const:
            return f"the {' and '.join(const)} half's scores are constant within every input"
        return "every input's coefficient is undefined"
    if level == "system":
        rated = ok.any(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            vectors = [(name, (np.where(ok, H, 0.0).sum(axis=1) / ok.sum(axis=1))[rated]) for name, H in halves]
        what = "systems"
    else:
        vectors = [(name, H[ok]) for name, H in halves]
        what = "cells"
    if vectors[0][1].size < 2:
        return f"fewer than 2 {what} are rated by both halves"
    const = [name for name, v in vectors if np.ptp(v) == 0]
    if const:
        return f"the {' and '.join(const)} half's scores are constant at this level"
    return "the coefficient is undefined on the halves' scores"


def _split_reliabilities(arr: np.ndarray, masks, level: str, coefficient: str, n: int, rows=None, cols=None):
    """(n_splits, ...) half coefficients, single-annotator and stepped-up reliabilities, optionally on
    resampled grids (``rows``, ``cols`` (B, N) and (B, M) indices)."""
    k = arr.shape[2]
    halves, singles, rels = [], [], []
    for mask in masks:
        H1, H2 = _half_means(arr, mask)
        if rows is not None:
            H1 = H1[rows[:, :, None], cols[:, None, :]]
            H2 = H2[rows[:, :, None], cols[:, None, :]]
        ok = ~(np.isnan(H1) | np.isnan(H2))
        # each half on its own power-of-2 scale (each input's at summary level), as correlate() scales a metric:
        # a rating of 1e308 would overflow the sums of squares, and one scale for both halves would push the other
        # half's values into float64's subnormal range; the coefficient does not depend on it (exact)
        axis = -2 if level == "summary" else (-2, -1)
        H1, H2 = rescale(H1, axis=axis), rescale(H2, axis=axis)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            # the level's coefficient as metaeval.correlate computes it (summary: mean of per-input coefficients)
            r = level_corr(np.where(ok, H1, 0.0), np.where(ok, H2, 0.0), level, coefficient, ok.astype(float))
        r = np.asarray(r, dtype=float)
        rho_halves = _population_correlation(r, n, coefficient)
        a = int(mask.sum())
        rho = _single_from_halves(rho_halves, a, k - a)
        halves.append(r)
        singles.append(rho)
        # Spearman-Brown steps up a positive reliability; a non-positive one (halves that do not agree) is kept
        # as it is: stepping it up is undefined where 1 + (k-1) rho <= 0 and would leave [-1, 1]
        rels.append(np.where(rho > 0, spearman_brown(np.maximum(rho, 0.0), k), rho))
    return np.array(halves), np.array(singles), np.array(rels)


def _check_options(level, coefficient, n_splits, n_resamples, confidence_level) -> None:
    if level not in RELIABILITY_LEVELS:
        raise ValueError(f"level must be one of {RELIABILITY_LEVELS}, got {level!r}")
    if coefficient not in CEILING_COEFFICIENTS:
        raise ValueError(f"coefficient must be one of {CEILING_COEFFICIENTS}, got {coefficient!r}")
    if not isinstance(n_splits, (int, np.integer)) or n_splits < 1:
        raise ValueError(f"n_splits must be a positive integer, got {n_splits!r}")
    if n_resamples:
        check_n_resamples(n_resamples)
    check_confidence_level(confidence_level)


def split_half_reliability(
    ratings,
    *,
    level: str = "summary",
    coefficient: str = "pearson",
    n_splits: int = 20,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: np.random.Generator | int | None = None,
) -> SplitHalfResult:
    """Reliability r_kk of the k-annotator mean score at a level, by split halves and Spearman-Brown.

    For each split of the k annotators into halves of floor(k/2) and ceil(k/2):

    1. the halves' mean scores are correlated at ``level`` with ``coefficient`` exactly as
       :func:`metaeval.correlate` correlates a metric with the humans (system: the system means; summary: the
       equal-weight average of the per-input coefficients across systems; global: all cells);
    2. that coefficient r is taken to the population Pearson correlation of the halves by inverting
       :func:`expected_correlation` at the level's n (systems; cells at global level): the coefficient's
       bivariate-normal expectation, so that the small-sample bias of r (E[r] < rho for few systems) and the
       rank coefficients' scale do not enter the reliability;
    3. the halves' correlation gives one annotator's reliability rho under the parallel-annotators model (for
       equal halves rho_{k/2} is that correlation, the classical Spearman-Brown step 2r / (1 + r)), stepped up
       to r_kk = k rho / (1 + (k-1) rho) (Spearman, 1910; Brown, 1910; Lord & Novick, 1968, sec. 5.10); a split
       whose rho is <= 0 contributes rho itself (nothing to step up).

    r_kk is averaged over splits (every split when there are at most ``n_splits``, else a random sample of
    them). The CI resamples systems and inputs together (Boot-Both) and recomputes the average over the same
    splits. Designs below :data:`MIN_SIZES` (5 systems and 5 inputs) are refused: "cannot be tested".

    Parameters
    ----------
    ratings : array_like (N, M, A)
        Systems x inputs x annotator slots, NaN = not rated (``Dataset.ratings(score)``).
    level : {"system", "summary", "global"}
    coefficient : {"pearson", "spearman", "kendall"}
        The coefficient of the correlation whose ceiling this reliability is for.
    n_splits : int
        Most splits of the annotators to average.
    n_resamples : int
        Boot-Both resamples for the CI (0: no CI).
    confidence_level : float
    rng : numpy Generator, int or None
        Seed of ``numpy.random.default_rng`` (split sample, then the resamples).

    Returns
    -------
    SplitHalfResult

    Examples
    --------
    Three annotators who rate alike except for independent noise:

    >>> import numpy as np
    >>> g = np.random.default_rng(0)
    >>> truth = g.normal(size=(10, 50, 1))
    >>> ratings = truth + 0.5 * g.normal(size=(10, 50, 3))
    >>> res = split_half_reliability(ratings, level="global", n_resamples=0)
    >>> round(res.reliability, 2)  # theory: 3 * 0.8 / (1 + 2 * 0.8) = 0.92
    0.92
    """
    _check_options(level, coefficient, n_splits, n_resamples, confidence_level)
    arr = _check_ratings(ratings)
    gen = check_rng(rng)
    masks = _splits(arr.shape[2], int(n_splits), gen)
    n = _sample_size(arr, level)
    r, rho, rkk = _split_reliabilities(arr, masks, level, coefficient, n)
    if np.isnan(rkk).any():
        reasons = sorted({_why_undefined(arr, m, level) for m, v in zip(masks, rkk) if np.isnan(v)})
        rest = ("the reliability averages the other splits" if not np.isnan(rkk).all()
                else "no split is left: the reliability is NaN")
        warn_degenerate(
            f"split_half_reliability: {int(np.isnan(rkk).sum())} of {len(masks)} splits give no correlation "
            f"at level {level!r} ({'; '.join(reasons)}); {rest}"
        )
    estimate = float(_nanmean(rkk))
    ci = ConfidenceInterval(np.nan, np.nan)
    if n_resamples:
        N, M = arr.shape[:2]
        rows, cols = draw_indices(N, M, int(n_resamples), "both", gen)
        samples = []
        for start in range(0, int(n_resamples), 200):  # chunks keep the (B, N, M) copies small
            _, _, rb = _split_reliabilities(arr, masks, level, coefficient, n, rows[start:start + 200],
                                            cols[start:start + 200])
            samples.append(_nanmean(rb, axis=0))
        boot = np.concatenate(samples)
        ci = percentile_interval(boot[~np.isnan(boot)], confidence_level)
    return SplitHalfResult(estimate, float(_nanmean(r)), float(_nanmean(rho)), ci, level, int(arr.shape[2]),
                           len(masks), coefficient, n)


ESTIMATOR = (
    "noise ceiling = the expected {coefficient} coefficient of n = {n} pairs at correlation sqrt(r_kk) "
    "(bivariate normal: Ghosh 1966 for Pearson, Moran 1948 for Spearman, (2/pi) asin for Kendall), r_kk the "
    "split-half reliability of the k-annotator mean at {level} level from the halves' {coefficient} coefficient "
    "computed as the metric's correlation is (summary level: the average over inputs), stepped up with "
    "Spearman-Brown and averaged over annotator splits (classical test theory: an observed score correlates "
    "sqrt(reliability) with its true score; Lord & Novick, 1968); its bias by simulation is in the docstring "
    "of metaeval.stats.reliability.noise_ceiling"
)


def noise_ceiling(
    ratings,
    *,
    level: str = "summary",
    coefficient: str = "pearson",
    n_splits: int = 20,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: np.random.Generator | int | None = None,
) -> NoiseCeilingResult:
    """What a perfect metric (one equal to the true score) is expected to reach against the k-annotator mean.

    The ceiling is E[coefficient] over n pairs at population correlation sqrt(r_kk) (classical test theory:
    the k-annotator mean correlates sqrt(r_kk) with its true score, Lord & Novick, 1968, eq. 3.7.3), mapped by
    :func:`expected_correlation` (Pearson: the small-sample expectation of r, Ghosh 1966; Spearman: Moran
    1948; Kendall: (2/pi) asin, Greiner's relation), with r_kk from :func:`split_half_reliability` at the same
    ``level`` and ``coefficient``. So the halves' coefficient is computed the way the metric's is and is
    mapped out and back through the same bivariate-normal model: at summary level the average of per-input
    coefficients (not a reliability pooled over inputs, which overstates when inputs differ in spread), with
    the expected shrinkage of a correlation over few systems; for rank coefficients a rank ceiling (never the
    Pearson one).

    Validated by simulation with a known true score (``benchmarks/bench_ceiling.py``; its table, 200 simulated
    datasets per design of 5-16 systems, 20-100 inputs and 3-5 annotators, is in
    ``benchmarks/notes/bench_ceiling.md``): every ``|bias|`` (ceiling minus the mean a perfect metric reaches) is
    at most 0.030 at every level and coefficient. "True score" is classical test theory's, the annotators'
    expected rating: a metric equal to a latent quality that the rating scale transforms nonlinearly (Likert
    rounding, clipping) reaches less, and ties lower rank coefficients below the continuous model's maps (the
    note gives the numbers).

    Parameters
    ----------
    ratings, level, coefficient, n_splits, n_resamples, confidence_level, rng
        As :func:`split_half_reliability`.

    Returns
    -------
    NoiseCeilingResult

    Examples
    --------
    >>> import numpy as np
    >>> g = np.random.default_rng(0)
    >>> ratings = g.normal(size=(10, 50, 1)) + 0.5 * g.normal(size=(10, 50, 3))
    >>> round(noise_ceiling(ratings, level="global", n_resamples=0).ceiling, 2)  # sqrt(0.92)
    0.96
    >>> round(noise_ceiling(ratings, level="global", coefficient="kendall", n_resamples=0).ceiling, 2)
    0.82
    """
    rel = split_half_reliability(ratings, level=level, coefficient=coefficient, n_splits=n_splits,
                                 n_resamples=n_resamples, confidence_level=confidence_level, rng=rng)
    if not rel.reliability > 0:
        warn_degenerate(
            f"noise_ceiling: the split-half reliability at level {level!r} is {rel.reliability:.3g} (<= 0 or "
            "undefined): the annotators' halves do not agree, so there is no true-score variance to bound a "
            "correlation; the ceiling is NaN"
        )
        ceiling = np.nan
    else:
        ceiling = float(expected_correlation(np.sqrt(rel.reliability), rel.n, coefficient))
    low, high = rel.confidence_interval

    def bound(x: float) -> float:
        return np.nan if np.isnan(x) else float(expected_correlation(np.sqrt(max(x, 0.0)), rel.n, coefficient))

    estimator = ESTIMATOR.format(coefficient=coefficient, n=rel.n, level=level)
    values = np.unique(np.asarray(ratings, dtype=float))
    if np.count_nonzero(~np.isnan(values)) <= 2:
        estimator += ("; the ratings take only two values, far from the continuous scores the map assumes: an "
                      "approximation whose bias was not simulated")
    return NoiseCeilingResult(ceiling, ConfidenceInterval(bound(low), bound(high)), rel, level, estimator,
                              coefficient)


def disattenuate(r, reliability, metric_reliability=1.0):
    """Spearman's (1904) correction for attenuation: r / sqrt(r_kk * r_metric).

    An estimate of the correlation with the true human score; it can exceed 1 and is not a correlation
    anyone observed, so report it only next to the observed r, labelled.

    Parameters
    ----------
    r : float or array_like
        Observed correlations, in [-1, 1] (NaN allowed: an undefined correlation stays undefined).
    reliability, metric_reliability : float or array_like
        Reliabilities in (0, 1] (1: an error-free metric); broadcast against ``r``. A reliability <= 0 (halves
        that do not agree) or NaN leaves nothing to correct: NaN there, with a warning.

    Returns
    -------
    float or ndarray
        A float for scalar inputs, else an array of the broadcast shape.

    Examples
    --------
    >>> round(disattenuate(0.6, 0.81), 4)
    0.6667
    >>> disattenuate([0.3, 0.6], [0.36, 0.81]).round(4).tolist()
    [0.5, 0.6667]
    """
    arrays = {}
    for name, value in (("r", r), ("reliability", reliability), ("metric_reliability", metric_reliability)):
        try:
            arrays[name] = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"disattenuate: {name} must be a number or an array of numbers, got "
                            f"{value!r:.60}") from None
    rr, rel, met = arrays["r"], arrays["reliability"], arrays["metric_reliability"]
    if (np.abs(rr) > 1).any():
        raise ValueError("disattenuate: r must be a correlation in [-1, 1], got "
                         f"{float(rr[np.abs(rr) > 1].ravel()[0])!r}")
    for name, value in (("reliability", rel), ("metric_reliability", met)):
        if (value > 1).any():
            raise ValueError(f"disattenuate: {name} must be at most 1 (a reliability is a share of variance), got "
                             f"{float(value[value > 1].ravel()[0])!r}")
    try:
        rr, product = np.broadcast_arrays(rr, rel * met)
    except ValueError:
        raise ValueError(f"disattenuate: r {rr.shape}, reliability {rel.shape} and metric_reliability {met.shape} "
                         "cannot be broadcast together; give arrays of one shape (or scalars)") from None
    undefined = ~(product > 0)
    if undefined.any():
        bad = product[undefined].ravel()[0]
        warn_degenerate(f"disattenuate: {int(undefined.sum())} of {product.size} reliabilities (e.g. {bad:.3g}) "
                        "are not positive or are NaN: there is no true-score variance to correct for, so the "
                        "corrected value is NaN there")
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(undefined, np.nan, rr / np.sqrt(np.where(undefined, 1.0, product)))
    return float(out) if out.ndim == 0 else out
