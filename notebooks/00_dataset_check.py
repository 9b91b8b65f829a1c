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
#     expected_seconds: {summeval: 4, realsumm: 4}
#     main_table: system_scores.csv
#     paper: dataset_check
# ---

# %% tags=["parameters"]
dataset = "summeval"  # an embedded dataset (`metaeval datasets`) or the path of your own dataset folder / file
human = None  # the human score shown per system; None: the dataset's default human score
incomplete = "raise"  # missing cells of `human`: raise | drop-inputs | drop-systems | keep-nan
seed = 0  # nothing here is random; every notebook takes a seed
output_dir = None  # None: results/dataset_check/<dataset>/

# %% [markdown]
# # 00 · Dataset check: what a dataset holds, and does it reproduce its published numbers?
#
# Every other notebook trusts the dataset it is given. This one looks at it first: how many systems and inputs,
# whether summaries and references are there (and how many references per input), which scores exist, which of
# them are human judgments, and whether any score misses cells. For the embedded SummEval data it also checks
# the expert relevance means against the values SummEval published, which proves the path from the raw files to
# `results/`.
#
# Data sources of the embedded datasets:
# SummEval: A. R. Fabbri, W. Kryściński, B. McCann, C. Xiong, R. Socher, D. Radev (2021). *SummEval:
# Re-evaluating Summarization Evaluation.* TACL 9, 391-409. https://doi.org/10.1162/tacl_a_00373 ;
# REALSumm: M. Bhandari, P. N. Gour, A. Ashfaq, P. Liu, G. Neubig (2020). *Re-evaluating Evaluation in Text
# Summarization.* EMNLP 2020. https://aclanthology.org/2020.emnlp-main.751 ; metric scores of both from
# D. Deutsch, R. Dror, D. Roth (2021), *A Statistical Analysis of Summarization Evaluation Metrics Using
# Resampling Methods*, TACL 9, 1132-1146. https://doi.org/10.1162/tacl_a_00417

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from metaeval.run.session import start
from metaeval.studies.plotting import wrap_label

# the human score is optional here: a texts-only dataset is checked too (its human sections say why they skip)
from metaeval.datasets import load

if human is None and not load(dataset).human_scores:
    nb = start("dataset_check", dataset, output_dir=output_dir, seed=seed)
else:
    nb = start("dataset_check", dataset, output_dir=output_dir, seed=seed, human=human, incomplete=incomplete,
               purpose="the dataset check (system means of the human score)")
ds, out, human = nb.dataset, nb.out, nb.human
print(ds.summary_text())

# %% [markdown]
# ## Scores and their coverage
#
# One row per score: whether it is a human judgment and how many of the systems × inputs cells it has. Only the
# scores an analysis uses must be complete; each notebook checks its own (its `incomplete` parameter decides
# what happens to missing cells).

# %%
coverage = ds.describe()
nb.save_table(coverage, "score_coverage.csv", index=False)
n_cells = ds.shape[0] * ds.shape[1]
incomplete_scores = coverage[coverage["missing"] > 0]
lines = [
    f"* **{nb.md(ds.name)}**: {ds.shape[0]} systems × {ds.shape[1]} inputs = {n_cells} cells; "
    + (f"texts present, {ds.n_references} reference(s) per input (the minimum over inputs)."
       if ds.has_texts else
       "summaries present but no references: reference-based metrics (notebooks 10, 21, 30) cannot score them."
       if ds.texts is not None and ds.texts["summary"].notna().all() else
       "no texts (scores only): notebooks that score summaries (10, 21, 30) cannot run on it."),
    f"* {len(coverage)} scores, {int(coverage['human'].sum())} of them human judgments "
    f"({', '.join(nb.md_name(s) for s in ds.human_scores) or 'none'}); "
    + (f"the default human score is {nb.md_name(human)}." if human else
       "without a human score no metric can be evaluated on it (name one with default_human in dataset.yml)."),
    ("* Every score is complete." if incomplete_scores.empty else
     f"* {len(incomplete_scores)} score(s) miss cells: "
     + ", ".join(f"{nb.md(r.score)} ({r.missing} of {n_cells})" for r in incomplete_scores.itertuples())
     + ". Analyses that use them need `incomplete='drop-inputs'`, `'drop-systems'` or `'keep-nan'`."),
]
nb.report("\n".join(lines), "dataset_summary.md")

# %% [markdown]
# ## System-level human scores
#
# A system's score is the mean over its summaries (for SummEval each summary's score is already the mean of its
# three expert or five crowd ratings). System-level correlations of metrics are computed on exactly these means.

# %%
humans = [s for s in ds.human_scores if s in ds.score_names]
if human is None:
    nb.report(f"Skipped: {nb.md(ds.name)} has no human score, so there are no system-level human scores to show.")
    table = pd.DataFrame()
else:
    table = pd.DataFrame({s: ds.system_scores(s) for s in humans}).sort_values(human, ascending=False)
    table.index.name = "system"
    nb.save_table(table, "system_scores.csv", float_format="%.6f")
