"""Benchmark: the planner's vectorized system-pair power against a direct Python loop.

The direct loop is the usual power-analysis script: per trial, draw documents, bootstrap the mean
difference with a loop over resamples, count. It runs on a small grid (a few pairs of SummEval systems,
two sizes, few trials); its time per (trial x resample x pair) is then extrapolated to the full analysis.
The full analysis is then run for real with metaeval: all 120 pairs of SummEval's 16 systems (mean expert
relevance per document), 9 sizes, 1000 trials, paired bootstrap with 1000 resamples (the issue's target:
under two minutes on a 2-core machine).

Then the planner's compiled passes (notebook 60's default tests) against the numpy paths they replace, on the
same inputs in the same run (CPU seconds, best of ``--repeat``), each checked to give the same values to rounding:
Perm-Both's null at summary and system level (packed coins against boolean coins, one chunk of trials of the
largest and the smallest default design) and the sign flips of every system pair (against the numpy reference
``_common.numpy_pair_pvalues``).

    python benchmarks/bench_planning.py [--trials 1000] [--resamples 1000] [--skip-full] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

import metaeval
import numpy as np
import _common
from _common import best_cpu
from metaeval import planning
from metaeval.stats import _planning_kernels as P
from metaeval.stats._kernels import coins, standardize

SIZES = [10, 20, 30, 50, 75, 100, 150, 200, 300]


def direct_loop(S, pairs, sizes, n_trials, n_resamples, alpha, rng):
    """Power per (pair, size) the textbook way: Python loops over trials and resamples."""
    M = S.shape[1]
    out = {}
    for i, j in pairs:
        d_all = S[i] - S[j]
        for n in sizes:
            rejections = 0
            for _ in range(n_trials):
                d = d_all[rng.integers(0, M, n)]
                observed = d.mean()
                count = 0
                for _ in range(n_resamples):
                    delta = d[rng.integers(0, n, n)].mean()
                    if abs(delta - observed) >= abs(observed) - 1e-9:
                        count += 1
                rejections += count / n_resamples < alpha
            out[(i, j, n)] = rejections / n_trials
    return out


def compiled_paths(S, repeat):
    """The compiled passes against the numpy reference paths, interleaved in this process."""
    rng = np.random.default_rng(0)
    print(f"compiled passes against the numpy paths (CPU s, best of {repeat}; same floats checked):")
    for (T, N, M) in [(1, 24, 400), (53, 5, 25)]:  # one chunk of the largest / the smallest default design
        Z = rng.normal(size=(T, N, M))
        Xs = standardize(Z + rng.normal(size=Z.shape))
        Ys = standardize(np.round(Z + 2 * rng.normal(size=Z.shape), 1))
        packed = coins(np.random.default_rng(1), (T, 200), N, M, "both", packed=True)
        boolean = packed.unpacked()
        for level in ("summary", "system"):
            t_ref, ref = best_cpu(lambda: P._perm_null(Xs, Ys, Z, boolean, level, "pearson"), repeat)
            t_new, new = best_cpu(lambda: P._perm_null(Xs, Ys, Z, packed, level, "pearson"), repeat)
            same = np.allclose(ref, new, rtol=1e-9, atol=1e-9, equal_nan=True)  # natural order: equal to rounding
            print(f"  Perm-Both {level:7s} null, {T} x 200 x {N} x {M}:  numpy {t_ref:7.4f}  compiled {t_new:7.4f}  "
                  f"x{t_ref / t_new:4.1f}  same values: {same}")
    K, M = S.shape
    ia, ib = np.triu_indices(K, 1)
    tol = 1e-9 * float(np.abs(S).max())
    for n in (10, 300):
        docs = rng.integers(0, M, size=(20, n))

        def flips(compiled, docs=docs):
            run = P._pair_pvalues if compiled else _common.numpy_pair_pvalues
            return run(S, docs, ia, ib, "permutation", 1000, "two-sided", tol, np.random.default_rng(4))

        t_ref, ref = best_cpu(lambda: flips(False), repeat)
        t_new, new = best_cpu(lambda: flips(True), repeat)
        print(f"  sign flips, {len(ia)} pairs, 20 trials x 1000 x {n} docs:  numpy {t_ref:7.4f}  "
              f"compiled {t_new:7.4f}  x{t_ref / t_new:4.1f}  same p-values: {np.array_equal(ref, new)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--skip-full", action="store_true", help="only the small grid")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs of the compiled passes")
    args = parser.parse_args()

    ds = metaeval.datasets.load("summeval")
    S = ds.matrix("expert.relevance")
    K = S.shape[0]
    small_pairs = [(0, 1), (2, 3), (4, 5)]
    small_sizes = [20, 100]
    small_trials, B = 40, args.resamples

    t0 = time.perf_counter()
    loop = direct_loop(S, small_pairs, small_sizes, small_trials, B, 0.05, np.random.default_rng(0))
    t_loop = time.perf_counter() - t0
    units = len(small_pairs) * len(small_sizes) * small_trials * B
    per_unit = t_loop / units

    # metaeval on the same small grid: a 2-system matrix per pair (no sharing across pairs); one warm-up
    # call first (first-use imports)
    planning.system_comparison_power(S[0], S[1], sizes=[10], n_trials=2, n_resamples=10, rng=0)
    t0 = time.perf_counter()
    fast = {}
    for i, j in small_pairs:
        res = planning.system_comparison_power(S[i], S[j], sizes=small_sizes, n_trials=small_trials,
                                               n_resamples=B, rng=0)
        for n, p in zip(res["size"], res["power"]):
            fast[(i, j, n)] = p
    t_fast = time.perf_counter() - t0
    print(f"small grid ({len(small_pairs)} pairs x sizes {small_sizes} x {small_trials} trials x {B} resamples):")
    print(f"  direct Python loop  {t_loop:8.2f} s   ({per_unit * 1e6:.2f} us per trial x resample x pair)")
    print(f"  metaeval.planning   {t_fast:8.2f} s   speed-up x{t_loop / t_fast:.0f}")
    worst = max(abs(loop[k] - fast[k]) for k in loop)
    print(f"  largest power difference between the two (Monte-Carlo noise, {small_trials} trials): {worst:.3f}")

    n_pairs = K * (K - 1) // 2
    full_units = n_pairs * len(SIZES) * args.trials * args.resamples
    print(f"full analysis: {n_pairs} pairs x {len(SIZES)} sizes {SIZES} x {args.trials} trials x "
          f"{args.resamples} resamples")
    print(f"  direct loop, extrapolated: {full_units * per_unit / 3600:8.1f} h")
    if not args.skip_full:
        t0 = time.perf_counter()
        table = planning.system_pairs_power(S, sizes=SIZES, n_trials=args.trials, n_resamples=args.resamples, rng=0,
                                            systems=ds.systems)
        t_full = time.perf_counter() - t0
        print(f"  metaeval.planning, measured: {t_full:8.1f} s  (target: < 120 s; "
              f"x{full_units * per_unit / t_full:.0f} faster than the loop: all pairs share each trial's draws and "
              "one product per system)")
        need = planning.required_size(table, by=["system_a", "system_b"], target=0.8)
        print(f"  pairs reaching 80 % power within {max(SIZES)} documents: {int(need.reached.sum())} of {n_pairs}")
    compiled_paths(S, args.repeat)


if __name__ == "__main__":
    main()
