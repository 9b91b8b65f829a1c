"""ShafieiBavani et al.: GRouge (WordNet personalized PageRank) against ROUGE and ROUGE-WE, with statistics.

The paper's Tables 4.1-4.3 give system-level Pearson, Spearman and Kendall correlations of ROUGE, ROUGE-WE
and GRouge with TAC 2011 AESOP human scores, and Williams tests of GRouge against ROUGE. This module
computes the analogue on any dataset with texts:

* :func:`grouge_parts`: GRouge's lexical part ``L`` (ROUGE-N recall) and semantic part ``S`` per summary,
  as systems x inputs matrices, so that GRouge(lam) = lam L + (1 - lam) S for every lam without rescoring
  (cached on disk, keyed by the texts and the signatures);
* :func:`correlation_table`: correlations of many metrics with many human scores, best value marked;
* :func:`comparison_table`: each GRouge variant against its ROUGE counterpart: Williams' test (the paper),
  Deutsch et al.'s Perm-Both test and Boot-Both confidence intervals, at system and summary level;
* :func:`all_cells`: every cell (human score x coefficient x variant x level) of GRouge against ROUGE with
  the three tests, Holm-adjusted over the table;
* :func:`lam_curve`: correlation with a Boot-Both interval as a function of lam, and :func:`lam_tests`:
  paired tests of each lam against lam = 1 (ROUGE).
"""

from __future__ import annotations

import hashlib
import json
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from metaeval._io import cache_dir, load_cached, save_cached
from metaeval.metrics import grouge
from metaeval.stats.correlation import Coefficient, Level, correlate
from metaeval.stats.resampling import bootstrap_ci
from metaeval.stats.significance import bootstrap_test, holm, permutation_test, williams_test

__all__ = [
    "grouge_parts",
    "rouge_counterpart",
    "correlation_table",
    "comparison_table",
    "lam_curve",
    "at_lam",
    "all_cells",
    "lam_tests",
    "signatures",
]


def _grid(values, ds) -> np.ndarray:
    return np.asarray(values, dtype=float).reshape(len(ds.systems), len(ds.inputs))


