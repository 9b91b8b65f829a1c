"""Private: the one copy of each resampling kernel and rule that :mod:`~metaeval.stats.resampling`,
:mod:`~metaeval.stats.significance`, :mod:`~metaeval.stats.planning` and :mod:`~metaeval.stats.shared_draws`
share, so that a fix reaches every test, CI and power simulation: the tail rule (:data:`TAIL`, numba ufuncs as
scipy's ``permutation_test`` writes it) and the p-values on it; the random draws (bootstrap indices, draw counts,
permutation coins); exact constancy, standardization, Pearson and Spearman, rank snapping; Kendall's tau from its
pair counts (:func:`tau_b`, :func:`tau_c`) and the O(n log n) counts of long vectors; Perm-Both's Pearson null at
system and summary level.

Compiled kernels add in their natural order (not numpy's pairwise order): their results agree with the numpy
formulas to rounding, which the tests check with ``assert_allclose`` at a stated tolerance. Nothing here validates
arguments: the public functions do.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from scipy import stats

from metaeval._warnings import warn_degenerate


# ----------------------------------------------------------------------------------------------------
# The tail rule, once. Each closure says whether a resampled statistic ``s`` is at least as extreme as the
# observed ``o``, within ``g``: statistics equal to the observed one up to rounding (the same numbers summed
# in another order) must count as "as extreme". numba ufuncs: numpy calls them on arrays, the compiled
# kernels on scalars, so both use the same rule.


@numba.vectorize(["boolean(float64, float64, float64)"], cache=True)
def greater(s, o, g):  # pragma: no cover - compiled
    return s >= o - g


@numba.vectorize(["boolean(float64, float64, float64)"], cache=True)
def less(s, o, g):  # pragma: no cover - compiled
    return s <= o + g


@numba.vectorize(["boolean(float64, float64, float64)"], cache=True)
def two_sided(s, o, g):  # pragma: no cover - compiled
    return abs(s) >= abs(o) - g


#: alternative -> closure ``(statistic, observed, tolerance) -> at least as extreme``
TAIL = {"greater": greater, "less": less, "two-sided": two_sided}
#: the integer a compiled kernel receives for each alternative (see :func:`_tail_hit`)
TAIL_CODES = {"two-sided": 0, "greater": 1, "less": 2}

#: the relative tolerance of "equal up to rounding" (as scipy's ``permutation_test``: 100 ulps of the observed)
RELATIVE_TOLERANCE = np.finfo(float).eps * 100


@numba.njit(cache=True, inline="always")
def _tail_hit(code, s, o, g):  # pragma: no cover - compiled
    """:data:`TAIL` by its :data:`TAIL_CODES` number, inside compiled kernels."""
    if code == 1:
        return greater(s, o, g)
    if code == 2:
        return less(s, o, g)
    return two_sided(s, o, g)


def tail_hits(null: np.ndarray, observed, alternative: str, tolerance=None) -> np.ndarray:
    """Where ``null`` is at least as extreme as ``observed`` (broadcast); ``tolerance`` defaults to 100 ulps of
    the observed value.

    Examples
    --------
    >>> tail_hits(np.array([-0.3, 0.1, 0.2, 0.5]), 0.2, "greater").tolist()
    [False, False, True, True]
    >>> tail_hits(np.array([-0.3, 0.1, 0.2, 0.5]), 0.2, "two-sided").tolist()
    [True, False, True, True]
    """
    if tolerance is None:
        tolerance = np.abs(observed) * RELATIVE_TOLERANCE
    return TAIL[alternative](null, observed, tolerance)


def tail_count(samples: np.ndarray, observed: float, alternative: str) -> int:
    """How many ``samples`` are at least as extreme as ``observed`` (:func:`tail_hits`)."""
    return int(np.count_nonzero(tail_hits(samples, observed, alternative)))


def warn_dropped(n_dropped: int, total: int, what: str, result: str, stacklevel: int = 4) -> None:
    """Warn (DegenerateResultWarning) that ``n_dropped`` of ``total`` resampled statistics were undefined."""
    if n_dropped:
        warn_degenerate(
            f"{n_dropped} of {total} {what} were dropped because their correlation is undefined (constant scores "
            f"in the resample); {result} rests on the other {total - n_dropped}"
            + (": it is NaN" if n_dropped == total else ""),
            stacklevel=stacklevel,
        )


def monte_carlo_pvalue(count, total):
    """The p-value rule of a Monte-Carlo permutation test, once: ``(count + 1) / (total + 1)`` for ``count`` of
    ``total`` random permutations at least as extreme as the observed statistic (the observed arrangement counts
    as one of them, so the test's size is at most alpha for any number of permutations; Phipson & Smyth 2010,
    as ``scipy.stats.permutation_test``). Vectorized: counts and totals may be arrays.

    Examples
    --------
    >>> monte_carlo_pvalue(0, 999), monte_carlo_pvalue(np.array([4, 9]), 9).tolist()
    (0.001, [0.5, 1.0])
    """
    return (count + 1) / (total + 1)


def permutation_pvalue(null: np.ndarray, observed: float, alternative: str, dropped: int, total: int) -> float:
    """(count + 1) / (P + 1) over the valid permutations; NaN, with a warning, when nothing can be counted.

    Examples
    --------
    >>> permutation_pvalue(np.array([0.1, -0.2, 0.4]), 0.3, "greater", 0, 3)
    0.5
    """
    if np.isnan(observed):
        warn_degenerate("the observed difference of correlations is NaN (a correlation is undefined on the data); "
                        "the p-value is NaN")
        return np.nan
    warn_dropped(dropped, total, "permutations", "the p-value")
    if null.size == 0:
        # (0 + 1) / (0 + 1) = 1.0 would look like a real, non-significant result
        return np.nan
    return monte_carlo_pvalue(tail_count(null, observed, alternative), null.size)


def bootstrap_pvalue(deltas: np.ndarray, observed: float, alternative: str) -> float:
    """The share of bootstrap differences, centred at the observed one (the null), at least as extreme as it.

    Examples
    --------
    >>> bootstrap_pvalue(np.array([0.1, 0.3, 0.5, 0.7]), 0.4, "greater")   # centred: -0.3, -0.1, 0.1, 0.3
    0.0
    """
    if deltas.size == 0:
        return np.nan
    # Shifting by the observed delta centres the distribution on the null.
    return tail_count(deltas - observed, observed, alternative) / deltas.size


def t_pvalue(t, df, alternative: str):
    """p-value of a t statistic with ``df`` degrees of freedom (vectorized), as ``scipy.stats.ttest_rel``.

    Examples
    --------
    >>> round(float(t_pvalue(2.0, 10, "two-sided")), 4), round(float(t_pvalue(2.0, 10, "greater")), 4)
    (0.0734, 0.0367)
    """
    if alternative == "greater":
        return stats.t.sf(t, df)
    if alternative == "less":
        return stats.t.cdf(t, df)
    return 2 * stats.t.sf(np.abs(t), df)


# ----------------------------------------------------------------------------------------------------
# Random draws


def bootstrap_indices(rng: np.random.Generator, lead: tuple[int, ...], n_systems: int, n_inputs: int,
                      resample: str) -> tuple[np.ndarray, np.ndarray]:
    """Boot-Both / -Systems / -Inputs row and column indices, shapes ``lead + (N,)`` and ``lead + (M,)``.

    Rows are drawn before columns, always, each from ``range(N)`` / ``range(M)`` with replacement, so adding
    a resampled dimension never changes the other's draws; a dimension that is not resampled gets the
    identity (a read-only broadcast).

    Examples
    --------
    >>> rows, cols = bootstrap_indices(np.random.default_rng(0), (2,), 3, 4, "systems")
    >>> rows.tolist(), cols.tolist()
    ([[2, 1, 1], [0, 0, 0]], [[0, 1, 2, 3], [0, 1, 2, 3]])
    """
    N, M = n_systems, n_inputs
    rows = (rng.integers(0, N, size=lead + (N,)) if resample in ("both", "systems")
            else np.broadcast_to(np.arange(N), lead + (N,)))
    cols = (rng.integers(0, M, size=lead + (M,)) if resample in ("both", "inputs")
            else np.broadcast_to(np.arange(M), lead + (M,)))
    return rows, cols


def draw_counts(idx: np.ndarray, n: int) -> np.ndarray:
    """Multiplicities of 0..n-1 in each row of ``idx`` (any leading shape): array (..., n) of floats.

    Examples
    --------
    >>> draw_counts(np.array([[0, 0, 2], [1, 2, 2]]), 4)
    array([[2., 0., 1., 0.],
           [0., 1., 2., 0.]])
    """
    lead = idx.shape[:-1]
    rows = int(np.prod(lead))
    flat = idx.reshape(rows, idx.shape[-1]) + n * np.arange(rows)[:, None]
    return np.bincount(flat.ravel(), minlength=rows * n).reshape(*lead, n).astype(float)


def fair_bits(rng: np.random.Generator, shape) -> np.ndarray:
    """Independent fair coins as 0/1 uint8, eight per random byte (15x faster than comparing floats).

    Examples
    --------
    >>> fair_bits(np.random.default_rng(0), (2, 5)).tolist()
    [[0, 1, 0, 1, 1], [1, 1, 1, 1, 0]]
    """
    n = int(np.prod(shape))
    return np.unpackbits(rng.integers(0, 256, size=(n + 7) // 8, dtype=np.uint8))[:n].reshape(shape)


class PackedCoins:
    """Perm-Both's fair coins (T, B, N, M) kept packed, eight per random byte, as :func:`fair_bits` draws them (the
    same random stream; ``np.unpackbits`` order): trial t's coin (b, n, m) is bit ``first[t] + (b N + n) M + m`` of
    ``bits``. :meth:`merge` puts consecutive chunks' coins one after the other (a chunk may end within a byte)."""

    def __init__(self, bits: np.ndarray, first: np.ndarray, shape: tuple[int, ...]):
        self.bits, self.first, self.shape = bits, first, shape

    @classmethod
    def draw(cls, rng: np.random.Generator, shape: tuple[int, int, int, int]) -> PackedCoins:
        T, B, N, M = shape
        bits = rng.integers(0, 256, size=(T * B * N * M + 7) // 8, dtype=np.uint8)
        return cls(bits, np.arange(T, dtype=np.int64) * (B * N * M), shape)

    @classmethod
    def merge(cls, parts: list[PackedCoins]) -> PackedCoins:
        starts = np.cumsum([0] + [8 * p.bits.size for p in parts[:-1]])
        first = np.concatenate([s + p.first for s, p in zip(starts, parts)])
        return cls(np.concatenate([p.bits for p in parts]), first, (len(first),) + parts[0].shape[1:])

    def unpacked(self) -> np.ndarray:
        T, B, N, M = self.shape
        cell = (np.arange(B)[:, None, None] * N + np.arange(N)[:, None]) * M + np.arange(M)
        i = self.first[:, None, None, None] + cell
        return ((self.bits[i >> 3] >> (7 - (i & 7))) & 1) > 0


def coins(rng: np.random.Generator, lead: tuple[int, ...], n_systems: int, n_inputs: int, method: str,
          packed: bool = False):
    """Swap indicators ``lead + (N, M)`` for Perm-Both (a coin per cell), -Systems (per row), -Inputs (per
    column) and rows-xor-columns; drawn up front so that chunking cannot change them. ``packed`` (Perm-Both,
    ``lead`` = (T, B)) returns the same coins as :class:`PackedCoins`."""
    N, M = n_systems, n_inputs
    if method == "both":
        # the same random bytes either way; packed only where the summary-level kernel reads them
        if packed:
            T, B = lead  # packed coins are the planner's (trials, permutations)
            return PackedCoins.draw(rng, (T, B, N, M))
        return fair_bits(rng, lead + (N, M)).astype(bool)
    if method == "systems":
        return np.broadcast_to(fair_bits(rng, lead + (N, 1)).astype(bool), lead + (N, M))
    if method == "inputs":
        return np.broadcast_to(fair_bits(rng, lead + (1, M)).astype(bool), lead + (N, M))
    row = fair_bits(rng, lead + (N, 1)).astype(bool)
    col = fair_bits(rng, lead + (1, M)).astype(bool)
    return row ^ col


# ----------------------------------------------------------------------------------------------------
# Exact constancy, standardization, Pearson


def constant(x: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
    """True where all (valid) entries along the last axis are exactly equal, or fewer than 2 are valid.

    Constancy is decided on the values themselves, as scipy does, never from a centred sum of squares:
    centring equal values that are not exactly representable (0.1, 0.7) leaves ~1e-17 of noise, which
    would turn an undefined correlation into a meaningless one.

    Examples
    --------
    >>> constant(np.array([[0.1, 0.1, 0.1], [0.1, 0.2, 0.1]])).tolist()
    [True, False]
    """
    if x.shape[-1] == 0:
        return np.ones(x.shape[:-1], dtype=bool)
    if w is None:
        return (x == x[..., :1]).all(axis=-1)
    valid = w > 0
    high = np.where(valid, x, -np.inf).max(axis=-1)
    low = np.where(valid, x, np.inf).min(axis=-1)
    return (high == low) | (np.count_nonzero(valid, axis=-1) < 2)


def standardize(X: np.ndarray) -> np.ndarray:
    """One z-score per matrix (the last two axes; population sd, NaN cells ignored), as Alg. 2 does before
    swapping cells; NaN for a matrix whose (non-NaN) values are all equal, decided exactly (the sd of equal
    values such as 0.1 is ~1e-17, not 0).

    Examples
    --------
    >>> standardize(np.array([[1., 2], [3, 4]])).round(3).tolist()
    [[-1.342, -0.447], [0.447, 1.342]]
    >>> bool(np.isnan(standardize(np.full((2, 2), 0.1))).all())
    True
    """
    axes = (-2, -1)
    const = np.nanmax(X, axis=axes, keepdims=True) == np.nanmin(X, axis=axes, keepdims=True)
    mean = np.nanmean(X, axis=axes, keepdims=True)
    sd = np.nanstd(X, axis=axes, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(const, np.nan, (X - mean) / np.where(const, 1.0, sd))


def snap(x: np.ndarray, axis: int | None = None) -> np.ndarray:
    """Round to ~11 significant digits of the array's scale, so that values that are mathematically equal
    but differ in the last bits (different summation orders of the same numbers) tie when ranked.

    ``axis`` None: one scale for the whole array; an axis: one scale per vector along it, so that each
    vector of a batch (one resample) is rounded the same way whatever else is in the batch (a batch-wide
    scale made resampled statistics depend on the batch size).

    Examples
    --------
    >>> a = np.array([0.1 + 0.2, 0.3, 1.0])
    >>> bool(a[0] == a[1]), bool(snap(a)[0] == snap(a)[1])
    (False, True)
    >>> b = np.array([[0.1 + 0.2, 0.3], [300.0 + 1e-9, 100.0]])
    >>> bool(snap(b, axis=-1)[0, 0] == snap(b[:1], axis=-1)[0, 0])   # row 0 does not see row 1's scale
    True
    """
    if axis is not None:
        if x.size == 0:
            return x
        with np.errstate(invalid="ignore", divide="ignore"):
            scale = np.nanmax(np.abs(x), axis=axis, keepdims=True) if x.shape[axis] else np.zeros(x.shape)
            ok = np.isfinite(scale) & (scale > 0)
            quantum = 10.0 ** (np.floor(np.log10(np.where(ok, scale, 1.0))) - 11)
            return np.where(ok, np.round(x / quantum) * quantum, x)
    whole = float(np.nanmax(np.abs(x))) if x.size else 0.0
    if not np.isfinite(whole) or whole == 0:
        return x
    step = 10.0 ** (math.floor(math.log10(whole)) - 11)
    return np.round(x / step) * step


def pearson(x: np.ndarray, z: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """Pearson r along the last axis (any batch shape); ``w`` a 0/1 validity mask; NaN where undefined.

    Examples
    --------
    >>> pearson(np.array([[1., 2, 3], [1, 1, 1]]), np.array([1., 2, 4]), None).round(4).tolist()
    [0.982, nan]
    """
    if w is None:
        xc = x - x.mean(axis=-1, keepdims=True)
        zc = z - z.mean(axis=-1, keepdims=True)
    else:
        n = w.sum(axis=-1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            xc = (x - (w * x).sum(axis=-1, keepdims=True) / n) * w
            zc = (z - (w * z).sum(axis=-1, keepdims=True) / n) * w
    sxz = (xc * zc).sum(axis=-1)
    sxx = (xc * xc).sum(axis=-1)
    szz = (zc * zc).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = sxz / np.sqrt(sxx * szz)
    # a constant vector has zero variance: the correlation is undefined, as scipy says (decided exactly)
    defined = ~constant(x, w) & ~constant(z, w) & (sxx > 0) & (szz > 0)
    r = np.where(defined, r, np.nan)
    return np.clip(r, -1.0, 1.0)


def spearman(x: np.ndarray, z: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """Spearman's rho along the last axis: :func:`pearson` of the average ranks (of the valid entries, ``w``)."""
    return pearson(_ranks(x, w), _ranks(z, w), w)


def _ranks(x: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    if w is None:
        return stats.rankdata(x, axis=-1)
    r = stats.rankdata(np.where(w > 0, x, np.nan), axis=-1, nan_policy="omit")
    return np.where(w > 0, r, 0.0)


@numba.njit(cache=True, error_model="numpy")
def pearson_vector(x, z):  # pragma: no cover - compiled
    """:func:`pearson` of two vectors, for compiled kernels: the same formula (centred sums, added in order),
    NaN where x or z is constant (decided exactly on the values) or a variance is not positive, clipped."""
    n = x.shape[0]
    mx = 0.0
    mz = 0.0
    varies = False
    z_varies = False
    for i in range(n):
        mx += x[i]
        mz += z[i]
        varies = varies or x[i] != x[0]
        z_varies = z_varies or z[i] != z[0]
    mx /= n
    mz /= n
    sxz = 0.0
    sxx = 0.0
    szz = 0.0
    for i in range(n):
        a = x[i] - mx
        c = z[i] - mz
        sxz += a * c
        sxx += a * a
        szz += c * c
    if not (varies and z_varies and sxx > 0 and szz > 0):
        return np.nan
    r = sxz / np.sqrt(sxx * szz)
    return 1.0 if r > 1.0 else (-1.0 if r < -1.0 else r)


@numba.njit(cache=True, error_model="numpy")
def _pearson_each_row(x, z, out):  # pragma: no cover - compiled
    for i in range(x.shape[0]):
        out[i] = pearson_vector(x[i], z[i] if z.shape[0] > 1 else z[0])


def pearson_rows(xs: np.ndarray, zs: np.ndarray) -> np.ndarray:
    """:func:`pearson_vector` along the last axis of ``xs`` (..., n) with ``zs`` (..., n) or (n,): the compiled
    Pearson kernel for many short vectors (a resampling kernel's system scores)."""
    x = np.ascontiguousarray(xs, dtype=float).reshape(-1, xs.shape[-1])
    z = (np.ascontiguousarray(np.broadcast_to(zs, xs.shape), dtype=float).reshape(-1, xs.shape[-1])
         if zs.ndim > 1 else np.ascontiguousarray(zs, dtype=float)[None])
    out = np.empty(x.shape[0])
    _pearson_each_row(x, z, out)
    return out.reshape(xs.shape[:-1])


@numba.njit(cache=True, error_model="numpy")
def pearson_row(n, sx, sz, sxx, szz, sxz, defined, weights, r, weak):  # pragma: no cover - compiled
    """Per-input r from sums over ``n`` pairs for one resample: fills ``r`` (NaN where not ``defined`` or a
    variance is not positive) and ``weak`` (a variance below 1e-6 of the mean square: the caller recomputes r from
    the values); returns the mean of the defined r with multiplicities ``weights`` (NaN if none). Branch-free
    loops (the clip as two selects, + 0.0 for an undefined r), which LLVM vectorizes: the plain loops' floats."""
    M = sx.shape[0]
    nf = float(n)
    for m in range(M):
        vx = nf * sxx[m] - sx[m] * sx[m]
        vz = nf * szz[m] - sz[m] * sz[m]
        rm = (nf * sxz[m] - sx[m] * sz[m]) / np.sqrt(vx * vz)
        rm = 1.0 if rm > 1.0 else rm
        rm = -1.0 if rm < -1.0 else rm
        d = defined[m]
        r[m] = rm if d and vx > 0 and vz > 0 else np.nan
        weak[m] = d and ((vx <= 1e-6 * nf * sxx[m]) or (vz <= 1e-6 * nf * szz[m]))
    total = 0.0
    count = 0.0
    for m in range(M):
        x = r[m]
        ok = x == x
        total += weights[m] * x if ok else 0.0
        count += weights[m] if ok else 0.0
    return total / count if count > 0 else np.nan


# ----------------------------------------------------------------------------------------------------
# Kendall's tau: the formula from the pair counts (once), and the counts of one long vector in O(n log n)


@numba.njit(cache=True, inline="always")
def sign(a, b):  # pragma: no cover - compiled
    """sign(a - b) as an integer (0 for a tie, and for NaN, which compares false both ways)."""
    return np.int64(a > b) - np.int64(a < b)


@numba.vectorize(["float64(int64, int64, int64)"], cache=True)
def tau_b(s, nx, nz):  # pragma: no cover - compiled
    """Kendall's tau-b from S = concordant - discordant pairs and the pairs untied in x (``nx``) and in z
    (``nz``): ``S / sqrt(nx) / sqrt(nz)`` clipped to [-1, 1], as ``scipy.stats.kendalltau`` divides; NaN where
    either variable is constant (no untied pair). A ufunc: numpy calls it on arrays of counts, the compiled
    resampling kernels on scalars, so every path gives the same floats.

    Examples
    --------
    >>> tau_b(np.array([4, 0]), np.array([4, 0]), np.array([4, 3])).tolist()
    [1.0, nan]
    """
    # formed and clipped on every path before NaN is chosen (LLVM evaluates both sides of a branch in
    # vectorized loops): a zero denominator, or a clip of the NaN, would raise numpy's "invalid value" warning
    t = min(1.0, max(-1.0, s / np.sqrt(np.float64(max(nx, 1))) / np.sqrt(np.float64(max(nz, 1)))))
    return t if nx > 0 and nz > 0 else np.nan


@numba.vectorize(["float64(int64, int64, int64)"], cache=True)
def tau_c(s, n, m):  # pragma: no cover - compiled
    """Stuart's tau-c from S, the number of (valid) entries ``n`` and the smaller number of distinct values
    ``m``: ``2 S / (n^2 (m - 1) / m)`` clipped to [-1, 1], as ``scipy.stats.kendalltau(variant="c")``; NaN
    where m < 2 (a constant variable).

    Examples
    --------
    >>> tau_c(np.array([3, 3]), np.array([3, 3]), np.array([3, 1])).tolist()
    [1.0, nan]
    """
    nf = np.float64(max(n, 1))
    mm = max(m, 2)  # never a zero denominator, as in tau_b
    t = min(1.0, max(-1.0, 2.0 * s / (nf * nf * (mm - 1) / mm)))
    return t if m > 1 else np.nan


#: the most memory the summary-level Kendall kernels' per-pair tables may take (bytes); beyond it (thousands of
#: systems) the resampled matrices go through the batched path, whose Kendall sorts (O(n log n), O(n) memory)
PAIR_TABLE_BUDGET = 2**28


def pair_tables_fit(n_systems: int, n_inputs: int, per_pair: int = 24) -> bool:
    """Whether tables of ``per_pair`` bytes for every input and pair of systems fit :data:`PAIR_TABLE_BUDGET`."""
    return n_inputs * n_systems * (n_systems - 1) // 2 * per_pair <= PAIR_TABLE_BUDGET


@numba.njit(cache=True)
def _dense_ranks(v):  # pragma: no cover - compiled
    """1-based dense ranks of a sorted vector (equal values share a rank)."""
    r = np.empty(v.shape[0], np.int64)
    k = 0
    for i in range(v.shape[0]):
        if i == 0 or v[i] != v[i - 1]:
            k += 1
        r[i] = k
    return r


@numba.njit(cache=True)
def _tied_pairs(ranks, top):  # pragma: no cover - compiled
    """Pairs tied in a variable given its dense ranks 1..top (sum of c (c - 1) / 2 over the tie groups)."""
    count = np.zeros(top + 1, np.int64)
    for r in ranks:
        count[r] += 1
    ties = 0
    for c in count:
        ties += c * (c - 1) // 2
    return ties


@numba.njit(cache=True)
def kendall_counts(x, z):  # pragma: no cover - compiled
    """The counts behind Kendall's tau of two vectors of equal length n, in O(n log n) time and O(n) memory:
    (S, nx, nz, dx, dz), S = concordant - discordant pairs, nx / nz the pairs not tied in x / z, dx / dz the
    numbers of distinct values. The same integers as counting all n (n - 1) / 2 pairs.

    scipy's algorithm (``scipy.stats.kendalltau``, after Knight 1966): sort by z, then stably by x, replace
    both by dense ranks; the discordant pairs are the pairs with a smaller x rank and a larger z rank,
    counted with a Fenwick tree over the z ranks in one pass; the pairs tied in x, in z and in both come
    from the group sizes. Entries must not be NaN (the caller decides what NaN means)."""
    n = x.shape[0]
    order = np.argsort(z, kind="mergesort")
    xs = x[order]
    zr = _dense_ranks(z[order])
    order = np.argsort(xs, kind="mergesort")  # stable: within a tie in x, z stays sorted
    xr = _dense_ranks(xs[order])
    zr = zr[order]
    top_x = xr[-1] if n else 0
    top_z = 0
    for r in zr:
        top_z = max(top_z, r)
    # discordant pairs: for each element, the earlier elements with a strictly smaller x rank and a strictly
    # larger z rank = (all earlier with smaller x) - (those with z rank <= its own), a Fenwick tree holding
    # the z ranks of the elements of the finished x groups
    tree = np.zeros(top_z + 1, np.int64)
    dis = 0
    i = 0
    k = 0
    while i < n:
        while k < n and xr[k] == xr[i]:
            dis += i
            j = zr[k]
            while j > 0:
                dis -= tree[j]
                j &= j - 1
            k += 1
        while i < k:
            j = zr[i]
            while j <= top_z:
                tree[j] += 1
                j += j & -j
            i += 1
    # pairs tied in both: runs of equal (x, z) ranks, which are adjacent after the two sorts
    both = 0
    run = 1
    for i in range(1, n + 1):
        if i < n and xr[i] == xr[i - 1] and zr[i] == zr[i - 1]:
            run += 1
        else:
            both += run * (run - 1) // 2
            run = 1
    tot = n * (n - 1) // 2
    tx = _tied_pairs(xr, top_x)
    tz = _tied_pairs(zr, top_z)
    s = tot - tx - tz + both - 2 * dis
    return s, tot - tx, tot - tz, top_x, top_z


@numba.njit(cache=True)
def kendall_counts_rows(x, z, valid):  # pragma: no cover - compiled
    """:func:`kendall_counts` of every row of x, z (R, n) over its ``valid`` entries (bool (R, n)): int64
    (5, R) of S, nx, nz, the number of valid entries and the smaller number of distinct values. A row with a
    valid NaN gets zeros (tau undefined: the caller returns NaN, as scipy's default ``nan_policy``)."""
    R, n = x.shape
    out = np.zeros((5, R), np.int64)
    xv = np.empty(n)
    zv = np.empty(n)
    for r in range(R):
        k = 0
        bad = False
        for i in range(n):
            if valid[r, i]:
                if x[r, i] != x[r, i] or z[r, i] != z[r, i]:
                    bad = True
                xv[k] = x[r, i]
                zv[k] = z[r, i]
                k += 1
        if bad:
            continue
        s, nx, nz, dx, dz = kendall_counts(xv[:k], zv[:k])
        out[0, r] = s
        out[1, r] = nx
        out[2, r] = nz
        out[3, r] = k
        out[4, r] = min(dx, dz)
    return out


# ----------------------------------------------------------------------------------------------------
# Perm-Both Pearson: the null distributions of r(X', Z) - r(Y', Z) from the random coins, at system level
# (:func:`perm_system_pearson`, :func:`perm_system_null`) and summary level (:func:`perm_summary_pearson`). Sums are
# added in their natural order; the tests compare each kernel with the numpy formula on the permuted matrices.


@numba.njit(cache=True, nogil=True)
def _coin_table():  # pragma: no cover - compiled
    """byte -> its 8 coins as the 8 bytes of one word (little-endian: the first coin, np.unpackbits' high bit, in
    the lowest byte), so that a byte of packed coins becomes 8 coin bytes in one look-up."""
    table = np.zeros(256, np.uint64)
    for v in range(256):
        for j in range(8):
            table[v] |= np.uint64((v >> (7 - j)) & 1) << np.uint64(8 * j)
    return table


@numba.njit(cache=True, nogil=True)
def _unpack_permutation(bits, start, N, M, table, C):  # pragma: no cover - compiled
    """One permutation's coins into ``C`` (N, >= 8 ceil(M / 8) bytes; a row per system): coin (n, m) is bit
    ``start + n M + m`` of ``bits`` (np.unpackbits order), eight at a time through ``table`` (:func:`_coin_table`)."""
    words = M // 8
    C64 = C.view(np.uint64)
    for n in range(N):
        i = start + n * M
        for g in range(words):
            k = i >> 3
            shift = i & 7
            if shift:  # the word's coins straddle two bytes
                C64[n, g] = table[((np.int64(bits[k]) << shift) | (bits[k + 1] >> (8 - shift))) & 255]
            else:
                C64[n, g] = table[bits[k]]
            i += 8
        for m in range(8 * words, M):
            C[n, m] = (bits[i >> 3] >> (7 - (i & 7))) & 1
            i += 1


@numba.njit(cache=True, nogil=True, error_model="numpy")
def perm_summary_null(bits, first, B, D1, D2, D3, base, Xs, Ys, z_ok):  # pragma: no cover - compiled
    """Perm-Both's null at summary level (Pearson) for every trial and permutation: the mean over inputs of the
    defined r(X', Z) minus that of r(Y', Z), (T, B), and the permutations with a cell whose r the caller must
    recompute from the values (``weak``, (T, B): a variance below 1e-6 of its mean square), without the permuted
    matrices (T, B, N, M). :func:`perm_summary_pearson` prepares its arguments.

    D1..D3 (T, N, M) are the changes of the centred sums when a cell is swapped (Y - X, Y^2 - X^2, (Y - X) Z),
    ``base`` (8, T, M) the unpermuted sums sx, sxx, sxz, sy, syy, syz, sz, szz, ``z_ok`` (T, M) where Z's column
    is not constant. Each permutation's coins are unpacked into (N, M) bytes through a table, the swapped cells'
    changes added over n in order, r by :func:`pearson_row`'s formula; a permuted column can be constant only if
    one value is in every system's pair (X, Y) of that input, and only such columns are checked on the values."""
    T, N, M = D1.shape
    null = np.empty((T, B))
    weak = np.zeros((T, B), np.bool_)
    table = _coin_table()
    C = np.zeros((N, 8 * (M // 8) + 8), np.uint8)  # one permutation's coins, a row per system
    sums = np.zeros((3, M))
    x_def = np.empty(M, np.bool_)
    y_def = np.empty(M, np.bool_)
    may_be_constant = np.empty(M, np.bool_)
    vz = np.empty(M)
    z_weak = np.empty(M, np.bool_)
    mean = np.empty(2)
    nf = float(N)
    s1, s2, s3 = sums[0], sums[1], sums[2]
    for t in range(T):
        X, Y, A1, A2, A3 = Xs[t], Ys[t], D1[t], D2[t], D3[t]
        sz, szz = base[6, t], base[7, t]
        for m in range(M):
            vz[m] = nf * szz[m] - sz[m] * sz[m]
            z_weak[m] = vz[m] <= 1e-6 * nf * szz[m]
        any_constant = False
        for m in range(M):
            may_be_constant[m] = False
            if z_ok[t, m]:
                for v in (X[0, m], Y[0, m]):
                    every = True
                    for n in range(1, N):
                        if X[n, m] != v and Y[n, m] != v:
                            every = False
                            break
                    may_be_constant[m] = may_be_constant[m] or every
            any_constant = any_constant or may_be_constant[m]
        for b in range(B):
            _unpack_permutation(bits, first[t] + b * N * M, N, M, table, C)
            sums[:] = 0.0
            n = 0
            while n + 2 <= N:
                c0, c1 = C[n], C[n + 1]
                a0, a1, e0, e1, f0, f1 = A1[n], A1[n + 1], A2[n], A2[n + 1], A3[n], A3[n + 1]
                for m in range(M):
                    x0 = np.float64(c0[m])
                    x1 = np.float64(c1[m])
                    s1[m] = (s1[m] + x0 * a0[m]) + x1 * a1[m]
                    s2[m] = (s2[m] + x0 * e0[m]) + x1 * e1[m]
                    s3[m] = (s3[m] + x0 * f0[m]) + x1 * f1[m]
                n += 2
            if n < N:
                c0 = C[n]
                a0, e0, f0 = A1[n], A2[n], A3[n]
                for m in range(M):
                    x0 = np.float64(c0[m])
                    s1[m] += x0 * a0[m]
                    s2[m] += x0 * e0[m]
                    s3[m] += x0 * f0[m]
            if any_constant:
                for m in range(M):
                    x_def[m] = y_def[m] = z_ok[t, m]
                    if may_be_constant[m]:
                        x0 = Y[0, m] if C[0, m] else X[0, m]
                        y0 = X[0, m] if C[0, m] else Y[0, m]
                        x_const = y_const = True
                        for n in range(1, N):
                            xv, yv = (Y[n, m], X[n, m]) if C[n, m] else (X[n, m], Y[n, m])
                            x_const = x_const and xv == x0
                            y_const = y_const and yv == y0
                        x_def[m] = not x_const
                        y_def[m] = not y_const
            for side in range(2):
                # X' = X + the swapped cells' changes, Y' = Y - them (x + (-s) is x - s, to the bit)
                sign = 1.0 if side == 0 else -1.0
                b0, b1, b2 = base[3 * side, t], base[3 * side + 1, t], base[3 * side + 2, t]
                defined = (x_def if side == 0 else y_def) if any_constant else z_ok[t]
                count = 0
                total = 0.0
                w = False
                # the loads are not behind short-circuits (& and |, not and / or), so that the loop vectorizes
                for m in range(M):
                    sx = b0[m] + sign * s1[m]
                    sxx = b1[m] + sign * s2[m]
                    vx = nf * sxx - sx * sx
                    rm = (nf * (b2[m] + sign * s3[m]) - sx * sz[m]) / np.sqrt(vx * vz[m])
                    rm = 1.0 if rm > 1.0 else rm
                    rm = -1.0 if rm < -1.0 else rm
                    ok = defined[m] & (vx > 0) & (vz[m] > 0) & (rm == rm)
                    total += rm if ok else 0.0
                    count += ok
                    w |= defined[m] & ((vx <= 1e-6 * nf * sxx) | z_weak[m])
                weak[t, b] |= w
                mean[side] = total / count if count > 0 else np.nan
            null[t, b] = mean[0] - mean[1]
    return null, weak


#: permutations per block of :func:`perm_system_pearson`: their sums over the inputs vectorize across the block
#: (a single permutation's loop over a few inputs is short and spends its time entering and leaving)
PERM_BLOCK = 128


@numba.njit(cache=True, nogil=True, error_model="numpy")
def perm_system_pearson(coins_t, B, D, mean_x, mean_y, zs):  # pragma: no cover - compiled
    """Perm-Both's null at system level (Pearson), r(X*, Z) - r(Y*, Z) on every permutation (B,): the permuted
    system means are ``mean_x + shift`` and ``mean_y - shift``, shift = (coins . D) / M over the inputs (added in
    order, for a block of permutations side by side), r by :func:`pearson_vector`.

    ``coins_t`` (N, M, >= B) uint8 0/1, the coins of the first B permutations; ``D`` = Ys - Xs (N, M); ``mean_x``,
    ``mean_y``, ``zs`` (N,): the means over the inputs."""
    N, M = D.shape
    out = np.empty(B)
    acc = np.empty(PERM_BLOCK)
    shift = np.empty((PERM_BLOCK, N))
    xs, ys = np.empty(N), np.empty(N)
    for b0 in range(0, B, PERM_BLOCK):
        L = min(PERM_BLOCK, B - b0)
        for n in range(N):
            acc[:L] = 0.0
            for m in range(M):
                d = D[n, m]
                c = coins_t[n, m, b0 : b0 + L]
                for b in range(L):
                    acc[b] += np.float64(c[b]) * d
            for b in range(L):
                shift[b, n] = acc[b] / M
        for b in range(L):
            for n in range(N):
                xs[n] = mean_x[n] + shift[b, n]
                ys[n] = mean_y[n] - shift[b, n]
            out[b0 + b] = pearson_vector(xs, zs) - pearson_vector(ys, zs)
    return out


@numba.njit(cache=True, nogil=True, error_model="numpy")
def perm_system_null(bits, first, B, D, xm, ym, zm):  # pragma: no cover - compiled
    """Perm-Both's null at system level (Pearson) for every trial and permutation, (T, B), from the packed coins
    (as :func:`perm_summary_null` reads them): each trial's coins are unpacked into (N, M, B) bytes for
    :func:`perm_system_pearson`, a block of :data:`PERM_BLOCK` permutations at a time. ``xm``, ``ym``, ``zm``
    (T, N) are the means over the inputs."""
    T, N, M = D.shape
    null = np.empty((T, B))
    table = _coin_table()
    # TILE permutations' coins unpacked a row per system, then written into the block's layout a tile at a time: the
    # tile stays in L1 while it is transposed, and each write is TILE consecutive bytes
    TILE = 16
    C = np.zeros((TILE, N, 8 * (M // 8) + 8), np.uint8)
    block = np.empty((N, M, PERM_BLOCK), np.uint8)  # a block of permutations' coins, as perm_system_pearson reads them
    for t in range(T):
        for b0 in range(0, B, PERM_BLOCK):
            L = min(PERM_BLOCK, B - b0)
            for j0 in range(0, L, TILE):
                J = min(TILE, L - j0)
                for j in range(J):
                    _unpack_permutation(bits, first[t] + (b0 + j0 + j) * N * M, N, M, table, C[j])
                for n in range(N):
                    for m in range(M):
                        for j in range(J):
                            block[n, m, j0 + j] = C[j, n, m]
            null[t, b0 : b0 + L] = perm_system_pearson(block, L, D[t], xm[t], ym[t], zm[t])
    return null


def perm_summary_pearson(Xs: np.ndarray, Ys: np.ndarray, Z: np.ndarray, bits: np.ndarray, first: np.ndarray,
                         B: int) -> np.ndarray:
    """Perm-Both's null at summary level (Pearson), the one kernel of ``permutation_test``, ``pairwise_tests``, the
    planner and the power study's shared draws: mean r(X', Z) - mean r(Y', Z) over the inputs, (T, B), for T pairs
    (Xs, Ys, Z: (T, N, M)) and B permutations each, from packed coins (coin (b, n, m) of pair t is bit
    ``first[t] + (b N + n) M + m`` of ``bits``, np.unpackbits order; pairs may share coins) by
    :func:`perm_summary_null`. The permutations it flags are recomputed from the permuted values."""
    T, N, M = Ys.shape
    # one shift per column for both metrics: a permuted column mixes cells of X and Y
    centre = (Xs.mean(axis=-2, keepdims=True) + Ys.mean(axis=-2, keepdims=True)) / 2
    Xc, Yc = Xs - centre, Ys - centre
    Zc = Z - Z.mean(axis=-2, keepdims=True)
    sums = np.stack([a.sum(axis=-2) for a in (Xc, Xc * Xc, Xc * Zc, Yc, Yc * Yc, Yc * Zc, Zc, Zc * Zc)])
    c = np.ascontiguousarray
    null, weak = perm_summary_null(bits, first, B, c(Yc - Xc), c(Yc * Yc - Xc * Xc), c((Yc - Xc) * Zc), sums,
                                   c(Xs), c(Ys), c(~constant(np.swapaxes(Z, -1, -2))))
    if weak.any():  # rare: a nearly constant column
        t, b = np.nonzero(weak)
        i = first[t][:, None, None] + (b[:, None, None] * N + np.arange(N)[:, None]) * M + np.arange(M)
        swap = ((bits[i >> 3] >> (7 - (i & 7))) & 1) > 0
        means = []
        for one, other in ((Ys[t], Xs[t]), (Xs[t], Ys[t])):
            r = pearson(np.where(swap, one, other).swapaxes(1, 2), Z[t].swapaxes(1, 2), None)
            count = np.count_nonzero(~np.isnan(r), axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                means.append(np.where(count > 0, np.nansum(r, axis=1) / count, np.nan))
        null[t, b] = means[0] - means[1]
    return null
