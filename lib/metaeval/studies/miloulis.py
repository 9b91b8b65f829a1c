"""Miloulis et al., "Learned combinations of ROUGE variants": the analysis as library calls.

The paper scores every summary with 96 ROUGE variants (8 methods x stemming x stopwords x P/R/F, summary
level), BLEU, two centroid metrics and six relaxed word mover's distances, trains deep MLPs on them
(S-ROUGE: one human score; M-ROUGE: all human scores at once; S-/M-CENT: the same on the difference of the
reference and summary centroids; ``MEAN-*``: the mean of the human scores) and ranks all metrics by their
correlation with the human scores, marking those not significantly weaker than any other (Williams).

Here, on SummEval (four expert dimensions, like BioASQ's four measures) and REALSumm (LitePyramid):

* :func:`human_targets`: the human scores of a dataset (experts only when a dataset has several
  annotator groups) and, with several, their mean;
* :func:`features`: the 106 per-summary features (96 ROUGE, BLEU, CENT-C/E, 6 RWMD, exact WMD; cached on
  disk) and the centroid-difference vectors;
* :func:`learned_metrics`: S-/M-/MEAN-ROUGE, S-/M-/MEAN-CENT, ridge and the CV-chosen best single feature
  as out-of-fold predictions (:func:`metaeval.combination.cross_validate`, grouped by input);
* :func:`ranking_table`: Pearson, Spearman, Kendall at one level, sorted by Spearman, with the bullet from
  vectorized pairwise Williams tests (:func:`metaeval.significance.williams_pvalue`);
* :func:`compare`: Perm-Both and Boot-Both (Deutsch et al., 2021) of one metric against another.

Beyond the paper, the out-of-fold protocol is honest (no summary of a test document, and no reference of
it, is seen in training), and ridge regression and the single best variant chosen on the training folds are
the baselines that show whether the MLP buys anything.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import kendalltau, rankdata

from metaeval._io import cache_dir, load_cached, save_cached
from metaeval._version import __version__
from metaeval.data.datasets import DataError, Dataset
from metaeval.data.scoring import rouge_table
from metaeval.metrics.bleu import bleu_signature, sentence_bleu
from metaeval.metrics.combination import cross_validate, mlp_grid, ridge_grid
from metaeval.metrics.embeddings import (
    DEFAULT_EMBEDDINGS,
    Embeddings,
    centroid_difference,
    load,
    parse_variant,
    score,
)
from metaeval.metrics.variants import parse_variant as parse_rouge_variant
from metaeval.metrics.variants import rouge155_variants
from metaeval.stats.correlation import Level, effective_n, level_corr
from metaeval.stats.resampling import percentile_interval
from metaeval.stats.significance import bootstrap_test, permutation_test, williams_pvalue

__all__ = [
    "EMBEDDING_FEATURES",
    "Features",
    "default_humans",
    "human_targets",
    "features",
    "learned_metrics",
    "ranking_table",
    "williams_pvalues",
    "compare",
    "label",
    "options",
    "searches",
    "describe_searches",
    "split_comparison",
    "chosen_configurations",
]

#: The paper's embedding metrics among the features (ROUGE-WE is not one of them).
EMBEDDING_FEATURES = ("cent-c", "cent-e", "rwmd-l-e", "rwmd-r-e", "rwmd-m-e", "rwmd-l-c", "rwmd-r-c", "rwmd-m-c",
                      "wmd")
BLEU = "bleu"
MEAN = "mean"


def default_humans(ds: Dataset) -> list[str]:
    """The dataset's human scores (``ds.human_scores``), only the expert ones if it has experts and others."""
    names = list(ds.human_scores)
    if not names:
        raise DataError(f"dataset {ds.name!r} has no human scores (scores: {', '.join(ds.score_names) or 'none'}); "
                        "name them with human_scores in dataset.yml, or pass human=")
    experts = [n for n in names if n.startswith("expert.")]
    return experts or names


