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
#     - hanna
#     - summeval
#     expected_seconds: {hanna: 20, summeval: 25}
#     main_table: alt_test.csv
#     paper: few_labels
# ---

# %% tags=["parameters"]
dataset = "hanna"  # hanna | summeval, or another dataset with per-annotator ratings and a judge score
human = None  # human score (None: the dataset's default)
judge = None  # the judge's score (None: ChatGPT's first prompt on HANNA, bertscore.f1 on SummEval)
metric = None  # the metric whose system-level correlation is estimated (None: the judge itself)
labelled_share = 0.25  # share of the inputs whose human scores are kept (the others are hidden)
epsilon = 0.2  # the alt-test's margin (the paper: 0.2 for expert annotators, 0.1 for crowd workers)
coefficient = "kendall"  # system-level coefficient of the meta-evaluation: pearson | spearman | kendall
confidence_level = 0.95
widths = [0.1, 0.2, 0.4]  # target interval widths of the label planner (on the human score's scale)
judge_pool = 5000  # judge-scored inputs the planner assumes next to the labelled ones
correlation_sizes = [25, 50, 75]  # labelled inputs at which the correlation's interval widths are measured
width_replicates = 2  # random labelled subsets per size of that curve
n_resamples = 300  # bootstrap resamples per correlation interval
coverage_replicates = 20  # random labelled subsets of the coverage simulation (the full table: results/few_labels)
calibration_trials = 400  # simulated studies per epsilon of the alt-test's calibration at this dataset's size
power_items = [30, 50, 100, 200, 400]  # items of the alt-test's power curve
power_annotators = [3, 5]  # annotators of the alt-test's power curve
power_trials = 200  # simulated studies per point of the power curve
target_power = 0.8
seed = 0
output_dir = None  # None: results/few_labels/<dataset>/

# %% [markdown]
# # 80 · Few human labels: prediction-powered estimates, and may a judge replace an annotator?
#
# A judge (an LLM, or any metric) scored every input; humans scored a few. Two questions:
#
# 1. **What can the few labels conclude?** Prediction-powered inference (PPI++; Angelopoulos et al. 2023,
#    Angelopoulos, Duchi & Zrnic 2023) estimates a system's mean human score from the labelled inputs and the
#    judge's scores on all inputs, with an interval that stays valid however bad the judge (a bad judge only
#    buys nothing). The same idea inside a bootstrap gives intervals for the *meta-evaluation*: a metric's
#    system-level correlation with the humans (`metaeval.stats.ppi`).
# 2. **May the judge replace an annotator?** The alternative annotator test (Calderon, Reichart & Dror, ACL
#    2025) leaves each annotator out in turn and asks whether the judge represents the remaining annotators at
#    least about as well as the left-out human does (`metaeval.stats.alt_test`).
#
# Here the dataset's human scores are hidden on a random share of the inputs, so every estimate can be put
# next to the full data's value. The last sections plan a study: how many labels for a target width, and how
# many items and annotators the alt-test needs. Every sentence of interpretation is generated from the numbers.

# %%
import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from metaeval.run.session import start
from metaeval.stats.alt_test import equate
from metaeval.studies import few_labels, few_labels_coverage
from metaeval.studies.plotting import interval_errorbar, show_table

nb = start("few_labels", dataset, output_dir=output_dir, seed=seed, human=human, purpose="notebook 80")
ds, human = nb.dataset, nb.human
judge = judge or few_labels.default_judge(ds, human)
metric = metric or judge
labelled = few_labels.labelled_mask(ds.shape[1], labelled_share, nb.rng)
nb.report(f"**{nb.md(ds.name)}**: {ds.shape[0]} systems × {ds.shape[1]} inputs; human score {nb.md_name(human)}; "
          f"judge {nb.md_name(judge)}; humans kept on {int(labelled.sum())} inputs "
          f"({labelled_share:.0%}), hidden on {int((~labelled).sum())}.")

# %% [markdown]
# ## 1 · System means: PPI++ with the judge against the humans alone
#
# Each system's mean human score from the labelled inputs, as an interval at `confidence_level`: PPI++ (the
# judge on every input, its weight `lam` tuned per system) and the humans' own mean. The dot is the full data's
# mean, which hiding the labels took away.

