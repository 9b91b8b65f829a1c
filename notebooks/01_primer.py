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
#     datasets: [summeval]
#     expected_seconds: {summeval: 12}
#     main_table: coverage.csv
#     paper: primer
# ---

# %% tags=["parameters"]
dataset = "summeval"  # the real dataset of the last section (an embedded name or your own folder)
metric = "qa-eval.f1"  # the metric whose bootstrap distributions are drawn
human = None  # human score; None: the dataset's default
n_systems = 10  # systems of each simulated study
n_inputs = 20  # inputs (documents) of each simulated study
system_correlation = 0.7  # population correlation of metric and human system quality
summary_correlation = 0.4  # population correlation within one input
n_studies = 400  # simulated studies for the sampling distribution of r
n_trials = 200  # simulated studies for the coverage of each interval method
n_resamples = 200  # bootstrap resamples per interval in the coverage study
n_resamples_real = 1000  # bootstrap resamples per scheme on the real metric
reliability_scores = ["expert.relevance", "turker.relevance"]  # human scores of section 5 (per-annotator ratings)
seed = 0  # seed of the random generator (every study and resample derives from it)
output_dir = None  # None: results/primer/<dataset>

# %% [markdown]
# # 01 · Primer: how sure are we about a metric's correlation?
#
# A summarization metric is judged by how well its scores agree with human judgments. This notebook builds the
# ideas the other notebooks use, one at a time, for a first class on statistical meta-evaluation:
#
# 1. the **three levels** at which a metric and human scores are correlated, by hand on a 4 x 3 matrix;
# 2. the **sampling distribution** of a correlation: how much r moves from one study to the next;
# 3. the **true coverage** of four kinds of 95% confidence interval, on synthetic data whose population
#    correlation is known (`metaeval.datasets.synthetic`), not against a proxy;
# 4. **what each bootstrap scheme resamples**, drawn, and one real metric's three bootstrap distributions.
#
# Words in bold are defined in the site's glossary. Exercises close each part; their answers are folded (click to
# open in the rendered site; in JupyterLab they are the cells tagged `answer`). The helpers live in
# `metaeval.studies.primer`; the notebook only calls them.

# %%
import matplotlib.pyplot as plt
import pandas as pd

import metaeval
from metaeval.run.session import start
from metaeval.studies import primer
from metaeval.studies.plotting import show_table

nb = start("primer", dataset, output_dir=output_dir, seed=seed, human=human, scores=[metric])
ds, out = nb.dataset, nb.out

# %% [markdown]
# ## 1. Three levels of correlation, by hand
#
# Rows are **systems** (summarizers), columns are **inputs** (documents); each cell is one summary, scored by the
# metric (X) and by humans (Z).

# %%
X, Z = primer.TOY_METRIC, primer.TOY_HUMAN
pd.concat({"metric X": pd.DataFrame(X), "human Z": pd.DataFrame(Z)}, axis=1).rename_axis("system")

# %% [markdown]
# * **System level**: average each system's row, then correlate the 4 metric means with the 4 human means.
# * **Summary level**: within each input (column), correlate the 4 systems' metric and human scores; average the
#   3 correlations.
# * **Global level**: correlate all 12 cells at once.

# %%
steps = primer.levels_by_hand(X, Z)
show_table(steps["system_means"], index=True)

# %%
show_table(steps["per_input"], index=True)

# %%
by_library = {level: metaeval.correlate(X, Z, level=level) for level in ("system", "summary", "global")}
check = pd.DataFrame({"by hand": [steps[k] for k in by_library], "metaeval.correlate": list(by_library.values())},
                     index=list(by_library))
assert (check["by hand"] - check["metaeval.correlate"]).abs().max() < 1e-12
show_table(check, digits=4, index=True)

# %%
fig = primer.plot_levels(X, Z, steps)
nb.save_figure(fig, "toy_levels")
plt.show()

# %%
per_input = steps["per_input"]
worst = per_input.idxmin()
nb.report(f"On the toy matrix the metric ranks the **systems** well (system-level r = {steps['system']:.2f}) but "
          f"the **summaries of one document** much less reliably (summary-level r = {steps['summary']:.2f}, the mean "
          f"of {', '.join(f'{v:.2f}' for v in per_input)}): on {worst} it orders the summaries backwards "
          f"(r = {per_input.min():.2f}). The global r ({steps['global']:.2f}) mixes both. The three levels answer "
          "different questions, and a paper must say which one it reports.", "toy_levels.md")