def human_targets(ds: Dataset, human: str | Sequence[str] | None = None) -> dict[str, np.ndarray]:
    """Human score name -> N x M matrix; with several scores, ``"mean"`` (their mean) is added.

    ``human=None`` takes the dataset's human scores (``ds.human_scores``), only the expert ones when the
    dataset has expert and crowd ratings (SummEval: the four expert dimensions, the analogue of BioASQ's four
    measures).
    """
    n_systems, n_inputs = len(ds.systems), len(ds.inputs)
    if n_systems < 3 or n_inputs < 3:
        # every table correlates across systems (summary and system level; the comparisons of both levels)
        raise ValueError(f"dataset {ds.name!r} has {n_systems} systems and {n_inputs} inputs: the study correlates "
                         "at system and summary level, which needs at least 3 systems and 3 inputs; use a dataset "
                         "with at least 3 of each")
    if human is None:
        names = default_humans(ds)
    else:
        names = [human] if isinstance(human, str) else list(human)
        if not names:
            raise ValueError("human must name at least one human score")
    out = {n: ds.matrix(n) for n in names}
    if len(out) > 1:
        if MEAN in out:
            raise ValueError(f"human: a score named {MEAN!r} would collide with the mean of the scores")
        out[MEAN] = np.mean(list(out.values()), axis=0)
    return out


@dataclass(frozen=True)
class Features:
    """Per-summary features of a dataset, rows in the dataset's cell order (systems x inputs, row-major).

    Attributes
    ----------
    frame : DataFrame
        One column per feature, named by signature (96 ROUGE variants, ``"bleu"``, 9 embedding metrics).
    centroid_difference : ndarray (n, d)
        Reference centroid minus summary centroid (mean over references): the input of S-/M-CENT.
    groups : ndarray (n,)
        The input (document) index of each row, for grouped cross-validation.
    bleu_signature : str
    shape : tuple
        (N systems, M inputs): ``frame[c].to_numpy().reshape(shape)`` is a metric matrix.
    """

    frame: pd.DataFrame
    centroid_difference: np.ndarray
    groups: np.ndarray
    bleu_signature: str
    shape: tuple[int, int]

    def matrices(self) -> dict[str, np.ndarray]:
        """Feature signature -> N x M matrix."""
        return {c: self.frame[c].to_numpy(dtype=float).reshape(self.shape) for c in self.frame.columns}


def _texts(ds: Dataset) -> tuple[list[str], list[list[str]]]:
    if ds.texts is None:
        raise ValueError(f"dataset {ds.name!r} has no texts; the Miloulis features score summaries")
    return ds.texts["summary"].tolist(), [list(r) for r in ds.texts["references"]]


def _embedding_scores(summaries, references, emb: Embeddings, cache: bool):
    key = None
    if cache:
        digest = hashlib.sha256()
        digest.update(json.dumps([summaries, references], ensure_ascii=False).encode())
        sigs = [parse_variant(v).signature(emb.name, emb.dim) for v in EMBEDDING_FEATURES]
        digest.update(json.dumps(sigs).encode())
        digest.update(emb.vectors.tobytes()[:4096])  # cheap guard against another file of the same name
        digest.update(f"v={__version__}".encode())
        # no pickle in a cache (anyone who can write to a shared cache folder could run code): parquet + npz
        # + JSON, checked before use (metaeval._io.load_cached)
        key = cache_dir() / "embeddings" / f"{digest.hexdigest()[:32]}.json"
        entry = load_cached(key, what="cached embedding scores",
                            validate=lambda e: _invalid_embedding_entry(e, len(summaries)))
        if entry is not None:
            return entry.frames["scores"], entry.arrays["centroid_difference"]
    frame = score(summaries, references, EMBEDDING_FEATURES, embeddings=emb)
    diff = centroid_difference(summaries, references, embeddings=emb)
    if key is not None:
        save_cached(key, frames={"scores": frame}, arrays={"centroid_difference": diff})
    return frame, diff


def _invalid_embedding_entry(entry, n: int) -> str | None:
    frame, diff = entry.frames.get("scores"), entry.arrays.get("centroid_difference")
    if frame is None or diff is None or len(frame) != n or len(diff) != n:
        return f"it does not hold {n} summaries' scores"
    if list(frame.columns) != list(EMBEDDING_FEATURES) and len(frame.columns) != len(EMBEDDING_FEATURES):
        return "its columns are not the embedding features"
    if not np.isfinite(frame.to_numpy(dtype=float)).all() or not np.isfinite(np.asarray(diff, dtype=float)).all():
        return "it holds values that are not finite"
    return None


