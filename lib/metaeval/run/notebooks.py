"""Run the compendium's parameterized notebooks with papermill.

A notebook's single source is its jupytext script (:mod:`metaeval.run.paths`): :func:`read_notebook` turns
it into an in-memory notebook and :func:`materialize` writes the ``.ipynb`` that papermill runs into a scratch
folder, so there is no second copy to keep in sync. :func:`run_notebook` executes one with overrides into a
temporary folder next to its output folder and renames it into place only when every cell succeeded, so
``results/`` never holds a half-written analysis; a failure names the notebook and cell.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable
from typing import Any, Mapping

import metaeval._resources as _resources
from metaeval.data.atlas import PAPER_DATASETS
from metaeval.run.outputs import (OutputDirError, check_target, failed_dir, keep_failed, read_manifest,
                                  remove_run_folder, staging_dir, swap_into_place, write_manifest)
from metaeval.run.params import ParameterError, check_choices, check_parameters
from metaeval.run.paths import (KERNEL_NAME, NotebookError, absolute_path, combination_dir, dataset_folder_name,
                                default_output_dir as _rule, find_notebook, list_notebooks, notebook_metadata,
                                notebook_parameters, notebooks_dir, output_path, parameter_docs, project_root,
                                read_notebook)
from metaeval.run.pool import cpu_seconds, quiet_after_interrupt, run_in_pool, stopped

# jsonschema (imported by nbformat, jupytext and papermill) builds a lark grammar of RFC 3987 when it is
# imported and the optional rfc3987-syntax package is installed (jupyter-events pulls it in): 0.9 s of CPU
# in every runner process, to check the "iri" string format, which no notebook schema uses. Marking the
# module absent before jsonschema loads makes jsonschema skip that one format checker (its documented
# behaviour when the package is missing); a process that already loaded jsonschema keeps what it has.
if "jsonschema" not in sys.modules:
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

__all__ = [
    "KERNEL_NAME",
    "project_root",
    "notebooks_dir",
    "list_notebooks",
    "find_notebook",
    "notebook_parameters",
    "parameter_docs",
    "notebook_metadata",
    "default_output_dir",
    "read_notebook",
    "materialize",
    "execute",
    "quiet_kernel_manager",
    "run_notebook",
    "check_run",
    "resolve_output_dir",
    "run_all",
    "merge_streams",
    "save_source_hook",
    "plan_all",
    "PlannedRun",
    "output_path",
    "NotebookError",
    "NotebookFailed",
    "RunResult",
]

def resolve_kernel(kernel_name: str | None = None) -> str:
    """The Jupyter kernel notebooks run in.

    ``kernel_name``, else ``$METAEVAL_KERNEL``, else the ``metaeval`` kernelspec that ``make setup``
    registers, else ``python3``: Jupyter's native kernel, i.e. the interpreter running this code. The last
    case is a plain ``pip install`` of the package, where no kernelspec was registered.
    """
    name = kernel_name or os.environ.get("METAEVAL_KERNEL") or KERNEL_NAME
    if name != KERNEL_NAME:
        return name
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        KernelSpecManager().get_kernel_spec(name)
        return name
    except NoSuchKernel:
        return "python3"


class NotebookFailed(NotebookError):
    """A cell of the notebook raised: the message names the notebook, the cell and the error."""


def materialize(notebook: str | os.PathLike, folder: str | os.PathLike) -> Path:
    """Write the ``.ipynb`` papermill runs for ``notebook`` into ``folder``; returns its path."""
    import nbformat

    path = find_notebook(notebook)
    target = Path(folder) / f"{path.stem}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(read_notebook(path), str(target))
    return target


def _same(a: Any, b: Any) -> bool:
    """Equal as parameter values (1000 == 1000.0, lists element-wise), but True != 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    try:
        return bool(a == b)
    except Exception:  # pragma: no cover - exotic literals
        return False


def resolve_output_dir(notebook: str | os.PathLike, parameters: Mapping[str, Any] | None = None) -> Path:
    """The folder a run writes to when its ``output_dir`` is None or not given (absolute path).

    * The canonical run (the notebook's defaults, on any dataset) writes to ``results/<paper>/<dataset>``,
      where ``paper`` is the notebook metadata ``metaeval.paper`` (or the notebook's name); notebooks of one
      paper share that folder, each replacing only its own files. A notebook whose parameters cell names an
      ``output_dir`` keeps it for its default dataset.
    * Any other parameters go to a new folder named from them,
      ``results/runs/<paper>/<dataset>/<notebook>/<name=value__...__hash>``, never over the canonical results.
    * A dataset given as a path is named by its resolved path (:func:`metaeval.run.paths.dataset_folder_name`:
      readable name plus a short hash), so two user folders of the same name never share results and a user
      folder named like an embedded dataset never replaces that dataset's results.

    Examples
    --------
    >>> resolve_output_dir("10").relative_to(project_root()).as_posix()
    'results/graham2015/summeval'
    >>> resolve_output_dir("10", {"dataset": "realsumm"}).relative_to(project_root()).as_posix()
    'results/graham2015/realsumm'
    >>> resolve_output_dir("10", {"seed": 3}).relative_to(project_root()).as_posix()
    'results/runs/graham2015/summeval/10_graham2015/seed=3__1391dc1f'
    >>> resolve_output_dir("20", {"dataset": "realsumm"}).relative_to(project_root()).as_posix()
    'results/deutsch2021/realsumm'
    """
    path = find_notebook(notebook)
    declared = notebook_parameters(path)
    parameters = dict(parameters or {})
    paper = _paper(path)
    dataset = parameters.get("dataset", declared.get("dataset"))
    changed = {k: v for k, v in parameters.items()
               if k not in ("output_dir", "dataset") and k in declared and not _same(v, declared[k])}
    name = dataset_folder_name(dataset)
    root = project_root()
    if changed:
        return root / "results" / "runs" / paper / name / path.stem / combination_dir(changed)
    default_dir = declared.get("output_dir")
    if isinstance(default_dir, str) and _same(dataset, declared.get("dataset")):
        return absolute_path(default_dir)
    return root / _rule(paper, dataset)


