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