def features(ds: Dataset, *, embeddings: str | Embeddings = DEFAULT_EMBEDDINGS, cache: bool = True) -> Features:
    """The paper's per-summary features: 96 ROUGE variants, sentence BLEU, CENT-C/E, 6 RWMD and WMD.

    ROUGE comes from :func:`metaeval.data.scoring.rouge_table` (cached); the embedding metrics from
    :func:`metaeval.embeddings.score` (cached alike, keyed by texts, signatures and library version).
    """
    summaries, references = _texts(ds)
    emb = load(embeddings)
    # sorted by signature as graham.metric_scores asks for them: the same cache entry serves both
    rouge = rouge_table(ds, sorted(rouge155_variants(), key=lambda v: v.signature), cache=cache)
    n_refs = {len(r) for r in references}
    bleu = sentence_bleu(summaries, references)
    emb_frame, diff = _embedding_scores(summaries, references, emb, cache)
    frame = pd.concat(
        [rouge.reset_index(drop=True), pd.DataFrame({BLEU: bleu}), emb_frame.reset_index(drop=True)], axis=1
    )
    if frame.isna().any().any():
        bad = frame.columns[frame.isna().any()].tolist()
        raise ValueError(f"features: NaN values in {bad[:5]} (see the warnings above for the records and why)")
    if np.isnan(diff).any():
        raise ValueError("features: undefined centroids (a text without any word that has a vector)")
    N, M = ds.shape
    groups = np.tile(np.arange(M), N)
    if list(ds.texts.index.get_level_values("input")) != [ds.inputs[g] for g in groups]:  # type: ignore[union-attr]
        raise ValueError(f"dataset {ds.name!r}: texts are not in the systems x inputs cell order of its matrices")
    signature = bleu_signature(min(n_refs))
    if len(n_refs) > 1:
        signature += f" (references per summary: {sorted(n_refs)})"
    return Features(frame, diff, groups, signature, (N, M))


#: ``grid="paper"``: the S-ROUGE search for a dataset with one human score (DUC-2004's HAS: 5 x 512) and with
#: several (BioASQ's four measures: 5 x 256), and the M-ROUGE search (4 x 256); see
#: :data:`metaeval.combination.PAPER_GRIDS`.
PAPER_PRESET = {"single": "paper-duc", "several": "paper-bioasq", "multitask": "paper-multitask"}
SPLITS = ("grouped", "random")


def searches(grid: Any, n_targets: int) -> dict[str, Any]:
    """The MLP searches of each learned metric and ridge's penalties for a ``grid`` of :func:`learned_metrics`.

    ``grid="paper"``: S-ROUGE with the paper's architecture for the number of human scores (one: DUC-2004's
    5 x 512; several: BioASQ's 5 x 256), M-ROUGE with 4 x 256, an L2 search each; no centroid networks
    (None: the paper's CENT architectures are not part of the preset, and the default run has the small
    ones). Any other ``grid`` (a
    name of :func:`metaeval.combination.mlp_grid` or a list of configurations) serves every network, except
    that with ``"one"`` (the default) and ``"small"`` the centroid networks take the 3 x 64 configuration
    without a search. Ridge
    always gets as many penalties as S-ROUGE gets configurations (the same tuning budget).

    Examples
    --------
    >>> s = searches("paper", 4)
    >>> s["S-ROUGE"], s["M-ROUGE"], s["S-CENT"], [p["alpha"] for p in s["ridge"]]
    ('paper-bioasq', 'paper-multitask', None, [1.0, 10.0, 100.0])
    >>> searches("paper", 1)["S-ROUGE"], [p["alpha"] for p in searches("small", 1)["ridge"]]
    ('paper-duc', [10.0, 100.0])
    >>> s = searches("one", 4)
    >>> s["S-ROUGE"], s["S-CENT"], [p["alpha"] for p in s["ridge"]]
    ('one', ({'depth': 3, 'width': 64, 'alpha': 0.01, 'early_stopping': True, 'patience': 5},), [10.0])
    """
    if isinstance(grid, str) and grid == "paper":
        s_grid: Any = PAPER_PRESET["several" if n_targets > 1 else "single"]
        out = {"S-ROUGE": s_grid, "M-ROUGE": PAPER_PRESET["multitask"], "S-CENT": None, "M-CENT": None}
    else:
        s_grid = grid
        out = dict.fromkeys(("S-ROUGE", "M-ROUGE", "S-CENT", "M-CENT"), grid)
        if isinstance(grid, str) and grid in ("one", "small"):
            # the small search chose 3 x 64 for the centroid networks in 68 of 70 outer folds (SummEval and
            # REALSumm); fixing it saves their inner search, which pays for the random split in the default run
            out["S-CENT"] = out["M-CENT"] = (dict(mlp_grid(grid)[-1]),)
    size = len(mlp_grid(s_grid)) if isinstance(s_grid, str) else len(list(s_grid))
    out["ridge"] = ridge_grid(size)
    return out


