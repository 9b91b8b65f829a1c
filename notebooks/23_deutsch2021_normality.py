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
#     main_table: appendix_table2_normality.csv
#     paper: deutsch2021
# ---

# %% tags=["parameters"]
dataset = "fabbri2020"
scores = ["expert.relevance", "qa-eval.f1", "bertscore.recall", "MoverScore", "s3.resp", "METEOR", "BEwTE.f1",
          "AutoSummENG", "rouge-1.f1", "rouge-2.f1", "rouge-l.f1", "rouge-su4.f1"]
alpha = 0.05
seed = 0
output_dir = "results/deutsch2021/fabbri2020_normality"

# %% [markdown]
# # 23 · Deutsch et al. (2021), Appendix Table 2: are the scores normal?
#
# Fisher's interval and Williams' test assume normally distributed scores. Shapiro-Wilk p-value of each metric's
# and the ground truth's system-level scores, and at the summary level the percentage of inputs whose per-input
# scores (across systems) fail the test at alpha.

# %%
from metaeval import deutsch
from metaeval.run.session import start

nb = start("deutsch2021", dataset, output_dir=output_dir, seed=seed, scores=scores)
ds, out, rng = nb.dataset, nb.out, nb.rng
table = deutsch.normality({name: ds.matrix(name) for name in scores}, alpha=alpha)
table.to_csv(out / "appendix_table2_normality.csv", index=False, float_format="%.4f")
table.round(3)
