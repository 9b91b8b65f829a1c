"""``make atlas``: every dataset-agnostic notebook on every atlas dataset, then the cross-dataset notebook 70.

Each notebook of ``notebooks/atlas_parameters.yml`` runs as one sweep (:func:`metaeval.run.sweep.run_sweep`, so
``--workers`` processes or a Dask ``--scheduler``) over the atlas datasets it applies to, into
``results/atlas/<notebook>/dataset=<name>__...``; a dataset a notebook cannot run on (no texts, too few systems,
another language, not downloaded) is not run and the index says why. Notebook 70 runs once over every dataset
into ``results/atlas/70_atlas``. ``results/atlas/README.md`` is the index: per dataset, each notebook's folder or
the reason it is missing, and the time per dataset.

Usage: ``python -m metaeval.run.atlas [--workers 2] [--scheduler ADDRESS] [--force] [--datasets a,b]
[--notebooks 00,10] [--output results/atlas]``.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path
from typing import Any, Mapping

from metaeval._io import atomic_write
from metaeval.run.notebooks import run_notebook
from metaeval.run.paths import absolute_path, combination_dir, find_notebook, notebooks_dir
from metaeval.run.sweep import STATUS, run_sweep

__all__ = ["load_parameters", "check_needs", "plan", "run_atlas", "write_index", "main"]

INDEX_MARK = "<!-- written by metaeval.run.atlas; rewritten by make atlas -->"
ATLAS_NOTEBOOK = "70_atlas"


def load_parameters(path: str | Path | None = None) -> dict[str, dict]:
    """``notebooks/atlas_parameters.yml``: notebook stem -> parameters (with ``needs``) or ``{skip: reason}``."""
    import yaml

    path = Path(path) if path is not None else notebooks_dir() / "atlas_parameters.yml"
    table = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(table, dict) or not all(isinstance(v, dict) for v in table.values()):
        raise ValueError(f"{path} must map notebook names to parameter mappings")
    return table


def check_needs(needs, entry, ds) -> str | None:
    """Why a dataset cannot run a notebook with these ``needs`` (None: it can).

    >>> from types import SimpleNamespace as S
    >>> check_needs(["texts", "systems>=4"], S(language="en"), S(has_texts=True, shape=(3, 10)))
    'only 3 systems (needs at least 4)'
    >>> check_needs(["metrics"], S(language="en"), S(has_texts=False, score_names=["mqm"], human_scores=["mqm"]))
    'no metric scores, and no summaries with references to compute ROUGE from: nothing to compare'
    """
    metrics = sorted(set(getattr(ds, "score_names", ())) - set(getattr(ds, "human_scores", ())))
    for need in needs or []:
        need = str(need)
        if need == "texts" and not ds.has_texts:
            return "no summaries and references (texts) in this dataset"
        if need == "metrics" and not ds.has_texts and not metrics:
            return "no metric scores, and no summaries with references to compute ROUGE from: nothing to compare"
        m = re.fullmatch(r"systems>=(\d+)", need)
        systems, what = ds.shape[0], "systems"
        if m and "metrics" in needs and metrics:  # the notebook analyses the stored metrics: the systems they cover
            systems = int(ds.scores[metrics].notna().groupby(level="system").any().any(axis=1).sum())
            what = "systems with metric scores" if systems < ds.shape[0] else what
        if m and systems < int(m.group(1)):
            return f"only {systems} {what} (needs at least {m.group(1)})"
        m = re.fullmatch(r"metric_scores([<>]=)(\d+)", need)
        if m and m.group(1) == "<=" and len(metrics) > int(m.group(2)):
            return (f"{len(metrics)} metric scores: this notebook tests every pair of them, more than the atlas budget "
                    f"allows (at most {m.group(2)}); run it on this dataset with -p metrics '[NAME, ...]'")
        if m and m.group(1) == ">=" and len(metrics) < int(m.group(2)):
            return (f"{len(metrics)} stored metric score(s): this notebook compares stored scores (it scores no texts) "
                    f"and needs at least {m.group(2)}")
        m = re.fullmatch(r"language=(\w+)", need)
        if m and entry.language.split("-")[-1].strip() != m.group(1):
            return f"texts in {entry.language!r}; this notebook handles {m.group(1)!r} only"
    return None


def plan(datasets=None, notebooks=None, parameters: Mapping[str, dict] | None = None):
    """``(runs, missing, loaded)``: notebook -> (datasets, fixed parameters); (notebook, dataset) -> reason;
    the atlas datasets that load here (name -> (entry, dataset)) with the reasons of those that do not."""
    from metaeval.studies.atlas import load_datasets

    parameters = dict(parameters if parameters is not None else load_parameters())
    loaded, not_loaded = load_datasets(list(datasets or []))
    runs: dict[str, tuple[list[str], dict]] = {}
    missing: dict[tuple[str, str], str] = {}
    for stem, spec in parameters.items():
        if notebooks and not any(stem.startswith(n) for n in notebooks):
            continue
        if "skip" in spec:
            for name in [*loaded, *not_loaded]:
                missing[(stem, name)] = f"not run: {spec['skip']}"
            continue
        fixed = {k: v for k, v in spec.items() if k != "needs"}
        ok = []
        for name, (entry, ds) in loaded.items():
            why = check_needs(spec.get("needs"), entry, ds)
            if why:
                missing[(stem, name)] = f"not applicable: {why}"
            else:
                ok.append(name)
        for name, why in not_loaded.items():
            missing[(stem, name)] = f"not run: {why}"
        if ok:
            runs[stem] = (ok, fixed)
    return runs, missing, (loaded, not_loaded)


def _statuses(root: Path) -> list[dict]:
    out = []
    for status_file in sorted(root.glob(f"*/*/{STATUS}")) + sorted(root.glob(f"*/*/*/{STATUS}")):
        try:
            status = json.loads(status_file.read_text())
        except (OSError, ValueError):
            continue
        status["path"] = status_file.parent.relative_to(root).as_posix()
        status["notebook"] = status_file.parent.relative_to(root).parts[0]
        out.append(status)
    return out


def write_index(root: Path, missing: Mapping[tuple[str, str], str], datasets: list[str], notebooks: list[str],
                atlas_run: dict | None, wall_seconds: float, current: set[str] | None = None,
                sources: Mapping[str, str] | None = None) -> Path:
    """``root/README.md``: per dataset, every notebook's folder or why it is missing; times per dataset.
    ``current``: the run folders (relative to ``root``) of this run's plan; a status left by another plan (older
    parameters) is not reported, so a failure listed is a failure of the code as it is. ``sources``: the folder
    a user's dataset was run from -> its name in ``datasets``."""
    index = root / "README.md"
    if index.exists() and INDEX_MARK not in index.read_text(encoding="utf-8"):
        raise FileExistsError(f"{index} was not written by make atlas; move it away first")
    done: dict[tuple[str, str], dict] = {}
    for status in _statuses(root):
        name = (sources or {}).get(status.get("params", {}).get("dataset"), status.get("params", {}).get("dataset"))
        if current is not None and not any(status["path"] == c or status["path"].startswith(c + ".") for c in current):
            continue
        if name is not None and status["notebook"] in notebooks:
            done[(status["notebook"], name)] = status
    lines = [INDEX_MARK, "# The atlas: every notebook on every dataset", "",
             "Written by `make atlas` (`python -m metaeval.run.atlas`; parameters in "
             "`notebooks/atlas_parameters.yml`). "
             f"Wall time of this run: {wall_seconds / 60:.1f} min.", ""]
    if atlas_run is not None:
        lines += [f"**Across datasets:** [`70_atlas/`](70_atlas/) ({atlas_run.get('state')}"
                  + (f", {atlas_run['seconds']:.0f} s" if atlas_run.get("seconds") else "")
                  + (f": {atlas_run['error']}" if atlas_run.get("error") else "")
                  + "): correlations with Boot-Both CIs next to the noise ceiling, partial conjunction tests and the "
                  "finding matrix (`70_atlas/conclusions.md`).", ""]
    lines += ["| dataset | notebooks run | notebook seconds |", "|---|---|---|"]
    for name in datasets:
        runs = [done[(nb, name)] for nb in notebooks if (nb, name) in done]
        ok = [r for r in runs if r.get("state") == "done"]
        lines.append(f"| {name} | {len(ok)} of {len(notebooks)} | {sum(r.get('seconds', 0) for r in runs):.0f} |")
    for name in datasets:
        lines += ["", f"## {name}", "", "| notebook | result |", "|---|---|"]
        for nb in notebooks:
            found = done.get((nb, name))
            if found is not None and found.get("state") == "done":
                cell = f"[{found['path']}]({found['path']}/) ({found.get('seconds', 0):.0f} s)"
            elif found is not None:
                error = str(found.get("error", "")).strip().splitlines()
                reason = error[-1] if error else "no error recorded"
                reason = reason if len(reason) <= 160 else reason[:157] + "..."  # one line: the folder has the rest
                cell = f"failed: {reason} ([{found['path']}]({found['path']}/))"
            else:
                cell = missing.get((nb, name), "not run: not in this run (--notebooks / --datasets)")
            lines.append(f"| {nb} | {cell.replace('|', '/')} |")
    atomic_write(index, lambda tmp: Path(tmp).write_text("\n".join(lines) + "\n", encoding="utf-8"))
    return index


