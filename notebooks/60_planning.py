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
#     expected_seconds: {summeval: 57, realsumm: 60}
#     main_table: metric_power.csv
#     paper: planning
# ---

# %% tags=["parameters"]
dataset = "summeval"  # the pilot study: an embedded dataset or the path of your own
metric_x = "qa-eval.f1"  # metric expected to correlate better (a dataset without it: its own 1st non-ROUGE metric)
metric_y = None  # the one it is compared with; None: ROUGE-2 (recall on recall-oriented datasets, F1 otherwise)
human = None  # human score; None: each dataset's default
direction = "pilot"  # pilot: at each level X is the one of the two that correlates better on the pilot; fixed
levels = ["system", "summary"]  # correlation levels of the metric comparison
test = "perm-both"  # perm-both | perm-systems | perm-inputs | boot-both | boot-systems | boot-inputs | williams
coefficient = "pearson"
systems_grid = [5, 10, 16, 24]  # planned numbers of systems
inputs_grid = [25, 50, 100, 200, 400]  # planned numbers of documents (inputs)
planned_system_correlation = [0.9, 0.75]  # planned effect without pilot data: population r of X and Y, system level
planned_summary_correlation = [0.4, 0.3]  # ... and within one input (summary level)
pair_sizes = [10, 20, 30, 50, 75, 100, 150, 200, 300]  # planned numbers of documents to separate two systems
pair_test = "permutation"  # permutation (sign flips, valid at every size) | paired-bootstrap | t-test
target_power = 0.8
alpha = 0.05
n_trials = 200  # simulated studies per design of the metric comparison
n_resamples = 200  # permutations / resamples per test of the metric comparison
pair_trials = 1000  # simulated studies per size of the system comparison
pair_resamples = 1000  # sign flips / bootstrap resamples per system comparison test (all 2^n flips when fewer)
seed = 0
incomplete = "raise"  # missing cells of the pilot's scores: raise | drop-inputs | drop-systems
output_dir = None  # None: results/planning/<dataset>/

# %% [markdown]
# # 60 · Planning the next human evaluation: how many systems and documents?
#
# The other notebooks ask what a finished study can conclude. This one asks the question before the study:
# **how large must a human evaluation be** for its tests to have a good chance (the *power*, here
# `target_power`) of detecting a difference that is really there?
#
# Two differences matter when designing a study:
#
# 1. between two **metrics**: does metric X correlate with the human judgments more strongly than metric Y?
#    The answer depends on the number of systems *and* the number of documents judged;
# 2. between two **systems**: are their human scores different? This depends on the number of documents.
#
# Power is estimated by simulation (`metaeval.planning`): many studies of the planned size are drawn from a
# pilot (an existing dataset: its systems and documents are resampled, without replacement when the planned
# size is smaller than the pilot's, with replacement from the pilot's size on), the test is run on each, and
# the share of studies in which it rejects is the power. Without pilot data, the studies are drawn from a
# synthetic model with a *planned* effect (two population correlations). Every sentence of interpretation below
# is generated from the numbers of this run.

# %%
import itertools

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

import metaeval
from metaeval import planning
from metaeval.data.defaults import default_metric
from metaeval.run.session import start

def baseline_of(ds):
    return metric_y or default_metric(ds, None, param="metric_y", measures=("rouge-2",))


pilot = metaeval.datasets.load(dataset)
metric_x = default_metric(pilot, metric_x, paper="qa-eval.f1", param="metric_x", exclude=[baseline_of(pilot)],
                          own_first=True)
nb = start("planning", dataset, output_dir=output_dir, seed=seed, human=human,
           scores=[metric_x, baseline_of(pilot)], purpose="the planner's pilot", incomplete=incomplete)
out, rng = nb.out, nb.rng
# one pilot per run (run-all plans on every embedded dataset); the tables carry a dataset column
pilots = {pilot.name: (nb.dataset, nb.human)}
designs = list(itertools.product(systems_grid, inputs_grid))
nb.report("\n".join(
    f"* pilot **{nb.md(name)}**: {ds.shape[0]} systems × {ds.shape[1]} documents; X = "
    f"{nb.md(ds.display_name(metric_x))}, Y = {nb.md(ds.display_name(baseline_of(ds)))}, human = "
    f"{nb.md(ds.display_name(h))}"
    for name, (ds, h) in pilots.items()))

