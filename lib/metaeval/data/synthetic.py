"""Synthetic systems x inputs data with known population correlations (code, not files).

Reachable as ``metaeval.datasets.synthetic`` too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SyntheticDataset", "synthetic"]


@dataclass(frozen=True)
class SyntheticDataset:
    """Synthetic metric and human scores with known population correlations.

    Attributes
    ----------
    human : ndarray (N, M)
    metrics : ndarray (K, N, M)
        K metrics, exchangeable given the human scores (equal population correlations with it).
    system_correlation : float
        Population Pearson correlation between a metric's and the human *true system quality*
        (the system-level correlation as the number of inputs grows).
    system_correlation_finite : float
        Population correlation between system means over the M inputs actually drawn.
    summary_correlation : float
        Population Pearson correlation, within one input, between metric and human scores across systems
        (what the summary-level correlation estimates).
    """

    human: np.ndarray
    metrics: np.ndarray
    system_correlation: float
    system_correlation_finite: float
    summary_correlation: float


def synthetic(
    n_systems: int,
    n_inputs: int,
    *,
    system_correlation: float,
    summary_correlation: float,
    n_metrics: int = 1,
    system_sd: float = 1.0,
    noise_sd: float = 1.0,
    shared_system_effect: bool = True,
    rng: np.random.Generator | int | None = None,
) -> SyntheticDataset:
    """Draw a systems x inputs grid with known population correlations between metric and human scores.

    Model: system quality ``a_i`` (human) and ``b_ki`` (metric k) are jointly normal with correlation
    ``rho_s`` (``system_correlation``), variance ``system_sd**2``; each cell adds noise ``e_ij`` (human) and
    ``f_kij`` (metric) that are jointly normal with correlation ``rho_e`` and variance ``noise_sd**2``.
    Metric k is ``b_ki + f_kij``, human ``a_i + e_ij``. ``rho_e`` is solved so that the within-input
    correlation equals ``summary_correlation``: ``(rho_s s^2 + rho_e t^2) / (s^2 + t^2)``.

    With ``shared_system_effect=True`` (default) all metrics share one system effect ``b_i`` and differ only
    by independent cell noise: any two metrics are exchangeable *cell by cell*, the null hypothesis under
    which Perm-Both (which swaps single cells) is exact. With ``False`` each metric has its own ``b_ki``:
    the metrics are exchangeable only as whole systems, and cell-wise Perm-Both rejects too often (a
    teaching example of what its null assumes; Perm-Systems stays valid).

    Examples
    --------
    >>> d = synthetic(16, 100, system_correlation=0.8, summary_correlation=0.3, rng=0)
    >>> d.metrics.shape, round(d.summary_correlation, 2)
    ((1, 16, 100), 0.3)
    """
    for arg, value in (("n_systems", n_systems), ("n_inputs", n_inputs), ("n_metrics", n_metrics)):
        if not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{arg} must be a positive integer, got {value!r}")
    for arg, corr in (("system_correlation", system_correlation), ("summary_correlation", summary_correlation)):
        if not -1 <= corr <= 1:
            raise ValueError(f"{arg} must be in [-1, 1], got {corr!r}")
    if system_sd <= 0 or noise_sd <= 0:
        raise ValueError("system_sd and noise_sd must be positive")
    rng = np.random.default_rng(rng)
    s2, t2 = system_sd**2, noise_sd**2
    rho_e = (summary_correlation * (s2 + t2) - system_correlation * s2) / t2
    if not -1 <= rho_e <= 1:
        raise ValueError(
            f"summary_correlation={summary_correlation} cannot be reached with system_correlation="
            f"{system_correlation}, system_sd={system_sd}, noise_sd={noise_sd} (needs a cell-noise correlation "
            f"of {rho_e:.3f}); change noise_sd or the correlations"
        )
    a = rng.standard_normal(n_systems) * system_sd
    n_effects = 1 if shared_system_effect else n_metrics
    u = rng.standard_normal((n_effects, n_systems)) * system_sd
    b = np.broadcast_to(system_correlation * a + np.sqrt(1 - system_correlation**2) * u, (n_metrics, n_systems))
    e = rng.standard_normal((n_systems, n_inputs)) * noise_sd
    f = rho_e * e + np.sqrt(1 - rho_e**2) * rng.standard_normal((n_metrics, n_systems, n_inputs)) * noise_sd
    human = a[:, None] + e
    metrics = b[:, :, None] + f
    finite = (system_correlation * s2 + rho_e * t2 / n_inputs) / (s2 + t2 / n_inputs)
    return SyntheticDataset(human, metrics, float(system_correlation), float(finite), float(summary_correlation))
