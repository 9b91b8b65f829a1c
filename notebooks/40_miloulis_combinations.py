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
#     expected_seconds: {summeval: 50, realsumm: 25}
#     main_table: summary.csv
#     paper: miloulis
# ---

# %% tags=["parameters"]
dataset = "summeval"         # embedded dataset or path with texts and human scores (the default run: also realsumm)
human = None                 # None: every human score of the dataset (experts only if it has experts and crowd)
folds = 5                    # outer folds, grouped by input (document)
inner_folds = 2              # inner grouped CV that chooses the MLP / ridge hyper-parameters (when there is a search)
grid = None                  # MLP search: None/"one" (one 3 x 64 network, no search), "small" (2 configurations),
                             # "paper" (the paper's 5 x 512 / 5 x 256 / 4 x 256 networks, an L2 search of 3 each;
                             # about an hour on a busy 2-core machine), or a list of {depth, width, alpha, ...}
ungrouped = "main"           # also a random split of summaries (ungrouped CV), the leakage of the paper's protocol:
                             # "main" (S-/MEAN-ROUGE, ridge, best-single), "all" (every learned metric) or "none"
n_jobs = 1                   # outer folds in parallel (joblib); results do not depend on it
levels = ["global", "summary", "system"]  # "global" (all summaries pooled) is the paper's level
alpha = 0.05                 # Williams' test (bullets) and the conclusions
compare_coefficient = "kendall"  # Perm-Both / Boot-Both comparisons (Deutsch et al. use Kendall)
n_resamples = 1000           # permutations / bootstrap samples of the comparisons
embeddings = "glove-6b-50d"  # or a path to a GloVe / word2vec file
top_k = 12                   # rows shown per table (all rows are saved)
incomplete = "raise"         # missing cells of the human scores: raise | drop-inputs | drop-systems | keep-nan
seed = 0                     # seed of the folds, the networks and the resampling tests
output_dir = None            # None: results/miloulis/<dataset>/

# %% [markdown]
# # 40 · Miloulis et al.: learned combinations of ROUGE variants, honestly cross-validated
#
# Miloulis et al. scored summaries with 96 ROUGE variants (8 methods × stemming × stopword removal × P/R/F,
# summary level), BLEU, two word-embedding centroid metrics (CENT-C/E) and six relaxed word mover's distances,
# trained deep MLPs on these features (**S-ROUGE**: one human score; **M-ROUGE**: all human scores at once;
# **S-/M-CENT**: the same on the difference of the reference and summary centroids; **MEAN-***: the mean of the
# human scores) and ranked every metric by its correlation with the human scores (Tables 3-8), marking with •
# the metrics that no other metric beats significantly (pairwise Williams tests). Their data (DUC-2004, BioASQ)
# are not public; this notebook runs the same analysis on SummEval (four expert dimensions, like BioASQ's four
# measures) and REALSumm (LitePyramid), or on any dataset with texts and human scores.
#
# Differences from the paper, on purpose:
#
# * the learned metrics are **out-of-fold predictions** of a K-fold cross-validation grouped by document (no
#   summary or reference of a test document is seen in training), with hyper-parameters chosen by an inner
#   grouped CV inside each training fold (`metaeval.combination.cross_validate`); next to the grouped numbers,
#   the number a **random split of summaries** gives (ungrouped CV, as a random train/test split of DUC summaries
#   would; by default for S-ROUGE, MEAN-ROUGE, ridge and best-single, `-p ungrouped all` for every learned
#   metric): the difference is the leakage the paper's protocol may contain;
# * the default run has **no hyper-parameter search and small networks**: every MLP is one 3 x 64 ReLU network
#   (L2 0.01, early stopping on 10 % of the training rows), ridge has one penalty (10), 5 outer folds (see the
#   models printed below); this keeps the default run within its time budget. `-p grid paper` runs
#   the paper's architectures (S-ROUGE 5 x 512 for a dataset with one human score as DUC-2004, 5 x 256 with
#   several as BioASQ; M-ROUGE 4 x 256, one network per measure; an L2 search each; scikit-learn's MLP has no
#   dropout, so early stopping and L2 are the regularisers), and ridge always gets as many penalties as S-ROUGE
#   gets configurations (the same tuning budget); no centroid networks in that preset; its canonical outputs go
#   to `results/miloulis-paper/<dataset>/`, made with `nice -n 19 metaeval run 40 -p grid paper -p folds 5
#   -p ungrouped main -p n_jobs 1 -p output_dir results/miloulis-paper/summeval` (command and run time in its
#   manifest and in `results/README.md`; 11 min CPU on SummEval), and their numbers are shown beside this
#   run's (or "not run");
# * two baselines a reviewer asks for: **ridge** regression on the same features and **best-single**, the one
#   variant chosen on the training folds (its out-of-fold correlation);
# * the exact word mover's distance (WMD) joins the six relaxed ones; GloVe 6B has 50 dimensions here (the
#   paper: 200), see `metaeval.embeddings`;
# * Perm-Both and Boot-Both (Deutsch et al., 2021) test whether S-ROUGE beats best-single and ridge.
#
# **Paper.** V. Miloulis, P. Malakasiotis, I. Pavlopoulos and I. Androutsopoulos. *Summarization evaluation with
# ROUGE combinations.* Manuscript, Athens University of Economics and Business (AUEB NLP Group); the text we have
# names no venue or year, and we know of no DOI or anthology entry (see `CITATION.cff`). Deutsch, Dror & Roth
# (2021), TACL 9, 1132-1146, https://doi.org/10.1162/tacl_a_00417, for the resampling tests.

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from IPython.display import Markdown, display