# %% [markdown]
# ## 1 · Comparing two metrics: power over (systems, documents), from pilot data
#
# Each cell is a planned study with that many systems and documents; its colour is the power of `test` to find
# that X correlates more strongly than Y, taking the pilot's own difference in correlation as the true one.

# %%
rows = []
for name, (ds, h) in pilots.items():
    X, Y, Z = ds.matrix(metric_x), ds.matrix(baseline_of(ds)), ds.matrix(h)
    for level in levels:
        observed = float(metaeval.correlation.level_corr(X, Z, level, coefficient)
                         - metaeval.correlation.level_corr(Y, Z, level, coefficient))
        names = (metric_x, baseline_of(ds))
        first, second = X, Y
        if direction == "pilot" and observed < 0:
            names, first, second, observed = names[::-1], Y, X, -observed
        table = planning.metric_comparison_power(first, second, Z, sizes=designs, test=test, level=level,
                                                 coefficient=coefficient, alpha=alpha, n_trials=n_trials,
                                                 n_resamples=n_resamples, rng=rng)
        rows.append(table.assign(dataset=name, level=level, x=names[0], y=names[1], observed_difference=observed))
metric_power = pd.concat(rows, ignore_index=True)
nb.save_table(metric_power, "metric_power.csv", index=False, float_format="%.4f")


def surfaces(frame, title, name):
    panels = list(frame.groupby(["dataset", "level"], sort=False))
    fig, axes = plt.subplots(1, len(panels), figsize=(3.6 * len(panels) + 1, 3.4), squeeze=False)
    for ax, ((dname, level), block) in zip(axes[0], panels):
        grid = block.pivot(index="n_systems", columns="n_inputs", values="power").sort_index(ascending=False)
        sns.heatmap(grid, vmin=0, vmax=1, cmap="viridis", annot=True, fmt=".2f", annot_kws={"fontsize": 7},
                    cbar=ax is axes[0][-1], cbar_kws={"label": "power"}, ax=ax)
        ax.set_xlabel("documents")
        ax.set_ylabel("systems")
        ax.set_title(f"{dname}, {level} level")
    fig.suptitle(title)
    fig.tight_layout()
    nb.save_figure(fig, name)
    plt.show()


surfaces(metric_power, f"Power of {test} to find r(X) > r(Y) at alpha = {alpha}", "metric_power")


def smallest_design(block):
    """The design reaching the target with the fewest judgments (systems x documents), or None; only designs where
    the test's measured type-I error is within alpha's 99.9 % binomial interval (``calibrated``) count."""
    ok = block[(block["power"] >= target_power) & block["calibrated"].astype(bool)]
    if ok.empty:
        return None
    return ok.assign(cells=ok["n_systems"] * ok["n_inputs"]).sort_values(["cells", "n_systems"]).iloc[0]


def doubling_gain(block, n, m):
    """Power gained by doubling the documents and by doubling the systems from the design (n, m), if on the grid."""
    power = block.set_index(["n_systems", "n_inputs"])["power"]
    base = power.get((n, m))
    more_docs = power.get((n, 2 * m))
    more_sys = power.get((2 * n, m))
    return base, more_docs, more_sys


def size_note(block):
    """What the test's measured type-I error says of the power table (empty for the exact permutation tests)."""
    if block["type1"].isna().all():
        return ""
    bad = block[~block["calibrated"].astype(bool)]
    text = (f" {test}'s type-I error, measured at every design on data made null (X and Y exchanged in a random half "
            f"of the cells, {n_trials} studies each), is at most {block['type1'].max():.3f}")
    if bad.empty:
        return text + ", within alpha's 99.9 % binomial interval everywhere."
    return (text + f"; it is above alpha's 99.9 % binomial interval at {len(bad)} of {len(block)} designs (e.g. "
            f"{int(bad.n_systems.iloc[0])} × {int(bad.n_inputs.iloc[0])}: {bad.type1.iloc[0]:.3f}), whose power "
            "is inflated and which are never recommended.")


