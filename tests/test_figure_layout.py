"""Figures are never clipped: the layout checker (metaeval.studies.plotting.layout_problems) finds text cut by the
canvas, text over text and legends over data; save_figure saves the tight bounding box; the library's figure
functions pass the check on small data.

The notebooks' own figures are checked where they are drawn: `make test` runs every notebook under nbval with
METAEVAL_FIGURE_CHECK=raise, so a figure with a layout problem fails its notebook's cell.
"""

import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from metaeval.studies import plotting, primer  # noqa: E402
from metaeval.studies.plotting import FigureLayoutError, FigureLayoutWarning, layout_problems  # noqa: E402


@pytest.fixture(autouse=True)
def _style_and_cleanup():
    plotting.use_compendium_style()
    yield
    plt.close("all")


def kinds(fig, **kw):
    return sorted(p.kind for p in layout_problems(fig, **kw))


def test_a_title_wider_than_the_figure_is_cut_by_the_canvas_but_kept_by_save_figure(tmp_path):
    fig, ax = plt.subplots(figsize=(3, 2.5), dpi=100)
    ax.set(xticks=[], yticks=[])
    ax.set_title("a title much too long for a figure of three inches", fontsize=14)
    ax.set_xlabel("x")
    assert kinds(fig, canvas="figure") == ["outside"]
    assert kinds(fig) == []  # what save_figure writes holds it
    with matplotlib.rc_context({"savefig.bbox": None}):  # save_figure itself, not only the style, keeps it
        png, _ = plotting.save_figure(fig, tmp_path, "wide")
    width = plt.imread(png).shape[1]
    assert width > 3 * 150  # savefig.dpi 150: the saved canvas grew beyond the 3-inch figure to keep the title


def test_overlapping_texts_and_a_y_label_over_tick_labels_are_found():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1], [1000000, 2000000])
    ax.set_ylabel("label")
    ax.yaxis.set_label_coords(-0.05, 0.5)  # the bug of learned_vs_fixed: the label sits on the tick labels
    problems = layout_problems(fig)
    assert [p.kind for p in problems] and all(p.kind == "overlap" for p in problems)
    assert any("'label'" in p.what for p in problems)
    fig2, ax2 = plt.subplots(figsize=(4, 3))
    ax2.plot([0, 1], [0, 1])
    ax2.set_ylabel("label")
    fig2.tight_layout()
    assert layout_problems(fig2) == []


def test_a_legend_over_the_data_is_found_and_one_beside_the_axes_is_not():
    x = np.linspace(0, 1, 50)
    fig, ax = plt.subplots(figsize=(5, 3))
    for k in range(3):
        ax.plot(x, x * (k + 1) / 3, label=f"curve {k}")
    ax.legend(loc="center")  # the middle curve runs through the centre
    assert kinds(fig) == ["legend-over-data"]
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.tight_layout()
    assert kinds(fig) == []
    # a figure legend over a panel (seaborn's legend after the figure's own tight_layout)
    fig3, axes = plt.subplots(1, 2, figsize=(6, 3))
    for a in axes:
        a.plot(x, np.full_like(x, 0.5), label="flat")  # runs through the middle of the panel, under the legend
        a.set_ylim(0, 1)
    fig3.legend(*axes[0].get_legend_handles_labels(), loc="center right")
    assert kinds(fig3) == ["legend-over-data"]


def test_slanted_parallel_tick_labels_are_not_overlaps_but_flat_crowded_ones_are():
    labels = [f"Boot-Method-{k}" for k in range(8)]
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.bar(labels, np.arange(8))
    ax.tick_params(axis="x", rotation=45)
    fig.tight_layout()
    assert kinds(fig) == []
    ax.tick_params(axis="x", rotation=0)
    assert "overlap" in kinds(fig)


def test_check_modes(monkeypatch, tmp_path):
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.text(0.5, 0.5, "A", transform=ax.transAxes)
    ax.text(0.5, 0.5, "B", transform=ax.transAxes)
    monkeypatch.setenv("METAEVAL_FIGURE_CHECK", "raise")
    with pytest.raises(FigureLayoutError, match="demo: overlap: 'A' over 'B'"):
        plotting.save_figure(fig, tmp_path, "demo")
    assert not list(tmp_path.iterdir())  # nothing written
    monkeypatch.setenv("METAEVAL_FIGURE_CHECK", "warn")
    with pytest.warns(FigureLayoutWarning, match="overlap"):
        plotting.save_figure(fig, tmp_path, "demo")
    monkeypatch.setenv("METAEVAL_FIGURE_CHECK", "off")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plotting.save_figure(fig, tmp_path, "demo")
    monkeypatch.setenv("METAEVAL_FIGURE_CHECK", "loud")
    with pytest.raises(ValueError, match="METAEVAL_FIGURE_CHECK='loud'"):
        plotting.check_layout(fig)


def _figures():
    rng = np.random.default_rng(0)
    steps = primer.levels_by_hand(primer.TOY_METRIC, primer.TOY_HUMAN)
    yield "primer.plot_levels", primer.plot_levels(primer.TOY_METRIC, primer.TOY_HUMAN, steps)
    studies = primer.sampling_distribution(8, 10, system_correlation=0.7, summary_correlation=0.4, n_studies=30,
                                           rng=rng)
    yield "primer.plot_sampling_distribution", primer.plot_sampling_distribution(studies)
    trials = primer.true_coverage(8, 10, system_correlation=0.7, summary_correlation=0.4, n_trials=5,
                                  n_resamples=30, rng=rng)
    yield "primer.plot_coverage", primer.plot_coverage(primer.coverage_summary(trials))
    yield "primer.plot_resampling_schemes", primer.plot_resampling_schemes(primer.resampling_counts(8, 10, rng=rng))
    data = primer.synthetic(8, 10, system_correlation=0.7, summary_correlation=0.4, rng=rng)
    dist = primer.bootstrap_distributions(data.metrics[0], data.human, n_resamples=50, rng=rng)
    yield "primer.plot_bootstrap_distributions", primer.plot_bootstrap_distributions(dist, statistic=0.5, title="t")
    names = ["ROUGE-1-F1", "ROUGE-2-F1", "ROUGE-L-F1", "BERTScore-F1", "QAEval-F1", "a much longer metric name"]
    p = pd.DataFrame(rng.uniform(0, 0.1, (6, 6)), index=names, columns=names)
    ax = plotting.significance_heatmap(p, title="Figure 5: Perm-Both (pearson), system level, Bonferroni per row",
                                       key="R: ROUGE; a key long enough to need wrapping " * 3)
    yield "plotting.significance_heatmap", ax.figure


@pytest.mark.parametrize("style", ["matplotlib", "compendium"])
def test_every_library_figure_function_passes_the_check(style):
    # under matplotlib's defaults and under the style every notebook sets (larger fonts: a long heatmap title
    # once ran over its colorbar's label only there, and only when an earlier test had set that style)
    import matplotlib as mpl
    import seaborn as sns
    from metaeval.studies.plotting import use_compendium_style

    with mpl.rc_context():
        mpl.rcdefaults()
        if style == "compendium":
            sns.set_theme(style="whitegrid", context="notebook", palette="deep")
            use_compendium_style()
        found = {name: [str(p) for p in layout_problems(fig)] for name, fig in _figures()}
    assert len(found) == 6
    assert {name: problems for name, problems in found.items() if problems} == {}
