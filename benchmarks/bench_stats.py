"""Benchmark: metaeval's statistics engine against nlpstats 0.0.1 (the authors' reference implementation).

Real data: SummEval as in Deutsch et al. (2021) (data/deutsch2021/fabbri2020): X = QAEval-F1,
Y = ROUGE-2 F1, Z = mean expert relevance; 16 systems x 100 inputs. Same n_resamples for both libraries.
Prints wall time of each and the speed-up ratio (nlpstats / metaeval).

    python benchmarks/bench_stats.py [--n-resamples 1000] [--repeat 3]

Needs ``pip install -e .[bench]`` (``make bench`` does it).
"""

from __future__ import annotations

import argparse

import _common

import metaeval


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-resamples", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3, help="metaeval runs per case (best time is kept)")
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
