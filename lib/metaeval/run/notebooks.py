"""Run the compendium's parameterized notebooks with papermill.

Every notebook in ``notebooks/`` is a jupytext percent-format script ``NN_name.py``, the single source: its
first cell (``# %% tags=["parameters"]``) holds literal values, including ``output_dir`` (relative to the
compendium root) and ``seed``; its jupytext header carries the notebook metadata (``metaeval.main_table``,
``metaeval.paper``). :func:`read_notebook` turns a source into an in-memory notebook and
:func:`materialize` writes the ``.ipynb`` that papermill runs into a scratch folder, so there is no second
copy to keep in sync. :func:`run_notebook` executes one with overrides into a temporary folder next to its
output folder and renames it into place only when every cell succeeded, so ``results/`` never holds a
half-written analysis; a failure names the notebook and cell.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from metaeval import _resources

__all__ = [
    "KERNEL_NAME",
    "project_root",
    "notebooks_dir",
    "list_notebooks",
    "find_notebook",
    "notebook_parameters",
    "notebook_metadata",
    "default_output_dir",
    "read_notebook",
    "materialize",
    "run_notebook",
    "run_all",
    "output_path",
    "NotebookError",
    "RunResult",
]

KERNEL_NAME = "metaeval"


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


class NotebookError(RuntimeError):
    """A notebook failed or was asked for something it does not offer."""


def project_root() -> Path:
    """The compendium root (``$METAEVAL_ROOT`` if set)."""
    return _resources.project_root()


def notebooks_dir() -> Path:
    return _resources.notebooks_root()


def output_path(output_dir: str | os.PathLike) -> Path:
    """Resolve a notebook's ``output_dir`` parameter: relative paths are relative to the compendium root,
    so a notebook writes to the same place whether run by papermill or opened in JupyterLab."""
    path = Path(output_dir)
    path = path if path.is_absolute() else project_root() / path
    path.mkdir(parents=True, exist_ok=True)
    return path


SOURCE_SUFFIX = ".py"


def list_notebooks() -> list[Path]:
    """The numbered analysis notebooks (jupytext sources ``NN_name.py``), in order."""
    return sorted(p for p in notebooks_dir().glob(f"[0-9]*{SOURCE_SUFFIX}"))


def find_notebook(name: str | os.PathLike) -> Path:
    """A notebook by path (``.py`` source or ``.ipynb``), file name or number prefix (``"00"``)."""
    path = Path(name)
    if path.suffix in (SOURCE_SUFFIX, ".ipynb") and path.is_file():
        return path
    matches = [p for p in list_notebooks()
               if p.stem == str(name) or p.stem.startswith(f"{name}_") or p.name == str(name)]
    if len(matches) == 1:
        return matches[0]
    known = ", ".join(p.stem for p in list_notebooks())
    raise NotebookError(f"unknown notebook {str(name)!r}; known: {known}")


def read_notebook(notebook: str | os.PathLike) -> Any:
    """The notebook as an ``nbformat`` node: a ``.py`` source is read with jupytext (percent format).

    Cells get stable ids (``cell-00``, ...) and the compendium's kernel, so the generated ``.ipynb`` is the
    same on every machine.
    """
    import jupytext
    import nbformat

    path = find_notebook(notebook)
    if path.suffix == ".ipynb":
        return nbformat.read(str(path), as_version=4)
    nb = jupytext.read(str(path), fmt="py:percent")
    nb.metadata.setdefault("kernelspec",
                           {"name": KERNEL_NAME, "display_name": "Python (metaeval)", "language": "python"})
    nb.metadata.setdefault("language_info", {"name": "python"})
    nb.metadata.pop("jupytext", None)
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:02d}"
    return nb


def materialize(notebook: str | os.PathLike, folder: str | os.PathLike) -> Path:
    """Write the ``.ipynb`` papermill runs for ``notebook`` into ``folder``; returns its path."""
    import nbformat

    path = find_notebook(notebook)
    target = Path(folder) / f"{path.stem}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(read_notebook(path), str(target))
    return target


def notebook_metadata(notebook: str | os.PathLike) -> dict[str, Any]:
    """The notebook's ``metaeval`` metadata (``main_table``: the CSV sweeps collect; ``paper``)."""
    return dict(read_notebook(notebook).metadata.get("metaeval", {}))


def notebook_parameters(notebook: str | os.PathLike) -> dict[str, Any]:
    """The parameters a notebook declares, with their default values (from its ``parameters`` cell).

    Raises
    ------
    NotebookError
        No cell tagged ``parameters``, or a statement in it that is not ``name = <literal>``.
    """
    import ast

    path = find_notebook(notebook)
    cells = [c for c in read_notebook(path).cells
             if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])]
    if not cells:
        raise NotebookError(f"{path.name} has no cell tagged 'parameters'")
    defaults: dict[str, Any] = {}
    for node in ast.parse(cells[0].source).body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            raise NotebookError(f"{path.name}: the parameters cell may only hold `name = literal` lines "
                                f"(line {node.lineno})")
        try:
            defaults[node.targets[0].id] = ast.literal_eval(node.value)
        except ValueError:
            raise NotebookError(f"{path.name}: parameter {node.targets[0].id!r} (line {node.lineno}) is not a "
                                "literal; the parameters cell holds literals only") from None
    return defaults


