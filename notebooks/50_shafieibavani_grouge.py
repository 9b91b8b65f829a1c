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
#     expected_seconds: {summeval: 30, realsumm: 30}
#     main_table: tables4_correlations.csv
#     paper: shafieibavani
# ---

# %% tags=["parameters"]
dataset = "summeval"
human = None                  # the human score of the tests and the lam curve; None: the dataset's default
humans = None                 # the columns of the correlation table; None: the dataset's human scores
annotators = "expert"         # if humans is None: keep the scores of these annotators when there are any
measures = ["grouge-1", "grouge-2", "grouge-su4"]
lam = 0.5                     # the paper's value, tuned on TAC 2010
topk = 128                    # dimensions kept per single-sense PPR vector; ADW's is 5000 (see the Scores cell)
coefficient = "pearson"       # of the tests with intervals and the lam curve
n_resamples = 1000            # of every Perm-Both / Boot-Both test and interval
lams = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
n_inputs = 20                 # use only the first n inputs (None: all 100; see "Vector size" for the time)
alpha = 0.05
incomplete = "raise"          # missing cells of the human scores: raise | drop-inputs | drop-systems
seed = 0
output_dir = None             # None: results/shafieibavani/<dataset>/

# %% [markdown]
# # 50 · ShafieiBavani et al., *GRouge*: a WordNet personalized-PageRank semantic ROUGE, with proper statistics
#
# GRouge credits a reference n-gram not only when the summary contains it (ROUGE) but also by the semantic
# similarity of the n-gram to the whole summary: both are disambiguated against each other on WordNet, turned
# into personalized-PageRank vectors and compared by Weighted Overlap; `lam` weighs the two (the paper: 0.5).
# The implementation (`metaeval.grouge`) follows Pilehvar et al.'s ADW code, which the paper uses: stopwords
# never enter a semantic signature (a stopword-only n-gram counts lexically only), senses are aligned by
# cosine on the top 500 dimensions, text vectors are untruncated means; its docstring lists each step with
# its source and the remaining differences (no gloss relations, no POS tagger).
# The paper reports, on TAC 2011 AESOP (licensed), system-level correlations of ROUGE, ROUGE-WE and GRouge with
# human scores (Tables 4.1-4.3) and Williams tests of GRouge against ROUGE. This notebook computes the same
# tables on the embedded data, then every cell's comparison by Williams, Perm-Both and Boot-Both at system and
# summary level, and paired tests of each `lam` against ROUGE.
#
# **Paper.** E. ShafieiBavani, M. Ebrahimi, R. Wong and F. Chen (2017). *A Semantically Motivated Approach to
# Compute ROUGE Scores.* Technical report UNSW-CSE-TR-201706, arXiv:1710.07441,
# https://doi.org/10.48550/arXiv.1710.07441. ADW: M. T. Pilehvar, D. Jurgens and R. Navigli (2013), ACL,
# https://aclanthology.org/P13-1132, code https://github.com/pilehvar/ADW. Statistics: Deutsch, Dror & Roth
# (2021), TACL 9, 1132-1146, https://doi.org/10.1162/tacl_a_00417; Williams test as in Graham (2015),
# https://aclanthology.org/D15-1013.

# %%
import importlib.util

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from metaeval import grouge
from metaeval import shafieibavani as sb
from metaeval.datasets import load as load_dataset
from metaeval.data.scoring import rouge_matrices
from metaeval.run.session import start

probe = load_dataset(dataset)
all_humans = list(getattr(probe, "human_scores", []) or [])
if humans is None:
    chosen = [h for h in all_humans if h.split(".")[0] == annotators] or all_humans
else:
    chosen = list(humans)
if human is None:
    human = getattr(probe, "default_human", None) or chosen[0]
if human not in chosen:
    chosen = [human] + chosen
nb = start("shafieibavani", dataset, output_dir=output_dir, seed=seed, texts=True, scores=chosen,
           incomplete=incomplete, purpose="the GRouge analysis (it scores the summaries with ROUGE and GRouge)",
           quiet_rouge=True)
ds, out, rng = nb.dataset, nb.out, nb.rng
display_name = ds.display_name  # the dataset's names (dataset.yml), not the generic defaults
probe_inputs = list(ds.inputs)
if n_inputs is not None:
    ds = ds.subset(inputs=list(ds.inputs)[:n_inputs])
H = {h: ds.matrix(h) for h in chosen}
Z = H[human]
n_refs = sorted({len(r) for r in ds.texts["references"]})
print(f"{ds.name}: {len(ds.systems)} systems x {len(ds.inputs)} inputs, {'/'.join(map(str, n_refs))} "
      f"reference(s) per input; human scores: {', '.join(chosen)}")

