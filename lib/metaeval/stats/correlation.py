"""Correlations between metric and human scores at system, summary and global level.

X (metric) and Z (human) are N x M matrices: N systems (rows) x M inputs (columns).

* system level: correlation of the per-system means ``X.mean(1)`` and ``Z.mean(1)``;
* summary level: mean over inputs of the correlation across systems within each input, skipping inputs
  where it is undefined (constant scores);
* global level: correlation over all N*M cells;
* per-system level: mean over systems of the correlation across inputs within each system, skipping systems
  where it is undefined (mt-metrics-eval ``average_by="sys"``).

Coefficients follow scipy: Pearson, Spearman (average ranks), Kendall tau-b and tau-c; plus pairwise accuracy
(Kocmi et al. 2021, mt-metrics-eval's ``Agreement``) and any callable ``f(x, z) -> float``, applied per group
like the built-ins (a slow path: one Python call per group and resample). The kernels here compute a
coefficient along the last axis of arrays with any leading batch shape, so that a whole batch of resamples
is one array operation.
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, TypeGuard

import numpy as np
from scipy import special

from metaeval._warnings import warn_degenerate
from metaeval.stats._kernels import constant, snap
from metaeval.stats.coefficients import COEFFICIENTS, FISHER_COEFFICIENTS, REGISTRY, CoefficientInfo, coefficient_label

__all__ = [
    "LEVELS",
    "COEFFICIENTS",
    "REGISTRY",
    "CoefficientInfo",
    "coefficient_label",
    "ConfidenceInterval",
    "FisherResult",
    "correlate",
    "fisher_ci",
    "effective_n",
    "batch_corr",
    "level_corr",
    "constant",
]

LEVELS = ("system", "summary", "global", "per-system")
Level = Literal["system", "summary", "global", "per-system"]
#: the built-in coefficient names, for type checkers; tests/test_stats_properties.py checks that it lists the
#: names of :data:`REGISTRY` in order (a Literal cannot be computed)
Coefficient = Literal["pearson", "spearman", "kendall", "kendall-c", "pairwise-accuracy"]


class ConfidenceInterval(NamedTuple):
    low: float
    high: float


@dataclass(frozen=True)
class FisherResult:
    """Fisher-transform confidence interval of a correlation (Bonett & Wright, 2000)."""

    statistic: float
    confidence_interval: ConfidenceInterval
    n: int


# ----------------------------------------------------------------------------------------------------
# Validation


def check_level(level: str) -> None:
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")


def check_coefficient(coefficient, allowed: tuple[str, ...] | None = None) -> None:
    """A built-in name of ``allowed`` (default: every coefficient of :data:`REGISTRY`), or (when ``allowed`` is all
    of them) a callable ``f(x, z) -> float``."""
    every = allowed is None or tuple(allowed) == COEFFICIENTS
    allowed = COEFFICIENTS if allowed is None else allowed
    if callable(coefficient) and every:
        return
    if not isinstance(coefficient, str) or coefficient not in allowed:
        extra = " or a callable f(x, z) -> float" if every else ""
        raise ValueError(f"coefficient must be one of {allowed}{extra}, got {coefficient!r}")


def coefficient_name(coefficient) -> str:
    """The name of a coefficient for messages: the string, or a callable's ``__name__``."""
    return coefficient if isinstance(coefficient, str) else getattr(coefficient, "__name__", "callable")


