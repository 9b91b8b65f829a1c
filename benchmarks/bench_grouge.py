"""Benchmark: GRouge-1, -2 and -SU4 on the first ``--limit`` SummEval summaries x 11 references, this
worktree's implementation against another revision's whole library (``git archive ANCHOR lib``, default
``main``), in the same run, each in fresh processes with an empty cache; then the PPR phase, the 30-step power
method (what the library computes) against a forward-push approximation (Andersen-Chung-Lang, level by level
so that it approximates the same 30-step vector), per seed.

* cold: a fresh process and an empty ``METAEVAL_CACHE``: WordNet parsing, every single-sense PPR vector,
  alignment and scoring (the PPR phase is also timed alone);
* warm: a second call in the same process (vectors in memory);
* the anchor (previous implementation: stopwords as OOV dimensions, every vector cut to top-128, WO
  alignment) at its default top-128; ours at ``--topk`` (the notebook's default, 128) and at ADW's 5000
  (on ``--limit-5000`` summaries, since Sem costs time in proportion to the vector size);
* ratios ours / anchor of CPU time on the same work (the machine is shared: CPU time, not wall, is the
  comparable figure; the load average is printed).

    python benchmarks/bench_grouge.py [--limit 32] [--limit-5000 16] [--anchor main] [--push-seeds 64]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
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


def run_child(limit: int, topk: int | None, lib: str = "") -> dict:
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, METAEVAL_CACHE=cache, PYTHONPATH=lib or str(ROOT / "lib"),
                   METAEVAL_DATA=str(ROOT / "data"))
        code = _CHILD.format(data=str(ROOT / "data" / "summeval" / "summeval_joined.jsonl"), limit=limit, topk=topk)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"benchmark child failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


_PUSH = r"""
import json, time
import numba, numpy as np
from metaeval.metrics import wordnet
from metaeval.metrics.grouge import ppr


@numba.njit(nogil=True)
def push(indptr, indices, seed, alpha, T, eps, p, r, rn, act, nxt, inq):
    # level-synchronous forward push of the T-step vector (1 - a) sum_t<T a^t M^t e + a^T M^T e: a residual
    # at level t below eps * deg is dropped (its mass is the error; the estimate is a lower bound)
    na = 1; act[0] = seed; r[seed] = 1.0; lost = 0.0
    if indptr[seed + 1] == indptr[seed]:
        p[seed] = 1.0; r[seed] = 0.0
        return 0.0
    for t in range(T + 1):
        nn = 0
        for q in range(na):
            v = act[q]; x = r[v]; r[v] = 0.0; deg = indptr[v + 1] - indptr[v]
            if t == T:
                p[v] += x
                continue
            if x < eps * deg:
                lost += x
                continue
            p[v] += (1.0 - alpha) * x
            share = alpha * x / deg
            for k in range(indptr[v], indptr[v + 1]):
                u = indices[k]
                if not inq[u]:
                    inq[u] = True; nxt[nn] = u; nn += 1
                rn[u] += share
        for q in range(nn):
            inq[nxt[q]] = False
        r, rn = rn, r
        act, nxt = nxt, act
        na = nn
    return lost


wn = wordnet.load()
A = wn.adjacency.tocsr(); A.sort_indices()
indptr, indices, n = A.indptr.astype(np.int64), A.indices.astype(np.int64), wn.n_nodes
words = "police officer car road man arrested seized fired court government money house year people".split()
seeds = sorted({{s.node for w in words for s in wn.senses(w)}})[:{n_seeds}]
ppr(seeds[:16], dtype=np.float32)  # compile
c = time.process_time(); P = ppr(seeds, dtype=np.float32); power = (time.process_time() - c) / len(seeds)
P64 = ppr(seeds, dtype=np.float64)
top = lambda v, k: set(np.lexsort((np.arange(n), -v))[:k].tolist())
rows = [dict(method="power, 30 steps, float32 (the library)", ms=1e3 * power)]
bufs = [np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.bool_)]
push(indptr, indices, seeds[0], 0.85, 30, 1e-6, *bufs)
for eps in (1e-5, 1e-6, 1e-7):
    c = time.process_time()
    for s in seeds:
        bufs[0][:] = 0
        push(indptr, indices, s, 0.85, 30, eps, *bufs)
    ms = 1e3 * (time.process_time() - c) / len(seeds)
    lost, err, ov = [], [], []
    for j, s in enumerate(seeds):
        bufs[0][:] = 0
        lost.append(push(indptr, indices, s, 0.85, 30, eps, *bufs))
        d = P64[:, j] - bufs[0]
        assert d.min() > -1e-12 and d.max() <= lost[-1] + 1e-12  # lower bound, error within the dropped mass
        err.append(d.max()); ov.append(len(top(bufs[0], 128) & top(P64[:, j], 128)) / 128)
    rows.append(dict(method=f"forward push, eps {{eps:g}} x degree", ms=ms, lost=max(lost), err=max(err),
                     overlap_min=min(ov), overlap_mean=float(np.mean(ov))))
print(json.dumps(rows))
"""


def push_vs_power(n_seeds: int) -> list[dict]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"))
    out = subprocess.run([sys.executable, "-c", _PUSH.format(n_seeds=n_seeds)], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=32, help="summaries (16 per SummEval input)")
    ap.add_argument("--limit-5000", type=int, default=16, help="summaries for the topk=5000 run (0: none)")
    ap.add_argument("--push-seeds", type=int, default=64, help="seeds of the push vs power comparison (0: none)")
    ap.add_argument("--topk", type=int, default=128, help="our vector size for the main comparison")
    ap.add_argument("--anchor", default="main", help="git revision of the previous implementation")
    args = ap.parse_args(argv)
    load = os.getloadavg()
    print(f"GRouge-1/2/SU4 on SummEval summaries x 11 references; load average {load[0]:.1f} {load[1]:.1f} "
          f"{load[2]:.1f}; CPU seconds are the comparable figures on a shared machine")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        # the anchor's library: this lib/ (with its untracked data files) with every file that differs from
        # the anchor revision replaced by the anchor's version
        anchor_lib = Path(tmp) / "lib"
        shutil.copytree(ROOT / "lib", anchor_lib, ignore=shutil.ignore_patterns("__pycache__"))
        changed = subprocess.run(["git", "diff", "--name-only", args.anchor, "--", "lib"], cwd=ROOT,
                                 capture_output=True, text=True, check=True).stdout.split()
        for name in changed:
            old = subprocess.run(["git", "show", f"{args.anchor}:{name}"], cwd=ROOT, capture_output=True)
            target = Path(tmp) / name
            if old.returncode == 0:
                target.write_bytes(old.stdout)
            else:
                target.unlink(missing_ok=True)
        jobs = [(f"anchor ({args.anchor})", args.limit, args.topk, str(anchor_lib)),
                ("ours", args.limit, args.topk, "")]
        if args.limit_5000:
            jobs += [(f"anchor ({args.anchor})", args.limit_5000, 5000, str(anchor_lib)),
                     ("ours", args.limit_5000, 5000, "")]
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
            a = by.get(("anchor", lim, k))
            if a:
                print(f"ratio ours / anchor (topk {k}) on {lim} summaries: cold cpu "
                      f"{r['cold_cpu'] / a['cold_cpu']:.2f}x, warm cpu {r['warm_cpu'] / a['warm_cpu']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