def grouge_parts(ds, measures: Sequence[str] = ("grouge-1", "grouge-2", "grouge-su4"), *,
                 topk: int | None = grouge.DEFAULT_TOPK, stem: bool = True, stop: bool = False,
                 options: grouge.GRougeOptions | None = None, cache: bool = True,
                 progress: bool = False) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``{measure: (L, S)}``, systems x inputs matrices of GRouge's lexical and semantic parts, keyed by the
    short names (``grouge-2``); :func:`signatures` gives their full signatures.

    ``ds`` is a dataset with texts (``metaeval.datasets.load("summeval")``); references are all of each
    input's references (pooled, ROUGE ``-f A``). ``options`` (a :class:`metaeval.grouge.GRougeOptions`)
    replaces ``topk``, ``stem`` and ``stop`` when given.
    """
    if options is not None:
        topk, stem, stop = options.topk, options.stem, options.stop
    else:
        options = grouge.GRougeOptions(topk=topk, stem=stem, stop=stop)
    if ds.texts is None:
        raise ValueError(f"dataset {ds.name!r} has no texts: GRouge needs summaries and references")
    summaries = ds.texts["summary"].tolist()
    references = [list(r) for r in ds.texts["references"]]
    # full signatures (every setting, the method's version): they key the table cache below
    names = signatures(measures, options=options)
    slugs = [grouge.parse_variant(n).slug for n in names]  # the tables' columns
    key = None
    if cache:
        digest = hashlib.sha256()
        digest.update(json.dumps([summaries, references], ensure_ascii=False).encode())
        digest.update(json.dumps([names, topk, stem, stop]).encode())
        key = cache_dir() / "grouge" / "tables" / f"{digest.hexdigest()[:32]}.json"
    # no pickle in a cache (anyone who can write to a shared cache folder could run code): parquet + JSON,
    # checked before use (metaeval._io.load_cached)
    entry = None if key is None else load_cached(key, what="cached GRouge tables",
                                                  validate=lambda e: _invalid_parts(e, slugs, len(summaries)))
    if entry is not None:
        lexical, semantic = entry.frames["lexical"], entry.frames["semantic"]
    else:
        lexical, semantic = grouge.score_parts(summaries, references, names, topk=topk, stem=stem, stop=stop,
                                               progress=progress)
        if key is not None:
            save_cached(key, frames={"lexical": lexical, "semantic": semantic})
    return {m: (_grid(lexical[m], ds), _grid(semantic[m], ds)) for m in slugs}


def signatures(measures: Sequence[str], *, lam: float = 0.5, options: grouge.GRougeOptions | None = None) -> list[str]:
    """The GRouge signatures of ``measures`` at ``lam`` with ``options``.

    Examples
    --------
    >>> signatures(["grouge-2"], options=grouge.GRougeOptions(topk=128))
    ['grouge-2|lam:0.5|restart:0.15|iter:30|topk:128|align:cosine@500|sw:out|wn:3.0|stem:yes|stop:no|refs:A']
    """
    return [grouge.parse_variant(m, lam=lam, options=options).signature for m in measures]


def _invalid_parts(entry, names: Sequence[str], n: int) -> str | None:
    for part in ("lexical", "semantic"):
        frame = entry.frames.get(part)
        if frame is None or list(frame.columns) != list(names) or len(frame) != n:
            return f"its {part} table is not {n} summaries x {list(names)}"
        values = frame.to_numpy(dtype=float)
        if not np.isfinite(values).all() or (values < 0).any() or (values > 1).any():
            return f"its {part} table holds values outside [0, 1] or NaN"
    return None


def at_lam(parts: tuple[np.ndarray, np.ndarray], lam: float) -> np.ndarray:
    """GRouge at ``lam`` from its parts.

    Examples
    --------
    >>> at_lam((np.array([[0.5]]), np.array([[0.1]])), 0.5)
    array([[0.3]])
    """
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam must be in [0, 1], got {lam!r}")
    lexical, semantic = parts
    return lam * lexical + (1.0 - lam) * semantic


def rouge_counterpart(measure: str, *, stem: bool = True, stop: bool = False) -> str:
    """The ROUGE recall variant GRouge reduces to at lam = 1 (``grouge-2`` -> ``R-2|stem=1|stop=0|R``).

    Examples
    --------
    >>> rouge_counterpart("grouge-su4")
    'R-SU4|stem=1|stop=0|R'
    """
    v = grouge.parse_variant(measure)
    name = f"R-{v.measure.n}" if v.measure.kind == "n" else f"R-SU{v.measure.skip}"
    return f"{name}|stem={int(stem)}|stop={int(stop)}|R"


def correlation_table(metrics: Mapping[str, np.ndarray], humans: Mapping[str, np.ndarray], *,
                      coefficients: Sequence[Coefficient] = ("pearson", "spearman", "kendall"),
                      level: Level = "system") -> pd.DataFrame:
    """Correlation of every metric (rows) with every human score and coefficient (columns ``(human, coef)``).

    The frame's ``attrs["best"]`` holds, per column, the metric with the highest value.
    """
    cols = pd.MultiIndex.from_tuples([(h, c) for h in humans for c in coefficients], names=["human", "coefficient"])
    table = pd.DataFrame(index=list(metrics), columns=cols, dtype=float)
    for h, Z in humans.items():
        for c in coefficients:
            for name, X in metrics.items():
                table.loc[name, (h, c)] = correlate(X, Z, level=level, coefficient=c)
    table.attrs["best"] = {col: str(table[col].idxmax()) for col in table.columns}
    return table


def comparison_table(pairs: Sequence[tuple[str, str]], metrics: Mapping[str, np.ndarray], Z: np.ndarray, *,
                     levels: Sequence[Level] = ("system", "summary"), coefficient: Coefficient = "pearson",
                     n_resamples: int = 1000, confidence_level: float = 0.95,
                     rng: np.random.Generator | int | None = None) -> pd.DataFrame:
    """Each (metric, baseline) pair at each level: both correlations with Boot-Both CIs, and the one-sided
    p-values of H1 r(metric) > r(baseline) by Williams' test, the Perm-Both permutation test and the
    Boot-Both paired bootstrap test."""
    rng = np.random.default_rng(rng)
    rows = []
    for level in levels:
        for a, b in pairs:
            X, Y = metrics[a], metrics[b]
            ra, rb = correlate(X, Z, level=level, coefficient=coefficient), correlate(Y, Z, level=level,
                                                                                      coefficient=coefficient)
            ci_a = bootstrap_ci(X, Z, level=level, coefficient=coefficient, resample="both",
                                n_resamples=n_resamples, confidence_level=confidence_level, rng=rng)
            ci_b = bootstrap_ci(Y, Z, level=level, coefficient=coefficient, resample="both",
                                n_resamples=n_resamples, confidence_level=confidence_level, rng=rng)
            rows.append({
                "level": level, "metric": a, "baseline": b, "r_metric": ra, "r_baseline": rb,
                "delta": ra - rb,
                "ci_metric_low": ci_a.confidence_interval.low, "ci_metric_high": ci_a.confidence_interval.high,
                "ci_baseline_low": ci_b.confidence_interval.low, "ci_baseline_high": ci_b.confidence_interval.high,
                **_one_sided_tests(X, Y, Z, level, coefficient, n_resamples, rng),
            })
    return pd.DataFrame(rows)


def _one_sided_tests(X, Y, Z, level: Level, coefficient: Coefficient, n_resamples: int,
                     rng: np.random.Generator) -> dict[str, float]:
    """The one-sided p-values of H1 r(X) > r(Y) by Williams' test, Perm-Both and Boot-Both (drawn in that order)."""
    return {"p_williams": williams_test(X, Y, Z, level=level, coefficient=coefficient, alternative="greater").pvalue,
            "p_perm_both": permutation_test(X, Y, Z, level=level, coefficient=coefficient, alternative="greater",
                                            resample="both", n_resamples=n_resamples, rng=rng).pvalue,
            "p_boot_both": bootstrap_test(X, Y, Z, level=level, coefficient=coefficient, alternative="greater",
                                          resample="both", n_resamples=n_resamples, rng=rng).pvalue}


