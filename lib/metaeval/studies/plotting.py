"""Figures saved reproducibly and never clipped: the same data give byte-identical PNG and SVG files on every run,
saved with a tight bounding box, and :func:`layout_problems` finds text cut by the canvas, text over text and
legends over data (the check ``save_figure`` runs when ``METAEVAL_FIGURE_CHECK`` is set, as ``make test`` does).
"""

from __future__ import annotations

import hashlib
import os
import textwrap
import warnings
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import numpy as np

__all__ = ["show_table", "html_cells", "interval_errorbar", "FigureLayoutError", "FigureLayoutWarning", "LayoutProblem",
           "delta_figure", "layout_problems", "save_figure", "use_compendium_style", "wrap_label"]

#: Extra room (inches) around the tight bounding box of a saved figure.
PAD_INCHES = 0.08
#: Overlaps smaller than this (pixels, in both directions) are antialiasing, not text over text.
_TOLERANCE_PX = 1.0


class FigureLayoutWarning(UserWarning):
    """A saved figure has text outside its canvas, text over text, or a legend over its data."""


class FigureLayoutError(ValueError):
    """Raised by :func:`save_figure` instead of :class:`FigureLayoutWarning` when ``METAEVAL_FIGURE_CHECK=raise``."""


@dataclass(frozen=True)
class LayoutProblem:
    """One layout defect of a figure: ``kind`` is ``"outside"``, ``"overlap"`` or ``"legend-over-data"``."""

    kind: str
    what: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.what}"


def wrap_label(text: str, width: int = 40) -> str:
    """Wrap a long axis label or title onto lines of at most ``width`` characters.

    >>> print(wrap_label("Spearman correlation with the expert relevance judgments", 30))
    Spearman correlation with the
    expert relevance judgments
    """
    return "\n".join(textwrap.wrap(text, width)) if len(text) > width else text


def html_cells(frame):
    """``frame`` with every text cell and label HTML-escaped (:func:`metaeval._markup.html_text`), for a pandas
    ``Styler``: unlike ``DataFrame.to_html``, a Styler writes its cells and headers into the HTML as they are, so a
    system or score named ``<script>...`` would run in the executed notebook. Numbers are unchanged.

    >>> import pandas as pd
    >>> shown = html_cells(pd.DataFrame({"<b>x</b>": ["<img src=x>", 1.5]}, index=["a&b", "c"]))
    >>> list(shown.columns), list(shown.index), shown.iloc[0, 0], shown.iloc[1, 0]
    (['&lt;b&gt;x&lt;/b&gt;'], ['a&amp;b', 'c'], '&lt;img src=x&gt;', 1.5)
    """
    import pandas as pd

    from metaeval._markup import html_text

    def cell(value):
        return html_text(value) if isinstance(value, str) else value

    def labels(index):
        if isinstance(index, pd.MultiIndex):
            return index.set_levels([level.map(cell) for level in index.levels])
        return index.map(cell)

    shown = frame.map(cell)
    shown.index, shown.columns = labels(frame.index), labels(frame.columns)
    return shown


def show_table(frame, *, digits: int = 3, index: bool | None = None, caption: str | None = None):
    """A DataFrame as a notebook shows it to a reader: numbers at ``digits`` decimals, headers in words
    (``tau_low`` -> "tau low"), no positional index column (a named index is kept), a caption if given.

    Returns a pandas ``Styler`` (its HTML carries the ``dataframe`` class the site formats; names from the user's
    data in it are escaped, :func:`html_cells`); the saved CSV keeps the full precision and the column names.

    Examples
    --------
    >>> import pandas as pd
    >>> html = show_table(pd.DataFrame({"tau_low": [0.12345], "n": [3]})).to_html()
    >>> "tau low" in html, "0.123" in html, "0.12345" in html
    (True, True, False)
    >>> html == show_table(pd.DataFrame({"tau_low": [0.12345], "n": [3]})).to_html()  # no random ids
    True
    """
    import pandas as pd

    frame = frame.to_frame() if isinstance(frame, pd.Series) else frame
    keep_index = index if index is not None else any(name is not None for name in frame.index.names)
    shown = frame.rename(columns=lambda c: str(c).replace("_", " ") if isinstance(c, str) else c)
    # pandas names a Styler's HTML ids from a random uuid: a reproducible id (from the table's content) keeps the
    # executed notebook byte-identical across reruns, and distinct tables get distinct ids
    uuid = hashlib.sha256(shown.to_csv().encode("utf-8")).hexdigest()[:8]
    styler = html_cells(shown).style.format(precision=digits, na_rep="–").set_table_attributes('class="dataframe"')
    styler = styler.set_uuid(uuid)
    if not keep_index:
        styler = styler.hide(axis="index")
    if caption:
        styler = styler.set_caption(caption)
    return styler


