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
#     expected_seconds: {summeval: 14, realsumm: 8}
#     main_table: tables1-3_measures.csv
#     paper: lin2004
# ---

# %% tags=["parameters"]
dataset = "summeval"  # embedded dataset or path; it needs summaries, references and a human score
human = None  # the human score (Lin: DUC mean coverage); None: the dataset's default human score
measures = ["R-1", "R-2", "R-3", "R-4", "R-5", "R-6", "R-7", "R-8", "R-9", "R-L", "R-S*", "R-S4", "R-S9",
            "R-SU*", "R-SU4", "R-SU9", "R-W1.2"]  # Lin's 17 measures
statistic = "R"  # Lin's ROUGE scores are recall (the DUC convention): R | P | F
many_refs = None  # the "several references" columns of Tables 1-3; None: all the dataset has
curve_measures = ["R-1", "R-SU4"]  # measures of the sample-size study (Lin: R-1 and R-SU4)
curve_setting = "STOP"  # preprocessing of the sample-size study (Lin: stemmed, stopwords removed)
ref_counts = None  # references in the sample-size study; None: 1, 2, 3 (at most what the dataset has)
size_step = 5  # sample sizes 1, then every size_step documents up to all of them
n_resamples = 1000  # bootstrap samples per estimate (Lin: 1000)
alpha = 0.05  # level of the paired tests and of the critical r
example_system = None  # system whose mean scores Tables 3-6 follow; None: the dataset's first system
incomplete = "raise"  # missing cells of the human score: raise | drop-inputs | drop-systems | keep-nan
seed = 0  # seed of every bootstrap
output_dir = None  # None: results/lin2004/<dataset>/

# %% [markdown]
# # 30 · Lin (2004): which ROUGE measures work, and how many documents and references are enough?
#
# **The questions.** Lin introduced ROUGE's measures and checked them against DUC's human coverage scores: which
# of 17 measures (ROUGE-1 to 9, L, W-1.2, S and SU with skip distances 4, 9 and unlimited) correlate best with
# humans, does stemming or stopword removal help, do several references help, and how many documents must an
# evaluation have before the correlation is trustworthy?
#
# **How.** System-level Pearson correlation between the systems' mean ROUGE scores and their mean human scores,
# under three preprocessings (CASE: text as is; STEM: Porter stemming; STOP: stemming and stopword removal),
# with one and with several references; 95% confidence intervals by bootstrap over documents; then, for growing
# samples of s documents drawn with replacement, the distribution of the correlation (mean M and interval width
# dCI), and the smallest s at which M - dCI/2 exceeds the critical value of Pearson's r.
#
# **Paper.** C.-Y. Lin (2004). *Looking for a Few Good Metrics: Automatic Summarization Evaluation — How Many
# Samples Are Enough?* Proceedings of the NTCIR Workshop 4. The measures are those of C.-Y. Lin (2004),
# *ROUGE: A Package for Automatic Evaluation of Summaries*, Text Summarization Branches Out (ACL workshop),
# 74-81. https://aclanthology.org/W04-1013
#
# DUC is licensed (not included); the paper's DUC-2001 single-document values (12 systems) are quoted next to
# ours. They are not expected to match: other data, other systems, other human scores.

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from scipy import stats

from metaeval import lin
from metaeval.data.scoring import scoring_signature
from metaeval.run.session import start
from metaeval.studies.plotting import wrap_label
from metaeval.variants import parse_measure

nb = start("lin2004", dataset, output_dir=output_dir, seed=seed, texts=True, human=human, incomplete=incomplete,
           purpose="Lin's analysis (it scores the summaries with ROUGE)", quiet_rouge=True)
ds, out, rng, human = nb.dataset, nb.out, nb.rng, nb.human
Z = ds.matrix(human)
variants = lin.lin_variants([parse_measure(m) for m in measures], stat=statistic)
n_systems, n_inputs = ds.shape
many = many_refs or ds.n_references
ref_list = sorted({1, many})
counts = ref_counts or lin.default_ref_counts(ds.n_references)
example = example_system if example_system is not None else ds.systems[0]
if example not in ds.systems:
    raise ValueError(f"example_system {example!r} is not a system of {ds.name}; systems: {', '.join(ds.systems)}")
