"""The atlas's finding rules: each seed paper's headline claim, quoted, and the one test the atlas runs for it on
every dataset (notebook 70's finding matrix, :func:`metaeval.studies.atlas.findings`).

Each rule is one small registered function with a frozen record (:class:`FindingRule`: name, paper, the claim in
the paper's words and where it is, the rule in words, the minimum data) in :data:`RULES`; its options
(:class:`FindingOptions`: alpha, resamples, Monte-Carlo trials) are parameters. A cell's status is one of

* ``holds``: the rule's test supports the claim (a significant result in the claim's direction, or the
  descriptive quantity the claim names is as the paper says);
* ``does not hold``: the test contradicts the claim (a significant result against it, or the quantity is not as
  the paper says);
* ``not shown``: the claim asserts a difference and the test does not reject (no evidence either way);
* ``not refuted``: the claim asserts *no* difference and the test does not reject; the cell gives the test's
  power at the observed correlations, so that a test that could not have rejected is not read as support;
* ``cannot be tested here``: below the rule's minimum data, or a metric the rule needs is absent (the reason
  says which).

A dataset without any metric (no metric scores and no texts to compute ROUGE from) can test no rule: it is
listed apart (:func:`untestable`), not as a row of "cannot be tested" cells.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from metaeval.stats.multiplicity import adjust
from metaeval.stats.reliability import MIN_SIZES, MinimumSizes
from metaeval.stats.resampling import bootstrap_ci
from metaeval.stats.significance import PairwiseResult, pairwise_tests, williams_matrix, williams_pvalue
from metaeval.studies import lin
from metaeval.studies.deutsch2022 import closest_pairs

__all__ = [
    "HOLDS",
    "NOT_HOLDS",
    "NOT_SHOWN",
    "NOT_REFUTED",
    "UNTESTABLE",
    "STATUSES",
    "MIN_SYSTEMS",
    "MIN_INPUTS",
    "FindingData",
    "FindingOptions",
    "Verdict",
    "FindingRule",
    "RULES",
    "is_rouge",
    "untestable",
    "evaluate",
    "rule_table",
]

HOLDS, NOT_HOLDS, UNTESTABLE = "holds", "does not hold", "cannot be tested here"
NOT_SHOWN, NOT_REFUTED = "not shown", "not refuted"
STATUSES = (HOLDS, NOT_HOLDS, NOT_SHOWN, NOT_REFUTED, UNTESTABLE)

#: No verdict below these sizes (every rule; a rule may ask for more): the one record of minimum sizes,
#: :data:`metaeval.stats.reliability.MIN_SIZES` (a Boot-Both resample of 3 systems draws 2.1 distinct systems on
#: average, and a bootstrap "interval" [1.00, 1.00] is an artefact, not evidence).
MIN_SYSTEMS, MIN_INPUTS = MIN_SIZES.systems, MIN_SIZES.inputs


def is_rouge(name: str) -> bool:
    """A ROUGE variant by its name: computed (``"ROUGE-2 F"``) or a dataset's own (``"Rouge 2"``,
    ``"rouge-1.f1"``, ``"ROUGE-1 F-Score"``).

    >>> [is_rouge(n) for n in ("ROUGE-2 F", "Rouge 1", "rouge-1.f1", "BLEU", "maynez.R1")]
    [True, True, True, False, False]
    """
    return name.lower().startswith("rouge")


@dataclass(frozen=True)
class FindingData:
    """What a rule sees of one dataset.

    Attributes
    ----------
    dataset : str
    metrics : mapping of str to array (N, M)
        The atlas's metrics (:func:`metaeval.studies.atlas.dataset_metrics`): ROUGE and sentence BLEU computed
        from the texts (``"ROUGE-1 R"``, ..., ``"BLEU"``) and the dataset's own scores.
    human : array (N, M)
        The default human score.
    no_texts : str or None
        Why ROUGE and BLEU could not be computed from texts (None: they were).
    corpus_bleu : array (N,) or None
        Graham's system-level BLEU (:func:`metaeval.studies.graham.corpus_bleu`), None without texts.
    pair_tests : PairwiseResult or None
        System-level one-sided Perm-Both Pearson tests between the metrics if already run (notebook 70 runs them
        for the partial conjunction tests); None: a rule that needs them runs them.
    rouge1_single_ref : array (N, M) or None
        ROUGE-1 recall against the first reference only (Lin's claim is for a single reference); None: the
        dataset's ``"ROUGE-1 R"`` is used (with all its references) and the cell says so.
    """

    dataset: str
    metrics: Mapping[str, np.ndarray]
    human: np.ndarray
    no_texts: str | None = None
    corpus_bleu: np.ndarray | None = None
    pair_tests: PairwiseResult | None = None
    rouge1_single_ref: np.ndarray | None = None

    @property
    def n_systems(self) -> int:
        return int(self.human.shape[0])

    @property
    def n_inputs(self) -> int:
        return int(self.human.shape[1])


@dataclass(frozen=True)
class FindingOptions:
    """The rules' parameters: ``alpha`` (every test's level; intervals at 1 - alpha), ``n_resamples`` (Boot-Both
    resamples; Lin's document resamples), ``n_permutations`` (Perm-Both), ``power_trials`` (normal simulations of
    Williams' test's power; Monte-Carlo standard error <= 0.5 / sqrt(trials)), ``lin_step`` (document counts
    tried: every ``lin_step``-th; Lin used 5), ``width`` (Deutsch 2021's "wide"), ``few`` (Deutsch 2021's
    "many fail": the share of non-ROUGE metrics improving over ROUGE must be below it)."""

    alpha: float = 0.05
    n_resamples: int = 1000
    n_permutations: int = 1000
    power_trials: int = 2000
    lin_step: int = 5
    width: float = 0.25
    few: float = 0.5


@dataclass(frozen=True)
class Verdict:
    """A rule's result on one dataset: status, the value it rests on (``measure`` names it) and the reason."""

    status: str
    value: float
    measure: str
    reason: str