def default_output_dir(notebook: str | os.PathLike, dataset: Any = None) -> str:
    """``results/<paper>/<dataset>``: where a notebook writes when ``output_dir`` is None (the paper comes from
    the notebook metadata ``metaeval.paper``, the dataset name from the ``dataset`` parameter or path)."""
    return _rule(_paper(find_notebook(notebook)), dataset if dataset is not None else "default")


@dataclass(frozen=True)
class RunResult:
    notebook: str
    output_dir: Path
    executed: Path
    seconds: float


def check_run(notebook: str | os.PathLike, parameters: Mapping[str, Any] | None = None) -> tuple[Path, dict, Path]:
    """Everything a run needs, checked before anything runs: the notebook, its parameters (known names,
    typed values) and the output folder it may replace. Returns ``(path, parameters, final folder)``.

    Raises
    ------
    NotebookError
        Unknown notebook or parameter.
    metaeval.run.params.ParameterError
        A value of the wrong type for its parameter.
    metaeval.run.outputs.OutputDirError
        An output folder the runner may not replace.
    """

    path = find_notebook(notebook)
    declared = notebook_parameters(path)
    parameters = dict(parameters or {})
    unknown = sorted(set(parameters) - set(declared))
    if unknown:
        raise NotebookError(
            f"{path.name} does not declare parameter(s) {unknown}; it declares: {', '.join(declared)}"
        )
    if "output_dir" not in declared:
        raise NotebookError(f"{path.name} must declare an output_dir parameter")
    from metaeval.data.datasets import known_datasets

    def located(dataset: Any) -> Any:
        # the kernel runs in the compendium root: a dataset folder named relative to where the user is must
        # reach it as an absolute path, and `some/dir/..` must mean the folder it names (a name stays a name)
        found = isinstance(dataset, str) and dataset and dataset not in known_datasets()
        return str(Path(dataset).expanduser().resolve()) if found and Path(dataset).expanduser().exists() else dataset

    if "dataset" in parameters:
        parameters["dataset"] = located(parameters["dataset"])
    if isinstance(parameters.get("datasets"), list):  # notebook 70's list (`-p datasets '[summeval, ./mine]'`)
        parameters["datasets"] = [located(d) for d in parameters["datasets"]]
    parameters = check_parameters(declared, parameters, where=path.name)
    check_choices(parameter_docs(path), parameters, where=path.name)  # `a | b | c` comments, before a kernel
    requested = parameters.get("output_dir")
    final = resolve_output_dir(path, parameters) if requested is None else absolute_path(requested)
    final = check_target(final, path.stem, given=requested, paper=_paper(path))
    return path, parameters, final


def _paper(path: Path) -> str:
    return str(notebook_metadata(path).get("paper") or path.stem)


def quiet_kernel_manager(log_path: str | os.PathLike | None):
    """A kernel manager whose kernel writes its own diagnostics (port notices, the KeyboardInterrupt it
    prints when stopped, zmq shutdown noise) to ``log_path`` instead of the terminal (None: the terminal):
    they are not errors of the notebook, whose errors arrive as cell outputs."""
    from jupyter_client.manager import AsyncKernelManager

    class QuietKernelManager(AsyncKernelManager):
        async def _async_launch_kernel(self, kernel_cmd, **kw):
            if log_path is None:
                return await super()._async_launch_kernel(kernel_cmd, **kw)
            with open(log_path, "ab") as handle:  # the kernel process holds its own copy from here
                kw.setdefault("stdout", handle)
                kw.setdefault("stderr", handle)
                await super()._async_launch_kernel(kernel_cmd, **kw)

    return QuietKernelManager


