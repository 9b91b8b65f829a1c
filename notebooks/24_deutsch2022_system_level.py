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
#     expected_seconds: {summeval: 12, realsumm: 14}
#     main_table: delta_correlations.csv
#     paper: deutsch2022
# ---

# %% tags=["parameters"]
dataset = "summeval"        # an embedded dataset (summeval, realsumm, ...) or a folder/JSONL file
human = None                # the ground-truth score (None: the dataset's default human score)
metrics = None              # score names (None: embedded data the paper's metrics, your data its non-human scores)
deltas = None               # None: the paper's buckets; or fixed bands [[0, 0.5], [0.5, 1], [1, 2], [2, 5], [5, 100]]
bucket_score = None         # whose differences bucket the pairs (None: each metric's own; bands: ROUGE-1; or "human")
n_resamples = 1000          # Boot-Both resamples per delta-bucket interval
stability_sizes = [5, 10, 25, 50]  # numbers of judged documents for the ranking-stability curve
stability_trials = 200      # random document subsets per size
n_permutations = 1000       # sign flips (soft pairwise accuracy) and Perm-Both permutations (clusters)
alpha = 0.05                # level of the tests, clusters and replicability counts
correction = "holm"         # multiplicity adjustment of the all-pairs tests: none | bonferroni | holm | fdr_bh | fdr_by
replicate_on = ["summeval", "realsumm"]  # datasets of the replicability table ([]: skip it)
unjudged_scores = None      # CSV (system, input, <score>...) of metric scores on unjudged documents (None: skip)
incomplete = "raise"        # missing cells of the scores used: raise | drop-inputs | drop-systems
seed = 0                    # seed of the random generator (every resample derives from it)
output_dir = None           # None: results/deutsch2022/<dataset>

# %% [markdown]
# # 24 · Deutsch, Dror & Roth (2022): system-level correlations on realistic score differences
#
# and the pairwise statistics used today.
#
# **What the paper asked.** A system-level correlation says how well a metric ranks *all* pairs of systems, most of
# which differ by several ROUGE points. But a paper that proposes a new system claims an improvement of a point or
# less over the state of the art. How well do metrics order the pairs of systems that are *that* close? The paper
# re-defines system-level Kendall's τ over pairs and computes it only over the pairs of systems whose scores
# are close (Figure 6): as the authors' code does it, each metric's pairs sorted by *that metric's own*
# |difference of system scores|, then τ over the closest 10 %, 20 %, ..., 100 % of them (cumulatively). It also
# argues that a metric's system score should use the whole test set, not only the judged documents, and gives the
# bootstrap that fits (documents of the metric and of the humans resampled separately).
#
# **What is added here.** The statistics the MT and summarization communities use since: pairwise accuracy
# (Kocmi et al. 2021), tie-calibrated accuracy acc_eq with its tie threshold ε (Deutsch, Foster & Freitag 2023),
# soft pairwise accuracy (Thompson et al., WMT 2024), WMT-style significance clusters, and a replicability
# analysis over both datasets (Dror et al. 2017).
#
# *Citations:* Daniel Deutsch, Rotem Dror and Dan Roth (2022). Re-Examining System-Level Correlations of Automatic
# Summarization Evaluation Metrics. *NAACL 2022*, 6038–6052.
# [doi:10.18653/v1/2022.naacl-main.442](https://doi.org/10.18653/v1/2022.naacl-main.442) ·
# Kocmi et al. (2021), [WMT](https://aclanthology.org/2021.wmt-1.57) ·
# Deutsch, Foster & Freitag (2023), [EMNLP](https://aclanthology.org/2023.emnlp-main.798) ·
# Freitag et al. (2024), [WMT](https://aclanthology.org/2024.wmt-1.2) ·
# Dror et al. (2017), [TACL 5](https://doi.org/10.1162/tacl_a_00074).
#
# **What the embedded data allow.** SummEval and REALSumm hold the metric scores of the 100 *judged* documents
# only. The delta-bucket correlations, their intervals, the ranking stability over judged documents and all the
# pairwise statistics run on them. The paper's comparison of system scores on the judged documents with system
# scores on all 11,490 CNN/DailyMail test documents needs the metrics' scores on the unjudged documents, which are
# not public here: give them as `unjudged_scores` to run that section.

