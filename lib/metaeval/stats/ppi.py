"""Prediction-powered inference: human scores from a few human labels and a judge that scored every input.

Humans rated ``n`` labelled inputs; an automatic judge (a metric, an LLM) scored those and ``N`` more. PPI
(Angelopoulos et al., 2023) estimates a mean human score as the judge's mean on the unlabelled inputs plus a
*rectifier*, the humans' mean disagreement with the judge on the labelled ones; PPI++ (Angelopoulos, Duchi &
Zrnic, 2023) weights the judge by a power-tuning ``lam`` estimated from the data, so that the estimate is never
worse than the humans' own mean (``lam = 0``) asymptotically::

    theta = lam * mean(judge on unlabelled) + mean(human - lam * judge on labelled)
    var   = lam**2 * var0(judge on unlabelled) / N + var0(human - lam * judge on labelled) / n
    lam   = cov0(human, judge on labelled) / ((1 + n / N) * var1(judge on labelled and unlabelled))

(``var0``: ddof 0; ``var1``: ddof 1), clipped to [0, 1] by default. With the default options
:func:`ppi_mean` equals ``ppi_py``'s ``ppi_mean_pointestimate`` and ``ppi_mean_ci`` (PyPI ``ppi-python``
0.2.3) to 1e-10 (``tests/test_ppi.py`` keeps the command that printed the reference values).

The estimates here are *linear contrasts* of the K systems' mean human scores on the same inputs (paired
design: humans rated every system's output on a labelled input, the judge every system's output on every
input). One kernel serves them all: a contrast ``c`` turns the K rows into one (``c @ Y``), gets its own
tuned ``lam``, and its covariance with any other contrast comes from the per-input residuals
``c @ Y - lam * c @ Yhat`` (labelled) and ``lam * c @ Yhat_unlabelled`` (unlabelled), which are independent
across the two sets.

* :func:`ppi_mean`: one mean (1-D inputs), with interval and p-value;
* :func:`ppi_difference`: the difference of two systems' means on the same inputs (its variance includes their
  covariance, as the PPI of the per-input differences);
* :func:`ppi_system_means`: K means, their covariance matrix, marginal and simultaneous intervals;
* :func:`ppi_ranking`: every pairwise difference (``lam`` tuned per pair) with simultaneous intervals and
  adjusted p-values (max-t over the K(K-1)/2 pairs, or Bonferroni), and each system's rank interval;
* :func:`ppi_correlation`: prediction-powered *meta-evaluation*, an interval for the system-level correlation
  (Pearson, Kendall, pairwise accuracy, ...) between a metric and the human score when humans rated only some
  inputs (see its docstring for the method and its validation).

Deviations from ``ppi_py``, each for a reason: ``lam`` is tuned per contrast (``ppi_py``'s
``lam_optim_mode="element"``, the same for one mean); ``ppi_mean_pval`` does not clip its ``lam`` while its
interval does, here the p-value uses the interval's ``lam`` so the two agree (``p < alpha`` exactly when the
interval excludes the null); a judge constant over all inputs gets ``lam = 0`` (``ppi_py`` divides by zero).

References: A. N. Angelopoulos, S. Bates, C. Fannjiang, M. I. Jordan, T. Zrnic (2023), "Prediction-powered
inference", Science 382, https://doi.org/10.1126/science.adi6000; A. N. Angelopoulos, J. C. Duchi, T. Zrnic
(2023), "PPI++: Efficient Prediction-Powered Inference", https://arxiv.org/abs/2311.01453; T. Zrnic (2024),
"A Note on the Prediction-Powered Bootstrap", https://arxiv.org/abs/2405.18379; P. Boyeau et al. (2025),
"AutoEval Done Right", ICML, https://arxiv.org/abs/2403.07008.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import stats

from metaeval._warnings import warn_degenerate
from metaeval.stats._kernels import bootstrap_indices, draw_counts, monte_carlo_pvalue, warn_dropped
from metaeval.stats.correlation import (
    ConfidenceInterval,
    check_confidence_level,
    check_rng,
    system_corr,
)
from metaeval.stats.resampling import check_n_resamples, check_resample, percentile_interval, warn_few_resamples

__all__ = [
    "PPIResult",
    "PPISystemsResult",
    "PPIRankingResult",
    "PPICorrelationResult",
    "ppi_mean",
    "ppi_difference",
    "ppi_system_means",
    "ppi_ranking",
    "ppi_correlation",
    "ppi_correlation_samples",
    "ALTERNATIVES",
    "SIMULTANEOUS",
    "BOOTSTRAP_METHODS",
    "INTERVAL_METHOD",
    "bootstrap_interval",
    "MIN_LABELLED_CORRELATION",
    "PEARSON_CAVEAT",
]

ALTERNATIVES = ("two-sided", "greater", "less")
SIMULTANEOUS = ("max-t", "bonferroni")
BOOTSTRAP_METHODS = ("basic", "percentile")
#: The coefficients :func:`ppi_correlation` offers, each with the bootstrap interval whose coverage held in the
#: simulation (``results/few_labels/coverage.csv``): the basic interval for Pearson (a Pearson r of noisy means is
#: biased toward 0 and each resample adds the noise again, so the percentile interval sits about one bias too low
#: and missed the truth in up to 95 % of replicates on HANNA; reflecting removes the bias to first order), the
#: percentile interval for the rank statistics (their resampled distributions are discrete and bounded; the
#: basic interval under-covered them at every size tested).
INTERVAL_METHOD = {"pearson": "basic", "kendall": "percentile", "pairwise-accuracy": "percentile"}
#: Fewest labelled inputs :func:`ppi_correlation` accepts: below it the simulated coverage on SummEval and HANNA
#: (``results/few_labels/coverage.csv``, :func:`metaeval.studies.few_labels_coverage.coverage_table`) fell short
#: of the nominal level by more than Monte-Carlo error for every judge and coefficient (5 and 10 labelled inputs:
#: 0.24-0.93; 24 and 25: Kendall and pairwise accuracy 0.947-0.997, Pearson see :data:`PEARSON_CAVEAT`).
MIN_LABELLED_CORRELATION = 24
#: What :func:`ppi_correlation` warns with Pearson: its basic interval's measured coverage, which held on SummEval
#: but not on HANNA, where the humans-only interval falls short as much (HANNA's human-written "system" is an
#: outlier that decides Pearson's r).
PEARSON_CAVEAT = ("the prediction-powered interval of a system-level Pearson r covered the truth in 0.97-1.00 of "
                  "simulated replicates on SummEval but 0.91-0.94 on HANNA (nominal 0.95; the humans-only interval "
                  "0.92-0.95 there) at 24-50 labelled inputs (results/few_labels/coverage.csv): with an outlier "
                  "system prefer coefficient='kendall'")


# ----------------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class PPIResult:
    """Result of :func:`ppi_mean` and :func:`ppi_difference`.

    Attributes
    ----------
    statistic : float
        The prediction-powered estimate of the mean (of the difference).
    standard_error : float
        Its estimated standard error.
    confidence_interval : ConfidenceInterval
        Normal interval at ``confidence_level`` (one-sided for ``alternative="greater"``/``"less"``).
    pvalue : float
        Normal test of ``statistic == null`` against ``alternative``.
    lam : float
        The power-tuning parameter used (1: PPI, 0: the humans' own mean).
    classical_standard_error : float
        Standard error of the humans' own mean on the labelled inputs (``lam = 0``), to show what the judge
        bought.
    n_labelled, n_unlabelled : int
    """

    statistic: float
    standard_error: float
    confidence_interval: ConfidenceInterval
    pvalue: float
    lam: float
    classical_standard_error: float
    n_labelled: int
    n_unlabelled: int


@dataclass(frozen=True)
class PPISystemsResult:
    """Result of :func:`ppi_system_means` (arrays over the K systems, in the rows' order).

    Attributes
    ----------
    statistic : ndarray (K,)
        Prediction-powered estimates of the systems' mean human scores.
    standard_error : ndarray (K,)
    covariance : ndarray (K, K)
        Estimated covariance matrix of ``statistic`` (the systems share their inputs).
    confidence_interval : ConfidenceInterval of ndarrays (K,)
        Marginal normal intervals.
    simultaneous_interval : ConfidenceInterval of ndarrays (K,)
        Intervals that hold for all K means at once at ``confidence_level`` (``simultaneous``).
    critical_value : float
        The multiplier of ``standard_error`` in ``simultaneous_interval``.
    lam : ndarray (K,)
    classical_standard_error : ndarray (K,)
    n_labelled, n_unlabelled : int
    simultaneous : str
    """

    statistic: np.ndarray
    standard_error: np.ndarray
    covariance: np.ndarray
    confidence_interval: ConfidenceInterval
    simultaneous_interval: ConfidenceInterval
    critical_value: float
    lam: np.ndarray
    classical_standard_error: np.ndarray
    n_labelled: int
    n_unlabelled: int
    simultaneous: str


@dataclass(frozen=True)
class PPIRankingResult:
    """Result of :func:`ppi_ranking`.

    Attributes
    ----------
    means : ndarray (K,)
        Prediction-powered system means (:func:`ppi_system_means`' ``statistic``).
    difference : ndarray (K, K)
        ``difference[j, k]``: estimate of mean_j - mean_k, ``lam`` tuned for that pair (antisymmetric).
    difference_interval : ConfidenceInterval of ndarrays (K, K)
        Simultaneous intervals for all pairs at ``confidence_level``.
    pvalue : ndarray (K, K)
        Adjusted p-values of ``mean_j == mean_k`` (two-sided; max-t: the Monte-Carlo share of simulated
        maxima at least as large; Bonferroni: K(K-1)/2 times the normal p-value, capped at 1). 1 on the diagonal.
    rank_interval : ndarray (K, 2) of int
        Each system's rank (1 = highest mean) bounds: 1 + the number of systems significantly above it, and K
        minus the number significantly below it. All K hold at once with probability >= ``confidence_level``.
    critical_value : float
    simultaneous : str
    n_labelled, n_unlabelled : int
    """

    means: np.ndarray
    difference: np.ndarray
    difference_interval: ConfidenceInterval
    pvalue: np.ndarray
    rank_interval: np.ndarray
    critical_value: float
    simultaneous: str
    n_labelled: int
    n_unlabelled: int


@dataclass(frozen=True)
class PPICorrelationResult:
    """Result of :func:`ppi_correlation`.

    Attributes
    ----------
    statistic : float
        The coefficient between the metric's system means (over all inputs) and the PPI++ estimates of the
        systems' human means.
    confidence_interval : ConfidenceInterval
        Basic (default) or percentile interval of the prediction-powered bootstrap.
    bootstrap_distribution : ndarray
        The valid resampled coefficients.
    standard_error : float
    system_means : ndarray (K,)
        The PPI++ estimates of the systems' mean human scores.
    lam : ndarray (K,)
        Their power-tuning parameters on the original data.
    n_labelled, n_unlabelled : int
    n_dropped : int
        Resamples dropped because the coefficient was undefined on them.
    """

    statistic: float
    confidence_interval: ConfidenceInterval
    bootstrap_distribution: np.ndarray
    standard_error: float
    system_means: np.ndarray
    lam: np.ndarray
    n_labelled: int
    n_unlabelled: int
    n_dropped: int = 0


# ----------------------------------------------------------------------------------------------------
# Validation


def _as_rows(name: str, value, ndim: int) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if arr.ndim != ndim:
        shape = "a vector (inputs,)" if ndim == 1 else "a matrix (systems, inputs)"
        raise ValueError(f"{name} must be {shape}, got an array of shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} holds NaN or infinite values: PPI needs a human score on every labelled input and a "
                         "judge score on every input; drop those inputs first")
    return arr


def _check_inputs(Y, Yhat, Yhat_unlabelled, ndim: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    Y = _as_rows("Y", Y, ndim)
    Yhat = _as_rows("Yhat", Yhat, ndim)
    U = _as_rows("Yhat_unlabelled", Yhat_unlabelled, ndim)
    if Y.shape != Yhat.shape:
        raise ValueError(f"Y and Yhat must have the same shape (the human and the judge scores of the same "
                         f"labelled inputs), got {Y.shape} and {Yhat.shape}")
    if ndim == 2 and U.shape[0] != Y.shape[0]:
        raise ValueError(f"Yhat_unlabelled must have one row per system of Y ({Y.shape[0]}), got {U.shape[0]}")
    if Y.shape[-1] < 2:
        raise ValueError(f"Y: PPI needs at least 2 labelled inputs (a variance), got {Y.shape[-1]}")
    if U.shape[-1] < 2:
        raise ValueError(f"Yhat_unlabelled: PPI needs at least 2 unlabelled inputs (a variance), got {U.shape[-1]}")
    return Y, Yhat, U


def _check_options(alternative: str, confidence_level: float, lam) -> None:
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    check_confidence_level(confidence_level)
    if lam is not None:
        lams = np.asarray(lam, dtype=float) if not isinstance(lam, bool) else np.array(np.nan)
        if not np.isfinite(lams).all():
            raise ValueError(f"lam must be None (tuned) or a finite number (1: PPI, 0: humans only), got {lam!r}")


def _check_simultaneous(simultaneous: str, n_simulations) -> None:
    if simultaneous not in SIMULTANEOUS:
        raise ValueError(f"simultaneous must be one of {SIMULTANEOUS}, got {simultaneous!r}")
    if not isinstance(n_simulations, numbers.Integral) or isinstance(n_simulations, bool) or n_simulations < 100:
        raise ValueError(f"n_simulations must be an integer >= 100, got {n_simulations!r}")


# ----------------------------------------------------------------------------------------------------
# The kernel: PPI++ estimates of P contrasts from (weighted) sums


def _centred(Y: np.ndarray, H: np.ndarray, U: np.ndarray):
    """Shift each row so the sums below lose no digits: Y by its mean, the judge (labelled and unlabelled alike,
    so that its shift cancels in ``lam * (mean U - mean H)``) by its mean over both sets. Returns the shifted
    arrays and Y's shift, which the estimate adds back."""
    cy = Y.mean(axis=-1, keepdims=True)
    n, N = H.shape[-1], U.shape[-1]
    ch = (H.sum(axis=-1, keepdims=True) + U.sum(axis=-1, keepdims=True)) / (n + N)
    return Y - cy, H - ch, U - ch, cy[..., 0]


def _ppi_from_counts(Y: np.ndarray, H: np.ndarray, U: np.ndarray, wl: np.ndarray, wu: np.ndarray, lam, clip: bool):
    """PPI++ estimates and tuned ``lam`` of the P rows of ``Y`` (P, n) / ``H`` (P, n) / ``U`` (P, N) (centred by
    :func:`_centred`) for each weighting ``wl`` (B, n) / ``wu`` (B, N) of the labelled and unlabelled inputs
    (bootstrap multiplicities; ones for the data themselves): arrays (B, P) ``theta`` (without Y's shift) and
    ``lam``."""
    n = wl.sum(axis=-1, keepdims=True)
    N = wu.sum(axis=-1, keepdims=True)
    sy, sh, su = wl @ Y.T, wl @ H.T, wu @ U.T
    if lam is None:
        cov = (wl @ (Y * H).T) / n - (sy / n) * (sh / n)  # ddof 0, as ppi_py's (1/n) sum of centred products
        total = n + N
        # ddof 1 over the labelled and unlabelled judge scores together (ppi_py's np.cov of the concatenation)
        var = (wl @ (H * H).T + wu @ (U * U).T - (sh + su) ** 2 / total) / (total - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            tuned = cov / ((1 + n / N) * var)
        # a judge constant over all inputs carries no information: the humans' own mean (ppi_py divides by 0)
        lams = np.where(var > 0, tuned, 0.0)
        if clip:
            lams = np.clip(lams, 0.0, 1.0)
    else:
        lams = np.broadcast_to(np.asarray(lam, dtype=float), sy.shape)
    theta = lams * su / N + (sy - lams * sh) / n
    return theta, lams


def _ppi_contrasts(C: np.ndarray, Y: np.ndarray, H: np.ndarray, U: np.ndarray, lam, clip: bool):
    """PPI++ estimates of the contrasts ``C @ means`` (C: (P, K)): estimates (P,), their covariance (P, P),
    ``lam`` (P,) and the classical (humans only) variances (P,)."""
    Yc, Hc, Uc = C @ Y, C @ H, C @ U
    Yc, Hc, Uc, cy = _centred(Yc, Hc, Uc)
    n, N = Y.shape[-1], U.shape[-1]
    theta, lams = _ppi_from_counts(Yc, Hc, Uc, np.ones((1, n)), np.ones((1, N)), lam, clip)
    lams = lams[0]
    # per-input influence of each estimate; the labelled and unlabelled sets are independent
    r = Yc - lams[:, None] * Hc
    r = r - r.mean(axis=-1, keepdims=True)
    q = lams[:, None] * Uc
    q = q - q.mean(axis=-1, keepdims=True)
    covariance = (r @ r.T) / n**2 + (q @ q.T) / N**2  # ddof 0, as ppi_py's std(0)
    classical = (Yc * Yc).mean(axis=-1) / n  # Yc is centred
    return theta[0] + cy, covariance, lams, classical


def _normal_interval(estimate, se, confidence_level: float, alternative: str) -> ConfidenceInterval:
    alpha = 1 - confidence_level
    if alternative == "two-sided":
        z = stats.norm.ppf(1 - alpha / 2)
        return ConfidenceInterval(estimate - z * se, estimate + z * se)
    z = stats.norm.ppf(1 - alpha)
    if alternative == "greater":
        return ConfidenceInterval(estimate - z * se, np.inf + 0 * estimate)
    return ConfidenceInterval(-np.inf + 0 * estimate, estimate + z * se)


def _normal_pvalue(estimate, se, null: float, alternative: str):
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (estimate - null) / np.maximum(se, 1e-16)  # ppi_py's floor: a zero SE gives a 0-or-1 p-value
    if alternative == "greater":
        return stats.norm.sf(t)
    if alternative == "less":
        return stats.norm.cdf(t)
    return 2 * stats.norm.sf(np.abs(t))


def _one(C: np.ndarray, Y, H, U, lam, clip, null, alternative, confidence_level) -> PPIResult:
    theta, cov, lams, classical = _ppi_contrasts(C, Y, H, U, lam, clip)
    estimate, se = float(theta[0]), float(np.sqrt(cov[0, 0]))
    low, high = _normal_interval(estimate, se, confidence_level, alternative)
    return PPIResult(estimate, se, ConfidenceInterval(float(low), float(high)),
                     float(_normal_pvalue(estimate, se, null, alternative)), float(lams[0]),
                     float(np.sqrt(classical[0])), int(Y.shape[-1]), int(U.shape[-1]))


# ----------------------------------------------------------------------------------------------------
# Public estimates


def ppi_mean(
    Y,
    Yhat,
    Yhat_unlabelled,
    *,
    lam: float | None = None,
    clip: bool = True,
    null: float = 0.0,
    alternative: str = "two-sided",
    confidence_level: float = 0.95,
) -> PPIResult:
    """Prediction-powered (PPI++) estimate, interval and p-value of a mean human score.

    Parameters
    ----------
    Y : array_like (n,)
        Human scores of the labelled inputs.
    Yhat : array_like (n,)
        The judge's scores of the same inputs.
    Yhat_unlabelled : array_like (N,)
        The judge's scores of the inputs no human rated.
    lam : float, optional
        Power tuning: None (default) estimates the variance-minimizing value (PPI++); 1 is plain PPI, 0 the
        humans' own mean (the classical interval).
    clip : bool
        Clip the tuned ``lam`` to [0, 1] (``ppi_py``'s choice; keeps PPI++ between the humans' own mean and
        PPI). False lets a judge on another scale (a metric in [0, 1] for ratings 1-5) get its regression
        weight.
    null : float
        Value of the mean under the null hypothesis of ``pvalue``.
    alternative : {"two-sided", "greater", "less"}
        ``"greater"``: H1 mean > null, and the interval is ``(low, inf)`` (``ppi_py``'s ``"larger"``).
    confidence_level : float in (0, 1)

    Returns
    -------
    PPIResult

    Examples
    --------
    A judge that is the human score plus 2 on every input: PPI recovers the humans' mean (``ppi_py``'s
    ``test_ppi_mean_pointestimate``).

    >>> rng = np.random.default_rng(0)
    >>> Y = rng.normal(0, 1, 100)
    >>> res = ppi_mean(Y, Y + 2, np.full(1000, 2.0))
    >>> bool(abs(res.statistic) < 1e-12), res.lam  # 0 up to rounding, either sign (SIMD-dependent)
    (True, 1.0)
    >>> res = ppi_mean(Y, Y + rng.normal(0, 0.5, 100), rng.normal(0, 1.1, 5000))
    >>> bool(res.standard_error < res.classical_standard_error), round(res.lam, 3)
    (True, 0.774)
    """
    _check_options(alternative, confidence_level, lam)
    Y, H, U = _check_inputs(Y, Yhat, Yhat_unlabelled, 1)
    return _one(np.ones((1, 1)), Y[None], H[None], U[None], lam, clip, null, alternative, confidence_level)


def ppi_difference(
    Y,
    Yhat,
    Yhat_unlabelled,
    *,
    lam: float | None = None,
    clip: bool = True,
    null: float = 0.0,
    alternative: str = "two-sided",
    confidence_level: float = 0.95,
) -> PPIResult:
    """PPI++ estimate, interval and p-value of the difference of two systems' mean human scores (row 0 minus
    row 1) on the same inputs.

    The estimate is the PPI++ mean of the per-input differences ``Y[0] - Y[1]`` with the judge's differences
    ``Yhat[0] - Yhat[1]``, ``lam`` tuned for the difference. Its variance therefore holds the two means'
    covariance (``var(a) + var(b) - 2 cov(a, b)`` per set), which pairing on the same inputs makes positive
    for most systems and the interval narrower than two separate means suggest.

    Parameters
    ----------
    Y, Yhat : array_like (2, n)
        Human and judge scores of the two systems' outputs on the labelled inputs.
    Yhat_unlabelled : array_like (2, N)
        The judge's scores on the unlabelled inputs.
    lam, clip, null, alternative, confidence_level
        As :func:`ppi_mean`.

    Returns
    -------
    PPIResult

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> quality = rng.normal(0, 1, 1200)                     # how hard each input is, shared by both systems
    >>> human = np.stack([quality + 0.3, quality]) + rng.normal(0, 0.5, (2, 1200))
    >>> judge = human + rng.normal(0, 0.5, (2, 1200))
    >>> res = ppi_difference(human[:, :200], judge[:, :200], judge[:, 200:])
    >>> round(res.statistic, 3), bool(res.pvalue < 0.05)
    (0.273, True)
    """
    _check_options(alternative, confidence_level, lam)
    Y, H, U = _check_inputs(Y, Yhat, Yhat_unlabelled, 2)
    if Y.shape[0] != 2:
        raise ValueError(f"Y must have 2 rows (the two systems), got {Y.shape[0]}; use ppi_ranking for more")
    return _one(np.array([[1.0, -1.0]]), Y, H, U, lam, clip, null, alternative, confidence_level)


def _max_t_critical(covariance: np.ndarray, confidence_level: float, n_simulations: int,
                    rng: np.random.Generator) -> tuple[float, np.ndarray]:
    """The (1 - alpha) quantile of ``max |Z_p / se_p|`` for Z ~ N(0, covariance), by simulation, and the sorted
    simulated maxima (for adjusted p-values). Contrasts with a zero standard error are left out."""
    se = np.sqrt(np.clip(np.diag(covariance), 0.0, None))
    keep = se > 0
    if not keep.any():
        return float("nan"), np.zeros(0)
    corr = covariance[np.ix_(keep, keep)] / np.outer(se[keep], se[keep])
    w, V = np.linalg.eigh(corr)
    root = V * np.sqrt(np.clip(w, 0.0, None))  # a singular correlation (contrasts of K means) is fine
    draws = np.abs(rng.standard_normal((n_simulations, int(keep.sum()))) @ root.T).max(axis=1)
    draws.sort()
    return float(np.quantile(draws, confidence_level)), draws


def _critical(covariance: np.ndarray, confidence_level: float, simultaneous: str, n_simulations: int,
              rng: np.random.Generator) -> tuple[float, np.ndarray | None]:
    P = covariance.shape[0]
    if simultaneous == "bonferroni":
        return float(stats.norm.ppf(1 - (1 - confidence_level) / (2 * P))), None
    return _max_t_critical(covariance, confidence_level, n_simulations, rng)


def ppi_system_means(
    Y,
    Yhat,
    Yhat_unlabelled,
    *,
    lam: float | None = None,
    clip: bool = True,
    confidence_level: float = 0.95,
    simultaneous: str = "max-t",
    n_simulations: int = 20000,
    rng: np.random.Generator | int | None = None,
) -> PPISystemsResult:
    """PPI++ estimates of K systems' mean human scores on the same inputs, their covariance and intervals.

    Parameters
    ----------
    Y, Yhat : array_like (K, n)
        Human and judge scores of the K systems' outputs on the n labelled inputs.
    Yhat_unlabelled : array_like (K, N)
        The judge's scores on the N unlabelled inputs.
    lam : float, optional
        None: tuned per system (``ppi_py``'s ``lam_optim_mode="element"``); a number: the same for all.
    clip : bool
        As :func:`ppi_mean`.
    confidence_level : float in (0, 1)
    simultaneous : {"max-t", "bonferroni"}
        How ``simultaneous_interval`` holds for all K means at once: ``"max-t"`` uses the (1 - alpha) quantile
        of the largest of K correlated standard normals (their correlation estimated from the data, simulated
        ``n_simulations`` times), ``"bonferroni"`` the normal quantile at alpha / (2K) (wider, no simulation).
    n_simulations : int
    rng : Generator, int or None
        For the max-t simulation.

    Returns
    -------
    PPISystemsResult

    Examples
    --------
    >>> rng = np.random.default_rng(2)
    >>> human = rng.normal(size=(3, 1)) + rng.normal(size=(3, 2000))
    >>> judge = human + rng.normal(0, 0.5, (3, 2000))
    >>> res = ppi_system_means(human[:, :300], judge[:, :300], judge[:, 300:], rng=0)
    >>> bool(np.all(res.simultaneous_interval.low <= res.confidence_interval.low))
    True
    >>> bool(np.all(res.standard_error < res.classical_standard_error))
    True
    """
    _check_options("two-sided", confidence_level, lam)
    _check_simultaneous(simultaneous, n_simulations)
    Y, H, U = _check_inputs(Y, Yhat, Yhat_unlabelled, 2)
    rng = check_rng(rng)
    K = Y.shape[0]
    theta, cov, lams, classical = _ppi_contrasts(np.eye(K), Y, H, U, lam, clip)
    se = np.sqrt(np.diag(cov))
    c, _ = _critical(cov, confidence_level, simultaneous, n_simulations, rng)
    return PPISystemsResult(theta, se, cov, _normal_interval(theta, se, confidence_level, "two-sided"),
                            ConfidenceInterval(theta - c * se, theta + c * se), c, lams, np.sqrt(classical),
                            int(Y.shape[1]), int(U.shape[1]), simultaneous)


def ppi_ranking(
    Y,
    Yhat,
    Yhat_unlabelled,
    *,
    lam: float | None = None,
    clip: bool = True,
    confidence_level: float = 0.95,
    simultaneous: str = "max-t",
    n_simulations: int = 20000,
    rng: np.random.Generator | int | None = None,
) -> PPIRankingResult:
    """A ranking of K systems by PPI++ mean human score, with simultaneous intervals for every pairwise difference
    and each system's rank interval.

    Each pair's difference is :func:`ppi_difference`'s estimate (``lam`` tuned for the pair); the K(K-1)/2
    estimates' joint covariance comes from their per-input residuals. ``"max-t"`` widens every interval by the
    (1 - alpha) quantile of the largest of the K(K-1)/2 correlated standardized differences (Tukey-like,
    simulated), ``"bonferroni"`` by the normal quantile at alpha / K(K-1). With probability at least
    ``confidence_level`` every interval holds at once, hence every rank interval: a system's rank is at least 1
    plus the number of systems whose difference with it is significantly positive, at most K minus the number
    significantly below it.

    Parameters
    ----------
    Y, Yhat : array_like (K, n)
    Yhat_unlabelled : array_like (K, N)
    lam, clip, confidence_level, simultaneous, n_simulations, rng
        As :func:`ppi_system_means`.

    Returns
    -------
    PPIRankingResult

    Examples
    --------
    >>> rng = np.random.default_rng(3)
    >>> human = np.array([[0.0], [0.05], [1.0]]) + rng.normal(size=(3, 3000))
    >>> judge = human + rng.normal(0, 0.5, (3, 3000))
    >>> res = ppi_ranking(human[:, :400], judge[:, :400], judge[:, 400:], rng=0)
    >>> res.rank_interval.tolist()
    [[2, 3], [2, 3], [1, 1]]
    """
    _check_options("two-sided", confidence_level, lam)
    _check_simultaneous(simultaneous, n_simulations)
    Y, H, U = _check_inputs(Y, Yhat, Yhat_unlabelled, 2)
    rng = check_rng(rng)
    K = Y.shape[0]
    if K < 2:
        raise ValueError(f"Y must have at least 2 rows (systems) to rank, got {K}")
    means, _, _, _ = _ppi_contrasts(np.eye(K), Y, H, U, lam, clip)
    j, k = np.triu_indices(K, 1)
    C = np.zeros((j.size, K))
    C[np.arange(j.size), j] = 1.0
    C[np.arange(j.size), k] = -1.0
    delta, cov, _, _ = _ppi_contrasts(C, Y, H, U, lam, clip)
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    c, draws = _critical(cov, confidence_level, simultaneous, n_simulations, rng)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, np.abs(delta) / se, np.where(delta == 0, 0.0, np.inf))
    if draws is None:
        p = np.minimum(1.0, j.size * 2 * stats.norm.sf(t))
    else:
        p = monte_carlo_pvalue(draws.size - np.searchsorted(draws, t, side="left"), draws.size)
        p = np.where(t == 0, 1.0, p)
    D = np.zeros((K, K))
    D[j, k], D[k, j] = delta, -delta
    S = np.zeros((K, K))
    S[j, k] = S[k, j] = se
    P = np.ones((K, K))
    P[j, k] = P[k, j] = p
    low, high = D - c * S, D + c * S
    above = (high < 0).sum(axis=1)  # systems significantly above row j: mean_j - mean_k < 0
    below = (low > 0).sum(axis=1)
    ranks = np.stack([1 + above, K - below], axis=1).astype(int)
    bounds = ConfidenceInterval(low, high)  # type: ignore[arg-type]  # arrays of bounds, as scipy's intervals
    return PPIRankingResult(means, D, bounds, P, ranks, c, simultaneous, int(Y.shape[1]), int(U.shape[1]))


# ----------------------------------------------------------------------------------------------------
# Prediction-powered meta-evaluation


def _labelled_columns(Z: np.ndarray) -> np.ndarray:
    missing = np.isnan(Z)
    partial = missing.any(axis=0) & ~missing.all(axis=0)
    if partial.any():
        raise ValueError(
            f"Z: input(s) {np.flatnonzero(partial)[:5].tolist()} have human scores for some systems only; PPI here "
            "needs every system's output rated on a labelled input (NaN in the whole column = unlabelled): drop "
            "those inputs or their partial scores")
    return ~missing.all(axis=0)


def ppi_correlation_samples(X, Z, J, *, coefficients: Sequence[str], lam=None, clip: bool = False,
                            resample: str = "inputs", n_resamples: int = 1000,
                            rng: np.random.Generator | int | None = None):
    """The prediction-powered bootstrap of :func:`ppi_correlation` for several coefficients from the same draws,
    without its minimum-size rule (for the simulations that set it): the statistics (C,), the resampled
    coefficients (C, B) with NaN where undefined, the PPI system means (K,) and their ``lam`` (K,).

    ``X``, ``J`` (K, M) finite; ``Z`` (K, M) with NaN columns for the unlabelled inputs.
    """
    rng = check_rng(rng)
    X, Z, J = (np.asarray(a, dtype=float) for a in (X, Z, J))
    lab = _labelled_columns(Z)
    XL, XU = X[:, lab], X[:, ~lab]
    Y, H, U, cy = _centred(Z[:, lab], J[:, lab], J[:, ~lab])
    K, n, N = Y.shape[0], Y.shape[1], U.shape[1]
    # the data themselves, then every resample: rows (if resampled), labelled inputs, unlabelled inputs
    theta0, lam0 = _ppi_from_counts(Y, H, U, np.ones((1, n)), np.ones((1, N)), lam, clip)
    z0 = theta0[0] + cy
    x0 = (XL.sum(axis=1) + XU.sum(axis=1)) / (n + N)
    rows, cols = bootstrap_indices(rng, (n_resamples,), K, n, resample)
    ucols = bootstrap_indices(rng, (n_resamples,), K, N, "inputs")[1]
    wl, wu = draw_counts(cols, n), draw_counts(ucols, N)
    theta, _ = _ppi_from_counts(Y, H, U, wl, wu, lam, clip)
    zs = theta + cy
    xs = (wl @ XL.T + wu @ XU.T) / (n + N)
    if resample == "both":
        zs, xs = np.take_along_axis(zs, rows, axis=1), np.take_along_axis(xs, rows, axis=1)
    statistic = np.array([float(system_corr(x0, z0, c)) for c in coefficients])
    samples = np.stack([system_corr(xs, zs, c) for c in coefficients])
    return statistic, samples, z0, lam0[0]


def ppi_correlation(
    X,
    Z,
    J,
    *,
    coefficient: str = "kendall",
    resample: str = "inputs",
    lam: float | None = None,
    clip: bool = False,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    method: str | None = None,
    rng: np.random.Generator | int | None = None,
) -> PPICorrelationResult:
    """Prediction-powered interval for the system-level correlation of a metric with the human score when
    humans rated only some inputs and a judge rated all.

    Method. Each system's mean human score is estimated by PPI++ from the labelled inputs' human and judge
    scores and the unlabelled inputs' judge scores (``lam`` tuned per system); the metric's system score is its
    mean over all inputs; the statistic is the coefficient between the two K-vectors. Its interval is the
    percentile interval of a *prediction-powered bootstrap* (Zrnic 2024): each resample draws the labelled
    inputs with replacement and, independently, the unlabelled inputs (and the systems, for
    ``resample="both"``), re-estimates every system's PPI++ mean, ``lam`` included, and recomputes the
    coefficient. Why it is valid: the PPI++ means are asymptotically normal and unbiased for the systems' mean
    human scores whatever the judge's quality, the coefficient is a function of the two mean vectors, and the
    bootstrap of the whole pipeline reproduces the joint sampling distribution of both sets of inputs; the
    judge only shrinks the variance of the human means (by the share of variance it explains). The *metric*
    being evaluated (X) and the *judge* that imputes the human score (J) are separate arguments; they may be
    the same scores.

    Validation (:func:`metaeval.studies.few_labels_coverage.coverage_table`, ``results/few_labels/coverage.csv``):
    humans hidden on a random share of SummEval's and HANNA's inputs, the full-data coefficient as the truth,
    judges of several qualities, 300 replicates each. Below :data:`MIN_LABELLED_CORRELATION` labelled inputs
    (at 5 and 10) the coverage fell below nominal by more than Monte-Carlo error, so the function refuses
    ("cannot be tested"); Pearson's shortfall on HANNA is warned about (:data:`PEARSON_CAVEAT`). Coverage
    (mean width) of the offered intervals, 95 % nominal, two-SE Monte-Carlo threshold 0.925:

    ======================  ==================  =============  =============  =============  =============
    dataset, coefficient    judge               5 labelled     10             24 / 25        48 / 50
    ======================  ==================  =============  =============  =============  =============
    SummEval, Kendall       bertscore.recall    0.627 (0.500)  0.917 (0.452)  0.993 (0.395)  1.000 (0.369)
    SummEval, Kendall       humans only         0.380 (0.584)  0.597 (0.591)  0.847 (0.533)  0.963 (0.455)
    SummEval, Pearson       bertscore.recall    0.840 (0.523)  0.903 (0.456)  0.977 (0.367)  0.997 (0.311)
    SummEval, Pearson       humans only         0.713 (0.608)  0.780 (0.569)  0.893 (0.484)  0.970 (0.383)
    HANNA, Kendall          ChatGPT RE 1        0.573 (0.550)  0.773 (0.545)  0.947 (0.494)  1.000 (0.436)
    HANNA, Kendall          humans only         0.630 (0.584)  0.857 (0.565)  0.987 (0.512)  1.000 (0.444)
    HANNA, Pearson          ChatGPT RE 1        0.900 (0.249)  0.940 (0.153)  0.913 (0.093)  0.930 (0.068)
    HANNA, Pearson          humans only         0.927 (0.215)  0.947 (0.142)  0.923 (0.092)  0.917 (0.069)
    ======================  ==================  =============  =============  =============  =============

    What the judge adds is small on these data: PPI with ``lam = 0`` (the humans' means on the labelled inputs,
    the metric on all inputs) is as narrow (SummEval Kendall at 25: 0.396 against 0.395 with bertscore.recall),
    because the judges' per-input correlation with the humans *within* a system is low (HANNA's ChatGPT:
    0.0-0.37 per system); most of the gain over humans only comes from scoring the metric on every input.

    Parameters
    ----------
    X : array_like (K, M)
        The metric's scores, systems x inputs, on every input.
    Z : array_like (K, M)
        Human scores; a column of NaN marks an input no human rated.
    J : array_like (K, M)
        The judge's scores on every input (may be ``X`` itself).
    coefficient : {"kendall", "pearson", "pairwise-accuracy"}
        Between the K system scores (system level); the coefficients whose coverage was simulated.
    resample : {"inputs", "both"}
        ``"inputs"`` for these K systems (the truth of the validation); ``"both"`` also draws systems, for a
        population of systems (wider).
    lam, clip
        As :func:`ppi_mean`; ``clip=False`` by default here because metrics used as judges are on other
        scales than the human ratings, where the variance-minimizing weight is often above 1.
    n_resamples : int
    confidence_level : float in (0, 1)
    method : {"basic", "percentile"}, optional
        The bootstrap interval; None (default): the one validated for ``coefficient`` (:data:`INTERVAL_METHOD`).
        ``"basic"`` (``2 * statistic - `` the upper and lower percentiles; ``ppi_py``'s
        ``ppboot(method="basic")``) corrects the downward bias of a correlation of noisy means, which the
        percentile interval doubles (a resample's means are noisier than the data's); bounds are clipped to the
        coefficient's range [-1, 1].
    rng : Generator, int or None

    Returns
    -------
    PPICorrelationResult

    Examples
    --------
    >>> rng = np.random.default_rng(4)
    >>> quality = np.linspace(0, 1.5, 8)[:, None]
    >>> Z = quality + rng.normal(size=(8, 400))
    >>> X = quality + rng.normal(size=(8, 400))
    >>> J = Z + rng.normal(0, 0.5, (8, 400))
    >>> Z[:, 60:] = np.nan                              # humans rated 60 of the 400 inputs
    >>> res = ppi_correlation(X, Z, J, coefficient="pearson", rng=0)
    >>> res.n_labelled, res.n_unlabelled
    (60, 340)
    >>> bool(res.confidence_interval.low < res.statistic < res.confidence_interval.high)
    True
    """
    if coefficient not in INTERVAL_METHOD:
        raise ValueError(f"coefficient must be one of {tuple(INTERVAL_METHOD)} (the coefficients whose "
                         f"prediction-powered coverage was simulated), got {coefficient!r}")
    check_resample(resample, ("inputs", "both"))
    method = INTERVAL_METHOD[coefficient] if method is None else method
    if method not in BOOTSTRAP_METHODS:
        raise ValueError(f"method must be one of {BOOTSTRAP_METHODS}, got {method!r}")
    check_n_resamples(n_resamples)
    check_confidence_level(confidence_level)
    _check_options("two-sided", confidence_level, lam)
    X = _as_rows("X", X, 2)
    J = _as_rows("J", J, 2)
    Z = np.asarray(Z, dtype=float)
    if Z.shape != X.shape or J.shape != X.shape:
        raise ValueError(f"X, Z and J must have the same shape (systems, inputs), got {X.shape}, {Z.shape}, {J.shape}")
    if np.isinf(Z).any():
        raise ValueError("Z holds infinite values; a missing human score is NaN")
    lab = _labelled_columns(Z)
    n, N = int(lab.sum()), int((~lab).sum())
    if n < MIN_LABELLED_CORRELATION:
        raise ValueError(
            f"cannot be tested: {n} labelled inputs (columns of Z without NaN), fewer than "
            f"{MIN_LABELLED_CORRELATION}, where the prediction-powered interval's simulated coverage fell below "
            "its level (results/few_labels/coverage.csv); label more inputs")
    if N < 2:
        raise ValueError(f"Z: {N} unlabelled inputs; with humans on (almost) every input use bootstrap_ci")
    if X.shape[0] < 3:
        raise ValueError(f"X: a system-level coefficient needs at least 3 systems, got {X.shape[0]}")
    statistic, samples, z0, lam0 = ppi_correlation_samples(X, Z, J, coefficients=[coefficient], lam=lam, clip=clip,
                                                           resample=resample, n_resamples=n_resamples, rng=rng)
    stat = float(statistic[0])
    if coefficient == "pearson":
        warnings.warn(PEARSON_CAVEAT, UserWarning, stacklevel=2)
    if np.isnan(stat):
        warn_degenerate(f"the system-level {coefficient} is undefined on these data (constant system scores)")
    s = samples[0]
    valid = s[~np.isnan(s)]
    warn_dropped(s.size - valid.size, s.size, "resamples", "the interval")
    if valid.size:
        warn_few_resamples(int(valid.size), confidence_level)
    se = float(np.std(valid, ddof=1)) if valid.size > 1 else float("nan")
    return PPICorrelationResult(stat, bootstrap_interval(stat, valid, confidence_level, method), valid, se, z0,
                                lam0, n, N, int(s.size - valid.size))


def bootstrap_interval(statistic: float, samples: np.ndarray, confidence_level: float,
                       method: str) -> ConfidenceInterval:
    """Percentile or basic bootstrap interval of a correlation from its valid resamples, the basic one clipped to
    [-1, 1] (NaN bounds for no resamples).

    Examples
    --------
    >>> bootstrap_interval(0.9, np.array([0.7, 0.8, 0.85, 0.9]), 0.5, "basic")
    ConfidenceInterval(low=0.9375, high=1.0)
    """
    if method not in BOOTSTRAP_METHODS:
        raise ValueError(f"method must be one of {BOOTSTRAP_METHODS}, got {method!r}")
    if samples.size == 0:
        return ConfidenceInterval(np.nan, np.nan)
    low, high = percentile_interval(samples, confidence_level)
    if method == "basic":
        low, high = max(-1.0, 2 * statistic - high), min(1.0, 2 * statistic - low)
    return ConfidenceInterval(float(low), float(high))