def run_notebook(
    notebook: str | os.PathLike,
    parameters: Mapping[str, Any] | None = None,
    *,
    kernel_name: str | None = None,
    log_output: bool = False,
    progress_bar: bool = False,
    kernel_log: str | os.PathLike | None = None,
    progress: Callable[[str], None] | None = None,
) -> RunResult:
    """Execute one notebook with parameter overrides; outputs appear atomically in its output folder.

    The folder is ``output_dir`` if given, else :func:`resolve_output_dir` (the canonical results only for
    the canonical parameters). It is replaced only if it is empty or holds a previous run of this notebook
    that nobody changed (see :mod:`metaeval.run.outputs`). A failed run leaves that folder untouched and
    keeps what it produced in ``<folder>.failed``, with ``FAILED.txt`` naming the cell. Ctrl-C stops the run,
    removes its staging folder and raises KeyboardInterrupt.

    Parameters
    ----------
    kernel_log : path, optional
        Append the kernel's own stdout/stderr there (default: discarded unless ``log_output``).
    progress : callable, optional
        Called with the notebook's latest progress-bar position (``"trials 412/1000"``) as it runs.

    Raises
    ------
    NotebookError
        Unknown notebook or parameter, or an output folder it may not replace (before anything runs);
        :class:`NotebookFailed` for a failed cell (which one, and the error).
    """
    from papermill.exceptions import PapermillExecutionError

    path, parameters, final = check_run(notebook, parameters)
    declared = notebook_parameters(path)
    from metaeval.data.formats import DataError
    from metaeval.run.incremental import fingerprint, record_run
    from metaeval.run.preflight import check_data

    try:  # the data checks that need no kernel: seconds, not a minute into cell 3
        check_data(path.stem, declared, parameters)
    except DataError as exc:
        raise NotebookError(f"{path.name}: {exc}") from None
    effective = {**declared, **parameters}
    inputs = fingerprint(path, effective)  # before the run: what it read, even if a file changes meanwhile
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = staging_dir(final)
    executed = staging / f"{path.stem}.ipynb"
    engine: dict[str, Any] = {} if progress is None else {"stderr_file": _ProgressRelay(progress)}
    scratch_log = (None if log_output or kernel_log
                   else Path(tempfile.mkstemp(prefix="metaeval-kernel-", suffix=".log")[1]))
    start = time.perf_counter()
    try:
        for attempt in range(_KERNEL_STARTS):
            try:
                execute(path, executed, _injected(declared, parameters, staging), kernel_name=kernel_name,
                         kernel_log=None if log_output else kernel_log or scratch_log, log_output=log_output,
                         progress_bar=progress_bar, **engine)
                break
            except RuntimeError as exc:
                # A kernel that never answered ran no cell, so starting another one is safe. This happened
                # once in a run-all of two concurrent kernels (jupyter_client's "Kernel didn't respond in 60
                # seconds"), which then stopped every other run: retry, then fail this run only.
                if not any(m in str(exc) for m in _KERNEL_START_FAILURES):
                    raise
                if attempt + 1 == _KERNEL_STARTS:
                    raise NotebookError(f"{path.name}: the Jupyter kernel did not start ({_KERNEL_STARTS} tries: "
                                        f"{exc}); check `jupyter kernelspec list` and the machine's load") from None
    except PapermillExecutionError as exc:
        if exc.ename == "KeyboardInterrupt":  # Ctrl-C reached the kernel too: an interrupt, not a failure
            remove_run_folder(staging)
            quiet_after_interrupt()
            raise KeyboardInterrupt from None
        message = (f"{path.name} failed in cell {exc.cell_index} (execution count {exc.exec_count}): "
                   f"{exc.ename}: {exc.evalue}")
        try:
            _retarget(executed, staging, final)
        except Exception:  # pragma: no cover - keep what there is, as it is
            pass
        if scratch_log is not None and scratch_log.exists() and scratch_log.stat().st_size:
            shutil.copyfile(scratch_log, staging / "kernel.log")
        failed = keep_failed(staging, final, path.stem, effective, message, paper=_paper(path))
        raise NotebookFailed(f"{message} (what it produced is in {_shown(failed)}; the previous results are "
                             "untouched)") from None
    except BaseException as exc:
        remove_run_folder(staging)
        if not isinstance(exc, Exception):
            quiet_after_interrupt()
        raise
    finally:
        if scratch_log is not None:
            scratch_log.unlink(missing_ok=True)
    _retarget(executed, staging, final)
    write_manifest(staging, path.stem, effective, paper=_paper(path))
    try:
        swap_into_place(staging, final, path.stem, paper=_paper(path))
    except BaseException:
        remove_run_folder(staging)
        raise
    # what ran here is this machine's record, not the committed manifest's (a fresh clone reruns everything)
    manifest = read_manifest(final, path.stem) or {}
    record_run(final, path.stem, inputs, manifest.get("files", {}))
    return RunResult(path.stem, final, final / executed.name, time.perf_counter() - start)


def execute(path: Path, output: Path, parameters: Mapping[str, Any], *, kernel_log: str | os.PathLike | None,
             kernel_name: str | None = None, **options: Any) -> None:
    """Run the notebook source ``path`` with papermill into ``output`` as the runner does: its ``.ipynb``
    generated in a scratch folder (never in the output folder), the kernel (:func:`resolve_kernel`) in the
    compendium root writing its own diagnostics to ``kernel_log`` (None: the terminal, :func:`quiet_kernel_manager`);
    ``options`` go to ``papermill.execute_notebook``. Raises what papermill raises (a failed cell:
    ``PapermillExecutionError``)."""
    import papermill

    with tempfile.TemporaryDirectory(prefix="metaeval-nb-") as scratch:
        papermill.execute_notebook(
            str(materialize(path, scratch)), str(output), parameters=dict(parameters),
            kernel_name=resolve_kernel(kernel_name), cwd=str(project_root()), shutdown_kernel="immediate",
            # concurrent kernels (sweeps) must not contend for IPython's history database
            extra_arguments=["--HistoryManager.enabled=False"],
            kernel_manager_class=quiet_kernel_manager(kernel_log), **options)