@dataclass(frozen=True)
class FindingRule:
    """One finding: the paper's claim quoted (``claim``, from ``where``), the test the atlas runs (``rule``), the
    minimum data and the metrics it needs (``needs``: computed from texts; ``needs_own``: a predicate on the
    metric names with its reason), and the function that returns the :class:`Verdict`."""

    name: str
    paper: str
    claim: str
    where: str
    rule: str
    test: Callable[[FindingData, FindingOptions, np.random.Generator], Verdict]
    min_systems: int = MIN_SYSTEMS
    min_inputs: int = MIN_INPUTS
    needs: tuple[str, ...] = ()
    needs_metrics: Callable[[Sequence[str]], str | None] | None = None

    @property
    def minimum(self) -> str:
        extra = f"; metrics {', '.join(self.needs)} computed from texts" if self.needs else ""
        return f"{self.min_systems} systems x {self.min_inputs} inputs{extra}"

    def why_not(self, data: FindingData) -> str | None:
        """Why this rule cannot be tested on ``data`` (None: it can)."""
        short = MinimumSizes(self.min_systems, self.min_inputs).shortfall(data.n_systems, data.n_inputs)
        if short:
            return f"cannot be tested: {short}"
        missing = [m for m in self.needs if m not in data.metrics]
        if missing:
            return data.no_texts or f"{', '.join(missing)} not computed"
        if self.needs_metrics is not None:
            return self.needs_metrics(list(data.metrics))
        return None


RULES: dict[str, FindingRule] = {}


def _register(**facts) -> Callable:
    def wrap(test):
        RULES[facts["name"]] = FindingRule(test=test, **facts)
        return test
    return wrap


def untestable(metrics: Mapping[str, np.ndarray]) -> str | None:
    """Why a dataset can test no finding at all (None: it has a metric): it is then listed apart from the
    matrix."""
    if not metrics:
        return "no metric to test: no metric scores of its own and no summaries with references to compute ROUGE from"
    return None


def evaluate(rule: FindingRule, data: FindingData, options: FindingOptions = FindingOptions(),
             rng: np.random.Generator | int | None = None) -> dict:
    """One cell of the finding matrix: ``rule`` on ``data``, with the claim, the rule and the data size.

    Examples
    --------
    >>> g = np.random.default_rng(0)
    >>> Z = g.normal(size=(8, 1)) + g.normal(size=(8, 20))
    >>> cell = evaluate(RULES["deutsch2021_width"], FindingData("d", {"ROUGE-2 F": Z.copy()}, Z))
    >>> cell["status"], cell["value"], cell["measure"]   # a perfect metric: tau = 1 in every resample
    ('does not hold', 0.0, 'interval width')
    >>> evaluate(RULES["deutsch2021_width"], FindingData("d", {"ROUGE-2 F": Z[:3]}, Z[:3]))["reason"]
    'cannot be tested: 3 systems (at least 5 needed)'
    """
    why = rule.why_not(data)
    if why is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # degenerate resamples are counted by the rules
            verdict = rule.test(data, options, np.random.default_rng(rng))
    else:
        verdict = Verdict(UNTESTABLE, np.nan, "", why)
    return {"dataset": data.dataset, "finding": rule.name, "paper": rule.paper, "status": verdict.status,
            "value": verdict.value, "measure": verdict.measure, "systems": data.n_systems,
            "inputs": data.n_inputs, "reason": verdict.reason, "claim": rule.claim, "rule": rule.rule,
            "minimum": rule.minimum}


