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
#     datasets: [summeval, realsumm]
#     expected_seconds: {summeval: 95, realsumm: 117}
#     main_table: figure3_power.csv
#     paper: deutsch2021
# ---

# %% tags=["parameters"]
dataset = "summeval"        # a dataset WITH texts (summaries and references): summeval, realsumm, or a folder
human = None                # the ground-truth score (None: the dataset's default human score)
statistic = None            # ROUGE-1 statistic F | R | P (None: R on recall-oriented datasets such as REALSumm, else F)
coefficient = "pearson"     # pearson | spearman | kendall
ks = [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]  # fractions of summary tokens R_k keeps
tests = ["boot-both", "perm-both", "williams"]  # the tests compared (the paper: these three)
levels = ["system", "summary"]  # correlation levels
n_trials = 1000             # R_k draws per k (the paper: 1000)
n_resamples = 1000          # resamples per bootstrap / permutation test
alpha = 0.05                # significance level of every test
incomplete = "raise"        # missing cells of the human score: raise | drop-inputs | drop-systems
seed = 0                    # seed of the random generator (every resample and trial derives from it)
output_dir = None           # None: results/deutsch2021/<dataset>

# %% [markdown]
# # 21 · Deutsch, Dror & Roth (2021), Figure 3: how often does each test find a real difference?
#
# **What the paper asked.** To compare two metrics X and Y one tests H0: ρ(X, Z) ≤ ρ(Y, Z) against
# H1: ρ(X, Z) > ρ(Y, Z), where Z is the human score. Which test — Williams' test, the paired bootstrap (Boot-Both)
# or the permutation test (Perm-Both) — detects a difference that *is* there most often (its power), while
# rejecting no more than alpha of the time when there is none (its type-I error)?
#
# **How.** No pair of real metrics is known to differ, so the paper builds one: **R_k** is ROUGE-1 computed on a
# random k% of each summary's tokens (int(len · k) tokens drawn without replacement, against the same reference).
# For k < 100% R_k only sees part of the summary, so it is very likely a worse metric than ROUGE-1 itself. Each
# trial draws R_k once per k and runs every test of "ROUGE-1 beats R_k" (one-sided, alpha); power is the share of
# trials that reject. At k = 100% R_k *is* ROUGE-1, so the rejection rate there is the type-I error.
# The paper reports this on SummEval (Fabbri et al.) with ROUGE-1 F1; on recall-oriented datasets (TAC, REALSumm)
# it uses ROUGE recall (its footnote 9), which is this notebook's default there.
#
# *Citation:* Daniel Deutsch, Rotem Dror and Dan Roth (2021). A Statistical Analysis of Summarization Evaluation
# Metrics Using Resampling Methods. *TACL* 9, 1132–1146.
# [doi:10.1162/tacl_a_00417](https://doi.org/10.1162/tacl_a_00417)

# %%
import matplotlib.pyplot as plt
import seaborn as sns
from scipy import stats

from metaeval import deutsch
from metaeval.run.session import start

# R_k rescores the summaries against their references, so this notebook needs texts.
nb = start("deutsch2021", dataset, output_dir=output_dir, seed=seed, texts=True, scores=[human], incomplete=incomplete,
           purpose="the power simulation (R_k is ROUGE-1 on subsampled summary tokens)")
ds, out, rng = nb.dataset, nb.out, nb.rng
human = human or ds.default_human
statistic = statistic or ("R" if ds.recall_oriented else "F")
Z = ds.matrix(human)
# R_k is defined against one reference: each summary's first (SummEval: the original highlights).
first_refs = [refs[0] for refs in ds.texts["references"]]
sampler = deutsch.RougeOneSubsampler(ds.texts["summary"].tolist(), first_refs, stem=True, stop=False, stat=statistic)
full = sampler.full()
print(f"{ds.name}: {len(ds.systems)} systems x {len(ds.inputs)} inputs; ROUGE-1 {statistic} (stemmed, first "
      f"reference) vs {ds.display_name(human)}, {coefficient}")

