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
#     main_table: figure4_metric_cis.csv
#     paper: deutsch2021
# ---

# %% tags=["parameters"]
dataset = "fabbri2020"
texts_dataset = "summeval"
ground_truth = "expert.relevance"
metrics = ["qa-eval.f1", "bertscore.recall", "MoverScore", "s3.resp", "METEOR", "BEwTE.f1", "AutoSummENG",
           "rouge-1.f1", "rouge-2.f1", "rouge-l.f1", "rouge-su4.f1"]
our_rouge = ["rouge-1|stem:yes|stop:no|stat:F|refs:A", "rouge-2|stem:yes|stop:no|stat:F|refs:A",
             "rouge-l|stem:yes|stop:no|stat:F|refs:A", "rouge-su4|stem:yes|stop:no|stat:F|refs:A"]
n_refs = 1
ci_coefficient = "kendall"
test_coefficient = "pearson"
n_resamples = 1000
alpha = 0.05
seed = 0
output_dir = "results/deutsch2021/fabbri2020_metrics"

# %% [markdown]
# # 22 · Deutsch et al. (2021), Figures 4-6: metric CIs and pairwise tests
#
# 95% Boot-Both confidence intervals (Kendall) of every metric's system- and summary-level correlation with the
# ground truth (Figure 4), with the library's own ROUGE-1.5.5 variants computed from the texts next to the
# authors' stored ROUGE numbers; then Perm-Both p-values for every ordered pair of metrics (Pearson) as heatmaps
# (Figures 5 and 6), with significant cells coloured and cells that survive Bonferroni correction dotted:
# per row metric (each metric against the others, Figure 5) and over the whole dataset-level family (Figure 6).
# Paper reference: ROUGE-2's system-level Kendall CI on SummEval is [-.09, .84].

# %%
import matplotlib.pyplot as plt

import metaeval
from metaeval import deutsch
from metaeval.plotting import save_figure
from metaeval.run.session import start

nb = start("deutsch2021", dataset, output_dir=output_dir, seed=seed, scores=[ground_truth, *metrics], quiet_rouge=True)
ds, out, rng = nb.dataset, nb.out, nb.rng
Z = ds.matrix(ground_truth)
mats = {name: ds.matrix(name) for name in metrics}
if texts_dataset and our_rouge:
    texts = metaeval.datasets.load(texts_dataset)
    if (texts.systems, texts.inputs) != (ds.systems, ds.inputs):
        raise ValueError("texts_dataset must have the same systems and inputs as dataset")
    table = metaeval.scoring.rouge_table(texts, our_rouge, n_refs=n_refs, sentences="lines")
    for key in our_rouge:
        v = metaeval.variants.parse_variant(key)
        mats[f"ours {v.measure.name} {v.stat}"] = table[v.signature].to_numpy().reshape(Z.shape)
print(len(mats), "metrics:", ", ".join(mats))

# %%
cis = deutsch.metric_cis(mats, Z, coefficient=ci_coefficient, n_resamples=n_resamples, rng=rng)
cis.to_csv(out / "figure4_metric_cis.csv", index=False, float_format="%.4f")
fig, axes = plt.subplots(1, 2, figsize=(10, 0.32 * len(mats) + 1.5), sharey=True)
for ax, (level, block) in zip(axes, cis.groupby("level", sort=False)):
    block = block.iloc[::-1]
    ax.errorbar(block["r"], range(len(block)), xerr=[block["r"] - block["low"], block["high"] - block["r"]],
                fmt="o", color="#4C72B0", capsize=3)
    ax.set_yticks(range(len(block)), block["metric"])
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.set_title(f"{level} level ({ci_coefficient})")
fig.tight_layout()
save_figure(fig, out, "figure4_metric_cis")
plt.show()
cis.round(3)

# %%
from metaeval.plotting import significance_heatmap

pairs = deutsch.pairwise_pvalues(mats, Z, test="perm-both", coefficient=test_coefficient,
                                 n_resamples=n_resamples, rng=rng)
for level, result in pairs.items():
    frame = result.to_frame()
    frame.to_csv(out / f"figure5_perm_both_{level}.csv", float_format="%.6g")
    for by, figname in [("row", "figure5"), ("all", "figure6")]:
        marks = deutsch.corrected(result.pvalues, alpha=alpha, by=by)
        family = "per row" if by == "row" else "all pairs"
        ax = significance_heatmap(frame, alpha=alpha, corrected=marks,
                                  title=f"Perm-Both, {level} level; dots: Bonferroni ({family})")
        save_figure(ax.figure, out, f"{figname}_perm_both_{level}")
        plt.show()
