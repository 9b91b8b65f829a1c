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
#     expected_seconds: {summeval: 5, realsumm: 5}
#     main_table: appendix_table2_normality.csv
#     paper: deutsch2021
# ---

# %% tags=["parameters"]
dataset = "summeval"        # an embedded dataset (summeval, realsumm, ...) or a folder/JSONL file
human = None                # the ground-truth score (None: the dataset's default human score)
metrics = None              # score names (None: the paper's on an embedded dataset, every non-human one on yours)
alpha = 0.05                # level of the Shapiro-Wilk tests
incomplete = "raise"        # missing cells of the scores used: raise | drop-inputs | drop-systems
seed = 0                    # seed of the random generator (every resample and trial derives from it)
output_dir = None           # None: results/deutsch2021/<dataset>

# %% [markdown]
# # 23 · Deutsch, Dror & Roth (2021), Appendix Table 2: are the scores normally distributed?
#
# **What the paper asked.** Fisher's confidence interval (notebook 20) and Williams' test (notebook 21) are
# derived for normally distributed scores. Do summarization metrics and human scores satisfy that assumption?
#
# **How.** The Shapiro-Wilk test of H0 "the sample comes from a normal distribution": at the **system level** on
# the N system scores (each the mean of a system's M summary scores), reporting its p-value; at the **summary
# level**, where the correlation is computed per input over the N systems, on each input's N scores, reporting
# the percentage of inputs whose test rejects at alpha. A small p-value (or a large percentage) is evidence
# against normality; a large p-value is *not* evidence for it — with N = 16 or 24 systems the test has little
# power. Inputs whose scores are all equal cannot be tested and are left out (`inputs_tested`).
# The paper used the F1 variants of ROUGE and BEwT-E on SummEval and the recall variants on REALSumm (its footnote
# 9); `metrics = None` picks the same here.
#
# *Citation:* Daniel Deutsch, Rotem Dror and Dan Roth (2021). A Statistical Analysis of Summarization Evaluation
# Metrics Using Resampling Methods. *TACL* 9, 1132–1146.
# [doi:10.1162/tacl_a_00417](https://doi.org/10.1162/tacl_a_00417)

# %%
import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
from scipy import stats

import metaeval
from metaeval import deutsch
from metaeval.run.session import start

left_out: list[str] = []
if metrics is None:
    probe = metaeval.datasets.load(dataset)
    embedded = dataset in metaeval.datasets.known_datasets()
    metrics, paper_names, left_out = deutsch.default_metrics(probe, embedded=embedded)
else:
    paper_names = {}
nb = start("deutsch2021", dataset, output_dir=output_dir, seed=seed, scores=[human, *metrics], incomplete=incomplete)
ds, out = nb.dataset, nb.out
human = human or ds.default_human
scores = [human, *[m for m in metrics if m != human]]
to_paper = {score: paper for paper, score in paper_names.items()} | {human: "human"}
column = deutsch.paper_column(ds.name) if human == ds.default_human else None
print(f"{ds.name}: {len(ds.systems)} systems x {len(ds.inputs)} inputs; {len(scores)} scores")
if left_out:
    shown = ", ".join(left_out[:8]) + (f" and {len(left_out) - 8} more" if len(left_out) > 8 else "")
    print(f"{len(left_out)} stored scores not analysed (not among the paper's metrics; -p metrics adds them): {shown}")

# %%
table = deutsch.normality({name: ds.matrix(name) for name in scores}, alpha=alpha)
table = deutsch.compare_normality(table, to_paper, column)
table.insert(1, "score_name", table["score"].map(ds.display_name))
nb.save_table(table, "appendix_table2_normality.csv", index=False, float_format="%.4f")
table.drop(columns=["paper_name"]).round(3)

# %% [markdown]
# `system_pvalue`: Shapiro-Wilk p-value of the N system scores; `summary_percent_rejected`: percentage of inputs
# whose N scores fail the test at alpha; `paper_*`: the paper's Appendix Table 2 for this dataset's column
# (Fabbri et al. = SummEval, Bhandari et al. = REALSumm; empty for other datasets or another ground truth).

# %%
sns.set_theme(style="whitegrid", context="notebook")
long = table.melt(id_vars=["score_name"], value_vars=["summary_percent_rejected", "paper_summary_percent_rejected"],
                  var_name="source", value_name="percent")
