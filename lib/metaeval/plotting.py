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
    from .scoring import atomic_write

    matplotlib.rcParams["svg.hashsalt"] = "metaeval"
    folder = Path(folder)
    paths = []
    for ext in ("png", "svg"):
        path = folder / f"{name}.{ext}"
        atomic_write(path, lambda tmp, ext=ext: fig.savefig(tmp, format=ext, metadata={"Date": None} if ext == "svg" else {"Software": None}))
        paths.append(path)
    return paths