def interval_errorbar(ax, x, y, *, xerr=None, yerr=None, **kwargs):
    """``ax.errorbar`` for confidence intervals that need not contain their estimate.

    A percentile bootstrap interval can lie wholly on one side of the point estimate (few systems, a skewed
    statistic); matplotlib refuses such error bars ("must not contain negative values"). Then every interval of
    the call is drawn as a line from its lower to its upper end, exactly where it is, with the estimates as
    markers; otherwise this is ``ax.errorbar`` itself (the same figure, byte for byte).

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> _ = interval_errorbar(ax, [0, 1], [0.5, 0.2], yerr=[[0.1, -0.05], [0.2, 0.3]], fmt="o")
    >>> [round(float(v), 2) for v in ax.collections[0].get_segments()[1][:, 1]]  # the second interval
    [0.25, 0.5]
    >>> plt.close(fig)
    """
    err = xerr if xerr is not None else yerr
    if err is None:
        return ax.errorbar(x, y, **kwargs)
    lower, upper = (np.asarray(e, dtype=float) for e in err)
    if not (np.nanmin(lower, initial=0.0) < 0 or np.nanmin(upper, initial=0.0) < 0):
        return ax.errorbar(x, y, xerr=xerr, yerr=yerr, **kwargs)
    centre = np.asarray(x if xerr is not None else y, dtype=float)
    other = np.asarray(y if xerr is not None else x, dtype=float)
    line_kw = {"color": kwargs.get("color"), "linewidth": kwargs.get("elinewidth", 1.0)}
    if xerr is not None:
        ax.hlines(other, centre - lower, centre + upper, **line_kw)
    else:
        ax.vlines(other, centre - lower, centre + upper, **line_kw)
    kwargs = {k: v for k, v in kwargs.items() if k not in ("capsize", "elinewidth")}
    return ax.errorbar(x, y, **kwargs)


def use_compendium_style() -> None:
    """Headless backend, fixed SVG ids and a quiet style for every compendium figure."""
    matplotlib.use("Agg")
    # SVG element ids derive from svg.hashsalt, not from randomness; the saved file always holds every artist
    # (save_figure saves the tight bounding box), and savefig.bbox / pad_inches make the interactive view match it
    matplotlib.rcParams.update({"svg.hashsalt": "metaeval", "figure.dpi": 110, "savefig.dpi": 150,
                                "axes.spines.top": False, "axes.spines.right": False, "savefig.bbox": "tight",
                                "savefig.pad_inches": PAD_INCHES})


def _texts(fig, renderer):
    """The drawn, non-empty text artists of ``fig`` with their window extents (pixels)."""
    from matplotlib.text import Text

    hidden = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            span = (hi - lo) or 1.0
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                # located ticks outside the view limits are not drawn (Axis._update_ticks drops them)
                if not lo - 1e-9 * span <= tick.get_loc() <= hi + 1e-9 * span:
                    hidden.update({id(tick.label1), id(tick.label2)})
    out = []
    for artist in fig.findobj(Text):
        if id(artist) in hidden or not artist.get_visible() or not artist.get_text().strip():
            continue
        if artist.axes is not None and not artist.axes.get_visible():
            continue
        box = artist.get_window_extent(renderer)
        if box.width > 0 and box.height > 0:
            out.append((artist, box))
    return out


def _name(artist) -> str:
    text = " ".join(artist.get_text().split())
    return repr(text if len(text) <= 40 else text[:37] + "...")


