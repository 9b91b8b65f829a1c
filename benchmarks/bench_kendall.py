"""Benchmark: Kendall's tau at any size (issue 33), against scipy.stats.kendalltau.

1. global level on N systems x M inputs (one vector of N M cells): metaeval's correlate (sorted counts,
   O(n log n) time, O(n) memory) and scipy, wall time and numpy's peak allocation (tracemalloc); the values
   must be equal to the last bit. Before the sorted path, 64 x 5,000 asked numpy for 95 GiB and failed.
2. the two implementations behind ``metaeval.stats._pairs.kendall`` on a batch of short vectors (summary level,
   one vector per input): all pairs at once vs sorting, microseconds per vector, which sets ``SORTED_FROM``.

    python benchmarks/bench_kendall.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import _common
import numpy as np
from scipy import stats

from metaeval.stats import _pairs
from metaeval.stats.correlation import correlate


def _peak(fn) -> float:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print("| N x M (cells) | metaeval (s) | scipy (s) | numpy peak (MiB) | equal to scipy |")
    print("|---|---:|---:|---:|---|")
    for N, M in ((16, 100), (64, 1000), (64, 5000), (100, 10000)):
        Z = np.round(rng.normal(size=(N, M)) * 20)
        X = Z + rng.normal(size=Z.shape)
        ours = correlate(X, Z, level="global", coefficient="kendall")  # also compiles on the first call
        t_ours, t_ref = _common.time_pair(lambda: correlate(X, Z, level="global", coefficient="kendall"),
                                          lambda: stats.kendalltau(X.ravel(), Z.ravel()), args.repeat)
        peak = _peak(lambda: correlate(X, Z, level="global", coefficient="kendall"))
        same = ours == stats.kendalltau(X.ravel(), Z.ravel())[0]
        print(f"| {N} x {M} ({N * M:,}) | {t_ours:.3f} | {t_ref:.3f} | {peak / 2**20:.1f} | {same} |", flush=True)
    print()
    print("| vector length n | vectors | all pairs (us / vector) | sorted (us / vector) |")
    print("|---:|---:|---:|---:|")
    for n in (5, 8, 12, 16, 24, 48, 100, 200):
        B = max(20, 100_000 // n)
        x, z = rng.normal(size=(B, n)), rng.normal(size=(B, n))
        _pairs._sorted_counts(x[:2], z[:2], None)
        times = []
        for fn in (_pairs._pair_counts, _pairs._sorted_counts):
            best = np.inf
            for _ in range(args.repeat):
                start = time.perf_counter()
                fn(x, z, None)
                best = min(best, time.perf_counter() - start)
            times.append(best * 1e6 / B)
        print(f"| {n} | {B} | {times[0]:.1f} | {times[1]:.1f} |", flush=True)
    print(f"\nSORTED_FROM = {_pairs.SORTED_FROM}: vectors this long or longer are counted by sorting.")


if __name__ == "__main__":
    main()