def run_atlas(output: str | Path = "results/atlas", *, workers: int = 2, scheduler: str | None = None,
              force: bool = False, datasets=None, notebooks=None, cross: bool = True, report: bool = False) -> Path:
    """Run the atlas (see the module docstring) and write its index; returns the index path. A run this checkout
    made with the same notebook, library, data and parameters is not rerun (``force``: rerun everything), so a
    fresh clone reruns all; ``report``: then compare every run of the plan with the committed files (the
    reproduction report of ``make results``)."""
    from metaeval.studies.atlas import source_of

    start = time.perf_counter()
    root = absolute_path(output)
    root.mkdir(parents=True, exist_ok=True)
    runs, missing, (loaded, not_loaded) = plan(datasets, notebooks)
    current: dict[str, str] = {}  # run folder (relative to root) -> notebook, for the index and the report
    own = {source_of(n, e): n for n, (e, _) in loaded.items() if e.distribution == "user"}  # folder -> name
    mine: set[str] = set()  # the run folders of a user's dataset: nothing committed to compare them with
    for stem, (names, fixed) in runs.items():
        grid: dict[str, list[Any]] = {k: [v] for k, v in fixed.items()}
        grid["dataset"] = [source_of(n, loaded[n][0]) for n in names]  # a user's dataset: its folder
        current.update({f"{stem}/{combination_dir({**fixed, 'dataset': d})}": stem for d in grid["dataset"]})
        mine.update(f"{stem}/{combination_dir({**fixed, 'dataset': d})}" for d in grid["dataset"] if d in own)
        print(f"atlas: {stem} on {', '.join(names)}", flush=True)
        try:
            run_sweep(find_notebook(stem).name, grid, root / stem, workers=workers, scheduler=scheduler,
                      force=force, progress=False)
        except Exception as exc:  # noqa: BLE001 - e.g. sweep.csv not collectable; each run's status is on disk
            print(f"atlas: {stem}: the sweep stopped or its table was not collected ({type(exc).__name__}: "
                  f"{exc}); the index reports each run's own status", flush=True)
    atlas_run: dict | None = None
    if cross and (not notebooks or any(ATLAS_NOTEBOOK.startswith(n) for n in notebooks)):
        t0 = time.perf_counter()
        try:
            run_notebook(ATLAS_NOTEBOOK, {"datasets": [source_of(n, e) for n, (e, _) in loaded.items()],
                                          "output_dir": str(root / ATLAS_NOTEBOOK)})
            atlas_run = {"state": "done", "seconds": time.perf_counter() - t0}
        except Exception as exc:  # noqa: BLE001 - reported in the index; the per-dataset runs stay
            atlas_run = {"state": "failed", "error": f"{type(exc).__name__}: {str(exc).splitlines()[0]}",
                         "seconds": time.perf_counter() - t0}
    # every notebook of the table is listed, those outside --notebooks as "not in this run"
    stems = [s for s in load_parameters() if s != ATLAS_NOTEBOOK]
    index = write_index(root, missing, [*loaded, *not_loaded], stems, atlas_run, time.perf_counter() - start,
                        current=set(current), sources=own)
    if report:
        from metaeval.run.reproduction import reproduction_report

        pairs = [(stem, root / rel) for rel, stem in current.items() if rel not in mine and (root / rel / STATUS)
                 .is_file() and json.loads((root / rel / STATUS).read_text()).get("state") == "done"]
        if atlas_run is not None and atlas_run.get("state") == "done" and not own:
            pairs.append((ATLAS_NOTEBOOK, root / ATLAS_NOTEBOOK))
        if own:
            print(f"reproduction report: the runs on {', '.join(own.values())} are not compared (nothing committed "
                  "for your datasets)", flush=True)
        for line in reproduction_report(pairs).lines():
            print(line, flush=True)
    return index


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m metaeval.run.atlas", description=__doc__.split("\n\n")[0])
    p.add_argument("--output", default="results/atlas")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--scheduler", default=None)
    p.add_argument("--force", action="store_true", help="rerun finished combinations")
    p.add_argument("--datasets", default="", help="comma-separated atlas datasets, your dataset folders or imported "
                                                  "names (default: every registered one)")
    p.add_argument("--notebooks", default="", help="comma-separated notebook prefixes (default: all)")
    p.add_argument("--report", action="store_true", help="end with the reproduction report against the committed files")
    args = p.parse_args(argv)
    split = [s for s in args.datasets.split(",") if s]
    nbs = [s for s in args.notebooks.split(",") if s]
    index = run_atlas(args.output, workers=args.workers, scheduler=args.scheduler, force=args.force,
                      datasets=split, notebooks=nbs, report=args.report)
    print(f"atlas index: {index}")


if __name__ == "__main__":  # pragma: no cover
    main()