# %% [markdown]
# **Exercise 1.** Compute the summary-level *Kendall* tau of the toy matrix by hand (count concordant and
# discordant pairs of systems within each input, then average the three taus).
#
# **Exercise 2.** Swap the human scores of systems 1 and 4 on input 1. Which level changes, and to what?
#
# Check your own values: put them in the cell below and run it (`None` until you have one). The answers
# follow, folded: in JupyterLab click the folded cell to open it.

# %%
print(primer.check(1, None))  # your summary-level Kendall tau, e.g. primer.check(1, 0.25)
print(primer.check(2, None))  # your values after the swap, e.g. primer.check(2, {"system": 0.8})

# %% tags=["answer", "hide-input"] jupyter={"outputs_hidden": true, "source_hidden": true}
answers = primer.exercise_answers()
print(f"Exercise 1: summary-level Kendall tau = {answers.toy_summary_kendall:.4f} (per input: "
      + ", ".join(f"{t:.4f}" for t in answers.toy_kendall_per_input) + ")")
print(f"Exercise 2: system level "
      f"{steps['system']:.4f} -> {answers.toy_system_after_swap:.4f}, summary {steps['summary']:.4f} -> "
      f"{answers.toy_summary_after_swap:.4f}, global {steps['global']:.4f} -> {answers.toy_global_after_swap:.4f}")

# %% [markdown]
# ## 2. The sampling distribution of r
#
# One study gives one r. Had we judged other systems or other documents, r would differ. To see by how much, draw
# many studies of the same size from one **population** whose correlation we know: `metaeval.datasets.synthetic`
# generates systems x inputs scores with a given system-level and summary-level population correlation.

# %%
studies = primer.sampling_distribution(n_systems, n_inputs, system_correlation=system_correlation,
                                       summary_correlation=summary_correlation, n_studies=n_studies, rng=nb.rng)
fig = primer.plot_sampling_distribution(studies)
nb.save_figure(fig, "sampling_distribution")
plt.show()

# %%
spread = studies.groupby("level", sort=False).agg(truth=("truth", "mean"), mean_r=("r", "mean"), sd_r=("r", "std"),
                                                  q025=("r", lambda r: r.quantile(0.025)),
                                                  q975=("r", lambda r: r.quantile(0.975)))
nb.save_table(spread, "sampling_distribution.csv", float_format="%.4f")
sys_row, sum_row = spread.loc["system"], spread.loc["summary"]
nb.report(f"Over {n_studies} simulated studies of {n_systems} systems x {n_inputs} inputs, the system-level r "
          f"ranged (middle 95%) from {sys_row.q025:.2f} to {sys_row.q975:.2f} around the population value "
          f"{sys_row.truth:.2f} (standard deviation {sys_row.sd_r:.3f}); the summary-level r from {sum_row.q025:.2f} "
          f"to {sum_row.q975:.2f} around {sum_row.truth:.2f} (sd {sum_row.sd_r:.3f}). With {n_systems} systems a "
          "single study's system-level r is a rough estimate: this spread is what a confidence interval must "
          "capture.", "sampling_distribution.md")

# %% [markdown]
# ## 3. Do 95% intervals cover the true value 95% of the time?
#
# Four ways to put an interval around one study's r: **Fisher**'s formula, and three bootstraps that resample
# the systems (**Boot-Systems**), the inputs (**Boot-Inputs**) or both (**Boot-Both**). Because the synthetic
# population's correlation is known, we can count how often each interval contains it (its **coverage**), and
# test each rate against the nominal 95% with an exact binomial test. Deutsch et al. (2021, notebook 20) could
# only compare against a held-out half of real data; here the truth is exact.

# %%
trials = primer.true_coverage(n_systems, n_inputs, system_correlation=system_correlation,
                              summary_correlation=summary_correlation, n_trials=n_trials, n_resamples=n_resamples,
                              rng=nb.rng)
