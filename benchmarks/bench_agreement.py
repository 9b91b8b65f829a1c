"""Benchmark: the pair statistics of issue 27 against google-research/mt-metrics-eval, in the same run.

REALSumm (24 systems x 100 inputs; X = QAEval-F1, Y = ROUGE-2 recall, Z = LitePyramid recall), 1000 resamples
or permutations where the statistic has them. mt-metrics-eval is imported from its source tree, outside this
repository: ``$METAEVAL_MTME`` (default ``/tmp/mtme``, e.g. ``git archive HEAD mt_metrics_eval | tar -x -C
/tmp/mtme`` from a clone); without it the anchors are skipped with a message and only metaeval's times print.

    python benchmarks/bench_agreement.py [--repeat 3]

Where the two compute different things, the row says so: mt-metrics-eval's permutation test of pairwise
accuracy swaps the two metrics' *system* scores (its system-level Correlation objects), metaeval's Perm-Both
swaps (system, input) cells and recomputes system means (Deutsch et al. 2021's Algorithm 2).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import _common

import metaeval


def load_mtme():
    path = os.environ.get("METAEVAL_MTME", "/tmp/mtme")
    if not os.path.isdir(os.path.join(path, "mt_metrics_eval")):
        print(f"(mt-metrics-eval not found at {path}: anchors skipped; set METAEVAL_MTME to its source tree)")
        return None
    sys.path.insert(0, path)
    from mt_metrics_eval import stats

    return stats


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    X, Y, Z = _common.matrices("bhandari2020", "qa-eval.f1", "rouge-2.recall", "litepyramid.recall")
    N, M = Z.shape
    B = 1000
    mt = load_mtme()
    gold, met = Z.ravel().tolist(), X.ravel().tolist()

    cases = [
        ("pairwise accuracy, system", lambda: metaeval.pairwise_accuracy(X, Z),
         (lambda: mt.Agreement(Z.mean(1).tolist(), X.mean(1).tolist())) if mt else None, ""),
        ("Kendall tau-c, summary level", lambda: metaeval.correlate(X, Z, level="summary", coefficient="kendall-c"),
         (lambda: mt.Correlation(N, gold, met).Kendall(average_by="item", variant="c")) if mt else None, ""),
        ("acc_eq + epsilon search, summary level", lambda: metaeval.tie_calibrated_accuracy(X, Z, level="summary"),
         (lambda: mt.KendallWithTiesOpt(gold, met, "acc23", N, "item", 1.0)) if mt else None, ""),
        ("acc_eq + epsilon search, per-system level",
         lambda: metaeval.tie_calibrated_accuracy(X, Z, level="per-system"),
         (lambda: mt.KendallWithTiesOpt(gold, met, "acc23", N, "sys", 1.0)) if mt else None, ""),
        ("soft pairwise accuracy, P = 1000", lambda: metaeval.soft_pairwise_accuracy(X, Z, n_resamples=B, rng=4),
         (lambda: mt.PairwiseConfidenceError(gold, met, N, B)) if mt else None, ""),
        ("Boot-Both CI of pairwise accuracy, B = 1000",
         lambda: metaeval.bootstrap_ci(X, Z, coefficient="pairwise-accuracy", n_resamples=B, rng=0), None, ""),
        ("delta correlations (5 buckets), Boot-Both B = 1000",
         lambda: metaeval.delta_correlations(X, Z, by=Y * 100, n_resamples=B, rng=0), None, ""),
        ("Perm test of pairwise accuracy, P = 1000",
         lambda: metaeval.permutation_test(X, Y, Z, coefficient="pairwise-accuracy", n_resamples=B, rng=0),
         (lambda: mt.PermutationSigDiff(
             mt.Correlation(N, Z.mean(1).tolist(), Y.mean(1).tolist()),
             mt.Correlation(N, Z.mean(1).tolist(), X.mean(1).tolist()),
             lambda g, m: (mt.Agreement(g, m)[0] / mt.Agreement(g, m)[1], 0), "none", B,
             mt.PermutationSigDiffParams(block_size=B))) if mt else None,
         "mt-metrics-eval permutes system scores, metaeval cells"),
        ("Perm test, Kendall system, early stopping, P = 10000",
         lambda: metaeval.permutation_test(X, Y, Z, coefficient="kendall", n_resamples=10 * B, rng=0,
                                           early_stopping=True),
         (lambda: mt.PermutationSigDiff(
             mt.Correlation(N, Z.mean(1).tolist(), Y.mean(1).tolist()),
             mt.Correlation(N, Z.mean(1).tolist(), X.mean(1).tolist()),
             mt.KendallVariants, "none", 10 * B, mt.PermutationSigDiffParams())) if mt else None,
         "mt-metrics-eval: its heuristic stop (blocks of 1000, p < 0.02 or > 0.5), system scores permuted"),
    ]
    rows = []
    for name, ours, ref, note in cases:
        t_ours, t_ref = _common.time_pair(ours, ref, args.repeat)
        rows.append((name, t_ours, t_ref, note))
        ratio = f"{t_ref / t_ours:8.1f}x" if t_ref else "       -"
        ref_s = f"{t_ref:9.4f} s" if t_ref else "        -  "
        print(f"{name:55s} metaeval {t_ours:8.4f} s   mt-metrics-eval {ref_s}   ratio {ratio}", flush=True)
    print()
    print(f"| statistic ({N} systems x {M} inputs) | metaeval (s) | mt-metrics-eval (s) | speed-up | note |")
    print("|---|---:|---:|---:|---|")
    for name, t_ours, t_ref, note in rows:
        ref_s = f"{t_ref:.4f}" if t_ref else "-"
        ratio = f"{t_ref / t_ours:.0f}x" if t_ref else "-"
        print(f"| {name} | {t_ours:.4f} | {ref_s} | {ratio} | {note} |")


if __name__ == "__main__":
    main()
