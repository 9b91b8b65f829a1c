"""Claims checked against tables: the numbers of the generated conclusions and of the results README's "ours"
columns, recomputed from the committed CSVs, so that a wrong count or a wrong "best" fails here instead of
being found by a reader.

Covered: notebook 24's four conclusion files (both datasets), notebook 20's Table 1 conclusions, notebook 50's
"best lam" sentences (every committed folder made by the current notebook source), and the README's Deutsch
2021 (Table 1 cells, the standard-error sentence, Figure 4) and Deutsch 2022 (delta row, Figure 6 table,
pairwise accuracy, ranking stability, replicability) sections. Each check parses the sentence with a pattern
and recomputes its numbers independently from the CSV (never with the code that wrote the sentence).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"
README = RESULTS / "README.md"
DATASETS = ("summeval", "realsumm")
NUM = r"(-?\d+(?:\.\d+)?)"


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _f2(x: float) -> str:
    return f"{x:.2f}"


def _shown(said: str, value: float, scale: float = 1.0) -> bool:
    """``said`` (a number as printed) is ``value`` (from a CSV written with 4 decimals) times ``scale``, rounded to
    the digits shown: within half a unit of its last digit plus the CSV's own rounding."""
    digits = len(said.split(".")[1]) if "." in said else 0
    return abs(float(said) - value * scale) <= 0.5 * 10.0**-digits + 0.5e-4 * scale + 1e-12


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start:] if end < 0 else text[start:end]


# -- notebook 24 ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dataset", DATASETS)
def test_delta_conclusions(dataset):
    folder = RESULTS / "deutsch2022" / dataset
    table = pd.read_csv(folder / "delta_correlations.csv")
    text = _read(folder / "delta_conclusions.md")
    pattern = re.compile(
        r"\* \*\*(?P<m>[^*]+)\*\*: τ = (?P<t>-?[\d.]+) \[(?P<l>-?[\d.]+), (?P<h>-?[\d.]+)\] over the (?P<p>\d+) % of "
        r"pairs closest by its own score \((?P<n>\d+) pairs, \|difference\| ≤ (?P<u>[\d.e-]+)\), τ = (?P<t2>-?[\d.]+) "
        r"\[(?P<l2>-?[\d.]+), (?P<h2>-?[\d.]+)\] over all (?P<n2>\d+) pairs; the closest-pairs interval "
        r"(?P<inc>includes|excludes) 0\.")
    seen = []
    for m in pattern.finditer(text):
        block = table[table["metric"] == m["m"]]
        first, last = block.iloc[0], block.iloc[-1]
        assert int(m["p"]) == first["percent"] and int(m["n"]) == first["n_pairs"], m["m"]
        assert (m["t"], m["l"], m["h"]) == tuple(map(_f2, (first["statistic"], first["ci_low"], first["ci_high"])))
        assert float(m["u"]) == pytest.approx(first["high"], rel=5e-3), m["m"]
        assert (m["t2"], m["l2"], m["h2"]) == tuple(map(_f2, (last["statistic"], last["ci_low"], last["ci_high"])))
        assert int(m["n2"]) == last["n_pairs"] == len(_pairs(table)), m["m"]
        assert (m["inc"] == "includes") == bool(first["ci_low"] <= 0 <= first["ci_high"]), m["m"]
        seen.append(m["m"])
    assert seen == list(dict.fromkeys(table["metric"])), "every metric of the table has its sentence"
    firsts = table.groupby("metric", sort=False).first()
    k = int(((firsts["ci_low"] <= 0) & (firsts["ci_high"] >= 0)).sum())
    assert f"For {k} of {len(firsts)} metrics the 95% Boot-Both interval" in text


def _pairs(table):
    """All system pairs of the dataset: the 100 % bucket's count (N (N - 1) / 2)."""
    n = int(table["n_pairs"].max())
    systems = int(round((1 + np.sqrt(1 + 8 * n)) / 2))
    assert systems * (systems - 1) // 2 == n
    return range(n)


