"""metaeval: ROUGE-1.5.5 and GRouge scoring, dataset import and description, notebooks, sweeps and report cards.

Examples::

    metaeval rouge in.jsonl out.jsonl                      # all 96 ROUGE-1.5.5 values per record
    metaeval rouge in.jsonl out.jsonl --methods R-1,R-L --refs AB --exceptions empty
    metaeval rouge in.jsonl out.jsonl --tokenizer unicode --lang el --stem yes  # Greek (not ROUGE-1.5.5)
    metaeval grouge in.jsonl out.jsonl --methods G-1,G-2,G-SU4 --lam 0.5   # GRouge (WordNet PPR)
    metaeval run 00 -p seed 1 -p output_dir results/tmp    # one notebook with overrides
    metaeval run-all                                       # every notebook into results/
    metaeval run-all --force --report                      # rerun all, compare with the committed files
    metaeval sweep 20 results/sweeps/ci -p coefficient pearson,kendall -p n_trials 100 --workers 2
    metaeval card my_metric.jsonl --dataset summeval --output card/  # report card of a new metric
    metaeval datasets                                      # the atlas: every dataset, embedded or downloaded
    metaeval describe realsumm                             # systems, inputs, texts, scores and their coverage
    metaeval import study.csv my_study                     # a table (CSV, TSV, parquet) -> a dataset folder
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

__all__ = ["main"]


def _methods(args) -> list[str]:
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    if not methods:
        raise SystemExit(f"metaeval {args.command}: --methods is empty")
    return methods


def _rouge_variants(args):
    from metaeval.metrics.variants import RougeVariant, parse_measure

    methods = _methods(args)
    choice = {"both": (False, True), "yes": (True,), "no": (False,)}
    modes = {"A": ("A",), "B": ("B",), "AB": ("A", "B")}[args.refs]
    # --stem/--stop not given: both for ROUGE-1.5.5's tokens, no for the Unicode tokenizer (opt-in stemming)
    tok = args.tokenizer
    stems = args.stem or ("both" if tok == "rouge" else "no")
    stops = args.stop or ("both" if tok == "rouge" else "no")
    if tok == "unicode" and stems != "no" and args.lang is None:
        raise SystemExit("metaeval rouge: --stem with --tokenizer unicode is a language's Snowball stemmer: "
                         "give --lang (e.g. el, ru, fr), or --stem no")
    variants = []
    for mode in modes:
        for m, stem, stop, stat in itertools.product(methods, choice[stems], choice[stops], "PRF"):
            variants.append(RougeVariant(parse_measure(m), stem, stop, stat, mode, args.exceptions, args.alpha,
                                         tok, args.lang))
    return variants


def _read_scoring_input(path: Path):
    """The scorers' own JSONL ``{id, peer, refs}``, or any dataset the loader reads (folder, records, table)."""
    from metaeval.data.texts import is_scorer_jsonl, read_dataset_texts

    if is_scorer_jsonl(path):
        return _read_rouge_input(path)
    texts = read_dataset_texts(path)
    if texts.skipped:
        print(f"{path}: {len(texts.skipped)} cells without a summary or references are not scored (e.g. "
              f"{', '.join(texts.skipped[:3])})", file=sys.stderr)
    return texts.ids, texts.peers, texts.refs, texts.keys


def _read_rouge_input(path: Path):
    ids: list[Any] = []
    peers: list[Any] = []
    refs: list[Any] = []
    keys: list[Any] = []
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise SystemExit(f"{path}:{lineno}: not UTF-8 text ({exc.reason} at byte {exc.start} of the line)")
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise SystemExit(f"{path}:{lineno}: not valid JSON ({exc.msg})")
            if not isinstance(rec, dict):
                raise SystemExit(f"{path}:{lineno}: expected an object with 'peer' and 'refs'")
            if "refs" not in rec or not isinstance(rec["refs"], list):
                raise SystemExit(f"{path}:{lineno}: 'refs' must be a list of reference texts (a dataset record with "
                                 "'summary' and 'references' is read as a dataset: give the whole file or folder)")
            peer = rec.get("peer")
            if peer is None:
                warnings.warn(f"{path}:{lineno}: 'peer' is missing or null; scored as an empty summary")
            elif not isinstance(peer, (str, list)):
                raise SystemExit(f"{path}:{lineno}: 'peer' must be a string, got {type(peer).__name__}")
            # a record without an id is named by its position, as the golden files do
            ids.append(rec.get("id", len(ids)))
            peers.append(peer)
            refs.append(rec["refs"])
            # carried to the output so that it loads back as a dataset (metaeval.datasets.load)
            keys.append({k: rec[k] for k in ("instance_id", "summarizer_id") if k in rec})
    return ids, peers, refs, keys


