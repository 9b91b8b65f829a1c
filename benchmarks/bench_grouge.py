"""Benchmark: GRouge-1, -2 and -SU4 for all 1600 SummEval summaries x 11 references.

* cold: a fresh process with an empty cache (a temporary ``METAEVAL_CACHE``): WordNet parsing, every
  single-sense PPR vector (about 17,000 senses), alignment and scoring; the PPR phase is also timed alone;
* warm: a second call in the same process (vectors in memory), and a fresh process reading the disk cache;
* anchor: the implementation before the speed-up (``git show ANCHOR:lib/metaeval/metrics/grouge.py``, run
  in the same benchmark on the same machine): its PPR phase on a random sample of the needed senses and
  its warm scoring of the first ``--anchor-limit`` summaries, against ours on the same work (ratios);
* peak memory: the maximum resident set size of the cold process.

Every figure is wall and CPU time (``time.process_time``: all threads of the process); the machine's load
average is printed, since the machine is shared. Targets (issue 13/16, 2 cores): cold < 10 min, warm < 30 s,
peak < 4 GB.

    python benchmarks/bench_grouge.py [--limit 1600] [--topk 128] [--anchor ca46c8f] [--anchor-senses 512]
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
ANCHOR = "ca46c8f"  # the last commit before the PPR/alignment speed-up

_CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter(); c0 = time.process_time()
sys.path.insert(0, {bench!r})
import bench_grouge as b
ids, peers, refs = b.load_inputs({limit})
from metaeval.metrics import grouge
# the PPR phase alone: every sense the scoring will need
store = grouge._store(0.15, 30, {topk})
lex = grouge._Lexicon(store)
from metaeval.metrics.text import tokenize
texts = set(peers) | {{r for rs in refs for r in rs}}
senses = {{s for t in texts for w in lex.ids(tokenize(t)) for s in lex.senses[w]}}
t1 = time.perf_counter(); c1 = time.process_time()
store.ensure(senses)
ppr, ppr_cpu = time.perf_counter() - t1, time.process_time() - c1
frame = grouge.score(peers, refs, ("grouge-1", "grouge-2", "grouge-su4"), topk={topk}, columns="name")
first, first_cpu = time.perf_counter() - t0, time.process_time() - c0
t1 = time.perf_counter(); c1 = time.process_time()
again = grouge.score(peers, refs, ("grouge-1", "grouge-2", "grouge-su4"), topk={topk}, columns="name")
warm, warm_cpu = time.perf_counter() - t1, time.process_time() - c1
assert again.equals(frame)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2
print(json.dumps(dict(first=first, first_cpu=first_cpu, warm=warm, warm_cpu=warm_cpu, peak_gb=peak, ppr=ppr,
                      ppr_cpu=ppr_cpu, senses=len(senses), mean=frame.mean().round(6).to_dict())))
"""

# the anchor (previous implementation) and ours on the same sample of senses and summaries
_ANCHOR_CHILD = r"""
import importlib.util, json, sys, time
import numpy as np
sys.path.insert(0, {bench!r})
import bench_grouge as b
spec = importlib.util.spec_from_file_location("grouge_anchor", {anchor_file!r})
old = importlib.util.module_from_spec(spec); sys.modules["grouge_anchor"] = old; spec.loader.exec_module(old)
from metaeval.metrics import grouge as new
from metaeval.metrics.text import tokenize
ids, peers, refs = b.load_inputs({limit})
store = new._store(0.15, 30, {topk})
lex = new._Lexicon(store)
texts = set(peers) | {{r for rs in refs for r in rs}}
senses = np.asarray(sorted({{s for t in texts for w in lex.ids(tokenize(t)) for s in lex.senses[w]}}))
sample = np.random.default_rng(0).choice(senses, min({n_senses}, senses.size), replace=False)
out = dict(n_senses=int(sample.size), all_senses=int(senses.size))
# PPR phase: the anchor's blocks of 128 seeds then its truncation, against SenseVectors.ensure
old.ppr([[int(s)] for s in sample[:8]], block=8, dtype=np.float32)  # compile outside the timing
new.SenseVectors(topk={topk}, cache=False).ensure(sample[:8])
t = time.perf_counter(); c = time.process_time()
for a in range(0, sample.size, 128):
    chunk = sample[a:a + 128]
    old._truncate(old.ppr([[int(s)] for s in chunk], block=128, dtype=np.float32), {topk})
out["old_ppr"], out["old_ppr_cpu"] = time.perf_counter() - t, time.process_time() - c
t = time.perf_counter(); c = time.process_time()
new.SenseVectors(topk={topk}, cache=False).ensure(sample)
out["new_ppr"], out["new_ppr_cpu"] = time.perf_counter() - t, time.process_time() - c
# warm scoring (vectors in memory) of the first summaries
n = {anchor_limit}
for name, mod in (("old", old), ("new", new)):
    mod.score(peers[:n], refs[:n], ("grouge-1", "grouge-2", "grouge-su4"), topk={topk}, columns="name")
    t = time.perf_counter(); c = time.process_time()
    f = mod.score(peers[:n], refs[:n], ("grouge-1", "grouge-2", "grouge-su4"), topk={topk}, columns="name")
    out[name + "_warm"], out[name + "_warm_cpu"] = time.perf_counter() - t, time.process_time() - c
    out[name + "_frame"] = f.to_numpy().tolist()
out["max_abs_diff"] = float(np.max(np.abs(np.asarray(out.pop("old_frame")) - np.asarray(out.pop("new_frame")))))
print(json.dumps(out))
"""