def default_output_dir(notebook: str | os.PathLike, dataset: Any = None) -> str:
    """``results/<paper>/<dataset>``: where a notebook writes when ``output_dir`` is None (the paper comes from
    the notebook metadata ``metaeval.paper``, the dataset name from the ``dataset`` parameter or path)."""
    from metaeval.run.session import default_output_dir as rule

    paper = notebook_metadata(notebook).get("paper") or find_notebook(notebook).stem
    return rule(paper, dataset if dataset is not None else "default")


@dataclass(frozen=True)
class RunResult:
    notebook: str
    output_dir: Path
    executed: Path
    seconds: float


def run_notebook(
    notebook: str | os.PathLike,
    parameters: Mapping[str, Any] | None = None,
    *,
    kernel_name: str | None = None,
    log_output: bool = False,
    progress_bar: bool = False,
) -> RunResult:
    """Execute one notebook with parameter overrides; outputs appear atomically in its ``output_dir``.

    Raises
    ------
    NotebookError
        Unknown notebook or parameter (before anything runs), or a failed cell (which one, and the error).
    """
    import papermill
    from papermill.exceptions import PapermillExecutionError

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
    requested = parameters.get("output_dir", declared["output_dir"])
    if requested is None:
        requested = default_output_dir(path, parameters.get("dataset", declared.get("dataset")))
    final = output_path(requested)
    staging = final.parent / f".partial-{final.name}-{os.getpid()}"
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    parameters["output_dir"] = str(staging)
    executed = staging / f"{path.stem}.ipynb"
    start = time.perf_counter()
    try:
        # papermill runs an .ipynb: generate it from the source outside the output folder
        with tempfile.TemporaryDirectory(prefix="metaeval-nb-") as scratch:
            source = materialize(path, scratch)
            papermill.execute_notebook(
                str(source),
                str(executed),
                parameters=parameters,
                kernel_name=resolve_kernel(kernel_name),
                cwd=str(project_root()),
                log_output=log_output,
                progress_bar=progress_bar,
                # concurrent kernels (sweeps) must not contend for IPython's history database
                extra_arguments=["--HistoryManager.enabled=False"],
                )
    except PapermillExecutionError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise NotebookError(
            f"{path.name} failed in cell {exc.cell_index} (execution count {exc.exec_count}): "
            f"{exc.ename}: {exc.evalue}"
        ) from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _retarget(executed, staging, final)
    # swap the finished folder into place: the old result stays until the new one is complete
    backup = final.parent / f".old-{final.name}-{os.getpid()}"
    if final.exists():
        os.replace(final, backup)
    os.replace(staging, final)
    shutil.rmtree(backup, ignore_errors=True)
    return RunResult(path.stem, final, final / executed.name, time.perf_counter() - start)


def _retarget(executed: Path, staging: Path, final: Path) -> None:
    """Make the executed notebook reproducible: show the final output folder rather than the staging one,
    and drop run timestamps and durations, so a rerun with the same seeds gives the same file."""
    import nbformat

    root = str(project_root()) + os.sep
    final_text = str(final)
    final_rel = final_text[len(root):] if final_text.startswith(root) else final_text
    text = executed.read_text(encoding="utf-8").replace(str(staging), final_rel)
    nb = nbformat.reads(text, as_version=4)
    nb.metadata.get("papermill", {}).pop("start_time", None)
    nb.metadata.get("papermill", {}).pop("end_time", None)
    nb.metadata.get("papermill", {}).pop("duration", None)
    nb.metadata.get("papermill", {}).pop("input_path", None)
    nb.metadata.get("papermill", {}).pop("output_path", None)
    _strip_progress(nb)
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:02d}"  # papermill gives its injected cell a random id
        cell.metadata.pop("execution", None)
        pm = cell.metadata.get("papermill")
        if pm:
            for key in ("start_time", "end_time", "duration", "exception", "status"):
                pm.pop(key, None)
    nbformat.write(nb, str(executed))


_PROGRESS = re.compile(r"\d+%\|.*\|.*(it/s|s/it|\?it)")


_ADDRESS = re.compile(r" at 0x[0-9a-f]+>")


def _strip_progress(nb) -> None:
    """Drop what differs on every run: progress-bar output (tqdm on stderr carries timings) and memory
    addresses in plain-text reprs (``<Styler at 0x7f...>``)."""
    for cell in nb.cells:
        if cell.get("cell_type") != "code":
            continue
        cell.outputs = [
            out for out in cell.get("outputs", [])
            if not (out.get("output_type") == "stream" and out.get("name") == "stderr"
                    and _PROGRESS.search(out.get("text", "")))
        ]
        for out in cell.outputs:
            plain = out.get("data", {}).get("text/plain")
            if isinstance(plain, str):
                out["data"]["text/plain"] = _ADDRESS.sub(">", plain)


def run_all(*, kernel_name: str | None = None, only: list[str] | None = None) -> list[RunResult]:
    """Run every notebook with its default parameters (the README's main command)."""
    from tqdm import tqdm

    results = []
    books = [find_notebook(n) for n in only] if only else list_notebooks()
    for path in tqdm(books, desc="notebooks", unit="nb"):
        results.append(run_notebook(path, kernel_name=kernel_name))
    return results
