"""How many human labels: the budget of a study with a judge (prediction-powered inference) and of the alt-test.

* :func:`labels_for_width`: the human labels a normal interval of a mean (a system's mean, or the mean of
  per-input differences of two systems) needs to reach a target width, with humans only and with PPI++ at
  its optimal ``lam`` next to ``n_unlabelled`` judge-only inputs, from a pilot's standard deviation and the
  human-judge correlation;
* :func:`cost_optimal_labels`: the cheapest (n labelled, N judge-only) pair reaching an effective sample size,
  or the most powerful pair within a budget (the closed form of Broska, Howes & van Loon 2024 that ``ppi_py``'s
  ``ppi_mean_power`` answers; derived below and equal to ``ppi_py`` on fixed inputs, ``tests/test_label_budget.py``);
* the alt-test's power for a number of items and annotators is :func:`metaeval.stats.alt_test.alt_test_power`
  (a rating model fitted to a pilot by :func:`metaeval.stats.alt_test.fit_rating_model`).

PPI++'s variance at the optimal ``lam`` (Angelopoulos, Duchi & Zrnic 2023) with n labelled and N unlabelled
inputs, sd the humans' standard deviation and rho the human-judge correlation::

    var = sd^2 / n * (1 - rho^2 * N / (n + N))         effective n: n_eff = n (n + N) / (n + (1 - rho^2) N)

Cost-optimal pair: with T = n + N, n_eff fixed gives T = n_eff rho^2 n / (n - (1 - rho^2) n_eff); minimizing
n c_label + T c_judge over n gives (n - (1 - rho^2) n_eff)^2 = gamma rho^2 (1 - rho^2) n_eff^2, gamma =
c_judge / c_label, so n = n_eff (1 - rho^2 + sqrt(gamma rho^2 (1 - rho^2))) and N = n (n_eff - n) /
(n - (1 - rho^2) n_eff); humans only are cheaper when that n exceeds n_eff.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats


__all__ = [
    "LabelPlan",
    "labels_for_width",
    "ppi_correlation_coefficient",
    "cost_optimal_labels",
]


def _z(confidence_level: float) -> float:
    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level must be in (0, 1), got {confidence_level!r}")
    return float(stats.norm.ppf(0.5 + confidence_level / 2))


def _check_rho(rho: float) -> float:
    if not -1 < rho < 1:
        raise ValueError(f"rho must be strictly between -1 and 1 (the human-judge correlation), got {rho!r}")
    return float(rho)


def labels_for_width(width: float, *, sd: float, rho: float, n_unlabelled: float | None = None,
                     confidence_level: float = 0.95) -> dict[str, float]:
    """Human labels for a normal interval of total width ``width``: humans only, and PPI++.

    ``n_unlabelled`` None: as many judge-only inputs as wanted (the limit var = sd^2 (1 - rho^2) / n).
    Returns ``{"humans_only": n, "ppi": n}`` (real numbers; round up).

    Examples
    --------
    >>> plan = labels_for_width(0.2, sd=1.0, rho=0.8)
    >>> round(plan["humans_only"], 1), round(plan["ppi"], 1)
    (384.1, 138.3)
    """
    if width <= 0 or sd <= 0:
        raise ValueError(f"width and sd must be > 0, got width={width!r}, sd={sd!r}")
    rho = _check_rho(rho)
    v = (width / (2 * _z(confidence_level))) ** 2  # the variance the interval allows
    classical = sd**2 / v
    if n_unlabelled is None:
        ppi = classical * (1 - rho**2)
    else:
        # v n^2 + (v N - sd^2) n - sd^2 (1 - rho^2) N = 0, the positive root
        N = float(n_unlabelled)
        b = v * N - sd**2
        ppi = (-b + math.sqrt(b * b + 4 * v * sd**2 * (1 - rho**2) * N)) / (2 * v)
    return {"humans_only": classical, "ppi": ppi}


def ppi_correlation_coefficient(human, judge) -> float:
    """The human-judge correlation the closed forms use: Pearson's r on the labelled inputs, capped at 1 - 1/n
    (as ``ppi_py``'s power analysis does, so that a pilot with a perfect judge does not promise 0 labels)."""
    y, f = np.asarray(human, dtype=float), np.asarray(judge, dtype=float)
    if y.shape != f.shape or y.ndim != 1 or y.size < 3:
        raise ValueError(f"human and judge must be 1-D of the same length >= 3, got {y.shape} and {f.shape}")
    r = float(np.corrcoef(y, f)[0, 1])
    return min(r, 1 - 1 / y.size)


@dataclass(frozen=True)
class LabelPlan:
    """Result of :func:`cost_optimal_labels`: ``n`` human labels (the judge scores them too), ``N`` judge-only
    inputs, the ``cost`` and the ``effective_n`` they give (the humans-only sample size of the same variance),
    ``rho`` and whether PPI is used (``N > 0``)."""

    n: int
    N: int
    cost: float
    effective_n: int
    rho: float
    uses_ppi: bool


def cost_optimal_labels(rho: float, *, cost_label: float, cost_judge: float, effective_n: float | None = None,
                        budget: float | None = None) -> LabelPlan:
    """The cheapest (n, N) reaching ``effective_n``, or the most powerful within ``budget``.

    Cost = n * cost_label + (n + N) * cost_judge; humans only (N = 0) cost n * cost_label. The answer of
    ``ppi_py.ppi_mean_power(Y, Yhat, cost_Y, cost_Yhat, effective_n=... | budget=...)`` with rho =
    :func:`ppi_correlation_coefficient` of its Y and Yhat (rounded as it rounds).

    Examples
    --------
    >>> cost_optimal_labels(0.765, cost_label=10.0, cost_judge=0.1, effective_n=500)
    LabelPlan(n=232, N=2524, cost=2595.6, effective_n=500, rho=0.765, uses_ppi=True)
    """
    rho = _check_rho(rho)
    if (effective_n is None) == (budget is None):
        raise ValueError("give exactly one of effective_n (cheapest pair) and budget (most powerful pair)")
    if cost_label <= 0 or cost_judge < 0:
        raise ValueError(f"cost_label must be > 0 and cost_judge >= 0, got {cost_label!r}, {cost_judge!r}")
    r2 = rho * rho
    gamma = cost_judge / cost_label
    shrink = 1 - r2 + math.sqrt(gamma * r2 * (1 - r2))  # n / n_eff at the optimum
    # the cost of one effective sample: PPI's, against humans only (cost_label)
    per_effective = cost_label * (1 - r2 + gamma * r2 + 2 * math.sqrt(gamma * r2 * (1 - r2)))
    n0 = effective_n if effective_n is not None else budget / per_effective  # type: ignore[operator]
    n = n0 * shrink
    N = n * (n0 - n) / (n - (1 - r2) * n0) if rho != 0 else 0.0
    if per_effective > cost_label or N < 0:
        n_h = round(n0 if effective_n is not None else budget / cost_label)  # type: ignore[operator]
        return LabelPlan(n=n_h, N=0, cost=n_h * cost_label, effective_n=n_h, rho=rho, uses_ppi=False)
    n_i, N_i = round(n), round(N)
    eff = round(n_i * (n_i + N_i) / (n_i + (1 - r2) * N_i))
    return LabelPlan(n=n_i, N=N_i, cost=n_i * cost_label + (n_i + N_i) * cost_judge, effective_n=eff, rho=rho,
                     uses_ppi=True)