coverage = primer.coverage_summary(trials)
nb.save_table(coverage, "coverage.csv", index=False, float_format="%.4f")
show_table(coverage)

# %%
fig = primer.plot_coverage(coverage)
nb.save_figure(fig, "coverage")
plt.show()

# %%
nb.report(f"**True coverage** ({n_trials} synthetic studies, {n_systems} systems x {n_inputs} inputs, population "
          f"correlations {system_correlation} (system) and {summary_correlation} (summary), {n_resamples} "
          "resamples per bootstrap interval):\n\n" + primer.coverage_sentences(coverage), "coverage.md")

# %% [markdown]
# **Exercise 3.** The toy matrix has 4 systems. What is the Fisher 95% interval of its system-level r, and what
# does it tell you about studies with few systems?

# %%
print(primer.check(3, None))  # your interval, e.g. primer.check(3, (0.1, 0.9))

# %% tags=["answer", "hide-input"] jupyter={"outputs_hidden": true, "source_hidden": true}
low, high = answers.toy_fisher_interval
print(f"Exercise 3: [{low:.3f}, {high:.3f}]: with 4 systems (n - 3 = 1) almost any correlation is compatible "
      "with the data.")

# %% [markdown]
# ## 4. What each bootstrap resamples
#
# One resample of each scheme, on a study of the simulated size: the colour is how many times each cell (system,
# input) enters the resample. Boot-Systems draws whole rows, Boot-Inputs whole columns, Boot-Both the cells where
# a drawn row meets a drawn column.

# %%
counts = primer.resampling_counts(n_systems, n_inputs, rng=nb.rng)
fig = primer.plot_resampling_schemes(counts)
nb.save_figure(fig, "resampling_schemes")
plt.show()

# %% [markdown]
# The same three schemes on real data: the system-level correlation of one metric with the human scores of the
# dataset, resampled each way.

# %%
Xr, Zr = ds.matrix(metric), ds.matrix(nb.human)
observed = metaeval.correlate(Xr, Zr, level="system")
distributions = primer.bootstrap_distributions(Xr, Zr, level="system", n_resamples=n_resamples_real, rng=nb.rng)
fig = primer.plot_bootstrap_distributions(distributions, statistic=observed,
                                          title=f"{ds.display_name(metric)} vs {nb.name(nb.human)}, {ds.name}")
nb.save_figure(fig, "bootstrap_distributions")
plt.show()

# %%
widths = distributions.groupby("scheme", sort=False).agg(low=("low", "first"), high=("high", "first"))
widths["width"] = widths.high - widths.low
nb.save_table(widths, "bootstrap_widths.csv", float_format="%.4f")
narrow, wide = widths.width.idxmin(), widths.width.idxmax()
nb.report(f"On {nb.md(ds.name)}, {nb.md_name(metric)}'s system-level r = {observed:.3f}. Its 95% interval is widest "
          f"under {wide} ({widths.width[wide]:.3f}) and narrowest under {narrow} ({widths.width[narrow]:.3f}): a "
          "scheme that holds one source of variation fixed leaves that source's uncertainty out (compare the "
          "coverage of each scheme in section 3).", "bootstrap_widths.md")

# %% [markdown]
# **Exercise 4.** Which scheme gives the widest interval for this metric, and why is it the one to report?

# %%
print(primer.check(4, None, distributions=distributions))  # your scheme's name, e.g. "Boot-Inputs"

# %% tags=["answer", "hide-input"] jupyter={"outputs_hidden": true, "source_hidden": true}
answers = primer.exercise_answers(distributions)
system_coverage = coverage[coverage.level == "system"].set_index("method").coverage
closest = (system_coverage - 0.95).abs().idxmin()
print(f"Exercise 4: {answers.widest_scheme}. Only Boot-Both resamples both sources of variation of a new study "
      f"(other systems, other documents). In section 3 the system-level interval whose coverage came closest to "
      f"95% was {closest} ({system_coverage[closest]:.1%}; Boot-Both: {system_coverage['Boot-Both']:.1%}).")

