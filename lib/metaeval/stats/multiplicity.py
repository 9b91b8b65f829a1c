"""Many tests at once: multiplicity corrections, WMT-style significance clusters, replicability over datasets.

* :func:`adjust` (Bonferroni, Holm, Benjamini-Hochberg and Benjamini-Yekutieli false-discovery-rate control;
  the FDR adjustments are ``scipy.stats.false_discovery_control``);
* :func:`significance_clusters`: the ranks ("clusters") of the WMT metrics tasks, mt-metrics-eval's greedy
  ``AssignRanks`` over a matrix of pairwise tests;
* :func:`partial_conjunction_test`: does an effect hold on at least u of n datasets? (Benjamini & Heller,
  2008), and the number of datasets on which it replicates (Dror, Baumer, Bogomolov & Reichart, 2017).

References: Benjamini & Hochberg (1995), JRSS B 57(1); Benjamini & Yekutieli (2001), Ann. Statist. 29(4);
Benjamini & Heller (2008), "Screening for partial conjunction hypotheses", Biometrics 64(4),
https://doi.org/10.1111/j.1541-0420.2007.00984.x; Dror et al. (2017), "Replicability Analysis for Natural
Language Processing: Testing Significance with Multiple Datasets", TACL 5, https://doi.org/10.1162/tacl_a_00074;
Freitag et al. (2021-2024), WMT metrics shared tasks (mt-metrics-eval, ``data.AssignRanks``).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from metaeval._warnings import warn_degenerate


__all__ = [
    "CORRECTIONS",
    "bonferroni",
    "holm",
    "check_pvalues",
    "ClusterResult",
    "PartialConjunctionResult",
    "adjust",
    "fdr",
    "significance_clusters",
    "partial_conjunction_test",
    "check_alpha",
]

CORRECTIONS = ("none", "bonferroni", "holm", "fdr_bh", "fdr_by")


def bonferroni(pvalues, *, n_tests: int | None = None) -> np.ndarray:
    """Bonferroni-adjusted p-values: ``min(1, p * n_tests)``; NaN entries are not counted as tests."""
    p = check_pvalues(pvalues)
    counted = int(np.count_nonzero(~np.isnan(p)))
    if n_tests is None:
        m = counted
    elif isinstance(n_tests, bool) or not isinstance(n_tests, (int, np.integer)) or n_tests < 1:
        raise ValueError(f"n_tests must be an integer >= 1, got {n_tests!r}")
    elif n_tests < counted:
        raise ValueError(f"n_tests={n_tests} is smaller than the {counted} p-values given; the family has at least "
                         "as many tests as p-values")
    else:
        m = int(n_tests)
    return np.minimum(1.0, p * m)


def check_alpha(alpha: object, *, allow_one: bool = True) -> float:
    """``alpha`` as a float: a real number (numpy scalars such as ``np.float32(0.05)`` too) in (0, 1], or in
    (0, 1) with ``allow_one=False``; anything else is refused with one line saying what is wrong.

    alpha = 1 is a legal level for the rules here: every p-value is <= 1, so every test rejects
    (mt-metrics-eval's ``AssignRanks(pval=1.0)`` puts every metric in its own rank).

    >>> round(check_alpha(np.float32(0.05)), 6)
    0.05
    >>> check_alpha(1.0)
    1.0
    >>> check_alpha("0.05")
    Traceback (most recent call last):
    ValueError: alpha must be in (0, 1] (a number such as 0.05), got '0.05'
    """
    ok = isinstance(alpha, numbers.Real) and not isinstance(alpha, (bool, np.bool_))
    if not (ok and 0 < float(alpha) and (float(alpha) <= 1 if allow_one else float(alpha) < 1)):  # type: ignore[arg-type]
        raise ValueError(f"alpha must be in (0, 1{']' if allow_one else ')'} (a number such as 0.05), got {alpha!r}")
    return float(alpha)  # type: ignore[arg-type]


def check_pvalues(pvalues) -> np.ndarray:
    try:
        p = np.asarray(pvalues, dtype=float)
    except (TypeError, ValueError):
        raise TypeError("pvalues must be numbers in [0, 1]") from None
    bad = ~np.isnan(p) & ((p < 0) | (p > 1))
    if bad.any():
        raise ValueError(f"pvalues must be in [0, 1] (NaN marks a missing test), got {p[bad].ravel()[:3].tolist()}")
    return p


def holm(pvalues) -> np.ndarray:
    """Holm's step-down adjusted p-values over all non-NaN entries (any shape)."""
    p = check_pvalues(pvalues)
    flat = p.ravel()
    valid = np.flatnonzero(~np.isnan(flat))
    order = valid[np.argsort(flat[valid], kind="stable")]
    adjusted = np.full_like(flat, np.nan)
    # the step-down rule: (m - rank) p, capped at 1, made non-decreasing along the sorted p-values
    adjusted[order] = np.maximum.accumulate(np.minimum(1.0, (order.size - np.arange(order.size)) * flat[order]))
    return adjusted.reshape(p.shape)


def fdr(pvalues, *, method: str = "bh") -> np.ndarray:
    """False-discovery-rate adjusted p-values (Benjamini-Hochberg ``"bh"``, or Benjamini-Yekutieli ``"by"``
    for any dependence) over all non-NaN entries of an array of any shape.

    Rejecting where the adjusted p-value is at most q controls the FDR at q. The adjustment is
    ``scipy.stats.false_discovery_control``; NaN entries (the diagonal of a pairwise matrix) are not tests.

    Examples
    --------
    >>> fdr([0.01, 0.04, 0.03, np.nan])
    array([0.03, 0.04, 0.04,  nan])
    """
    if method not in ("bh", "by"):
        raise ValueError(f"method must be 'bh' or 'by', got {method!r}")
    p = check_pvalues(pvalues)
    out = np.full(p.shape, np.nan)
    valid = ~np.isnan(p)
    if valid.any():
        out[valid] = stats.false_discovery_control(p[valid], method=method)
    return out


def adjust(pvalues, *, correction: str) -> np.ndarray:
    """p-values adjusted for multiplicity over all non-NaN entries.

    Parameters
    ----------
    pvalues : array_like
    correction : {"none", "bonferroni", "holm", "fdr_bh", "fdr_by"}
        Bonferroni and Holm control the family-wise error rate; ``fdr_bh`` (independent or positively
        dependent tests) and ``fdr_by`` (any dependence) the false-discovery rate. The names are statsmodels'.

    Examples
    --------
    >>> adjust([0.01, 0.04, 0.03], correction="holm")
    array([0.03, 0.06, 0.06])
    """
    if correction == "none":
        return check_pvalues(pvalues).copy()
    if correction == "bonferroni":
        return bonferroni(pvalues)
    if correction == "holm":
        return holm(pvalues)
    if correction in ("fdr_bh", "fdr_by"):
        return fdr(pvalues, method=correction[4:])
    raise ValueError(f"correction must be one of {CORRECTIONS}, got {correction!r}")


# ----------------------------------------------------------------------------------------------------
# Significance clusters


@dataclass(frozen=True)
class ClusterResult:
    """Result of :func:`significance_clusters`, metrics in decreasing order of their statistic.

    ``ranks[k]`` is the cluster of ``names[k]`` (1 = top): a metric starts a new cluster when a metric of
    the current cluster beats it significantly (``pvalues[i, k] <= alpha``, the WMT rule). Metrics whose
    statistic is NaN come last with rank NaN (``ranks`` is then a float array; integers otherwise).
    """

    names: tuple[str, ...]
    statistics: np.ndarray
    ranks: np.ndarray
    pvalues: np.ndarray
    alpha: float

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame({"metric": list(self.names), "statistic": self.statistics, "rank": self.ranks})


def significance_clusters(tests: Any, *, alpha: float = 0.05) -> ClusterResult:
    """WMT-style ranks of metrics from all-pairs tests (mt-metrics-eval ``data.AssignRanks``).

    Metrics are sorted by decreasing statistic (ties by name, as mt-metrics-eval). Walking down the list, a
    metric gets the current rank unless some metric from the start of the current cluster up to it beats it
    with ``p <= alpha``; then it opens the next rank. So a rank holds metrics no member of it significantly
    outperforms, and every metric of a lower rank is beaten by one above it.

    Parameters
    ----------
    tests : PairwiseResult
        From :func:`metaeval.pairwise_tests` (``pvalues[i, j]`` for H1: metric i beats metric j), or any
        object with ``names``, ``correlations`` (the statistics) and ``pvalues``. Pass p-values adjusted for
        multiplicity (``pairwise_tests(..., correction=...)``) to control the error over all pairs.
    alpha : float in (0, 1]
        ``alpha=1`` counts every difference (mt-metrics-eval's ``pval=1.0``): K metrics with distinct
        statistics and defined p-values get ranks 1..K.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> p = np.array([[np.nan, 0.30, 0.01], [0.7, np.nan, 0.20], [0.99, 0.8, np.nan]])
    >>> significance_clusters(SimpleNamespace(names=("a", "b", "c"), correlations=np.array([.9, .8, .7]),
    ...                                       pvalues=p), alpha=0.05).ranks.tolist()
    [1, 1, 2]
    """
    alpha = check_alpha(alpha)
    try:
        names = tuple(str(n) for n in tests.names)
        statistics = np.asarray(tests.correlations, dtype=float)
        pvalues = check_pvalues(tests.pvalues)
    except AttributeError:
        raise TypeError("tests must be a PairwiseResult (names, correlations, pvalues) from pairwise_tests") from None
    K = len(names)
    if statistics.shape != (K,) or pvalues.shape != (K, K):
        raise ValueError(f"tests has {K} names but statistics {statistics.shape} and pvalues {pvalues.shape}")
    order = sorted(range(K), key=lambda k: (-statistics[k] if not np.isnan(statistics[k]) else np.inf, names[k]))
    p = pvalues[np.ix_(order, order)]
    defined = int(np.count_nonzero(~np.isnan(statistics)))
    # a metric whose statistic is undefined has no place in the order: it is not ranked (NaN, listed last),
    # and its tests take no part in the walk, which would otherwise open ranks from wins against it
    ranks: np.ndarray = np.zeros(K, dtype=int) if defined == K else np.full(K, np.nan)
    if defined < K:
        warn_degenerate(
            f"significance_clusters: {', '.join(names[k] for k in order[defined:])} not ranked (rank NaN): the "
            "statistic is NaN (an undefined correlation, e.g. constant scores)")
    rank, start = 1, 0
    for i in range(defined):
        if np.any(p[start:i, i] <= alpha):
            rank += 1
            start = i
        ranks[i] = rank
    return ClusterResult(tuple(names[k] for k in order), statistics[order], ranks, p, float(alpha))


# ----------------------------------------------------------------------------------------------------
# Replicability over datasets


@dataclass(frozen=True)
class PartialConjunctionResult:
    """Result of :func:`partial_conjunction_test`.

    Attributes
    ----------
    pvalue : float
        p-value of H0 "the effect holds on fewer than u of the n datasets": the largest of the partial
        conjunction p-values for 1..u (Benjamini & Heller's p^{v/n} need not grow with v, e.g. Bonferroni on two
        equal p-values gives 2p at v = 1 and p at v = 2; taking the running maximum keeps "replicated on u
        datasets" from being claimed where "on at least one" is not, and stays valid, only more conservative).
    pvalues : ndarray (n,)
        The partial-conjunction p-value for u = 1..n, made non-decreasing in u (testing u = 1, 2, ... in turn
        and stopping at the first acceptance, as Dror et al.'s counting procedure).
    n_replicated : int
        Dror et al.'s estimate of the number of datasets with an effect: the largest u whose p-value is at
        most ``alpha`` (0 if none).
    alpha : float
    method : str
    """

    pvalue: float
    pvalues: np.ndarray
    n_replicated: int
    alpha: float
    method: str


PC_METHODS = ("bonferroni", "fisher", "stouffer")

#: Stouffer's z of p = 0 or 1 is infinite, and a 0 with a 1 gives inf - inf (NaN); p-values are clipped to
#: [2^-52, 1 - 2^-52] first, symmetric about 1/2 (float64 cannot hold a p-value nearer 1 than 2^-53, so no
#: bound nearer 0 would be matched on the other side): a 0 and a 1 then cancel (z = 8.1 and -8.1), a 0 with
#: moderate p-values gives a tiny combined p, and every p-value inside the bounds is unchanged
STOUFFER_BOUND = 2.0**-52


def partial_conjunction_test(pvalues, *, u: int, method: str = "bonferroni", alpha: float = 0.05
                             ) -> PartialConjunctionResult:
    """Partial conjunction test: is the effect present on at least ``u`` of ``n`` datasets?

    Benjamini & Heller (2008): with the p-values sorted, ``p_(1) <= ... <= p_(n)``, combine the ``n - u + 1``
    largest: Bonferroni ``(n - u + 1) p_(u)``, Fisher ``P(chi2_{2(n-u+1)} >= -2 sum_{i>=u} log p_(i))``,
    Stouffer. Valid for independent datasets (Bonferroni: any dependence). u = n is the conjunction ("on
    every dataset"), u = 1 the global null.

    Parameters
    ----------
    pvalues : array_like (n,)
        One p-value per dataset for the same one-sided hypothesis (e.g. "metric A beats metric B").
    u : int in 1..n
    method : {"bonferroni", "fisher", "stouffer"}
        Dror et al. (2017) use Bonferroni and Fisher. p = 0 and p = 1 are legal p-values: Fisher's combination
        with a p-value of 0 is 0 (exact); Stouffer's clips p-values to [2^-52, 1 - 2^-52] first
        (:data:`STOUFFER_BOUND`), symmetric about 1/2, so that a 0 and a 1 cancel instead of giving inf - inf.
    alpha : float in (0, 1]
        Level for ``n_replicated``.

    Examples
    --------
    >>> res = partial_conjunction_test([0.01, 0.02, 0.30], u=2, method="bonferroni")
    >>> float(res.pvalue), res.pvalues.tolist(), res.n_replicated
    (0.04, [0.03, 0.04, 0.3], 2)
    """
    p = check_pvalues(pvalues).ravel()
    if np.isnan(p).any():
        raise ValueError("pvalues contain NaN; give one p-value per dataset")
    n = p.size
    if n < 1:
        raise ValueError("pvalues is empty")
    if isinstance(u, bool) or not isinstance(u, (int, np.integer)) or not 1 <= u <= n:
        raise ValueError(f"u must be an integer in 1..{n} (the number of datasets), got {u!r}")
    if method not in PC_METHODS:
        raise ValueError(f"method must be one of {PC_METHODS}, got {method!r}")
    alpha = check_alpha(alpha)
    s = np.sort(p)
    raw = np.empty(n)
    for k in range(1, n + 1):
        tail = s[k - 1:]
        if method == "bonferroni":
            raw[k - 1] = min(1.0, tail.size * tail[0])
        elif tail.size == 1:
            raw[k - 1] = tail[0]
        elif method == "fisher" and tail[0] == 0:
            raw[k - 1] = 0.0  # -2 log 0 = inf: exact, without numpy's divide-by-zero warning
        else:
            clipped = np.clip(tail, STOUFFER_BOUND, 1.0 - STOUFFER_BOUND)
            raw[k - 1] = stats.combine_pvalues(clipped if method == "stouffer" else tail, method=method).pvalue
    monotone = np.maximum.accumulate(raw)
    n_rep = int(np.count_nonzero(monotone <= alpha))
    return PartialConjunctionResult(float(monotone[u - 1]), monotone, n_rep, float(alpha), method)
