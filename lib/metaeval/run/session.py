"""The one setup every analysis notebook runs after its parameters cell.

A notebook calls :func:`start` once: it applies the compendium's plotting style, resolves the output folder,
loads the dataset and checks, in one place, that it has what the analysis needs (texts, complete scores),
and returns a :class:`Session` holding the dataset, the output folder and the random generator, with small
helpers to save tables, figures and generated text there.

>>> from metaeval.run.session import start
>>> nb = start("demo", "fabbri2020", output_dir=None, seed=0, scores=["expert.relevance"], resolve=False)
>>> nb.dataset.shape, nb.dataset.default_human
((16, 100), 'expert.relevance')
"""

from __future__ import annotations

import os
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from metaeval.run.paths import absolute_path, default_output_dir, interactive_output_dir, output_path

__all__ = ["Session", "start", "default_output_dir"]


def _resolve_output_dir(paper: str, dataset: str | os.PathLike, output_dir: str | os.PathLike | None) -> Path:
    if output_dir is None:
        # `metaeval run` always passes a folder (the canonical one for the notebook's defaults), so None means
        # the notebook runs by hand (JupyterLab). Its outputs then go beside the canonical results, never into
        # them: the runner owns `results/<paper>/<dataset>/` and refuses folders it did not write.
        output_dir = interactive_output_dir(paper, dataset)
        print(f"output_dir is None: outputs of this interactive run go to {output_dir}/")
    elif _owned_by_a_run(absolute_path(output_dir)):
        # an output_dir copied from an executed notebook, or typed by hand, naming a folder a run wrote: only
        # the runner replaces it (checking nobody changed it), never a hand run writing over it file by file
        redirect = interactive_output_dir(paper, dataset)
        print(f"output_dir {output_dir} holds the results of a `metaeval run`, which only the runner replaces: "
              f"outputs of this interactive run go to {redirect}/")
        output_dir = redirect
    return output_path(output_dir)


def _owned_by_a_run(target: Path) -> bool:
    """A folder a run or card wrote (its manifest) or one no run may write, unless it is the staging folder
    of the run now executing this notebook."""
    from metaeval._outputs import STAGING_MARK, _protected, read_manifests

    target = target.expanduser().resolve()
    if (target / STAGING_MARK).exists():
        return False
    return _protected(target) is not None or (target.is_dir() and bool(read_manifests(target)))


_UNSET: Any = object()


@dataclass
class Session:
    """What a notebook works with: the checked dataset, its output folder, its random generator and the human
    score it evaluates against (``human``: the parameter, or the dataset's default human score)."""

    paper: str
    dataset: Any
    out: Path
    rng: np.random.Generator
    seed: int | None
    human: str | None = None
    saved: list[Path] = field(default_factory=list)

    def name(self, score: str) -> str:
        """The display name of a score ("Relevance (expert)" for ``expert.relevance``)."""
        display = getattr(self.dataset, "display_name", None)
        return display(score) if display is not None else score

    def md(self, text: object) -> str:
        """``text`` (a name from the user's data: the dataset, a system, a score) as literal text in generated
        Markdown (:func:`metaeval._markup.md_text`): what :meth:`report` shows must quote names, never run them."""
        from metaeval._markup import md_text

        return md_text(text)

    def md_name(self, score: str) -> str:
        """The display name of a score as literal text in generated Markdown (``md(name(score))``)."""
        return self.md(self.name(score))

    def md_code(self, text: object) -> str:
        """``text`` (a name from the user's data) as a Markdown code span (:func:`metaeval._markup.md_code`)."""
        from metaeval._markup import md_code

        return md_code(text)

    def save_table(self, frame, name: str, **to_csv: Any) -> Path:
        """Write ``frame`` as ``<out>/<name>`` (CSV, atomically; floats at 10 significant digits unless
        ``float_format`` says fewer); keyword arguments go to ``to_csv``."""
        from metaeval._io import write_table

        path = write_table(frame, self.out / name, **to_csv)
        self.saved.append(path)
        return path

    def save_figure(self, fig, name: str) -> list[Path]:
        """Save ``fig`` as ``<out>/<name>.png`` and ``.svg`` (byte-reproducible)."""
        from metaeval.studies.plotting import save_figure

        paths = save_figure(fig, self.out, name)
        self.saved.extend(paths)
        return paths

    def report(self, text: str, name: str | None = None) -> None:
        """Show generated Markdown in the notebook (also from inside a loop) and, with ``name``, save it as
        ``<out>/<name>``. Names from the user's data enter ``text`` escaped (:meth:`md`, :meth:`md_name`, or
        the library's sentence functions, which escape the names they quote)."""
        from IPython.display import Markdown, display

        if name is not None:
            from metaeval._io import atomic_write

            path = self.out / name
            atomic_write(path, lambda tmp: Path(tmp).write_text(text.rstrip("\n") + "\n", encoding="utf-8"))
            self.saved.append(path)
        display(Markdown(text))


