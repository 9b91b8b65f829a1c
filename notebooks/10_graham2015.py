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
#     expected_seconds: {summeval: 10, realsumm: 8}
#     main_table: table1_variants.csv
#     paper: graham2015
# ---

# %% tags=["parameters"]
dataset = "summeval"  # embedded dataset or path; it needs summaries, references and a human score
human = None  # the human score metrics are evaluated against; None: the dataset's default human score
quality = None  # Table 4's "linguistic quality": scores averaged; None: human's annotators' other scores; []: skip
n_refs = None  # references per summary: None for all the dataset has, k for the first k
coefficient = "pearson"  # pearson (the paper) | spearman | kendall
test = "williams"  # williams (the paper) | perm-both | boot-both (Deutsch et al. 2021)
n_resamples = 1000  # resamples of perm-both / boot-both (unused by williams)
alpha = 0.05  # significance level of every test
correction = "none"  # Table 1's "outperformed": none (Graham) | bonferroni | holm | fdr_bh | fdr_by (over all pairs)
top_k = 10  # Figure 3 and Table 4 show BLEU and the top_k ROUGE variants
incomplete = "raise"  # missing cells of the human scores: raise | drop-inputs | drop-systems | keep-nan
seed = 0  # seed of the resampling tests
output_dir = None  # None: results/graham2015/<dataset>/

# %% [markdown]
# # 10 · Graham (2015): which of 192 ROUGE variants (and BLEU) agree best with humans, significantly?
#
# **The question.** ROUGE is not one metric: 8 counting methods (ROUGE-1, 2, 3, 4, L, W-1.2, S4, SU4) × stemming
# or not × stopwords removed or kept × precision, recall or F per summary × mean or median over a system's
# summaries make 192 system-level variants. Papers pick one by habit (Hong et al. 2014 used median ROUGE-1, 2 and
# SU4 recall, stemmed, stopwords kept). Graham asked which variants actually track human judgment best, and, the
# new part, which differences between variants are *statistically significant*.
#
# **How.** For every variant (and BLEU, an MT metric), the Pearson correlation between the systems' metric scores
# and their human scores; then Williams' test between every pair of variants, and a variant is *optimal* (•) if
# no other significantly outperforms it. Finally the systems of Hong et al. are re-ranked with the best variant.
#
# **Paper.** Y. Graham (2015). *Re-evaluating Automatic Summarization with BLEU and 192 Shades of ROUGE.*
# Proceedings of EMNLP 2015, 128-137. https://aclanthology.org/D15-1013
#
# The paper used DUC-2004 (licensed, not included); this notebook runs on any dataset with texts and a human
# score, by default the embedded SummEval data. The paper's numbers are quoted next to ours; they are not expected
# to agree (different data, systems and human scores), but the *conclusions* can be compared.

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from metaeval import graham
from metaeval.data.scoring import scoring_signature
from metaeval.plotting import html_cells, significance_heatmap
from metaeval.run.session import start

nb = start("graham2015", dataset, output_dir=output_dir, seed=seed, texts=True, human=human, incomplete=incomplete,
           purpose="Graham's analysis (it scores the summaries with ROUGE and BLEU)", quiet_rouge=True)
ds, out, rng, human = nb.dataset, nb.out, nb.rng, nb.human
k_refs = n_refs or ds.n_references
H = ds.matrix(human)
scores = graham.metric_scores(ds, n_refs=k_refs, sentences="ptb")
n_systems, n_inputs = ds.shape
nb.report(
    f"**Data.** {nb.md(ds.name)}: {n_systems} systems × {n_inputs} inputs, {k_refs} reference(s) per summary, "
    f"human score **{nb.md_name(human)}** ({nb.md_code(human)}). {scores.system.shape[1]} metrics: 192 ROUGE "
    f"variants computed exactly as ROUGE-1.5.5 does, and BLEU (`{scores.bleu_signature}`). (Graham: the DUC-2004 "
    "multi-document task, human "
    "score = mean of coverage and linguistic quality; Table 3 re-ranks the "
    f"{graham.PAPER['n_systems']} systems of Hong et al. 2014.)"
)

