"""Benchmark: GRouge-1, -2 and -SU4 for all 1600 SummEval summaries x 11 references.

* cold: a fresh process with an empty PPR cache (a temporary ``METAEVAL_CACHE``): WordNet parsing, every
  single-sense PPR vector (about 17,000 senses), alignment and scoring;
* warm: a second call in the same process (vectors in memory), and a fresh process reading the disk cache;
* peak memory: the maximum resident set size of the cold process.

Targets (issue 13, 2 cores): cold < 10 min, warm < 30 s, peak < 4 GB. The reference point is UKB's
per-item PPR (one 30-iteration walk per model-gram x peer pair and per sense), which would need hours.

    python benchmarks/bench_grouge.py [--limit 1600] [--topk 128]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter(); c0 = time.process_time()
sys.path.insert(0, {bench!r})
import bench_grouge as b
ids, peers, refs = b.load_inputs({limit})
from metaeval.metrics import grouge
frame = grouge.score(peers, refs, ("grouge-1", "grouge-2", "grouge-su4"), topk={topk}, columns="name")
first, first_cpu = time.perf_counter() - t0, time.process_time() - c0
t1 = time.perf_counter(); c1 = time.process_time()
again = grouge.score(peers, refs, ("grouge-1", "grouge-2", "grouge-su4"), topk={topk}, columns="name")
warm, warm_cpu = time.perf_counter() - t1, time.process_time() - c1
assert again.equals(frame)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2
senses = int((grouge._store(0.15, 30, {topk}).row_of >= 0).sum())
print(json.dumps(dict(first=first, first_cpu=first_cpu, warm=warm, warm_cpu=warm_cpu, peak_gb=peak,
                      senses=senses, mean=frame.mean().round(4).to_dict())))
"""


def load_inputs(limit: int):
    path = ROOT / "data" / "summeval" / "summeval_joined.jsonl"
    with open(path, encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh][:limit]
    ids = [f"{r['instance_id']}|{r['summarizer_id']}" for r in records]
    return ids, [r["summary"] for r in records], [r["references"] for r in records]


def run_child(limit: int, topk: int, cache: str) -> dict:
    code = _CHILD.format(bench=str(ROOT / "benchmarks"), limit=limit, topk=topk)
    env = dict(os.environ, METAEVAL_CACHE=cache)
    out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"benchmark process failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=1600)
    parser.add_argument("--topk", type=int, default=128)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="grouge-bench-") as cache:
        cold = run_child(args.limit, args.topk, cache)
        disk = run_child(args.limit, args.topk, cache)
    n = args.limit
    print(f"GRouge-1/2/SU4 on {n} SummEval summaries x 11 references (top-{args.topk} vectors, "
          f"{cold['senses']} senses; {os.cpu_count()} cores)")
    rows = [
        ("cold (empty cache: parse, all PPR vectors, score)", cold["first"], cold["first_cpu"], 600),
        ("fresh process, PPR vectors from the disk cache", disk["first"], disk["first_cpu"], None),
        ("warm (second call in the process)", cold["warm"], cold["warm_cpu"], 30),
    ]
    for name, wall, cpu, target in rows:
        mark = "" if target is None else (" ok" if wall < target else f" OVER the {target} s target")
        print(f"  {name:<52} {wall:8.1f} s wall {cpu:8.1f} s cpu{mark}")
    peak = max(cold["peak_gb"], disk["peak_gb"])
    print(f"  peak resident memory {peak:.2f} GB{' ok' if peak < 4 else ' OVER the 4 GB target'}")
    print(f"  mean scores: {cold['mean']}")


if __name__ == "__main__":
    main()