def _write_score_records(path: Path, ids, passthrough, refs, frame, keys, what: str) -> None:
    """One JSON record per input record, ``{"id", <passthrough fields>, "n_refs", "scores"}``; null for NaN."""
    from metaeval._io import atomic_write

    def write(tmp: Path):
        with open(tmp, "w", encoding="utf-8") as out:
            for i, rec_id in enumerate(ids):
                row = frame.iloc[i]
                scores = {k: (None if math.isnan(row[k]) else float(row[k])) for k in keys}
                record = {"id": rec_id, **passthrough[i], "n_refs": len(refs[i]), "scores": scores}
                out.write(json.dumps(record) + "\n")

    atomic_write(path, write)
    print(f"wrote {len(ids)} records x {len(keys)} {what} to {path}", file=sys.stderr)


def cmd_rouge(args) -> int:
    from metaeval.metrics.rouge import score
    from metaeval.metrics.text import split_ptb_sentences

    try:
        variants = _rouge_variants(args)
    except ValueError as exc:
        raise SystemExit(f"metaeval rouge: {exc}")
    ids, peers, refs, passthrough = _read_scoring_input(Path(args.input))
    if args.sentences == "ptb":
        split = lambda t: split_ptb_sentences(t) if isinstance(t, str) else t  # noqa: E731
        peers = [split(p) for p in peers]
        refs = [[split(r) for r in rs] for rs in refs]
    try:
        frame = score(peers, refs, variants, rounding=not args.no_round, columns="key", ids=ids)
    except (TypeError, ValueError) as exc:
        raise SystemExit(f"metaeval rouge: {exc}")
    _write_score_records(Path(args.output), ids, passthrough, refs, frame, [v.key for v in variants], "values")
    return 0


def cmd_grouge(args) -> int:
    from metaeval.metrics.grouge import parse_variant, score

    try:
        variants = [parse_variant(m, lam=args.lam, stem=args.stem == "yes", stop=args.stop == "yes",
                                  topk=None if args.topk == 0 else args.topk) for m in _methods(args)]
    except ValueError as exc:
        raise SystemExit(f"metaeval grouge: {exc}")
    ids, peers, refs, passthrough = _read_scoring_input(Path(args.input))
    try:
        frame = score(peers, refs, variants, ids=ids, columns="signature", progress=args.progress)
    except (TypeError, ValueError) as exc:
        raise SystemExit(f"metaeval grouge: {exc}")
    _write_score_records(Path(args.output), ids, passthrough, refs, frame, [v.signature for v in variants],
                         "GRouge values")
    return 0


def cmd_grouge_vectors(args) -> int:
    """Write the top-``topk`` PPR vectors of every sense GRouge needs for the first ``n_inputs`` inputs of
    each dataset (how ``data/wordnet30/ppr/`` was made; see data/README.md)."""
    from metaeval.data.datasets import load
    from metaeval.metrics.grouge import GRougeOptions, SenseVectors, sense_nodes

    from metaeval.run.paths import notebook_parameters

    defaults = notebook_parameters("50")  # notebook 50's default run is what the shipped vectors serve
    if args.n_inputs is None:
        args.n_inputs = defaults["n_inputs"]
    if args.topk is None:
        args.topk = defaults["topk"]
    if args.n_inputs is not None and args.n_inputs < 1:
        raise SystemExit(f"metaeval grouge-vectors: --n-inputs must be at least 1, got {args.n_inputs}")
    if args.topk < 1:
        raise SystemExit(f"metaeval grouge-vectors: --topk must be at least 1 (shipped vectors are truncated), "
                         f"got {args.topk}")
    opts = GRougeOptions(topk=args.topk)
    texts: list = []
    for name in args.dataset:
        ds = load(name)
        if args.n_inputs is not None:
            ds = ds.subset(inputs=list(ds.inputs)[: args.n_inputs])
        texts += [t for t in ds.summaries().ravel().tolist() if t is not None]
        texts += [r for refs in ds.references().ravel().tolist() if refs for r in refs]
    nodes = sense_nodes(texts, options=opts)
    store = SenseVectors(restart=opts.restart, iterations=opts.iterations, topk=opts.topk, cache=False,
                         progress=True)
    folder = Path(args.out_dir) if args.out_dir else store.wn.folder / "ppr"
    try:
        path = store.save(folder / f"{store.tag}.npz", nodes)
    except FileExistsError as exc:
        raise SystemExit(f"metaeval grouge-vectors: {exc}")
    print(f"{path}: {nodes.size} sense vectors (top {args.topk}) of {len(texts)} texts of "
          f"{', '.join(args.dataset)}")
    return 0