def describe_searches(search: Mapping[str, Any], *, folds: int, inner_folds: int) -> str:
    """One Markdown sentence per learned model naming the search it used (from :func:`searches`).

    Examples
    --------
    >>> print(describe_searches(searches("small", 4), folds=10, inner_folds=2))  # doctest: +NORMALIZE_WHITESPACE
    Search (inner grouped CV with 2 folds in each of 10 outer folds, the configuration with the lowest mean
    squared error): S-ROUGE / MEAN-ROUGE: 2 configurations (1 x 64, L2 0.01; 3 x 64, L2 0.01), early
    stopping (patience 10 epochs); M-ROUGE: the same; S-CENT / M-CENT: 1 configuration, no search (3 x 64, L2
    0.01), early stopping (patience 10 epochs); ridge: 2 penalties (10, 100).
    >>> print(describe_searches(searches("one", 4), folds=5, inner_folds=2))  # doctest: +NORMALIZE_WHITESPACE
    Models (5 outer folds, no hyper-parameter search): S-ROUGE / MEAN-ROUGE: 1 configuration, no search
    (3 x 64, L2 0.01), early stopping (patience 5 epochs); M-ROUGE: the same; S-CENT / M-CENT: the same; ridge:
    1 penalty (10).
    """
    def text(grid: Any) -> str:
        configs = mlp_grid(grid) if isinstance(grid, str) else [dict(p) for p in grid]
        parts = "; ".join(f"{int(p['depth'])} x {int(p['width'])}, L2 {p['alpha']:g}" for p in configs)
        name = f"`{grid}`: " if isinstance(grid, str) and grid.startswith("paper") else ""
        stop = ", early stopping" if all(p.get("early_stopping", True) for p in configs) else ""
        patience = {int(p.get("patience", 10)) for p in configs}
        stop += f" (patience {patience.pop()} epochs)" if stop and len(patience) == 1 else ""
        if len(configs) == 1:
            return f"{name}1 configuration, no search ({parts}){stop}"
        return f"{name}{len(configs)} configurations ({parts}){stop}"

    s_text = text(search["S-ROUGE"])
    parts = [f"S-ROUGE / MEAN-ROUGE: {s_text}"]
    for key, label_ in (("M-ROUGE", "M-ROUGE"), ("S-CENT", "S-CENT / M-CENT")):
        if search[key] is None:
            parts.append(f"{label_}: not run")
            continue
        t = text(search[key])
        parts.append(f"{label_}: {'the same' if t == s_text else t}")
    alphas = ", ".join(f"{p['alpha']:g}" for p in search["ridge"])
    n_r = len(search["ridge"])
    parts.append(f"ridge: {n_r} {'penalty' if n_r == 1 else 'penalties'} ({alphas})")
    if n_r == 1:  # ridge gets as many penalties as S-ROUGE configurations: one means no search anywhere
        return f"Models ({folds} outer folds, no hyper-parameter search): " + "; ".join(parts) + "."
    return (f"Search (inner grouped CV with {inner_folds} folds in each of {folds} outer folds, the configuration "
            f"with the lowest mean squared error): " + "; ".join(parts) + ".")