lines = []
for (dname, level), block in metric_power.groupby(["dataset", "level"], sort=False):
    ds, h = pilots[dname]
    n0, m0 = ds.shape
    diff = block["observed_difference"].iloc[0]
    best = smallest_design(block)
    at_pilot = block[(block.n_systems == min(systems_grid, key=lambda s: abs(s - n0)))
                     & (block.n_inputs == min(inputs_grid, key=lambda s: abs(s - m0)))]
    x_name, y_name = nb.md(ds.display_name(block["x"].iloc[0])), nb.md(ds.display_name(block["y"].iloc[0]))
    text = (f"* **{nb.md(dname)}, {level} level**, X = {x_name}, Y = {y_name} (pilot difference r(X) - r(Y) = "
            f"{diff:+.3f}): ")
    if diff <= 0:
        text += ("X does not correlate better than Y on this pilot, so its power stays near alpha or below "
                 f"(largest on the grid: {block['power'].max():.2f}); no study size can be planned for an "
                 "effect the pilot does not show.")
    elif best is None:
        text += (f"no design on the grid reaches {target_power:.0%} power (largest: {block['power'].max():.2f} with "
                 f"{int(block.loc[block['power'].idxmax(), 'n_systems'])} systems × "
                 f"{int(block.loc[block['power'].idxmax(), 'n_inputs'])} documents).")
    else:
        text += (f"the smallest design reaching {target_power:.0%} power is {int(best.n_systems)} systems × "
                 f"{int(best.n_inputs)} documents ({int(best.n_systems * best.n_inputs)} judged summaries, power "
                 f"{best.power:.2f}).")
    if not at_pilot.empty:
        n, m = int(at_pilot.n_systems.iloc[0]), int(at_pilot.n_inputs.iloc[0])
        base, more_docs, more_sys = doubling_gain(block, n, m)
        text += f" At the grid design nearest the pilot's size ({n} × {m}) the power is {base:.2f}"
        if more_docs is not None and more_sys is not None:
            better = "documents" if more_docs > more_sys else "systems"
            # two Monte-Carlo estimates over n_trials each: a difference within ~2 of its standard errors is noise
            noise = 2 * np.sqrt((more_docs * (1 - more_docs) + more_sys * (1 - more_sys)) / n_trials)
            text += (f"; doubling the documents gives {more_docs:.2f}, doubling the systems {more_sys:.2f}: "
                     + (f"for this comparison, extra judgments buy more power as extra {better}."
                        if abs(more_docs - more_sys) > noise else
                        f"within the simulation's error (±{noise:.2f}) of each other, so this run cannot say "
                        "which buys more power."))
        else:
            text += "."
    lines.append(text + size_note(block))
nb.report("\n".join(lines), "metric_power.md")

# %% [markdown]
# ## 2 · Comparing two metrics without a pilot: a planned effect
#
# When no pilot exists, the effect must be planned: here X correlates with the humans' true system quality at
# `planned_system_correlation[0]` and Y at `[1]`, and within one document at `planned_summary_correlation`.
# The studies are drawn from the synthetic model of `metaeval.datasets.synthetic` (with those two metrics).

# %%
effect = planning.PlannedEffect(system_correlation=tuple(planned_system_correlation),
                                summary_correlation=tuple(planned_summary_correlation))
rows = []
for level in levels:
    table = planning.planned_comparison_power(effect, sizes=designs, test=test, level=level, coefficient=coefficient,
                                              alpha=alpha, n_trials=n_trials, n_resamples=n_resamples, rng=rng)
    rows.append(table.assign(dataset="planned effect", level=level))
planned_power = pd.concat(rows, ignore_index=True)
nb.save_table(planned_power, "hypothesised_power.csv", index=False, float_format="%.4f")
surfaces(planned_power, f"Planned effect: system r {planned_system_correlation[0]} vs {planned_system_correlation[1]}, "
         f"summary r {planned_summary_correlation[0]} vs {planned_summary_correlation[1]}", "hypothesised_power")
