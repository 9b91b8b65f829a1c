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
#     main_table: tables1-3_measures.csv
#     paper: lin2004
# ---

# %% tags=["parameters"]
dataset = "summeval"
human = "expert.relevance"
measures = ["R-1", "R-2", "R-3", "R-4", "R-5", "R-6", "R-7", "R-8", "R-9", "R-L", "R-S*", "R-S4", "R-S9",
            "R-SU*", "R-SU4", "R-SU9", "R-W1.2"]
statistic = "R"               # Lin's ROUGE scores are recall (the DUC convention)
many_refs = 11                # the "several references" columns of Tables 1-3
curve_measures = ["R-1", "R-SU4"]
curve_setting = "STOP"        # Lin: stemmed, stopwords removed
ref_counts = [1, 2, 3]        # the original highlights, then crowd references in file order
size_step = 5
n_resamples = 1000
alpha = 0.05
example_system = "M0"
sentences = "ptb"
seed = 0
output_dir = "results/lin2004/summeval"

# %% [markdown]
# # 30 · Lin (2004): which ROUGE measures, and how many documents and references are enough?
#
# Lin correlated 17 ROUGE measures with DUC human coverage scores under three preprocessing settings (CASE: as is;
# STEM: Porter stemming; STOP: stemming and stopword removal), with one and several references, and then asked how
# the correlation and its 95% interval change with the number of documents and references. DUC is licensed; this
# notebook runs on SummEval, whose 11 references per document make the multi-reference study possible. The human
# score is expert relevance (the closest analogue of DUC's coverage) unless you choose another.

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from metaeval import lin
from metaeval.plotting import save_figure
from metaeval.run.session import start
from metaeval.variants import parse_measure

nb = start("lin2004", dataset, output_dir=output_dir, seed=seed, texts=True, scores=[human],
           purpose="Lin's analysis (it scores the summaries with ROUGE)", quiet_rouge=True)
ds, out, rng = nb.dataset, nb.out, nb.rng
Z = ds.matrix(human)
variants = lin.lin_variants([parse_measure(m) for m in measures], stat=statistic)

# %% [markdown]
# ## Tables 1-3 analogue: 17 measures × CASE / STEM / STOP, with 1 and several references
#
# System-level Pearson correlation with 95% bootstrap intervals over documents (as Lin). `best` marks the best
# measure of each column; `indistinguishable` marks the measures that a one-sided paired bootstrap test
# (resampling documents) does not find significantly worse than it at `alpha`.

# %%
tables = []
for n_refs in (1, many_refs):
    mats = lin.rouge_matrices_lin(ds, variants, n_refs, sentences=sentences)
    t = lin.measure_table(mats, Z, n_resamples=n_resamples, alpha=alpha, rng=rng)
    t.insert(0, "references", n_refs)
    tables.append(t)
table = pd.concat(tables, ignore_index=True)
table["signature"] = [variants[(s, m)].signature for s, m in zip(table["setting"], table["measure"])]
table.to_csv(out / "tables1-3_measures.csv", index=False, float_format="%.4f")

def mark(row):
    return f"{row['r']:.3f}{'*' if row['best'] else ''}{'' if row['indistinguishable'] else ' '}"

wide = table.assign(cell=table.apply(mark, axis=1)).pivot_table(
    index="measure", columns=["references", "setting"], values="cell", aggfunc="first", sort=False)
wide = wide.reindex(measures)
wide.to_csv(out / "tables1-3_measures_wide.csv")
print("* best in its column; values in the same column that are statistically indistinguishable from it "
      "have no trailing space")
wide

# %% [markdown]
# ## Tables 3-6 analogue: sample size × number of references
#
# For each sample size s (1 document, then every `size_step` up to all documents) and 1, 2, 3 references, 1000
# bootstrap samples of s documents (with replacement) give system means of ROUGE and of the human score; `M` is
# the mean correlation and `dCI` the width of its 95% interval. The example system's mean scores are shown too.

