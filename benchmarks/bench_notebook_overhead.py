"""Benchmark: the fixed cost of one notebook run (what each of `make results`' runs pays before its work).

Two throw-away notebooks are run with ``metaeval run`` in a fresh process each (best of 3, wall and CPU time
of the command and its kernel, from ``getrusage``):

* ``empty``: a parameters cell and ``pass``: process start, the runner (parameter checks, jupytext,
  papermill), kernel start and shutdown, writing the output folder;
* ``setup``: the setup cell every analysis notebook starts with (matplotlib, numpy, pandas, seaborn,
  ``metaeval.run.session.start`` on REALSumm: style, dataset load with its sha256 check, requirement checks).

``setup`` is the per-notebook fixed overhead; ``setup - empty`` is the part spent in the kernel's first cell.

    python benchmarks/bench_notebook_overhead.py [--repeat 3] [--dataset realsumm]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEADER = """# ---
# jupyter:
#   kernelspec:
#     display_name: Python (metaeval)
#     language: python
#     name: metaeval
#   metaeval:
#     paper: overhead_benchmark
# ---

# %% tags=["parameters"]
dataset = "realsumm"
seed = 0
output_dir = None

"""

BODIES = {
    "empty": "# %%\npass\n",
    "setup": """# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from metaeval.run.session import start

nb = start("overhead_benchmark", dataset, output_dir=output_dir, seed=seed)
""",
}


def time_run(source: Path, dataset: str, out: Path) -> tuple[float, float]:
    """Wall and CPU seconds (the command and every process it waited for) of one ``metaeval run``."""
    metaeval = Path(sys.executable).parent / "metaeval"
    cmd = [str(metaeval), "run", str(source), "-p", "dataset", dataset, "-p", "output_dir", str(out)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dataset", default="realsumm")
    args = parser.parse_args()
    best: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory(prefix="metaeval-overhead-") as tmp:
        for name, body in BODIES.items():
            source = Path(tmp) / f"99_{name}.py"
            source.write_text(HEADER + body, encoding="utf-8")
            runs = [time_run(source, args.dataset, Path(tmp) / f"out_{name}_{i}") for i in range(args.repeat)]
            best[name] = (min(r[0] for r in runs), min(r[1] for r in runs))
    load = os.getloadavg()[0]
    print(f"fixed cost of one `metaeval run` (best of {args.repeat}, load average {load:.1f}; CPU = the command "
          "and its kernel)")
    for name, (wall, cpu) in best.items():
        print(f"  {name:6s} {wall:6.2f} s wall {cpu:6.2f} s CPU")
    wall = best["setup"][0] - best["empty"][0]
    cpu = best["setup"][1] - best["empty"][1]
    print(f"  setup cell alone (setup - empty): {wall:.2f} s wall, {cpu:.2f} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