# %% [markdown]
# ## Scores
#
# GRouge's lexical part is ROUGE-N recall with stemming and stopwords kept (the paper's setting), so the ROUGE
# rows are exactly GRouge at `lam = 1`. ROUGE-WE comes from `metaeval.embeddings` when that module is
# installed (SummEval's `rouge_n_we` rule, with the ROUGE rows' tokens and stemming); otherwise its rows are left
# out and the note below says so. Every row is labelled by its signature in `signatures.csv`.
#
# **Vector size.** ADW keeps 5000 dimensions per single-sense vector (the library's default). Here `topk`
# defaults to 128 so that the default run stays within the compendium's time budget: with untruncated text
# vectors, Sem costs time in proportion to `topk` (measured in `benchmarks/REPORT.md`). Truncation lowers the
# scores almost uniformly: on 208 SummEval summaries x 11 references, top-5000 is +0.02 to +0.03 above top-128
# (summary Spearman >= .996, system Kendall >= .98 between the two); exact vectors are +0.06 to +0.10 above it
# on 16 summaries (Spearman >= .956). Run `metaeval run 50 -p topk 5000` for ADW's size.
# For the same reason the default run scores the first `n_inputs = 20` inputs (320 SummEval summaries, 480
# REALSumm ones). Computing them would cost most of its time: the 30-step PPR vectors of the senses its words
# have (8.5k senses for 20 SummEval inputs, 17k for all 100, 5-14 ms each; a forward-push approximation is not
# faster at the same accuracy, `benchmarks/REPORT.md`). As ADW ships precomputed signatures, the compendium
# ships the top-128 vectors of the 11.6k senses of this default run on both datasets (`data/wordnet30/ppr/`,
# bit-identical to computed ones, provenance in `data/wordnet30/PROVENANCE.md`); other senses and other
# `topk` above 128 are computed and cached. The semantic scoring itself costs about 70 ms per SummEval summary
# at `topk = 128`. `metaeval run 50 -p n_inputs None` runs the whole dataset (about 4 CPU minutes per dataset
# cold, estimated from these rates).

# %%
options = grouge.GRougeOptions(topk=topk)
parts = sb.grouge_parts(ds, measures, options=options, progress=True)  # PPR vectors of new senses, then scoring
g_names = [m.replace("grouge", "GRouge").replace("GRouge-su", "GRouge-SU") for m in measures]
r_names = [m.replace("grouge", "ROUGE").replace("ROUGE-su", "ROUGE-SU") for m in measures]
r_sigs = [sb.rouge_counterpart(m) for m in measures]
rouge = rouge_matrices(ds, r_sigs)  # one matrix per variant, in order
metrics: dict[str, np.ndarray] = dict(zip(r_names, rouge.values()))
signature = dict(zip(r_names, r_sigs))
we_note = ""
if importlib.util.find_spec("metaeval.metrics.embeddings") is not None:
    try:
        from metaeval import embeddings

        we = embeddings.score(ds.texts["summary"].tolist(), [list(r) for r in ds.texts["references"]],
                              [f"rouge-we-{n}|stem:yes|stop:no|stat:R" for n in ("1", "2", "su4")])
        for col, name in zip(we.columns, ["ROUGE-WE-1", "ROUGE-WE-2", "ROUGE-WE-SU4"]):
            metrics[name] = np.asarray(we[col], dtype=float).reshape(len(ds.systems), len(ds.inputs))
            signature[name] = str(col)  # the embeddings module's own signature of the variant it computed
    except Exception as exc:  # noqa: BLE001 - an optional comparison must not stop the GRouge analysis
        we_note = f"ROUGE-WE rows skipped: metaeval.embeddings failed ({type(exc).__name__}: {exc})."
else:
    we_note = "ROUGE-WE rows skipped: metaeval.embeddings is not installed in this version of the library."
for m, g, sig in zip(measures, g_names, sb.signatures(measures, lam=lam, options=options)):
    metrics[g] = sb.at_lam(parts[m], lam)
    signature[g] = sig
nb.save_table(pd.DataFrame({"row": list(signature), "signature": list(signature.values())}), "signatures.csv",
              index=False)
if we_note:
    print(we_note)
pd.Series(signature, name="signature").to_frame()

# %% [markdown]
# ## Tables 4.1-4.3 analogue: system-level correlations
#
# Pearson, Spearman and Kendall correlations of the system means with each human score; `*` marks the highest
# value of each column (a description, not a test: the tests follow).