def learned_metrics(
    feats: Features,
    targets: Mapping[str, np.ndarray],
    *,
    folds: int = 10,
    rng: np.random.Generator | int | None = None,
    grid: Any = "one",
    inner_folds: int = 2,
    n_jobs: int = 1,
    centroids: bool = True,
    multitask: bool = True,
    split: str = "grouped",
    progress: bool = False,
) -> tuple[dict[str, dict[str, np.ndarray]], pd.DataFrame]:
    """Out-of-fold learned metrics per human score, and the hyper-parameters chosen per fold.

    For each human score t (and ``"mean"``): ``S-ROUGE`` (MLP on the features, target t; for the mean
    ``MEAN-ROUGE``), ``M-ROUGE`` (as the paper: for each measure t, a network predicting all non-mean scores
    at once whose configuration is chosen on t's error; its column t), ``S-CENT`` / ``M-CENT`` / ``MEAN-CENT``
    alike on the centroid differences (``centroids``; not with ``grid="paper"``), ``ridge`` and ``best-single``
    (on the features, target t); ``multitask=False`` leaves M-* out. Every model uses the same outer folds
    (one seed). The searches: :func:`searches` (``grid="paper"``: the paper's
    architectures).

    ``split="grouped"`` (default) keeps all summaries of a document in one fold; ``split="random"`` makes
    every summary its own group (a random split of summaries, as a random train/test split of DUC summaries
    would give): the difference between the two is what a model gains from having seen the test documents'
    other summaries and references in training (leakage).

    Returns
    -------
    metrics : dict
        Human score -> {learned metric name -> N x M matrix of out-of-fold predictions}.
    params : DataFrame
        One row per (model, target, fold): the chosen hyper-parameters (best-single: the feature).
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    seed = int(np.random.default_rng(rng).integers(2**31 - 1))
    names = [t for t in targets if t != MEAN]
    search = searches(grid, len(names))
    shape = feats.shape
    X = feats.frame
    Y = {t: np.asarray(targets[t], dtype=float).ravel() for t in targets}
    out: dict[str, dict[str, np.ndarray]] = {t: {} for t in targets}
    rows: list[dict[str, Any]] = []
    groups = feats.groups if split == "grouped" else np.arange(feats.groups.size)
    opts: dict[str, Any] = dict(groups=groups, folds=folds, rng=seed, inner_folds=inner_folds, n_jobs=n_jobs,
                                progress=progress)

    def record(name: str, target: str, res) -> None:
        for k, p in enumerate(res.params):
            for q in p.get("per_target", (p,)) if name.startswith("M-") else (p,):
                q = dict(q)
                rows.append({"model": name, "target": q.pop("target", target), "fold": k,
                             **{key: _plain(v) for key, v in q.items()}})

    centroids = centroids and search["S-CENT"] is not None
    inputs = [("ROUGE", X)] + ([("CENT", feats.centroid_difference)] if centroids else [])
    for kind, F in inputs:
        for t in targets:
            name = f"{'MEAN' if t == MEAN else 'S'}-{kind}"
            res = cross_validate(F, Y[t], model="mlp", grid=search[f"S-{kind}"], **opts)
            out[t][name] = res.predictions.reshape(shape)
            record(name, t, res)
        if multitask and len(names) > 1:
            frame = pd.DataFrame({t: Y[t] for t in names})
            res = cross_validate(F, frame, model="mlp", grid=search[f"M-{kind}"], select="each", **opts)
            for k, t in enumerate(names):
                out[t][f"M-{kind}"] = res.predictions[:, k].reshape(shape)
            record(f"M-{kind}", "all", res)
    for t in targets:
        for model in ("ridge", "best-single"):
            res = cross_validate(X, Y[t], model=model, grid=search["ridge"] if model == "ridge" else None, **opts)
            out[t][model] = res.predictions.reshape(shape)
            record(model, t, res)
    params = pd.DataFrame(rows)
    params.insert(0, "split", split)
    return out, params


def split_comparison(
    grouped: Mapping[str, Mapping[str, np.ndarray]],
    random: Mapping[str, Mapping[str, np.ndarray]],
    targets: Mapping[str, np.ndarray],
    *,
    levels: Sequence[Level] = ("global", "summary", "system"),
    coefficient: str = "spearman",
) -> pd.DataFrame:
    """Each learned metric's correlation under the grouped split next to the random split of summaries.

    ``grouped`` and ``random`` are the first outputs of :func:`learned_metrics` with ``split="grouped"`` and
    ``split="random"``; metrics missing from ``random`` are left out. ``leakage`` = random - grouped: what a
    model gains from having seen other summaries (and the references) of its test documents in training.

    Examples
    --------
    >>> Z = np.arange(12.0).reshape(3, 4)
    >>> g, r = {"t": {"ridge": -Z}}, {"t": {"ridge": Z}}
    >>> split_comparison(g, r, {"t": Z}, levels=["global"]).round(3).to_dict("records")
    [{'target': 't', 'metric': 'ridge', 'level': 'global', 'grouped': -1.0, 'random': 1.0, 'leakage': 2.0}]
    """
    rows = []
    for t, Z in targets.items():
        for name, G in grouped[t].items():
            if name not in random.get(t, {}):
                continue
            for level in levels:
                a = float(level_corr(G, Z, level, coefficient))
                b = float(level_corr(random[t][name], Z, level, coefficient))
                rows.append({"target": t, "metric": name, "level": level, "grouped": a, "random": b, "leakage": b - a})
    return pd.DataFrame(rows, columns=["target", "metric", "level", "grouped", "random", "leakage"])


def chosen_configurations(params: pd.DataFrame) -> pd.DataFrame:
    """How often each configuration was chosen: one row per (model, target, configuration), with the count of folds.

    Examples
    --------
    >>> p = pd.DataFrame({"model": ["ridge"] * 3, "target": ["t"] * 3, "fold": [0, 1, 2], "alpha": [1.0, 1.0, 10.0]})
    >>> chosen_configurations(p)
       model target configuration  folds
    0  ridge      t       alpha=1      2
    1  ridge      t      alpha=10      1
    """
    keys = [c for c in params.columns if c not in ("split", "model", "target", "fold", "inner_mse", "spearman")]

    def describe(row: pd.Series) -> str:
        if "feature" in row and not isinstance(row["feature"], str) and pd.isna(row.get("spearman", 0.0)):
            return "none (every Spearman correlation undefined)"
        if isinstance(row.get("feature"), str):
            return label(row["feature"]) + "".join(f" {v}" for v in options(row["feature"]).values() if v != "-")
        return ", ".join(f"{k}={_number(row[k])}" for k in keys if k != "feature" and pd.notna(row[k]))

    table = params.assign(configuration=params.apply(describe, axis=1))
    by = (["split"] if "split" in table.columns else []) + ["model", "target"]
    counts = table.groupby(by + ["configuration"], sort=False).size().rename("folds").reset_index()
    return counts.sort_values(by + ["folds"], ascending=[True] * len(by) + [False], kind="mergesort",
                              ignore_index=True)


def _number(v: Any) -> Any:
    return f"{v:g}" if isinstance(v, float) else v


def _plain(v: Any) -> Any:
    if isinstance(v, tuple):
        return "; ".join(f"{d['feature']} ({d['spearman']:+.3f})" for d in v)
    return v


def label(name: str) -> str:
    """Display name of a feature or metric: ``R-SU4`` for ROUGE signatures, upper case for the others."""
    if name.startswith("rouge-"):
        return parse_rouge_variant(name).measure.name  # type: ignore[union-attr]
    if "|" in name:
        return name.split("|")[0].upper()
    return name.upper() if name in (BLEU,) else name


def options(name: str) -> dict[str, str]:
    """The paper's option columns (stemming, stopword removal, statistic) of a ROUGE signature; '-' otherwise."""
    if name.startswith("rouge-"):
        v = parse_rouge_variant(name)
        return {"ST": "Y" if v.stem else "N", "RSW": "Y" if v.stop else "N",  # type: ignore[union-attr]
                "stat": "F1" if v.stat == "F" else v.stat}  # type: ignore[union-attr]
    return {"ST": "-", "RSW": "-", "stat": "-"}