# %%
sizes = sorted(set([1] + list(range(size_step, len(ds.inputs) + 1, size_step)) + [len(ds.inputs)]))
sys_index = list(ds.systems).index(example_system)
curve_variants = {key: v for key, v in variants.items() if key[0] == curve_setting and key[1] in curve_measures}
curves, draws = [], {}
for n_refs in ref_counts:
    mats = lin.rouge_matrices_lin(ds, curve_variants, n_refs, sentences=sentences)
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
curves.to_csv(out / "tables3-6_sample_size.csv", index=False, float_format="%.4f")
curves[(curves["resample"] == "inputs") & (curves["measure"] == curve_measures[0])].round(3).head(12)

# %% [markdown]
# ## Figures 2-3 analogue: the resampled correlations as boxplots (documents resampled, as Lin)

# %%
for coef, fig_name in (("pearson", "figure2_pearson"), ("spearman", "figure3_spearman")):
    fig, axes = plt.subplots(len(curve_measures), len(ref_counts),
                             figsize=(4.2 * len(ref_counts), 3.0 * len(curve_measures)),
                             sharey=True, squeeze=False)
    shown = sizes[:: max(1, len(sizes) // 10)]
    for i, measure in enumerate(curve_measures):
        for j, n_refs in enumerate(ref_counts):
            ax = axes[i][j]
            ax.boxplot([draws[(measure, n_refs, "inputs", s, coef)] for s in shown], showfliers=False)
            ax.set_xticks(range(1, len(shown) + 1), shown, fontsize=7)
            ax.axhline(lin.critical_r(len(ds.systems), alpha), color="#C44E52", linewidth=1, linestyle="--")
            ax.set_title(f"{measure}, {n_refs} ref", fontsize=9)
            ax.set_xlabel("documents")
        axes[i][0].set_ylabel(f"{coef} r")
    fig.tight_layout()
    save_figure(fig, out, fig_name)
    plt.show()

# %% [markdown]
# ## Critical sample size, and what Boot-Both changes
#
# Lin's rule: the smallest number of documents at which the mean correlation minus half the interval width
# exceeds the critical value of Pearson's r at `alpha` for this many systems. Resampling documents only (Lin)
# ignores that the systems are a sample too; Boot-Both (Deutsch et al., 2021) resamples both, which widens the
# intervals and raises the number of documents needed (possibly beyond the data: NaN).

# %%
r_crit = lin.critical_r(len(ds.systems), alpha)
rows = []
for (measure, n_refs, resample), block in curves.groupby(["measure", "references", "resample"]):
    rows.append({"measure": measure, "references": n_refs, "resample": resample,
                 "critical_size_pearson": lin.critical_sample_size(block, r_crit, "pearson"),
                 "critical_size_spearman": lin.critical_sample_size(block, r_crit, "spearman")})
critical = pd.DataFrame(rows)
critical.to_csv(out / "critical_sample_sizes.csv", index=False)
print(f"critical r for {len(ds.systems)} systems at alpha={alpha}: {r_crit:.3f}")
critical.pivot_table(index=["measure", "references"], columns="resample", values="critical_size_pearson")

# %%
def fmt(v):
    return "not reached" if np.isnan(v) else f"{int(v)} documents"


lines = []
for measure in curve_measures:
    block = critical[(critical["measure"] == measure)]
    for n_refs in ref_counts:
        doc = block[(block["references"] == n_refs) & (block["resample"] == "inputs")]["critical_size_pearson"].iloc[0]
        both = block[(block["references"] == n_refs) & (block["resample"] == "both")]["critical_size_pearson"].iloc[0]
        lines.append(f"* {measure}, {n_refs} reference(s): {fmt(doc)} resampling documents; "
                     f"{fmt(both)} with Boot-Both.")
text = "\n".join(lines)
(out / "critical_sample_sizes.md").write_text(text + "\n")
from IPython.display import Markdown
Markdown(text)