# %% [markdown]
# ## 5. Why reliability bounds correlation
#
# Human scores are noisy too: two annotators rarely give a summary the same score. Classical test theory writes
# an annotators' mean as a true score plus noise; its **reliability** r_kk is the share of its variance that is
# true score. A perfect metric, one that measured the true score exactly, would still correlate only
# sqrt(r_kk) with the noisy mean (over few systems a little less on average: the expected r of a small sample),
# the **noise ceiling**. We estimate r_kk by splitting the annotators into two
# halves, correlating the halves' means and stepping the correlation up to all k annotators with the
# Spearman-Brown formula (`metaeval.stats.reliability`); Krippendorff's alpha is the agreement of single
# ratings. Below, the experts' and the crowd's ratings of the same summaries, with this notebook's metric.

# %%
reliability = primer.reliability_table(ds, reliability_scores, metric, n_resamples=n_resamples, rng=nb.rng)
nb.save_table(reliability, "reliability.csv", index=False, float_format="%.4f")
nb.report(primer.reliability_sentences(reliability, ds.display_name(metric)), "reliability.md")
show_table(reliability)

# %% [markdown]
# **Exercise 5.** A metric correlates 0.5 with one human score whose ceiling is 0.6, and 0.6 with another whose
# ceiling is 0.95. On which is it closer to a perfect metric? Why is the disattenuated value (r / ceiling) not a
# correlation anyone observed?

# %%
print(primer.check(5, None))  # "first" or "second", e.g. primer.check(5, "second")

# %% tags=["answer", "hide-input"] jupyter={"outputs_hidden": true, "source_hidden": true}
from metaeval.stats.reliability import disattenuate

near, far = disattenuate(0.5, 0.6**2), disattenuate(0.6, 0.95**2)
print(f"Exercise 5: against the first human score (r / ceiling = {near:.2f} vs {far:.2f} for the second): 0.5 is "
      "most of what a perfect metric could reach there. The disattenuated value estimates the correlation with a "
      "noise-free human score that nobody observed; it can exceed 1 and carries the uncertainty of both r and r_kk, "
      "so it is reported beside r, never instead of it.")

# %% [markdown]
# ## 6. May a judge replace an annotator? The alternative annotator test
#
# An LLM (or any metric) that rates items like a human is tempting to use *instead* of a human. Calderon,
# Reichart & Dror (2025) ask a precise question: does the judge represent the other annotators at least about
# as well as one of the humans does? Leave annotator j out; on each item, the judge *wins* if it lies at least
# as close to the remaining annotators' mean rating as annotator j does (a tie counts for both). The share of
# items the judge wins is its **advantage probability** rho_judge, the share annotator j wins rho_human. The
# judge is not worse than j by more than a margin epsilon if H0: rho_judge <= rho_human - epsilon is rejected
# (a one-sided paired t-test over the items); Benjamini-Yekutieli over the annotators; the judge **passes**
# when it wins against at least half of them (`metaeval.stats.alt_test`, notebook 80 on real data). On four toy
# items rated by three annotators:

# %%
show_table(pd.DataFrame(primer.TOY_RATINGS, columns=["annotator 1", "annotator 2", "annotator 3"])
           .assign(judge=primer.TOY_JUDGE).rename_axis("item").reset_index())

# %% [markdown]
# **Exercise 6.** Leave annotator 1 out. On which items does the judge win, and on which does annotator 1?
# Give (rho_judge, rho_human). Why can both be above 0.5 on other data?

# %%
print(primer.check(6, None))  # your (rho_judge, rho_human), e.g. primer.check(6, (0.5, 0.5))

# %% tags=["answer", "hide-input"] jupyter={"outputs_hidden": true, "source_hidden": true}
rho_judge, rho_human = primer.exercise_answers().toy_alt_advantage
print(f"Exercise 6: rho_judge = {rho_judge:.2f}, rho_human = {rho_human:.2f}. The others' means are 2.5, 4.5, 2 and "
      "2; the judge is closer on items 0, 1 and 3, annotator 1 on item 2. A tie (equal distances) counts for both, "
      "so with many ties both shares can exceed 0.5. Four items are far too few to test anything: the test needs "
      "100 items per annotator and 3 annotators, and a judge that rates every item with the mean rating can pass "
      "at a generous epsilon (notebook 80's controls), so compare advantage probabilities as well.")