# %% [markdown]
# ### How the metrics are computed
#
# * **ROUGE variants.** Each summary gets ROUGE-N (n-gram overlap), ROUGE-L (longest common subsequence, computed
#   over *sentences*: the union LCS of each reference sentence with the summary's sentences), ROUGE-W (LCS that
#   rewards consecutive matches) and ROUGE-S4 / SU4 (word pairs at most 4 apart, SU adding unigrams), as precision,
#   recall or F against the references pooled (ROUGE's `-f A`). A system's score is the mean or median over its
#   summaries.
# * **Sentence units.** ROUGE-L and W depend on where sentences end. This notebook (like notebook 30) splits texts
#   at PTB sentence-final tokens (`.`, `!`, `?` standing alone), and every saved signature records it (`sent:ptb`),
#   with the number of references (`nrefs:`) and the version, so a number can always be traced to its configuration.
# * **BLEU** is corpus BLEU over a system's summaries (sacreBLEU, lowercased as ROUGE, texts already tokenized).
#
# ## Table 1: every variant by its system-level correlation with the human score
#
# **Method.** Pearson's r between the N systems' metric scores and their mean human scores. To compare two
# metrics, **Williams' test** asks whether r(metric 1, human) is significantly larger than r(metric 2, human)
# *given* that both metrics are computed on the same systems: it uses the third correlation r(metric 1, metric 2),
# so two metrics that agree with each other can differ significantly even when their correlations with humans are
# close. One-sided, at level `alpha`, for all 193 × 192 ordered pairs. A metric is **optimal** when no other
# metric beats it significantly.

# %%
table, pairs = graham.variant_table(scores, H, coefficient=coefficient, test=test, alpha=alpha,
                                    n_resamples=n_resamples, rng=rng, correction=correction)
table["signature"] = [scores.bleu_signature if v == graham.BLEU else scoring_signature(v, n_refs=k_refs,
                                                                                       sentences="ptb")
                      for v in table["variant"]]
table["label"] = [graham.short_label(v) for v in table["variant"]]
nb.save_table(table, "table1_variants.csv", float_format="%.6f")
hong = list(graham.HONG_VARIANTS)
shown = table[(table.index <= 25) | table["variant"].isin(hong + [graham.BLEU, graham.GRAHAM_BEST_VARIANT])]
(html_cells(shown[["label", "method", "stemming", "stopwords", "aggregation", "statistic", "r", "optimal",
                   "outperformed_by"]])
 .style.set_uuid("table1").format({"r": "{:.3f}"})
 .apply(lambda row: ["font-weight: bold" if row["optimal"] else "" for _ in row], axis=1)
 .set_caption(f"Top 25 of {len(table)} metrics, plus BLEU, Graham's recommendation and Hong et al.'s variants "
              "(bold: optimal). Key: " + graham.LABEL_KEY))

# %%
rouge_rows = table[table["method"] != "BLEU"]
optimal_rouge = rouge_rows[rouge_rows["optimal"]]
bleu_row = table[table["variant"] == graham.BLEU].iloc[0]
best_row = rouge_rows.iloc[0]
nb.report("\n".join([
    f"* The {len(rouge_rows)} ROUGE variants correlate with {nb.md_name(human)} between "
    f"r = {rouge_rows['r'].min():.3f} "
    f"and r = {rouge_rows['r'].max():.3f} (Graham: {graham.PAPER['worst_rouge_r']} to "
    f"{graham.PAPER['best_rouge_r']}): the choice of variant matters "
    + ("a lot here too." if rouge_rows['r'].max() - rouge_rows['r'].min() > 0.2 else "less here than in the paper."),
    f"* **{len(optimal_rouge)} of {len(rouge_rows)}** ROUGE variants are optimal (Graham: "
    f"{graham.PAPER['n_optimal_rouge']} of 192"
    + (f"; here the {len(table) * (len(table) - 1)} one-sided p-values are adjusted by {correction} first"
       if correction != "none" else "") + "). "
    + (f"So many ties at the top mean that with {n_systems} systems the test cannot tell most good variants apart."
       if len(optimal_rouge) > 0.1 * len(rouge_rows) else
       f"With {n_systems} systems the test singles out a small group of variants."),
    f"* The best ROUGE variant is **{best_row['label']}** (r = {best_row['r']:.3f}); BLEU ranks {bleu_row.name} "
    f"(r = {bleu_row['r']:.3f}) and is " + ("optimal" if bleu_row["optimal"] else
                                             f"outperformed by {bleu_row['outperformed_by']} variant(s)")
    + f" (Graham: BLEU first, r = {graham.PAPER['bleu_r']}, optimal).",
]), "table1_summary.md")

# %%
plot = rouge_rows.assign(statistic=rouge_rows["statistic"].map({"P": "precision", "R": "recall", "F": "F"}))
fig, ax = plt.subplots(figsize=(8, 3.8))
# seaborn draws the jitter from numpy's global generator: seeded here (and restored) so the figure is reproducible
global_state = np.random.get_state()
np.random.seed(seed)
sns.stripplot(data=plot, x="method", y="r", hue="statistic", dodge=True, size=4, jitter=0.15, ax=ax,
              order=["R-1", "R-2", "R-3", "R-4", "R-L", "R-W1.2", "R-S4", "R-SU4"],
              hue_order=["precision", "recall", "F"])