table.rename(columns=ds.display_name).round(3)

# %%
if human is not None:
    frame = table[human].rename("score").reset_index()
    fig, ax = plt.subplots(figsize=(max(6.0, 0.38 * len(frame) + 1.5), 3.4))
    sns.barplot(data=frame, x="system", y="score", color="#4C72B0", ax=ax)
    ax.set_xlabel("system (sorted by the score)")
    ax.set_ylabel(f"mean {ds.display_name(human)}")
    # wrapped to the figure's width (~11 characters per inch): a user dataset's name can be a long path
    ax.set_title(wrap_label(f"{ds.name}: system-level {ds.display_name(human)} ({ds.shape[1]} inputs per system)",
                            int(11 * fig.get_figwidth())))
    ax.tick_params(axis="x", rotation=90)
    fig.tight_layout()
    nb.save_figure(fig, "system_scores")
    plt.show()
    spread = table[human]
    nb.report(
        f"The {len(spread)} systems' mean {nb.md_name(human)} ranges from {spread.min():.3f} "
        f"({nb.md(spread.idxmin())}) to {spread.max():.3f} ({nb.md(spread.idxmax())}); the middle half of the systems "
        "lies within "
        f"{spread.quantile(0.75) - spread.quantile(0.25):.3f} of each other, so metrics must separate systems whose "
        "human scores are that close."
    )

# %% [markdown]
# ## How the human scores agree with each other
#
# System-level Pearson correlation between every pair of human scores. Where a dataset has several judgments of
# the same quality (SummEval's expert and crowd ratings), this shows how much annotators agree, an upper bound
# of what any metric can be expected to reach; where it has one, there is nothing to compare.

# %%
if len(humans) > 1:
    corr = table[humans].corr(method="pearson")
    corr.index = corr.columns = [ds.display_name(s) for s in humans]
    nb.save_table(corr, "human_score_correlations.csv", float_format="%.4f")
    fig, ax = plt.subplots(figsize=(0.6 * len(humans) + 3, 0.5 * len(humans) + 2.2))
    sns.heatmap(corr, vmin=-1, vmax=1, cmap="vlag", annot=True, fmt=".2f", annot_kws={"fontsize": 7},
                cbar_kws={"label": "Pearson r (system level)"}, ax=ax)
    ax.set_xlabel("human score")
    ax.set_ylabel("human score")
    # a figure title above the heatmap and its colour bar (an axes title would run over the colour bar's ticks),
    # wrapped to the figure's width: a user dataset's name can be long
    fig.suptitle(wrap_label(f"{ds.name}: agreement of the human scores across systems", int(10 * fig.get_figwidth())),
                 fontsize=10)
    fig.tight_layout()
    nb.save_figure(fig, "human_score_correlations")
    plt.show()
    pairs = corr.where(~np.eye(len(corr), dtype=bool)).stack()
    text = (f"Across systems, the human scores correlate between r = {pairs.min():.2f} "
            f"({nb.md(' / '.join(pairs.idxmin()))}) "
            f"and r = {pairs.max():.2f} ({nb.md(' / '.join(pairs.idxmax()))}).")
else:
    text = (f"Skipped: {nb.md(ds.name)} has {len(humans)} human score ({nb.md(', '.join(humans)) or 'none'}), so "
            "there is no "
            "pair to compare.")
nb.report(text)

# %% [markdown]
# ## Against SummEval's published values
#
# SummEval's paper (Fabbri et al., 2021, Table 2) reports the expert relevance means of its systems to two or three
# decimals; five of them are checked here. `difference` is ours minus theirs and must vanish up to that rounding.
# The check runs only on the embedded `summeval` dataset (other datasets have no published values here).

# %%
PUBLISHED_SUMMEVAL = {"M23": 4.26, "M22": 4.25, "M17": 4.23, "M0": 4.137, "M11": 3.147}
if ds.name == "summeval" and "expert.relevance" in ds.score_names:
    published = pd.Series(PUBLISHED_SUMMEVAL, name="published")
    check = pd.DataFrame({"ours": ds.system_scores("expert.relevance")[published.index], "published": published})
    check["difference"] = check["ours"] - check["published"]
    # the paper rounds to 2 or 3 decimals: agreement means a difference within half the last digit (+ float slack)
    check["agrees"] = check["difference"].abs() <= 0.0051
    nb.save_table(check, "published_check.csv", float_format="%.6f")
    worst = check["difference"].abs().idxmax()
    text = (f"{int(check['agrees'].sum())} of {len(check)} published means are reproduced; the largest difference "
            f"is {check.loc[worst, 'difference']:+.4f} ({worst}: ours {check.loc[worst, 'ours']:.4f}, published "
            f"{check.loc[worst, 'published']}).")
    display_table = check.round(4)
else:
    text = ("Skipped: published system means are only checked for the embedded `summeval` dataset "
            f"(this is {nb.md(ds.name)}).")
    display_table = None
nb.report(text)

# %%
if display_table is not None:
    assert display_table["agrees"].all(), display_table
display_table
