"""Private: pair-counting kernels shared by :mod:`~metaeval.stats.correlation` and
:mod:`~metaeval.stats.agreement` (Kendall tau-c and pairwise accuracy along the last axis).

Both take ``x, z`` of shape ``(..., n)`` and an optional 0/1 validity mask ``w`` of the same shape, like the
kernels of :func:`metaeval.stats.correlation.batch_corr`, and return shape ``(...)``.
"""

from __future__ import annotations

import numpy as np

from metaeval.stats._kernels import snap

__all__ = ["pair_signs", "kendall_c", "pairwise_agreement", "n_distinct", "level_groups", "GROUPINGS"]


def pair_signs(x: np.ndarray, z: np.ndarray, w: np.ndarray | None):
    """sign(x_i - x_j), sign(z_i - z_j) (int8) and pair validity for the pairs i < j (``np.triu_indices``
    order), the pair axis last. ``np.take`` along the last axis is several times faster than gathering the
    moved axis."""
    n = x.shape[-1]
    iu, ju = np.triu_indices(n, k=1)
    dx = np.take(x, iu, axis=-1) - np.take(x, ju, axis=-1)
    dz = np.take(z, iu, axis=-1) - np.take(z, ju, axis=-1)
    sx = (dx > 0).view(np.int8) - (dx < 0).view(np.int8)
    sz = (dz > 0).view(np.int8) - (dz < 0).view(np.int8)
    if w is None:
        valid = None
    else:
        wb = np.asarray(w) > 0
        valid = np.take(wb, iu, axis=-1) & np.take(wb, ju, axis=-1)
    return sx, sz, valid


def n_distinct(x: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """Number of distinct valid values along the last axis."""
    v = np.sort(x if w is None else np.where(w > 0, x, np.nan), axis=-1)  # NaN (invalid) sorts last
    valid = ~np.isnan(v)
    new = np.ones(v.shape, dtype=bool)
    new[..., 1:] = v[..., 1:] != v[..., :-1]
    return np.count_nonzero(new & valid, axis=-1)


def kendall_c(x: np.ndarray, z: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
    """Stuart's tau-c as ``scipy.stats.kendalltau(variant="c")``: ``2 (P - Q) / (n^2 (m - 1) / m)`` with
    ``m`` the smaller number of distinct values; NaN where either vector is constant or n < 2."""
    sx, sz, valid = pair_signs(x, z, w)
    prod = sx * sz if valid is None else sx * sz * valid
    s = prod.sum(axis=-1, dtype=np.int64)
    n = x.shape[-1] if w is None else np.count_nonzero(np.asarray(w) > 0, axis=-1)
    m = np.minimum(n_distinct(x, w), n_distinct(z, w))
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = 2.0 * s / (np.asarray(n, dtype=float) ** 2 * (m - 1) / m)
    return np.where(m > 1, np.clip(tau, -1.0, 1.0), np.nan)


def pairwise_agreement(
    x: np.ndarray, z: np.ndarray, w: np.ndarray | None = None, skip_human_ties: bool = False
) -> np.ndarray:
    """Share of pairs i < j with ``sign(x_i - x_j) == sign(z_i - z_j)`` (mt-metrics-eval's ``Agreement``:
    a pair tied in both counts as agreement, a tie in one only as disagreement); NaN with fewer than 2
    valid entries. ``skip_human_ties`` leaves out the pairs ``z`` ties (the WMT convention); NaN where no
    pair is left."""
    sx, sz, valid = pair_signs(x, z, w)
    same = sx == sz
    if skip_human_ties:
        untied = sz != 0
        valid = untied if valid is None else valid & untied
    if valid is None:
        agree, pairs = np.count_nonzero(same, axis=-1), np.full(same.shape[:-1], same.shape[-1])
    else:
        agree, pairs = np.count_nonzero(same & valid, axis=-1), np.count_nonzero(valid, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(pairs > 0, agree / np.maximum(pairs, 1), np.nan)


GROUPINGS = ("system", "summary", "global", "per-system")


def level_groups(X: np.ndarray, Z: np.ndarray, level: str):
    """The vectors a coefficient is computed on at a level, as ``(x, z, w)`` of shape ``(G, n)``.

    * ``"system"``: one group, the per-system means over the scored inputs (snapped, so equal means tie);
    * ``"summary"``: one group per input, over systems (mt-metrics-eval ``average_by="item"``);
    * ``"per-system"``: one group per system, over inputs (mt-metrics-eval ``average_by="sys"``);
    * ``"global"``: one group of all N*M cells (mt-metrics-eval ``average_by="none"``).

    ``w`` is the 0/1 mask of scored entries, or None if every entry is scored.
    """
    nan = np.isnan(X) | np.isnan(Z)
    if level == "system":
        valid = ~nan
        with np.errstate(invalid="ignore", divide="ignore"):
            xs = np.where(valid, X, 0.0).sum(axis=1) / valid.sum(axis=1)
            zs = np.where(valid, Z, 0.0).sum(axis=1) / valid.sum(axis=1)
        scored = valid.any(axis=1)
        w = None if scored.all() else scored[None, :].astype(float)
        return snap(np.where(scored, xs, 0.0))[None, :], snap(np.where(scored, zs, 0.0))[None, :], w
    if level == "summary":
        x, z, m = X.T, Z.T, nan.T
    elif level == "per-system":
        x, z, m = X, Z, nan
    elif level == "global":
        x, z, m = X.reshape(1, -1), Z.reshape(1, -1), nan.reshape(1, -1)
    else:
        raise ValueError(f"level must be one of {GROUPINGS}, got {level!r}")
    w = None if not m.any() else (~m).astype(float)
    return np.where(m, 0.0, x), np.where(m, 0.0, z), w