np.random.set_state(global_state)
ax.axhline(bleu_row["r"], color="#555555", linestyle="--", linewidth=1, label=f"BLEU (r = {bleu_row['r']:.3f})")
ax.set_xlabel("ROUGE counting method (each dot: one of 24 variants: stemming × stopwords × mean/median)")
ax.set_ylabel(f"{coefficient} r with {nb.name(human)}")
ax.set_title(f"Table 1 on {ds.name}: system-level correlation of the 192 ROUGE variants")
ax.legend(title="summary-level statistic", fontsize=8, title_fontsize=8, loc="upper left",
          bbox_to_anchor=(1.01, 1))  # beside the axes: inside, it covered variants
fig.tight_layout()
nb.save_figure(fig, "table1_variants")
plt.show()

# %% [markdown]
# ## Figure 3: pairwise significance among BLEU, the best ROUGE variants and the conventional ones
#
# Each coloured cell: the row metric correlates significantly more strongly with the human score than the column
# metric (one-sided test at `alpha`; colour = p-value). The last rows are the variants Hong et al. (2014) used.

# %%
top = list(rouge_rows["variant"].head(top_k))
chosen = [graham.BLEU] + top + [h for h in hong if h not in top]
index = [list(pairs.names).index(n) for n in chosen]
labels = [graham.short_label(n) for n in chosen]
pmat = pd.DataFrame(pairs.pvalues[np.ix_(index, index)], index=labels, columns=labels)
nb.save_table(pmat, "figure3_pvalues.csv", float_format="%.6g")
ax = significance_heatmap(pmat, alpha=alpha, what="metric", key=graham.LABEL_KEY,
                          title=f"Figure 3 on {ds.name}: {test} test, row beats column "
                                f"({nb.name(human)}, {coefficient}, alpha {alpha})")
nb.save_figure(ax.figure, "figure3_pairwise")
plt.show()
beaten = {graham.short_label(h): int((pmat.loc[labels[: 1 + len(top)], graham.short_label(h)] < alpha).sum())
          for h in hong}
p_bleu_best = pmat.loc["BLEU", labels[1]] if labels[1] != "BLEU" else np.nan
p_best_bleu = pmat.loc[labels[1], "BLEU"]
nb.report("\n".join([
    "* Hong et al.'s variants are significantly outperformed by "
    + ", ".join(f"{name}: {n}" for name, n in beaten.items())
    + f" of the {1 + len(top)} metrics above them (Graham: several variants significantly outperform each).",
    f"* BLEU vs the best ROUGE variant ({labels[1]}): p = {p_bleu_best:.3f} that BLEU is better, p = {p_best_bleu:.3f} "
    "that the ROUGE variant is better; "
    + ("neither difference is significant" if min(p_bleu_best, p_best_bleu) >= alpha
       else "the difference is significant")
    + " (Graham: not significant).",
]), "figure3_summary.md")

# %% [markdown]
# ## Table 2: which options do the optimal ROUGE variants use?
#
# The percentage of the optimal ROUGE variants (BLEU excluded) that use each value of each option, next to
# Graham's DUC-2004 percentages. If an option did not matter, its values would share the optimal variants in the
# proportions they have among all 192 (1/8 per method, 1/2 per binary option, 1/3 per statistic).

# %%
props = graham.option_proportions(table)
props["paper"] = [graham.PAPER_TABLE2.get((o, v), np.nan) for o, v in zip(props["option"], props["value"])]
props["difference"] = props["percent"] - props["paper"]
nb.save_table(props, "table2_option_proportions.csv", index=False, float_format="%.2f")
sources = {"percent": f"ours ({ds.name})", "paper": "Graham (DUC-2004)"}
long = props.melt(id_vars=["option", "value"], value_vars=["percent", "paper"], var_name="source",
                  value_name="share").replace({"source": sources})
options = ["method", "statistic", "stemming", "stopwords", "aggregation"]
fig, axes = plt.subplots(1, len(options), figsize=(12, 3.6), sharey=True,
                         gridspec_kw={"width_ratios": [8, 3, 2, 2, 2]})