def rule_table() -> pd.DataFrame:
    """One row per rule: its paper, the claim quoted and where, the rule and the minimum data."""
    return pd.DataFrame([{"finding": r.name, "paper": r.paper, "claim": r.claim, "where": r.where, "rule": r.rule,
                          "minimum": r.minimum} for r in RULES.values()])


# ----------------------------------------------------------------------------------------------------
# The rules


def _williams_power(scores: np.ndarray, human: np.ndarray, alpha: float, n_trials: int,
                    rng: np.random.Generator) -> float:
    """Monte-Carlo power of the two one-sided Williams tests between ``scores[:, 0]`` and ``scores[:, 1]`` (either
    rejecting at ``alpha``) when the N systems' scores are normal with the observed correlations of the two
    metrics and the human score."""
    R = np.corrcoef(np.column_stack([scores, human]), rowvar=False)
    vals, vecs = np.linalg.eigh(R)
    root = vecs * np.sqrt(np.clip(vals, 0, None))  # R = root @ root.T, also when R is singular (few systems)
    n = scores.shape[0]
    draws = rng.standard_normal((n_trials, n, 3)) @ root.T
    draws -= draws.mean(axis=1, keepdims=True)
    draws /= np.linalg.norm(draws, axis=1, keepdims=True)
    C = np.einsum("tni,tnj->tij", draws, draws)
    r_a, r_b, r_ab = C[:, 0, 2], C[:, 1, 2], C[:, 0, 1]
    _, p_a = williams_pvalue(r_a, r_b, r_ab, n, "greater")
    _, p_b = williams_pvalue(r_b, r_a, r_ab, n, "greater")
    return float(np.mean((p_a < alpha) | (p_b < alpha)))


@_register(
    name="graham_bleu", paper="Graham (2015)",
    claim="[our evaluation reveals] machine translation metric BLEU to have performance on-par with ROUGE for the "
          "purpose of evaluation of summarization systems",
    where="abstract; Section 4: the difference from the best-performing ROUGE variant is 'not statistically "
          "significant'",
    rule="Williams' test (one-sided, no correction, as Graham) between corpus BLEU (studies.graham.corpus_bleu) "
         "and the best-performing ROUGE variant (mean of the summaries' ROUGE-1/2/L R or F; highest system-level "
         "Pearson r), both directions: does not hold when either is significantly better; otherwise not refuted, "
         "with the power of the two tests at the observed correlations (normal simulation)",
    needs=("BLEU", "ROUGE-1 R"),
)
def _graham(data: FindingData, o: FindingOptions, rng: np.random.Generator) -> Verdict:
    if data.corpus_bleu is None:
        return Verdict(UNTESTABLE, np.nan, "", "corpus BLEU was not computed")
    rouge = [k for k in data.metrics if k.startswith("ROUGE-")]
    S = np.column_stack([np.mean(data.metrics[k], axis=1) for k in rouge] + [data.corpus_bleu])
    h = np.mean(data.human, axis=1)
    w = williams_matrix(S, h, names=[*rouge, "corpus BLEU"])
    best = int(np.nanargmax(w.correlations[:-1]))
    r_rouge, r_bleu = w.correlations[best], w.correlations[-1]
    p_rouge, p_bleu = float(w.pvalues[best, -1]), float(w.pvalues[-1, best])
    said = (f"best ROUGE variant {rouge[best]} r = {r_rouge:.3f}, corpus BLEU r = {r_bleu:.3f} over "
            f"{data.n_systems} systems; Williams one-sided p = {p_rouge:.3g} (ROUGE better), {p_bleu:.3g} (BLEU "
            "better)")
    if p_rouge < o.alpha or p_bleu < o.alpha:
        winner = rouge[best] if p_rouge < o.alpha else "corpus BLEU"
        return Verdict(NOT_HOLDS, min(p_rouge, p_bleu), "smaller one-sided p",
                       f"{said}: {winner} is significantly better at alpha = {o.alpha}")
    power = _williams_power(S[:, [best, -1]], h, o.alpha, o.power_trials, rng)
    se = np.sqrt(power * (1 - power) / o.power_trials)
    return Verdict(NOT_REFUTED, power, "power at the observed correlations",
                   f"not refuted (power {power:.2f}): {said}; neither is significantly better at alpha = {o.alpha}, "
                   f"and these tests would reject with probability {power:.2f} (Monte-Carlo s.e. {se:.3f}, "
                   f"{o.power_trials} normal simulations) if the true correlations were the observed ones: "
                   "non-rejection, not evidence of equal performance")


