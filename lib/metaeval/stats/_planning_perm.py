"""Private: compiled Perm-Both passes, from random coins to the null distribution of r(X', Z) - r(Y', Z): the
system-level kernel of :func:`metaeval.stats.significance.pairwise_tests` and of the planner
(:func:`perm_system_pearson`), and the planner's passes from its packed coins (:mod:`metaeval.stats._planning_kernels`
calls them), at summary level (:func:`_perm_summary_null`) and at system level (:func:`_perm_system_null`).

Sums are added in their natural order; tests/test_planning.py and tests/test_compiled_paths.py compare each kernel
with the numpy formula on the permuted matrices (``assert_allclose``). Split from
:mod:`~metaeval.stats._planning_kernels` along this seam: what is compiled, apart from the Python that batches the
trials.
"""

from __future__ import annotations

import numba
import numpy as np

from metaeval.stats._kernels import pearson_vector


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
def _perm_summary_null(bits, first, B, D1, D2, D3, base, Xs, Ys, z_ok):  # pragma: no cover - compiled
    """Perm-Both's null at summary level (Pearson) for every trial and permutation: the mean over inputs of the
    defined r(X', Z) minus that of r(Y', Z), (T, B), and the permutations with a cell whose r the caller must
    recompute from the values (``weak``, (T, B): a variance below 1e-6 of its mean square). The statistic of
    the general path of :func:`_perm_null` (the permuted matrices, then their correlations), without its
    (T, B, N, M) arrays.

    Coin (b, n, m) of trial t is bit ``first[t] + (b N + n) M + m`` of ``bits`` (np.unpackbits order).
    D1..D3 (T, N, M) are the changes of the centred sums when a cell is swapped (Y - X, Y^2 - X^2, (Y - X) Z),
    ``base`` (8, T, M) the unpermuted sums sx, sxx, sxz, sy, syy, syz, sz, szz, ``z_ok`` (T, M) where Z's
    column is not constant.

    * Coins: a byte's 8 coins become 8 bytes of one word through a table; a permutation's coins are unpacked
      once into a (N, M) byte matrix.
    * Sums: every swapped cell's changes are added over n in order (0 or 1 times the change), the three sums
      side by side and two systems per pass (the running sums stay in registers).
    * r: :func:`~metaeval.stats._kernels.pearson_row`'s formula (``n sxx - sx^2``, ``cov / sqrt(vx vz)``,
      clipped), one vectorized loop per metric that also sums and counts the defined r and flags the weak cells.
    * Constancy: a permuted column is constant (r undefined) only if one value is in every system's pair
      (X, Y) of that input, so only such columns are checked, permutation by permutation, on the values."""
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
    order, for a block of permutations side by side), r by :func:`~metaeval.stats._kernels.pearson_vector`.

    ``coins_t`` (N, M, >= B) uint8 0/1, the coins of the first B permutations; ``D`` = Ys - Xs (N, M); ``mean_x``,
    ``mean_y``, ``zs`` (N,): the means over the inputs. ``pairwise_tests``, ``permutation_test`` and the planner's
    :func:`_perm_system_null` call it."""
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
def _perm_system_null(bits, first, B, D, xm, ym, zm):  # pragma: no cover - compiled
    """Perm-Both's null at system level (Pearson) for every trial and permutation, (T, B), from the packed coins,
    without (T, B, N, M) boolean coins: each trial's coins are unpacked into (N, M, B) bytes and
    handed to :func:`perm_system_pearson`, the kernel of ``pairwise_tests``, a block of :data:`PERM_BLOCK`
    permutations at a time (the memory of one block, whatever B).

    Coin (b, n, m) of trial t is bit ``first[t] + (b N + n) M + m`` of ``bits`` (np.unpackbits order), unpacked
    a byte at a time through a table, as in :func:`_perm_summary_null`. ``xm``, ``ym``, ``zm`` (T, N) are the
    means over the inputs."""
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