# %%
from dataclasses import replace

import matplotlib.pyplot as plt
import pandas as pd

import metaeval
from metaeval.studies import deutsch2022 as d22
from metaeval.run.session import start

# Everything the parameters decide is checked here, before minutes of resampling: the metrics, the bucket score,
# the replicability datasets and missing cells (on your data: your score names in every output and message).
probe = metaeval.datasets.load(dataset)
human = human if human is not None else probe.default_human
choice = d22.choose_metrics(probe, metrics, human=human, embedded=d22.is_embedded(dataset, probe))
metrics, labels = choice.scores, choice.labels
deltas = d22.check_deltas(deltas)
bucket = d22.choose_bucket(probe, bucket_score, choice, human=human, percentiles=deltas == d22.PERCENTILES)
replication = d22.replication_plan(dataset, probe, replicate_on, choice, incomplete=incomplete)
used = list(dict.fromkeys([human, *metrics] + ([bucket.score] if bucket.score else [])))
d22.check_complete(probe, used, incomplete)
nb = start("deutsch2022", dataset, output_dir=output_dir, seed=seed, human=human, scores=used, incomplete=incomplete,
           purpose="notebook 24")
ds, out, rng = nb.dataset, nb.out, nb.rng
Z = ds.matrix(human)
mats = {labels[m]: ds.matrix(m) for m in metrics}
notes = [n for n in (d22.dropped_note(probe, ds, incomplete, used), bucket.note) if n]
print(f"{ds.name}: {len(ds.systems)} systems x {len(ds.inputs)} inputs; ground truth {nb.name(human)}; "
      f"{len(mats)} metrics: {', '.join(mats)}" + "".join(f"\n{n}" for n in notes))

# %% [markdown]
# ## Correlations over the closest system pairs (the paper's Figure 6)
#
# **Default, as the authors compute it** (`deltas = None`, or `"percentiles"`; their `plot_combined.py`): for each
# metric, the system pairs sorted by the metric's *own* |difference of system scores|; with `step = ⌈#pairs / 10⌉`,
# bucket k (10 %, 20 %, ..., 100 %) holds every pair at most as far apart as the pair at position `k · step`
# (cumulative, ties included; the paper's `u` is that largest |difference|, column `high`). In each bucket, the authors'
# Kendall's τ with tie correction, `(P − Q) / √((P + Q + T)(P + Q + U))` (P concordant, Q discordant, T tied by the
# metric only, U by the humans only). `tests/test_deutsch2022_authors.py` checks that these buckets and τ equal a
# re-statement of the authors' code on both embedded datasets.
#
# **The other view** (`deltas = [[0, 0.5], [0.5, 1], ...]`): fixed bands `[ℓ, u)` of one score's difference, the
# same for every metric (ROUGE-1 in points by default, `bucket_score` another score or `"human"`). It is *not* the
# paper's Figure 6, but says how metrics order pairs that are close in ROUGE.
#
# Each τ has a 95% **Boot-Both** percentile interval: each resample draws systems and documents with replacement,
# recomputes the system scores, re-buckets the pairs of two different drawn systems by their resampled difference
# (percentile buckets: the resample's own percentiles) and recomputes τ. A bucket without pairs, or whose pairs the
# humans all tie, has no τ and no interval.
#
# The paper scores the systems on the full CNN/DailyMail test set; the embedded data hold the 100 judged documents
# only, so the numbers here are the paper's procedure on other system scores (the authors' printed values are beside
# ours in `results/README.md`).

# %%
from metaeval.studies.plotting import delta_figure, show_table