lines = []
for level, block in planned_power.groupby("level", sort=False):
    best = smallest_design(block)
    gap = block["r_x"].iloc[-1] - block["r_y"].iloc[-1]
    if best is None:
        lines.append(f"* {level} level (population difference {gap:.3f} at {inputs_grid[-1]} documents): no design on "
                     f"the grid reaches {target_power:.0%} power; the largest power is {block['power'].max():.2f}.")
    else:
        lines.append(f"* {level} level (population difference {gap:.3f} at {inputs_grid[-1]} documents): "
                     f"{int(best.n_systems)} systems × {int(best.n_inputs)} documents reach {best.power:.2f}.")
    lines[-1] += size_note(block)
nb.report("\n".join(lines), "hypothesised_power.md")

# %% [markdown]
# ## 3 · Separating two systems: documents needed, by size of the difference
#
# For every pair of systems of a pilot, the power of a `pair_test` on their per-document human scores, when
# `size` documents are judged (drawn with replacement from the pilot's documents: a new study's documents come
# from the same population). The pairs are grouped by quintile of their difference in mean human score.
# The default test flips the signs of the per-document differences (exact with all 2^n flips for small n), so
# its type-I error is at most alpha at every size; the paired bootstrap rejects too often with few documents
# (about 0.16 instead of 0.05 at 5 documents), and for it and the t-test the tables report the type-I error
# measured at each size (`type1`); sizes where it is above alpha's 99.9% binomial interval are never recommended.

# %%
pair_tables, needs = [], []
for name, (ds, h) in pilots.items():
    S = ds.matrix(h)
    table = planning.system_pairs_power(S, sizes=pair_sizes, test=pair_test, alpha=alpha, n_trials=pair_trials,
                                        n_resamples=pair_resamples, rng=rng, systems=ds.systems)
    pair_tables.append(table.assign(dataset=name))
    need = planning.required_size(table, target=target_power, by=["system_a", "system_b"], n_trials=pair_trials)
    need = need.merge(table[["system_a", "system_b", "difference", "difference_bin"]].drop_duplicates(),
                      on=["system_a", "system_b"])
    needs.append(need.assign(dataset=name))
pairs = pd.concat(pair_tables, ignore_index=True)
need = pd.concat(needs, ignore_index=True)
nb.save_table(pairs, "pair_power.csv", index=False, float_format="%.4f")
nb.save_table(need, "pair_documents_needed.csv", index=False, float_format="%.4f")
binned = pd.concat([planning.binned_power(t).assign(dataset=n) for n, t in pairs.groupby("dataset", sort=False)])
labels = {b: f"Q{b}" + (" (smallest)" if b == 1 else " (largest)" if b == binned.difference_bin.max() else "")
          for b in sorted(binned.difference_bin.unique())}
binned["difference quintile"] = binned.difference_bin.map(labels)
panels = list(binned.groupby("dataset", sort=False))
fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels) + 2.6, 4.2), squeeze=False, sharey=True)
colours = sns.color_palette("viridis", n_colors=len(labels))
for ax, (name, block) in zip(axes[0], panels):
    ax.axhline(target_power, color="grey", linestyle="--", linewidth=0.8, label=f"target power {target_power:g}")
    for colour, (b, q) in zip(colours, block.groupby("difference_bin")):
        # the quintile's range of |difference| in the legend, where the reader looks for what a colour means
        ax.plot(q["size"], q["power"], marker="o", color=colour,
                label=f"{labels[b]}: {q.difference_low.iloc[0]:.2f} to {q.difference_high.iloc[0]:.2f}")
    ax.set_title(f"{name}: {pilots[name][0].display_name(pilots[name][1])}", fontsize=10)
    ax.set_xlabel("documents judged")
    ax.legend(title="quintile of |difference|", fontsize=8, title_fontsize=8, loc="upper left",
              bbox_to_anchor=(1.01, 1.0))
axes[0][0].set_ylabel(f"power ({pair_test}, alpha = {alpha})")
fig.suptitle("Separating two systems: mean power of the pairs in each quintile of their difference")
fig.tight_layout()
nb.save_figure(fig, "pair_power")
plt.show()