def _injected(declared: Mapping[str, Any], parameters: Mapping[str, Any], staging: Path) -> dict[str, Any]:
    """The parameters papermill injects: only those that differ from the notebook's defaults (giving a default
    explicitly, ``-p dataset summeval``, is the same run as not giving it, and must give the same executed
    notebook as ``run-all``), in a stable order, and the staging folder as ``output_dir``."""
    changed = {k: parameters[k] for k in sorted(parameters)
               if k != "output_dir" and not (k in declared and _same(parameters[k], declared[k]))}
    return {**changed, "output_dir": str(staging)}


#: What the executed notebook's injected ``output_dir`` says: a hand rerun of it (JupyterLab) must not write
#: into the folder the runner owns, so it writes to ``results/runs/.../interactive/`` like any hand run.
INJECTED_OUTPUT_DIR = ("output_dir = None  # the runner chose the folder; a rerun by hand writes to "
                       "results/runs/<paper>/<dataset>/interactive/")


def _neutral_output_dir(nb) -> None:
    for cell in nb.cells:
        if "injected-parameters" in cell.metadata.get("tags", []):
            cell.source = "\n".join(INJECTED_OUTPUT_DIR if line.startswith("output_dir = ") else line
                                    for line in cell.source.split("\n"))
    params = nb.metadata.get("papermill", {}).get("parameters")
    if isinstance(params, dict) and "output_dir" in params:
        params["output_dir"] = None


def _retarget(executed: Path, staging: Path, final: Path) -> None:
    """Make the executed notebook reproducible: show the final output folder rather than the staging one,
    drop run timestamps and durations, so a rerun with the same seeds gives the same file, and inject no
    ``output_dir`` (a rerun by hand must not write over the runner's folder)."""
    import nbformat

    text = executed.read_text(encoding="utf-8").replace(str(staging), str(_shown(final)))
    nb = nbformat.reads(text, as_version=4)
    for key in ("start_time", "end_time", "duration", "input_path", "output_path"):
        nb.metadata.get("papermill", {}).pop(key, None)
    _neutral_output_dir(nb)
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:02d}"  # papermill gives its injected cell a random id
        cell.metadata.pop("execution", None)
        for key in ("start_time", "end_time", "duration", "exception", "status"):
            cell.metadata.get("papermill", {}).pop(key, None)
        if cell.get("cell_type") == "code" and cell.get("outputs"):
            cell.outputs = merge_streams(_stable_outputs(cell.outputs))
    nbformat.write(nb, str(executed))


# One tqdm bar update, whatever its unit ("it/s", "sense/s", "trial/s") or description: "<desc>: 12%|##  | 3/25".
_PROGRESS = re.compile(r"\r?[^\r\n]*?\d+%\|[^\r\n|]*\|\s*[\d.]+[kMG]?/[\d.?]+[kMG]?[^\r\n]*")


_ADDRESS = re.compile(r" at 0x[0-9a-f]+>")


def merge_streams(outputs: list) -> list:
    """The outputs of a cell with each run of consecutive stream outputs merged: one ``stdout`` output, then one
    ``stderr`` output.

    The kernel (ipykernel's ``OutStream``) sends what a cell prints in pieces on a 0.2 s timer from another
    thread, and ``print`` writes its text and its newline in two calls: whether one printed line arrives as one
    stream message or two depends on when the timer fires, and so does the order of stdout and stderr between
    two flushes. Merging gives the same outputs on every run (nbformat keeps the text; a display between
    prints is a boundary, because ipykernel flushes both streams before it sends a display).

    >>> out = [{"output_type": "stream", "name": "stdout", "text": "a"},
    ...        {"output_type": "stream", "name": "stderr", "text": "w"},
    ...        {"output_type": "stream", "name": "stdout", "text": "b\\n"},
    ...        {"output_type": "display_data", "data": {}, "metadata": {}},
    ...        {"output_type": "stream", "name": "stdout", "text": "c"}]
    >>> [(o["output_type"], o.get("name"), o.get("text")) for o in merge_streams(out)]
    [('stream', 'stdout', 'ab\\n'), ('stream', 'stderr', 'w'), ('display_data', None, None), ('stream', 'stdout', 'c')]
    """
    merged: list = []
    block: dict[str, Any] = {}

    def close() -> None:
        for name in ("stdout", "stderr", *sorted(set(block) - {"stdout", "stderr"})):
            if name in block:
                merged.append(block[name])
        block.clear()

    for out in outputs:
        if out.get("output_type") != "stream":
            close()
            merged.append(out)
            continue
        text = out.get("text", "")
        text = "".join(text) if isinstance(text, list) else text
        name = out.get("name", "stdout")
        if name in block:
            block[name]["text"] += text
        else:
            block[name] = out
            out["text"] = text
    close()
    return merged