@pytest.mark.parametrize("dataset", DATASETS)
def test_replicability_conclusions(dataset):
    folder = RESULTS / "deutsch2022" / dataset
    table = pd.read_csv(folder / "replicability.csv")
    text = _read(folder / "replicability_conclusions.md")
    n_all = int((table["n_replicated"] == table["n_datasets"]).sum())
    n_one = int((table["n_replicated"] >= 1).sum())
    d = int(table["n_datasets"].iloc[0])
    assert re.search(rf"^\* {n_all} of {len(table)} ordered metric pairs beat each other on all {d} datasets .*; "
                     rf"{n_one} on at least one\.", text, re.M), text.splitlines()[0]
    for m in re.finditer(r"^  \* (.+?) > (.+?): summeval p = ([\d.e-]+), realsumm p = ([\d.e-]+); on all: p = "
                         r"([\d.e-]+)\.", text, re.M):
        row = table[(table["metric_a"] == m[1]) & (table["metric_b"] == m[2])].iloc[0]
        assert row["n_replicated"] == row["n_datasets"]
        for got, col in zip(m.groups()[2:], ("p_summeval", "p_realsumm", "p_all")):
            assert float(got) == pytest.approx(row[col], rel=1e-2), (m[0], col)


@pytest.mark.parametrize("dataset", DATASETS)
def test_agreement_conclusions(dataset):
    folder = RESULTS / "deutsch2022" / dataset
    table = pd.read_csv(folder / "agreement_table.csv")
    text = _read(folder / "agreement_conclusions.md")
    listed = re.search(r"permutations\): (.*)\.\n", text)[1]
    pairs = re.findall(r"([^,()]+?) \((\d\.\d{3})\)", listed)
    top = table[table["rank"] == 1]
    assert [p[0].strip() for p in pairs] == top["metric"].tolist()
    assert [p[1] for p in pairs] == [f"{v:.3f}" for v in top["pairwise_accuracy"]]
    assert f"* {int(table['rank'].max())} cluster(s) in all." in text
    spa = table.loc[table["soft_pairwise_accuracy"].idxmax()]
    assert f"Soft pairwise accuracy is highest for {spa['metric']} ({spa['soft_pairwise_accuracy']:.3f})" in text
    acc = table.loc[table["acc_eq_summary"].idxmax()]
    m = re.search(r"summary-level acc_eq for (.+?) \((\d\.\d{3}) at", text)
    assert m[1] == acc["metric"] and _shown(m[2], acc["acc_eq_summary"])


@pytest.mark.parametrize("dataset", DATASETS)
def test_stability_conclusions(dataset):
    folder = RESULTS / "deutsch2022" / dataset
    table = pd.read_csv(folder / "ranking_stability.csv")
    text = _read(folder / "stability_conclusions.md")
    k = int(table["documents"].min())
    small = table[table["documents"] == k].set_index("score")
    m = re.search(rf"With {k} documents the humans' ranking agrees with their ranking on all \d+ at τ = {NUM} on "
                  rf"average \(95% of subsets in \[{NUM}, {NUM}\]\); the metrics range from τ = {NUM} to {NUM}\.", text)
    human = small.index[-1]  # the notebook appends the human score after the metrics
    metrics = small.drop(index=human)
    assert m.groups() == tuple(map(_f2, (small.loc[human, "tau_mean"], small.loc[human, "tau_low"],
                                         small.loc[human, "tau_high"], metrics["tau_mean"].min(),
                                         metrics["tau_mean"].max())))
    closer = int((metrics["tau_mean"] > small.loc[human, "tau_mean"]).sum())
    assert f"* {closer} of {len(metrics)} metrics rank the systems on {k} documents closer" in text


# -- notebook 50: the best lam ------------------------------------------------------------------------------------


def _grouge_folders():
    return sorted(p.parent for p in RESULTS.glob("shafieibavani*/*/lam_tests.csv"))