# %%
table = sb.correlation_table(metrics, H, level="system")
flat = table.copy()
flat.columns = [f"{display_name(h)} {c}" for h, c in table.columns]
nb.save_table(flat, "tables4_correlations.csv", float_format="%.4f")
shown = table.copy().astype(object)
for col, best in table.attrs["best"].items():
    for name in table.index:
        shown.loc[name, col] = f"{table.loc[name, col]:.3f}{'*' if name == best else ''}"
shown.columns = pd.MultiIndex.from_tuples([(display_name(h), c) for h, c in table.columns])
shown

# %% [markdown]
# ## Every cell: GRouge against ROUGE by Williams (the paper), Perm-Both and Boot-Both (Deutsch et al.)
#
# For each human score x coefficient x variant, at system and summary level: one-sided tests of H1:
# r(GRouge) > r(ROUGE). The `*_holm` columns adjust each test's p-values over all cells of the table (Holm),
# for statements about the table as a whole.

# %%
pairs = list(zip(g_names, r_names))
cells = sb.all_cells(pairs, metrics, H, n_resamples=n_resamples, rng=rng)
nb.save_table(cells, "all_cells.csv", index=False, float_format="%.4f")
cells.round(4)

# %% [markdown]
# ## The chosen human score, with intervals
#
# Both correlations with 95% Boot-Both intervals for the human score chosen above (`human`), and the same three
# one-sided tests.

# %%
comp = sb.comparison_table(pairs, metrics, Z, coefficient=coefficient, n_resamples=n_resamples, rng=rng)
nb.save_table(comp, "williams_perm_boot.csv", index=False, float_format="%.4f")
comp.round(4)

# %% [markdown]
# ## What would tuning lam on the evaluation data buy?
#
# The correlation of GRouge(lam) = lam · ROUGE + (1 − lam) · semantic part, with its Boot-Both interval (the same
# resamples for every lam), at system level; `lam = 1` is ROUGE. Each lam is compared with `lam = 1` by paired
# two-sided Perm-Both and Boot-Both tests (`lam_tests.csv`); the bands alone are not a comparison.

# %%
curves, tests = [], []
for m, g in zip(measures, g_names):
    c = sb.lam_curve(parts[m], Z, lams, coefficient=coefficient, n_resamples=n_resamples, rng=seed)
    c.insert(0, "metric", g)
    curves.append(c)
    t = sb.lam_tests(parts[m], Z, lams, coefficient=coefficient, n_resamples=n_resamples, rng=seed)
    t.insert(0, "metric", g)
    tests.append(t)
curve = pd.concat(curves, ignore_index=True)
lam_test = pd.concat(tests, ignore_index=True)
nb.save_table(curve, "lam_curve.csv", index=False, float_format="%.4f")
nb.save_table(lam_test, "lam_tests.csv", index=False, float_format="%.4f")
fig, ax = plt.subplots(figsize=(7, 4))
# intervals as error bars dodged sideways, one colour per metric: three overlapping filled bands blurred into grey
groups = list(curve.groupby("metric", sort=False))
step = float(np.min(np.diff(np.unique(curve["lam"])))) if curve["lam"].nunique() > 1 else 0.1
for k, (g, c) in enumerate(groups):
    shift = (k - (len(groups) - 1) / 2) * step * 0.18
    ax.errorbar(c["lam"] + shift, c["r"], yerr=[c["r"] - c["ci_low"], c["ci_high"] - c["r"]], marker="o",
                markersize=4, capsize=2, lw=1.2, elinewidth=0.9, label=g)
ax.axvline(lam, color="grey", lw=0.8, ls="--", label=f"lam of the other sections ({lam:g})")
ax.set_xlabel("lam (weight of the lexical match; 1 = ROUGE)")
ax.set_ylabel(f"system-level {coefficient}\nwith {display_name(human)}")
ax.set_title(f"GRouge against lam on {ds.name} (95% Boot-Both intervals)")
ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)  # outside the intervals, which span the axes
fig.tight_layout()
nb.save_figure(fig, "lam_curve")
plt.show()
lam_test.round(4)

# %% [markdown]
# ## Conclusions (generated from the numbers above)

# %%
lines = []
n_cells_level = {lv: len(c) for lv, c in cells.groupby("level", sort=False)}
lines.append(
    f"**The data against the paper's.** {nb.md(ds.name)}: {len(ds.systems)} systems x {len(ds.inputs)} inputs"
    + (f" (the first {n_inputs} of the dataset's {len(probe_inputs)})" if len(ds.inputs) < len(probe_inputs) else "")
    + f", {'/'.join(map(str, n_refs))} reference(s) per input; GRouge at top-{topk} PPR vectors (ADW: 5000). "
    f"The paper's TAC 2011 AESOP data: 51 systems, 44 "
    "topics with two multi-document sets each (initial and update), 4 references per set. SummEval and REALSumm "
    "are single-document CNN/DailyMail summaries: fewer systems (so fewer points at system level) and "
    "shorter, mostly extractive summaries, where a semantic match has less to add to a lexical one.")
