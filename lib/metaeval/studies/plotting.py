"""Figures saved reproducibly: the same data give byte-identical PNG and SVG files on every run."""

from __future__ import annotations

from pathlib import Path

import matplotlib

__all__ = ["save_figure", "use_compendium_style"]


def use_compendium_style() -> None:
    """Headless backend, fixed SVG ids and a quiet style for every compendium figure."""
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "metaeval"  # SVG element ids derive from this, not from randomness
    matplotlib.rcParams["figure.dpi"] = 110
    matplotlib.rcParams["savefig.dpi"] = 150
    matplotlib.rcParams["axes.spines.top"] = False
    matplotlib.rcParams["axes.spines.right"] = False


def save_figure(fig, folder: str | Path, name: str) -> list[Path]:
    """Save ``fig`` as ``name.png`` and ``name.svg`` in ``folder`` without timestamps; returns the paths."""
    from metaeval._io import atomic_write

    matplotlib.rcParams["svg.hashsalt"] = "metaeval"
    folder = Path(folder)
    paths = []
    for ext in ("png", "svg"):
        path = folder / f"{name}.{ext}"
        metadata = {"Date": None} if ext == "svg" else {"Software": None}
        atomic_write(path, lambda tmp, ext=ext, metadata=metadata: fig.savefig(  # type: ignore[misc]
            tmp, format=ext, metadata=metadata))
        paths.append(path)
    return paths


def significance_heatmap(pvalues, *, alpha: float = 0.05, labels=None, title: str = "", ax=None, corrected=None,
                         what: str = "metric", key: str | None = None):
    """Pairwise test outcomes as a heatmap: cell (i, j) is coloured when row i significantly beats column j.

    Parameters
    ----------
    pvalues : DataFrame or array (K, K)
        One-sided p-values, ``pvalues[i, j]`` for "row i beats column j".
    alpha : float
        Significance level; cells with p >= alpha stay blank.
    corrected : array (K, K) of bool, optional
        Cells that stay significant after a multiple-comparison correction get a dot.
    what : str
        What the rows and columns are ("metric", "system"), for the axis labels.
    key : str, optional
        A key to the labels' abbreviations, printed under the figure.
    """
    import matplotlib.pyplot as plt
    import numpy as np
    import pandas as pd

    p = pvalues.to_numpy() if isinstance(pvalues, pd.DataFrame) else np.asarray(pvalues, dtype=float)
    if labels is None:
        labels = list(pvalues.index) if isinstance(pvalues, pd.DataFrame) else [str(i) for i in range(len(p))]
    K = len(labels)
    if ax is None:
        size = max(4.0, 0.38 * K + 2)
        _, ax = plt.subplots(figsize=(size + 1.2, size))
    shown = np.where(p < alpha, p, np.nan)
    image = ax.imshow(shown, cmap="viridis", vmin=0, vmax=alpha, interpolation="nearest")
    ax.set_xticks(range(K), labels, rotation=90, fontsize=8)
    ax.set_yticks(range(K), labels, fontsize=8)
    ax.set_xticks(np.arange(-0.5, K, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, K, 1), minor=True)
    ax.grid(False, which="major")  # a theme's major grid would cut through the cells
    ax.grid(which="minor", color="#dddddd", linewidth=0.5)
    ax.tick_params(which="minor", length=0)
    if corrected is not None:
        ii, jj = np.nonzero(np.asarray(corrected) & (p < alpha))
        ax.scatter(jj, ii, s=6, c="white", marker="o")
    ax.set_xlabel(f"column {what} (loses)")
    ax.set_ylabel(f"row {what} (wins)")
    if key:
        import textwrap

        ax.figure.text(0.01, 0.005, textwrap.fill(f"Key: {key}", 110), fontsize=7, va="bottom", ha="left")
    if title:
        ax.set_title(title, fontsize=10)
    ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="p-value (significant cells)")
    ax.figure.tight_layout(rect=(0, 0.06 if key else 0, 1, 1))
    return ax