def _pairwise_corr(stack: np.ndarray, level: str, coefficient: str) -> np.ndarray:
    """Correlations between every pair of K metrics (K, N, M) at a level, as :func:`level_corr` computes them."""
    def corr(A: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):  # a constant row correlates with nothing: NaN
            return np.corrcoef(rankdata(A, axis=1) if coefficient == "spearman" else A)

    K, N, M = stack.shape
    if level == "global":
        return corr(stack.reshape(K, N * M))
    if level == "system":
        return corr(stack.mean(axis=2))
    with np.errstate(invalid="ignore"):
        return np.nanmean(np.stack([corr(stack[:, :, j]) for j in range(M)]), axis=0)


def williams_pvalues(metrics: Mapping[str, np.ndarray], Z: np.ndarray, *, level: Level = "global",
                     coefficient: str = "spearman") -> np.ndarray:
    """One-sided Williams p-values for every ordered pair: ``p[i, j]`` tests "metric i beats metric j".

    The values of :func:`metaeval.significance.williams_test` for each pair (n from
    :func:`metaeval.correlation.effective_n`, r(X, Y) at the same level), computed for all pairs at once.
    """
    if coefficient not in ("pearson", "spearman"):
        raise ValueError(f"coefficient must be 'pearson' or 'spearman' for Williams' test, got {coefficient!r}")
    stack = np.stack([np.asarray(m, dtype=float) for m in metrics.values()])
    Z = np.asarray(Z, dtype=float)
    r_h = np.asarray(level_corr(stack, Z[None], level, coefficient), dtype=float)
    r_xy = _pairwise_corr(stack, level, coefficient)
    n = effective_n(stack[0], level=level)
    _, p = williams_pvalue(r_h[:, None], r_h[None, :], r_xy, n, "greater")
    p = np.array(p, dtype=float)
    np.fill_diagonal(p, np.nan)
    return p


