"""metaeval: the statistics of summarization-metric evaluation.

Exact ROUGE-1.5.5 scores, correlations between metric and human scores at system, summary and global
level, their confidence intervals (Fisher, bootstrap over systems/inputs/both) and tests between metrics
(permutation, paired bootstrap, Williams), vectorized over resamples.

>>> import metaeval
>>> ds = metaeval.datasets.load("fabbri2020")                                      # doctest: +SKIP
>>> metaeval.correlate(ds.matrix("qa-eval.f1"), ds.matrix("expert.relevance"),
...                    level="system", coefficient="kendall")                     # doctest: +SKIP
0.7666666666666667
"""

from __future__ import annotations

from . import datasets
from .correlation import ConfidenceInterval, FisherResult, correlate, effective_n, fisher_ci
from .resampling import BootstrapResult, bootstrap_ci
from .significance import (
    BootstrapTestResult,
    PairwiseResult,
    PermutationResult,
    WilliamsResult,
    bonferroni,
    bootstrap_test,
    holm,
    paired_ttest,
    pairwise_tests,
    permutation_test,
    shapiro,
    williams_test,
)

__version__ = "0.1.0"

# Heavier submodules (numba kernels, sacrebleu, papermill) load on first use: metaeval.rouge, metaeval.graham, ...
_LAZY = {"bleu", "cli", "deutsch", "graham", "notebooks", "plotting", "rouge", "scoring", "text", "variants"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'metaeval' has no attribute {name!r}")

__all__ = [
    "datasets",
    "correlate",
    "fisher_ci",
    "effective_n",
    "bootstrap_ci",
    "permutation_test",
    "bootstrap_test",
    "williams_test",
    "pairwise_tests",
    "paired_ttest",
    "shapiro",
    "bonferroni",
    "holm",
    "ConfidenceInterval",
    "FisherResult",
    "BootstrapResult",
    "PermutationResult",
    "BootstrapTestResult",
    "WilliamsResult",
    "PairwiseResult",
]