def check_matrices(
    nan_policy: str = "raise", *, level: Any = None, min_size: int = 3, **named: object
) -> tuple[np.ndarray, ...]:
    """Convert named matrices to float arrays and check they are N x M, equal-shaped, N, M >= ``min_size``,
    finite; a matrix whose magnitudes would overflow float64 in sums of squares is rescaled by a power of 2
    (exact).

    ``min_size=3`` (the default) is for the resampling methods, which need that many systems and inputs to
    resample anything; a coefficient is defined on smaller inputs (two systems, one input), and the
    functions that compute one pass ``min_size=1`` and return NaN with a warning where it is not defined.

    At ``level="summary"`` each input (column) is rescaled on its own, at ``"per-system"`` each system (row):
    the statistic there is a mean of per-column (per-row) correlations, each invariant to its own scale, and a
    single scale for the whole matrix would push the other columns into float64's subnormal range, where their
    variances become 0 (one cell at 1e308 made every other input undefined).

    With ``nan_policy="omit"``, a cell that is NaN in any matrix becomes NaN in all of them (scipy's meaning:
    a pair is dropped when either side is missing), with a DegenerateResultWarning giving the number of cells
    left out that some matrix had a score for.
    """
    if nan_policy not in ("raise", "omit"):
        raise ValueError(f"nan_policy must be 'raise' or 'omit', got {nan_policy!r}")
    arrays = []
    first_name, first_shape = None, None
    labels: tuple[str, Any, Any] | None = None
    for name, value in named.items():
        if _is_frame(value):
            # pandas labels carry meaning: align every frame on the first frame's labels, or refuse
            frame: Any = value
            if labels is None:
                labels = (name, frame.index, frame.columns)
            else:
                value = _align(name, value, labels)
        try:
            if np.ma.isMaskedArray(value):
                # masked cells are missing cells: they become NaN, which nan_policy then governs
                arr = np.ma.masked_array(value, dtype=float).filled(np.nan)
            else:
                arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be a numeric N x M matrix") from None
        if arr.ndim != 2:
            raise ValueError(f"{name} must be a 2-D matrix (systems x inputs), got shape {arr.shape}")
        if arr.shape[0] < min_size or arr.shape[1] < min_size:
            raise ValueError(f"{name} needs at least {min_size} system{'s' * (min_size > 1)} and {min_size} "
                             f"input{'s' * (min_size > 1)}, got shape {arr.shape}")
        if first_shape is None:
            first_name, first_shape = name, arr.shape
        elif arr.shape != first_shape:
            raise ValueError(f"{name} has shape {arr.shape} but {first_name} has shape {first_shape}")
        if np.isinf(arr).any():
            raise ValueError(f"{name} contains infinite values")
        arrays.append(rescale(arr, axis={"summary": 0, "per-system": 1}.get(level or "")))
    nan_masks = [np.isnan(a) for a in arrays]
    if any(m.any() for m in nan_masks):
        names = list(named)
        if nan_policy == "raise":
            bad = [n for n, m in zip(names, nan_masks) if m.any()]
            raise ValueError(
                f"{', '.join(bad)} contain NaN (or masked cells); pass nan_policy='omit' if X and Z have NaN in "
                "the same cells"
            )
        # scipy's meaning of "omit": a cell missing in any matrix is left out of all of them (mt-metrics-eval
        # drops the items a system has no human score for); the cells scored on one side only are counted
        missing = np.logical_or.reduce(nan_masks)
        dropped = [(n, int(np.count_nonzero(missing & ~m))) for n, m in zip(names, nan_masks)]
        if any(k for _, k in dropped):
            others = {n: "/".join(o for o in names if o != n) for n in names}
            warn_degenerate(
                "nan_policy='omit' left out " + ", ".join(f"{k} cell{'s' * (k > 1)} of {n} (NaN in {others[n]})"
                                                          for n, k in dropped if k)
                + f": {int(missing.size - np.count_nonzero(missing))} of {missing.size} cells used",
                stacklevel=4,  # the caller of correlate(), agreement's statistics, the tests
            )
            arrays = [np.where(missing, np.nan, a) for a in arrays]
    return tuple(arrays)


#: beyond these magnitudes, sums of squares and products over a matrix overflow (or underflow) float64
_LARGE, _SMALL = 2.0**400, 2.0**-400