for level, c in cells.groupby("level", sort=False):
    above = c[c["delta"] > 0]
    lines.append(
        f"**{level.capitalize()} level, every cell.** GRouge (lam = {lam}) has the higher correlation in "
        f"{len(above)} of {len(c)} cells ({c['human'].nunique()} human score(s) x {c['coefficient'].nunique()} "
        f"coefficients x {c['metric'].nunique()} variants); this count describes the table and is not itself a "
        f"test (the cells share data). |Δ| is at most {c['delta'].abs().max():.3f} (median "
        f"{c['delta'].abs().median():.3f}).")
    for test, label in (("williams", "Williams"), ("perm_both", "Perm-Both"), ("boot_both", "Boot-Both")):
        raw = c[c[f"p_{test}"] < alpha]
        adj = c[c[f"p_{test}_holm"] < alpha]
        lines.append(
            f"- {label} (one-sided, H1: GRouge > ROUGE): {len(raw)} of {len(c)} cells have p < {alpha} before "
            f"any correction (about {alpha * len(c):.1f} would by chance if no cell differed), {len(adj)} after "
            f"Holm's adjustment over all {len(cells)} cells of the table.")
        for _, row in adj.iterrows():
            lines.append(
                f"  - {row['metric']} vs {row['baseline']}, {nb.md(display_name(row['human']))}, {row['coefficient']}: "
                f"r = {row['r_metric']:.3f} vs {row['r_baseline']:.3f}, p = {row[f'p_{test}']:.3g} "
                f"(Holm-adjusted {row[f'p_{test}_holm']:.3g}).")
sys_cells = cells[cells["level"] == "system"]
n_all_three = int(((sys_cells["p_williams_holm"] < alpha) & (sys_cells["p_perm_both_holm"] < alpha)
                   & (sys_cells["p_boot_both_holm"] < alpha)).sum())
lines.append(
    f"The paper reports every GRouge variant significantly better than ROUGE by Williams' test on TAC 2011. "
    f"Here {n_all_three} of {len(sys_cells)} system-level cells are significant by all three tests after Holm's "
    f"adjustment; a cell that is not significant is not shown to be equal, only not shown to differ.")
for g, t in lam_test.groupby("metric", sort=False):
    rouge_r = t.loc[t["lam"] == 1.0, "r"]
    t = t[t["lam"] != 1.0]
    best = t.loc[t["r"].idxmax()]
    at_paper = t.loc[(t["lam"] - lam).abs().idxmin()]
    # the best lam includes lam = 1 (ROUGE itself): when no lam < 1 beats it, the sentence says so
    if len(rouge_r) and rouge_r.iloc[0] >= best["r"]:
        best_text = (f"the best lam on this data is 1.0, ROUGE itself (r = {rouge_r.iloc[0]:.4f}); the best lam < 1 "
                     f"is {best['lam']:.1f} (r = {best['r']:.4f}, Δ = {best['delta']:+.4f})")
    else:
        best_text = (f"the best lam on this data is {best['lam']:.1f} (r = {best['r']:.3f}, Δ = {best['delta']:+.3f} "
                     "against ROUGE, lam = 1)")
    lines.append(
        f"- {g} ({coefficient} with {nb.md(display_name(human))}, system level): {best_text}; paired "
        f"two-sided tests of that lam against lam = 1: Perm-Both p = {best['p_perm_both']:.3g}, Boot-Both p = "
        f"{best['p_boot_both']:.3g} (Holm over the {len(t)} lams tested: {best['p_perm_both_holm']:.3g} / "
        f"{best['p_boot_both_holm']:.3g}); at the paper's lam = {at_paper['lam']:.1f}: Δ = {at_paper['delta']:+.3f}, "
        f"p = {at_paper['p_perm_both']:.3g} / {at_paper['p_boot_both']:.3g}. "
        + (("Tuning lam on this data gives a difference from ROUGE that survives the adjustment"
            + (": that lam is *worse* than ROUGE." if best["delta"] < 0 else "."))
           if min(best["p_perm_both_holm"], best["p_boot_both_holm"]) < alpha else
           "No lam differs from ROUGE after the adjustment for trying several lams (this does not show that "
           "they are equal)."))
if we_note:
    lines.append(we_note)
nb.report("\n".join(lines), "conclusions.md")