def cmd_run(args) -> int:
    from metaeval.run.notebooks import notebook_parameters, project_root, run_notebook
    from metaeval.run.params import read_flag

    declared = notebook_parameters(args.notebook)
    params = {name: read_flag(name, value, declared) for name, value in args.param or []}
    if args.preset:
        from metaeval.run.presets import PresetError, preset_parameters

        try:
            # the preset's values under the user's own -p overrides
            params = {**preset_parameters(args.notebook, args.preset), **params}
        except PresetError as exc:
            print(f"metaeval run: --preset: {exc}", file=sys.stderr)
            return 2
    out = params.get("output_dir")
    if isinstance(out, str) and out and not Path(out).expanduser().is_absolute() \
            and Path.cwd().resolve() != project_root().resolve():
        # a folder typed on the command line is where the user is, as for -p dataset and card --output (inside
        # a notebook, a relative output_dir is relative to the compendium root, where its kernel runs)
        params["output_dir"] = str(Path.cwd() / out)
    listed = params.get("datasets")
    if isinstance(listed, list) and listed:  # notebook 70: a dataset named that cannot be analysed stops here
        from metaeval.studies.atlas import check_names

        unusable = check_names([str(d) for d in listed])
        if unusable:
            print("metaeval run: -p datasets: " + "; ".join(f"{k}: {v}" for k, v in unusable.items()),
                  file=sys.stderr)
            return 2
    user_out = _user_output_dir(args.notebook, declared, params)
    if user_out is not None:
        params["output_dir"] = str(user_out)
        print(f"your dataset, run from outside the compendium: outputs go to {user_out} (set -p output_dir to choose)",
              file=sys.stderr)
    res = run_notebook(args.notebook, params, log_output=args.log)
    if params.get("output_dir") is None and "runs" in res.output_dir.parts:
        print("not the notebook's canonical parameters: the canonical results are untouched", file=sys.stderr)
    print(f"{res.notebook}: {res.seconds:.1f} s -> {res.output_dir}")
    return 0


def _user_output_dir(notebook: str, declared: dict, params: dict) -> Path | None:
    """Where a run on the user's own dataset, started outside the compendium, writes when no output_dir is given:
    ``./results/<paper>/<dataset>`` next to the user (the folder the compendium would use, under the current
    directory), not inside the installed or checked-out compendium. None otherwise."""
    from metaeval.data.datasets import known_datasets
    from metaeval.run.notebooks import project_root, resolve_output_dir

    if params.get("output_dir") is not None:
        return None
    named = [params.get("dataset", declared.get("dataset"))] + list(params.get("datasets") or [])
    if not any(isinstance(d, str) and d not in known_datasets() and Path(d).expanduser().exists() for d in named):
        return None
    cwd, root = Path.cwd().resolve(), project_root().resolve()
    if cwd == root or root in cwd.parents:
        return None
    return cwd / resolve_output_dir(notebook, params).relative_to(root)


def cmd_class(args) -> int:
    from metaeval.run.presets import run_preset

    run_preset("class", only=args.only)
    return 0


def cmd_run_all(args) -> int:
    from metaeval.run.notebooks import run_all

    results = run_all(only=args.only, jobs=args.jobs, log=args.log, force=args.force, report=args.report)
    return 1 if any(r["state"] == "failed" for r in results) else 0


