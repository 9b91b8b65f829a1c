"""Where runs write and where notebooks come from: the leaf module of the running layer.

Output-folder naming (:func:`default_output_dir`, :func:`dataset_folder_name`, :func:`combination_dir`,
:func:`output_path`) and notebook-source reading (:func:`find_notebook`, :func:`read_notebook`,
:func:`notebook_parameters`, :func:`notebook_metadata`) live here, so that the runner
(:mod:`metaeval.run.notebooks`), the notebooks' setup (:mod:`metaeval.run.session`) and sweeps
(:mod:`metaeval.run.sweep`) share one rule for each without importing one another. This module imports no
other module of ``metaeval.run`` but :mod:`metaeval.run.params` (itself a leaf).

Every notebook in ``notebooks/`` is a jupytext percent-format script ``NN_name.py``, the single source: its
first cell (``# %% tags=["parameters"]``) holds literal values, including ``output_dir`` (relative to the
compendium root) and ``seed``; its jupytext header carries the notebook metadata (``metaeval.main_table``,
``metaeval.paper``, ``metaeval.expected_seconds``).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

import metaeval._resources as _resources
from metaeval._resources import notebooks_root as notebooks_dir, project_root

__all__ = [
    "KERNEL_NAME",
    "SOURCE_SUFFIX",
    "NotebookError",
    "project_root",
    "notebooks_dir",
    "output_path",
    "absolute_path",
    "list_notebooks",
    "find_notebook",
    "read_notebook",
    "notebook_metadata",
    "notebook_parameters",
    "parameter_docs",
    "dataset_folder_name",
    "default_output_dir",
    "interactive_output_dir",
    "combination_dir",
    "parameters_key",
]

KERNEL_NAME = "metaeval"
SOURCE_SUFFIX = ".py"


class NotebookError(RuntimeError):
    """A notebook failed or was asked for something it does not offer."""


def absolute_path(output_dir: str | os.PathLike) -> Path:
    """``output_dir`` made absolute (``~`` expanded; a relative path is relative to the compendium root),
    without creating it."""
    path = Path(output_dir).expanduser()
    return path if path.is_absolute() else project_root() / path


def output_path(output_dir: str | os.PathLike) -> Path:
    """Resolve a notebook's ``output_dir`` parameter and create the folder: relative paths are relative to
    the compendium root, so a notebook writes to the same place whether run by papermill or opened in
    JupyterLab."""
    path = absolute_path(output_dir)
    path.mkdir(parents=True, exist_ok=True)
    return path


# ----------------------------------------------------------------------------------------------------
# Notebook sources


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

    Raises
    ------
    NotebookError
        An ``.ipynb`` that is not a notebook (not JSON, or not valid nbformat), or a source jupytext cannot
        read.
    """
    path = find_notebook(notebook)
    # one run reads its notebook's parameters, metadata and cells several times: parsed once per version of
    # the file, handed out as copies (callers may edit them)
    return copy.deepcopy(_parse_notebook(path, _resources.file_state(path)))


@lru_cache(maxsize=64)
def _parse_notebook(path: Path, state: tuple) -> Any:
    """The notebook at ``path``; ``state`` (:func:`metaeval._resources.file_state`) keys the cache."""
    import jupytext
    import nbformat

    if path.suffix == ".ipynb":
        try:
            return nbformat.read(str(path), as_version=4)
        except (ValueError, UnicodeDecodeError, nbformat.reader.NotJSONError) as exc:
            # NotJSONError is a ValueError; a JSON file that is no notebook raises a ValidationError or KeyError
            raise NotebookError(f"{path} is not a Jupyter notebook ({_first_line(exc)}); give a notebook "
                                "source (notebooks/NN_name.py), its number, or a valid .ipynb") from None
        except (KeyError, AttributeError, TypeError, nbformat.ValidationError) as exc:
            raise NotebookError(f"{path} is not a valid Jupyter notebook ({type(exc).__name__}: "
                                f"{_first_line(exc)})") from None
    try:
        nb = jupytext.read(str(path), fmt="py:percent")
    except UnicodeDecodeError as exc:
        raise NotebookError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    nb.metadata.setdefault("kernelspec",
                           {"name": KERNEL_NAME, "display_name": "Python (metaeval)", "language": "python"})
    nb.metadata.setdefault("language_info", {"name": "python"})
    nb.metadata.pop("jupytext", None)
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:02d}"
    return nb


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def notebook_metadata(notebook: str | os.PathLike) -> dict[str, Any]:
    """The notebook's ``metaeval`` metadata (``main_table``: the CSV sweeps collect; ``paper``; ``datasets``: those
    of the default run; ``expected_seconds``: its duration there, a number or one per dataset, which orders the
    first ``run-all`` longest first)."""
    return dict(read_notebook(notebook).metadata.get("metaeval", {}))