def rescale(arr: np.ndarray, axis: int | tuple[int, ...] | None = None) -> np.ndarray:
    """``arr`` times a power of 2 bringing its largest magnitude near 1, when squares or sums of its values
    would leave float64's range (a 1e308 cell; X * 1e300); otherwise ``arr`` itself.

    Every statistic computed from the matrices (correlations, their differences and resampled versions) is
    invariant to a positive scale, and a power of 2 scales every intermediate sum exactly: so the result is
    the one the data would give at a moderate scale. Data within the range are untouched (bit for bit).
    """
    if not arr.size:
        return arr
    # axis=0: each column on its own scale; axis=1: each row; the ones within range are untouched
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices: no scale
        top = np.nan_to_num(np.nanmax(np.abs(arr), axis=axis, keepdims=True), nan=0.0)
    out = (top != 0.0) & ((top < _SMALL) | (top > _LARGE))
    if not out.any():
        return arr
    return np.ldexp(arr, np.where(out, -np.frexp(top)[1], 0))


def _is_frame(value: object) -> TypeGuard[Any]:
    return all(hasattr(value, a) for a in ("index", "columns", "reindex", "to_numpy"))


def _align(name: str, frame: Any, labels: tuple[str, Any, Any]) -> Any:
    first, index, columns = labels
    for axis, ours, theirs in (("systems (index)", frame.index, index), ("inputs (columns)", frame.columns, columns)):
        if len(ours) != len(theirs) or set(ours) != set(theirs):
            missing = [str(v) for v in theirs if v not in set(ours)][:3]
            extra = [str(v) for v in ours if v not in set(theirs)][:3]
            raise ValueError(
                f"{name} and {first} are DataFrames with different {axis} labels "
                f"(only in {first}: {missing}; only in {name}: {extra}); align them or pass arrays"
            )
        if ours.has_duplicates:
            raise ValueError(f"{name} has duplicate {axis} labels; they cannot be aligned with {first}")
    return frame.reindex(index=index, columns=columns)


def warn_if_nan(value: float, what: str) -> None:
    """Warn (DegenerateResultWarning) that ``what`` is NaN, and why it can be."""
    if np.isnan(value):
        warn_degenerate(
            f"{what} is NaN: the correlation is undefined (constant scores at this level, every input "
            "constant at summary level, or fewer than 2 scored systems)",
            stacklevel=4,
        )


# ----------------------------------------------------------------------------------------------------
# Kernels: coefficient along the last axis, any batch shape, optional validity mask


def _callable_corr(x: np.ndarray, z: np.ndarray, f, w: np.ndarray | None) -> np.ndarray:
    """A user coefficient on every vector of the batch (valid entries only); NaN with fewer than 2."""
    out = np.full(x.shape[:-1], np.nan)
    for idx in np.ndindex(*x.shape[:-1]):
        keep = slice(None) if w is None else w[idx] > 0
        xv, zv = x[idx][keep], z[idx][keep]
        if xv.size >= 2:
            out[idx] = _as_coefficient_value(f, f(xv, zv))
    return out


def _as_coefficient_value(f, value: object) -> float:
    """A user coefficient's value as a float, or an error naming the coefficient (it returned a string, an
    array of several values, None ...)."""
    value = getattr(value, "statistic", value)  # scipy results (SignificanceResult, PearsonRResult)
    if isinstance(value, tuple) and value:
        value = value[0]  # (statistic, pvalue) pairs
    try:
        if isinstance(value, (str, bytes)) or value is None:
            raise TypeError
        return float(np.asarray(value, dtype=float).item())
    except (TypeError, ValueError):
        name = getattr(f, "__name__", repr(f))
        raise TypeError(
            f"coefficient: the callable {name} returned {value!r:.60}, not a number; it must return one float "
            "(the correlation of the two vectors it is given)"
        ) from None