for axis, option in zip(axes, options):
    sns.barplot(data=long[long["option"] == option], x="value", y="share", hue="source", ax=axis,
                legend=option == options[0])
    axis.set_title(option)
    axis.set_xlabel("")
    axis.set_ylabel("% of the optimal ROUGE variants" if option == options[0] else "")
    axis.tick_params(axis="x", rotation=45)
axes[0].set_ylim(0, 100)
axes[0].legend(title="", fontsize=8, loc="upper left")
fig.supxlabel("option value", fontsize=10)
fig.suptitle(f"Table 2 on {ds.name}: options of the optimal ROUGE variants, ours vs Graham's")
fig.tight_layout()
nb.save_figure(fig, "table2_option_proportions")
plt.show()
lines = []
for option, block in props.groupby("option", sort=False):
    ours, theirs = block.set_index("value")["percent"], block.set_index("value")["paper"]
    lines.append(f"* **{option}**: most optimal variants use {ours.idxmax()} ({ours.max():.0f}%); Graham: "
                 f"{theirs.idxmax()} ({theirs.max():.1f}%).")
nb.report("\n".join(lines), "table2_summary.md")

# %% [markdown]
# ## Table 3 and Figure 4: ranking the systems with the best and the conventional variant
#
# Systems scored by the best ROUGE variant found here, by Graham's DUC-2004 recommendation (mean ROUGE-2
# precision, stemmed, stopwords removed) and by the conventional variant (median ROUGE-2 recall, stemmed,
# stopwords kept). **Paired t-test**: for two systems, the per-input differences of their scores; one-sided
# "row system has the higher mean". It assumes roughly normal differences, so **Shapiro-Wilk** tests each system's
# per-summary scores for normality (a small p-value means evidence against normality).

# %%
best = top[0]
ranked_by = list(dict.fromkeys([best, graham.GRAHAM_BEST_VARIANT, graham.CONVENTIONAL_VARIANT]))
ranking, ttests, normality = graham.system_ranking(ds, scores, ranked_by, alpha=alpha)
ranking.insert(0, "human", pd.Series(H.mean(axis=1), index=list(ds.systems)))
ranking.index.name = "system"
nb.save_table(ranking, "table3_system_ranking.csv", float_format="%.6f")
nb.save_table(normality, "shapiro_wilk.csv", float_format="%.6g")
nb.save_table(ttests[best], "figure4_paired_ttests.csv", float_format="%.6g")

def column_name(c):
    if c == "human":
        return nb.name(human)
    return graham.short_label(c.removeprefix("rank: ")) + (" rank" if c.startswith("rank") else "")


ranking.rename(columns=column_name).round(4)

# %%
order = list(ranking.index)
ax = significance_heatmap(ttests[best].loc[order, order], alpha=alpha, what="system",
                          key=f"systems sorted by {graham.short_label(best)}; " + graham.LABEL_KEY,
                          title=f"Figure 4 on {ds.name}: paired t-test with {graham.short_label(best)}, "
                                "row system > column system")
nb.save_figure(ax.figure, "figure4_system_ttests")
plt.show()
tau = graham.rank_correlation(ranking[best], ranking[graham.CONVENTIONAL_VARIANT])
not_beaten = [s for s in order if not (ttests[best].loc[:, s] < alpha).any()]
non_normal = int((normality[best] < alpha).sum())
nb.report("\n".join([
    f"* The rankings by the best and by the conventional variant agree with Kendall tau = {tau:.3f} "
    f"(Graham's Table 3: tau = {graham.paper_ranking_tau():.3f}; there the top system had ranked fourth).",
    f"* {len(not_beaten)} of {len(order)} systems are not significantly outperformed by any other "
    f"({nb.md(', '.join(not_beaten))}); Graham: {len(graham.PAPER['systems_not_outperformed'])} of "
    f"{graham.PAPER['n_systems']} ({', '.join(graham.PAPER['systems_not_outperformed'])}).",
    f"* Shapiro-Wilk rejects normality for {non_normal} of {len(order)} systems at alpha = {alpha} "
    "(Graham: none)" + ("; the t-test's assumption is questionable for those." if non_normal else "."),
]), "table3_summary.md")

# %% [markdown]
# ## Table 4: does the answer depend on how human scores are combined?
#
# Graham's human score was the mean of two judgments, *coverage* (content) and *linguistic quality*. Table 4 asks
# whether the best metrics stay best under other combinations (geometric and harmonic mean) or either judgment
# alone. Here coverage is the notebook's human score and quality the mean of the `quality` scores; the optimal
# marks are recomputed over all metrics for each combination. The section needs at least one quality score
# besides the human score.

