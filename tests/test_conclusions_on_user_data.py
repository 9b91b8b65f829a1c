"""Generated conclusions name only the metrics a run analysed (issue 25 item 5): notebook 22 on a small user
dataset (5 systems x 6 inputs, two metrics of its own) never mentions the paper's metrics it does not hold."""

from __future__ import annotations

import re

from datasets_factory import write_dataset

import metaeval
from metaeval.run.notebooks import run_notebook


def test_notebook_22_conclusions_name_only_analysed_metrics(tmp_path):
    exp = write_dataset(tmp_path / "study", "yml", n_systems=5, n_inputs=6, n_refs=2, seed=5)
    ds = metaeval.datasets.load(exp.path)
    metrics = list(exp.metrics)
    out = tmp_path / "out"
    run_notebook("22", {"dataset": str(exp.path), "metrics": metrics, "our_rouge": [], "n_resamples": 50,
                        "n_permutations": 50, "output_dir": str(out)})
    text = (out / "figure4_conclusions.md").read_text() + (out / "figure5_6_conclusions.md").read_text()
    analysed = {ds.display_name(m) for m in metrics}
    # what the conclusions do name: the widest and narrowest interval of each level, from the analysed metrics
    named = set(re.findall(r"\(([^()]*?)\)[;.]", text)) & {ds.display_name(m) for m in ds.score_names}
    assert named and named <= analysed, (named, analysed)
    for absent in ("QAEval", "BERTScore", "ROUGE", "paper"):
        assert absent not in text, (absent, text)