def batch_corr(x: np.ndarray, z: np.ndarray, coefficient, w: np.ndarray | None = None) -> np.ndarray:
    """Correlation coefficient along the last axis; leading axes are a batch (broadcast against each other).

    Parameters
    ----------
    x, z : ndarray (..., n)
    coefficient : {"pearson", "spearman", "kendall", "kendall-c", "pairwise-accuracy"} or callable
    w : ndarray (..., n) of 0/1, optional
        Validity mask: entries with 0 are left out (their values are ignored).

    Returns
    -------
    ndarray (...)
        NaN where the coefficient is undefined (a constant vector, fewer than 2 valid entries).

    Examples
    --------
    >>> batch_corr(np.array([[1., 2, 3], [3, 2, 1]]), np.array([1., 2, 4]), "kendall")
    array([ 1., -1.])
    """
    x, z = np.broadcast_arrays(x, z)
    if w is not None:
        # C order: astype of a broadcast mask keeps its strides ("K"), and sums along the last axis of such a
        # layout are taken in another order than those of one row, so results would depend on the batch size
        w = np.ascontiguousarray(np.broadcast_to(w, x.shape), dtype=float)
        x = np.where(w > 0, x, 0.0)
        z = np.where(w > 0, z, 0.0)
    if isinstance(coefficient, str) and coefficient in REGISTRY:
        return REGISTRY[coefficient].function(x, z, w)
    if callable(coefficient):
        return _callable_corr(x, z, coefficient, w)
    raise ValueError(f"coefficient must be one of {COEFFICIENTS} or a callable, got {coefficient!r}")


def system_corr(xs: np.ndarray, zs: np.ndarray, coefficient: str) -> np.ndarray:
    """Correlation of system scores (last axis = systems) for a batch.

    Means of resampled or permuted cells are summed in varying orders, so mathematically equal means can
    differ in the last bits; for rank coefficients they are snapped first so that they tie.
    """
    if callable(coefficient) or REGISTRY[coefficient].rank_based:
        xs, zs = snap(xs, axis=-1), snap(zs, axis=-1)  # one scale per resample: batch-independent
    return batch_corr(xs, zs, coefficient)


