# ---
# jupyter:
#   jupytext:
#     notebook_metadata_filter: kernelspec,metaeval,-jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python (metaeval)
#     language: python
#     name: metaeval
#   metaeval:
#     datasets:
#     - summeval
#     - realsumm
#     expected_seconds: {summeval: 12, realsumm: 10}
#     main_table: correlations.csv
#     paper: card
# ---

# %% tags=["parameters"]
scores = "qa-eval.f1"  # the new metric's scores: a file metaeval.datasets.load reads, or a score of the dataset
                       # (a dataset without QAEval: its own first metric, as notebook 60's metric_x)
dataset = "summeval"  # dataset with human judgments: summeval | realsumm, or a folder or file of your own data
metric = None  # which score of `scores` is the new metric (None: the only one)
baselines = None  # scores of the dataset to compare with (None: its ROUGE-1/2/L and BERTScore)
human = None  # human score (None: the dataset's default)
judge = None  # a score on every input where humans rated some (None: no few-labels section)
coefficient = "pearson"  # pearson | spearman | kendall
n_resamples = 1000  # Boot-Both resamples per CI, Perm-Both permutations per test
confidence_level = 0.95
alpha = 0.05  # family-wise level of the tests against the baselines (Bonferroni)
target_power = 0.8  # power the planner aims at
planner_inputs = [0.5, 1, 2, 4, 8]  # planned numbers of documents, as multiples of the dataset's
planner_trials = 200  # Monte-Carlo trials per planned size
planner_resamples = 200  # permutations per planner test
seed = 0
incomplete = "raise"  # missing cells of the scores the card uses: raise | drop-inputs | drop-systems
called_from = "notebook"  # where the card runs, for the wording of its errors: notebook | cli | python
output_dir = None  # None: results/card/<dataset>/

# %% [markdown]
# # 61 · Report card of a metric
#
# One card for one metric on one dataset with human judgments: how well it correlates with the humans at the
# system, summary and global level, with 95 % Boot-Both confidence intervals (systems and inputs resampled,
# the method Deutsch et al. (2021) found best calibrated), next to the dataset's standard metrics; whether it
# is significantly better or worse than each of them (Perm-Both, both directions, Bonferroni over the
# baselines); whether the scores look normal (which decides whether Williams' test and Fisher intervals can
# be trusted); and, for every comparison the data cannot decide, how many documents a new study with the same
# systems would need (the planner, `metaeval.planning`). Everything below is computed by
# `metaeval.card.card_tables`; `metaeval card SCORES --dataset NAME` renders this notebook to HTML.

# %%
import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
from matplotlib.patches import Rectangle

from metaeval import card as cards
from metaeval.data.defaults import default_metric
from metaeval.run.session import start
from metaeval.studies.plotting import show_table

nb = start("card", dataset, output_dir=output_dir, seed=seed)
scores = default_metric(nb.dataset, scores, paper="qa-eval.f1", param="scores", own_first=True)
name = nb.dataset.display_name
card = cards.card_tables(
    scores, dataset=dataset, metric=metric, baselines=baselines, human=human, coefficient=coefficient,
    n_resamples=n_resamples, confidence_level=confidence_level, alpha=alpha, target_power=target_power,
    planner_inputs=planner_inputs, planner_trials=planner_trials, planner_resamples=planner_resamples, seed=seed,
    incomplete=incomplete, called_from=called_from, judge=judge)
files = card.write(nb.out)
nb.report(card.summary)

# %% [markdown]
# ## Provenance
#
# The dataset, the analysis signature (every setting that changes a number), the score signatures and the seeds.
# Row *k* of stage *s* of the tables below draws from `numpy.random.default_rng([seed, s, k])` (its `seed`
# column), so any single number can be reproduced with one library call.

# %%
prov = card.provenance
code = cards.md_code  # a user's names as code spans that no backtick in them can end
nb.report("\n".join([
    f"* dataset: {code(prov['dataset'])} ({prov['shape'][0]} systems × {prov['shape'][1]} inputs), human score "
    f"{code(prov['human'])}; new metric {code(prov['metric'])} from {code(prov['scores'])}",
    f"* signature: {code(prov['signature'])}",
    "* score signatures: " + ", ".join(code(v) for v in prov["score_signatures"].values()),
    f"* seeds: {prov['seeding']}; metaeval {prov['metaeval']}, numpy {prov['numpy']}",
]))

# %% [markdown]
# ## Correlations with Boot-Both confidence intervals

# %%
corr = card.correlations
levels = list(dict.fromkeys(corr["level"]))
fig, axes = plt.subplots(1, len(levels), figsize=(4 * len(levels), 0.4 * corr["metric"].nunique() + 1.5),
                         sharey=True, squeeze=False)
for ax, level in zip(axes[0], levels):
    block = corr[corr["level"] == level].iloc[::-1]
    for y, row in enumerate(block.itertuples()):
        ax.errorbar(row.r, y, xerr=[[row.r - row.low], [row.high - row.r]], fmt="o", capsize=3,
                    color="#C44E52" if row.role == "new" else "#4C72B0")
    ax.set_yticks(range(len(block)), [name(m) for m in block["metric"]])
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.locator_params(axis="x", nbins=5)  # wide intervals on small data: few ticks, never crowded
    ax.set_xlabel(f"{coefficient.capitalize()} r with {name(card.human)}")
    ax.set_title(f"{level} level")