from metaeval import miloulis
from metaeval.datasets import load as load_dataset
from metaeval.run.paths import default_output_dir, project_root
from metaeval.run.session import start
from metaeval.studies.plotting import html_cells, wrap_label

humans = [human] if isinstance(human, str) else list(human or miloulis.default_humans(load_dataset(dataset)))
nb = start("miloulis", dataset, output_dir=output_dir, seed=seed, texts=True, incomplete=incomplete, scores=humans,
           purpose="the Miloulis analysis (it scores the summaries)", quiet_rouge=True)
ds, out, rng = nb.dataset, nb.out, nb.rng
targets = miloulis.human_targets(ds, humans)
feats = miloulis.features(ds, embeddings=embeddings)
print(f"{ds.name}: {len(ds.systems)} systems x {len(ds.inputs)} inputs, {feats.frame.shape[1]} features, "
      f"human scores: {', '.join(targets)}; BLEU [{feats.bleu_signature}]")

# %% [markdown]
# ## Learned metrics: out-of-fold predictions
#
# Every model uses the same outer folds (one seed). The table counts the hyper-parameters chosen in the outer
# folds (for best-single: the variant chosen on the training folds); `split` random is the ungrouped CV.

# %%
search = miloulis.searches(grid or "one", sum(t != miloulis.MEAN for t in targets))
display(Markdown(miloulis.describe_searches(search, folds=folds, inner_folds=inner_folds)))
seed_cv = int(rng.integers(2**31 - 1))  # one seed: the grouped and the random split use the same networks' seeds
learned, params = miloulis.learned_metrics(feats, targets, folds=folds, rng=seed_cv, grid=grid or "one",
                                           inner_folds=inner_folds, n_jobs=n_jobs)
ungrouped = ungrouped or "none"  # `-p ungrouped none` arrives as None
if ungrouped != "none":
    learned_random, params_random = miloulis.learned_metrics(
        feats, targets, folds=folds, rng=seed_cv, grid=grid or "one", inner_folds=inner_folds, n_jobs=n_jobs,
        split="random", centroids=ungrouped == "all", multitask=ungrouped == "all")
    params = pd.concat([params, params_random], ignore_index=True)