def cmd_params(args) -> int:
    from metaeval.run.notebooks import find_notebook, parameter_docs

    params = parameter_docs(args.notebook)
    print(f"{find_notebook(args.notebook).stem}: set with -p NAME VALUE (a value of the type shown)")
    width = max((len(f"{p.name} = {p.default!r}") for p in params), default=0)
    for p in params:
        left = f"{p.name} = {p.default!r}".ljust(width)
        print(f"  {left}  [{p.type}]" + (f"  {p.help}" if p.help else ""))
    return 0


def cmd_prepare_ci(args) -> int:
    """Write every notebook with its small CI parameters injected (for nbval), without running it."""
    import papermill

    from metaeval.run.notebooks import list_notebooks, materialize, notebook_parameters
    from metaeval.run.presets import read_preset

    table = read_preset("ci")
    known = {p.stem for p in list_notebooks()}
    stale = sorted(set(table) - known)
    if stale:
        raise SystemExit(f"ci_parameters.yml names notebooks that do not exist: {stale}")
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    for path in list_notebooks():
        # one mapping of parameters = one run; a list of mappings = one run each (e.g. one per dataset)
        entry = table.get(path.stem, {})
        runs = entry if isinstance(entry, list) else [entry]
        declared = notebook_parameters(path)
        for k, run in enumerate(runs):
            name = path.stem if k == 0 else f"{path.stem}__{k}"
            params = dict(run or {})
            params.setdefault("output_dir", str(out / "results" / name))
            unknown = set(params) - set(declared)
            if unknown:
                raise SystemExit(f"ci_parameters.yml: {path.stem} does not declare {sorted(unknown)}")
            # the generated source stays outside `out`: nbval collects every .ipynb there
            with tempfile.TemporaryDirectory(prefix="metaeval-ci-") as scratch:
                source = materialize(path, scratch)
                papermill.execute_notebook(str(source), str(out / f"{name}.ipynb"), parameters=params,
                                           prepare_only=True)
    return 0


def cmd_sweep(args) -> int:
    from metaeval.run.paths import NotebookError, absolute_path, notebook_parameters
    from metaeval.run.sweep import load_grid, parse_flags, run_sweep

    grid = load_grid(args.grid) if args.grid else {}  # a SweepError is a user error of one line (_dispatch)
    try:
        declared = notebook_parameters(args.notebook)
    except NotebookError:  # run_sweep names the problem with the notebook
        declared = {}
    grid.update(parse_flags(args.param, declared))
    table = run_sweep(args.notebook, grid, args.output, workers=args.workers, scheduler=args.scheduler,
                      force=args.force)
    # where run_sweep wrote: a relative folder is relative to the compendium root, not to the current folder,
    # so name it in full (and look for failures there: from another folder they were missed, exit status 0)
    root = absolute_path(args.output)
    print(f"collected {len(table)} rows into {root / 'sweep.csv'}")
    failures = root / "failures.csv"
    if failures.exists():
        print(f"some combinations failed: see {failures}", file=sys.stderr)
        return 1
    return 0


def _card_folder(scores: str, dataset: str) -> str:
    """``card-<metric>-<dataset>``: readable names (a path's last component; ``R-2|stem=1|stop=0|F`` as
    ``R-2_stem=1_stop=0_F``), never a ``|``, ``/`` or a whole path inside a folder name; a dataset given as a
    path is named as its results folder is (its name and a short hash of its resolved path, so two folders
    called ``study/`` never share a card folder)."""
    import re

    from metaeval.data.datasets import readable_name
    from metaeval.run.paths import dataset_folder_name

    name = readable_name(scores) if ("/" in scores or Path(scores).exists()) else scores
    metric = re.sub(r"[^A-Za-z0-9=.+-]+", "_", Path(name).name).strip("_.") or "x"
    return f"card-{metric}-{dataset_folder_name(dataset)}"