if bucket.own:
    by, by_name, units = "metric", "each metric's own score", ""
elif bucket.human:
    by, by_name, units = Z, nb.name(human), ""
else:
    by, by_name, units = d22.rouge_points(ds.matrix(bucket.score)), bucket.label, "points"
delta = d22.delta_table(mats, Z, by=by, deltas=deltas, n_resamples=n_resamples, rng=rng)
nb.save_table(delta, "delta_correlations.csv", index=False, float_format="%.6g")

view = "percent of system pairs used" if deltas == d22.PERCENTILES else "fixed bands"
if deltas == d22.PERCENTILES:
    xlabel = "" if bucket.own else f"|difference in {by_name}| (percentiles of the pairs)"
else:
    xlabel = f"|difference in {by_name}| between two systems" + (f" ({units})" if units else "")
ax = delta_figure(delta, units=units, xlabel=xlabel,
                  title=f"System-level τ over close system pairs ({ds.name}, {nb.name(human)}; {view})")
nb.save_figure(ax.figure, "delta_correlations")
plt.show()
show_table(delta)

# %%
overall = {name: metaeval.correlate(X, Z, level="system", coefficient="kendall") for name, X in mats.items()}
lines = [f"* {nb.md(n)}" for n in notes] + d22.delta_sentences(delta, overall, units=units)
lines.append("* The paper's finding on SummEval and REALSumm (Figure 6, systems scored on the full test set): "
             "system-level correlations over the closest pairs are far lower than over all pairs.")
nb.report("\n".join(lines), "delta_conclusions.md")

# %% [markdown]
# ## Ranking stability against the number of judged documents
#
# How well does the ranking of the systems on k randomly drawn documents (without replacement) agree with their
# ranking on all the judged documents? Kendall's τ between the two rankings, mean and 2.5–97.5 percentiles over the
# random subsets, for every metric and for the humans. (The paper's version compares judged documents with the whole
# test set, which needs `unjudged_scores`.)

# %%
sizes = [k for k in stability_sizes if k < Z.shape[1]]
stability = d22.ranking_stability({**mats, nb.name(human): Z}, sizes=sizes, n_trials=stability_trials, rng=rng)
nb.save_table(stability, "ranking_stability.csv", index=False, float_format="%.4f")
fig, ax = plt.subplots(figsize=(7, 4))
for k, (name, block) in enumerate(stability.groupby("score", sort=False)):
    style = dict(color="black", linewidth=2.2) if name == nb.name(human) else dict(color=f"C{k % 10}", linewidth=1)
    ax.plot(block["documents"], block["tau_mean"], marker="o", markersize=3, label=name, **style)
ax.set_xscale("log")
ax.set_xticks(sizes, [str(k) for k in sizes])
ax.minorticks_off()  # the log axis' minor labels ("3x10^1") ran over the sizes' own labels
ax.set_xlabel("judged documents")
ax.set_ylabel(f"τ with the ranking on all {Z.shape[1]} documents (mean)")
ax.set_title(f"Ranking stability ({ds.name}, {stability_trials} subsets per size)", fontsize=10)
ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)  # clear of the curves
fig.tight_layout()
nb.save_figure(fig, "ranking_stability")
plt.show()
smallest = stability[stability["documents"] == sizes[0]].set_index("score")
hum = smallest.loc[nb.name(human)]
nb.report("\n".join([
    f"* With {sizes[0]} documents the humans' ranking agrees with their ranking on all {Z.shape[1]} at τ = "
    f"{hum['tau_mean']:.2f} on average (95% of subsets in [{hum['tau_low']:.2f}, {hum['tau_high']:.2f}]); the "
    f"metrics range from τ = {smallest.drop(index=nb.name(human))['tau_mean'].min():.2f} to "
    f"{smallest.drop(index=nb.name(human))['tau_mean'].max():.2f}.",
    f"* {int((smallest.drop(index=nb.name(human))['tau_mean'] > hum['tau_mean']).sum())} of {len(mats)} metrics "
    f"rank the systems on {sizes[0]} documents closer to their own {Z.shape[1]}-document ranking than the humans "
    "do (mean τ; descriptive, no test). A metric's system score can use every test document, not only the "
    "judged ones: the paper's argument for scoring metrics on the whole test set.",
]), "stability_conclusions.md")

