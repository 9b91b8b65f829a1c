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
        atomic_write(path, lambda tmp, ext=ext, metadata=metadata: fig.savefig(tmp, format=ext, metadata=metadata))
        paths.append(path)
    return paths


def significance_heatmap(pvalues, *, alpha: float = 0.05, labels=None, title: str = "", ax=None, corrected=None):
    """Pairwise test outcomes as a heatmap: cell (i, j) is coloured when row i significantly beats column j.

    Parameters
    ----------
    pvalues : DataFrame or array (K, K)
        One-sided p-values, ``pvalues[i, j]`` for "row i beats column j".
    alpha : float
        Significance level; cells with p >= alpha stay blank.
    corrected : array (K, K) of bool, optional
        Cells that stay significant after a multiple-comparison correction get a dot.
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
    ax.grid(which="minor", color="#dddddd", linewidth=0.5)
    ax.tick_params(which="minor", length=0)
    if corrected is not None:
        ii, jj = np.nonzero(np.asarray(corrected) & (p < alpha))
        ax.scatter(jj, ii, s=6, c="white", marker="o")
    ax.set_xlabel("column metric (loses)")
    ax.set_ylabel("row metric (wins)")
    if title:
        ax.set_title(title, fontsize=10)
    ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="p-value (significant cells)")
    ax.figure.tight_layout()
    return ax