# %%
quality_scores = graham.quality_scores(ds, human) if quality is None else list(quality)
reason = ("no quality score: the dataset has no other human score from the same annotators as "
          f"{nb.md(human)}, and the `quality` parameter names none") if not quality_scores else \
    graham.missing_inputs(ds, quality_scores)
reason = reason if reason is None or not quality_scores else nb.md(reason)  # names quoted as text
if reason is None:
    names = [graham.BLEU] + top
    table4 = graham.combinations_table(scores, ds, names, coverage=human, quality=quality_scores,
                                       coefficient=coefficient, test=test, alpha=alpha, n_resamples=n_resamples,
                                       rng=rng)
    table4.index = [graham.short_label(n) for n in table4.index]
    nb.save_table(table4, "table4_human_combinations.csv", float_format="%.6f")
    r4 = table4.xs("r", axis=1, level=1)
    o4 = table4.xs("optimal", axis=1, level=1)
    lines = [f"Coverage = {nb.md_name(human)}; quality = mean of {', '.join(nb.md_name(q) for q in quality_scores)}."]
    for which in graham.COMBINATIONS:
        paper_bleu = graham.PAPER_TABLE4[graham.BLEU][which]
        if r4[which].isna().all():  # e.g. FacEval: "factual" is "no error", so its product with the errors is 0
            lines.append(f"* **{which}**: constant on this dataset, no correlation. Graham: BLEU r = {paper_bleu}.")
            continue
        lines.append(f"* **{which}**: highest r = {r4[which].max():.3f} ({nb.md(r4[which].idxmax())}); BLEU r = "
                     f"{r4.loc['BLEU', which]:.3f} {'(optimal)' if o4.loc['BLEU', which] else '(outperformed)'}; "
                     f"{int(o4[which].sum())} of {len(o4)} shown metrics optimal. "
                     f"Graham: BLEU r = {paper_bleu}, highest.")
    text = "\n".join(lines)
    shown4 = html_cells(table4).style.set_uuid("table4").format(
        lambda v: f"{v:.3f}" if isinstance(v, float) else ("•" if v is True else ""))
else:
    text = f"**Table 4 skipped**: {reason}."
    shown4 = None
nb.report(text, "table4_summary.md")

# %%
shown4

# %% [markdown]
# ## What the numbers say, next to the paper's conclusions
#
# Generated from the tables above; nothing here is typed in by hand.

# %%
share = optimal_rouge["statistic"].value_counts(normalize=True).reindex(["P", "R", "F"]).fillna(0) * 100
rec = table[table["variant"] == graham.GRAHAM_BEST_VARIANT].iloc[0]
conv = table[table["variant"] == graham.CONVENTIONAL_VARIANT].iloc[0]
stat_name = {"P": "precision", "R": "recall", "F": "F"}
lines = [
    f"* **Precision vs recall.** Among the {len(optimal_rouge)} optimal ROUGE variants, {share['P']:.0f}% use "
    f"precision, {share['R']:.0f}% recall and {share['F']:.0f}% F (Graham: 52.5% / 22.5% / 25.0%). "
    + ("Precision is again the most common statistic, as Graham found." if share.idxmax() == "P" else
       f"Here {stat_name[share.idxmax()]} is the most common statistic, unlike the paper's precision."),
    f"* **BLEU** ranks {bleu_row.name} of {len(table)} (r = {bleu_row['r']:.3f}) and is "
    + ("optimal" if bleu_row["optimal"] else f"significantly outperformed by {bleu_row['outperformed_by']} variant(s)")
    + " (paper: highest correlation, not significantly above the best ROUGE variant).",
    f"* **Graham's recommended variant** (mean ROUGE-2 precision, stemmed, stopwords removed) ranks {rec.name} "
    f"(r = {rec['r']:.3f}) and is " + ("optimal here too." if rec["optimal"] else
                                        f"outperformed by {rec['outperformed_by']} variant(s) here."),
    f"* **The conventional variant** (median ROUGE-2 recall, stemmed, stopwords kept) ranks {conv.name} "
    f"(r = {conv['r']:.3f}); {conv['outperformed_by']} variant(s) significantly outperform it.",
    f"* **System rankings** by the best and the conventional variant agree with Kendall tau = {tau:.3f} "
    f"(paper: {graham.paper_ranking_tau():.3f}).",
    f"* With {n_systems} systems, {int(table['optimal'].sum())} of {len(table)} metrics are statistically tied at "
    "the top" + (": the test separates only large differences." if table["optimal"].mean() > 0.1 else
                 ", a small group: the data separate most variants."),
]
nb.report("\n".join(lines), "conclusions.md")
