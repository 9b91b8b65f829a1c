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
#     main_table: figure3_power.csv
#     paper: deutsch2021
# ---

# %% tags=["parameters"]
dataset = "summeval"
ground_truth = "expert.relevance"
n_refs = 1
statistic = "F"
coefficient = "pearson"
ks = [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
tests = ["boot-both", "perm-both", "williams"]
levels = ["system", "summary"]
n_trials = 1000
n_resamples = 1000
alpha = 0.05
seed = 0
output_dir = "results/deutsch2021/summeval_power"

# %% [markdown]
# # 21 · Deutsch et al. (2021), Figure 3: the power of Boot-Both, Perm-Both and Williams
#
# R_k is ROUGE-1 computed on a random k% of each summary's tokens (without replacement, int(len · k) tokens)
# against the same reference, so it is a degraded ROUGE-1 whose quality falls as k falls. For each k and trial we
# test H1 "ROUGE-1 correlates more strongly with the ground truth than R_k" (one-sided, alpha 0.05); power is the
# proportion of trials that reject. At k = 100% the two metrics are identical and the rejection rate estimates the
# type-I error. Defaults follow the paper on SummEval: ROUGE-1 F1 (ROUGE-1.5.5 tokens, stemmed) with the single
# original reference, mean expert relevance, Pearson, 1000 trials.

# %%
import matplotlib.pyplot as plt

from metaeval import deutsch
from metaeval.plotting import save_figure
from metaeval.run.session import start

nb = start("deutsch2021", dataset, output_dir=output_dir, seed=seed, texts=True, scores=[ground_truth],
           purpose="the power simulation (R_k is ROUGE-1 on subsampled summary tokens)")
ds, out, rng = nb.dataset, nb.out, nb.rng
Z = ds.matrix(ground_truth)
first_refs = [refs[0] if n_refs == 1 else " ".join(refs[:n_refs]) for refs in ds.texts["references"]]
if n_refs != 1:
    raise ValueError("R_k is defined against one reference here; use n_refs = 1")
sampler = deutsch.RougeOneSubsampler(ds.texts["summary"].tolist(), first_refs, stem=True, stop=False, stat=statistic)
full = sampler.full()
trials = deutsch.power_simulation(full, sampler, Z, ks=ks, n_trials=n_trials, n_resamples=n_resamples, tests=tests,
                                  levels=levels, coefficient=coefficient, alpha=alpha, rng=rng, progress=True)
power = deutsch.power_table(trials)
power.to_csv(out / "figure3_power.csv", index=False, float_format="%.4f")

# %%
fig, axes = plt.subplots(1, len(levels), figsize=(4.6 * len(levels), 3.4), sharey=True, squeeze=False)
for ax, level in zip(axes[0], levels):
    for test, block in power[power["level"] == level].groupby("test"):
        ax.errorbar(100 * block["k"], block["power"], yerr=1.96 * block["se"], marker="o", markersize=3,
                    capsize=2, label=test)
    ax.axhline(alpha, color="grey", linestyle=":", linewidth=1)
    ax.set_title(f"{level} level")
    ax.set_xlabel("k (% of summary tokens kept)")
axes[0][0].set_ylabel("power (rejection rate)")
axes[0][0].legend(fontsize=8)
fig.tight_layout()
save_figure(fig, out, "figure3_power")
plt.show()

# %% [markdown]
# ## Type-I error at k = 100%
#
# With identical metrics no test should reject more than alpha of the time; a permutation test with the
# (count + 1)/(P + 1) p-value cannot reject at all here (every permutation ties with the observed difference).

# %%
type1 = power[power["k"] == 1.0][["level", "test", "power", "se", "trials"]].rename(columns={"power": "type_I_error"})
type1.to_csv(out / "figure3_type1_error.csv", index=False, float_format="%.4f")
type1