# %% [markdown]
# ## System scores on the whole test set (needs the unjudged documents)
#
# The paper's system-level protocol: the metric's system scores over all test documents, the humans' over the judged
# ones, and a Boot-Both interval that resamples the two document sets independently (`bootstrap_ci(...,
# paired_inputs=False, unjudged=...)`, nlpstats' `paired_inputs=False`). It runs when `unjudged_scores` names a CSV
# with columns `system`, `input` and one column per metric score name, one row per system and unjudged document, e.g.
#
# ```
# system,input,rouge-1.recall,qa-eval.f1
# banditsumm_out,cnndm-test-0001,0.412,0.237
# banditsumm_out,cnndm-test-0002,0.388,0.201
# ...
# ```
#
# (`metaeval run 24 -p dataset realsumm -p unjudged_scores unjudged.csv`; every system of the dataset with the same
# documents, score names as the dataset spells them; `d22.read_unjudged` says what is missing).

# %%
if unjudged_scores is None:
    print("unjudged_scores is None: the whole-test-set comparison is skipped (the embedded datasets hold the judged "
          "documents only). Give a CSV of metric scores on the other CNN/DailyMail test documents to run it.")
else:
    extra = d22.read_unjudged(unjudged_scores, ds.systems, metrics)
    full = d22.unjudged_cis({labels[m]: ds.matrix(m) for m in extra},
                            {labels[m]: v for m, v in extra.items()}, Z, n_resamples=n_resamples, rng=rng)
    nb.save_table(full, "unjudged_cis.csv", index=False, float_format="%.4f")
    display(show_table(full))  # noqa: F821 - IPython

# %% [markdown]
# ## Pairwise accuracy, acc_eq and soft pairwise accuracy, with significance clusters
#
# * **Pairwise accuracy** (system level): the share of system pairs the metric orders as the humans do; a pair tied
#   by one side only counts as an error (mt-metrics-eval's definition).
# * **acc_eq** (Deutsch, Foster & Freitag 2023): pairwise accuracy that rewards predicting the humans' *ties*,
#   with the tie threshold ε (in the metric's units) that maximises it; at system level and averaged over
#   documents (summary level), where ties of human scores are frequent.
# * **Soft pairwise accuracy** (Thompson et al. 2024): 1 − mean |p_metric − p_human| over system pairs, the p-values
#   of "system i beats j" from a paired permutation test over documents on each side (the same sign flips for both).
#
# **Clusters**: Perm-Both tests of "metric A has a higher pairwise accuracy than metric B" for all ordered pairs
# (one-sided, `n_permutations` permutations, adjusted by `correction`), then mt-metrics-eval's greedy ranking: a
# metric opens a new cluster when a metric of the current cluster beats it at `alpha`.

# %%
table = d22.agreement_table(mats, Z, n_resamples=n_permutations, rng=rng)
raw_tests = metaeval.pairwise_tests(mats, Z, test="perm-both", level="system", coefficient="pairwise-accuracy",
                                    n_resamples=n_permutations, rng=rng)
tests = replace(raw_tests, pvalues=metaeval.multiplicity.adjust(raw_tests.pvalues, correction=correction))
clusters = d22.accuracy_clusters(tests, alpha=alpha)
table = table.merge(clusters[["metric", "rank"]], on="metric").sort_values(["rank", "pairwise_accuracy"],
                                                                           ascending=[True, False])
nb.save_table(table, "agreement_table.csv", index=False, float_format="%.4f")
nb.save_table(pd.DataFrame(tests.pvalues, index=list(tests.names), columns=list(tests.names)),
              "pairwise_accuracy_pvalues.csv", float_format="%.6g")