def ranking_table(
    metrics: Mapping[str, np.ndarray],
    Z: np.ndarray,
    *,
    level: Level = "global",
    alpha: float = 0.05,
    test_coefficient: str = "spearman",
) -> pd.DataFrame:
    """Pearson, Spearman and Kendall of every metric with Z at ``level``, sorted by Spearman, with the bullet.

    ``optimal`` (the paper's bullet) is True when no other metric correlates significantly more strongly by
    a one-sided Williams test at ``alpha`` (on ``test_coefficient``: Spearman, the coefficient the paper
    sorts by and marks). The test's n is :func:`metaeval.correlation.effective_n`, its r(X, Y) the
    correlation of the two metrics at the same level; the p-values are those of
    :func:`metaeval.significance.williams_test`, vectorized over all pairs.
    """
    if not metrics:
        raise ValueError("metrics must not be empty")
    names = list(metrics)
    stack = np.stack([np.asarray(metrics[n], dtype=float) for n in names])
    Z = np.asarray(Z, dtype=float)
    if stack.shape[1:] != Z.shape:
        raise ValueError(f"metrics must be {Z.shape} matrices like Z, got {stack.shape[1:]}")
    corr = {c: np.asarray(level_corr(stack, Z[None], level, c), dtype=float) for c in ("pearson", "spearman")}
    if level == "global":
        # scipy's O(n log n) tau-b (the same coefficient) instead of all pairs of the pooled cells
        corr["kendall"] = np.array([kendalltau(m.ravel(), Z.ravel()).statistic for m in stack], dtype=float)
    else:
        corr["kendall"] = np.asarray(level_corr(stack, Z[None], level, "kendall"), dtype=float)
    p = williams_pvalues(metrics, Z, level=level, coefficient=test_coefficient)
    beaten_by = np.nan_to_num(p, nan=1.0) < alpha  # [i, j]: i beats j
    optimal = ~beaten_by.any(axis=0)
    n_eff = effective_n(stack[0], level=level)
    table = pd.DataFrame(
        {
            "metric": [label(name) for name in names],
            **{k: [options(name)[k] for name in names] for k in ("ST", "RSW", "stat")},
            "pearson": corr["pearson"],
            "spearman": corr["spearman"],
            "kendall": corr["kendall"],
            "optimal": optimal,
            "signature": names,
        }
    )
    table = table.sort_values("spearman", ascending=False, kind="mergesort").reset_index(drop=True)
    table.attrs.update(level=level, n=n_eff, alpha=alpha, test_coefficient=test_coefficient)
    return table


def compare(
    X: np.ndarray,
    Y: np.ndarray,
    Z: np.ndarray,
    *,
    levels: Sequence[str] = ("system", "summary"),
    coefficient: str = "kendall",
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    alternative: str = "greater",
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Is metric X better than Y? Perm-Both and Boot-Both (Deutsch et al., 2021) at each level.

    Returns one row per level: r(X, Z), r(Y, Z), their difference, the Perm-Both and Boot-Both p-values
    (``alternative="greater"``, one-sided H1: X correlates more strongly; ``"two-sided"``: they differ) and
    the Boot-Both percentile interval of the difference.
    """
    gen = np.random.default_rng(rng)
    rows = []
    for level, child in zip(levels, gen.spawn(len(levels))):
        a, b = child.spawn(2)
        perm = permutation_test(X, Y, Z, level=level, coefficient=coefficient, resample="both",
                                n_resamples=n_resamples, alternative=alternative, rng=a)
        boot = bootstrap_test(X, Y, Z, level=level, coefficient=coefficient, resample="both",
                              n_resamples=n_resamples, alternative=alternative, rng=b)
        low, high = percentile_interval(boot.bootstrap_distribution, confidence_level)
        rows.append({
            "level": level,
            "r_x": float(level_corr(X, Z, level, coefficient)),
            "r_y": float(level_corr(Y, Z, level, coefficient)),
            "delta": boot.statistic,
            "perm_both_p": perm.pvalue,
            "boot_both_p": boot.pvalue,
            "ci_low": low,
            "ci_high": high,
        })
    return pd.DataFrame(rows)