# %%
intervals = few_labels.ppi_interval_table(ds, human, judge, labelled, confidence_level=confidence_level,
                                          rng=nb.rng)
nb.save_table(intervals, "ppi_intervals.csv", index=False, float_format="%.4f")
order = intervals.sort_values("truth").index
fig, ax = plt.subplots(figsize=(7.5, 0.32 * len(intervals) + 1.6))
y = np.arange(len(order))
for offset, kind, colour in ((-0.15, "humans", "C0"), (0.15, "ppi", "C1")):
    rows = intervals.loc[order]
    interval_errorbar(ax, rows[kind], y + offset, xerr=[rows[kind] - rows[f"{kind}_low"],
                                                          rows[f"{kind}_high"] - rows[kind]],
                      fmt="o", color=colour, label="humans only" if kind == "humans" else "PPI++ with the judge")
ax.scatter(intervals.loc[order, "truth"], y, marker="|", s=200, color="black", label="full data", zorder=3)
ax.set_yticks(y, [ds.display_name(s) for s in intervals.loc[order, "system"]])
ax.set_xlabel(f"mean {ds.display_name(human)}")
ax.set_title(f"{int(labelled.sum())} labelled inputs, judge {ds.display_name(judge)}")
ax.legend(loc="lower right", fontsize=8)
fig.tight_layout()
nb.save_figure(fig, "ppi_intervals")
plt.show()

# %% [markdown]
# ## 2 · Meta-evaluation: does the prediction-powered interval of a correlation cover the truth?
#
# The simulation of `metaeval.studies.few_labels_coverage.coverage_table`: humans hidden on random subsets of the
# inputs (`coverage_replicates` of them at this labelled share), the full-data system-level coefficient of the
# metric with the humans as the truth, the share of intervals that hold it, and their mean width against the
# humans-only interval on the same subsets. The full table (several shares, judges and coefficients, more
# replicates) is `results/few_labels/coverage.csv`.

# %%
design = few_labels_coverage.Design(human, metric, {f"judge ({ds.display_name(judge)})": judge})
coverage = few_labels_coverage.coverage_table(ds.name, design=design, shares=[labelled_share],
                                              coefficients=[coefficient], n_replicates=coverage_replicates,
                                              n_resamples=n_resamples, confidence_level=confidence_level,
                                              rng=nb.rng, methods=["basic"], data=ds)
nb.save_table(coverage, "coverage.csv", index=False, float_format="%.4f")
show_table(coverage[["judge", "n_labelled", "coefficient", "truth", "coverage", "mc_se", "mean_width",
                     "human_only_width", "below_nominal"]])

# %% [markdown]
# ## 3 · May the judge replace an annotator? The alternative annotator test
#
# For each annotator j: on every item, does the judge or annotator j lie closer to the *other* annotators
# (minus the distance to their mean rating; the share of equal labels for categories)? The judge's and j's
# advantage probabilities are the shares of items each wins (a tie counts for both); H0_j says the judge's is
# lower than j's by more than `epsilon`, tested by a one-sided paired t-test; Benjamini-Yekutieli over the
# annotators; the judge passes when it wins against at least half of them. Metrics on another scale are mapped
# onto the ratings' scale first (equipercentile equating). Two controls that know nothing of the items (the
# mean rating everywhere, a judge shuffled over the items) show what passing means at this margin.

# %%
alt = few_labels.alt_test_table(ds, few_labels.alt_judges(ds, human, seed=seed), human=human, epsilon=epsilon)
nb.save_table(alt, "alt_test.csv", index=False, float_format="%.4g")
show_table(alt[["judge", "kind", "items", "annotators", "advantage_probability", "winning_rate", "passed"]]
           .rename(columns={"advantage_probability": "rho", "winning_rate": "omega"}))

# %% [markdown]
# **Its calibration at this dataset's size.** The judge is simulated as one more annotator (exchangeable with
# the humans) who gives a value far off the scale on a random share `epsilon` of the items: exactly the
# boundary of H0, where each annotator's t-test should reject at q = 0.05. Below 100 items per annotator or 3
# annotators the test says "cannot be tested" (the measured level was 0.14 at 10 items, 0.066 at 30, 0.06 at 50).

