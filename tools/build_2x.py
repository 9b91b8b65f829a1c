import sys; sys.path.insert(0, "tools")
from nb import build

SETUP = """
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import metaeval
from metaeval import deutsch
from metaeval.notebooks import output_path
from metaeval.plotting import save_figure, use_compendium_style

use_compendium_style()
warnings.simplefilter("ignore", metaeval.rouge.RougeWarning)
out = output_path(output_dir)
rng = np.random.default_rng(seed)
"""

build("notebooks/20_deutsch2021_ci_simulation.ipynb", [
("md", """
# 20 · Deutsch, Dror & Roth (2021), Table 1: which confidence interval covers?

Each trial splits the systems and the inputs into random halves A and B, computes a 95% CI of the correlation on
the A-systems × A-inputs submatrix with Fisher's transform and with the three bootstraps (resampling systems,
inputs, or both), and checks whether the correlation on the disjoint B-systems × B-inputs submatrix falls
inside. A method that accounts for both sources of randomness should cover about 95% of the time. Defaults are
the paper's: QAEval-F1 against the mean expert relevance on SummEval, Pearson, 1000 trials, 1000 resamples.
"""),
("code", """
dataset = "fabbri2020"
ground_truth = "expert.relevance"
metric = "qa-eval.f1"
coefficient = "pearson"
n_trials = 1000
n_resamples = 1000
confidence_level = 0.95
seed = 0
output_dir = "results/deutsch2021/fabbri2020"
"""),
("code", SETUP + """
ds = metaeval.datasets.load(dataset)
X, Z = ds.matrix(metric), ds.matrix(ground_truth)
trials = deutsch.ci_coverage_simulation(X, Z, n_trials=n_trials, n_resamples=n_resamples, coefficient=coefficient,
                                        confidence_level=confidence_level, rng=rng, progress=True)
trials.to_csv(out / "table1_ci_simulation_trials.csv", index=False, float_format="%.6f")
"""),
("md", """
## Coverage per method and level, next to the paper

`best` marks the method closest to the nominal level when a one-tailed difference-of-proportions z-test (0.05)
separates it from every other method. The paper's values are Table 1's SummEval (Fabbri) column; the reference
implementation's values (the authors' code, 1000 trials) come from `tests/fixtures/stats/ci_simulation_fabbri.json`.
"""),
("code", """
table = deutsch.coverage_table(trials, nominal=confidence_level)
paper = deutsch.PAPER_TABLE1_FABBRI
default_run = (dataset, metric, ground_truth, coefficient) == ("fabbri2020", "qa-eval.f1", "expert.relevance", "pearson")
table["paper"] = [paper[l][m] if default_run else np.nan for l, m in zip(table["level"], table["method"])]
table["difference_in_se"] = (table["coverage"] - table["paper"]) / np.sqrt(table["se"] ** 2 + 1e-12)
table.to_csv(out / "table1_ci_coverage.csv", index=False, float_format="%.4f")
table.round(3)
"""),
("code", """
fig, axes = plt.subplots(1, 2, figsize=(9, 3.2), sharey=True)
for ax, (level, block) in zip(axes, table.groupby("level", sort=False)):
    ax.bar(block["method"], block["coverage"], yerr=1.96 * block["se"], color="#4C72B0", capsize=3, label="ours")
    if default_run:
        ax.scatter(block["method"], block["paper"], color="#C44E52", zorder=3, label="paper")
    ax.axhline(confidence_level, color="grey", linestyle="--", linewidth=1)
    ax.set_title(f"{level} level")
    ax.set_ylim(0.5, 1.02)
    ax.tick_params(axis="x", rotation=30)
axes[0].set_ylabel("coverage")
axes[0].legend(loc="lower left", fontsize=8)
fig.tight_layout()
save_figure(fig, out, "table1_ci_coverage")
plt.show()
"""),
("md", """
Boot-Both is the only method near the nominal level at both levels: resampling only systems or only inputs
ignores the other source of variance and gives intervals that are too narrow; Fisher's interval uses n = number
of systems at the summary level and is far too wide there.
"""),
], main_table="table1_ci_coverage.csv")