r_crit = lin.critical_r(n_systems, alpha)
nb.report(
    f"**Data.** {nb.md(ds.name)}: {n_systems} systems × {n_inputs} documents, {ds.n_references} reference(s) per "
    f"document; human score **{nb.md_name(human)}**. Tables 1-3 use {' and '.join(map(str, ref_list))} "
    "reference(s); the "
    f"sample-size study uses {', '.join(map(str, counts))}. ROUGE-{statistic} throughout, sentences split at PTB "
    f"sentence-final tokens (`sent:ptb` in every signature). (Lin: DUC 2001-2003; DUC 2001 single-document task: "
    f"{lin.PAPER_N_SYSTEMS} systems, 1 and 3 references.)"
    + ("" if ds.n_references > 1 else " With a single reference per document the several-references analyses "
       "reduce to one reference: the dataset cannot say whether more references help.")
)

# %% [markdown]
# ## Tables 1-3: 17 measures × CASE / STEM / STOP, with one and several references
#
# **Method.** For each measure and setting, Pearson's r between the systems' mean ROUGE and mean human score, and
# its 95% bootstrap interval (documents resampled, as Lin). Lin marked the best measure of each column and the
# measures "statistically equivalent" to it; here the mark is decided by a **one-sided paired bootstrap test** over
# documents (is the best measure's r significantly larger than this one's, at `alpha`?).

# %%
tables = []
for n_refs in ref_list:
    mats = lin.rouge_matrices_lin(ds, variants, n_refs, sentences="ptb")
    t = lin.measure_table(mats, Z, n_resamples=n_resamples, alpha=alpha, rng=rng)
    t.insert(0, "references", n_refs)
    t["signature"] = [scoring_signature(variants[(s, m)].signature, n_refs=n_refs, sentences="ptb")
                      for s, m in zip(t["setting"], t["measure"])]
    tables.append(t)
table = pd.concat(tables, ignore_index=True)
paper_refs = {many: 3, 1: 1}  # Lin's single and multiple reference columns (DUC 2001: 3 references)
table["paper_duc2001"] = [lin.PAPER_TABLE1_DUC2001.get((paper_refs[n], s, m), np.nan)
                          for n, s, m in zip(table["references"], table["setting"], table["measure"])]
nb.save_table(table, "tables1-3_measures.csv", index=False, float_format="%.4f")
wide = table.assign(cell=table.apply(lin.mark, axis=1)).pivot_table(
    index="measure", columns=["references", "setting"], values="cell", aggfunc="first", sort=False).reindex(measures)
nb.save_table(wide, "tables1-3_measures_wide.csv")
print("Key:", lin.MARK_KEY)
wide

# %%
values = table.pivot_table(index="measure", columns=["references", "setting"], values="r", sort=False).reindex(measures)
labels = wide.to_numpy()
# long labels wrapped to the figure's width (~9 characters per inch, which depends on the number of references);
# every wrapped line gets its own height, so that the rows keep theirs
fig_width = 1.3 * values.shape[1] + 2.5
title = wrap_label(f"Tables 1-3 on {ds.name}: system-level correlation of {len(measures)} ROUGE-{statistic} measures",
                   int(9 * fig_width))
xlabel = wrap_label("references, preprocessing (CASE: as is; STEM: stemmed; STOP: stemmed, stopwords removed)",
                    int(9 * fig_width))
extra_lines = title.count("\n") + xlabel.count("\n")
fig, ax = plt.subplots(figsize=(fig_width, 0.33 * len(measures) + 1.8 + 0.25 * extra_lines))
sns.heatmap(values, annot=labels, fmt="", cmap="rocket_r", cbar_kws={"label": f"Pearson r with {nb.name(human)}"},
            annot_kws={"fontsize": 7}, ax=ax)
ax.set_xticklabels([f"{s}\n{n} ref" for n, s in values.columns], rotation=0, fontsize=8)
ax.set_xlabel(xlabel)
ax.set_ylabel("ROUGE measure")
ax.set_title(title)
fig.text(0.01, 0.005, "Key: " + lin.MARK_KEY, fontsize=7)
fig.tight_layout(rect=(0, 0.04, 1, 1))
nb.save_figure(fig, "tables1-3_measures")
plt.show()


