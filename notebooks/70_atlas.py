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
#     default_run: false
#     expected_seconds: {null: 300}
#     main_table: correlations.csv
#     paper: atlas
# ---

# %% tags=["parameters"]
datasets = []               # atlas names, your dataset folders or imported names ([]: every registered one that loads)
max_own = 4                 # the datasets' own metric scores taken besides ROUGE/BLEU (widely used ones first)
levels = ["system", "summary"]  # correlation levels
n_resamples = 1000          # Boot-Both resamples per correlation interval (Deutsch et al., 2021: 1000)
n_resamples_accuracy = 200  # Boot-Both resamples per accuracy interval (reduced: acc_eq re-fits in every one)
n_permutations = 1000       # Perm-Both permutations per pair of metrics (partial conjunction, Deutsch 2021 finding)
ceiling_resamples = 200     # Boot-Both resamples of the noise ceiling's interval
finding_resamples = 1000    # Boot-Both / document resamples of the finding rules (the papers: 1000)
power_trials = 2000         # normal simulations of Williams' power where Graham's finding is not refuted
lin_step = 5                # Lin's finding: document counts tried every lin_step (Lin: 5)
alpha = 0.05                # FDR level of the partial conjunction tests and level of every test
forest_statistic = "pearson"  # correlation of the forest plots: pearson | spearman | kendall
seed = 0                    # seed of the random generator (every resample derives from it)
output_dir = None           # None: results/runs/atlas/... (make atlas writes results/atlas)

# %% [markdown]
# # 70 · The atlas: do the seed papers' findings hold on every dataset?
#
# **What this asks.** The other notebooks reproduce one paper on one dataset. Here every dataset of the atlas
# (`metaeval datasets`) is analysed the same way: how well do ROUGE, BLEU and the datasets' own metrics agree with
# the humans, how much *can* they agree given how much the annotators agree with each other (the **noise
# ceiling**), does "metric A beats metric B" replicate across datasets, and do the headline findings of Graham
# (2015), Lin (2004) and Deutsch et al. (2021, 2022) hold on each dataset?
#
# **How.** ROUGE-1/2/L (recall and F) and sentence BLEU are computed from the texts by the library (the Unicode
# tokenizer for non-English texts); the datasets' own metric scores are added. For each metric: system- and
# summary-level Pearson, Spearman and Kendall, pairwise accuracy and tie-calibrated accuracy, each with a 95%
# Boot-Both percentile interval (systems and inputs resampled together; Deutsch et al., 2021). The noise ceiling
# of each level and coefficient is what a perfect metric (one equal to the true score) is expected to reach
# against the annotators' mean: the expected coefficient at correlation sqrt(r_kk), r_kk the split-half
# reliability of the annotators' mean computed the way that correlation is (summary level: averaged over inputs;
# Spearman-Brown, averaged over splits of the annotators; its bias by simulation is tabulated in
# `metaeval.stats.reliability.noise_ceiling`); no ceiling, reliability or system-level interval below 5 systems
# and 5 inputs (`MIN_SIZES`). Spearman's disattenuated correlation r / sqrt(r_kk) is shown only on Pearson rows, as
# a separate, labelled column. Replication across datasets: for every ordered pair of metrics, the partial
# conjunction test (Benjamini & Heller, 2008) of "A beats B on at least u of the k datasets that have both", for
# every u, with Benjamini-Hochberg FDR control over the pairs. A dataset that cannot support an analysis (no
# texts, too few systems, no per-annotator scores, not downloaded) is listed with its reason.

# %%
import matplotlib.pyplot as plt
import pandas as pd

from metaeval.run.session import start
from metaeval.studies import atlas
from metaeval.studies.plotting import show_table

unusable = atlas.check_names(datasets)  # a dataset you named that cannot be analysed is an error, not a skip
if unusable:
    raise SystemExit("datasets: " + "; ".join(f"{k}: {v}" for k, v in unusable.items()))
loaded, skipped = atlas.load_datasets(datasets)
if not loaded:
    raise SystemExit(f"no atlas dataset loads here: {skipped}")
