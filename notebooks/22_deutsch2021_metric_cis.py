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
#     datasets: [summeval, realsumm]
#     expected_seconds: {summeval: 17, realsumm: 17}
#     main_table: figure4_metric_cis.csv
#     paper: deutsch2021
# ---

# %% tags=["parameters"]
dataset = "summeval"        # an embedded dataset (summeval, realsumm, ...) or a folder/JSONL file
human = None                # the ground-truth score (None: the dataset's default human score)
metrics = None              # score names (None: the paper's on an embedded dataset, every non-human one on yours)
our_rouge = None            # ROUGE-1.5.5 variants scored here from the texts (None: ROUGE-1/2/L/SU4; []: none)
n_refs = 1                  # references per summary for our ROUGE (1: the first, as the stored scores)
sentences = "ptb"           # sentence units for our ROUGE-L: ptb (sentence-final tokens) | lines
ci_coefficient = "kendall"  # Figure 4 (the paper: Kendall)
test_coefficient = "pearson"  # Figures 5-6 (the paper: Pearson)
n_resamples = 1000          # bootstrap resamples per CI (Figure 4)
n_permutations = 9999       # permutations per test (Figures 5-6); 1/(P+1) must be below alpha/(tests) for Figure 6
alpha = 0.05                # significance level of the pairwise tests (before Bonferroni)
incomplete = "raise"        # missing cells of the scores used: raise | drop-inputs | drop-systems
seed = 0                    # seed of the random generator (every resample and trial derives from it)
output_dir = None           # None: results/deutsch2021/<dataset>

# %% [markdown]
# # 22 · Deutsch, Dror & Roth (2021), Figures 4-6: how sure are we about each metric, and which ones differ?
#
# **What the paper asked.** Published correlations of summarization metrics with human judgments come without
# error bars, and "metric A correlates better than ROUGE" without a test. How wide are 95% CIs of the metrics'
# correlations (Figure 4), and which pairs of metrics differ significantly (Figures 5 and 6)?
#
# **How.** With the methods the simulations of notebooks 20 and 21 selected: **Boot-Both** CIs (resampling systems
# and inputs; Kendall's τ as in the paper) and the **Perm-Both** permutation test for every ordered pair of metrics
# (one-sided, Pearson), with a Bonferroni correction for the many tests.
#
# *Citation:* Daniel Deutsch, Rotem Dror and Dan Roth (2021). A Statistical Analysis of Summarization Evaluation
# Metrics Using Resampling Methods. *TACL* 9, 1132–1146.
# [doi:10.1162/tacl_a_00417](https://doi.org/10.1162/tacl_a_00417)

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

import metaeval
from metaeval import deutsch
from metaeval.plotting import significance_heatmap
from metaeval.studies.plotting import interval_errorbar
from metaeval.run.session import start

left_out: list[str] = []
if metrics is None:
    probe = metaeval.datasets.load(dataset)
    metrics, _, left_out = deutsch.default_metrics(probe, embedded=dataset in metaeval.datasets.known_datasets())
nb = start("deutsch2021", dataset, output_dir=output_dir, seed=seed, scores=[human, *metrics], incomplete=incomplete,
           quiet_rouge=True)
ds, out, rng = nb.dataset, nb.out, nb.rng
human = human or ds.default_human
Z = ds.matrix(human)
mats = {name: ds.matrix(name) for name in metrics}
if left_out:
    shown = ", ".join(left_out[:8]) + (f" and {len(left_out) - 8} more" if len(left_out) > 8 else "")
    print(f"{len(left_out)} stored scores not analysed (not among the paper's metrics; -p metrics adds them): {shown}")
names = {name: ds.display_name(name) for name in metrics}
stat = "R" if ds.recall_oriented else "F"
if our_rouge is None:
    our_rouge = [f"rouge-{m}|stem:yes|stop:no|stat:{stat}|refs:A" for m in ("1", "2", "l", "su4")]
if our_rouge and not ds.has_texts:
    print(f"{ds.name} has no texts: our own ROUGE scores are skipped (the stored metric scores are used).")
elif our_rouge:
    table = metaeval.scoring.rouge_table(ds, our_rouge, n_refs=n_refs, sentences=sentences)
    for key in our_rouge:
        v = metaeval.variants.parse_variant(key)
        mats[v.signature] = table[v.signature].to_numpy().reshape(Z.shape)
        names[v.signature] = f"{v.measure.name} {v.stat} (ours)"
labels = [names[k] for k in mats]
print(f"{ds.name}: {len(ds.systems)} systems x {len(ds.inputs)} inputs; ground truth {ds.display_name(human)}; "
      f"{len(mats)} metrics: {', '.join(labels)}")

