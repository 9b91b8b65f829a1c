"""Simulation check of the noise ceiling (metaeval.stats.reliability.noise_ceiling): does it equal what a perfect
metric reaches?

Each design draws ratings with a known true score T (N systems x M inputs): T = system effect N(0, 0.5^2)
+ s_j N(0, 1) + input effect N(0, 0.5^2), with per-input spread s_j = exp(h N(0, 1)) (h = 0: every input alike;
h = 1: inputs differ in spread), and k annotators rating T + N(0, 1). For every level x coefficient it reports

* true: the mean over simulations of the coefficient a perfect metric (X = T) reaches against the k-annotator
  mean, computed by metaeval.correlate at that level (summary level: the average of per-input coefficients);
* new: the mean of ``noise_ceiling(ratings, level=..., coefficient=...)``; bias = new - true;
* old: the former estimator (sqrt of the split-half reliability pooled over the level's cells, summary level
  the cells minus their input's mean; the same Pearson value on every coefficient's row), kept here as
  :func:`old_ceiling` so that the tests can show where it fails.

    python benchmarks/bench_ceiling.py [--simulations 100] [--seed 0] [--docstring]

``--docstring`` prints only the table, as it stands in ``benchmarks/notes/bench_ceiling.md``.
"""

from __future__ import annotations

import argparse
import itertools
import time
import warnings

import numpy as np

from metaeval.stats.correlation import level_corr
from metaeval.stats.reliability import _single_from_halves, noise_ceiling, spearman_brown

LEVELS = ("system", "summary", "global")
COEFFICIENTS = ("pearson", "spearman", "kendall")
#: (systems, inputs, annotators, h) of the table
DESIGNS = [(n, m, k, h) for n in (5, 10, 16) for m in (20, 100) for k in (3, 5) for h in (0.0, 1.0)]


def simulate(n_systems: int, n_inputs: int, n_annotators: int, h: float, rng: np.random.Generator):
    """(T, ratings): the true score (N, M) and k annotators' ratings (N, M, k) of one simulated dataset."""
    spread = np.exp(h * rng.normal(size=(1, n_inputs)))
    T = (0.5 * rng.normal(size=(n_systems, 1)) + spread * rng.normal(size=(n_systems, n_inputs))
         + 0.5 * rng.normal(size=(1, n_inputs)))
    return T, T[:, :, None] + rng.normal(size=(n_systems, n_inputs, n_annotators))


def old_ceiling(ratings: np.ndarray, level: str) -> float:
    """The former noise ceiling: sqrt of the split-half reliability of the level's cells pooled (system: the
    system means; summary: every cell minus its input's mean over systems; global: the cells), Pearson over
    every split of the annotators into halves, each stepped up with Spearman-Brown (complete ratings only)."""
    k = ratings.shape[2]
    a = k // 2
    rels = []
    for half in itertools.combinations(range(k), a):
        if 2 * a == k and 0 not in half:
            continue
        mask = np.isin(np.arange(k), half)
        pair = []
        for H in (ratings[:, :, mask].mean(axis=2), ratings[:, :, ~mask].mean(axis=2)):
            if level == "system":
                pair.append(H.mean(axis=1))
            elif level == "summary":
                pair.append((H - H.mean(axis=0, keepdims=True)).ravel())
            else:
                pair.append(H.ravel())
        r = np.corrcoef(*pair)[0, 1]
        rho = float(_single_from_halves(r, a, k - a))
        rels.append(spearman_brown(rho, k) if rho > 0 else rho)
    rel = float(np.mean(rels))
    return float(np.sqrt(rel)) if rel > 0 else np.nan


def run_design(design, n_simulations: int, rng: np.random.Generator, *, levels=LEVELS, coefficients=COEFFICIENTS):
    """{(level, coefficient): (true mean, new mean, old mean)} over ``n_simulations`` datasets of ``design``."""
    acc: dict = {}
    for _ in range(n_simulations):
        T, Y = simulate(*design, rng)
        H = Y.mean(axis=2)
        for level in levels:
            old = old_ceiling(Y, level)
            for coef in coefficients:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    true = float(level_corr(T, H, level, coef))
                    new = noise_ceiling(Y, level=level, coefficient=coef, n_resamples=0, rng=0).ceiling
                acc.setdefault((level, coef), []).append((true, new, old))
    return {key: tuple(np.nanmean(np.array(v), axis=0)) for key, v in acc.items()}


def table(n_simulations: int, seed: int, designs=DESIGNS) -> list[str]:
    """The docstring's table: one row per design x level; per coefficient (r Pearson, rs Spearman, tau Kendall)
    the true mean, the new ceiling's mean, its bias and the old estimator's bias."""
    rng = np.random.default_rng(seed)
    rule = "=== === = = ======= " + " ".join(["===== ===== ====== ======"] * 3)
    names = " ".join(f"{c:5s} ceil  bias   old" + ("   " if c != "tau" else "") for c in ("r", "rs", "tau"))
    lines = [rule, "N   M   k h level   " + names, rule]
    for design in designs:
        res = run_design(design, n_simulations, rng)
        n, m, k, h = design
        for level in LEVELS:
            cells = []
            for coef in COEFFICIENTS:
                true, new, old = res[(level, coef)]
                cells.append(f"{true:.3f} {new:.3f} {new - true:+.3f} {old - true:+.3f}")
            lines.append(f"{n:<3d} {m:<3d} {k} {h:<1.0f} {level:7s} " + " ".join(cells))
    lines.append(rule)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulations", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--docstring", action="store_true", help="print only the table (notes/bench_ceiling.md)")
    args = parser.parse_args()
    t0 = time.perf_counter()
    lines = table(args.simulations, args.seed)
    indent = ""
    print("\n".join(indent + line for line in lines))
    if not args.docstring:
        print(f"{args.simulations} simulations per design, seed {args.seed}: {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
