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
#     expected_seconds: {summeval: 14, realsumm: 14}
#     main_table: table1_ci_coverage.csv
#     paper: deutsch2021
# ---

# %% tags=["parameters"]
dataset = "summeval"        # an embedded dataset (summeval, realsumm, ...) or a folder/JSONL file
human = None                # the ground-truth score (None: the dataset's default human score)
metric = "qa-eval.f1"       # the metric whose correlation gets a CI (the paper: QAEval-F1)
coefficient = "pearson"     # pearson | spearman | kendall
n_trials = 1000             # random half-splits (the paper: 1000)
n_resamples = 1000          # bootstrap resamples per interval (the paper: 1000)
confidence_level = 0.95     # nominal level of every interval (the paper: 0.95)
incomplete = "raise"        # missing cells of the scores used: raise | drop-inputs | drop-systems
seed = 0                    # seed of the random generator (every resample and trial derives from it)
output_dir = None           # None: results/deutsch2021/<dataset>

# %% [markdown]
# # 20 · Deutsch, Dror & Roth (2021), Table 1: which confidence interval covers?
#
# **What the paper asked.** A metric is judged by the correlation of its scores with human scores over N systems
# × M inputs (documents). That correlation is an estimate: with other systems or other documents it would
# differ. How wide is its uncertainty, and which way of computing a 95% confidence interval (CI) is right for
# summarization, where *both* the systems and the documents are samples?
#
# **How.** Four CI methods are compared in a simulation that needs no ground truth. Each trial splits the
# systems *and* the inputs into random halves A and B, computes a 95% CI on the A-systems × A-inputs submatrix,
# and checks whether the correlation measured on the disjoint B-systems × B-inputs submatrix falls inside.
# A method that captures how much the correlation changes with new systems and new documents should cover about
# 95% of the held-out correlations.
#
# *Citation:* Daniel Deutsch, Rotem Dror and Dan Roth (2021). A Statistical Analysis of Summarization Evaluation
# Metrics Using Resampling Methods. *Transactions of the Association for Computational Linguistics* 9,
# 1132–1146. [doi:10.1162/tacl_a_00417](https://doi.org/10.1162/tacl_a_00417)

# %%
import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from metaeval import deutsch, holm
from metaeval.data.defaults import default_metric
from metaeval.run.session import start

metric = default_metric(dataset, metric, paper="qa-eval.f1")
nb = start("deutsch2021", dataset, output_dir=output_dir, seed=seed, scores=[metric, human], incomplete=incomplete)
ds, out, rng = nb.dataset, nb.out, nb.rng
human = human or ds.default_human
X, Z = ds.matrix(metric), ds.matrix(human)
metric_name, human_name = ds.display_name(metric), ds.display_name(human)
print(f"{ds.name}: {len(ds.systems)} systems x {len(ds.inputs)} inputs; {metric_name} against {human_name}, "
      f"{coefficient}")

# %% [markdown]
# ## The four CI methods
#
# * **Fisher**: transform r with arctanh, add ±1.96/√(n − 3), transform back. It assumes normally distributed
#   scores (see notebook 23) and needs an n. At the system level n is the number of systems; the summary-level
#   correlation is an *average over inputs* of correlations over systems, so the reference code (and this
#   library) also uses the number of systems there — which ignores that averaging over M inputs shrinks the
#   variance, and makes the interval far too wide.
# * **Boot-Systems**: resample the N systems (rows) with replacement, keep all inputs; recompute r; the 2.5 and
#   97.5 percentiles of the resampled r are the CI. It treats the inputs as fixed.
# * **Boot-Inputs**: resample the M inputs (columns), keep all systems. It treats the systems as fixed.
# * **Boot-Both**: resample systems *and* inputs in each resample (the matrix of the sampled rows and columns).
#   It is the only one of the four that lets both sources of randomness vary, which is what the held-out
#   B × B correlation does.

# %%
trials = deutsch.ci_coverage_simulation(X, Z, n_trials=n_trials, n_resamples=n_resamples, coefficient=coefficient,
                                        confidence_level=confidence_level, rng=rng, progress=True)