# %% [markdown]
# ## Figure 4: 95% Boot-Both CIs of each metric's correlation
#
# Each bootstrap resample draws N systems and M inputs with replacement and recomputes Kendall's τ between the
# metric and the human score on the sampled matrix; the 2.5 and 97.5 percentiles of the 1000 values are the CI.
# Notebook 20 shows why both must be resampled: an interval that treats either the systems or the documents as
# fixed is too narrow for a correlation measured on new systems and new documents.
#
# **Ties in Kendall's τ.** Resampled system means that are mathematically equal can differ in the last bit of
# floating point and would then count as a concordant or discordant pair instead of a tie; the library snaps
# them to ~11 significant digits before ranking (otherwise about 9% of system-level Kendall resamples on SummEval
# change). Raw cell values are never snapped, so the point estimates equal scipy's.

# %%
cis = deutsch.metric_cis(mats, Z, coefficient=ci_coefficient, n_resamples=n_resamples, rng=rng)
cis.insert(2, "metric_name", cis["metric"].map(names))
nb.save_table(cis, "figure4_metric_cis.csv", index=False, float_format="%.4f")
order = (cis[cis["level"] == "system"].sort_values("r", ascending=False)["metric_name"].tolist()
         or cis["metric_name"].unique().tolist())

sns.set_theme(style="whitegrid", context="notebook")
palette = dict(zip(["summary", "system"], sns.color_palette("tab10", 2)))
fig, ax = plt.subplots(figsize=(7.5, 0.42 * len(order) + 1.6))
for k, (level, block) in enumerate(cis.groupby("level", sort=False)):
    block = block.set_index("metric_name").loc[order]
    y = np.arange(len(order)) + (0.17 if level == "system" else -0.17)
    interval_errorbar(ax, block["r"], y, xerr=[block["r"] - block["low"], block["high"] - block["r"]], fmt="o",
                      markersize=4, capsize=3, color=palette.get(level, f"C{k}"), label=f"{level} level")
ax.set_yticks(np.arange(len(order)), order)
ax.invert_yaxis()
ax.axvline(0, color="grey", linewidth=0.8)
coef_name = metaeval.correlation.coefficient_label(ci_coefficient)
ax.set_xlabel(f"{coef_name} with {ds.display_name(human)} (point, and 95% Boot-Both CI)")
ax.set_ylabel("metric")
ax.set_title(f"Figure 4: 95% CIs of metric correlations ({ds.name}, {n_resamples} resamples)", fontsize=10)
ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)  # beside the axes, never over an interval
fig.tight_layout()
nb.save_figure(fig, "figure4_metric_cis")
plt.show()
cis.drop(columns="metric").round(3)

# %%
def discordant(tau):
    """Share of system pairs a metric orders against the humans, from Kendall's tau (no ties)."""
    return (1 - tau) / 2


lines = []
for level, block in cis.groupby("level", sort=False):
    widths = block["high"] - block["low"]
    w = block.assign(width=widths).sort_values("width")
    lines.append(f"* **{level.capitalize()} level:** CI widths range from {widths.min():.2f} "
                 f"({nb.md(w.iloc[0]['metric_name'])}) to {widths.max():.2f} "
                 f"({nb.md(w.iloc[-1]['metric_name'])}); median "
                 f"{widths.median():.2f}. {int((block['low'] <= 0).sum())} of {len(block)} intervals include 0.")
system = cis[cis["level"] == "system"].set_index("metric")
rouge2 = next((k for k in system.index if k.startswith("rouge-2.")), None)
if ci_coefficient == "kendall" and rouge2 is not None:
    lo, hi = system.loc[rouge2, ["low", "high"]]
    lines.append(f"* {nb.md(names[rouge2])}'s system-level CI [{lo:.2f}, {hi:.2f}] means it orders between "
                 f"{discordant(hi):.0%} and {discordant(lo):.0%} of the system pairs differently from the humans "
                 "(discordant pairs = (1 − τ)/2).")
    if deutsch.paper_column(ds.name) == "summeval" and human == ds.default_human:
        lines.append("  The paper (Fabbri et al. annotations): [−.09, .84], i.e. 9–54% of the pairs.")
nb.report("\n".join(lines), "figure4_conclusions.md")

# %% [markdown]
# ## Figures 5 and 6: which metric correlates significantly better than which?
#
# For every ordered pair (row X, column Y) Perm-Both tests H0: ρ(X, Z) ≤ ρ(Y, Z). Under H0 the two metrics are
# exchangeable, so each permutation swaps X's and Y's scores of every (system, input) cell independently with
# probability 1/2 and recomputes the difference of correlations. **p = (c + 1)/(P + 1)**, c being the number of
# the P permutations whose difference is at least the observed one: the observed arrangement is one of the
# equally likely arrangements under H0, which makes the test exact — and means **p can never be smaller than
# 1/(P + 1)**.
#
# A coloured cell has p < alpha; a dot marks cells that stay significant after Bonferroni: in Figure 5 for the
# K − 1 tests of each row metric (the paper's main figure), in Figure 6 over all K(K − 1) ordered pairs of a level
# (the paper's Appendix B). With K metrics, Figure 6's threshold is alpha / (K(K − 1)); with 15 metrics that is
# 0.05/210 ≈ 0.00024, *below* 1/1001 ≈ 0.001, the smallest p-value 1000 permutations can produce. **With 1000
# permutations Figure 6 is empty by construction**, whatever the data; this notebook therefore defaults to 9999
# permutations (smallest p = 0.0001) and checks below that the count can reach the threshold.