# %%
n_items, n_annot, levels = few_labels.dataset_sizes(ds, human)
calibration = few_labels.alt_test_calibration_table([(ds.name, n_items, n_annot, levels)],
                                                    epsilons=sorted({0.0, 0.1, float(epsilon)}),
                                                    n_trials=calibration_trials, rng=nb.rng)
nb.save_table(calibration, "alt_calibration.csv", index=False, float_format="%.4f")
show_table(calibration[["items", "annotators", "levels", "epsilon", "type1", "type1_se", "within_3se",
                        "pass_rate"]])

# %% [markdown]
# ## 4 · Planning: how many human labels, how many items and annotators?
#
# From the labelled inputs as a pilot: the labelled inputs a target interval width needs for every system's
# mean and every difference of two systems (the hardest one decides), with humans only and with PPI++ next to
# `judge_pool` judge-scored inputs; and the interval width of the system-level correlation at a few labelled
# sizes, measured by drawing labelled subsets.

# %%
budget = few_labels.label_budget_table(ds, human, judge, labelled, widths, n_unlabelled=judge_pool,
                                       confidence_level=confidence_level)
nb.save_table(budget, "planner_labels.csv", index=False, float_format="%.4f")
corr_widths = few_labels.correlation_width_table(ds, human, metric, judge, correlation_sizes, coefficient=coefficient,
                                                 n_replicates=width_replicates, n_resamples=n_resamples,
                                                 confidence_level=confidence_level, rng=nb.rng)
nb.save_table(corr_widths, "planner_correlation.csv", index=False, float_format="%.4f")
fig, axes = plt.subplots(1, 3, figsize=(12, 3.4))
for ax, (target, block) in zip(axes, budget.groupby("target", sort=False)):
    ax.plot(block.width, block.humans_only, "o-", label="humans only")
    ax.plot(block.width, block.ppi, "s--", label=f"PPI++ ({judge_pool} judge-scored)")
    ax.set_yscale("log")
    ax.set_xlabel("target interval width")
    ax.set_ylabel("labelled inputs")
    ax.set_title(target)
    ax.legend(fontsize=8)
ax = axes[2]
ax.plot(corr_widths.n_labelled, corr_widths.humans_width, "o-", label="humans only")
ax.plot(corr_widths.n_labelled, corr_widths.ppi_width, "s--", label="prediction-powered")
ax.set_xlabel("labelled inputs")
ax.set_ylabel(f"mean width of the {coefficient} interval")
ax.set_title(f"system-level {coefficient}")
ax.legend(fontsize=8)
fig.tight_layout()
nb.save_figure(fig, "planner")
plt.show()

# %% [markdown]
# **The alt-test's power.** A rating model fitted to the dataset (true item scores, the annotators' noise, the
# judge's noise around the item means) simulates studies of other sizes; the power is the share of them in
# which this judge passes at `epsilon`.

# %%
ratings = ds.ratings(human)
judge_scores = ds.matrix(judge) if few_labels.alt_on_scale(ds, judge) else equate(ds.matrix(judge), ratings)
power = few_labels.alt_power_table(ratings, judge_scores, items=power_items, annotators=power_annotators,
                                   epsilon=epsilon, n_trials=power_trials, rng=nb.rng)
nb.save_table(power, "planner_alt_test.csv", index=False, float_format="%.4f")
fig, ax = plt.subplots(figsize=(5.5, 3.4))
sns.lineplot(data=power, x="n_items", y="power", hue="n_annotators", marker="o", ax=ax, palette="deep")
ax.axhline(target_power, color="grey", lw=0.8, ls=":")
ax.set_xscale("log")
ax.set_xlabel("items rated by every annotator")
ax.set_ylabel("probability of passing")
ax.set_title(f"alt-test power, epsilon = {epsilon:g}")
ax.legend(title="annotators", fontsize=8)
fig.tight_layout()
nb.save_figure(fig, "alt_test_power")
plt.show()

# %% [markdown]
# ## Conclusions (generated from the numbers above)

# %%
lines = few_labels.few_label_sentences(intervals, budget, corr_widths, power, judge=nb.md_name(judge),
                                       target_power=target_power)
lines += few_labels.coverage_sentences(coverage, confidence_level=confidence_level)
lines += few_labels.alt_test_sentences(alt)
lines += few_labels.calibration_sentences(calibration)
nb.report("\n".join(lines), name="conclusions.md")