def _stable_outputs(outputs: list) -> list:
    """A cell's outputs without what differs on every run: progress-bar output (tqdm on stderr carries timings;
    the runner relays it to the terminal and run-all's log, see :class:`_ProgressRelay`, and an interactive run
    still shows it), memory addresses in plain-text reprs (``<Styler at 0x7f...>``) and this machine's paths in
    text, tracebacks and textual data (:func:`scrub_machine_paths`). Warnings on stderr are kept."""
    kept = []
    for out in outputs:
        if out.get("output_type") == "stream" and out.get("name") == "stderr":
            text = _PROGRESS.sub("", out.get("text", ""))
            if not text.strip():
                continue
            out["text"] = text.lstrip("\r\n") if text != out.get("text") else text
        if "text" in out:
            out["text"] = scrub_machine_paths(out["text"])
        if "traceback" in out:
            out["traceback"] = [scrub_machine_paths(line) for line in out["traceback"]]
        for mime, value in out.get("data", {}).items():
            if mime.startswith("text/") and isinstance(value, str):
                out["data"][mime] = scrub_machine_paths(_ADDRESS.sub(">", value) if mime == "text/plain" else value)
        kept.append(out)
    return kept


def _machine_paths() -> list[tuple[re.Pattern, str]]:
    """Paths of this machine that warnings and tracebacks print, and what an executed notebook shows instead:
    the library's folder as ``metaeval/``, installed packages as ``<site-packages>/``, the compendium root as
    nothing (paths relative to it), a kernel's cell file (``/tmp/ipykernel_1263/2683809839.py``) as ``<cell>``."""
    import site
    import sysconfig

    import metaeval

    pairs: list[tuple[str, str]] = [(str(Path(metaeval.__file__).resolve().parent) + os.sep, "metaeval" + os.sep)]
    packages = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *site.getsitepackages()}
    pairs += [(str(Path(p).resolve()) + os.sep, "<site-packages>" + os.sep) for p in packages if p]
    pairs += [(str(project_root()) + os.sep, ""), (str(Path.home()) + os.sep, "~" + os.sep)]
    patterns = [(re.compile(re.escape(a)), b) for a, b in sorted(pairs, key=lambda p: -len(p[0])) if len(a) > 1]
    patterns.append((re.compile(r"(?:/[^\s\"'/]+)*/ipykernel_\d+/\d+\.py"), "<cell>"))
    return patterns


def scrub_machine_paths(text: str) -> str:
    """``text`` without the paths of this machine (see :func:`_machine_paths`).

    >>> import metaeval, os
    >>> lib = os.path.dirname(metaeval.__file__)
    >>> scrub_machine_paths(f"{lib}/studies/deutsch.py:245: Warning; /tmp/ipykernel_12/345.py:9: UserWarning")
    'metaeval/studies/deutsch.py:245: Warning; <cell>:9: UserWarning'
    """
    for pattern, replacement in _machine_paths():
        text = pattern.sub(replacement.replace("\\", "\\\\"), text)
    return text


_TQDM = re.compile(r"(?:([^\r\n|:]*?):\s*)?\d+%\|[^|\r\n]*\|\s*(\d+)/(\d+)")


class _ProgressRelay:
    """A file-like object for papermill's ``stderr_file``: passes the latest progress-bar position of the
    notebook (tqdm on stderr) to ``callback`` as ``"trials 412/1000"``."""

    def __init__(self, callback: Callable[[str], None]) -> None:
        self.callback = callback

    def write(self, text: str) -> int:
        found = _TQDM.findall(text)
        if found:
            desc, done, total = found[-1]
            desc = desc.strip() or "progress"
            self.callback(f"{desc} {done}/{total}")
        return len(text)

    def flush(self) -> None:
        pass


#: Notebook metadata that JupyterLab (not the user) sets on a save: which kernel ran it, and jupytext's version.
_LAB_METADATA = ("kernelspec", "language_info")
_HEADER = re.compile(r"\A# ---\n(?:#.*\n)*?# ---\n")


def _header_metadata(header: str) -> Any:
    import yaml

    body = "\n".join(line[2:] if line.startswith("# ") else line[1:] for line in header.splitlines()[1:-1])
    data = yaml.safe_load(body) or {}
    meta = data.get("jupyter") if isinstance(data, dict) else None
    if isinstance(meta, dict):
        for key in _LAB_METADATA:
            meta.pop(key, None)
        representation = meta.get("jupytext", {}).get("text_representation", {})
        if isinstance(representation, dict):
            representation.pop("jupytext_version", None)
    return data


