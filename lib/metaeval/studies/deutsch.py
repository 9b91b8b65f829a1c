"""Deutsch, Dror & Roth (2021), "Statistical Analysis of Summarization Evaluation Metrics using Resampling
Methods", as library calls used by the ``notebooks/2*_deutsch2021_*.py`` notebooks.

* :func:`split_halves` and :func:`ci_coverage_simulation` (Table 1);
* :class:`RougeOneSubsampler` (R_k: ROUGE-1 on a random k% of a summary's tokens) and
  :func:`power_simulation` (Figure 3);
* :func:`metric_cis`, :func:`pairwise_pvalues`, :func:`corrected` (Figures 4-6);
* :func:`normality` (Appendix Table 2);
* the paper's values (:data:`PAPER_TABLE1`, :data:`PAPER_TABLE2`), the metric set it used on each dataset
  (:func:`paper_metrics`) and helpers to put our numbers next to them (:func:`compare_coverage`,
  :func:`min_pvalue`).

Deutsch, D., Dror, R., & Roth, D. (2021). A Statistical Analysis of Summarization Evaluation Metrics Using
Resampling Methods. *Transactions of the ACL*, 9, 1132-1146. https://doi.org/10.1162/tacl_a_00417

Every trial draws from its own child generator (``rng.spawn``), so results do not depend on how trials
are scheduled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numba
import numpy as np
import pandas as pd
from scipy import stats

from metaeval.stats.correlation import _fisher_interval, effective_n, level_corr
from metaeval.stats.resampling import bootstrap_ci
from metaeval.stats.significance import bonferroni, bootstrap_test, pairwise_tests, permutation_test, williams_test

__all__ = [
    "split_halves",
    "ci_coverage_simulation",
    "coverage_table",
    "RougeOneSubsampler",
    "power_simulation",
    "power_table",
    "metric_cis",
    "pairwise_pvalues",
    "corrected",
    "normality",
    "CI_METHODS",
    "METHOD_NAMES",
    "PAPER_TABLE1_FABBRI",
    "PAPER_TABLE1_BHANDARI",
    "PAPER_TABLE1",
    "PAPER_TABLE2",
    "PAPER_METRICS",
    "DOI",
    "paper_column",
    "paper_metrics",
    "compare_coverage",
    "compare_normality",
    "min_pvalue",
]

DOI = "https://doi.org/10.1162/tacl_a_00417"

CI_METHODS = ("fisher", "boot-systems", "boot-inputs", "boot-both")
#: Display names of the CI methods and tests, as in the paper.
METHOD_NAMES = {"fisher": "Fisher", "boot-systems": "Boot-Systems", "boot-inputs": "Boot-Inputs",
                "boot-both": "Boot-Both", "perm-both": "Perm-Both", "perm-systems": "Perm-Systems",
                "perm-inputs": "Perm-Inputs", "williams": "Williams"}
#: Deutsch et al. (2021) Table 1, SummEval (Fabbri) column, QAEval-F1, Pearson.
PAPER_TABLE1_FABBRI = {
    "system": {"fisher": 0.87, "boot-systems": 0.81, "boot-inputs": 0.70, "boot-both": 0.98},
    "summary": {"fisher": 1.00, "boot-systems": 0.73, "boot-inputs": 0.73, "boot-both": 0.93},
}
#: The same, REALSumm (Bhandari et al., 2020) column: QAEval-F1 against LitePyramid recall.
PAPER_TABLE1_BHANDARI = {
    "system": {"fisher": 0.85, "boot-systems": 0.80, "boot-inputs": 0.68, "boot-both": 0.94},
    "summary": {"fisher": 1.00, "boot-systems": 0.72, "boot-inputs": 0.62, "boot-both": 0.88},
}
#: Table 1 per paper column (see :func:`paper_column`); 1000 trials each.
PAPER_TABLE1 = {"summeval": PAPER_TABLE1_FABBRI, "realsumm": PAPER_TABLE1_BHANDARI}
PAPER_TRIALS = 1000

#: The paper's metric names (its Figures 4-6 and Appendix Table 2).
PAPER_METRICS = ("AutoSummENG", "MeMoG", "NPowER", "BERTScore", "BEwTE", "METEOR", "MoverScore", "QAEval-F1",
                 "ROUGE-1", "ROUGE-2", "ROUGE-L", "ROUGE-SU4", "S3")

#: Appendix Table 2: (percentage of inputs whose per-input scores fail Shapiro-Wilk at 0.05, system-level
#: Shapiro-Wilk p-value), per paper column; "human" is the ground truth (relevance / LitePyramid).
PAPER_TABLE2 = {
    "summeval": {
        "human": (32.0, 0.52), "AutoSummENG": (33.0, 0.01), "MeMoG": (33.0, 0.01), "NPowER": (33.0, 0.01),
        "BERTScore": (26.0, 0.15), "BEwTE": (37.0, 0.00), "METEOR": (27.0, 0.00), "MoverScore": (35.0, 0.00),
        "QAEval-F1": (40.0, 0.01), "ROUGE-1": (32.0, 0.00), "ROUGE-2": (34.0, 0.00), "ROUGE-L": (26.0, 0.13),
        "ROUGE-SU4": (32.0, 0.00), "S3": (26.0, 0.00),
    },
    "realsumm": {
        "human": (75.0, 0.84), "AutoSummENG": (28.0, 0.55), "MeMoG": (28.0, 0.55), "NPowER": (28.0, 0.55),
        "BERTScore": (28.0, 0.18), "BEwTE": (33.0, 0.68), "METEOR": (30.0, 0.61), "MoverScore": (31.0, 0.50),
        "QAEval-F1": (45.0, 0.21), "ROUGE-1": (30.0, 0.91), "ROUGE-2": (61.0, 0.62), "ROUGE-L": (37.0, 0.12),
        "ROUGE-SU4": (44.0, 0.84), "S3": (47.0, 0.66),
    },
}

_PAPER_COLUMNS = {"summeval": "summeval", "fabbri2020": "summeval", "realsumm": "realsumm",
                  "bhandari2020": "realsumm"}


def paper_column(dataset_name: str) -> str | None:
    """The paper's column for an embedded dataset (``"summeval"`` for summeval/fabbri2020, ``"realsumm"`` for
    realsumm/bhandari2020), None for any other dataset (the paper has no values for it).

    Examples
    --------
    >>> paper_column("fabbri2020"), paper_column("realsumm"), paper_column("/data/my-study")
    ('summeval', 'realsumm', None)
    """
    return _PAPER_COLUMNS.get(str(dataset_name))


def paper_metrics(score_names: Sequence[str], *, recall_oriented: bool) -> dict[str, str]:
    """The paper's metric set as score names of a dataset: paper name -> score name, for those present.

    As the authors' setup script: ROUGE and BEwT-E are the recall variants on recall-oriented datasets
    (TAC, REALSumm; the paper's footnote 9) and F1 otherwise; BERTScore is recall, QAEval F1 and S3 the
    responsiveness model everywhere.

    Examples
    --------
    >>> paper_metrics(["rouge-1.f1", "rouge-1.recall", "qa-eval.f1", "s3.resp"], recall_oriented=True)
    {'QAEval-F1': 'qa-eval.f1', 'ROUGE-1': 'rouge-1.recall', 'S3': 's3.resp'}
    """
    stat = "recall" if recall_oriented else "f1"
    wanted = {
        "AutoSummENG": "AutoSummENG", "MeMoG": "MeMoG", "NPowER": "NPowER", "BERTScore": "bertscore.recall",
        "BEwTE": f"BEwTE.{stat}", "METEOR": "METEOR", "MoverScore": "MoverScore", "QAEval-F1": "qa-eval.f1",
        "ROUGE-1": f"rouge-1.{stat}", "ROUGE-2": f"rouge-2.{stat}", "ROUGE-L": f"rouge-l.{stat}",
        "ROUGE-SU4": f"rouge-su4.{stat}", "S3": "s3.resp",
    }
    present = set(score_names)
    return {paper: name for paper, name in wanted.items() if name in present}


def min_pvalue(n_resamples: int) -> float:
    """The smallest p-value a permutation test with ``n_resamples`` permutations can return, 1 / (P + 1).

    A Bonferroni-corrected cell can be significant only if this is below alpha / (number of tests).

    Examples
    --------
    >>> min_pvalue(1000) > 0.05 / 210, min_pvalue(9999) < 0.05 / 210
    (True, True)
    """
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be positive, got {n_resamples}")
    return 1.0 / (n_resamples + 1)


def _progress(iterable, enabled: bool, **kwargs):
    if not enabled:
        return iterable
    from tqdm import tqdm

    return tqdm(iterable, **kwargs)


def split_halves(n_systems: int, n_inputs: int, rng: np.random.Generator):
    """Random halves of systems and of inputs: ``(systems_A, systems_B, inputs_A, inputs_B)``, sorted.

    With an odd count the extra one goes to B. A and B are disjoint and together cover everything.

    Examples
    --------
    >>> a, b, c, d = split_halves(16, 100, np.random.default_rng(0))
    >>> len(a), len(b), len(c), len(d), len(set(a) | set(b))
    (8, 8, 50, 50, 16)
    """
    if n_systems < 2 or n_inputs < 2:
        raise ValueError("need at least 2 systems and 2 inputs to split")
    sys_perm = rng.permutation(n_systems)
    inp_perm = rng.permutation(n_inputs)
    hs, hi = n_systems // 2, n_inputs // 2
    return (np.sort(sys_perm[:hs]), np.sort(sys_perm[hs:]), np.sort(inp_perm[:hi]), np.sort(inp_perm[hi:]))


def ci_coverage_simulation(
    X,
    Z,
    *,
    n_trials: int = 1000,
    n_resamples: int = 1000,
    coefficient: str = "pearson",
    levels: Sequence[str] = ("system", "summary"),
    methods: Sequence[str] = CI_METHODS,
    confidence_level: float = 0.95,
    rng=None,
    progress: bool = False,
) -> pd.DataFrame:
    """Deutsch et al.'s CI simulation: does a CI computed on one half of the systems and inputs contain the
    correlation measured on the other half?

    Each trial splits systems and inputs into halves A and B (:func:`split_halves`), computes a CI on the
    A-systems x A-inputs submatrix with each method, and records whether the correlation on the
    B-systems x B-inputs submatrix lies inside, above or below it.

    Returns
    -------
    DataFrame
        One row per trial x level x method: ``trial, level, method, low, high, target, contains, too_high,
        too_low`` (``too_high``: the CI lies above the target).
    """
    X, Z = np.asarray(X, float), np.asarray(Z, float)
    unknown = set(methods) - set(CI_METHODS)
    if unknown:
        raise ValueError(f"methods must be among {CI_METHODS}, got {sorted(unknown)}")
    rng = np.random.default_rng(rng)
    rows = []
    for trial, child in enumerate(_progress(rng.spawn(n_trials), progress, desc="trials")):
        sa, sb, ia, ib = split_halves(X.shape[0], X.shape[1], child)
        XA, ZA = X[np.ix_(sa, ia)], Z[np.ix_(sa, ia)]
        XB, ZB = X[np.ix_(sb, ib)], Z[np.ix_(sb, ib)]
        for level in levels:
            target = float(level_corr(XB, ZB, level, coefficient))
            for method in methods:
                if method == "fisher":
                    r = float(level_corr(XA, ZA, level, coefficient))
                    low, high = _fisher_interval(r, effective_n(XA, level=level), coefficient, confidence_level)
                else:
                    res = bootstrap_ci(XA, ZA, level=level, coefficient=coefficient, resample=method.split("-")[1],
                                       n_resamples=n_resamples, confidence_level=confidence_level, rng=child)
                    low, high = res.confidence_interval
                rows.append((trial, level, method, low, high, target))
    frame = pd.DataFrame(rows, columns=["trial", "level", "method", "low", "high", "target"])
    frame["contains"] = (frame["low"] <= frame["target"]) & (frame["target"] <= frame["high"])
    frame["too_high"] = frame["low"] > frame["target"]
    frame["too_low"] = frame["high"] < frame["target"]
    return frame


def coverage_table(trials: pd.DataFrame, *, nominal: float = 0.95, alpha: float = 0.05) -> pd.DataFrame:
    """Coverage per level and method, its binomial SE, mean width, and the mark of Table 1.

    ``best`` marks, per level, the method whose coverage is closest to ``nominal`` among the methods with
    coverage below 1.0, when a one-tailed difference-of-proportions z-test finds its coverage significantly
    different from every other method's (the paper's bold: "closest to 0.95 (and less than 1.0) and
    significantly different"). Coverage of exactly 1.0 is degenerate: an interval that always contains the
    target is too wide to be informative (Fisher's at the summary level), however close 1.0 is to 0.95.
    """
    g = trials.assign(width=trials["high"] - trials["low"]).groupby(["level", "method"], sort=False)
    table = g.agg(coverage=("contains", "mean"), too_high=("too_high", "mean"), too_low=("too_low", "mean"),
                  mean_width=("width", "mean"), trials=("contains", "size")).reset_index()
    table["se"] = np.sqrt(table["coverage"] * (1 - table["coverage"]) / table["trials"])
    table["best"] = False
    for level, block in table.groupby("level", sort=False):
        candidates = block[block["coverage"] < 1.0]
        if candidates.empty:
            continue
        distance = (candidates["coverage"] - nominal).abs()
        best_idx = distance.idxmin()
        best = table.loc[best_idx]
        significant = True
        for idx, other in block.iterrows():
            if idx == best_idx:
                continue
            p1, p2, n1, n2 = best["coverage"], other["coverage"], best["trials"], other["trials"]
            pooled = (p1 * n1 + p2 * n2) / (n1 + n2)
            se = np.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
            z = abs(p1 - p2) / se if se > 0 else (np.inf if p1 != p2 else 0.0)
            significant &= bool(stats.norm.sf(z) < alpha)
        table.loc[best_idx, "best"] = significant
    return table


def compare_coverage(table: pd.DataFrame, paper: Mapping[str, Mapping[str, float]], *,
                     paper_trials: int = PAPER_TRIALS) -> pd.DataFrame:
    """Table 1 next to the paper: ``paper``, ``difference`` (ours - paper) and ``z``, the difference in
    units of its binomial standard error (both coverages are proportions over independent trials).

    Variances p(1 - p) are floored at 1e-4 so that a coverage of exactly 1.0 on both sides gives z = 0
    rather than 0 / 0.

    Examples
    --------
    >>> t = pd.DataFrame({"level": ["system"], "method": ["boot-both"], "coverage": [0.95], "trials": [1000]})
    >>> compare_coverage(t, PAPER_TABLE1_BHANDARI)[["paper", "difference", "z"]].round(2).values.tolist()
    [[0.94, 0.01, 0.98]]
    """
    out = table.copy()
    out["paper"] = [paper.get(lv, {}).get(m, np.nan) for lv, m in zip(out["level"], out["method"])]
    out["difference"] = out["coverage"] - out["paper"]
    ours_var = np.maximum(out["coverage"] * (1 - out["coverage"]), 1e-4) / out["trials"]
    paper_var = np.maximum(out["paper"] * (1 - out["paper"]), 1e-4) / paper_trials
    out["z"] = out["difference"] / np.sqrt(ours_var + paper_var)
    return out


def compare_normality(table: pd.DataFrame, names: Mapping[str, str], column: str | None) -> pd.DataFrame:
    """Appendix Table 2 next to the paper: ``names`` maps each score of ``table`` to the paper's row name
    (``"human"`` for the ground truth); ``column`` is :func:`paper_column` (None: no paper values)."""
    paper = PAPER_TABLE2.get(column or "", {})
    out = table.copy()
    out.insert(1, "paper_name", [names.get(s, "") for s in out["score"]])
    values = [paper.get(names.get(s, ""), (np.nan, np.nan)) for s in out["score"]]
    out["paper_summary_percent_rejected"] = [v[0] for v in values]
    out["paper_system_pvalue"] = [v[1] for v in values]
    return out


# ----------------------------------------------------------------------------------------------------
# R_k: ROUGE-1 on a random subset of the summary's tokens


@numba.njit(cache=True)
def _subset_hits(tok, tok_off, ref_tok, ref_off, order, counts, out, n_vocab):  # pragma: no cover - compiled
    """Clipped unigram hits of the first counts[q, s] tokens of each summary s in a random order."""
    budget = np.zeros(n_vocab, np.int64)
    for s in range(tok_off.shape[0] - 1):
        a, b = tok_off[s], tok_off[s + 1]
        ra, rb = ref_off[s], ref_off[s + 1]
        L = b - a
        for i in range(ra, rb):
            budget[ref_tok[i]] += 1
        cum = np.zeros(L + 1, np.int64)
        for p in range(L):
            t = tok[a + order[a + p]]
            hit = 0
            if budget[t] > 0:
                budget[t] -= 1
                hit = 1
            cum[p + 1] = cum[p] + hit
        for q in range(counts.shape[0]):
            out[q, s] = cum[counts[q, s]]
        for i in range(ra, rb):
            budget[ref_tok[i]] = 0


@dataclass
class RougeOneSubsampler:
    """ROUGE-1 (ROUGE-1.5.5 tokens) of each summary's tokens, or of a random k% of them (Deutsch et al.'s R_k).

    Parameters
    ----------
    summaries, references : sequences (N*M,) in the dataset's cell order
    stem, stop : bool
        ROUGE-1.5.5 ``-m`` and ``-s``.
    stat : {"F", "R", "P"}
        The paper uses F1 on SummEval (recall on datasets where ROUGE recall was the metric).
    """

    summaries: Sequence[str]
    references: Sequence[str]
    stem: bool = True
    stop: bool = False
    stat: str = "F"

    def __post_init__(self):
        from metaeval.metrics.text import process_tokens, tokenize

        if self.stat not in ("F", "R", "P"):
            raise ValueError(f"stat must be 'F', 'R' or 'P', got {self.stat!r}")
        vocab: dict[str, int] = {}

        def ids(text):
            tokens = process_tokens(tokenize(text), stem=self.stem, stop=self.stop)
            return [vocab.setdefault(t, len(vocab)) for t in tokens]

        peer = [ids(s) for s in self.summaries]
        ref = [ids(r) for r in self.references]
        self.tok = np.array([t for p in peer for t in p], np.int64)
        self.tok_off = np.concatenate([[0], np.cumsum([len(p) for p in peer])]).astype(np.int64)
        self.ref_tok = np.array([t for r in ref for t in r], np.int64)
        self.ref_off = np.concatenate([[0], np.cumsum([len(r) for r in ref])]).astype(np.int64)
        self.peer_len = np.diff(self.tok_off).astype(float)
        self.ref_len = np.diff(self.ref_off).astype(float)
        self.n_vocab = max(len(vocab), 1)

    def sample(self, ks: Sequence[float] | np.ndarray, rng) -> np.ndarray:
        """R_k for every k: array (len(ks), n_summaries). Each summary's tokens are put in one random order
        and R_k uses its first int(len * k) tokens (a uniformly random subset without replacement for each k;
        the subsets of one call are nested)."""
        ks = np.asarray(ks, float)
        if ((ks <= 0) | (ks > 1)).any():
            raise ValueError("ks must be fractions in (0, 1]")
        rng = np.random.default_rng(rng)
        keys = rng.random(self.tok.shape[0])
        seg = np.repeat(np.arange(self.tok_off.shape[0] - 1), np.diff(self.tok_off))
        order_global = np.lexsort((keys, seg))
        order = order_global - self.tok_off[seg[order_global]]  # position within its summary
        # int(len * k) tokens, as the paper's code; computed once here so kernel and scores agree
        counts = (np.diff(self.tok_off)[None, :] * ks[:, None]).astype(np.int64)
        hits = np.zeros(counts.shape, np.int64)
        _subset_hits(self.tok, self.tok_off, self.ref_tok, self.ref_off, order.astype(np.int64), counts, hits,
                     self.n_vocab)
        return self._score(hits.astype(float), counts.astype(float))

    def full(self) -> np.ndarray:
        """ROUGE-1 of the whole summaries (k = 100 %): array (n_summaries,)."""
        return self.sample([1.0], 0)[0]

    def _score(self, hits, peer_count):
        with np.errstate(invalid="ignore", divide="ignore"):
            R = np.where(self.ref_len > 0, hits / self.ref_len, 0.0)
            P = np.where(peer_count > 0, hits / peer_count, 0.0)
            F = np.where(P + R > 0, 2 * P * R / (P + R), 0.0)
        return {"F": F, "R": R, "P": P}[self.stat]


def power_simulation(
    full: np.ndarray,
    sampler: RougeOneSubsampler,
    Z: np.ndarray,
    *,
    ks: Sequence[float] = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
    n_trials: int = 1000,
    n_resamples: int = 1000,
    tests: Sequence[str] = ("boot-both", "perm-both", "williams"),
    levels: Sequence[str] = ("system", "summary"),
    coefficient: str = "pearson",
    alpha: float = 0.05,
    rng=None,
    progress: bool = False,
) -> pd.DataFrame:
    """Power of each test to find that ROUGE-1 (``full``) correlates more strongly than R_k.

    Returns one row per trial x k x level x test with the one-sided p-value and whether it rejects at
    ``alpha``. At k = 1 the two metrics are identical, so the rejection rate estimates the type-I error.
    """
    N, M = Z.shape
    X = np.asarray(full, float).reshape(N, M)
    rng = np.random.default_rng(rng)
    rows = []
    for trial, child in enumerate(_progress(rng.spawn(n_trials), progress, desc="trials")):
        Rk = sampler.sample(ks, child)
        for q, k in enumerate(ks):
            Y = Rk[q].reshape(N, M)
            for level in levels:
                for test in tests:
                    if test == "williams":
                        p = williams_test(X, Y, Z, level=level, coefficient=coefficient).pvalue
                    elif test.startswith("perm-"):
                        p = permutation_test(X, Y, Z, level=level, coefficient=coefficient, resample=test[5:],
                                             n_resamples=n_resamples, rng=child).pvalue
                    elif test.startswith("boot-"):
                        p = bootstrap_test(X, Y, Z, level=level, coefficient=coefficient, resample=test[5:],
                                           n_resamples=n_resamples, rng=child).pvalue
                    else:
                        raise ValueError(f"unknown test {test!r}")
                    rows.append((trial, float(k), level, test, float(p)))
    frame = pd.DataFrame(rows, columns=["trial", "k", "level", "test", "pvalue"])
    frame["reject"] = frame["pvalue"] < alpha
    return frame


def power_table(trials: pd.DataFrame) -> pd.DataFrame:
    """Rejection rate (power; type-I error at k = 1) per level, test and k, with its binomial SE."""
    t = trials.groupby(["level", "test", "k"]).agg(power=("reject", "mean"), trials=("reject", "size")).reset_index()
    t["se"] = np.sqrt(t["power"] * (1 - t["power"]) / t["trials"])
    return t


# ----------------------------------------------------------------------------------------------------
# Metric CIs, pairwise tests, normality


def metric_cis(metrics: Mapping[str, np.ndarray], Z, *, coefficient="kendall", levels=("system", "summary"),
               n_resamples=1000, confidence_level=0.95, rng=None) -> pd.DataFrame:
    """Boot-Both CI of every metric's correlation with Z at each level (Figure 4)."""
    rng = np.random.default_rng(rng)
    rows = []
    for level in levels:
        for (name, X), child in zip(metrics.items(), rng.spawn(len(metrics))):
            res = bootstrap_ci(X, Z, level=level, coefficient=coefficient, n_resamples=n_resamples,
                               confidence_level=confidence_level, rng=child)
            rows.append({"level": level, "metric": name, "r": res.statistic, "low": res.confidence_interval.low,
                         "high": res.confidence_interval.high, "se": res.standard_error})
    return pd.DataFrame(rows)


def pairwise_pvalues(metrics: Mapping[str, np.ndarray], Z, *, test="perm-both", coefficient="pearson",
                     levels=("system", "summary"), n_resamples=1000, rng=None) -> dict:
    """Level -> :class:`PairwiseResult` of a one-sided test for every ordered metric pair (Figures 5-6)."""
    rng = np.random.default_rng(rng)
    return {
        level: pairwise_tests(dict(metrics), Z, test=test, level=level, coefficient=coefficient,
                              n_resamples=n_resamples, rng=child)
        for level, child in zip(levels, rng.spawn(len(levels)))
    }


def corrected(pvalues: np.ndarray, *, alpha: float = 0.05, by: str = "row") -> np.ndarray:
    """Cells significant after Bonferroni: per row metric (``by="row"``, Figure 5: each metric against the
    K - 1 others) or over the whole matrix (``by="all"``, Figure 6: one dataset-level family)."""
    p = np.asarray(pvalues, float)
    if by == "row":
        adjusted = np.vstack([bonferroni(row) for row in p])
    elif by == "all":
        adjusted = bonferroni(p)
    else:
        raise ValueError(f"by must be 'row' or 'all', got {by!r}")
    return adjusted < alpha


def normality(scores: Mapping[str, np.ndarray], *, alpha: float = 0.05) -> pd.DataFrame:
    """Appendix Table 2: Shapiro-Wilk p-value of each score's system-level values, and the percentage of
    inputs whose per-input (across systems) scores fail the test at ``alpha``."""
    rows = []
    for name, X in scores.items():
        X = np.asarray(X, float)
        system_p = stats.shapiro(X.mean(axis=1)).pvalue
        per_input = [stats.shapiro(X[:, j]).pvalue for j in range(X.shape[1]) if np.ptp(X[:, j]) > 0]
        rows.append({"score": name, "system_pvalue": system_p,
                     "summary_percent_rejected": (100 * float(np.mean(np.array(per_input) < alpha))
                                                  if per_input else np.nan),
                     "inputs_tested": len(per_input)})
    return pd.DataFrame(rows)