def layout_problems(fig, *, canvas: str = "saved") -> list[LayoutProblem]:
    """Text cut off by the canvas, text drawn over text, and legends drawn over plotted data.

    Window extents come from the figure's renderer after a full draw (so every layout engine has run). A text
    is *outside* when its box leaves the canvas: with ``canvas="saved"`` the one :func:`save_figure` writes
    (the figure's tight bounding box plus :data:`PAD_INCHES`, which holds every artist that takes part in the
    layout), with ``canvas="figure"`` the figure's own size (what a plain ``savefig`` writes); two texts
    *overlap* when their boxes intersect by more than a pixel in both directions; a legend inside an axes is *over
    the data* when a plotted point or line vertex of that axes falls inside it.

    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots(figsize=(4, 3))
    >>> _ = ax.set(xticks=[], yticks=[])
    >>> _ = ax.set_title("a title far too long for a figure four inches wide", fontsize=16)
    >>> [str(p) for p in layout_problems(fig, canvas="figure")]
    ["outside: 'a title far too long for a figure fou...' extends outside the canvas"]
    >>> layout_problems(fig)  # save_figure saves the tight bounding box: nothing is cut
    []
    >>> _ = ax.text(0.5, 0.5, "A", transform=ax.transAxes); _ = ax.text(0.5, 0.5, "B", transform=ax.transAxes)
    >>> [str(p) for p in layout_problems(fig)]
    ["overlap: 'A' over 'B'"]
    >>> plt.close(fig)
    """

    from matplotlib.transforms import Bbox

    if canvas not in ("saved", "figure"):
        raise ValueError(f"canvas={canvas!r}: use 'saved' (what save_figure writes) or 'figure'")
    fig.canvas.draw()  # runs the layout engine; extents below are those of the saved figure
    renderer = fig.canvas.get_renderer()
    problems = []
    region = fig.bbox
    if canvas == "saved":
        inches = fig.get_tightbbox(renderer).padded(PAD_INCHES)
        region = Bbox(inches.get_points() * fig.dpi)
    texts = _texts(fig, renderer)
    for artist, box in texts:
        if (box.x0 < region.x0 - _TOLERANCE_PX or box.y0 < region.y0 - _TOLERANCE_PX
                or box.x1 > region.x1 + _TOLERANCE_PX or box.y1 > region.y1 + _TOLERANCE_PX):
            problems.append(LayoutProblem("outside", f"{_name(artist)} extends outside the canvas"))
    for i, (a, box_a) in enumerate(texts):
        for b, box_b in texts[i + 1:]:
            angle = a.get_rotation() % 90
            if angle and angle == b.get_rotation() % 90:
                # parallel slanted texts (rotated tick labels): their axis-aligned boxes overlap although the
                # glyphs, side by side along the slant, do not
                continue
            width = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
            height = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
            if width > _TOLERANCE_PX and height > _TOLERANCE_PX:
                problems.append(LayoutProblem("overlap", f"{_name(a)} over {_name(b)}"))
    legends = [(ax.get_legend(), [ax]) for ax in fig.axes] + [(legend, fig.axes) for legend in fig.legends]
    for legend, axes in legends:
        if legend is None or not legend.get_visible():
            continue
        box = legend.get_window_extent(renderer)
        for ax in axes:
            problem = _legend_over_data(ax, box)
            if problem:
                problems.append(problem)
    return problems


def _legend_over_data(ax, box) -> LayoutProblem | None:
    """A problem when a plotted point or vertex of ``ax`` lies inside the legend box ``box`` (pixels)."""
    from matplotlib.text import Text

    points = []
    for line in ax.get_lines():
        if line.get_visible() and len(line.get_xydata()):
            points.append(line.get_transform().transform(np.asarray(line.get_xydata(), dtype=float)))
    for coll in ax.collections:
        offsets = coll.get_offsets()
        if coll.get_visible() and len(offsets):
            points.append(coll.get_offset_transform().transform(np.asarray(offsets, dtype=float)))
    if not points:
        return None
    xy = np.concatenate(points)
    # only points drawn inside the axes count (a line continued past the view limits is clipped); NaN and
    # infinite points fall outside
    with np.errstate(invalid="ignore"):
        xy = xy[((xy >= ax.bbox.min) & (xy <= ax.bbox.max)).all(axis=1)]
    covered = int(box.count_contains(xy))  # strictly inside the legend box
    if covered:
        title = ax.get_title() or ax.get_ylabel() or "an axes"
        return LayoutProblem("legend-over-data", f"a legend covers {covered} plotted point(s) of "
                             f"{_name(Text(text=title))}")
    return None


def check_layout(fig, name: str = "figure") -> list[LayoutProblem]:
    """Run :func:`layout_problems` as ``METAEVAL_FIGURE_CHECK`` says: unset or ``off`` skips it, ``warn`` warns
    (:class:`FigureLayoutWarning`), ``raise`` raises :class:`FigureLayoutError`."""
    mode = os.environ.get("METAEVAL_FIGURE_CHECK", "off").strip().lower()
    if mode in ("", "off", "0", "no"):
        return []
    if mode not in ("warn", "raise"):
        raise ValueError(f"METAEVAL_FIGURE_CHECK={mode!r}: use off, warn or raise")
    problems = layout_problems(fig)
    if problems:
        message = f"{name}: " + "; ".join(str(p) for p in problems)
        if mode == "raise":
            raise FigureLayoutError(message)
        warnings.warn(message, FigureLayoutWarning, stacklevel=3)
    return problems