def cmd_card(args) -> int:
    from metaeval.run.card import make_card

    named = ("metric", "human", "coefficient", "n_resamples", "planner_trials", "seed", "judge")
    options = {k: getattr(args, k) for k in named if getattr(args, k) is not None}
    # the card's errors then name --incomplete / --baselines (not a Python keyword or a notebook -p)
    options.update(incomplete=args.incomplete, called_from="cli")
    if args.baselines:
        options["baselines"] = [b.strip() for b in args.baselines.split(",") if b.strip()]
    output = args.output or _card_folder(args.scores, args.dataset)
    try:
        card = make_card(args.scores, dataset=args.dataset, output_dir=output, render=not args.no_html, **options)
    except (ValueError, KeyError, FileNotFoundError, RuntimeError) as exc:
        print(f"metaeval card: {exc}", file=sys.stderr)
        return 2
    print(card.summary)
    print(f"card written to {output}", file=sys.stderr)
    return 0


def cmd_import(args) -> int:
    from metaeval.data.tabular import import_table

    result = import_table(args.source, args.dest, doc=args.doc, system=args.system, summary=args.summary,
                          reference=args.reference, score=args.score, human=args.human, ignore=args.ignore,
                          labelled=args.labelled, dry_run=args.dry_run, show=print)
    if args.dry_run:
        print(f"{result.describe()} checked; nothing written (--dry-run)")
    else:
        print(f"wrote {result.describe()} to {result.dest} ({', '.join(result.files)}); next: "
              f"metaeval describe {result.dest}")
    return 0


def cmd_datasets(args) -> int:
    from dataclasses import asdict

    from metaeval.data.atlas import atlas_datasets
    from metaeval.data.datasets import known_datasets
    from metaeval.data.download import downloaded_path

    atlas = atlas_datasets()
    rows = []
    for entry in atlas.values():
        # a downloaded dataset is present in its default folder, or absent
        where = "embedded" if entry.distribution == "embedded" else (
            "present" if downloaded_path(entry.name).is_dir() else "absent")
        rows.append({**asdict(entry), "available": where})
    others = {n: d for n, d in known_datasets().items() if n not in atlas}
    if args.json:
        print(json.dumps({"atlas": rows, "also_loadable": others}, indent=2, ensure_ascii=False))
        return 0
    header = ("name", "available", "shape", "domain", "language", "task", "human scores (default first)",
              "annotators", "texts", "licence")
    table = [header]
    for r in rows:
        human = r["human_scores"][0] + (f" +{len(r['human_scores']) - 1}" if len(r["human_scores"]) > 1 else "")
        table.append((r["name"], r["available"], f"{r['systems']} x {r['inputs']}", r["domain"], r["language"],
                      r["task"], f"{human} ({r['judgment']})",
                      str(r["annotators"]) if r["annotators"] else "aggregated",
                      "yes" if r["texts"] else "no", r["licence"]))
    widths = [max(len(row[k]) for row in table) for k in range(len(header))]
    for row in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    if any(r["available"] == "absent" for r in rows):
        print("\nabsent: fetch with `metaeval download NAME [FOLDER]`")
    if others:
        print("\nalso loadable (the same data as above, other files):")
        width = max(map(len, others))
        for name, description in others.items():
            print(f"  {name:<{width}}  {description}")
    print("\nmore: metaeval describe NAME; provenance and licences: data/README.md, data/atlas/NAME/PROVENANCE.md")
    return 0


def cmd_download(args) -> int:
    from metaeval.data.download import download

    download(args.name, args.folder, base_url=args.base_url, force=args.force, show=print)
    return 0