nb.save_table(params, "chosen_hyperparameters.csv", index=False)
html_cells(miloulis.chosen_configurations(params)).style.set_uuid("params").hide(axis="index")

# %% [markdown]
# ## Tables 3-8 analogue: every metric ranked by Spearman's ρ with each human score
#
# One table per human score and level. `optimal` (•) marks the metrics that no other metric correlates with the
# human score significantly more strongly (one-sided Williams test on Spearman's ρ at `alpha`, the coefficient
# the paper sorts and marks by). ST: stemming, RSW: stopword removal, stat: the summary-level statistic of a
# ROUGE variant. Shown: the top rows at the first level in `levels` plus every learned metric and BLEU; the CSV
# files hold all rows at every level.

# %%
def display_name(target):
    return "Mean of the human scores" if target == miloulis.MEAN else ds.display_name(target)


base = feats.matrices()
tables = {}
for target, Z in targets.items():
    metrics = {**base, **learned[target]}
    tables[target] = {level: miloulis.ranking_table(metrics, Z, level=level, alpha=alpha) for level in levels}
    stacked = pd.concat([t.assign(level=level) for level, t in tables[target].items()], ignore_index=True)
    nb.save_table(stacked, f"ranking_{target}.csv", index=False, float_format="%.6f")
    first = tables[target][levels[0]]
    shown = first[(first.index < top_k) | first["signature"].isin(list(learned[target]) + ["bleu"])]
    display(Markdown(f"**{nb.md(display_name(target))}** ({levels[0]} level, n = {first.attrs['n']}): "
                     f"{int(first['optimal'].sum())} of {len(first)} metrics marked •"))
    display(html_cells(shown.drop(columns="signature").assign(optimal=shown["optimal"].map({True: "•", False: ""})))
            .style.set_uuid(f"ranking-{target}").format(precision=3).hide(axis="index"))

# %% [markdown]
# ## Learned metrics against the best fixed variant, at every level
#
# Spearman's ρ of the learned metrics, the baselines and the best fixed feature (the variant with the highest ρ
# on the whole dataset at that level: an optimistic, in-sample choice, unlike best-single).

# %%
rows = []
for target, by_level in tables.items():
    names = list(learned[target])
    for level, t in by_level.items():
        fixed = t[~t["signature"].isin(names)].iloc[0]
        for _, r in t[t["signature"].isin(names)].iterrows():
            # MEAN-ROUGE / MEAN-CENT are the S- networks trained on the mean: one bar colour with S-
            rows.append(dict(target=display_name(target), level=level,
                             metric=r["signature"].replace("MEAN-", "S-"), spearman=r["spearman"]))
        rows.append(dict(target=display_name(target), level=level, metric="best fixed (in-sample)",
                         spearman=fixed["spearman"]))
overview = pd.DataFrame(rows)
nb.save_table(overview, "learned_vs_fixed.csv", index=False, float_format="%.6f")
g = sns.catplot(data=overview, x="target", y="spearman", hue="metric", col="level", kind="bar", height=4.2,
                aspect=1.2, sharey=False)
g.set_axis_labels("human score", "Spearman's ρ with the human score")
for axis in g.axes.flat:  # wrapped, not slanted: slanted names ran into the y-axis label
    axis.set_xticks(axis.get_xticks(), [wrap_label(t.get_text(), 12) for t in axis.get_xticklabels()], fontsize=9)
g.set_titles("{col_name} level")
sns.move_legend(g, "lower center", bbox_to_anchor=(0.5, 0.045), ncol=7, title=None, frameon=False)
# say why a slot is empty: a metric learned for some targets only (M-: one network for the individual scores,
# which has no column for their mean; MEAN- stands in the S- colour for the mean)
per_target = overview.groupby("metric")["target"].nunique()
absent = sorted(per_target[per_target < overview["target"].nunique()].index)
note = "S-ROUGE / S-CENT for the mean of the human scores: MEAN-ROUGE / MEAN-CENT."
if absent:
    note += (f" No bar for {', '.join(absent)} where it is not learned: an M- network predicts the individual human "
             "scores together and has no output for their mean.")