def save_figure(fig, folder: str | Path, name: str) -> list[Path]:
    """Save ``fig`` as ``name.png`` and ``name.svg`` in ``folder`` without timestamps; returns the paths.

    The files hold the figure's tight bounding box (plus :data:`PAD_INCHES`), so a title, label or legend that
    the layout pushed past the canvas is kept, never cut. With ``METAEVAL_FIGURE_CHECK`` set the figure's layout
    is checked first (:func:`check_layout`).
    """
    from metaeval._io import atomic_write

    matplotlib.rcParams["svg.hashsalt"] = "metaeval"
    check_layout(fig, name)
    folder = Path(folder)
    paths = []
    for ext in ("png", "svg"):
        path = folder / f"{name}.{ext}"
        metadata = {"Date": None} if ext == "svg" else {"Software": None}
        atomic_write(path, lambda tmp, ext=ext, metadata=metadata: fig.savefig(  # type: ignore[misc]
            tmp, format=ext, metadata=metadata, bbox_inches="tight", pad_inches=PAD_INCHES))
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
        ax.figure.text(0.01, 0.005, textwrap.fill(f"Key: {key}", 110), fontsize=7, va="bottom", ha="left")
    if title:
        # a title wider than the axes would run over the colorbar's label: wrap each line to the axes' width
        # (about 60% of the figure once the colorbar is placed; ~0.55 em per character at 10 pt)
        chars = max(24, int(0.6 * ax.figure.get_figwidth() * 72 / (0.55 * 10)))
        title = "\n".join(textwrap.fill(line, chars) for line in title.split("\n"))
        ax.set_title(title, fontsize=10, pad=12)  # clear of the colorbar's top tick label
    ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="p-value (significant cells)")
    ax.figure.tight_layout(rect=(0, 0.06 if key else 0, 1, 1))
    return ax


def delta_figure(delta, *, title: str = "", xlabel: str = "", units: str = "", ax=None):
    """Deutsch, Dror & Roth (2022)'s delta-correlation figure from a :func:`metaeval.studies.deutsch2022.delta_table`:
    tau and its 95% interval per metric and bucket.

    The percentile view (a ``percent`` column) draws one line per metric over the percent of system pairs used
    (the paper's Figure 6); the fixed-band view one group of points per band, labelled with its pair count. The
    legend stands right of the axes, clear of every point and error bar. Buckets without a statistic draw nothing.
    """
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(delta["metric"]))
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 4.5))
    percentile = "percent" in delta.columns and delta["percent"].notna().any()
    width = 0.8 / len(names)
    # more than 10 metrics: tab20, so that no two metrics share a colour
    colors = [plt.get_cmap("tab20")(k % 20) if len(names) > 10 else f"C{k}" for k in range(len(names))]
    for k, name in enumerate(names):
        block = delta[delta["metric"] == name]
        yerr = np.vstack([block["statistic"] - block["ci_low"], block["ci_high"] - block["statistic"]])
        yerr = np.where(np.isnan(yerr), 0.0, yerr)
        if percentile:
            # small offsets keep the error bars of metrics at one percent apart
            x = block["percent"].to_numpy(dtype=float) + (k - (len(names) - 1) / 2) * min(0.6, 6.0 / len(names))
            interval_errorbar(ax, x, block["statistic"], yerr=yerr, fmt="-o", markersize=3, capsize=2, linewidth=1,
                              label=name, color=colors[k])
        else:
            x = np.arange(len(block)) - 0.4 + (k + 0.5) * width
            interval_errorbar(ax, x, block["statistic"], yerr=yerr, fmt="o", markersize=3, capsize=2, label=name,
                              color=colors[k])
    if percentile:
        percents = sorted(delta["percent"].dropna().unique())
        ax.set_xticks(percents, [f"{p:g}%" for p in percents])
        ax.set_xlabel(xlabel or "percent of system pairs used (closest first, by each metric's own |difference|)")
    else:
        first = delta[delta["metric"] == names[0]]
        ax.set_xticks(np.arange(len(first)), [f"[{lo:g}, {hi:g})\n{int(n)} pairs"
                                              for lo, hi, n in zip(first["low"], first["high"], first["n_pairs"])])
        # half a band of room at each end: with few bands the outer labels ran into the y label
        ax.set_xlim(-0.75, len(first) - 0.25)
        ax.set_xlabel(xlabel or (f"|difference| ({units})" if units else "|difference|"))
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_ylabel("Kendall's τ over the pairs (95% Boot-Both CI)")
    if title:
        # a long dataset or score name (a user's folder) must not run the title over the y label: past 100
        # characters (the embedded datasets' titles are 97-99) it goes on two lines
        ax.set_title(title if len(title) <= 100 else textwrap.fill(title, 90), fontsize=10)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    ax.figure.tight_layout()
    return ax
