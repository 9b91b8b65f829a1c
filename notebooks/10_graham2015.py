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
#     main_table: table1_variants.csv
#     paper: graham2015
# ---

# %% tags=["parameters"]
dataset = "summeval"
n_refs = 11                 # references per summary: all 11, or the first k (1: the original highlights)
human = "relevance"         # coherence | consistency | fluency | relevance | mean4 | graham | coverage | quality
annotators = "expert"       # expert | turker
coefficient = "pearson"     # pearson | spearman | kendall
test = "williams"           # williams (the paper) | perm-both | boot-both (Deutsch et al. 2021)
n_resamples = 1000          # for perm-both / boot-both
alpha = 0.05
top_k = 10
sentences = "ptb"           # sentence units for ROUGE-L/W: "ptb" (sentence-final tokens) | "lines"
seed = 0
output_dir = "results/graham2015/summeval"

# %% [markdown]
# # 10 · Graham (2015), *A critical evaluation of summarization metrics: 192 shades of ROUGE*, on SummEval
#
# Graham evaluated 192 system-level variants of ROUGE (8 counting methods × stemming × stopword removal ×
# precision/recall/F × mean/median over a system's summaries) and BLEU by their correlation with human scores
# of the DUC-2004 systems, and marked every variant that **no other variant significantly outperforms**
# (Williams' test for dependent correlations). DUC-2004 is licensed, so this notebook runs on the embedded
# SummEval data (16 systems × 100 documents, 11 references); point `dataset` at any dataset with texts that
# `metaeval.datasets.load` reads to rerun it elsewhere.
#
# Every number below comes from the library (`metaeval.graham`, `metaeval.rouge`, `metaeval.significance`);
# the ROUGE values are bit-for-bit those of ROUGE-1.5.5.

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from metaeval import graham
from metaeval.plotting import save_figure, significance_heatmap
from metaeval.run.session import start

nb = start("graham2015", dataset, output_dir=output_dir, seed=seed, texts=True,
           purpose="Graham's analysis (it scores the summaries with ROUGE and BLEU)", quiet_rouge=True)
ds, out, rng = nb.dataset, nb.out, nb.rng
H = graham.human_scores(ds, human, annotators=annotators)
scores = graham.metric_scores(ds, n_refs=n_refs, sentences=sentences)
print(f"{ds.name}: {len(ds.systems)} systems x {len(ds.inputs)} inputs; {scores.system.shape[1]} metrics "
      f"(192 ROUGE variants + BLEU [{scores.bleu_signature}])")

# %% [markdown]
# ## Table 1 analogue: all variants by system-level correlation with the human score
#
# `optimal` marks the variants not significantly outperformed by any other (Graham's •) under the chosen test at
# level `alpha`; `outperformed_by` counts the variants that significantly beat each one. Each row's `variant` is
# the metric's signature (method, stemming, stopword removal, statistic, system-level aggregation, reference mode).

# %%
table, pairs = graham.variant_table(scores, H, coefficient=coefficient, test=test, alpha=alpha,
                                    n_resamples=n_resamples, rng=rng)
table.to_csv(out / "table1_variants.csv", float_format="%.6f")
hong = list(graham.HONG_VARIANTS)
shown = table[(table.index <= 25) | table["variant"].isin(hong + [graham.BLEU, graham.GRAHAM_BEST_VARIANT])]
print(f"{int(table['optimal'].sum())} of {len(table)} metrics are optimal (not significantly outperformed)")
shown.drop(columns="variant").style.set_uuid("table1").format({"r": "{:.3f}"}).apply(
    lambda row: ["font-weight: bold" if row["optimal"] else "" for _ in row], axis=1)

# %% [markdown]
# ## Figure 3 analogue: pairwise significance for BLEU, the best ROUGE variants and the conventional ones
#
# A coloured cell means the row metric's correlation is significantly higher than the column metric's
# (one-sided test at `alpha`). The bottom rows are the variants used by Hong et al. (2014) following
# Owczarzak et al. (2012): ROUGE-1, ROUGE-2 and ROUGE-SU4 recall, median, stemmed, stopwords kept.

# %%
rouge_only = table[table["method"] != "BLEU"]
top = list(rouge_only["variant"].head(top_k))
chosen = [graham.BLEU] + top + [h for h in hong if h not in top]
index = [list(pairs.names).index(n) for n in chosen]
pmat = pd.DataFrame(pairs.pvalues[np.ix_(index, index)], index=[graham.short_label(n) for n in chosen],
                    columns=[graham.short_label(n) for n in chosen])
pmat.to_csv(out / "figure3_pvalues.csv", float_format="%.6g")
ax = significance_heatmap(pmat, alpha=alpha, title=f"{test}: row beats column ({human}, {coefficient})")
save_figure(ax.figure, out, "figure3_pairwise")
plt.show()

# %% [markdown]
# ## Table 2 analogue: which options do the optimal variants use?
#
# "Best" is defined as in the paper: the optimal variants of Table 1 (not significantly outperformed by any other
# variant), BLEU excluded. Each block gives the percentage of them that use each value of one option.

# %%
props = graham.option_proportions(table)
props.to_csv(out / "table2_option_proportions.csv", index=False, float_format="%.2f")
props.pivot_table(index=["option", "value"], values=["percent", "count"], sort=False).round(1)