def lam_curve(parts: tuple[np.ndarray, np.ndarray], Z: np.ndarray, lams: Sequence[float], *,
              level: Level = "system", coefficient: Coefficient = "pearson", n_resamples: int = 1000,
              confidence_level: float = 0.95, rng: np.random.Generator | int | None = None) -> pd.DataFrame:
    """Correlation of GRouge(lam) with ``Z`` and its Boot-Both interval, for each lam.

    All lam values share the same bootstrap resamples (the generator is re-seeded from one draw), so
    the curve's shape is not resampling noise.
    """
    seed = int(np.random.default_rng(rng).integers(1 << 62))
    rows = []
    for lam in lams:
        X = at_lam(parts, float(lam))
        ci = bootstrap_ci(X, Z, level=level, coefficient=coefficient, resample="both", n_resamples=n_resamples,
                          confidence_level=confidence_level, rng=np.random.default_rng(seed))
        rows.append({"lam": float(lam), "r": correlate(X, Z, level=level, coefficient=coefficient),
                     "ci_low": ci.confidence_interval.low, "ci_high": ci.confidence_interval.high})
    return pd.DataFrame(rows)


def all_cells(pairs: Sequence[tuple[str, str]], metrics: Mapping[str, np.ndarray], humans: Mapping[str, np.ndarray],
              *, levels: Sequence[Level] = ("system", "summary"),
              coefficients: Sequence[Coefficient] = ("pearson", "spearman", "kendall"), n_resamples: int = 1000,
              rng: np.random.Generator | int | None = None) -> pd.DataFrame:
    """Every cell of the comparison: each (metric, baseline) pair x human score x coefficient x level, with
    both correlations, their difference, and the one-sided p-values of H1 r(metric) > r(baseline) by
    Williams' test, Perm-Both and Boot-Both; ``*_holm`` columns are Holm-adjusted over all cells of the
    table (one family per test), for a statement about the whole table.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(6, 10))
    >>> cells = all_cells([("A", "B")], {"A": Z + rng.normal(size=Z.shape), "B": rng.normal(size=Z.shape)},
    ...                   {"h": Z}, levels=("system",), coefficients=("pearson",), n_resamples=99, rng=1)
    >>> list(cells.columns[:5]), len(cells)
    (['level', 'human', 'coefficient', 'metric', 'baseline'], 1)
    """
    rng = np.random.default_rng(rng)
    rows = []
    for level in levels:
        for h, Z in humans.items():
            for c in coefficients:
                for a, b in pairs:
                    X, Y = metrics[a], metrics[b]
                    ra = correlate(X, Z, level=level, coefficient=c)
                    rb = correlate(Y, Z, level=level, coefficient=c)
                    rows.append({"level": level, "human": h, "coefficient": c, "metric": a, "baseline": b,
                                 "r_metric": ra, "r_baseline": rb, "delta": ra - rb,
                                 **_one_sided_tests(X, Y, Z, level, c, n_resamples, rng)})
    cells = pd.DataFrame(rows)
    for test in ("williams", "perm_both", "boot_both"):
        cells[f"p_{test}_holm"] = holm(cells[f"p_{test}"].to_numpy(dtype=float)) if len(cells) else []
    return cells


