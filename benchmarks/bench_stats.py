"""Benchmark: metaeval's statistics engine against nlpstats 0.0.1 (the authors' reference implementation).

Real data: SummEval as in Deutsch et al. (2021) (data/deutsch2021/fabbri2020): X = QAEval-F1,
Y = ROUGE-2 F1, Z = mean expert relevance; 16 systems x 100 inputs. Same n_resamples for both libraries.
Prints wall time of each and the speed-up ratio (nlpstats / metaeval).

    python benchmarks/bench_stats.py [--n-resamples 1000] [--repeat 3]

Needs ``pip install -e .[bench]`` (``make bench`` does it).

``--cells`` instead times the two notebook cells the compiled Pearson kernels were written for, old and new path
in the same process, interleaved (best of ``--repeat``, CPU and wall), and checks that they give the same
numbers: notebook 22's ``pairwise_tests`` over the paper's metrics of a dataset (9999 permutations, both
levels; the kernels against the numpy paths they replace) and notebook 20's ``ci_coverage_simulation``
(``--trials`` trials of 1000 resamples; against one ``bootstrap_ci`` call per method on the numpy paths, as the
simulation ran before). Run it with the notebook runner's thread limits
(``NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1``):

    python benchmarks/bench_stats.py --cells [--dataset summeval] [--trials 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import contextlib
import time

import _common
import numpy as np

import metaeval


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-resamples", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3, help="metaeval runs per case (best time is kept)")
    parser.add_argument("--cells", action="store_true", help="time notebooks 20 and 22's cells, old and new path")
    parser.add_argument("--dataset", default="summeval", help="--cells: the embedded dataset")
    parser.add_argument("--trials", type=int, default=1000, help="--cells: trials of the CI simulation")
    args = parser.parse_args()
    if args.cells:
        cells(args.dataset, args.trials, args.repeat)
        return
    import nlpstats.correlations as ref

    X, Y, Z = _common.matrices("fabbri2020", "qa-eval.f1", "rouge-2.f1", "expert.relevance")
    B = args.n_resamples
    ref_level = {"system": "system", "summary": "input"}
    rows = []
    for level in ("system", "summary"):
        for coef in ("pearson", "kendall"):
            cases = [
                (
                    "Boot-Both CI",
                    lambda: ref.bootstrap(X, Z, ref_level[level], coef, "both", n_resamples=B),
                    lambda: metaeval.bootstrap_ci(X, Z, level=level, coefficient=coef, n_resamples=B, rng=0),
                ),
                (
                    "Perm-Both test",
                    lambda: ref.permutation_test(X, Y, Z, ref_level[level], coef, "both", alternative="greater",
                                                 n_resamples=B),
                    lambda: metaeval.permutation_test(X, Y, Z, level=level, coefficient=coef, n_resamples=B, rng=0),
                ),
                (
                    "Williams test",
                    lambda: ref.williams_test(X, Y, Z, ref_level[level], coef, alternative="greater"),
                    lambda: metaeval.williams_test(X, Y, Z, level=level, coefficient=coef),
                ),
            ]
            for name, ref_fn, our_fn in cases:
                t_ours, t_ref = _common.time_pair(our_fn, ref_fn, args.repeat)
                rows.append((name, level, coef, t_ref, t_ours))
                print(f"{name:15s} {level:8s} {coef:8s} nlpstats {t_ref:9.4f} s   metaeval {t_ours:8.4f} s   "
                      f"ratio {t_ref / t_ours:8.1f}x", flush=True)
    print()
    print(f"| test | level | coefficient | nlpstats (s) | metaeval (s) | speed-up |   (n_resamples = {B})")
    print("|---|---|---|---:|---:|---:|")
    for name, level, coef, t_ref, t_ours in rows:
        print(f"| {name} | {level} | {coef} | {t_ref:.3f} | {t_ours:.4f} | {t_ref / t_ours:.0f}x |")


@contextlib.contextmanager
def numpy_paths():
    """The general numpy paths instead of the compiled Pearson kernels: the resampled or permuted matrices built
    cell by cell, then correlated (what a kernel must beat to be kept)."""
    from metaeval.stats import resampling, significance

    saved = resampling.resampled_corr, significance.resampled_corr, significance._pair_null

    def gathered(mats, Z, rows, cols, level, coefficient, batch, w=None, aggs=None):
        return resampling._gathered_corr(mats, Z, rows, cols, level, coefficient, batch, w,
                                         aggs or ["mean"] * len(mats))

    def swapped(Xs, Ys, Z, coins, coins_t, level):
        return np.concatenate([significance._swapped_deltas(Xs, Ys, Z, coins[s:s + 250], level, "pearson", None)
                               for s in range(0, coins.shape[0], 250)])

    resampling.resampled_corr = significance.resampled_corr = gathered
    significance._pair_null = swapped
    try:
        yield
    finally:
        resampling.resampled_corr, significance.resampled_corr, significance._pair_null = saved


def simulation_before(X, Z, n_trials, rng):
    """ci_coverage_simulation's loop as it ran before (one bootstrap_ci call per method, the targets and Fisher's
    intervals); returns the bootstrap intervals."""
    from metaeval.stats.correlation import effective_n, fisher_interval, level_corr
    from metaeval.studies.deutsch_coverage import split_halves

    out = []
    for child in np.random.default_rng(rng).spawn(n_trials):
        sa, sb, ia, ib = split_halves(X.shape[0], X.shape[1], child)
        XA, ZA = X[np.ix_(sa, ia)], Z[np.ix_(sa, ia)]
        XB, ZB = X[np.ix_(sb, ib)], Z[np.ix_(sb, ib)]
        for level in ("system", "summary"):
            float(level_corr(XB, ZB, level, "pearson"))
            r = float(level_corr(XA, ZA, level, "pearson"))
            fisher_interval(r, effective_n(XA, level=level), "pearson", 0.95)
            for resample in ("systems", "inputs", "both"):
                res = metaeval.bootstrap_ci(XA, ZA, level=level, resample=resample, n_resamples=1000, rng=child)
                out.append(res.confidence_interval)
    return np.array(out)


def cells(dataset: str, n_trials: int, repeat: int):
    import warnings

    from metaeval.studies import deutsch

    warnings.simplefilter("ignore")  # the simulation's dropped-resample warnings
    ds = metaeval.datasets.load(dataset)
    metrics, _, _ = deutsch.default_metrics(ds, embedded=True)
    mats = {name: ds.matrix(name) for name in metrics}
    Z = ds.matrix(ds.default_human)
    X = ds.matrix("qa-eval.f1")

    def pairwise():
        return np.stack([r.pvalues for r in deutsch.pairwise_pvalues(mats, Z, n_resamples=9999, rng=0).values()])

    def simulation():
        trials = deutsch.ci_coverage_simulation(X, Z, n_trials=n_trials, n_resamples=1000, rng=0)
        boot = trials[trials["method"] != "fisher"]
        return boot[["low", "high"]].to_numpy()

    def simulation_old():
        with numpy_paths():
            return simulation_before(X, Z, n_trials, 0)

    def pairwise_old():
        with numpy_paths():
            return pairwise()

    cases = [(f"notebook 22: pairwise_tests, {len(mats)} metrics x 9999 permutations x 2 levels", pairwise_old,
              pairwise),
             (f"notebook 20: ci_coverage_simulation, {n_trials} trials x 1000 resamples", simulation_old, simulation)]
    print(f"{dataset}: {ds.shape[0]} systems x {ds.shape[1]} inputs")
    for name, old, new in cases:
        # also the warm-up (imports, numba caches); the kernels agree with the general paths to rounding
        same = np.allclose(old(), new(), rtol=1e-9, atol=1e-9, equal_nan=True)
        times: dict[str, list[tuple[float, float]]] = {"old": [], "new": []}
        for _ in range(repeat):
            for label, fn in (("old", old), ("new", new)):
                c0, w0 = time.process_time(), time.perf_counter()
                fn()
                times[label].append((time.process_time() - c0, time.perf_counter() - w0))
        (c_old, w_old), (c_new, w_new) = (min(times[k]) for k in ("old", "new"))
        print(f"{name}: old {c_old:.2f} s CPU ({w_old:.2f} s wall), new {c_new:.2f} s CPU ({w_new:.2f} s wall), "
              f"{c_old / c_new:.1f}x; same numbers: {same}", flush=True)


if __name__ == "__main__":
    main()
