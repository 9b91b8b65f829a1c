"""Benchmark: GRouge-1, -2 and -SU4 on the first ``--limit`` SummEval summaries x 11 references, today's
ADW-faithful implementation against the previous one (``git show ANCHOR:lib/metaeval/metrics/grouge.py``),
in the same run, each in fresh processes with an empty cache.

* cold: a fresh process and an empty ``METAEVAL_CACHE``: WordNet parsing, every single-sense PPR vector,
  alignment and scoring (the PPR phase is also timed alone);
* warm: a second call in the same process (vectors in memory);
* the anchor (previous implementation: stopwords as OOV dimensions, every vector cut to top-128, WO
  alignment) at its default top-128; ours at ``--topk`` (the notebook's default, 128) and at ADW's 5000
  (on ``--limit-5000`` summaries, since Sem costs time in proportion to the vector size);
* ratios ours / anchor of CPU time on the same work (the machine is shared: CPU time, not wall, is the
  comparable figure; the load average is printed).

    python benchmarks/bench_grouge.py [--limit 320] [--limit-5000 64] [--anchor main]
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
import importlib.util, itertools, json, resource, sys, time
t0 = time.perf_counter(); c0 = time.process_time()
with open({data!r}, encoding="utf-8") as fh:
    recs = [json.loads(line) for line in itertools.islice(fh, {limit})]
peers = [r["summary"] for r in recs]; refs = [r["references"] for r in recs]
if {anchor_file!r}:
    spec = importlib.util.spec_from_file_location("grouge_anchor", {anchor_file!r})
    g = importlib.util.module_from_spec(spec); sys.modules["grouge_anchor"] = g; spec.loader.exec_module(g)
    kw = dict(topk={topk})
else:
    from metaeval.metrics import grouge as g
    kw = dict(topk={topk})
measures = ("grouge-1", "grouge-2", "grouge-su4")
first = g.score(peers, refs, measures, columns="name", **kw)
cold, cold_cpu = time.perf_counter() - t0, time.process_time() - c0
t1 = time.perf_counter(); c1 = time.process_time()
again = g.score(peers, refs, measures, columns="name", **kw)
warm, warm_cpu = time.perf_counter() - t1, time.process_time() - c1
assert again.equals(first)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2
print(json.dumps(dict(cold=cold, cold_cpu=cold_cpu, warm=warm, warm_cpu=warm_cpu, peak_gb=peak,
                      mean=first.mean().round(4).to_dict())))
"""


def run_child(limit: int, topk: int | None, anchor_file: str = "") -> dict:
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, METAEVAL_CACHE=cache, PYTHONPATH=str(ROOT / "lib"))
        code = _CHILD.format(data=str(ROOT / "data" / "summeval" / "summeval_joined.jsonl"), limit=limit, topk=topk,
                             anchor_file=anchor_file)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=320, help="summaries (16 per SummEval input)")
    ap.add_argument("--limit-5000", type=int, default=64, help="summaries for the topk=5000 run")
    ap.add_argument("--topk", type=int, default=128, help="our vector size for the main comparison")
    ap.add_argument("--anchor", default="main", help="git revision of the previous implementation")
    args = ap.parse_args(argv)
    anchor_src = subprocess.run(["git", "show", f"{args.anchor}:lib/metaeval/metrics/grouge.py"], cwd=ROOT,
                                capture_output=True, text=True)
    load = os.getloadavg()
    print(f"GRouge-1/2/SU4 on SummEval summaries x 11 references; load average {load[0]:.1f} {load[1]:.1f} "
          f"{load[2]:.1f}; CPU seconds are the comparable figures on a shared machine")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        anchor_file = ""
        if anchor_src.returncode == 0 and anchor_src.stdout.startswith(('"""', 'r"""')):
            anchor_file = str(Path(tmp) / "grouge_anchor.py")
            Path(anchor_file).write_text(anchor_src.stdout, encoding="utf-8")
        jobs = [("ours", args.limit, args.topk, "")]
        if anchor_file:
            jobs.insert(0, (f"anchor ({args.anchor})", args.limit, 128, anchor_file))
        jobs.append(("ours, ADW size", args.limit_5000, 5000, ""))
        if anchor_file:
            jobs.append((f"anchor ({args.anchor})", args.limit_5000, 128, anchor_file))
        for name, limit, topk, af in jobs:
            r = run_child(limit, topk, af)
            rows.append((name, limit, topk, r))
    print("| implementation | summaries | topk | cold wall s | cold cpu s | warm wall s | warm cpu s | peak GB "
          "| mean scores |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for name, limit, topk, r in rows:
        print(f"| {name} | {limit} | {topk} | {r['cold']:.1f} | {r['cold_cpu']:.1f} | {r['warm']:.1f} | "
              f"{r['warm_cpu']:.1f} | {r['peak_gb']:.2f} | {r['mean']} |")
    by = {(n.split(' (')[0], lim, k): r for n, lim, k, r in rows}
    for (name, lim, k), r in by.items():
        if name.startswith("ours"):
            a = by.get(("anchor", lim, 128))
            if a:
                print(f"ratio ours (topk {k}) / anchor (top-128) on {lim} summaries: cold cpu "
                      f"{r['cold_cpu'] / a['cold_cpu']:.2f}x, warm cpu {r['warm_cpu'] / a['warm_cpu']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