build("notebooks/21_deutsch2021_power.ipynb", [
("md", """
# 21 · Deutsch et al. (2021), Figure 3: the power of Boot-Both, Perm-Both and Williams

R_k is ROUGE-1 computed on a random k% of each summary's tokens (without replacement, int(len · k) tokens)
against the same reference, so it is a degraded ROUGE-1 whose quality falls as k falls. For each k and trial we
test H1 "ROUGE-1 correlates more strongly with the ground truth than R_k" (one-sided, alpha 0.05); power is the
proportion of trials that reject. At k = 100% the two metrics are identical and the rejection rate estimates the
type-I error. Defaults follow the paper on SummEval: ROUGE-1 F1 (ROUGE-1.5.5 tokens, stemmed) with the single
original reference, mean expert relevance, Pearson, 1000 trials.
"""),
("code", """
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
"""),
("code", SETUP + """
ds = metaeval.datasets.load(dataset)
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
"""),
("code", """
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
"""),
("md", """
## Type-I error at k = 100%

With identical metrics no test should reject more than alpha of the time; a permutation test with the
(count + 1)/(P + 1) p-value cannot reject at all here (every permutation ties with the observed difference).
"""),
("code", """
type1 = power[power["k"] == 1.0][["level", "test", "power", "se", "trials"]].rename(columns={"power": "type_I_error"})
type1.to_csv(out / "figure3_type1_error.csv", index=False, float_format="%.4f")
type1
"""),
], main_table="figure3_power.csv")

build("notebooks/22_deutsch2021_metric_cis.ipynb", [
("md", """
# 22 · Deutsch et al. (2021), Figures 4-6: metric CIs and pairwise tests

95% Boot-Both confidence intervals (Kendall) of every metric's system- and summary-level correlation with the
ground truth (Figure 4), with the library's own ROUGE-1.5.5 variants computed from the texts next to the
authors' stored ROUGE numbers; then Perm-Both p-values for every ordered pair of metrics (Pearson) as heatmaps
(Figures 5 and 6), with significant cells coloured and cells that survive Bonferroni correction dotted:
per row metric (each metric against the others, Figure 5) and over the whole dataset-level family (Figure 6).
Paper reference: ROUGE-2's system-level Kendall CI on SummEval is [-.09, .84].
"""),
("code", """
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
"""),
("code", SETUP + """
ds = metaeval.datasets.load(dataset)
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
"""),
("code", """
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
"""),
("code", """
from metaeval.plotting import significance_heatmap

pairs = deutsch.pairwise_pvalues(mats, Z, test="perm-both", coefficient=test_coefficient,
                                 n_resamples=n_resamples, rng=rng)
for level, result in pairs.items():
    frame = result.to_frame()
    frame.to_csv(out / f"figure5_perm_both_{level}.csv", float_format="%.6g")
    for by, figname in [("row", "figure5"), ("all", "figure6")]:
        marks = deutsch.corrected(result.pvalues, alpha=alpha, by=by)
        ax = significance_heatmap(frame, alpha=alpha, corrected=marks,
                                  title=f"Perm-Both, {level} level; dots: Bonferroni ({'per row' if by == 'row' else 'all pairs'})")
        save_figure(ax.figure, out, f"{figname}_perm_both_{level}")
        plt.show()
"""),
], main_table="figure4_metric_cis.csv")

build("notebooks/23_deutsch2021_normality.ipynb", [
("md", """
# 23 · Deutsch et al. (2021), Appendix Table 2: are the scores normal?

Fisher's interval and Williams' test assume normally distributed scores. Shapiro-Wilk p-value of each metric's
and the ground truth's system-level scores, and at the summary level the percentage of inputs whose per-input
scores (across systems) fail the test at alpha.
"""),
("code", """
dataset = "fabbri2020"
scores = ["expert.relevance", "qa-eval.f1", "bertscore.recall", "MoverScore", "s3.resp", "METEOR", "BEwTE.f1",
          "AutoSummENG", "rouge-1.f1", "rouge-2.f1", "rouge-l.f1", "rouge-su4.f1"]
alpha = 0.05
seed = 0
output_dir = "results/deutsch2021/fabbri2020_normality"
"""),
("code", SETUP + """
ds = metaeval.datasets.load(dataset)
table = deutsch.normality({name: ds.matrix(name) for name in scores}, alpha=alpha)
table.to_csv(out / "appendix_table2_normality.csv", index=False, float_format="%.4f")
table.round(3)
"""),
], main_table="appendix_table2_normality.csv")
