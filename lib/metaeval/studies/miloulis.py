"""Miloulis et al., "Learned combinations of ROUGE variants": the analysis as library calls.

The paper scores every summary with 96 ROUGE variants (8 methods x stemming x stopwords x P/R/F, summary
level), BLEU, two centroid metrics and six relaxed word mover's distances, trains deep MLPs on them
(S-ROUGE: one human score; M-ROUGE: all human scores at once; S-/M-CENT: the same on the difference of the
reference and summary centroids; MEAN-*: the mean of the human scores) and ranks all metrics by their
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

from metaeval._io import cache_dir
from metaeval.data.datasets import DataError, Dataset
from metaeval.data.scoring import rouge_table
from metaeval.metrics.bleu import bleu_signature, sentence_bleu
from metaeval.metrics.combination import cross_validate
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
        from metaeval import __version__

        digest.update(f"v={__version__}".encode())
        # no pickle in a cache (anyone who can write to a shared cache folder could run code): parquet + npz
        # + JSON, checked before use (metaeval._io.load_cached)
        from metaeval._io import load_cached

        key = cache_dir() / "embeddings" / f"{digest.hexdigest()[:32]}.json"
        entry = load_cached(key, what="cached embedding scores",
                            validate=lambda e: _invalid_embedding_entry(e, len(summaries)))
        if entry is not None:
            return entry.frames["scores"], entry.arrays["centroid_difference"]
    frame = score(summaries, references, EMBEDDING_FEATURES, embeddings=emb)
    diff = centroid_difference(summaries, references, embeddings=emb)
    if key is not None:
        from metaeval._io import save_cached

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


def learned_metrics(
    feats: Features,
    targets: Mapping[str, np.ndarray],
    *,
    folds: int = 10,
    rng: np.random.Generator | int | None = None,
    grid: Any = "small",
    inner_folds: int = 2,
    n_jobs: int = 1,
    centroids: bool = True,
    progress: bool = False,
) -> tuple[dict[str, dict[str, np.ndarray]], pd.DataFrame]:
    """Out-of-fold learned metrics per human score, and the hyper-parameters chosen per fold.

    For each human score t (and ``"mean"``): ``S-ROUGE`` (MLP on the features, target t; for the mean
    ``MEAN-ROUGE``), ``M-ROUGE`` (one multi-output MLP on all non-mean scores, its column t), ``S-CENT`` /
    ``M-CENT`` / ``MEAN-CENT`` alike on the centroid differences, ``ridge`` and ``best-single`` (on the
    features, target t). Every model uses the same outer folds (one seed), grouped by input.

    Returns
    -------
    metrics : dict
        Human score -> {learned metric name -> N x M matrix of out-of-fold predictions}.
    params : DataFrame
        One row per (model, target, fold): the chosen hyper-parameters (best-single: the feature).
    """
    seed = int(np.random.default_rng(rng).integers(2**31 - 1))
    names = [t for t in targets if t != MEAN]
    shape = feats.shape
    X = feats.frame
    Y = {t: np.asarray(targets[t], dtype=float).ravel() for t in targets}
    out: dict[str, dict[str, np.ndarray]] = {t: {} for t in targets}
    rows: list[dict[str, Any]] = []
    opts: dict[str, Any] = dict(groups=feats.groups, folds=folds, rng=seed, inner_folds=inner_folds, n_jobs=n_jobs,
                                progress=progress)

    def record(name: str, target: str, res) -> None:
        for k, p in enumerate(res.params):
            rows.append({"model": name, "target": target, "fold": k, **{key: _plain(v) for key, v in p.items()}})

    inputs = [("ROUGE", X)] + ([("CENT", feats.centroid_difference)] if centroids else [])
    for kind, F in inputs:
        for t in targets:
            name = f"{'MEAN' if t == MEAN else 'S'}-{kind}"
            res = cross_validate(F, Y[t], model="mlp", grid=grid, **opts)
            out[t][name] = res.predictions.reshape(shape)
            record(name, t, res)
        if len(names) > 1:
            res = cross_validate(F, np.column_stack([Y[t] for t in names]), model="mlp", grid=grid, **opts)
            for k, t in enumerate(names):
                out[t][f"M-{kind}"] = res.predictions[:, k].reshape(shape)
            record(f"M-{kind}", "all", res)
    for t in targets:
        for model in ("ridge", "best-single"):
            res = cross_validate(X, Y[t], model=model, **opts)
            out[t][model] = res.predictions.reshape(shape)
            record(model, t, res)
    return out, pd.DataFrame(rows)


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
    keys = [c for c in params.columns if c not in ("model", "target", "fold", "inner_mse", "spearman")]

    def describe(row: pd.Series) -> str:
        if isinstance(row.get("feature"), str):
            return label(row["feature"]) + "".join(f" {v}" for v in options(row["feature"]).values() if v != "-")
        return ", ".join(f"{k}={_number(row[k])}" for k in keys if k != "feature" and pd.notna(row[k]))

    table = params.assign(configuration=params.apply(describe, axis=1))
    counts = table.groupby(["model", "target", "configuration"], sort=False).size().rename("folds").reset_index()
    return counts.sort_values(["model", "target", "folds"], ascending=[True, True, False], kind="mergesort",
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


def _ranks(x: np.ndarray, axis: int) -> np.ndarray:
    from scipy.stats import rankdata

    return rankdata(x, axis=axis)


def _corr_rows(A: np.ndarray) -> np.ndarray:
    """Pearson correlation matrix of the rows of A (K, n); NaN for constant rows."""
    A = A - A.mean(axis=1, keepdims=True)
    norms = np.sqrt((A * A).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        C = (A @ A.T) / np.outer(norms, norms)
    return np.clip(C, -1.0, 1.0)


def _pairwise_corr(stack: np.ndarray, level: str, coefficient: str) -> np.ndarray:
    """Correlations between every pair of K metrics (K, N, M) at a level, as :func:`level_corr` computes them."""
    K, N, M = stack.shape
    spearman = coefficient == "spearman"
    if level == "global":
        A = stack.reshape(K, N * M)
        return _corr_rows(_ranks(A, 1) if spearman else A)
    if level == "system":
        A = stack.mean(axis=2)
        return _corr_rows(_ranks(A, 1) if spearman else A)
    per = np.stack([_corr_rows(_ranks(stack[:, :, j], 1) if spearman else stack[:, :, j]) for j in range(M)])
    with np.errstate(invalid="ignore"):
        return np.nanmean(per, axis=0)


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
        from scipy.stats import kendalltau

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
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Is metric X better than Y? Perm-Both and Boot-Both (Deutsch et al., 2021) at each level.

    Returns one row per level: r(X, Z), r(Y, Z), their difference, the one-sided Perm-Both and Boot-Both
    p-values (H1: X correlates more strongly) and the Boot-Both percentile interval of the difference.
    """
    gen = np.random.default_rng(rng)
    rows = []
    for level, child in zip(levels, gen.spawn(len(levels))):
        a, b = child.spawn(2)
        perm = permutation_test(X, Y, Z, level=level, coefficient=coefficient, resample="both",
                                n_resamples=n_resamples, rng=a)
        boot = bootstrap_test(X, Y, Z, level=level, coefficient=coefficient, resample="both",
                              n_resamples=n_resamples, rng=b)
        tail = (1 - confidence_level) / 2
        low, high = np.quantile(boot.bootstrap_distribution, [tail, 1 - tail])
        rows.append({
            "level": level,
            "r_x": float(level_corr(X, Z, level, coefficient)),
            "r_y": float(level_corr(Y, Z, level, coefficient)),
            "delta": boot.statistic,
            "perm_both_p": perm.pvalue,
            "boot_both_p": boot.pvalue,
            "ci_low": float(low),
            "ci_high": float(high),
        })
    return pd.DataFrame(rows)