def cmd_describe(args) -> int:
    from metaeval.data.datasets import load

    print(load(args.dataset).summary_text())  # a DataError is a user error of one line (_dispatch)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="metaeval", description=__doc__.split("\n")[0])
    from metaeval._version import __version__
    from metaeval.data.atlas import PAPER_DATASETS, names_text

    parser.add_argument("--version", action="version", version=f"metaeval {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("rouge", help="ROUGE-1.5.5 drop-in: JSONL {id, peer, refs} or a dataset -> {id, scores}")
    p.add_argument("input", help="JSONL {id, peer, refs}, or a dataset folder, JSONL records or table with texts")
    p.add_argument("output")
    p.add_argument("--methods", default="R-1,R-2,R-3,R-4,R-L,R-W1.2,R-S4,R-SU4",
                   help="comma-separated measures, e.g. R-1,R-9,R-L,R-W1.2,R-S*,R-SU4 (default: ROUGE-1.5.5's 8)")
    p.add_argument("--stem", choices=["both", "yes", "no"], default=None,
                   help="stemming (default: both; no with --tokenizer unicode)")
    p.add_argument("--stop", choices=["both", "yes", "no"], default=None,
                   help="stopword removal (default: both; no with --tokenizer unicode)")
    p.add_argument("--refs", choices=["A", "B", "AB"], default="A",
                   help="A: pool references (-f A); B: best reference (-f B, keys end in |f=B); AB: both")
    p.add_argument("--exceptions", choices=["full", "empty"], default="full",
                   help="WordNet exception table for stemming; 'empty' reproduces Porter-only installs")
    p.add_argument("--sentences", choices=["lines", "ptb"], default="lines",
                   help="sentence units for ROUGE-L/W: newlines (ROUGE's SPL) or PTB sentence-final tokens")
    p.add_argument("--alpha", type=float, default=0.5, help="F weight of recall (ROUGE's -p)")
    p.add_argument("--no-round", action="store_true", help="unrounded values instead of ROUGE's 5 decimals")
    p.add_argument("--tokenizer", choices=["rouge", "unicode"], default="rouge",
                   help="rouge: ROUGE-1.5.5's ASCII tokens; unicode: any script (keys end in |tok=unicode; not "
                        "ROUGE-1.5.5)")
    p.add_argument("--lang", default=None,
                   help="with --tokenizer unicode: the language (ISO 639-1, e.g. el) of the Snowball stemmer of --stem")

    p = sub.add_parser("grouge", help="GRouge (WordNet PPR semantic ROUGE): JSONL {id, peer, refs} or a dataset "
                                      "-> {id, scores}")
    p.add_argument("input", help="JSONL {id, peer, refs}, or a dataset folder, JSONL records or table with texts")
    p.add_argument("output")
    p.add_argument("--methods", default="G-1,G-2,G-SU4", help="comma-separated, e.g. G-1,G-2,G-3,G-SU4")
    p.add_argument("--lam", type=float, default=0.5, help="weight of the lexical match (1: ROUGE-N recall)")
    p.add_argument("--stem", choices=["yes", "no"], default="yes")
    p.add_argument("--stop", choices=["yes", "no"], default="no", help="stopword removal (lexical counts)")
    p.add_argument("--topk", type=int, default=128, help="dimensions kept per PPR vector (0: all, slow)")
    p.add_argument("--progress", action="store_true", help="show progress bars")

    p = sub.add_parser("grouge-vectors", help="precompute the PPR vectors GRouge needs for datasets' texts "
                                              "(how data/wordnet30/ppr/ was written)")
    p.add_argument("--dataset", nargs="+", default=list(PAPER_DATASETS))
    p.add_argument("--n-inputs", type=int, default=None, help="first N inputs of each dataset (default: notebook "
                                                               "50's n_inputs)")
    p.add_argument("--topk", type=int, default=None, help="dimensions kept per vector (default: notebook 50's topk)")
    p.add_argument("--out-dir", default=None, help="folder of the .npz (default: the WordNet folder's ppr/)")

    p = sub.add_parser("run", help="run one notebook with parameter overrides")
    p.add_argument("notebook", help="path, file name or number prefix, e.g. 00")
    p.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"))
    p.add_argument("--log", action="store_true", help="stream the notebook's output")
    p.add_argument("--preset", choices=["class", "ci"],
                   help="start from a preset's parameters (notebooks/<preset>_parameters.yml); -p overrides them")

    p = sub.add_parser("class", help="run every notebook with the class preset (notebooks/class_parameters.yml) "
                                     "into results/runs/class/, printing wall and CPU seconds")
    p.add_argument("--only", nargs="*", help="only these notebooks (names or number prefixes)")

    p = sub.add_parser("run-all", help="run every notebook with its defaults into results/")
    p.add_argument("--only", nargs="*", help="only these notebooks")
    p.add_argument("--jobs", "-j", type=int, default=1, help="notebooks run in parallel (e.g. the number of cores)")
    p.add_argument("--log", help="append progress lines and the kernels' own diagnostics to this file")
    p.add_argument("--force", action="store_true",
                   help="rerun every notebook, also those whose notebook, library code, data and parameters are "
                        "unchanged since this machine's run that wrote their outputs (skipped otherwise)")
    p.add_argument("--report", action="store_true",
                   help="at the end, compare every output with the committed file (git HEAD) at the stated "
                        "precision (numbers to 1e-9 or their last printed digit, text exactly, figures by pixels) "
                        "and say which differ and how ('25 of 25 runs reproduced every committed file')")

    p = sub.add_parser("sweep", help="run a notebook over a parameter grid and collect its main table")
    p.add_argument("notebook")
    p.add_argument("output", help="sweep folder (one subfolder per combination, sweep.csv)")
    p.add_argument("--grid", help="YAML or JSON file: {parameter: [values]}")
    p.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "V1,V2,..."))
    p.add_argument("--workers", type=int, default=1, help="parallel notebook runs on this machine")
    p.add_argument("--scheduler", help="Dask scheduler address, or 'local' for a LocalCluster")
    p.add_argument("--force", action="store_true", help="rerun finished combinations")

    p = sub.add_parser("params", help="list a notebook's parameters: default, type and meaning")
    p.add_argument("notebook")

    p = sub.add_parser("datasets", help="list the atlas datasets (embedded or downloaded): shape, domain, language, "
                                        "human scores, annotators, licence")
    p.add_argument("--json", action="store_true", help="every registered fact as JSON")

    p = sub.add_parser("describe", help="systems, inputs, references, texts and score coverage of a dataset")
    p.add_argument("dataset", help="an embedded name (see 'metaeval datasets') or a folder/JSONL file")

    p = sub.add_parser("download", help="fetch a dataset without a redistribution licence (pinned commit, "
                                        "sha256 checked) and convert it into a dataset folder")
    p.add_argument("name", help=names_text("download"))
    p.add_argument("folder", nargs="?", help="where to write it (default: $METAEVAL_DATASETS/NAME or the user data "
                                             "folder, where load(NAME) looks)")
    p.add_argument("--force", action="store_true", help="download again, replacing an earlier download of NAME")
    p.add_argument("--base-url", help="replaces https://raw.githubusercontent.com: a mirror URL, or a folder holding "
                                      "the files (offline; default $METAEVAL_DOWNLOAD_BASE)")

    p = sub.add_parser("import", help="a table (CSV, TSV, parquet; long or wide) -> a dataset folder (JSONL + yml)")
    p.add_argument("source", help="the table: .csv, .tsv or .parquet")
    p.add_argument("dest", help="the dataset folder to write (new, or written by an earlier import)")
    p.add_argument("--doc", help="document (input) id column (default: doc, document, doc_id, instance_id, ...)")
    p.add_argument("--system", help="system id column (default: system, model, summarizer_id, ...); none: wide "
                                    "format, columns FIELD:SYSTEM")
    p.add_argument("--summary", help="summary text column (default: summary, output, prediction, ...)")
    p.add_argument("--reference", nargs="+", help="reference column(s), or one column of lists")
    p.add_argument("--score", nargs="+", help="score columns (default: every other column)")
    p.add_argument("--human", nargs="+", help="human scores (default: by name, e.g. relevance, expert.*)")
    p.add_argument("--ignore", nargs="+", help="columns to leave out")
    p.add_argument("--labelled", help="column saying which rows humans labelled (1/0, true/false, yes/no): the "
                                      "human scores of the other rows are left out (then: metaeval card ... --judge)")
    p.add_argument("--dry-run", action="store_true", help="show the column roles and check every row; write nothing")

    p = sub.add_parser("prepare-ci", help="write notebooks with small CI parameters (for nbval)")
    p.add_argument("output")

    p = sub.add_parser("card", help="report card of a new metric: correlations, tests, planner (HTML + CSV)")
    p.add_argument("scores", help="the metric's scores (any format metaeval.datasets.load reads), or the name "
                                  "of a score of the dataset")
    p.add_argument("--dataset", required=True,
                   help="dataset with human scores: an embedded name (summeval, realsumm) or a folder or file of "
                        "your own data (e.g. one made by metaeval import)")
    p.add_argument("--baselines", help="comma-separated scores of the dataset to compare with "
                                       "(default: its ROUGE-1/2/L and BERTScore)")
    p.add_argument("--metric", help="which score of SCORES is the new metric (when it holds several)")
    p.add_argument("--human", help="human score (default: the dataset's)")
    p.add_argument("--judge", help="a score on every input (an LLM, a metric) where humans rated only some (their "
                                   "missing cells): adds prediction-powered intervals from all inputs (section "
                                   "few_labels); the other sections use the labelled inputs")
    # the coefficients Williams' test (which the card runs) applies to, from the one record of each (no scipy import)
    from metaeval.stats.coefficients import FISHER_COEFFICIENTS

    p.add_argument("--coefficient", choices=list(FISHER_COEFFICIENTS))
    p.add_argument("--n-resamples", type=int, help="bootstrap resamples and permutations (default 1000)")
    p.add_argument("--planner-trials", type=int, help="Monte-Carlo trials per planned size (default 200)")
    p.add_argument("--seed", type=int)
    p.add_argument("--incomplete", choices=["raise", "drop-inputs", "drop-systems"], default="raise",
                   help="when a score the card uses misses cells: stop and say what each choice leaves out "
                        "(raise, the default), or leave out the inputs (documents) / systems with a missing cell "
                        "(named in the card's notes)")
    p.add_argument("--output", help="output folder (default: card-<scores>-<dataset>)")
    p.add_argument("--no-html", action="store_true", help="only the CSV tables, no executed notebook")

    args = parser.parse_args(argv)
    return _dispatch(args)