long["source"] = long["source"].map({"summary_percent_rejected": "ours",
                                     "paper_summary_percent_rejected": "paper (Appendix Table 2)"})
long = long.dropna(subset=["percent"])
fig, ax = plt.subplots(figsize=(7.5, 0.38 * len(table) + 1.6))
sns.barplot(data=long, y="score_name", x="percent", hue="source", ax=ax, orient="h")
ax.axvline(100 * alpha, color="grey", linestyle=":", linewidth=1, label=f"expected under normality ({alpha:.0%})")
ax.set_xlabel(f"inputs whose per-input scores fail Shapiro-Wilk at {alpha} (%)")
ax.set_ylabel("score")
ax.set_title(f"Appendix Table 2 (summary level): non-normal inputs, {ds.name}", fontsize=10)
ax.set_xlim(0, 1.45 * long["percent"].max())
ax.legend(fontsize=8, loc="lower right")
fig.tight_layout()
nb.save_figure(fig, "appendix_table2_normality")
plt.show()

# %% [markdown]
# ## What the numbers say
#
# Generated from the table (saved as `appendix_table2_conclusions.md`). If the scores were normal, about alpha =
# 5% of the inputs would fail by chance.

# %%
lines = []
rejected = table[table["system_pvalue"] < alpha]
lines.append(f"* **System level:** {len(rejected)} of {len(table)} scores have a Shapiro-Wilk p-value below {alpha}"
             + (f" ({nb.md(', '.join(rejected['score_name']))}): normality is rejected for them, so Fisher's "
                "interval and "
                "Williams' test rest on a violated assumption there." if len(rejected) else ".")
             + f" The ground truth ({nb.md_name(human)}): p = {table.iloc[0]['system_pvalue']:.2f}.")
pct = table["summary_percent_rejected"]
# is each score's share of failing inputs above the alpha expected under normality? (exact binomial test)
tested = table.dropna(subset=["summary_percent_rejected"])
excess = [stats.binomtest(int(round(r.summary_percent_rejected * r.inputs_tested / 100)), int(r.inputs_tested), alpha,
                          alternative="greater").pvalue for r in tested.itertuples()]
n_excess = int(np.sum(np.array(excess) < alpha))
share = (f"{pct.min():.0f}%" if round(pct.min()) == round(pct.max()) else
         f"between {pct.min():.0f}% and {pct.max():.0f}%")
lines.append(f"* **Summary level:** {share} of the inputs fail the test "
             f"(median {pct.median():.0f}%), against the {100 * alpha:.0f}% expected under normality. For "
             f"{n_excess} of {len(tested)} scores the share is significantly above {100 * alpha:.0f}% (one-sided exact "
             f"binomial test at {alpha})"
             + (": their per-input scores are not normal" if n_excess else "")
             + ("." if n_excess == len(tested) else
                f"{';' if n_excess else ':'} for the {'others' if n_excess else 'scores'} this run shows no departure "
                "from normality, which is not evidence that they are normal (Shapiro-Wilk has little power with "
                f"{ds.shape[0]} systems per input)."))
if column is not None:
    both = table.dropna(subset=["paper_summary_percent_rejected"])
    diff = (both["summary_percent_rejected"] - both["paper_summary_percent_rejected"]).abs()
    worst = both.loc[diff.idxmax()]
    same_side = ((both["system_pvalue"] < alpha) == (both["paper_system_pvalue"] < alpha)).sum()
    source = "Fabbri et al." if column == "summeval" else "Bhandari et al."
    agreement = ("every summary-level percentage equals the paper's" if diff.max() < 0.5 else
                 f"summary-level percentages differ by {diff.median():.0f} points in the median and at most "
                 f"{diff.max():.0f} ({nb.md(worst['score_name'])}: ours {worst['summary_percent_rejected']:.0f}%, "
                 "paper "
                 f"{worst['paper_summary_percent_rejected']:.0f}%)")
    p_diff = (both["system_pvalue"] - both["paper_system_pvalue"]).abs().max()
    lines.append(f"* **Against the paper** ({source} column, {len(both)} scores): {agreement}; the system-level "
                 f"p-values differ by at most {p_diff:.3f} (the paper rounds to 2 decimals) and reach the same "
                 f"decision at {alpha} for {same_side} of {len(both)} scores.")
nb.report("\n".join(lines), "appendix_table2_conclusions.md")