g.figure.text(0.5, 0.005, note, ha="center", va="bottom", fontsize=9)
g.figure.suptitle(f"{ds.name}: learned metrics, baselines and the best fixed variant")
g.figure.tight_layout(rect=(0, 0.12, 1, 1))
nb.save_figure(g.figure, "learned_vs_fixed")
plt.show()

# %% [markdown]
# ## Grouped split against a random split of summaries: the leakage
#
# Every learned metric's Spearman ρ out of the grouped CV (no test document seen in training) next to the same
# model out of an ungrouped CV (every summary its own group: a random split of summaries, as a random train/test
# split of DUC summaries would give). `leakage` = random − grouped is what a model gains from having seen other
# summaries of its test documents, and their references, in training: the inflation the paper's protocol may
# contain.

# %%
if ungrouped != "none":
    splits = miloulis.split_comparison(learned, learned_random, targets, levels=levels)
    nb.save_table(splits, "grouped_vs_random.csv", index=False, float_format="%.6f")
    display(html_cells(splits[splits["level"] == levels[0]]).style.set_uuid("splits").format(precision=3)
            .hide(axis="index"))
else:
    splits = None
    print('ungrouped = "none": the random split was not run')

# %% [markdown]
# ## Is the learned combination's advantage real? Perm-Both and Boot-Both
#
# For every human score: S-ROUGE (MEAN-ROUGE for the mean) against best-single (one-sided, H1: S-ROUGE correlates
# more strongly: the paper's claim) and against ridge (two-sided: does the network differ from the linear
# combination, in either direction?), at system and summary level, with `compare_coefficient`.
# `ci_low`–`ci_high` is the Boot-Both percentile interval of the difference S-ROUGE − other.

# %%
comparisons = []
for target, Z in targets.items():
    s_name = "MEAN-ROUGE" if target == miloulis.MEAN else "S-ROUGE"
    for other, alternative in (("best-single", "greater"), ("ridge", "two-sided")):
        res = miloulis.compare(learned[target][s_name], learned[target][other], Z, levels=("system", "summary"),
                               coefficient=compare_coefficient, n_resamples=n_resamples, alternative=alternative,
                               rng=rng)
        comparisons.append(res.assign(target=target, metric=s_name, against=other, alternative=alternative))
comparisons = pd.concat(comparisons, ignore_index=True)[
    ["target", "metric", "against", "alternative", "level", "r_x", "r_y", "delta", "perm_both_p", "boot_both_p",
     "ci_low", "ci_high"]]
nb.save_table(comparisons, "perm_boot_comparisons.csv", index=False, float_format="%.6g")
html_cells(comparisons).style.set_uuid("comparisons").format(precision=3).hide(axis="index")

# %% [markdown]
# ## Summary per human score, and what the numbers say
#
# Generated from the tables above (nothing here is typed in by hand). Every comparison sentence names its test
# and p-value; a difference of two correlations without a test is called a point estimate.