def keep_source_header(model: dict, path: str, contents_manager: Any = None) -> bool:
    """Keep a notebook source's jupytext header as it is on disk when a save from JupyterLab changes only how it
    is written: jupytext writes its YAML in its own style (``datasets: [a, b]`` becomes a block list, keys are
    sorted) and records the kernel JupyterLab ran; neither is an edit of the source, so opening, running and
    autosaving a source leaves its bytes unchanged. A header whose content the user edited is saved as edited.
    Returns True when the disk header was kept.

    >>> import pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> head = "# ---\\n# jupyter:\\n#   metaeval:\\n#     datasets: [a, b]\\n# ---\\n"
    >>> _ = (root / "20_x.py").write_text(head + "\\n# %%\\nx = 1\\n")
    >>> lab = ("# ---\\n# jupyter:\\n#   kernelspec:\\n#     name: python3\\n#   metaeval:\\n#     datasets:\\n"
    ...        "#     - a\\n#     - b\\n# ---\\n\\n# %%\\nx = 2\\n")
    >>> model = {"type": "file", "format": "text", "content": lab}
    >>> class CM:
    ...     root_dir = str(root)
    >>> keep_source_header(model, "20_x.py", CM()), model["content"] == head + "\\n# %%\\nx = 2\\n"
    (True, True)
    """
    content = model.get("content")
    if not isinstance(content, str) or not re.match(r"\d\d_[^/]*\.py$", os.path.basename(path)):
        return False
    disk_path = Path(getattr(contents_manager, "root_dir", "") or "") / path
    try:
        disk = disk_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    old, new = _HEADER.match(disk), _HEADER.match(content)
    if old is None or new is None or old.group(0) == new.group(0):
        return False
    try:
        same = _header_metadata(old.group(0)) == _header_metadata(new.group(0))
    except Exception:  # a header that is not YAML: saved as written
        return False
    if same:
        model["content"] = old.group(0) + content[new.end():]
    return same


def save_source_hook(model: dict, path: str, contents_manager: Any = None, **kwargs: Any) -> None:
    """Jupyter server pre-save hook (``jupyter/jupyter_server_config.d/metaeval.json``) for notebook sources: the
    parameters cell stays as on disk (:func:`metaeval.run.params.protect_parameters_cell`) and so does the
    jupytext header unless its content was edited (:func:`keep_source_header`); a source opened, run and saved
    without an edit keeps its bytes."""
    from metaeval.run.params import protect_parameters_cell

    protect_parameters_cell(model, path, contents_manager, **kwargs)
    keep_source_header(model, path, contents_manager)


@dataclass(frozen=True)
class PlannedRun:
    """One run of :func:`run_all`: a notebook on a dataset; ``optional`` runs may not apply to the dataset."""

    notebook: str
    dataset: str | None
    parameters: dict
    optional: bool
    label: str
    workdir: str
    expected: float = 0.0  # seconds, from the notebook's metadata: the order of a first run-all


# What every kernel prints at start, and is not a problem of the run: left out of run-all's log.
HARMLESS_KERNEL_NOTICES = ("Kernel is running over TCP without encryption",)


def plan_all(only: list[str] | None = None, workdir: str | os.PathLike = ".") -> list[PlannedRun]:
    """The runs of the default run: every notebook on every dataset its metadata ``metaeval.datasets`` lists;
    a notebook without that list runs on its default dataset and is tried on the other embedded datasets
    (``summeval``, ``realsumm``), where a failure means "does not apply" and is reported, not fatal."""
    books = [find_notebook(n) for n in only] if only else list_notebooks()
    runs = []
    for path in books:
        meta = notebook_metadata(path)
        if not only and meta.get("default_run") is False:
            continue  # e.g. 70_atlas: its own target (make atlas), too slow for the default run's budget
        declared = notebook_parameters(path)
        default = declared.get("dataset")
        listed = meta.get("datasets")
        choices: list[tuple[str | None, bool]]
        if "dataset" not in declared:
            choices = [(None, False)]
        elif listed:
            choices = [(str(d), False) for d in listed]
        else:
            choices = [(default, False)] + [(d, True) for d in PAPER_DATASETS if d != default]
        expected = meta.get("expected_seconds", 0.0)
        for dataset, optional in choices:
            params: dict[str, Any] = {} if dataset is None or _same(dataset, default) else {"dataset": dataset}
            label = path.stem + (f" ({dataset})" if dataset is not None else "")
            guess = expected.get(dataset, 0.0) if isinstance(expected, dict) else expected
            runs.append(PlannedRun(str(path), dataset, params, optional, label, str(workdir), float(guess or 0.0)))
    return runs


def run_order(runs: list[PlannedRun], last_times: Mapping[str, float] | None = None) -> list[PlannedRun]:
    """Longest first, so that the slowest run does not start last: as timed by the previous ``run-all``
    (``last_times``, label -> seconds), else as the notebook's metadata expects (``expected_seconds``); and no run
    starts right after a run of the same notebook while another notebook's run is waiting (it takes the next such
    run's place). Two runs of one notebook started together would both compile its numba kernels and fill the
    same cache entries on a fresh clone (measured: ~10 s of CPU each for notebooks 21 and 60); one started later
    reads what the first wrote.

    Examples
    --------
    >>> runs = [PlannedRun(nb, ds, {}, False, f"{nb} ({ds})", ".", t) for nb, ds, t in
    ...         [("21", "a", 110), ("21", "b", 95), ("60", "a", 50), ("60", "b", 45), ("00", "a", 3)]]
    >>> [r.label for r in run_order(runs)]
    ['21 (a)', '60 (a)', '21 (b)', '60 (b)', '00 (a)']
    """
    last_times = last_times or {}
    pending = sorted(runs, key=lambda r: -float(last_times.get(r.label, r.expected)))
    order: list[PlannedRun] = []
    while pending:
        previous = order[-1].notebook if order else None
        index = next((i for i, r in enumerate(pending) if r.notebook != previous), 0)
        order.append(pending.pop(index))
    return order


