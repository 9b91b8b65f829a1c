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
#     main_table: published_check.csv
#     paper: dataset_check
# ---

# %% tags=["parameters"]
dataset = "summeval"
dimension = "expert.relevance"
output_dir = "results/00_summeval_check"
seed = 0

# %% [markdown]
# # 00 · SummEval end to end: the embedded data and its published system scores
#
# This notebook proves the path from the embedded data to `results/`: it loads SummEval (16 systems × 100
# CNN/DailyMail documents, 11 references each, 3 expert and 5 crowd ratings per summary), shows the system-level
# mean of a human dimension for every system, and compares the expert relevance means with the values SummEval
# published (Fabbri et al., 2021, Table 2): M23 4.26, M22 4.25, M17 4.23, M0 4.137, M11 3.147.
#
# Parameters (next cell) follow the compendium's convention: literal values only; `dataset` is a name known to
# `metaeval.datasets.load` or a path to your own data in the same form.

# %%
import pandas as pd

from metaeval.run.session import start

nb = start("dataset_check", dataset, output_dir=output_dir, seed=seed, scores=[dimension])
ds, out = nb.dataset, nb.out
print(f"{ds.name}: {len(ds.systems)} systems x {len(ds.inputs)} inputs; scores: {', '.join(ds.score_names)}")

# %% [markdown]
# ## System-level scores
#
# Each system's score is the mean over its 100 summaries of the per-summary mean of the three expert ratings.

# %%
table = pd.DataFrame({name: ds.system_scores(name) for name in ds.score_names}).sort_values(dimension, ascending=False)
table.index.name = "system"
table.round(3)

# %% [markdown]
# ## Against SummEval's published values
#
# The published table gives the expert relevance means to two or three decimals; `difference` is ours minus theirs
# and must vanish up to that rounding.

# %%
published = pd.Series({"M23": 4.26, "M22": 4.25, "M17": 4.23, "M0": 4.137, "M11": 3.147}, name="published")
check = pd.DataFrame({"ours": ds.system_scores("expert.relevance")[published.index], "published": published})
check["difference"] = check["ours"] - check["published"]
check["agrees"] = check["difference"].abs() <= 0.0051
table.to_csv(out / "system_scores.csv", float_format="%.6f")
check.to_csv(out / "published_check.csv", float_format="%.6f")
assert check["agrees"].all(), check
check.round(4)

# %%
import matplotlib.pyplot as plt

from metaeval.plotting import save_figure, use_compendium_style

use_compendium_style()

fig, ax = plt.subplots(figsize=(7, 3.2))
table[dimension].plot.bar(ax=ax, color="#4C72B0")
ax.set_ylabel(f"mean {dimension}")
ax.set_xlabel("system")
ax.set_ylim(1, 5)
ax.set_title("SummEval: system-level expert relevance")
fig.tight_layout()
save_figure(fig, out, "system_scores")
plt.show()