def load_inputs(limit: int):
    path = ROOT / "data" / "summeval" / "summeval_joined.jsonl"
    with open(path, encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh][:limit]
    ids = [f"{r['instance_id']}|{r['summarizer_id']}" for r in records]
    return ids, [r["summary"] for r in records], [r["references"] for r in records]


def _run(code: str, cache: str) -> dict:
    env = dict(os.environ, METAEVAL_CACHE=cache)
    out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"benchmark process failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_child(limit: int, topk: int, cache: str) -> dict:
    return _run(_CHILD.format(bench=str(ROOT / "benchmarks"), limit=limit, topk=topk), cache)


def run_anchor(anchor: str, limit: int, topk: int, n_senses: int, anchor_limit: int, cache: str) -> dict | None:
    """The anchor's figures, or None when its source cannot be read from git (not a clone)."""
    try:
        src = subprocess.run(["git", "-C", str(ROOT), "show", f"{anchor}:lib/metaeval/metrics/grouge.py"],
                             check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    with tempfile.TemporaryDirectory(prefix="grouge-anchor-") as tmp:
        path = Path(tmp) / "grouge_anchor.py"
        path.write_text(src.replace("cache=True", "cache=False"))  # its kernels compiled apart from ours
        code = _ANCHOR_CHILD.format(bench=str(ROOT / "benchmarks"), anchor_file=str(path), limit=limit, topk=topk,
                                    n_senses=n_senses, anchor_limit=anchor_limit)
        return _run(code, cache)


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=1600)
    parser.add_argument("--topk", type=int, default=128)
    parser.add_argument("--anchor", default=ANCHOR, help="git revision of the previous implementation ('' to skip)")
    parser.add_argument("--anchor-senses", type=int, default=512, help="senses in the anchor's PPR sample")
    parser.add_argument("--anchor-limit", type=int, default=160, help="summaries in the anchor's warm comparison")
    args = parser.parse_args()
    load_before = _load()
    with tempfile.TemporaryDirectory(prefix="grouge-bench-") as cache:
        cold = run_child(args.limit, args.topk, cache)
        disk = run_child(args.limit, args.topk, cache)
        anchor = (run_anchor(args.anchor, args.limit, args.topk, args.anchor_senses, args.anchor_limit, cache)
                  if args.anchor else None)
    n = args.limit
    print(f"GRouge-1/2/SU4 on {n} SummEval summaries x 11 references (top-{args.topk} vectors, "
          f"{cold['senses']} senses; {os.cpu_count()} cores; load average {load_before} before, {_load()} after)")
    rows = [
        ("cold (empty cache: parse, all PPR vectors, score)", cold["first"], cold["first_cpu"], 600),
        ("  of which the PPR phase (all senses)", cold["ppr"], cold["ppr_cpu"], None),
        ("fresh process, PPR vectors from the disk cache", disk["first"], disk["first_cpu"], None),
        ("warm (second call in the process)", cold["warm"], cold["warm_cpu"], 30),
    ]
    for name, wall, cpu, target in rows:
        mark = "" if target is None else (" ok" if wall < target else f" OVER the {target} s target")
        print(f"  {name:<52} {wall:8.1f} s wall {cpu:8.1f} s cpu{mark}")
    peak = max(cold["peak_gb"], disk["peak_gb"])
    print(f"  peak resident memory {peak:.2f} GB{' ok' if peak < 4 else ' OVER the 4 GB target'}")
    print(f"  mean scores: {cold['mean']}")
    if anchor is None:
        print("  anchor: not measured (no git history); the previous implementation measured 393 s wall / 365 s cpu "
              "cold, 55 s from the disk cache, 41.5 s warm (loaded machine)")
        return
    k, total = anchor["n_senses"], anchor["all_senses"]
    print(f"| anchor ({args.anchor}) | work | anchor cpu | metaeval cpu | ratio |")
    print("|---|---|---|---|---|")
    print(f"| PPR vectors (30 iterations, top-{args.topk}) | {k} random senses of the {total} | "
          f"{anchor['old_ppr_cpu']:.1f} s | {anchor['new_ppr_cpu']:.1f} s | "
          f"{anchor['old_ppr_cpu'] / anchor['new_ppr_cpu']:.1f}x |")
    print(f"| warm scoring | first {args.anchor_limit} summaries | {anchor['old_warm_cpu']:.1f} s | "
          f"{anchor['new_warm_cpu']:.1f} s | {anchor['old_warm_cpu'] / anchor['new_warm_cpu']:.1f}x |")
    print(f"  anchor PPR extrapolated to all {total} senses: {anchor['old_ppr_cpu'] / k * total:.0f} s cpu "
          f"(ours measured above: {cold['ppr_cpu']:.0f} s); "
          f"max |GRouge difference| anchor vs ours: {anchor['max_abs_diff']:.2g}")


if __name__ == "__main__":
    main()