_KERNEL_STARTS = 2  # tries to start a kernel that does not answer (jupyter_client raises RuntimeError)
_KERNEL_START_FAILURES = ("Kernel didn't respond", "Kernel died before replying")


def _run_file(run: PlannedRun, suffix: str) -> Path:
    """The file of ``run`` in run-all's scratch folder by which its worker reports to the coordinator."""
    return Path(run.workdir) / (re.sub(r"[^A-Za-z0-9_.-]+", "_", run.label) + suffix)


def _run_planned(run: PlannedRun) -> dict[str, Any]:
    """Run one planned notebook in a worker; returns a status (never raises but KeyboardInterrupt)."""

    if stopped():
        return {"state": "cancelled"}
    progress_file, kernel_log = _run_file(run, ".progress"), _run_file(run, ".kernel.log")

    def progress(text: str) -> None:
        progress_file.write_text(text, encoding="utf-8")

    # the coordinator's ticks report the time since this moment (not since a tick first saw the run)
    _run_file(run, ".started").write_text(repr(time.time()), encoding="utf-8")
    progress("started")
    start = time.perf_counter()
    try:
        res = run_notebook(run.notebook, run.parameters, kernel_log=kernel_log, progress=progress)
        return {"state": "done", "seconds": time.perf_counter() - start, "output_dir": str(res.output_dir)}
    except (NotebookError, OutputDirError, ParameterError) as exc:
        state = "failed"
        if run.optional and isinstance(exc, NotebookFailed):
            state = "not applicable"
            _drop_failed(run)
        return {"state": state, "seconds": time.perf_counter() - start, "error": str(exc)}
    except Exception as exc:  # anything else fails this run, not the other runs of the run-all
        return {"state": "failed", "seconds": time.perf_counter() - start, "error": f"{type(exc).__name__}: {exc}"}


def _unchanged(run: PlannedRun) -> bool:
    """True when ``run``'s output folder holds an untouched run with the same inputs (run-all skips it)."""
    from metaeval.run.incremental import unchanged

    try:
        path, parameters, final = check_run(run.notebook, run.parameters)
        return unchanged(path, {**notebook_parameters(path), **parameters}, final, path.stem)
    except Exception:  # anything unusual (an unreadable manifest, a folder it may not replace): run it
        return False


def _drop_failed(run: PlannedRun) -> None:
    """An optional run that does not apply to its dataset leaves no ``.failed`` folder behind."""

    final = resolve_output_dir(run.notebook, run.parameters)
    stem = find_notebook(run.notebook).stem
    failed = failed_dir(final, stem)
    manifest = read_manifest(failed, stem)
    if manifest is not None and manifest.get("status") == "failed":
        remove_run_folder(failed)
    # and no empty folders made for it
    results = project_root() / "results"
    folder = final.parent
    while folder != results and folder.is_relative_to(results) and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent


def _shown(path: Path) -> Path:
    """``path`` relative to the compendium root when it is inside it."""
    return path.relative_to(project_root()) if path.is_relative_to(project_root()) else path