class _UserExit(SystemExit):
    """Exit status 2 after a one-line message (already printed); ``str()`` is the message, for tests."""

    def __init__(self, message: str) -> None:
        super().__init__(2)
        self.message = message

    def __str__(self) -> str:
        return self.message


def _user_errors() -> tuple[type[BaseException], ...]:
    """Exceptions that mean "the user gave something wrong": one line on stderr, exit status 2."""
    import yaml

    from metaeval._resources import ChecksumError
    from metaeval.data.datasets import DataError
    from metaeval.run.notebooks import NotebookError
    from metaeval.run.outputs import OutputDirError
    from metaeval.run.params import ParameterError
    from metaeval.run.sweep import SweepError

    return (OSError, UnicodeError, yaml.YAMLError, NotebookError, OutputDirError, ParameterError, SweepError,
            DataError, ChecksumError)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text ({exc.reason} at byte {exc.start})"
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.filename}: {exc.strerror or exc}"
    return str(exc)


def _stdout_gone() -> bool:
    """True if standard output is a pipe whose reader has gone (poll's POLLERR; False where poll is missing, as
    on Windows). Then stdout is pointed at devnull, so that the interpreter's flush at exit cannot fail again
    (the recipe of Python's ``signal`` documentation, "Note on SIGPIPE")."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        gone = any(events & select.POLLERR for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll, or a stdout without a file descriptor
        return False
    if gone:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return gone


class _Terminated(SystemExit):
    """SIGTERM: stop like Ctrl-C (running notebooks clean up), exit status 143."""


def _on_sigterm(signum, frame) -> None:
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # one cleanup, not two
    raise _Terminated(128 + signum)


def _dispatch(args) -> int:
    import signal
    import threading

    prefix = f"metaeval {args.command}"
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        status = globals()[f"cmd_{args.command.replace('-', '_')}"](args)  # subcommand NAME runs cmd_NAME
        sys.stdout.flush()  # a reader that left is seen here (below), not by the interpreter's flush at exit
        return status
    except _Terminated:
        print(f"{prefix}: terminated", file=sys.stderr)
        raise
    except KeyboardInterrupt:
        print(f"{prefix}: interrupted", file=sys.stderr)
        return 130
    except SystemExit as exc:
        if isinstance(exc.code, str):
            message = exc.code if exc.code.startswith("metaeval") else f"{prefix}: {exc.code}"
            print(message, file=sys.stderr)
            raise _UserExit(message) from None
        raise
    except Exception as exc:
        from metaeval.run.notebooks import NotebookFailed

        if isinstance(exc, NotebookFailed):
            print(f"{prefix}: {exc}", file=sys.stderr)
            return 1
        if isinstance(exc, BrokenPipeError) and _stdout_gone():
            return 1  # the reader left (`metaeval datasets | head`): nothing to tell it, as Python's docs advise
        if isinstance(exc, _user_errors()):
            print(f"{prefix}: {' '.join(_describe(exc).split())}", file=sys.stderr)  # one line, always
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