@_register(
    name="lin_documents", paper="Lin (2004)",
    claim="Achieving statistically significant results in automatic summarization evaluation using single "
          "reference was feasible if sample size was large enough.",
    where="Section 7 (Conclusions); the sample size is found as in Section 6 ('we reached significant level at "
          "sample size of 31 documents')",
    rule="Lin's rule (studies.lin): the fewest documents at which ROUGE-1 recall's (against the first reference "
         "only, as the claim) system-level Pearson r, mean over document bootstraps minus half its 95% interval, "
         "exceeds the critical r (two-sided alpha, df = systems - 2), against the documents available: holds when "
         "reached within them (value: documents needed); not shown when even all of them are too few",
    needs=("ROUGE-1 R",),
)
def _lin(data: FindingData, o: FindingOptions, rng: np.random.Generator) -> Verdict:
    M = data.n_inputs
    sizes = sorted({*range(o.lin_step, M + 1, o.lin_step), M})
    X = data.rouge1_single_ref if data.rouge1_single_ref is not None else data.metrics["ROUGE-1 R"]
    refs = "1 reference" if data.rouge1_single_ref is not None else "the dataset's ROUGE-1 R (all its references)"
    summary, _ = lin.sample_size_curves(X, data.human, sizes, n_resamples=o.n_resamples, rng=rng)
    r_crit = lin.critical_r(data.n_systems, o.alpha)
    need = lin.critical_sample_size(summary, r_crit)
    last = summary[summary["size"] == M].iloc[0]
    at_all = float(last["pearson_M"] - last["pearson_dCI"] / 2)
    how = (f"critical r {r_crit:.3f} (df = {data.n_systems - 2}, two-sided {o.alpha}); ROUGE-1 recall with {refs}; "
           f"{o.n_resamples} document resamples per size, sizes every {o.lin_step}")
    if np.isnan(need):
        return Verdict(NOT_SHOWN, np.nan, "documents needed",
                       f"more than the {M} available documents are needed: with all {M}, r - dCI/2 = {at_all:.3f} "
                       f"does not exceed the {how}")
    return Verdict(HOLDS, need, "documents needed",
                   f"{int(need)} documents needed, {M} available: from {int(need)} documents on, r - dCI/2 exceeds "
                   f"the {how}")


@_register(
    name="deutsch2021_width", paper="Deutsch et al. (2021)",
    claim="We find that the confidence intervals are rather wide, demonstrating high uncertainty in the "
          "reliability of automatic metrics.",
    where="abstract; Section 6.1: ROUGE-2's system-level intervals [.49, .74] (TAC'08) and [-.09, .84] (CNN/DM)",
    rule="ROUGE-2 F's system-level Kendall tau: its 1 - alpha Boot-Both percentile interval is at least 0.25 wide "
         "(the narrowest ROUGE-2 system-level interval the paper reports, TAC'08 [.49, .74]): holds, else does "
         "not hold (a description of the interval, no test)",
    needs=("ROUGE-2 F",),
)
def _deutsch2021_width(data: FindingData, o: FindingOptions, rng: np.random.Generator) -> Verdict:
    boot = bootstrap_ci(data.metrics["ROUGE-2 F"], data.human, level="system", coefficient="kendall",
                        resample="both", n_resamples=o.n_resamples, confidence_level=1 - o.alpha, rng=rng)
    lo, hi = boot.confidence_interval
    width = float(hi - lo)
    if np.isnan(width):
        return Verdict(UNTESTABLE, np.nan, "", "the Boot-Both interval is undefined (constant scores)")
    return Verdict(HOLDS if width >= o.width else NOT_HOLDS, width, "interval width",
                   f"ROUGE-2 F system-level Kendall tau {1 - o.alpha:.0%} Boot-Both interval [{lo:.2f}, {hi:.2f}], "
                   f"width {width:.2f} {'>=' if width >= o.width else '<'} {o.width} ({o.n_resamples} resamples, "
                   f"{data.n_systems} systems x {data.n_inputs} inputs)")


def _rouge_and_others(names: Sequence[str]) -> str | None:
    rouge = [n for n in names if is_rouge(n)]
    others = [n for n in names if not is_rouge(n)]
    if not rouge:
        return "no ROUGE variant among the metrics"
    if len(others) < 2:
        return (f"{len(others)} metric{'s' if len(others) != 1 else ''} besides ROUGE "
                f"({', '.join(others) or 'none'}): a share of metrics needs at least 2")
    return None