def lam_tests(parts: tuple[np.ndarray, np.ndarray], Z: np.ndarray, lams: Sequence[float], *,
              level: Level = "system", coefficient: Coefficient = "pearson", n_resamples: int = 1000,
              rng: np.random.Generator | int | None = None) -> pd.DataFrame:
    """For each lam: the correlation of GRouge(lam) with ``Z`` and two-sided paired tests of
    r(GRouge(lam)) = r(ROUGE) (lam = 1) by Perm-Both and Boot-Both, on the same resamples for every lam.

    Judge the curve by these tests, not by whether a value lies inside another lam's interval. Picking the
    best lam on the same data and then testing it is a selection: the notebook reports the smallest p-value
    with a Holm adjustment over the lams tested.
    """
    seed = int(np.random.default_rng(rng).integers(1 << 62))
    R = at_lam(parts, 1.0)
    rows = []
    for lam in lams:
        X = at_lam(parts, float(lam))
        r = correlate(X, Z, level=level, coefficient=coefficient)
        if float(lam) == 1.0:
            rows.append({"lam": 1.0, "r": r, "delta": 0.0, "p_perm_both": np.nan, "p_boot_both": np.nan})
            continue
        perm = permutation_test(X, R, Z, level=level, coefficient=coefficient, resample="both",
                                n_resamples=n_resamples, alternative="two-sided", rng=np.random.default_rng(seed))
        boot = bootstrap_test(X, R, Z, level=level, coefficient=coefficient, resample="both",
                              n_resamples=n_resamples, alternative="two-sided", rng=np.random.default_rng(seed))
        rows.append({"lam": float(lam), "r": r, "delta": r - correlate(R, Z, level=level, coefficient=coefficient),
                     "p_perm_both": perm.pvalue, "p_boot_both": boot.pvalue})
    out = pd.DataFrame(rows)
    for test in ("perm_both", "boot_both"):
        out[f"p_{test}_holm"] = holm(out[f"p_{test}"].to_numpy(dtype=float))
    return out