nb.save_table(trials, "table1_ci_simulation_trials.csv", index=False, float_format="%.6f")

# %% [markdown]
# ## Table 1: coverage per method and level, next to the paper
#
# `coverage` is the share of trials whose interval contains the held-out correlation, `ci_low`/`ci_high` its exact
# (Clopper-Pearson) 95% interval, `too_high` / `too_low` the shares where the whole interval lies above / below it,
# `mean_width` the interval's mean width. A method is **`degenerate`** when its intervals are uninformative: it
# covers every trial, in enough trials to show that this is more than the nominal level (exact binomial test,
# `over_pvalue`; the paper's "less than 1.0"), or its intervals span nearly all of [-1, 1]. A sample in which
# every trial covered is not degenerate by itself (30 of 30 trials happen with probability 0.21 at a true 95%).
# **`best`** follows the paper's rule: the method closest to the nominal level among the non-degenerate ones, if a
# one-sided Fisher's exact test (0.05) separates its coverage from every other method's (`best_pvalue`: the
# largest of those p-values; the paper used a z-test, which agrees at its 1000 trials but not at 30). `paper` is
# the paper's Table 1 value for this dataset (Fabbri et al. = SummEval, Bhandari et al. = REALSumm) when this run
# has the paper's setting; `pvalue` is Fisher's exact test of our coverage against the paper's (1000 trials).

# %%
table = deutsch.coverage_table(trials, nominal=confidence_level)
column = deutsch.paper_column(ds.name)
paper_setting = (column is not None and metric == "qa-eval.f1" and human == ds.default_human
                 and coefficient == "pearson" and confidence_level == 0.95)
table = deutsch.compare_coverage(table, deutsch.PAPER_TABLE1[column] if paper_setting else {})
table.insert(2, "method_name", table["method"].map(deutsch.METHOD_NAMES))
nb.save_table(table, "table1_ci_coverage.csv", index=False, float_format="%.4f")
table.drop(columns="method").round(3)

# %%
sns.set_theme(style="whitegrid", context="notebook")
shown = table.assign(level=table["level"] + " level")
grid = sns.catplot(data=shown, x="method_name", y="coverage", col="level", kind="bar", color="#4C72B0",
                   height=3.4, aspect=1.2, errorbar=None, order=[deutsch.METHOD_NAMES[m] for m in deutsch.CI_METHODS])
for ax, (_, block) in zip(grid.axes.flat, shown.groupby("level", sort=False)):
    xs = np.arange(len(block))
    ax.errorbar(xs, block["coverage"], yerr=[block["coverage"] - block["ci_low"], block["ci_high"] - block["coverage"]],
                fmt="none", ecolor="black", capsize=3)
    if paper_setting:
        ax.scatter(xs, block["paper"], color="#C44E52", zorder=3, label="paper (Table 1)")
    ax.axhline(confidence_level, color="grey", linestyle="--", linewidth=1, label=f"nominal {confidence_level:.0%}")
    ax.set_ylim(0.4, 1.03)
    ax.tick_params(axis="x", rotation=20)
grid.set_axis_labels("CI method", "coverage (share of trials)")
grid.set_titles("{col_name}")
# beside the last panel, outside the data: with few trials the bars can reach any height
grid.axes.flat[-1].legend(loc="upper left", bbox_to_anchor=(1.02, 1), fontsize=8)
grid.figure.suptitle(f"Table 1: 95% CI coverage, {metric_name} vs {human_name} ({ds.name}, {coefficient}, "
                     f"{n_trials} trials; bars: ours, exact 95% CI)", fontsize=10)
grid.figure.tight_layout()
nb.save_figure(grid.figure, "table1_ci_coverage")
plt.show()

# %% [markdown]
# ## What the numbers say
#
# Generated from the table above (and saved as `table1_conclusions.md`).

# %%
def pct(v):
    return f"{100 * v:.1f}%"


def fmt_p(p):
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