def _parameters_cell(path: Path) -> str:
    cells = [c for c in read_notebook(path).cells
             if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])]
    if not cells:
        raise NotebookError(f"{path.name} has no cell tagged 'parameters'")
    return cells[0].source


def notebook_parameters(notebook: str | os.PathLike) -> dict[str, Any]:
    """The parameters a notebook declares, with their default values (from its ``parameters`` cell).

    Raises
    ------
    NotebookError
        No cell tagged ``parameters``, or a statement in it that is not ``name = <literal>``.
    """
    return {p.name: p.default for p in parameter_docs(notebook)}


def parameter_docs(notebook: str | os.PathLike) -> list:
    """The parameters of a notebook with type (from the literal) and meaning (the comment after it), as
    :class:`metaeval.run.params.Parameter` in the order of the parameters cell."""
    from metaeval.run.params import ParameterError, parse_parameters_cell

    path = find_notebook(notebook)
    try:
        return parse_parameters_cell(_parameters_cell(path), where=path.name)
    except ParameterError as exc:
        raise NotebookError(str(exc)) from None


# ----------------------------------------------------------------------------------------------------
# Output-folder names


def dataset_folder_name(dataset: str | os.PathLike | None) -> str:
    """The readable, collision-free folder name of a dataset in ``results/``.

    An embedded dataset is named by its name. A dataset given as a path is named by its resolved path: the
    last component (without ``.jsonl``) plus 8 hex digits of the sha256 of the resolved path, so two
    user folders that are both called ``study/`` never share results, and ``some/dir/..`` is named after
    the folder it means.

    Examples
    --------
    >>> dataset_folder_name("summeval")
    'summeval'
    >>> a, b = dataset_folder_name("/data/lab-a/study"), dataset_folder_name("/data/lab-b/study/")
    >>> a.startswith("study-") and b.startswith("study-") and a != b
    True
    >>> dataset_folder_name("/data/lab-a/study/x/..") == a
    True
    >>> dataset_folder_name("/data/my study/scores.jsonl")[:-9]
    'scores'
    """
    # imported here: `metaeval --help` and the runner's argument checks must not pay for pandas (data.datasets)
    from metaeval.data.datasets import known_datasets

    if dataset is None:
        return "default"
    text = str(dataset)
    if text == "default" or text in known_datasets():
        return text
    resolved = Path(text).expanduser().resolve()
    name = resolved.stem if resolved.suffix == ".jsonl" else resolved.name or "root"
    readable = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")[:60] or "dataset"
    digest = hashlib.sha256(str(resolved).encode("utf-8")).hexdigest()[:8]
    return f"{readable}-{digest}"


def default_output_dir(paper: str, dataset: str | os.PathLike | None) -> str:
    """``results/<paper>/<dataset>``: the folder of a notebook's canonical run (``dataset`` named by
    :func:`dataset_folder_name`).

    >>> default_output_dir("graham2015", "summeval")
    'results/graham2015/summeval'
    >>> default_output_dir("lin2004", "/home/me/my-study/").startswith("results/lin2004/my-study-")
    True
    """
    return f"results/{paper}/{dataset_folder_name(dataset)}"


def interactive_output_dir(paper: str, dataset: str | os.PathLike | None) -> str:
    """Where a notebook run by hand (JupyterLab, ``output_dir`` None) writes: beside the canonical results,
    never into them (``results/runs/<paper>/<dataset>/interactive``).

    >>> interactive_output_dir("graham2015", "summeval")
    'results/runs/graham2015/summeval/interactive'
    """
    return f"results/runs/{paper}/{dataset_folder_name(dataset)}/interactive"


def parameters_key(params: Mapping[str, Any]) -> str:
    """The parameters as canonical JSON (sorted keys): what folder hashes and seeds are derived from."""
    return json.dumps(params, sort_keys=True, default=str)


def combination_dir(params: Mapping[str, Any]) -> str:
    """A folder name: readable ``name=value`` parts plus a hash of the exact parameters.

    >>> combination_dir({"seed": 3})
    'seed=3__1391dc1f'
    """
    digest = hashlib.sha256(parameters_key(params).encode()).hexdigest()[:8]
    parts = [f"{name}={json.dumps(v) if isinstance(v, (list, dict)) else v}" for name, v in sorted(params.items())]
    readable = re.sub(r"[^A-Za-z0-9=._-]+", "-", "__".join(parts)).strip("-")[:80]
    return f"{readable}__{digest}"