first, (first_entry, _) = next(iter(loaded.items()))
nb = start("atlas", atlas.source_of(first, first_entry), output_dir=output_dir, seed=seed)
out = nb.out
seeds = {name: int(s) for name, s in zip(loaded, nb.rng.integers(2**63 - 1, size=len(loaded)))}
print(f"{len(loaded)} datasets: {', '.join(loaded)}")
for name, why in skipped.items():
    print(f"skipped {name}: {why}")

# %% [markdown]
# ## The datasets and what each supports

# %%
index_rows, metrics_by, humans, notes_by, support_by = [], {}, {}, {}, {}
for name, (entry, ds) in loaded.items():
    sup = atlas.support(entry, ds)
    support_by[name] = sup
    mats, notes = atlas.dataset_metrics(ds, entry, max_own=max_own)
    metrics_by[name] = mats
    notes_by[name] = notes
    humans[name] = ds.matrix(entry.default_human)
    index_rows.append({"dataset": name, "title": entry.title, "domain": entry.domain, "language": entry.language,
                       "judgment": entry.judgment, "human": entry.default_human, "systems": ds.shape[0],
                       "inputs": ds.shape[1], "annotators": entry.annotators, "metrics": len(mats),
                       "status": "analysed",
                       "not supported": "; ".join(f"{a}: {why}" for a, why in sup.items() if why) or "",
                       "notes": "; ".join(notes)})
for name, why in skipped.items():
    index_rows.append({"dataset": name, "status": "skipped", "not supported": why})
index = pd.DataFrame(index_rows)
nb.save_table(index, "datasets.csv", index=False)
index.drop(columns=["notes"])

# %% [markdown]
# ## Annotator reliability and the noise ceiling

# %%
ceil, no_ceiling, alpha_rows = {}, {}, []
for name, (entry, ds) in loaded.items():
    why = support_by[name]["noise ceiling"]
    if why:
        no_ceiling[name] = why
        continue
    c = atlas.ceilings(ds.ratings(entry.default_human), n_resamples=ceiling_resamples, rng=seeds[name])
    ceil[name] = c
    for cell in c.cells:
        alpha_rows.append({"dataset": name, "human": entry.default_human, "annotators": c.n_annotators,
                           "krippendorff_alpha_interval": c.alpha_interval, "level": cell.level,
                           "coefficient": cell.coefficient, "reliability": cell.reliability,
                           "ceiling": cell.value, "ceiling_low": cell.ci[0], "ceiling_high": cell.ci[1],
                           "reason": cell.reason})
ceilings_table = pd.DataFrame(alpha_rows)
nb.save_table(ceilings_table, "noise_ceilings.csv", index=False, float_format="%.4f")
nb.report("\n".join(atlas.ceiling_sentences(ceil, no_ceiling)), "noise_ceilings.md")

# %% [markdown]
# ## Correlations and accuracies with Boot-Both intervals, next to the ceiling

# %%
frames = []
for name, (entry, ds) in loaded.items():
    lv = [x for x in levels if not (x == "system" and support_by[name]["system level"])]
    t = atlas.correlation_table(metrics_by[name], humans[name], levels=lv, ceiling=ceil.get(name),
                                n_resamples=n_resamples, n_resamples_accuracy=n_resamples_accuracy, rng=seeds[name])
    t.insert(0, "dataset", name)
    frames.append(t)
table = pd.concat(frames, ignore_index=True)
nb.save_table(table, "correlations.csv", index=False, float_format="%.4f")
nb.report("\n".join(atlas.correlation_sentences(table, statistic=forest_statistic)), "correlations.md")
show_table(table[table["statistic"] == forest_statistic].head(30))

# %% [markdown]
# ## Forest plots: each metric across datasets
#
# Dots are the correlation, bars its 95% Boot-Both interval (orange system level, blue summary level); the grey
# tick is the noise ceiling of that dataset, level and coefficient (absent where the dataset has no per-annotator
# scores or too few systems).