show_table(table)

# %%
top = table[table["rank"] == 1]
lines = [f"* Cluster 1 (no metric of it is beaten at alpha = {alpha} after {correction} over "
         f"{len(mats) * (len(mats) - 1)} one-sided Perm-Both tests of pairwise accuracy, {n_permutations} "
         "permutations): "
         f"{', '.join(f'{nb.md(m)} ({a:.3f})' for m, a in zip(top['metric'], top['pairwise_accuracy']))}."]
ranks = int(table["rank"].max())
lines.append(f"* {ranks} cluster(s) in all." + ("" if ranks > 1 else " With this many systems the tests separate "
                                                  "no metric from the best at this level."))
names_t = list(tests.names)
for k in range(1, ranks):
    upper = table[table["rank"] == k]["metric"].tolist()
    lower = table[table["rank"] == k + 1]["metric"].tolist()
    p = min(tests.pvalues[names_t.index(a), names_t.index(b)] for a in upper for b in lower)
    lines.append(f"* Cluster {k + 1} starts because a metric of cluster {k} beats {nb.md(lower[0])} (smallest adjusted "
                 f"p = {p:.3g}).")
best_spa = table.sort_values("soft_pairwise_accuracy", ascending=False).iloc[0]
best_tie = table.sort_values("acc_eq_summary", ascending=False).iloc[0]
lines.append(f"* Soft pairwise accuracy is highest for {nb.md(best_spa['metric'])} "
             f"({best_spa['soft_pairwise_accuracy']:.3f}); summary-level acc_eq for {nb.md(best_tie['metric'])} "
             f"({best_tie['acc_eq_summary']:.3f} at ε = {best_tie['epsilon_summary']:.3g}). These two are "
             "descriptive (not tested here).")
nb.report("\n".join(lines), "agreement_conclusions.md")

# %% [markdown]
# ## Replicability over both datasets
#
# Does metric A beat metric B on every dataset of `replicate_on` (SummEval **and** REALSumm by default)? For
# every ordered pair of metrics present in all of them, the one-sided Perm-Both p-values of pairwise accuracy
# (unadjusted; this dataset's are those above, the others' against their own default human score) on each
# dataset are combined by the partial conjunction test with u = the number of datasets (Benjamini & Heller 2008,
# Bonferroni combination: valid under any dependence), and Dror et al.'s estimate counts the datasets on which
# the effect replicates. It runs when this dataset is one of `replicate_on` and at least 2 of its metrics are in
# all of them (checked at the start; otherwise a one-line note says why it is skipped).

# %%
if not replication.skipped:
    per_dataset = d22.replication_tests(replication, raw_tests, incomplete=incomplete, n_resamples=n_permutations,
                                        seed=seed)
    replic = d22.replicability_table(per_dataset, alpha=alpha)
    nb.save_table(replic, "replicability.csv", index=False, float_format="%.6g")
    both = replic[replic["n_replicated"] == len(per_dataset)]
    lines = [f"* {len(both)} of {len(replic)} ordered metric pairs beat each other on all {len(per_dataset)} datasets "
             f"(partial conjunction, u = {len(per_dataset)}, Bonferroni combination, p ≤ {alpha}); "
             f"{int((replic['n_replicated'] >= 1).sum())} on at least one."]
    for _, row in both.head(5).iterrows():
        ps = ", ".join(f"{nb.md(d)} p = {row[f'p_{d}']:.3g}" for d in per_dataset)
        lines.append(f"  * {nb.md(row['metric_a'])} > {nb.md(row['metric_b'])}: {ps}; on all: p = {row['p_all']:.3g}.")
    nb.report("\n".join(lines), "replicability_conclusions.md")
    display(show_table(replic.head(15), digits=4))  # noqa: F821 - IPython
else:
    print(replication.note)
