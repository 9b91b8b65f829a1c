"""metaeval: the statistics of summarization-metric evaluation.

Exact ROUGE-1.5.5 scores, correlations between metric and human scores at system, summary and global
level, their confidence intervals (Fisher, bootstrap over systems/inputs/both) and tests between metrics
(permutation, paired bootstrap, Williams), vectorized over resamples.

The package is laid out by layer; each layer imports only from the layers above it in this list:

=================  ==========================================================================
``metrics``        text processing, ROUGE-1.5.5, BLEU, GRouge, embedding metrics, combinations
``stats``          correlation, resampling (bootstrap), significance tests, study planning
``data``           datasets (the dataset contract), synthetic data, cached scoring
``studies``        one module per paper (graham, deutsch, lin, ...) and plotting
``run``            notebook runner, parameter sweeps, the command line
=================  ==========================================================================

Every public module is also reachable under a short name, e.g. ``metaeval.rouge`` is
``metaeval.metrics.rouge`` and ``metaeval.datasets`` is ``metaeval.data.datasets``.

>>> import metaeval
>>> ds = metaeval.datasets.load("fabbri2020")
>>> round(metaeval.correlate(ds.matrix("qa-eval.f1"), ds.matrix("expert.relevance"),
...                          level="system", coefficient="kendall"), 4)
0.7667
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
from typing import TYPE_CHECKING, Any, Sequence

from metaeval._io import use_numba_cache
from metaeval._warnings import DegenerateResultWarning

# before any compiled module: numba's cache in a folder named by the library's fingerprint, never stale code
use_numba_cache()

# The public functions and results load with their module on first use (PEP 562), so that ``import
# metaeval`` (and every ``import metaeval.<module>``, which runs this file first) costs no scipy.stats, pandas
# or numba import: a ROUGE run never pays for the statistics it does not use.
_LAZY: dict[str, str] = {
    **{name: "metaeval.stats.correlation" for name in ("ConfidenceInterval", "FisherResult", "correlate",
                                                        "effective_n", "fisher_ci")},
    **{name: "metaeval.stats.resampling" for name in ("BootstrapResult", "bootstrap_ci")},
    **{name: "metaeval.stats.significance" for name in (
        "BootstrapTestResult", "PairwiseResult", "PermutationResult", "WilliamsResult", "bonferroni",
        "bootstrap_test", "holm", "paired_ttest", "pairwise_tests", "permutation_test", "shapiro",
        "williams_test")},
    # the pair statistics and many-test tools (Kocmi 2021, Deutsch 2022/2023, Thompson 2024, WMT)
    **{name: "metaeval.stats.agreement" for name in (
        "pairwise_accuracy", "tie_calibrated_accuracy", "soft_pairwise_accuracy", "delta_correlations",
        "TieCalibrationResult", "SoftPairwiseResult", "DeltaCorrelationResult")},
    **{name: "metaeval.stats.multiplicity" for name in (
        "significance_clusters", "partial_conjunction_test", "ClusterResult", "PartialConjunctionResult")},
    "EarlyStopping": "metaeval.stats.significance",
}

if TYPE_CHECKING:  # what the names above are, for type checkers
    from metaeval.data import datasets
    from metaeval.stats.correlation import ConfidenceInterval, FisherResult, correlate, effective_n, fisher_ci
    from metaeval.stats.resampling import BootstrapResult, bootstrap_ci
    from metaeval.stats.significance import (
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
    from metaeval.stats.agreement import (
        DeltaCorrelationResult,
        SoftPairwiseResult,
        TieCalibrationResult,
        delta_correlations,
        pairwise_accuracy,
        soft_pairwise_accuracy,
        tie_calibrated_accuracy,
    )
    from metaeval.stats.multiplicity import (
        ClusterResult,
        PartialConjunctionResult,
        partial_conjunction_test,
        significance_clusters,
    )
    from metaeval.stats.significance import EarlyStopping

    __version__: str


# Short public name -> module in its layer. Heavy modules (numba kernels, sacrebleu, papermill,
# scikit-learn) load on first use.
_ALIASES: dict[str, str] = {
    **{m: f"metaeval.metrics.{m}" for m in ("text", "variants", "rouge", "bleu", "wordnet", "grouge", "embeddings",
                                            "combination")},
    **{m: f"metaeval.stats.{m}" for m in ("correlation", "resampling", "significance", "planning", "agreement",
                                          "multiplicity", "alt_test",
                                          "label_budget")},
    **{m: f"metaeval.data.{m}" for m in ("datasets", "synthetic", "scoring", "tabular", "defaults")},
    **{m: f"metaeval.studies.{m}" for m in ("graham", "deutsch", "lin", "miloulis", "shafieibavani", "plotting",
                                            "card", "deutsch2022", "few_labels")},
    **{m: f"metaeval.run.{m}" for m in ("notebooks", "sweep", "cli")},
}


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        # The alias is the very module object of the layer, so state and identity are shared.
        module = importlib.import_module(self.target)
        self._own_spec = module.__spec__
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        # importlib stamped the alias spec on the module; give it back its own (reload, pickling, numba cache).
        module.__spec__ = self._own_spec


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Makes ``import metaeval.rouge`` (and ``from metaeval.rouge import score``) load the layered module."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        prefix, _, name = fullname.partition(".")
        if prefix != __name__ or name not in _ALIASES:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(_ALIASES[name]))


if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
    sys.meta_path.insert(0, _AliasFinder())


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    elif name in _ALIASES:
        return importlib.import_module(f"{__name__}.{name}")
    elif name == "__version__":
        from metaeval._version import __version__ as value
    else:
        raise AttributeError(f"module 'metaeval' has no attribute {name!r}")
    globals()[name] = value  # later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_ALIASES) | set(_LAZY) | {"__version__"})


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
    "DegenerateResultWarning",
    "pairwise_accuracy",
    "tie_calibrated_accuracy",
    "soft_pairwise_accuracy",
    "delta_correlations",
    "significance_clusters",
    "partial_conjunction_test",
    "TieCalibrationResult",
    "SoftPairwiseResult",
    "DeltaCorrelationResult",
    "ClusterResult",
    "PartialConjunctionResult",
    "EarlyStopping",
]