def _short_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                   file: Any = None, line: str | None = None) -> None:
    """Show a warning on its own line, under any progress bar (``tqdm.write`` clears and redraws the bars, so
    the two are never fused into one line), naming the library module instead of its absolute path."""
    from tqdm import tqdm

    path = Path(filename)
    parts = path.parts
    where = "/".join(parts[parts.index("metaeval"):]) if "metaeval" in parts else path.name
    tqdm.write(f"{category.__name__}: {message} ({where}:{lineno})", file=file or sys.stderr)


def _show_figures_inline() -> None:
    """In a Jupyter kernel, draw figures into the notebook (the saved files are rendered by Agg either way)."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is not None and type(shell).__name__ == "ZMQInteractiveShell":
        shell.run_line_magic("matplotlib", "inline")


def start(
    paper: str,
    dataset: str | os.PathLike,
    *,
    output_dir: str | os.PathLike | None = None,
    seed: int | None = 0,
    texts: bool = False,
    human: Any = _UNSET,
    scores: Sequence[str | None] = (),
    incomplete: str | None = None,
    purpose: str = "this analysis",
    quiet_rouge: bool = False,
    resolve: bool = True,
) -> Session:
    """Set up a notebook: style, output folder, dataset (checked once), random generator.

    Parameters
    ----------
    paper : str
        The paper the notebook reproduces (``graham2015``, ``lin2004``, ...): names the default output folder.
    dataset : str or path
        An embedded dataset name or a path that :func:`metaeval.datasets.load` reads.
    output_dir : str, path or None
        Where outputs go; None means ``results/<paper>/<dataset>`` (relative to the compendium root).
    seed : int or None
        Seed of the notebook's ``numpy.random.default_rng``.
    texts : bool
        The analysis needs summaries and references (raises a one-line ``DataError`` if the dataset has none).
    human : str or None
        Give it when the analysis uses a human score: the score's name, or None for the dataset's default human
        score (``Session.human`` holds the resolved name; it must be complete like ``scores``).
    scores : sequence of str
        Scores the analysis uses; only these must be complete (None entries are ignored).
    incomplete : {"raise", "drop-inputs", "drop-systems", "keep-nan"} or None
        What to do with missing cells of those scores: the notebook's ``incomplete`` parameter, or None when it
        has none (missing cells are then an error that says so).
    purpose : str
        Named in the error message when the dataset lacks what is needed.
    quiet_rouge : bool
        Silence ``RougeWarning`` (empty summaries scored as 0, as ROUGE-1.5.5 does), for notebooks that
        score thousands of summaries and report ROUGE's own behaviour.
    resolve : bool
        Create the output folder (False only for dry uses such as doctests).
    """
    import seaborn as sns

    from metaeval.data import datasets
    from metaeval.studies.plotting import use_compendium_style

    sns.set_theme(style="whitegrid", context="notebook", palette="deep")
    use_compendium_style()
    _show_figures_inline()
    warnings.showwarning = _short_warning
    if quiet_rouge:
        from metaeval.metrics.rouge import RougeWarning

        warnings.simplefilter("ignore", RougeWarning)
    ds = datasets.load(dataset)
    resolved = None
    if human is not _UNSET:
        resolved = human if human is not None else ds.default_human
    needed: list[str] = [s for s in dict.fromkeys([resolved, *scores]) if s is not None]
    # the error names what the notebook's user can do where they are: its `incomplete` parameter (keep-nan
    # only where its comment lists it), or, without one, complete the data or choose complete scores
    # (from the data layer, not run.preflight: a notebook's dependencies must not grow by the preflight's imports)
    from metaeval.data.datasets import INCOMPLETE_FIX, NO_INCOMPLETE_FIX

    fix = INCOMPLETE_FIX if incomplete is not None else NO_INCOMPLETE_FIX  # the runner's check's wording
    ds = ds.require(scores=needed, texts=texts, incomplete=incomplete or "raise",  # type: ignore[arg-type]
                    purpose=purpose, fix=fix)
    out = _resolve_output_dir(paper, dataset, output_dir) if resolve else Path(output_dir or ".")
    return Session(paper=paper, dataset=ds, out=out, rng=np.random.default_rng(seed), seed=seed, human=resolved)
