"""Parameter sweeps over a notebook: every combination of a grid, run with papermill, collected in one CSV.

A sweep is a notebook plus a grid (a YAML or JSON file mapping parameter names to lists of values, or
``-p name v1,v2`` flags). Each combination runs into its own folder under the sweep folder, named from its
parameters plus a short hash (stable and readable: ``coefficient=kendall__n_resamples=100__3f2a9c1b``);
finished combinations are skipped on rerun unless forced; a failed combination is recorded with its error and
does not stop the others; at the end every combination's main table (the CSV the notebook declares in its
jupytext header metadata, ``metaeval.main_table``) is collected into ``sweep.csv`` with the parameters as columns.

Combinations run in worker processes on this machine (``workers``) or as tasks on a Dask cluster
(``scheduler``: an address, or ``"local"`` for a LocalCluster). If the notebook declares ``seed`` and the grid
does not set it, each combination's seed is derived from the base seed and its parameters, so results do not
depend on the number of workers or the order in which combinations run.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from metaeval._io import write_table
from metaeval.run.incremental import unchanged
from metaeval.run.notebooks import run_notebook
from metaeval.run.outputs import OutputDirError, check_sweep_root
from metaeval.run.params import ParameterError, check_choices, check_value, read_flag, split_values
from metaeval.run.paths import (NotebookError, absolute_path, combination_dir, find_notebook, notebook_metadata,
                                notebook_parameters, parameter_docs, parameters_key)
from metaeval.run.pool import run_in_pool, stopped

__all__ = ["SweepError", "load_grid", "parse_flags", "combinations", "combination_dir", "derive_seed", "run_sweep",
           "collect"]

STATUS = "_sweep_status.json"


class SweepError(ValueError):
    """The sweep was asked for something it cannot do; raised before anything runs."""


def load_grid(path: str | os.PathLike) -> dict[str, list]:
    """Read a grid from YAML or JSON: ``{name: [values...]}`` (a scalar counts as a one-value list)."""
    import yaml

    path = Path(path)
    if not path.exists():
        raise SweepError(f"grid file {path} does not exist")
    if path.is_dir():
        raise SweepError(f"grid file {path} is a folder, not a YAML or JSON file")
    try:
        grid = yaml.safe_load(path.read_text(encoding="utf-8"))  # YAML is a superset of JSON
    except UnicodeDecodeError as exc:
        raise SweepError(f"grid file {path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SweepError(f"grid file {path} is not valid YAML/JSON{where}: {problem}") from None
    if not isinstance(grid, dict):
        raise SweepError(f"grid file {path} must map parameter names to lists of values")
    return {str(k): v if isinstance(v, list) else [v] for k, v in grid.items()}


def parse_flags(pairs, declared: Mapping[str, Any] | None = None) -> dict[str, list]:
    """``[("coefficient", "pearson,kendall"), ("n_trials", "10")]`` -> grid. With the notebook's ``declared``
    defaults each value is read by its parameter's type, as ``metaeval run -p`` does (``dataset 2021`` is the
    folder "2021", not a number); otherwise, and for names the notebook does not declare, as YAML."""
    grid = {}
    for name, values in pairs or []:
        texts = split_values(str(values))  # "[0.1,0.5]" is one value
        try:
            grid[name] = [read_flag(name, v, declared or {}) for v in texts]
        except ParameterError as exc:
            raise SweepError(str(exc)) from None
    return grid


def combinations(grid: Mapping[str, list]) -> list[dict[str, Any]]:
    """Every combination of the grid, in a stable order (parameters sorted by name)."""
    if not grid:
        raise SweepError("the grid is empty: give at least one parameter with values")
    for name, values in grid.items():
        if not isinstance(values, list) or not values:
            raise SweepError(f"grid parameter {name!r} has no values")
    names = sorted(grid)
    return [dict(zip(names, combo)) for combo in itertools.product(*(grid[n] for n in names))]


def derive_seed(base_seed: int, params: Mapping[str, Any]) -> int:
    """A seed for one combination, from the base seed and the parameters only."""
    words = np.frombuffer(hashlib.sha256(parameters_key(params).encode()).digest(), dtype=np.uint32)
    return int(np.random.SeedSequence([int(base_seed), *words.tolist()]).generate_state(1)[0])


@dataclass(frozen=True)
class _Task:
    notebook: str
    params: dict
    run_params: dict
    folder: str


def _run_task(task: _Task) -> dict:
    """Run one combination (in a worker process or on a Dask worker); raises only KeyboardInterrupt."""
    folder = Path(task.folder)
    status: dict[str, Any] = {"params": task.params, "folder": folder.name}
    if stopped():
        return {**status, "state": "cancelled"}
    start = time.perf_counter()
    try:
        run_notebook(task.notebook, {**task.run_params, "output_dir": str(folder)})
        status.update(state="done", seconds=round(time.perf_counter() - start, 3))
    except Exception as exc:  # a failed combination is data for the report, not a crash of the sweep
        # (KeyboardInterrupt is not an Exception: Ctrl-C stops the sweep, it is not a failed combination)
        status.update(state="failed", error=f"{type(exc).__name__}: {exc}",
                      seconds=round(time.perf_counter() - start, 3))
        from metaeval.run.outputs import failed_dir

        kept = failed_dir(folder, Path(task.notebook).stem)
        if kept.is_dir():  # the runner kept the failed run there: its status goes beside it, no second folder
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
            folder = kept
        folder.mkdir(parents=True, exist_ok=True)
    (folder / STATUS).write_text(json.dumps(status, indent=1, default=str))
    return status


def run_sweep(
    notebook: str,
    grid: Mapping[str, list],
    output_dir: str | os.PathLike,
    *,
    workers: int = 1,
    scheduler: str | None = None,
    force: bool = False,
    progress: bool = True,
) -> pd.DataFrame:
    """Run every combination of ``grid`` through ``notebook`` into ``output_dir``; returns the collected table.

    Raises
    ------
    SweepError
        Unknown notebook, a parameter the notebook does not declare, an empty grid: before anything runs.
    """
    try:
        path = find_notebook(notebook)
        declared = notebook_parameters(path)
    except NotebookError as exc:
        raise SweepError(str(exc)) from None
    combos = combinations(grid)
    unknown = sorted(set(grid) - set(declared))
    if unknown:
        raise SweepError(f"{path.name} does not declare parameter(s) {unknown}; it declares: {', '.join(declared)}")
    if "output_dir" in grid:
        raise SweepError("output_dir is set by the sweep for each combination; do not put it in the grid")
    if workers < 1:
        raise SweepError(f"workers must be >= 1, got {workers}")

    try:
        for name, values in grid.items():
            for value in values:
                check_value(name, value, declared[name], where=f"grid of {path.name}")
        check_choices(parameter_docs(path), {n: list(vs) for n, vs in grid.items()}, where=f"grid of {path.name}")
        root = check_sweep_root(absolute_path(output_dir), path.name)
    except (ParameterError, OutputDirError) as exc:
        raise SweepError(str(exc)) from None
    root.mkdir(parents=True, exist_ok=True)
    tasks, skipped = [], []
    for params in combos:
        run_params = dict(params)
        if "seed" in declared and "seed" not in params:
            run_params["seed"] = derive_seed(declared["seed"] or 0, params)
        folder = root / combination_dir(params)
        status_file = folder / STATUS
        if not force and status_file.exists() and json.loads(status_file.read_text()).get("state") == "done" \
                and unchanged(path, {**declared, **run_params}, folder, path.stem):
            # finished by this checkout with the same notebook, library, data and parameters (run-all's rule:
            # a fresh clone, or an edit of the code a run imports, reruns it)
            skipped.append(params)
            continue
        tasks.append(_Task(str(path), params, run_params, str(folder)))
    (root / "sweep.json").write_text(json.dumps({"notebook": path.name, "grid": grid}, indent=1, default=str))
    if skipped:
        print(f"sweep {path.stem}: {len(skipped)} of {len(combos)} combinations already finished in {root} are "
              "skipped (--force reruns them)", file=sys.stderr)
    from tqdm import tqdm

    bar = tqdm(total=len(combos), initial=len(skipped), desc=f"sweep {path.stem}", unit="run", disable=not progress)
    try:
        if scheduler is not None:
            _run_dask(tasks, scheduler, bar)
        elif workers == 1:
            for task in tasks:
                _run_task(task)
                bar.update()
        else:
            run_in_pool(_run_task, tasks, workers,
                        on_done=lambda task, status: None if status.get("state") == "cancelled" else bar.update())
    except KeyboardInterrupt:
        # Ctrl-C: the running combinations were stopped and cleaned up; keep what finished, and say so
        bar.close()
        try:
            collect(root, path)
        except Exception:  # pragma: no cover - nothing finished, or no main table: nothing to keep
            pass
        raise
    finally:
        bar.close()
    return collect(root, path)


def _run_dask(tasks, scheduler: str, bar) -> None:
    from dask.distributed import Client, LocalCluster, as_completed as dask_completed

    cluster = None
    # distributed's nannies set their workers' variables (PYTHONHASHSEED, MALLOC_TRIM_THRESHOLD_) in this
    # process's environment: put it back as it was when the cluster is gone
    environ = dict(os.environ)
    if scheduler == "local":
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
    else:
        try:
            client = Client(scheduler, timeout=os.environ.get("METAEVAL_DASK_TIMEOUT", "10s"))
        except (OSError, TimeoutError) as exc:
            raise SweepError(f"cannot reach the Dask scheduler {scheduler!r}: {exc}") from None
    futures = []
    try:
        futures = client.map(_run_task, tasks, pure=False)
        for future in dask_completed(futures):
            future.result()
            bar.update()
    except KeyboardInterrupt:
        client.cancel(futures)
        raise
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
        for name in set(os.environ) - set(environ):
            del os.environ[name]
        os.environ.update(environ)


def collect(root: str | os.PathLike, notebook: str | os.PathLike) -> pd.DataFrame:
    """Concatenate every finished combination's main table with its parameters as columns into
    ``root/sweep.csv``; failed combinations go to ``root/failures.csv``."""
    root = Path(root)
    path = find_notebook(notebook)
    meta = notebook_metadata(path)
    main_table = meta.get("main_table")
    if not main_table:
        raise SweepError(f"{path.name} declares no main table (notebook metadata metaeval.main_table)")
    frames, failures = [], []
    for status_file in sorted(root.glob(f"*/{STATUS}")):
        status = json.loads(status_file.read_text())
        if status.get("state") != "done":
            failures.append({**status["params"], "folder": status["folder"], "error": status.get("error", "")})
            continue
        table = pd.read_csv(status_file.parent / main_table)
        for name, value in sorted(status["params"].items(), reverse=True):
            shown = json.dumps(value) if isinstance(value, (list, dict)) else value
            # a table column of that name (notebook 00's "dataset") stays; the parameter is named apart
            table.insert(0, f"{name} (parameter)" if name in table.columns else name, shown)
        table.insert(0, "run", status["folder"])
        frames.append(table)
    result = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    write_table(result, root / "sweep.csv", index=False)
    fail_file = root / "failures.csv"
    if failures:
        write_table(pd.DataFrame(failures), fail_file, index=False)
    elif fail_file.exists():
        fail_file.unlink()
    return result