@_register(
    name="deutsch2021_over_rouge", paper="Deutsch et al. (2021)",
    claim="although many metrics fail to show statistical improvements over ROUGE, two recent works, QAEval and "
          "BERTScore, do in some evaluation settings",
    where="abstract; Section 6.2: 'none of the other metrics consistently outperform all variants of ROUGE'",
    rule="for each metric that is not ROUGE: one-sided Perm-Both tests (system-level Pearson) against every ROUGE "
         "variant of the dataset, Bonferroni over that metric's tests (the paper corrects per metric); it "
         "improves over ROUGE when every test is significant at alpha. Holds when fewer than half of the "
         "non-ROUGE metrics do ('many fail' read as a majority: the atlas's reading, the paper gives no share; it "
         "found 2 of its 9 metrics improving in some settings), else does not hold",
    needs_metrics=_rouge_and_others,
)
def _deutsch2021_over_rouge(data: FindingData, o: FindingOptions, rng: np.random.Generator) -> Verdict:
    names = list(data.metrics)
    t = data.pair_tests
    if t is None or not set(names) <= set(t.names):
        t = pairwise_tests(dict(data.metrics), data.human, test="perm-both", level="system", coefficient="pearson",
                           n_resamples=o.n_permutations, rng=rng)
    rouge = [n for n in names if is_rouge(n)]
    others = [n for n in names if not is_rouge(n)]
    idx = {n: t.names.index(n) for n in names}
    improves = []
    for x in others:
        p = adjust([t.pvalues[idx[x], idx[r]] for r in rouge], correction="bonferroni")
        if np.all(p <= o.alpha):
            improves.append(x)
    share = len(improves) / len(others)
    status = HOLDS if share < o.few else NOT_HOLDS
    return Verdict(status, share, "share of non-ROUGE metrics improving over every ROUGE variant",
                   f"{len(improves)} of {len(others)} metrics ({share:.0%}) significantly improve over every ROUGE "
                   f"variant ({', '.join(rouge)}): {', '.join(improves) or 'none'} (one-sided Perm-Both, "
                   f"{o.n_permutations} permutations, Bonferroni over each metric's {len(rouge)} tests, alpha "
                   f"{o.alpha}); the others are not shown to, which is not evidence that they are no better")


@_register(
    name="deutsch2022_close", paper="Deutsch et al. (2022)",
    claim="This allows us to demonstrate that our best estimate of the correlation of ROUGE to human judgments "
          "is near 0 in realistic scenarios.",
    where="abstract ('realistic scenarios': system pairs separated by small differences in ROUGE); Figure 6",
    rule="notebook 24's buckets (studies.deutsch2022.closest_pairs): ROUGE-2 F's Kendall tau over the 10% of "
         "system pairs closest by ROUGE-2's own difference against tau over all pairs; holds when the 1 - alpha "
         "Boot-Both interval of the difference (same resamples) lies below 0, does not hold when it lies above, "
         "not shown when it includes 0",
    min_systems=8,  # 28 pairs: the closest 10 % hold at least 3
    needs=("ROUGE-2 F",),
)
def _deutsch2022_close(data: FindingData, o: FindingOptions, rng: np.random.Generator) -> Verdict:
    c = closest_pairs(data.metrics["ROUGE-2 F"], data.human, n_resamples=o.n_resamples,
                      confidence_level=1 - o.alpha, rng=rng)
    said = (f"tau {c.close:.2f} on the {c.n_close} closest pairs vs {c.every:.2f} on all {c.n_every}; difference "
            f"{c.difference:+.2f}, {1 - o.alpha:.0%} Boot-Both interval [{c.ci_low:.2f}, {c.ci_high:.2f}] "
            f"({c.n_resamples_used} of {o.n_resamples} resamples defined)")
    if np.isnan(c.difference) or np.isnan(c.ci_low):
        return Verdict(UNTESTABLE, np.nan, "", f"{said}: undefined")
    if c.ci_high < 0:
        return Verdict(HOLDS, c.difference, "tau(closest 10%) - tau(all)",
                       f"{said}: significantly lower on close pairs")
    if c.ci_low > 0:
        return Verdict(NOT_HOLDS, c.difference, "tau(closest 10%) - tau(all)",
                       f"{said}: significantly higher on close pairs")
    return Verdict(NOT_SHOWN, c.difference, "tau(closest 10%) - tau(all)",
                   f"{said}: the interval includes 0, so the data do not show a lower tau on close pairs")