# %% [markdown]
# ## Table 3 and Figure 4 analogue: ranking systems with the best and the conventional variant
#
# Systems scored by the best ROUGE variant of Table 1, by Graham's DUC-2004 recommendation (mean ROUGE-2
# precision, stemmed, stopwords removed) and by the conventional variant (median ROUGE-2 recall, stemmed,
# stopwords kept). The heatmap shows one-sided paired t-tests over the documents between every pair of systems
# (row system > column system) with the best variant; Shapiro-Wilk tests whether each system's per-summary
# scores look normal, which the t-test assumes.

# %%
best = top[0]
ranked_by = list(dict.fromkeys([best, graham.GRAHAM_BEST_VARIANT, graham.CONVENTIONAL_VARIANT]))
ranking, ttests, normality = graham.system_ranking(ds, scores, ranked_by, alpha=alpha)
ranking.insert(0, "human", pd.Series(H.mean(axis=1), index=list(ds.systems)))
ranking.to_csv(out / "table3_system_ranking.csv", float_format="%.6f")
normality.to_csv(out / "shapiro_wilk.csv", float_format="%.6g")
ttests[best].to_csv(out / "figure4_paired_ttests.csv", float_format="%.6g")
ranking.round(4)

# %%
ax = significance_heatmap(ttests[best].loc[ranking.index, ranking.index], alpha=alpha,
                          title=f"paired t-test, {graham.short_label(best)}: row system > column system")
save_figure(ax.figure, out, "figure4_system_ttests")
plt.show()
non_normal = (normality < alpha).sum()
print("systems whose per-summary scores fail Shapiro-Wilk at alpha:", dict(non_normal))

# %% [markdown]
# ## Table 4 analogue: the top variants against other human scores
#
# Graham combined coverage and linguistic quality by their arithmetic, geometric and harmonic mean and also tried
# each alone. On SummEval, coverage is expert relevance and quality the mean of coherence, consistency and fluency.
# The optimal marks are recomputed over all 193 metrics for each human score.

# %%
combos = ["arithmetic", "geometric", "harmonic", "coverage", "quality"]
rows = {}
for combo in combos:
    t_combo, _ = graham.variant_table(scores, graham.human_scores(ds, combo, annotators=annotators),
                                      coefficient=coefficient, test=test, alpha=alpha,
                                      n_resamples=n_resamples, rng=rng)
    t_combo = t_combo.set_index("variant")
    rows[(combo, "r")] = t_combo.loc[[graham.BLEU] + top, "r"]
    rows[(combo, "optimal")] = t_combo.loc[[graham.BLEU] + top, "optimal"]
table4 = pd.DataFrame(rows)
table4.index = [graham.short_label(n) for n in table4.index]
table4.to_csv(out / "table4_human_combinations.csv", float_format="%.6f")
table4.style.set_uuid("table4").format(lambda v: f"{v:.3f}" if isinstance(v, float) else ("•" if v is True else ""))

# %% [markdown]
# ## What the numbers say, next to the paper's conclusions
#
# Generated from the tables above (nothing here is typed in by hand).

# %%
optimal = table[(table["optimal"]) & (table["method"] != "BLEU")]
share = optimal["statistic"].value_counts(normalize=True).reindex(["P", "R", "F"]).fillna(0) * 100
bleu_row = table[table["variant"] == graham.BLEU].iloc[0]
rec = table[table["variant"] == graham.GRAHAM_BEST_VARIANT].iloc[0]
conv = table[table["variant"] == graham.CONVENTIONAL_VARIANT].iloc[0]
tau = graham.rank_correlation(ranking[best], ranking[graham.CONVENTIONAL_VARIANT])
lines = [
    f"* **Precision vs recall.** Among the {len(optimal)} optimal ROUGE variants, {share['P']:.0f}% use precision, "
    f"{share['R']:.0f}% recall and {share['F']:.0f}% F (Graham, DUC-2004: 52.5% / 22.5% / 25.0%). "
    + ("Precision is again the most common statistic." if share.idxmax() == "P" else
       f"Here {dict(P='precision', R='recall', F='F')[share.idxmax()]} is the most common statistic, "
       "unlike the paper."),
    f"* **BLEU** ranks {bleu_row.name} of {len(table)} (r = {bleu_row['r']:.3f}) and is "
    + ("optimal" if bleu_row["optimal"] else f"significantly outperformed by {bleu_row['outperformed_by']} variant(s)")
    + " (in the paper BLEU had the highest correlation, not significantly above the best ROUGE variant).",
    f"* **Graham's recommended variant** (mean ROUGE-2 precision, stemmed, stopwords removed) ranks {rec.name} "
    f"(r = {rec['r']:.3f}) and is " + ("optimal here too." if rec["optimal"] else
    f"outperformed by {rec['outperformed_by']} variant(s) here."),
    f"* **The conventional variant** (median ROUGE-2 recall, stemmed, stopwords kept) ranks {conv.name} "
    f"(r = {conv['r']:.3f}); {conv['outperformed_by']} variant(s) significantly outperform it. "
    f"The best variant here is `{best}` (r = {table.iloc[0]['r']:.3f} for the top metric).",
    f"* **System rankings** by the best and the conventional variant agree with Kendall tau = {tau:.3f}.",
    f"* With {len(ds.systems)} systems, Williams' test has little power: {int(table['optimal'].sum())} of "
    f"{len(table)} metrics are statistically tied at the top.",
]
summary = "\n".join(lines)
(out / "conclusions.md").write_text(summary + "\n")
from IPython.display import Markdown
Markdown(summary)
