"""Benchmark: the compiled / cached paths behind notebooks 10, 20, 22, 40, 60 and 61 against the reference
paths they replaced, on SummEval-sized inputs, in the same run (CPU seconds, one thread).

Every row also checks that both paths give the same values to rounding (rtol, atol 1e-9: compiled kernels add
in their natural order; tests/test_planning.py, test_compiled_paths.py and test_bleu_cache.py assert it on small
cases).

    OMP_NUM_THREADS=1 python benchmarks/bench_notebook_kernels.py [--repeat 3]
"""

from __future__ import annotations

import argparse

import numpy as np
import _common
from _common import best_cpu

import metaeval
from metaeval.metrics import bleu
from metaeval.stats import _kernels as K
from metaeval.stats import _planning_kernels as P
from metaeval.stats import resampling, significance


def same(a, b):
    if isinstance(a, list):
        return all(same(x, y) for x, y in zip(a, b))
    # compiled kernels add in their natural order: the same values to rounding (rtol, atol 1e-9)
    return bool(np.allclose(np.asarray(a), np.asarray(b), rtol=1e-9, atol=1e-9, equal_nan=True))


def cases():
    ds = metaeval.datasets.load("summeval")
    X, Y, Z = ds.matrix("qa-eval.f1"), ds.matrix("rouge-2.f1"), ds.matrix("expert.relevance")
    N, M = Z.shape
    rng = np.random.default_rng(0)

    # 60 / 61: Perm-Both at summary level, one chunk of planner trials (24 systems x 400 documents)
    T, B, n, m = 1, 200, 24, 400
    Zt = rng.normal(size=(T, n, m))
    Xt = K.standardize(Zt + rng.normal(size=Zt.shape))
    Yt = K.standardize(np.round(Zt + 2 * rng.normal(size=Zt.shape), 1))
    packed = K.coins(np.random.default_rng(1), (T, B), n, m, "both", packed=True)
    coins = packed.unpacked()
    yield ("planner Perm-Both summary null (1 x 200 x 24 x 400)",
           lambda: P._perm_null(Xt, Yt, Zt, coins, "summary", "pearson"),
           lambda: P._perm_null(Xt, Yt, Zt, packed, "summary", "pearson"))

    # 60: paired bootstrap of every system pair (one chunk of trials, 150 documents)
    S = Z
    ia, ib = np.triu_indices(N, 1)
    docs = rng.integers(0, M, size=(25, 150))
    tol = 1e-9 * float(np.abs(S).max())
    yield ("planner paired bootstrap, all pairs (25 trials x 1000 x 150 docs)",
           lambda: _common.numpy_pair_pvalues(S, docs, ia, ib, "paired-bootstrap", 1000, "two-sided", tol,
                                              np.random.default_rng(2)),
           lambda: P._pair_pvalues(S, docs, ia, ib, "paired-bootstrap", 1000, "two-sided", tol,
                                   np.random.default_rng(2)))

    # 60: sign-flip permutation test of every system pair (the planner's default; Monte-Carlo at 150 documents)
    yield ("planner sign flips, all pairs (25 trials x 1000 x 150 docs)",
           lambda: _common.numpy_pair_pvalues(S, docs, ia, ib, "permutation", 1000, "two-sided", tol,
                                              np.random.default_rng(4)),
           lambda: P._pair_pvalues(S, docs, ia, ib, "permutation", 1000, "two-sided", tol,
                                   np.random.default_rng(4)))

    # 22: permutation_test / pairwise_tests at summary level (Pearson), 1000 permutations
    Xs, Ys = significance._standardize(X), significance._standardize(Y)
    c = K.coins(np.random.default_rng(3), (1000,), *Z.shape, "both")
    yield ("Perm-Both summary Pearson deltas (1000 x 16 x 100)",
           lambda: significance._swapped_deltas(Xs, Ys, Z, c, "summary", "pearson", None),
           lambda: significance._permutation_deltas(Xs, Ys, Z, c, "summary", "pearson", None))

    # 20 / 22: bootstrap_ci at summary level (Pearson), 1000 resamples
    rows, cols = rng.integers(0, N, size=(1000, N)), rng.integers(0, M, size=(1000, M))
    yield ("bootstrap summary Pearson (2 metrics x 1000 x 16 x 100)",
           lambda: resampling._gathered_corr([X, Y], Z, rows, cols, "summary", "pearson", 250, None, ["mean"] * 2),
           lambda: resampling.resampled_corr([X, Y], Z, rows, cols, "summary", "pearson", 250))

    # 10 / 40: sentence BLEU of every SummEval summary against its 11 references
    hyps = ds.texts["summary"].tolist()
    refs = [list(r) for r in ds.texts["references"]]
    sb = bleu._bleu(True)

    def cached():
        bleu._REF_INFO.clear()
        return bleu.sentence_bleu(hyps, refs)

    yield ("sentence BLEU (1600 summaries x 11 references)",
           lambda: np.array([sb.sentence_score(h, r).score for h, r in zip(hyps, refs)]), cached)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="timings per path (the best is kept)")
    args = parser.parse_args()
    print("| kernel | reference path s | new path s | ratio | same values |")
    print("| --- | ---: | ---: | ---: | --- |")
    for name, old, new in cases():
        new()  # compile / load the kernels outside the timing
        t_old, a = best_cpu(old, args.repeat)
        t_new, b = best_cpu(new, args.repeat)
        print(f"| {name} | {t_old:.3f} | {t_new:.3f} | {t_old / t_new:.1f}x | {'yes' if same(a, b) else 'NO'} |",
              flush=True)


if __name__ == "__main__":
    main()
