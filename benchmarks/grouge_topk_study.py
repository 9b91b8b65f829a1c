"""GRouge at the notebook's top-128 against ADW's top-5000 and exact (untruncated) single-sense vectors, on
the first SummEval summaries x 11 references (issue 22): mean difference, summary-level Spearman and
system-level Kendall agreement of each variant, and the CPU time of each setting (fresh cache each).

    python benchmarks/grouge_topk_study.py [--limit 208] [--limit-exact 16] [--out FILE.csv]

``--limit`` summaries (16 per input: 208 = 13 whole inputs) for 128 vs 5000; ``--limit-exact`` of them for
exact vectors too (Sem costs time in proportion to the vector size: exact is about 900 x top-128).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
MEASURES = ("grouge-1", "grouge-2", "grouge-su4")


def scores(recs, topk) -> tuple[pd.DataFrame, float]:
    from metaeval.metrics import grouge

    c0 = time.process_time()
    frame = grouge.score([r["summary"] for r in recs], [r["references"] for r in recs], MEASURES, columns="name",
                         topk=topk)
    return frame, time.process_time() - c0


def agreement(a: pd.DataFrame, b: pd.DataFrame, systems) -> list[dict]:
    rows = []
    for m in MEASURES:
        x, y = a[m].to_numpy(), b[m].to_numpy()
        sx = pd.Series(x).groupby(systems).mean()
        sy = pd.Series(y).groupby(systems).mean()
        rows.append(dict(measure=m, mean_a=x.mean(), mean_b=y.mean(), mean_diff=(y - x).mean(),
                         max_abs_diff=np.abs(y - x).max(), summary_spearman=stats.spearmanr(x, y)[0],
                         system_kendall=stats.kendalltau(sx, sy)[0]))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=208)
    ap.add_argument("--limit-exact", type=int, default=16)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    os.environ["METAEVAL_CACHE"] = tempfile.mkdtemp(prefix="grouge-topk-")  # cold: computed, not cached
    with open(ROOT / "data" / "summeval" / "summeval_joined.jsonl", encoding="utf-8") as fh:
        recs = [json.loads(line) for line in itertools.islice(fh, args.limit)]
    systems = np.asarray([r["summarizer_id"] for r in recs])
    out = []
    base, t128 = scores(recs, 128)
    big, t5000 = scores(recs, 5000)
    print(f"{len(recs)} summaries: CPU top-128 {t128:.1f} s (shipped vectors), top-5000 {t5000:.1f} s", flush=True)
    out += [dict(r, a="top-128", b="top-5000", summaries=len(recs)) for r in agreement(base, big, systems)]
    if args.limit_exact:
        n = args.limit_exact
        exact, texact = scores(recs[:n], None)
        print(f"{n} summaries: CPU exact {texact:.1f} s", flush=True)
        out += [dict(r, a="top-128", b="exact", summaries=n) for r in agreement(base.iloc[:n], exact, systems[:n])]
        out += [dict(r, a="top-5000", b="exact", summaries=n) for r in agreement(big.iloc[:n], exact, systems[:n])]
    table = pd.DataFrame(out)
    print(table.to_markdown(index=False, floatfmt=".4f"))
    if args.out:
        table.to_csv(args.out, index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