def _elapsed(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 60 else f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


def run_all(
    *,
    kernel_name: str | None = None,
    only: list[str] | None = None,
    jobs: int = 1,
    log: str | os.PathLike | None = None,
    echo: Callable[[str], None] | None = None,
    tick: float = 15.0,
    force: bool = False,
    report: bool = False,
) -> list[dict[str, Any]]:
    """The default run: every notebook on every dataset it applies to (:func:`plan_all`), ``jobs`` at a time.

    Each run is announced on the terminal (``[3/14] 21_deutsch2021_power (realsumm): started``), its progress
    relayed every ``tick`` seconds (``trials 412/1000, 2m10s``) and its end reported with the elapsed time;
    ``log`` receives the same lines plus each kernel's own diagnostics. Returns one status per run
    (``state``: done, failed, not applicable, unchanged). Ctrl-C stops every run and raises KeyboardInterrupt.
    A run whose notebook, imported library code, data and parameters are those of the run that wrote its
    output folder on this machine (and whose outputs nobody changed) is skipped (:mod:`metaeval.run.incremental`),
    unless ``force``. Staging folders of killed runs (no live process) are removed first, and said so. The last
    line gives the wall and CPU time (this process, its workers and their kernels). ``report``: then compare
    every output with the committed file (:func:`metaeval.run.reproduction.reproduction_report`) and print the
    result.
    """

    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise NotebookError(f"jobs must be an integer >= 1, got {jobs!r}")
    if kernel_name:
        os.environ["METAEVAL_KERNEL"] = kernel_name
    echo = echo or (lambda line: print(line, flush=True))
    if log is not None:
        Path(log).parent.mkdir(parents=True, exist_ok=True)
    log_handle = None if log is None else open(log, "a", encoding="utf-8")  # noqa: SIM115 - closed in finally

    def say(line: str) -> None:
        echo(line)
        if log_handle:
            log_handle.write(time.strftime("%H:%M:%S ") + line + "\n")
            log_handle.flush()

    times_file = _resources.project_root() / ".cache" / "run-all-times.json"
    try:
        last_times = json.loads(times_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        last_times = {}
    with tempfile.TemporaryDirectory(prefix="metaeval-run-all-") as work:
        runs = plan_all(only, work)
        total = len(runs)
        index = {run.label: i + 1 for i, run in enumerate(runs)}
        queue = run_order(runs, last_times)
        started = time.perf_counter()
        cpu_started = cpu_seconds()
        say(f"running {total} notebook runs, {jobs} at a time")
        from metaeval.run.outputs import clean_stale_under

        for stale in clean_stale_under(project_root() / "results"):
            say(f"removed {_shown(stale)}/: the staging folder of a run that was killed (its process is gone)")
        if log_handle:
            log_handle.write("(left out of this log: each kernel's notice that it runs over TCP without encryption;"
                             " kernels listen on 127.0.0.1 only)\n")
        results: dict[str, dict] = {}

        def tag(run: PlannedRun) -> str:
            return f"[{index[run.label]}/{total}] {run.label}"

        def done(run: PlannedRun, status: dict) -> None:
            results[run.label] = {"label": run.label, **status}
            if status["state"] == "cancelled":
                return
            last_times[run.label] = round(status.get("seconds", 0.0), 1)
            if status["state"] == "done":
                say(f"{tag(run)}: done in {_elapsed(status['seconds'])} -> {_shown(Path(status['output_dir']))}")
            elif status["state"] == "not applicable":
                say(f"{tag(run)}: does not apply ({status['error'].split(' (what it produced')[0]})")
            else:
                say(f"{tag(run)}: FAILED after {_elapsed(status['seconds'])}: {status['error']}")
            kernel_log = _run_file(run, ".kernel.log")
            if log_handle and kernel_log.exists() and kernel_log.stat().st_size:
                lines = [line for line in kernel_log.read_text(encoding="utf-8", errors="replace").splitlines(True)
                         if not any(known in line for known in HARMLESS_KERNEL_NOTICES)]
                if "".join(lines).strip():
                    log_handle.write(f"---- kernel diagnostics of {run.label} (not errors of the notebook) ----\n")
                    log_handle.writelines(lines)
                    log_handle.write("---- end ----\n")

        def progress() -> None:
            for run in runs:
                file, stamp = _run_file(run, ".progress"), _run_file(run, ".started")
                if run.label in results or not file.exists():
                    continue
                try:
                    since = time.time() - float(stamp.read_text(encoding="utf-8"))
                except (OSError, ValueError):  # written by the worker a moment before the progress file
                    since = 0.0
                text = file.read_text(encoding="utf-8").strip() or "started"
                say(f"{tag(run)}: {text}, running for {_elapsed(max(since, 0.0))}")

        if not force:
            for run in list(queue):
                if _unchanged(run):
                    queue.remove(run)
                    results[run.label] = {"label": run.label, "state": "unchanged", "seconds": 0.0}
                    say(f"{tag(run)}: unchanged since its last run (notebook, library code it imports, data, "
                        "parameters): skipped (--force reruns it)")
        try:
            run_in_pool(_run_planned, queue, jobs, on_done=done, on_tick=progress, tick=tick)
            states = [results[r.label]["state"] for r in runs if r.label in results]
            say(f"time: {time.perf_counter() - started:.1f} s wall, {cpu_seconds() - cpu_started:.1f} s CPU "
                f"({jobs} jobs, {os.cpu_count()} cores, {'forced' if force else 'incremental'})")
            say(f"finished {states.count('done')} of {total} runs in {_elapsed(time.perf_counter() - started)}"
                + (f"; {states.count('unchanged')} unchanged, skipped" if "unchanged" in states else "")
                + (f"; {states.count('failed')} FAILED" if "failed" in states else "")
                + (f"; {states.count('not applicable')} did not apply" if "not applicable" in states else ""))
            if report:
                from metaeval.run.reproduction import reproduction_report

                compared = [(Path(r.notebook).stem, resolve_output_dir(r.notebook, r.parameters)) for r in runs
                            if results.get(r.label, {}).get("state") in ("done", "unchanged")]
                for line in reproduction_report(compared).lines():
                    say(line)
        except KeyboardInterrupt:
            say(f"interrupted: {sum(r['state'] == 'done' for r in results.values())} runs finished and kept")
            raise
        finally:
            if log_handle:
                log_handle.close()
            try:
                times_file.parent.mkdir(parents=True, exist_ok=True)
                times_file.write_text(json.dumps(last_times, indent=1, sort_keys=True), encoding="utf-8")
            except OSError:  # pragma: no cover - a read-only checkout only loses the ordering hint
                pass
    return [results[r.label] for r in runs if r.label in results]