# %% [markdown]
# ## The three tests
#
# * **Williams' test** (used by Graham 2015 and WMT) turns r(X, Z), r(Y, Z) and r(X, Y) into a t statistic with
#   n − 3 degrees of freedom. It assumes normal scores and an n (the number of systems, also at the summary level).
# * **Boot-Both, the paired bootstrap**: resample systems and inputs together, recompute
#   δ* = r(X*, Z*) − r(Y*, Z*). The bootstrap distribution is centred at the observed δ, not at the null, so
#   shifting it by δ gives a null distribution: p is the share of resamples with δ* − δ ≥ δ, i.e.
#   **δ* ≥ 2δ** (Koehn's 2004 rule, as in the paper's code).
# * **Perm-Both, the permutation test**: under H0 the two metrics are *exchangeable*, so swapping X's and Y's score
#   of a summary should not matter. Each permutation swaps every (system, input) cell independently with
#   probability 1/2 (the paper's Algorithm 2); p = (c + 1) / (P + 1), where c counts the P permutations whose
#   difference is at least the observed one — the +1 counts the observed arrangement itself, so p is never 0 and
#   the test is exact. The null assumes exchangeability *cell by cell*; when two metrics differ by a whole
#   system-level offset they are exchangeable only as whole systems, and cell-wise Perm-Both rejects too often
#   (`tests/test_calibration.py` shows it; Perm-Systems stays valid there). nlpstats 0.0.1 swaps whole rows and
#   then whole columns instead (a cell is swapped iff its row coin XOR its column coin came up), a different null
#   whose system-level p-values differ up to 5× (`resample="rows-xor-columns"` reproduces it).
#
# **R_k's subsets** use one random order of each summary's tokens per trial and keep its first int(len · k)
# tokens, so within a trial the subsets for different k are nested; each one alone is a uniform random subset.
#
# At k = 100% X and Y are identical: δ = 0, every bootstrap δ* = 0 ≥ 2 · 0 (p = 1), every permutation ties
# (c = P, p = 1) and Williams' t is undefined (r(X, Y) = 1). No test can reject there.

# %%
trials = deutsch.power_simulation(full, sampler, Z, ks=ks, n_trials=n_trials, n_resamples=n_resamples, tests=tests,
                                  levels=levels, coefficient=coefficient, alpha=alpha, rng=rng, progress=True)
power = deutsch.power_table(trials)
power.insert(2, "test_name", power["test"].map(deutsch.METHOD_NAMES))
nb.save_table(power, "figure3_power.csv", index=False, float_format="%.4f")

# %% [markdown]
# ## Figure 3: power against k
#
# One panel per level; bars are ± 1.96 binomial standard errors over the trials; the dotted line is alpha.

# %%
sns.set_theme(style="whitegrid", context="notebook")
shown = power.assign(k_percent=100 * power["k"], level=power["level"] + " level")
shown = shown.sort_values("level", key=lambda s: s.str.replace(" level", "").map(levels.index), kind="stable")
grid = sns.relplot(data=shown, x="k_percent", y="power", hue="test_name", style="test_name", col="level",
                   kind="line", markers=True, dashes=False, height=3.4, aspect=1.2, errorbar=None)
for ax, (_, block) in zip(grid.axes.flat, shown.groupby("level", sort=False)):
    for _, b in block.groupby("test_name"):
        ax.errorbar(b["k_percent"], b["power"], yerr=1.96 * b["se"], fmt="none", ecolor="grey", capsize=2, lw=0.8)
    ax.axhline(alpha, color="grey", linestyle=":", linewidth=1)
grid.set_axis_labels("k (% of summary tokens R_k keeps)", "power (share of trials rejecting H0)")
grid.set_titles("{col_name}")
grid.legend.set_title("test")
grid.figure.suptitle(f"Figure 3: power to find ROUGE-1 {statistic} better than R_k ({ds.name}, "
                     f"{ds.display_name(human)}, {coefficient}, {n_trials} trials)", fontsize=10)
grid.tight_layout()  # seaborn's: keeps the legend's column free (the figure's own ran the panels under it)
nb.save_figure(grid.figure, "figure3_power")
plt.show()

# %% [markdown]
# ## Type-I error at k = 100%

# %%
type1 = power[power["k"] == 1.0][["level", "test", "test_name", "power", "se", "trials", "undefined"]]
type1 = type1.rename(columns={"power": "type_I_error"})
nb.save_table(type1, "figure3_type1_error.csv", index=False, float_format="%.4f")
type1