# %%
shared = table.groupby("metric")["dataset"].nunique()
for metric in shared.index:
    n_rows = len(table[(table["metric"] == metric) & (table["statistic"] == forest_statistic)])
    fig, ax = plt.subplots(figsize=(6.5, 0.32 * n_rows + 1.3))
    atlas.forest_plot(table.assign(metric=table["metric"]), metric, statistic=forest_statistic, ax=ax)
    fig.tight_layout()
    nb.save_figure(fig, "forest_" + metric.replace(" ", "_").replace(".", "_").lower())
    plt.show()

# %% [markdown]
# ## Does "A beats B" replicate? Partial conjunction tests across datasets

# %%
tests = {}
for name, (entry, ds) in loaded.items():
    if support_by[name]["system level"] or len(metrics_by[name]) < 2:
        continue
    tests[name] = atlas.pair_tests(metrics_by[name], humans[name], n_resamples=n_permutations, rng=seeds[name])
pc = atlas.partial_conjunction_table(tests, alpha=alpha)
nb.save_table(pc, "partial_conjunction.csv", index=False, float_format="%.4g")
nb.report("\n".join(atlas.replication_sentences(pc, alpha=alpha)), "partial_conjunction.md")
pc.head(15)

# %% [markdown]
# ## The finding matrix: which headline findings hold where
#
# Each finding is one rule of `metaeval.studies.atlas_findings` (its claim quoted from the paper, the test, the
# minimum data: `finding_rules.csv`). A cell *holds* or *does not hold* when the test says so; *not shown* (a
# claimed difference the test does not detect) and *not refuted* (a claimed equality the test does not reject,
# with the test's power) are no evidence either way; *cannot be tested here* names what is missing (too few
# systems, no texts). Datasets with no metric at all are listed apart, not in the matrix.

# %%
options = atlas.FindingOptions(alpha=alpha, n_resamples=finding_resamples, n_permutations=n_permutations,
                               power_trials=power_trials, lin_step=lin_step)
cells, apart = [], {}
for name, (entry, ds) in loaded.items():
    why = atlas.untestable(metrics_by[name])
    if why:
        apart[name] = why  # listed apart from the matrix
        continue
    cells += atlas.findings(name, ds, entry, metrics_by[name], humans[name], options=options,
                            pair_tests=tests.get(name), rng=seeds[name])
cells_table = pd.DataFrame(cells)
nb.save_table(atlas.rule_table(), "finding_rules.csv", index=False)
matrix = atlas.finding_matrix(cells)
nb.save_table(cells_table, "findings.csv", index=False, float_format="%.4g")
nb.save_table(matrix, "finding_matrix.csv")
fig, ax = plt.subplots(figsize=(1.3 * matrix.shape[1] + 2.5, 0.45 * matrix.shape[0] + 1.8))
atlas.finding_heatmap(matrix, ax=ax)
ax.set_title("Seed papers' findings per dataset", fontsize=10)
fig.tight_layout()
nb.save_figure(fig, "finding_matrix")
plt.show()
for name, why in apart.items():
    print(f"{name}: {why}")
cells_table[["dataset", "finding", "status", "reason"]]

# %% [markdown]
# ## What the numbers say
#
# Generated from the tables above (saved as `conclusions.md`).

# %%
lines = ["**Not analysed:** " + "; ".join(f"{nb.md(k)}: {nb.md(v)}" for k, v in skipped.items()) + ".", ""] \
    if skipped else []
lines += ["**Findings** (each cell: holds / does not hold / not shown / not refuted / cannot be tested here, with its "
         "value and reason in `findings.csv`; the rules in `finding_rules.csv`):",
         "", *atlas.finding_sentences(cells, apart), "", "**Replication across datasets:**", "",
         *atlas.replication_sentences(pc, alpha=alpha), "", "**Noise ceilings:**", "",
         *atlas.ceiling_sentences(ceil, no_ceiling), "", "**Best metric per dataset and level:**", "",
         *atlas.correlation_sentences(table, statistic=forest_statistic), "",
         "**The finding matrix:**", "", matrix.fillna("").rename(index=nb.md, columns=nb.md).to_markdown()]
nb.report("\n".join(lines), "conclusions.md")