# %%
summary_rows = []
for target, by_level in tables.items():
    s_name = "MEAN-ROUGE" if target == miloulis.MEAN else "S-ROUGE"
    c_name = s_name.replace("ROUGE", "CENT")
    t = by_level[levels[0]].set_index("signature")
    fixed = t[~t.index.isin(list(learned[target]))].iloc[0]
    c = comparisons[comparisons["target"] == target]
    p = {(r["against"], r["level"]): r["perm_both_p"] for _, r in c.iterrows()}
    d = {(r["against"], r["level"]): r["delta"] for _, r in c.iterrows()}
    row = {
        "dataset": ds.name, "human": target, "level": levels[0],
        "search": (grid or "one") if isinstance(grid or "one", str) else "custom",
        "s_rouge": t.loc[s_name, "spearman"],
        "s_rouge_rank": list(t.index).index(s_name) + 1, "s_rouge_optimal": bool(t.loc[s_name, "optimal"]),
        "best_single": t.loc["best-single", "spearman"], "ridge": t.loc["ridge", "spearman"],
        "s_cent": t.loc[c_name, "spearman"] if c_name in t.index else np.nan,
        "best_fixed": fixed["spearman"],
        "best_fixed_metric": fixed["metric"] + (f" {fixed['ST']}{fixed['RSW']} {fixed['stat']}" if fixed["ST"] != "-"
                                                else ""),
        "perm_p_vs_best_single_system": p.get(("best-single", "system"), np.nan),
        "perm_p_vs_best_single_summary": p.get(("best-single", "summary"), np.nan),
        "delta_vs_ridge_system": d.get(("ridge", "system"), np.nan),
        "delta_vs_ridge_summary": d.get(("ridge", "summary"), np.nan),
        "perm_p_vs_ridge_system": p.get(("ridge", "system"), np.nan),
        "perm_p_vs_ridge_summary": p.get(("ridge", "summary"), np.nan),
        "n_metrics": len(t),
    }
    for key, name in (("s_rouge", s_name), ("ridge", "ridge"), ("best_single", "best-single")):
        hit = (splits[(splits["target"] == target) & (splits["metric"] == name) & (splits["level"] == levels[0])]
               if splits is not None else pd.DataFrame())
        row[f"{key}_random"] = hit["random"].iloc[0] if len(hit) else np.nan
    summary_rows.append(row)
summary = pd.DataFrame(summary_rows)
nb.save_table(summary, "summary.csv", index=False, float_format="%.6f")
display(summary.round(3))


def verdict(p):
    return "significant" if p < alpha else "not significant"


def random_split(r, key):
    if np.isnan(r[f"{key}_random"]):
        return ""
    return f" (random split {r[f'{key}_random']:.3f}, leakage {r[f'{key}_random'] - r[key]:+.3f})"


PAPER_COMMAND = ("nice -n 19 metaeval run 40 -p grid paper -p folds 5 -p ungrouped main -p n_jobs 1 "
                 f"-p output_dir results/miloulis-paper/{dataset}")
lines = [f"* {miloulis.describe_searches(search, folds=folds, inner_folds=inner_folds)}"
         + (f" This is a much smaller search than the paper's (its networks: {nb.md_code(PAPER_COMMAND)})."
            if grid != "paper" else "")]
for _, r in summary.iterrows():
    lines.append(
        f"* **{nb.md(display_name(r['human']))}** ({r['level']} level, Spearman; grouped CV, with the random split of "
        f"summaries beside it): S-ROUGE ρ = {r['s_rouge']:.3f}{random_split(r, 's_rouge')} "
        f"(rank {r['s_rouge_rank']} of {r['n_metrics']}, "
        f"{'•: no' if r['s_rouge_optimal'] else 'no •: some'} metric significantly stronger, Williams one-sided "
        f"α = {alpha}), best-single {r['best_single']:.3f}{random_split(r, 'best_single')}, ridge "
        f"{r['ridge']:.3f}{random_split(r, 'ridge')}, best fixed variant {r['best_fixed']:.3f} "
        f"({nb.md(r['best_fixed_metric'])}, chosen in-sample). "
        f"Perm-Both ({compare_coefficient}, one-sided H1: S-ROUGE > best-single): p = "
        f"{r['perm_p_vs_best_single_system']:.3f} at system level ({verdict(r['perm_p_vs_best_single_system'])}), "
        f"{r['perm_p_vs_best_single_summary']:.3f} at summary level "
        f"({verdict(r['perm_p_vs_best_single_summary'])}). Perm-Both ({compare_coefficient}, two-sided, S-ROUGE "
        f"vs ridge): difference {r['delta_vs_ridge_system']:+.3f}, p = {r['perm_p_vs_ridge_system']:.3f} at system "
        f"level ({verdict(r['perm_p_vs_ridge_system'])}); {r['delta_vs_ridge_summary']:+.3f}, "
        f"p = {r['perm_p_vs_ridge_summary']:.3f} at summary level ({verdict(r['perm_p_vs_ridge_summary'])})."
    )