def mean_of_defined(per_input: np.ndarray) -> np.ndarray:
    """Mean over the last axis skipping NaN (undefined inputs); NaN if none is defined."""
    count = np.count_nonzero(~np.isnan(per_input), axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.nansum(per_input, axis=-1) / count
    return np.where(count > 0, r, np.nan)


def _system_means(x: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    if w is None:
        return x.mean(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (np.where(w > 0, x, 0.0)).sum(axis=-1) / w.sum(axis=-1)


def level_corr(
    x: np.ndarray,
    z: np.ndarray,
    level: str,
    coefficient: str,
    w: np.ndarray | None = None,
    *,
    return_count: bool = False,
    agg: str = "mean",
):
    """Correlation at a level for a batch of N x M matrices ``(..., N, M)``; returns shape ``(...)``.

    At summary level, inputs whose correlation is undefined are skipped; if all are, the result is NaN.
    With ``return_count`` the number of inputs averaged is returned too (summary level). ``agg="median"``
    makes the *metric's* system score the median of its summary scores (Graham's median variants); the
    human system score stays the mean.
    """
    x, z = np.broadcast_arrays(x, z)
    if w is not None:
        w = np.broadcast_to(w, x.shape)
    if level == "system":
        if agg == "median":
            if w is not None:
                raise ValueError("agg='median' does not support NaN cells")
            xs, zs = np.median(x, axis=-1), _system_means(z, w)
        elif agg == "mean":
            xs, zs = _system_means(x, w), _system_means(z, w)
        else:
            raise ValueError(f"agg must be 'mean' or 'median', got {agg!r}")
        r = system_corr(xs, zs, coefficient)
        count = np.ones(r.shape, dtype=int)
    elif level == "summary":
        xt, zt = np.swapaxes(x, -1, -2), np.swapaxes(z, -1, -2)
        wt = None if w is None else np.swapaxes(w, -1, -2)
        per_input = batch_corr(xt, zt, coefficient, wt)
        count = np.count_nonzero(~np.isnan(per_input), axis=-1)
        r = mean_of_defined(per_input)
    elif level == "global":
        shape = x.shape[:-2] + (x.shape[-2] * x.shape[-1],)
        r = batch_corr(x.reshape(shape), z.reshape(shape), coefficient, None if w is None else w.reshape(shape))
        count = np.ones(r.shape, dtype=int)
    elif level == "per-system":
        per_system = batch_corr(x, z, coefficient, w)
        count = np.count_nonzero(~np.isnan(per_system), axis=-1)
        r = mean_of_defined(per_system)
    else:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    return (r, count) if return_count else r


def _mask(*arrays: np.ndarray) -> np.ndarray | None:
    nan = np.isnan(arrays[0])
    return None if not nan.any() else (~nan).astype(float)


def correlate(
    X,
    Z,
    *,
    level: str = "system",
    coefficient: str = "pearson",
    nan_policy: Literal["raise", "omit"] = "raise",
) -> float:
    """Correlation between metric scores X and human scores Z (both N systems x M inputs).

    Parameters
    ----------
    X, Z : array_like (N, M)
        Metric and human scores; rows are systems, columns inputs.
    level : {"system", "summary", "global", "per-system"}
        ``"per-system"``: the mean over systems of the correlation across inputs (mt-metrics-eval
        ``average_by="sys"``; ``"summary"`` is its ``"item"``, ``"global"`` its ``"none"``).
    coefficient : {"pearson", "spearman", "kendall", "kendall-c", "pairwise-accuracy"} or callable
        Kendall is tau-b and kendall-c Stuart's tau-c, as in scipy; pairwise accuracy is the share of pairs
        ordered alike (ties in both agree; see :func:`metaeval.pairwise_accuracy`). A callable
        ``f(x, z) -> float`` is applied to every group (the system means, each input, each system, or all
        cells) over its scored entries, like the built-ins.
    nan_policy : {"raise", "omit"}
        ``"omit"`` leaves out every cell that is NaN in X or in Z (scipy's meaning), at every level: system
        means over the cells scored in both, per-input (per-system) correlations over the systems (inputs)
        scored in both, as mt-metrics-eval averages over the items each system has a human score for. Cells
        left out on one side only are counted in a DegenerateResultWarning.

    Returns
    -------
    float
        NaN if undefined (e.g. every input has constant scores).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(5, 4)); X = Z + rng.normal(size=(5, 4))
    >>> round(correlate(X, Z, level="system", coefficient="kendall"), 3)     # 5 system means: 6 of 10 pairs agree
    0.2
    >>> round(correlate(X, Z, level="summary", coefficient="kendall"), 3)    # mean of the 4 per-input taus
    0.65
    >>> from scipy import stats
    >>> round(correlate(X, Z, level="summary", coefficient=lambda x, z: stats.kendalltau(x, z)[0]), 3)
    0.65
    """
    check_level(level)
    check_coefficient(coefficient)
    X, Z = check_matrices(nan_policy, level=level, min_size=1, X=X, Z=Z)
    r = float(level_corr(X, Z, level, coefficient, _mask(X)))
    warn_if_nan(r, f"the {level}-level {coefficient_name(coefficient)} correlation")
    return r


def effective_n(X, *, level: str) -> int:
    """The sample size that Fisher's and Williams' formulas use at a level.

    System level: the number of systems with at least one score. Summary level: the largest number of
    scored systems in any input (the per-input correlations are over systems, so this is N, not M).
    Global level: the number of scored cells. These are the reference code's choices (nlpstats, SacreROUGE).
    """
    X = np.asarray(X, dtype=float)
    valid = ~np.isnan(X)
    if level == "system":
        return int(valid.any(axis=1).sum())
    if level == "summary":
        return int(valid.sum(axis=0).max())
    if level == "global":
        return int(valid.sum())
    if level == "per-system":
        return int(valid.sum(axis=1).max())
    raise ValueError(f"level must be one of {LEVELS}, got {level!r}")


def check_confidence_level(confidence_level: float) -> None:
    """Refuse anything but a real number strictly between 0 and 1 (numpy scalars such as ``np.float32(0.95)``
    are real numbers too).

    >>> check_confidence_level(np.float32(0.95))
    >>> check_confidence_level(95)
    Traceback (most recent call last):
    ValueError: confidence_level must be a number in (0, 1) such as 0.95, got 95
    """
    if not (isinstance(confidence_level, numbers.Real) and not isinstance(confidence_level, (bool, np.bool_))
            and 0 < confidence_level < 1):
        raise ValueError(f"confidence_level must be a number in (0, 1) such as 0.95, got {confidence_level!r}")


def check_bool(value: object, name: str) -> bool:
    """``value`` if it is True or False (numpy's too); anything else (the string "no", 0, None) is refused with a
    message naming ``name``: a non-bool is truthy or falsy by accident, not by the caller's choice.

    >>> check_bool(np.True_, "progress")
    True
    >>> check_bool("no", "replace_nans_with_zeros")
    Traceback (most recent call last):
    TypeError: replace_nans_with_zeros must be True or False, got 'no'
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r:.60}")
    return bool(value)


def check_rng(rng: object, name: str = "rng") -> np.random.Generator:
    """``np.random.default_rng(rng)`` for the seeds it accepts (None, a non-negative integer, a sequence of
    them, a SeedSequence, BitGenerator or Generator); anything else is refused with a message naming ``name``.

    >>> check_rng(0).integers(10)
    np.int64(8)
    >>> check_rng(-1)
    Traceback (most recent call last):
    ValueError: rng must be None, a non-negative integer seed, a SeedSequence or a numpy Generator, got -1
    """
    ok = rng is None or isinstance(rng, (np.random.SeedSequence, np.random.BitGenerator, np.random.Generator))
    if not ok and not isinstance(rng, (bool, np.bool_)):
        seeds = np.asarray(rng, dtype=object).ravel() if isinstance(rng, (list, tuple, np.ndarray)) else [rng]
        ok = len(seeds) > 0 and all(isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))
                                    and int(v) >= 0 for v in seeds)
    if not ok:
        raise ValueError(
            f"{name} must be None, a non-negative integer seed, a SeedSequence or a numpy Generator, got {rng!r:.60}"
        )
    return np.random.default_rng(rng)  # type: ignore[arg-type]


def fisher_ci(
    X,
    Z,
    *,
    level: Level = "system",
    coefficient: Coefficient = "pearson",
    confidence_level: float = 0.95,
    nan_policy: Literal["raise", "omit"] = "raise",
) -> FisherResult:
    """Confidence interval of a correlation through Fisher's z transform, with Bonett & Wright's constants.

    ``z = arctanh(r) -/+ Phi^-1(1 - alpha/2) * c / sqrt(n - b)``, back-transformed with tanh, where
    Pearson b=3, c=1; Spearman b=3, c=sqrt(1 + r^2/2); Kendall b=4, c=sqrt(0.437). ``n`` is
    :func:`effective_n`. The interval is NaN if ``n <= b``.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> Z = rng.normal(size=(16, 10)); X = Z + rng.normal(size=(16, 10))
    >>> res = fisher_ci(X, Z, level="system")
    >>> res.confidence_interval.low < res.statistic < res.confidence_interval.high
    True
    """
    check_level(level)
    check_coefficient(coefficient, FISHER_COEFFICIENTS)
    check_confidence_level(confidence_level)
    X, Z = check_matrices(nan_policy, level=level, min_size=1, X=X, Z=Z)
    r = float(level_corr(X, Z, level, coefficient, _mask(X)))
    n = effective_n(X, level=level)
    warn_if_nan(r, f"the {level}-level {coefficient} correlation")
    if n <= (4 if coefficient == "kendall" else 3):
        warn_degenerate(f"Fisher interval is NaN: it needs n > {4 if coefficient == 'kendall' else 3}, "
                        f"and n = {n} at {level} level")
    low, high = fisher_interval(r, n, coefficient, confidence_level)
    return FisherResult(r, ConfidenceInterval(low, high), n)


def fisher_interval(r, n, coefficient: str, confidence_level: float):
    """Vectorized over r (and n)."""
    r = np.asarray(r, dtype=float)
    if coefficient == "pearson":
        b, c = 3, np.ones_like(r)
    elif coefficient == "spearman":
        b, c = 3, np.sqrt(1 + r**2 / 2)
    else:
        b, c = 4, np.full_like(r, math.sqrt(0.437))
    n = np.asarray(n, dtype=float)
    q = special.ndtri(1 - (1 - confidence_level) / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.arctanh(r)
        half = q * c / np.sqrt(n - b)
        low = np.where(n > b, np.tanh(z - half), np.nan)
        high = np.where(n > b, np.tanh(z + half), np.nan)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high