lines = []
for level, block in table.groupby("level", sort=False):
    block = block.set_index("method")
    best = block.index[block["best"]].tolist()
    Level = level.capitalize()
    if best:
        b = block.loc[best[0]]
        lines.append(f"* **{Level} level:** {b['method_name']} covers {pct(b['coverage'])} of the held-out "
                     f"correlations (exact 95% CI {pct(b['ci_low'])}-{pct(b['ci_high'])}), the closest to the nominal "
                     f"{confidence_level:.0%} among the non-degenerate methods, and its coverage differs from every "
                     f"other method's (one-sided Fisher's exact tests, largest {fmt_p(b['best_pvalue'])}).")
    else:
        lines.append(f"* **{Level} level:** no method is both closest to {confidence_level:.0%} among the "
                     "non-degenerate methods and separated from every other method by Fisher's exact test at 0.05 "
                     f"with {int(block['trials'].max())} trials (not separated is not the same as equal).")
    for m, row in block[block["undefined"] > 0].iterrows():
        lines.append(f"  {row['method_name']}'s interval is undefined in {row['undefined']} of "
                     f"{row['undefined'] + row['trials']} trials (Fisher's needs more than 3 systems per half), so its "
                     + (f"coverage counts the {row['trials']} others." if row["trials"]
                        else "coverage is unknown here."))
    for m, row in block[block["degenerate"]].iterrows():
        lines.append(f"  {row['method_name']} covers {pct(row['coverage'])}, more than the nominal "
                     f"{confidence_level:.0%} (exact binomial test, {fmt_p(row['over_pvalue'])}), with intervals "
                     f"{row['mean_width']:.2f} wide on average: wider than a {confidence_level:.0%} interval "
                     "should be, hence not the answer.")
    for m, row in block[(block["coverage"] >= 1.0) & ~block["degenerate"]].iterrows():
        lines.append(f"  {row['method_name']} covers all {int(row['trials'])} trials; with this few trials that is "
                     f"consistent with the nominal {confidence_level:.0%} (exact binomial test of coverage above it, "
                     f"{fmt_p(row['over_pvalue'])}).")
    short = block[(block["under_pvalue"] < 0.05) & ~block.index.isin(best)]
    for m, row in short.iterrows():
        side = "above" if row["too_high"] > row["too_low"] else "below"
        lines.append(f"  {row['method_name']} covers only {pct(row['coverage'])} (exact binomial test of coverage "
                     f"below {confidence_level:.0%}, {fmt_p(row['under_pvalue'])}): its nominal "
                     f"{confidence_level:.0%} interval works as an interval at about the {pct(row['coverage'])} level; "
                     f"when it misses, it mostly lies {side} the target "
                     f"({pct(max(row['too_high'], row['too_low']))} of trials).")
if paper_setting:
    compared = table.dropna(subset=["pvalue"])
    adjusted = holm(compared["pvalue"].to_numpy())
    worst = compared.loc[compared["pvalue"].idxmin()]
    n_sig = int((adjusted < 0.05).sum())
    source = "Fabbri et al. = SummEval" if column == "summeval" else "Bhandari et al. = REALSumm"
    lines.append(f"* **Against the paper** ({source} column; Fisher's exact test of our {n_trials} trials against "
                 f"its 1000 per cell, Holm-adjusted over the {len(compared)} cells): the smallest p-value is "
                 f"{worst['method_name']}'s at the {worst['level']} level ({pct(worst['coverage'])} vs "
                 f"{pct(worst['paper'])}, {fmt_p(worst['pvalue'])}); "
                 + ("no cell differs significantly from the paper's at 0.05 (which, with few trials, does not show "
                    "that they are equal)." if n_sig == 0
                    else f"{n_sig} cell(s) differ significantly from the paper's at 0.05."))
    marked = [f"{r.method_name} ({r.level} level)" for r in table[table["best"]].itertuples()]
    agree = sorted(table.loc[table["best"], "method"]) == ["boot-both", "boot-both"]
    lines.append("* The paper marks Boot-Both at both levels; "
                 + ("so does this run." if agree else f"this run marks {', '.join(marked) or 'no method'}."))
else:
    lines.append("* This run's setting is not one of the paper's Table 1 cells: there are no paper values to compare.")
nb.report("\n".join(lines), "table1_conclusions.md")