def setting_effect(frame, column):
    """Mean change of r from CASE to STEM and to STOP, and from 1 to several references."""
    grid = frame.pivot_table(index=["references", "measure"], columns="setting", values=column)
    by_refs = frame.pivot_table(index=["setting", "measure"], columns="references", values=column)
    refs_gain = (by_refs.iloc[:, -1] - by_refs.iloc[:, 0]).mean() if by_refs.shape[1] > 1 else np.nan
    return (grid["STEM"] - grid["CASE"]).mean(), (grid["STOP"] - grid["CASE"]).mean(), refs_gain


stem, stop, refs_gain = setting_effect(table, "r")
p_stem, p_stop, p_refs = setting_effect(table.dropna(subset=["paper_duc2001"]), "paper_duc2001")
lines = []
for (n_refs, setting), block in table.groupby(["references", "setting"], sort=False):
    best = block[block["best"]].iloc[0]
    tied = block[block["indistinguishable"] & ~block["best"]]["measure"].tolist()
    lines.append(f"* {n_refs} ref, {setting}: best **{best['measure']}** (r = {best['r']:.3f}, 95% CI "
                 f"{best['low']:.2f} to {best['high']:.2f}); {len(tied)} other measure(s) not significantly worse.")
lines.append(f"* Stemming changes r by {stem:+.3f} on average and stemming + stopword removal by {stop:+.3f} "
             f"(Lin, DUC 2001 single documents: {p_stem:+.3f} and {p_stop:+.3f}).")
if ref_list[-1] > 1:
    lines.append(f"* {ref_list[-1]} references instead of 1 change r by {refs_gain:+.3f} on average (Lin, 3 instead "
                 f"of 1: {p_refs:+.3f}; \"using multiple references improved performance though not much\").")
above = table[table["r"] > table["high"]]
if len(above):
    ex = above.iloc[0]
    lines.append(f"* For {len(above)} of {len(table)} cells the correlation lies above its own bootstrap interval "
                 f"(e.g. {ex['measure']}, {ex['setting']}: r = {ex['r']:.3f}, interval "
                 f"{ex['low']:.3f} to {ex['high']:.3f}). Resampling documents with replacement "
                 "adds noise to the system means, which pulls resampled correlations down when r is close to 1; "
                 "percentile intervals do not correct that bias.")
nb.report("\n".join(lines), "tables1-3_summary.md")

# %% [markdown]
# ### Next to Lin's DUC 2001 values
#
# Our correlation, Lin's (DUC 2001 100-word single-document summaries; his 3-reference column is set against our
# several-references column) and the difference, for the measures Lin reports. The rank agreement (Kendall tau over
# the measures) says whether the measures come out in the same order, which is what a reader choosing a measure
# needs, even where the levels differ.

# %%
compare = table.dropna(subset=["paper_duc2001"]).assign(difference=lambda t: t["r"] - t["paper_duc2001"])
nb.save_table(compare[["references", "setting", "measure", "r", "paper_duc2001", "difference"]],
              "tables1-3_vs_paper.csv", index=False, float_format="%.4f")
lines = []
for (n_refs, setting), block in compare.groupby(["references", "setting"], sort=False):
    tau = stats.kendalltau(block["r"], block["paper_duc2001"]).statistic
    order = ("in a similar order" if tau > 0.3 else "in a largely opposite order" if tau < -0.3
             else "in an unrelated order")
    lines.append(f"* {n_refs} ref, {setting}: ours minus Lin's r is {block['difference'].mean():+.3f} on average "
                 f"(from {block['difference'].min():+.3f} to {block['difference'].max():+.3f}); the measures come "
                 f"out {order} (Kendall tau = {tau:.2f}).")
nb.report("\n".join(lines), "tables1-3_vs_paper.md")
compare.pivot_table(index="measure", columns=["references", "setting"], values=["r", "paper_duc2001", "difference"],
                    sort=False).reindex([m for m in measures if m in set(compare["measure"])]).round(3)