# %%
lines = []
for name, block in need.groupby("dataset", sort=False):
    ds, h = pilots[name]
    m0 = ds.shape[1]
    total = len(block)
    reached = block[block.reached]
    at_pilot = block[block.required <= m0]
    tab = pairs[pairs["dataset"] == name]
    bad = tab[~tab["calibrated"]]
    if tab["type1"].isna().all():
        lines.append(f"* The {pair_test} test keeps its type-I error at or below alpha = {alpha} at every size (exact "
                     "sign flips); with 5 documents a two-sided test at 0.05 cannot reject at all (smallest p = 2/32).")
    elif len(bad):
        lines.append(f"* The {pair_test} test rejects too often under equal means at "
                     f"{', '.join(str(v) for v in sorted(bad['size'].unique()))} documents (measured type-I error "
                     f"up to {bad['type1'].max():.3f} at alpha = {alpha}); its power there is not counted below.")
    lines.append(f"* **{nb.md(name)}** ({total} pairs of {ds.shape[0]} systems, {nb.md(ds.display_name(h))}): "
                 f"{len(at_pilot)} pairs ({len(at_pilot) / total:.0%}) reach {target_power:.0%} power with at most "
                 f"{m0} documents (the pilot's number), {len(reached)} ({len(reached) / total:.0%}) with at most "
                 f"{max(pair_sizes)}.")
    for b, q in block.groupby("difference_bin"):
        if q.reached.all():
            high = q.high.median()
            upper = f"{high:.0f}" if np.isfinite(high) else f"more than {max(pair_sizes)}"
            detail = (f"median {q.required.median():.0f} documents (medians of the Monte-Carlo bounds: "
                      f"{q.low.median():.0f} to {upper})")
        else:
            detail = f"{int((~q.reached).sum())} of {len(q)} pairs need more than {max(pair_sizes)} documents"
        lines.append(f"  * differences {q.difference.min():.2f}-{q.difference.max():.2f} (quintile {b}): {detail}")
nb.report("\n".join(lines), "pair_documents_needed.md")

# %% [markdown]
# ## 4 · What this means for the next human study

# %%
lines = []
for (dname, level), block in metric_power.groupby(["dataset", "level"], sort=False):
    best = smallest_design(block)
    diff = block["observed_difference"].iloc[0]
    show = pilots[dname][0].display_name
    x_name, y_name = nb.md(show(block["x"].iloc[0])), nb.md(show(block["y"].iloc[0]))
    dname = nb.md(dname)  # quoted in the sentences below
    if diff > 0 and best is not None:
        lines.append(f"* To show that {x_name} beats {y_name} at the {level} level with an effect like {dname}'s "
                     f"({diff:+.3f}), plan at least {int(best.n_systems)} systems × {int(best.n_inputs)} documents "
                     "(the design with the fewest judged summaries on the grid that reaches the target).")
    elif diff > 0:
        lines.append(f"* At the {level} level, {dname}'s effect ({x_name} over {y_name}, {diff:+.3f}) is too small "
                     f"for every design up to {max(systems_grid)} systems × {max(inputs_grid)} documents "
                     f"(best power {block['power'].max():.2f}): only a larger study than the grid's largest, or a "
                     "larger difference between the metrics, could be detected reliably.")
    else:
        lines.append(f"* At the {level} level, {dname} gives no evidence that {x_name} is better "
                     f"(difference {diff:+.3f}); a study powered for it cannot be planned from this pilot.")
for name, block in need.groupby("dataset", sort=False):
    hard = block[~block.reached]
    easy = block[block.reached]
    if len(easy):
        lines.append(f"* On {nb.md(name)}, {len(easy)} of {len(block)} system pairs reach {target_power:.0%} power "
                     "with at "
                     f"most {max(pair_sizes)} documents (if their pilot difference is the true one); every pair whose "
                     f"human scores differ by more than {hard.difference.max() if len(hard) else 0:.2f} is among "
                     f"them, the smallest such difference is {easy.difference.min():.2f}."
                     + (f" The other {len(hard)} pairs (differences {hard.difference.min():.2f}-"
                        f"{hard.difference.max():.2f}) need more documents, or less noise per document (e.g. more "
                        "annotators per summary)." if len(hard) else ""))
    else:
        lines.append(f"* On {nb.md(name)}, no system pair reaches {target_power:.0%} power within {max(pair_sizes)} "
                     "documents.")
nb.report("\n".join(lines), "design_advice.md")