# %%
K = len(mats)
if K < 2:  # a pairwise test needs two metrics: say so instead of dividing by an empty Bonferroni family
    raise ValueError(f"Figures 5-6 test metrics pairwise and need at least two; this run has {K} ({list(mats)}). "
                     "Name more with -p metrics '[...]' (metaeval params 22 lists the parameters).")
tests_per_row, tests_all = K - 1, K * (K - 1)
p_min = deutsch.min_pvalue(n_permutations)
reach_row, reach_all = p_min < alpha / tests_per_row, p_min < alpha / tests_all
check = (f"{n_permutations} permutations: smallest possible p = {p_min:.2g}. Bonferroni thresholds: per row "
         f"{alpha}/{tests_per_row} = {alpha / tests_per_row:.2g} ({'reachable' if reach_row else 'UNREACHABLE'}); "
         f"over all {tests_all} ordered pairs {alpha}/{tests_all} = {alpha / tests_all:.2g} "
         f"({'reachable' if reach_all else 'UNREACHABLE'}).")
if not reach_all:
    needed = int(np.ceil(tests_all / alpha))
    check += f" Figure 6 cannot show any dot; it needs at least {needed} permutations."
if not reach_row:
    check += " Figure 5 cannot show any dot either."
print(check)

pairs = deutsch.pairwise_pvalues(mats, Z, test="perm-both", coefficient=test_coefficient,
                                 n_resamples=n_permutations, rng=rng)
summary_rows = []
for level, result in pairs.items():
    frame = pd.DataFrame(result.pvalues, index=labels, columns=labels)
    nb.save_table(frame, f"figure5_perm_both_{level}.csv", float_format="%.6g")
    for by, figname, family in [("row", "figure5", f"per row, {tests_per_row} tests"),
                                ("all", "figure6", f"all {tests_all} ordered pairs")]:
        marks = deutsch.corrected(result.pvalues, alpha=alpha, by=by)
        summary_rows.append({"level": level, "correction": by, "significant": int(np.nansum(result.pvalues < alpha)),
                             "after_bonferroni": int(marks.sum())})
        with sns.axes_style("white"):  # no grid lines through the cells
            ax = significance_heatmap(
                frame, alpha=alpha, corrected=marks,
                title=f"{'Figure 5' if by == 'row' else 'Figure 6'}: Perm-Both ({test_coefficient}), {level} level, "
                      f"{ds.name}\ncoloured: p < {alpha}; dots: Bonferroni ({family})")
        nb.save_figure(ax.figure, f"{figname}_perm_both_{level}")
        plt.show()
counts = pd.DataFrame(summary_rows)
nb.save_table(counts, "figure5_6_counts.csv", index=False)
counts

# %%
lines = [check]
# the paper's challengers of ROUGE, among the metrics analysed here (a conclusion names only analysed metrics)
challengers = [m for m in ("qa-eval.f1", next((m for m in mats if m.startswith("bertscore")), None)) if m in mats]
for level, result in pairs.items():
    marks = deutsch.corrected(result.pvalues, alpha=alpha, by="row")
    wins = pd.Series(marks.sum(axis=1), index=labels).sort_values(ascending=False)
    top = [f"{nb.md(name)} ({n})" for name, n in wins.items() if n > 0][:4]
    lines.append(f"* **{level.capitalize()} level:** {int(np.nansum(result.pvalues < alpha))} of {tests_all} ordered "
                 f"pairs are significant at {alpha}, {int(marks.sum())} after the per-row Bonferroni correction, "
                 f"{int(deutsch.corrected(result.pvalues, alpha=alpha, by='all').sum())} after the all-pairs one. "
                 + (f"Most wins after correction: {', '.join(top)}." if top else
                    "No metric is significantly better than another after correction (which does not show that they "
                    "are equally good: the tests may lack the power to separate them)."))
    rouge = [k for k, m in enumerate(mats) if m.startswith("rouge-") and "|" not in m]
    for challenger in challengers:
        if rouge:
            i = list(mats).index(challenger)
            beaten = [nb.md(labels[j]) for j in rouge if marks[i, j]]
            lines.append(f"  {nb.md(names[challenger])} beats {len(beaten)} of the {len(rouge)} stored ROUGE variants "
                         f"after correction{': ' + ', '.join(beaten) if beaten else ''}.")
if deutsch.paper_column(ds.name) is not None and challengers:  # the paper has values for this dataset only
    lines.append(f"* The paper: {' and '.join(nb.md(names[c]) for c in challengers)} beat ROUGE in some settings; most "
                 "other metrics never beat it significantly.")
nb.report("\n".join(lines), "figure5_6_conclusions.md")