fig.suptitle(f"{card.dataset}: {name(card.metric)} (red) and the baselines, {confidence_level:.0%} Boot-Both CIs")
fig.tight_layout()
nb.save_figure(fig, "correlations")
plt.show()
corr.drop(columns="seed").round(3)

# %% [markdown]
# ## Perm-Both tests against each baseline
#
# One Perm-Both permutation test per baseline of H0 "the new metric and the baseline correlate equally with the
# humans": `p_two_sided` (twice the smaller of the one-sided p-values of the same permutations, `p_new_better`
# and `p_baseline_better`), Bonferroni-corrected over the baselines of a level (`_bonferroni`); the verdict is
# that test at `alpha`, its direction the sign of `difference`. A non-significant test is no evidence that the
# two metrics are equal, and overlapping intervals in the figure above are no test at all. In the figure, each
# cell shows the difference in r and the adjusted p; its colour is -log10 of that p (red: the new metric
# correlates better, blue: the baseline does; the black lines on the colour bar are `alpha`), and a box and `*`
# mark the tests significant after the Bonferroni adjustment.

# %%
tests = card.tests
if len(tests):
    # colour: -log10 of the adjusted p, red where the new metric correlates better and blue where the baseline
    # does, so 0.028 and 0.070 differ in shade; the box and * mark the tests significant after Bonferroni
    grid = cards.significance_grid(tests, alpha=alpha, name=name)
    n_rows, n_cols = grid.evidence.shape
    # sized for the one-page report, where it is printed about 6 cm wide and shown about 460 px wide on a
    # 1,280 px screen: cell text of 9 pt keeps about 9.5 px there (a narrower figure ran the title of a long
    # metric name into the colour bar's label)
    fig, ax = plt.subplots(figsize=(1.4 * n_cols + 3.4, 0.6 * n_rows + 1.9))
    sns.heatmap(grid.evidence, vmin=-grid.limit, vmax=grid.limit, center=0, cmap="RdBu_r", annot=grid.labels,
                fmt="", annot_kws={"fontsize": 9}, linewidths=0.5, linecolor="white",
                cbar_kws={"label": "adjusted p\n(red: new better, blue: baseline better)"}, ax=ax)
    for (i, j) in zip(*np.nonzero(grid.significant.to_numpy())):
        ax.add_patch(Rectangle((j, i), 1, 1, fill=False, edgecolor="black", linewidth=2))
    cbar = ax.collections[0].colorbar
    ticks = [-grid.limit, -grid.boundary, 0, grid.boundary, grid.limit]
    cbar.set_ticks(ticks, labels=[f"{10 ** -abs(t):.3g}" for t in ticks])
    for t in (-grid.boundary, grid.boundary):
        cbar.ax.axhline(t, color="black", linewidth=1.5)
    ax.tick_params(axis="y", rotation=0)  # baseline names read across, never stacked
    ax.set_xlabel("level")
    ax.set_ylabel("baseline")
    ax.set_title(f"{name(card.metric)} vs each baseline: difference in r,\ntwo-sided Perm-Both p, Bonferroni "
                 f"(box, *: p < {alpha})", pad=12)  # clear of the colour bar's top label
    fig.tight_layout()
    nb.save_figure(fig, "tests")
    plt.show()
tests.drop(columns="seed").round(4)

# %% [markdown]
# ## Normality (Deutsch et al., 2021, Appendix)
#
# Shapiro-Wilk p-value of each score's system-level values, and the share of inputs whose scores across systems
# fail the test.

# %%
card.normality.round(4)

# %% [markdown]
# ## Documents needed for the undecided comparisons
#
# For each comparison that is not significant, the planner resamples this dataset (same systems, more or fewer
# documents) and runs Perm-Both in the observed direction at alpha / (2 x baselines), the tail of the card's
# two-sided Bonferroni test; `documents_needed` is the smallest number of
# documents tried whose power reaches the target (`ci_low`–`ci_high`: its Monte-Carlo interval; empty when no
# size tried reaches it).

# %%
planner = card.planner
if len(planner):
    nb.report("\n".join(line for line in card.summary.splitlines() if line.startswith("- Planner")))
else:
    nb.report("Every comparison with a baseline is significant at this sample size: nothing left to plan.")
planner.drop(columns="seed")

# %% [markdown]
# ## Few human labels (with `judge`)
#
# When humans rated only some inputs and a judge scored all of them (`judge`), the sections above use the
# labelled inputs; this one uses every input: PPI++ intervals of the system means and the prediction-powered
# bootstrap interval of the metric's system-level correlation (`metaeval.stats.ppi`), next to the humans-only
# intervals from the labelled inputs.

# %%
if "few_labels" in card.tables:
    nb.report("\n".join(line for line in card.summary.splitlines() if line.startswith("- Few labels")))
    display(show_table(card.few_labels.drop(columns="seed"), digits=4))  # noqa: F821 - IPython

# %% [markdown]
# ## The one-page report
#
# `report.html` in the output folder holds this card as one printable page: the summary, the figures and tables
# above, and the provenance, without code or parameters (`metaeval.studies.card_report`).

# %%
from metaeval.studies.card_report import write_report

report = write_report(nb.out)
