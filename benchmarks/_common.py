"""Setup shared by the benchmarks that time metaeval against a reference (a library, or the path it replaced) in
the same run (bench_stats.py, bench_agreement.py, bench_planning.py, bench_notebook_kernels.py): the best-of-n
timers and the three score matrices of a dataset.

Imported as ``import _common`` (the benchmarks run as scripts, with this folder first on ``sys.path``).
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

import metaeval


def best_time(fn: Callable[[], object], repeat: int) -> float:
    """The smallest wall time of ``repeat`` calls of ``fn`` (the others are noise of a busy machine)."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def best_cpu(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    """(the smallest CPU time of ``repeat`` calls of ``fn``, its last result): CPU time, for old-vs-new timings
    in one process on a machine that other jobs share."""
    times, out = [], None
    for _ in range(repeat):
        t0 = time.process_time()
        out = fn()
        times.append(time.process_time() - t0)
    return min(times), out


def time_pair(ours: Callable[[], object], ref: Callable[[], object] | None, repeat: int) -> tuple[float, float | None]:
    """metaeval's best time after a warm-up call (imports, numba caches) and the reference's single time,
    drawn after ``np.random.seed(0)`` (the reference libraries use numpy's global generator)."""
    ours()
    t_ours = best_time(ours, repeat)
    t_ref = None
    if ref is not None:
        np.random.seed(0)
        t_ref = best_time(ref, 1)
    return t_ours, t_ref


def matrices(dataset: str, *scores: str) -> list[np.ndarray]:
    """The systems x inputs matrices of ``scores`` in an embedded dataset."""
    ds = metaeval.datasets.load(dataset)
    return [ds.matrix(name) for name in scores]


def numpy_pair_pvalues(S, docs, ia, ib, test, B, alternative, tol, rng):
    """The planner's Monte-Carlo paired tests (``_planning_kernels._pair_pvalues``) written out in numpy from the
    same draws: the reference its compiled passes are timed against (tests/test_planning.py has its twin)."""
    import numpy as np

    from metaeval.stats._kernels import fair_bits, tail_hits

    T, n = docs.shape
    means = S[:, docs].mean(axis=-1)
    observed = (means[ia] - means[ib]).T
    if test == "paired-bootstrap":
        positions = rng.integers(0, n, size=(T, B, n), dtype=np.int32)
        drawn = np.take_along_axis(np.broadcast_to(docs[:, None, :], (T, B, n)), positions, axis=2)
        resampled = S[:, drawn].mean(axis=-1)
        null = (resampled[ia] - resampled[ib]).transpose(1, 2, 0) - observed[:, None, :]
        return np.count_nonzero(tail_hits(null, observed[:, None, :], alternative, tol), axis=1) / B
    signs = 1.0 - 2.0 * fair_bits(rng, (T * B, n)).reshape(T, B, n)
    d = S[ia][:, docs] - S[ib][:, docs]
    null = (signs[None] * d[:, :, None, :]).mean(axis=-1).transpose(1, 2, 0)
    return (np.count_nonzero(tail_hits(null, observed[:, None, :], alternative, tol), axis=1) + 1) / (B + 1)