# %% [markdown]
# ## Tables 3-6: the correlation as a function of sample size and number of references
#
# For each sample size s (1 document, then every `size_step` documents up to all of them) and each number of
# references, `n_resamples` bootstrap samples of s documents (drawn with replacement) give the systems' mean ROUGE
# and mean human score; **M** is the mean correlation over the samples and **dCI** the width of its 95% interval.
# Lin resampled documents only; resampling systems too (**Boot-Both**, Deutsch et al. 2021) also counts the
# uncertainty of which systems happen to be evaluated, so its intervals are wider. The example system's mean
# scores (Lin's "system R") show how fast a single system's score settles.

# %%
sizes = sorted(set([1] + list(range(size_step, n_inputs + 1, size_step)) + [n_inputs]))
sys_index = list(ds.systems).index(example)
curve_variants = {key: v for key, v in variants.items() if key[0] == curve_setting and key[1] in curve_measures}
curves, draws = [], {}
for n_refs in counts:
    mats = lin.rouge_matrices_lin(ds, curve_variants, n_refs, sentences="ptb")
    for (setting, measure), X in mats.items():
        for resample in ("inputs", "both"):
            summary, d = lin.sample_size_curves(X, Z, sizes, n_resamples=n_resamples, resample=resample,
                                                system=sys_index, rng=rng)
            summary.insert(0, "resample", resample)
            summary.insert(0, "references", n_refs)
            summary.insert(0, "measure", measure)
            curves.append(summary)
            draws.update({(measure, n_refs, resample, s, c): v for (s, c), v in d.items()})
curves = pd.concat(curves, ignore_index=True)
nb.save_table(curves, "tables3-6_sample_size.csv", index=False, float_format="%.4f")
first = curves[(curves["resample"] == "inputs") & (curves["measure"] == curve_measures[0])]
first[["references", "size", "pearson_M", "pearson_dCI", "spearman_M", "spearman_dCI", "system_metric_M",
       "system_human_M"]].round(3).head(12)

# %%
full = curves[(curves["resample"] == "inputs") & (curves["size"] == n_inputs)]
one = curves[(curves["resample"] == "inputs") & (curves["size"] == 1)]
paper_curve = {("R-1", 1): "Lin, DUC 2001: M = 0.02 (dCI 1.20) with 1 document, 0.78 (dCI 0.39) with 86"}
lines = []
for measure in curve_measures:
    for n_refs in counts:
        a = one[(one["measure"] == measure) & (one["references"] == n_refs)].iloc[0]
        b = full[(full["measure"] == measure) & (full["references"] == n_refs)].iloc[0]
        lines.append(f"* {measure}, {n_refs} ref: with 1 document M = {a['pearson_M']:.2f} "
                     f"(dCI {a['pearson_dCI']:.2f}); with all {n_inputs}: M = {b['pearson_M']:.2f} "
                     f"(dCI {b['pearson_dCI']:.2f})"
                     + (f" ({paper_curve[(measure, n_refs)]})." if (measure, n_refs) in paper_curve else "."))
lines.append(f"* {nb.md(example)}'s mean {curve_measures[0]} settles from a 95% range of "
             f"{first['system_metric_dCI'].iloc[0]:.3f} with one document to {first['system_metric_dCI'].iloc[-1]:.3f} "
             f"with {int(first['size'].iloc[-1])} (Lin's system R, R-1 with 1 reference: 0.557 with one document, "
             "0.070 with 66).")
nb.report("\n".join(lines), "tables3-6_summary.md")

# %% [markdown]
# ## Figures 2-3: the resampled correlations as boxplots (documents resampled, as Lin)
#
# Each box: the middle half of the bootstrap correlations at that sample size (line: median; whiskers: 1.5 × the
# box). The dashed line is the critical value of r: below it, a correlation of that size would not be significant
# at `alpha` with this many systems.