n_sig = int((summary[["perm_p_vs_best_single_system", "perm_p_vs_best_single_summary"]] < alpha).any(axis=1).sum())
ridge_wins = ((summary["perm_p_vs_ridge_system"] < alpha) & (summary["delta_vs_ridge_system"] < 0)) | (
    (summary["perm_p_vs_ridge_summary"] < alpha) & (summary["delta_vs_ridge_summary"] < 0))
mlp_wins = ((summary["perm_p_vs_ridge_system"] < alpha) & (summary["delta_vs_ridge_system"] > 0)) | (
    (summary["perm_p_vs_ridge_summary"] < alpha) & (summary["delta_vs_ridge_summary"] > 0))
lines.append(
    f"* Over {len(summary)} human score(s), S-ROUGE beats the single variant chosen on the training folds "
    f"significantly (Perm-Both one-sided, α = {alpha}) at system or summary level for {n_sig}. Against ridge "
    f"(Perm-Both two-sided, α = {alpha}), ridge is significantly stronger at system or summary level for "
    f"{int(ridge_wins.sum())} and S-ROUGE for {int(mlp_wins.sum())}; for the others neither test rejects (which "
    f"does not make them equal). This is with the search stated above."
)
if splits is not None:
    g_level = splits[splits["level"] == levels[0]]
    lines.append(
        f"* Random split of summaries instead of the grouped one ({levels[0]} level, Spearman; point estimates of "
        f"the same models, no test): the learned metrics' ρ changes by {g_level['leakage'].min():+.3f} to "
        f"{g_level['leakage'].max():+.3f} (median {g_level['leakage'].median():+.3f}); positive values are the "
        "leakage a random split of summaries would add to the paper's numbers."
    )
paper_summary = project_root() / default_output_dir("miloulis-paper", dataset) / "summary.csv"
if grid != "paper" and paper_summary.exists():
    # the committed run of the paper's networks (-p grid paper), shown beside this run's numbers
    paper = pd.read_csv(paper_summary).set_index("human")
    for _, r in summary.iterrows():
        if r["human"] not in paper.index:
            continue
        q = paper.loc[r["human"]]
        lines.append(
            f"* **{nb.md(display_name(r['human']))}**, the paper's networks (`results/miloulis-paper/`, "
            f"{q['level']} level, "
            f"Spearman, grouped CV): S-ROUGE ρ = {q['s_rouge']:.3f} (this run's smaller search: {r['s_rouge']:.3f}), "
            f"ridge {q['ridge']:.3f} ({r['ridge']:.3f}), best-single {q['best_single']:.3f} ({r['best_single']:.3f}); "
            f"there, Perm-Both ({compare_coefficient}, two-sided) S-ROUGE vs ridge: "
            f"p = {q['perm_p_vs_ridge_system']:.3f} (system), {q['perm_p_vs_ridge_summary']:.3f} (summary). The two "
            "runs' values are point estimates from different searches, not tested against each other."
        )
elif grid != "paper":
    lines.append(f"* The paper's networks (`-p grid paper`): not run for {nb.md(ds.name)} (no "
                 f"{nb.md_code(f'results/miloulis-paper/{dataset}/summary.csv')}); command: "
                 f"{nb.md_code(PAPER_COMMAND)}.")
if summary["s_cent"].notna().any():
    lines.append(
        f"* The centroid-difference networks (S-CENT / MEAN-CENT) have a lower point estimate of ρ than S-ROUGE "
        f"for {int((summary['s_cent'] < summary['s_rouge']).sum())} of {int(summary['s_cent'].notna().sum())} "
        "human score(s) (not tested; the Williams bullets in the tables above are the tests)."
    )
nb.report("\n".join(lines), "conclusions.md")