@pytest.mark.parametrize("folder", _grouge_folders(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_best_lam_sentences(folder):
    # The sentence and the table come from one run, so they must agree whatever source made them. (A staleness
    # skip here read a manifest key, "inputs", that manifests do not have, and skipped every folder.)
    table = pd.read_csv(folder / "lam_tests.csv")
    text = _read(folder / "conclusions.md")
    for metric, block in table.groupby("metric", sort=False):
        best = block.loc[block["r"].idxmax()]
        line = next(line for line in text.splitlines() if line.startswith(f"- {metric} ("))
        said = float(re.search(r"the best lam on this data is (\d\.\d)", line)[1])
        assert said == pytest.approx(best["lam"]), f"{metric}: the sentence says {said}, the table's best is " \
                                                   f"{best['lam']} (r = {best['r']})"
        r_said = float(re.search(r"the best lam on this data is \d\.\d[^(]*\(r = ([\d.]+)", line)[1])
        assert r_said == pytest.approx(best["r"], abs=6e-4)


# -- notebook 20: Table 1 conclusions ----------------------------------------------------------------------------


@pytest.mark.parametrize("dataset", DATASETS)
def test_table1_conclusions(dataset):
    folder = RESULTS / "deutsch2021" / dataset
    table = pd.read_csv(folder / "table1_ci_coverage.csv")
    text = _read(folder / "table1_conclusions.md")
    levels = re.split(r"\* \*\*(System|Summary) level:\*\*", text)
    found = 0
    for level, body in zip(levels[1::2], levels[2::2]):
        rows = table[table["level"] == level.lower()].set_index("method_name")
        for name, pct in re.findall(r"(Fisher|Boot-Systems|Boot-Inputs|Boot-Both) covers (?:only )?([\d.]+)%", body):
            assert _shown(pct, rows.loc[name, "coverage"], 100), (level, name)
            found += 1
        for name, lo, hi in re.findall(r"(Boot-Both) covers [\d.]+% of the held-out correlations \(exact 95% CI "
                                       r"([\d.]+)%-([\d.]+)%\)", body):
            assert _shown(lo, rows.loc[name, "ci_low"], 100) and _shown(hi, rows.loc[name, "ci_high"], 100), (level, lo, hi)
    assert found == 8


# -- the results README ---------------------------------------------------------------------------------------------


def test_readme_deutsch2021_table1_cells_and_sentence():
    text = _section(_read(README), "## Deutsch et al. (2021)")
    tables = {d: pd.read_csv(RESULTS / "deutsch2021" / d / "table1_ci_coverage.csv") for d in DATASETS}
    rows = re.findall(r"^\| (system|summary) \| ([\w-]+) \| (.+?) \| (.+?) \|$", text, re.M)
    assert len(rows) == 8
    for level, method, *cells in rows:
        for d, cell in zip(DATASETS, cells):
            t = tables[d]
            row = t[(t["level"] == level) & (t["method_name"] == method)].iloc[0]
            ours, paper = (c.strip().strip("*") for c in cell.split("/"))
            assert ours == f"{row['coverage']:.3f}".lstrip("0"), (d, level, method)
            assert paper == f"{row['paper']:.2f}".lstrip("0"), (d, level, method)
            assert cell.strip().startswith("**") == bool(row["best"]), (d, level, method)
    # the standard-error sentence: one binomial SE at the paper's coverage, and the SE of a difference
    m = re.search(rf"largest {NUM} on SummEval, {NUM} on REALSumm\) and within 1 standard error of the difference "
                  rf"of two\s+1000-trial coverages \(largest {NUM} on SummEval, {NUM} on REALSumm\)", text)
    assert m, "the Table 1 standard-error sentence"
    for k, d in enumerate(DATASETS):
        t = tables[d]
        z_one = (t["difference"].abs() / np.sqrt(t["paper"] * (1 - t["paper"]) / 1000)).max()
        z_diff = (t["difference"].abs() / np.sqrt(t["coverage"] * (1 - t["coverage"]) / t["trials"]
                                                  + t["paper"] * (1 - t["paper"]) / 1000)).max()
        assert m.group(1 + k) == _f2(z_one) and m.group(3 + k) == _f2(z_diff), d
        assert z_one < 1.5 and z_diff < 1.0
    ci = pd.read_csv(RESULTS / "deutsch2021" / "summeval" / "figure4_metric_cis.csv")
    row = ci[(ci["level"] == "system") & (ci["metric_name"] == "ROUGE-2-F1")].iloc[0]
    lo, hi = (f"{v:.2f}".replace("0.", ".", 1) for v in (row["low"], row["high"]))
    assert f"ROUGE-2's system-level Kendall CI on SummEval is [{lo}, {hi}]" in text


def _d22_row(text: str, start: str) -> list[str]:
    line = next(line for line in text.splitlines() if line.startswith(start))
    return [c.strip() for c in line.strip("|").split("|")]


def test_readme_deutsch2022_section():
    from metaeval.studies.deutsch2022 import FIGURE6

    text = _section(_read(README), "## Deutsch, Dror & Roth (2022)")
    delta = {d: pd.read_csv(RESULTS / "deutsch2022" / d / "delta_correlations.csv") for d in DATASETS}
    # the delta row
    cells = _d22_row(text, "| Deutsch et al. 2022 | Figure 6")
    for d, cell in zip(DATASETS, cells[-2:]):
        t = delta[d]
        first = t[t["percent"] == 10].set_index("metric")
        m = re.search(rf"\((\d+) pairs\): QAEval-F1 τ = {NUM} \[{NUM}, {NUM}\], ROUGE-1 {NUM} \[{NUM}, {NUM}\]; "
                      rf"(\d+) of (\d+) intervals include 0", cell)
        q, r = first.loc["QAEval-F1"], first.loc["ROUGE-1"]
        inc = int(((first["ci_low"] <= 0) & (first["ci_high"] >= 0)).sum())
        assert m.groups() == (str(int(q["n_pairs"])), *map(_f2, (q["statistic"], q["ci_low"], q["ci_high"],
                                                                   r["statistic"], r["ci_low"], r["ci_high"])),
                              str(inc), str(len(first))), d
    # Figure 6: paper rows are the authors' printed values, ours the committed table
    rows = re.findall(r"^\| (SummEval|REALSumm) \| ([\w-]+) \| (paper|ours) \| (.+) \|$", text, re.M)
    assert len(rows) == 12
    for name, metric, who, values in rows:
        got = [v.strip() for v in values.split("|")]
        if who == "paper":
            expected = [f"{v:.2f}" for v in FIGURE6[name.lower()][metric]]
        else:
            t = delta[name.lower()]
            expected = [_f2(v) for v in t[t["metric"] == metric]["statistic"]]
        assert got == expected, (name, metric, who)
    # pairwise accuracy, ranking stability, replicability
    for d, cell in zip(DATASETS, _d22_row(text, "| Kocmi 2021")[-2:]):
        t = pd.read_csv(RESULTS / "deutsch2022" / d / "agreement_table.csv")
        best = t["pairwise_accuracy"].max()
        assert f"{best:.3f}".lstrip("0") in cell, d
        names = set(re.search(r"best (?:pairwise accuracy )?(.+?) \.\d{3}", cell)[1].split(" / "))
        winners = {n.replace("-F1", "") for n in t[t["pairwise_accuracy"] == best]["metric"]}
        assert names == winners, d
        n_clusters = int(t["rank"].max())
        assert ("one cluster" in cell) == (n_clusters == 1), d
    for d, cell in zip(DATASETS, _d22_row(text, "| Deutsch et al. 2022 | ranking stability")[-2:]):
        t = pd.read_csv(RESULTS / "deutsch2022" / d / "ranking_stability.csv")
        human = t["score"].iloc[-1]
        value = t[(t["score"] == human) & (t["documents"] == 5)]["tau_mean"].iloc[0]
        assert f"humans at 5 documents τ = {_f2(value).lstrip('0')}" in cell, d
    for d, cell in zip(DATASETS, _d22_row(text, "| Dror et al. 2017")[-2:]):
        t = pd.read_csv(RESULTS / "deutsch2022" / d / "replicability.csv")
        n_all = int((t["n_replicated"] == t["n_datasets"]).sum())
        assert re.match(rf"{n_all} of {len(t)} ", cell), (d, cell)


@pytest.mark.parametrize("dataset", DATASETS)
def test_readme_grouge_full_size_rows(dataset):
    folder = RESULTS / "shafieibavani-full" / dataset
    name = {"summeval": "SummEval", "realsumm": "REALSumm"}[dataset]
    line = next(line for line in _read(README).splitlines() if f"GRouge **on every input** ({name})" in line)
    table = pd.read_csv(folder / "tables4_correlations.csv", index_col=0)
    column = re.search(r"System-level Pearson with (.+?): GRouge", line)[1] + " pearson"
    found = re.findall(r"(GRouge-\w+) (\d\.\d{3}) vs (ROUGE-\w+) (\d\.\d{3})", line)
    assert len(found) == 3
    for g, rg, r, rr in found:
        assert (rg, rr) == (f"{table.loc[g, column]:.3f}", f"{table.loc[r, column]:.3f}")
    lam = pd.read_csv(folder / "lam_tests.csv")
    said = dict(re.findall(r"(GRouge-\w+) (\d\.\d)(?=[,;])", line))
    for metric, block in lam.groupby("metric"):
        assert said[metric] == f"{block.loc[block['r'].idxmax(), 'lam']:.1f}", metric
    cells = pd.read_csv(folder / "all_cells.csv")
    system = cells[cells["level"] == "system"]
    k = int(((system["p_williams_holm"] < 0.05) & (system["p_perm_both_holm"] < 0.05)
             & (system["p_boot_both_holm"] < 0.05)).sum())
    assert f"{k} of {len(system)} system-level cells significant by all three tests" in line
    params = json.loads(_read(next(folder.glob(".metaeval-run.*.json"))))["parameters"]
    assert params["n_inputs"] is None and params["topk"] == 128  # "all 100 inputs at top-128"
    assert f"all 100 {name} inputs" in line and "top-128" in line