# %% [markdown]
# ## What the numbers say
#
# Generated from the tables above (saved as `figure3_conclusions.md`). The paper, on SummEval: Perm-Both has the
# highest power at both levels; at the system level the power of Boot-Both and Williams is ≈ 0 for every k.

# %%
lines = []
degraded = power[power["k"] < 1.0]
for level in levels:
    block = degraded[degraded["level"] == level]
    if block.empty:
        continue
    mean_power = block.groupby("test_name")["power"].mean().sort_values(ascending=False)
    kmin = block["k"].min()
    at_min = block[block["k"] == kmin].set_index("test_name")["power"]
    ranking = ", ".join(f"{name} {value:.2f}" for name, value in mean_power.items())
    lines.append(f"* **{level.capitalize()} level:** mean power over k < 100%: {ranking}. "
                 f"At k = {100 * kmin:g}% (the largest degradation): "
                 + ", ".join(f"{name} {at_min[name]:.2f}" for name in mean_power.index) + ".")
    near_zero = [name for name, value in mean_power.items() if value < 0.05]
    if near_zero:
        one = len(near_zero) == 1
        lines.append(f"  {' and '.join(near_zero)} {'rejects' if one else 'reject'} in fewer than 5% of trials on "
                     f"average: at this level {'it' if one else 'they'} almost never find{'s' if one else ''} the "
                     "difference that R_k was built to have.")
if type1["type_I_error"].notna().any():
    worst = type1.loc[type1["type_I_error"].idxmax()]
    rejections = int(round(worst["type_I_error"] * worst["trials"]))
    above = stats.binomtest(rejections, int(worst["trials"]), alpha, alternative="greater").pvalue
    lines.append(f"* **Type-I error (k = 100%):** at most {worst['type_I_error']:.3f} ({worst['test_name']}, "
                 f"{worst['level']} level, {rejections} of {int(worst['trials'])} trials); "
                 + (f"not significantly above alpha = {alpha} (exact binomial test, p = {above:.3f})."
                    if above >= alpha else
                    f"significantly above alpha = {alpha} (exact binomial test, p = {above:.3g}): that test "
                    "rejects too often under the null."))
    undefined = type1[type1["type_I_error"].isna()]
    if len(undefined):
        lines.append("  Undefined at k = 100% (no trial with a p-value, e.g. Williams' t when r(X, Y) = 1): "
                     + ", ".join(f"{r.test_name} ({r.level} level)" for r in undefined.itertuples()) + ".")
ranked = degraded.groupby("test_name")["power"].mean().sort_values(ascending=False) if len(degraded) else None
if ranked is not None and len(ranked) > 1:
    best_overall, runner_up = ranked.index[0], ranked.index[1]
    # the tests ran on the same trials: compare their decisions pair by pair (exact McNemar test)
    names_of = trials.assign(test_name=trials["test"].map(deutsch.METHOD_NAMES))
    decided = names_of[(names_of["k"] < 1.0) & names_of["pvalue"].notna()]
    wide = decided.pivot_table(index=["trial", "k", "level"], columns="test_name", values="reject", aggfunc="first")
    wide = wide[[best_overall, runner_up]].dropna().astype(bool)
    only_best = int((wide[best_overall] & ~wide[runner_up]).sum())
    only_other = int((~wide[best_overall] & wide[runner_up]).sum())
    p_mc = stats.binomtest(only_best, only_best + only_other).pvalue if only_best + only_other else 1.0
    lines.append(f"* Over both levels **{best_overall}** has the highest mean power ({ranked.iloc[0]:.2f}, "
                 f"{runner_up} {ranked.iloc[1]:.2f}; on the same trials it alone rejects in {only_best} cases, "
                 f"{runner_up} alone in {only_other}: exact McNemar test p = {p_mc:.3g}"
                 + ("" if p_mc < alpha else ", so this run does not separate the two")
                 + ")" + ((", as in the paper." if p_mc < alpha else "; the paper found Perm-Both the most powerful.")
                          if best_overall == "Perm-Both" else "; the paper found Perm-Both."))
nb.report("\n".join(lines), "figure3_conclusions.md")
