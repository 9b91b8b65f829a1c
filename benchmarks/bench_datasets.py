"""Benchmark: loading the embedded datasets and reading matrices from them (notebooks call matrix() a lot).

Prints the wall time of a cold load (files read and merged; sha256 checked once per process), of a repeated
load (served from the in-process cache while the files are unchanged), and of one ``Dataset.matrix`` call.

    python benchmarks/bench_datasets.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
import timeit

import metaeval
from metaeval.data import _loading


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="cold loads per dataset (best time is kept)")
    args = parser.parse_args()
    print(f"{'dataset':<14}{'cold load s':>12}{'cached load ms':>16}{'matrix() us':>13}")
    for name in metaeval.datasets.known_datasets():
        cold = []
        for _ in range(args.repeat):
            _loading._LOADED.clear()  # time the reading and merging, not the cache
            t0 = time.perf_counter()
            ds = metaeval.datasets.load(name)
            cold.append(time.perf_counter() - t0)
        cached = timeit.timeit(lambda n=name: metaeval.datasets.load(n), number=20) / 20
        score = ds.default_human
        per_call = timeit.timeit(lambda d=ds, s=score: d.matrix(s), number=10000) / 10000
        print(f"{name:<14}{min(cold):>12.2f}{cached * 1e3:>16.2f}{per_call * 1e6:>13.1f}")


if __name__ == "__main__":
    main()
