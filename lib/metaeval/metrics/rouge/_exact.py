"""Private: ROUGE-1.5.5's arithmetic, reproduced bit for bit: the C library's pow, left-to-right sums,
Perl's first-best rule and its ``%7.5f`` rounding.

Every floating-point value that feeds a comparison, a tie or the 5-decimal rounding is computed with
the operations and in the order of ROUGE-1.5.5.pl: k^w comes from the C library's ``pow`` (a table
built with ``math.pow``, never numpy's vectorized power, whose SIMD versions differ by an ulp on some
CPUs), sums are taken left to right, and ``c + f(k+1) - f(k)`` is evaluated as Perl does.
"""

from __future__ import annotations

import itertools
import math

import numba
import numpy as np


@numba.njit(cache=True)
def _segment_sums(values, starts, ends):  # pragma: no cover - compiled
    """Left-to-right sums of value segments, in the order the Perl script adds them."""
    out = np.zeros(starts.shape[0], np.float64)
    for i in range(starts.shape[0]):
        s = 0.0
        for k in range(starts[i], ends[i]):
            s += values[k]
        out[i] = s
    return out


@numba.njit(cache=True)
def _first_best(keys, starts, ends):  # pragma: no cover - compiled
    """Index of the first maximum of each segment, as Perl's ``$score > $best`` with best starting at -1
    (NaN keys never win); -1 for an empty segment or one with only NaN."""
    out = np.full(starts.shape[0], -1, np.int64)
    for i in range(starts.shape[0]):
        best = -1.0
        for k in range(starts[i], ends[i]):
            if keys[k] > best:
                best = keys[k]
                out[i] = k
    return out


def _libc_pow(x: np.ndarray, y: float) -> np.ndarray:
    """``x ** y`` elementwise with the C library's ``pow`` (``math.pow``), as Perl's ``**`` computes it.

    numpy's vectorized power can differ from it by an ulp (its SIMD paths depend on the CPU), enough to
    break a tie or move a value across a rounding boundary."""
    flat = np.asarray(x, dtype=float).ravel()
    out = np.fromiter(map(math.pow, flat.tolist(), itertools.repeat(float(y))), float, flat.size)
    return out.reshape(np.shape(x))


def _pow_table(n: int, w: float) -> np.ndarray:
    """k^w for k = 0..n with the C library's pow."""
    return np.array([math.pow(k, w) for k in range(n + 1)], dtype=float)


_SPLIT = 134217729.0  # 2^27 + 1, Dekker's splitting constant
_ROUND_LIMIT = 1e9  # below it, x * 1e5 < 2^47 and the exact rounding below is valid


def _round5(x) -> np.ndarray:
    """Round like Perl's ``sprintf("%7.5f")`` and Python's ``float("%.5f" % x)``: the exact binary value
    rounded to 5 decimals, exact ties to even, then the nearest double.

    Vectorized: the product ``|x| * 1e5`` is split into its rounded value p and its exact error e (Dekker's
    two-product; 1e5 has 17 significant bits, so the partial products are exact); the sign of
    ``(p - floor(p) - 0.5) + e`` then decides the rounding exactly, and ``n / 1e5`` (a correctly rounded
    division of exact integers) is the double that ``float()`` of the decimal string gives. Values
    outside ``[-1e9, 1e9]`` (never a ROUGE score) take the string path.
    """
    x = np.asarray(x, dtype=float)
    a = np.abs(x)
    with np.errstate(invalid="ignore"):
        p = a * 1e5
        c = _SPLIT * a
        hi = c - (c - a)
        lo = a - hi
        e = (hi * 1e5 - p) + lo * 1e5
        k = np.floor(p)
        s = ((p - k) - 0.5) + e
        up = (s > 0) | ((s == 0) & (np.fmod(k, 2) == 1))
        out = np.copysign((k + up) / 1e5, x)
    odd = ~(a <= _ROUND_LIMIT)  # NaN, inf and huge values
    if odd.any():
        out[odd] = [v if math.isnan(v) else float(f"{v:.5f}") for v in x[odd].tolist()]
    return out