# %%
shown = sizes[:: max(1, len(sizes) // 10)]
figure_names = {"pearson": ("figure2_pearson", "Figure 2", "Pearson"),
                "spearman": ("figure3_spearman", "Figure 3", "Spearman")}
for coef, (fig_name, label, coef_name) in figure_names.items():
    long = pd.DataFrame([
        {"measure": m, "references": f"{n} ref", "documents": s, "r": r}
        for m in curve_measures for n in counts for s in shown for r in draws[(m, n, "inputs", s, coef)]
    ])
    grid = sns.catplot(data=long, kind="box", x="documents", y="r", row="measure", col="references",
                       showfliers=False, color="#8fb0d9", height=2.8, aspect=1.5, sharey=True)
    for axis in grid.axes.flat:
        line = axis.axhline(r_crit, color="#C44E52", linewidth=1, linestyle="--")
        axis.tick_params(axis="x", labelsize=7)
    grid.set_axis_labels("documents in the sample", f"{coef_name} r")
    grid.set_titles("{row_name}, {col_name}")
    grid.figure.legend([line], [f"critical r = {r_crit:.3f} (alpha {alpha}, {n_systems} systems)"],
                       loc="lower center", ncol=1, fontsize=8, frameon=False)
    grid.figure.suptitle(f"{label} on {ds.name}: {coef_name} r of ROUGE-{statistic} ({curve_setting}) with "
                         f"{nb.name(human)} vs sample size ({n_resamples} bootstrap samples per box)")
    grid.figure.tight_layout(rect=(0, 0.05, 1, 1))
    nb.save_figure(grid.figure, fig_name)
    plt.show()
    lines = []
    for measure in curve_measures:
        for n in counts:
            low, high = draws[(measure, n, "inputs", shown[0], coef)], draws[(measure, n, "inputs", shown[-1], coef)]
            lines.append(f"* {measure}, {n} ref: median r {np.median(low):.2f} with {shown[0]} document(s), "
                         f"{np.median(high):.2f} with {shown[-1]}; the share of bootstrap samples above the critical r "
                         f"grows from {np.mean(low > r_crit):.0%} to {np.mean(high > r_crit):.0%}.")
    nb.report(f"**{label} ({coef_name}).**\n" + "\n".join(lines))

# %% [markdown]
# ## Critical sample size, and what Boot-Both changes
#
# **Lin's rule.** The smallest number of documents at which the mean correlation minus half its interval width
# exceeds the critical r: then even the lower end of the typical correlation is significant. Lin found 86 documents
# for ROUGE-1 and ROUGE-SU4 with one reference on DUC 2001 (12 systems, critical r 0.576), and 71 and 66 with three
# references. Boot-Both widens the intervals, so it can only raise that number ("not reached": more documents than
# the dataset has would be needed).

# %%
rows = []
for (measure, n_refs, resample), block in curves.groupby(["measure", "references", "resample"]):
    rows.append({"measure": measure, "references": n_refs, "resample": resample,
                 "critical_size_pearson": lin.critical_sample_size(block, r_crit, "pearson"),
                 "critical_size_spearman": lin.critical_sample_size(block, r_crit, "spearman"),
                 "paper_duc2001": lin.PAPER_CRITICAL_SIZES.get((measure, n_refs), np.nan)
                 if resample == "inputs" else np.nan})
critical = pd.DataFrame(rows)
nb.save_table(critical, "critical_sample_sizes.csv", index=False)
print(f"critical r for {n_systems} systems at alpha = {alpha}: {r_crit:.3f} (Lin, 12 systems: 0.576)")
critical.pivot_table(index=["measure", "references"], columns="resample",
                     values=["critical_size_pearson", "paper_duc2001"], dropna=False)


# %%
def documents(v):
    return "not reached" if np.isnan(v) else f"{int(v)} documents"


lines = []
for measure in curve_measures:
    block = critical[critical["measure"] == measure]
    for n_refs in counts:
        pick = block[block["references"] == n_refs].set_index("resample")["critical_size_pearson"]
        paper = lin.PAPER_CRITICAL_SIZES.get((measure, n_refs))
        lines.append(f"* {measure}, {n_refs} reference(s): {documents(pick['inputs'])} when resampling documents "
                     f"(Lin: {documents(paper) if paper else 'not reported'}); {documents(pick['both'])} with "
                     "Boot-Both.")
nb.report("\n".join(lines), "critical_sample_sizes.md")
