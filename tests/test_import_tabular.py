"""A study in a spreadsheet, end to end (issue 25, "Done means").
The same small study (6 systems x 8 documents, texts, one reference, two human protocols one of them with
three annotators, metaeval's own ROUGE-2 key as a stored metric, and a new metric) is built as a CSV in long
and in wide format, a TSV, a parquet file (references as a list column) and a DataFrame; each is imported with
``metaeval import`` (the DataFrame with ``import_table``) and with no option beyond the column mapping, and all
five give the same dataset. Notebooks 10, 20, 22, 60 and the card then run on it with small parameters and
no parameter naming a metric: the defaults fall back to the dataset's own metrics (data/defaults.py), and
their numbers equal direct library calls.

Planted bugs caught (each planted once by hand, seen failing, then removed):
- wide format: the system taken from the wrong side of ``FIELD:SYSTEM`` -> ``test_every_format_gives_the_same_study``;
- annotator lists in a CSV cell read as text -> ``test_every_format_gives_the_same_study`` (DataError);
- references of the wide CSV dropped -> ``test_every_format_gives_the_same_study``.
"""

from __future__ import annotations

import json
import re
import time
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.stats

import metaeval
from metaeval.data.datasets import DataError, from_frame, load
from metaeval.data.tabular import import_table
from metaeval.run.cli import main
from metaeval.run.notebooks import run_notebook

N_SYSTEMS, N_DOCS = 6, 8
R2 = "R-2|stem=1|stop=0|F"
WORDS = ("the council city river bridge storm rain police report school budget vote mayor court judge team game "
         "season player coach fans market price bank rate company workers strike union plan road").split()


def _study() -> pd.DataFrame:
    """Long format, one row per document x system; better systems copy more reference words and get higher
    human scores, so correlations are positive."""
    rng = np.random.default_rng(7)
    rows = []
    refs = {f"doc{j}": " ".join(rng.choice(WORDS, 12)) + " ." for j in range(N_DOCS)}
    for i in range(N_SYSTEMS):
        quality = (i + 1) / N_SYSTEMS
        for j in range(N_DOCS):
            ref = refs[f"doc{j}"].split()
            words = [ref[int(rng.integers(len(ref)))] if rng.random() < quality else str(rng.choice(WORDS))
                     for _ in range(10)]
            relevance = [int(np.clip(round(1 + 4 * quality + rng.normal(0, 0.8)), 1, 5)) for _ in range(3)]
            rows.append({"doc_id": f"doc{j}", "model": f"sys{i}", "summary": " ".join(words) + " .",
                         "reference": refs[f"doc{j}"], "relevance": relevance,
                         "normalized_acu": round(quality * 0.6 + rng.normal(0, 0.1), 4),
                         "my_metric": round(quality + rng.normal(0, 0.2), 4)})
    frame = pd.DataFrame(rows)
    frame[R2] = metaeval.rouge.score(frame["summary"].tolist(), [[r] for r in frame["reference"]], [R2],
                                     warn=False).iloc[:, 0].to_numpy()
    return frame


def _csv_cells(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    out["relevance"] = [json.dumps(v) for v in out["relevance"]]  # annotators' ratings as a JSON list
    return out


def _wide(frame: pd.DataFrame) -> pd.DataFrame:
    fields = ["summary", "relevance", "normalized_acu", "my_metric", R2]
    wide = _csv_cells(frame).pivot(index=["doc_id", "reference"], columns="model", values=fields)
    wide.columns = [f"{field}:{system}" for field, system in wide.columns]
    return wide.reset_index()


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = tmp_path_factory.mktemp("tabular")
    frame = _study()
    sources = {"csv-long": root / "study.csv", "csv-wide": root / "study_wide.csv", "tsv": root / "study.tsv",
               "parquet": root / "study.parquet"}
    _csv_cells(frame).to_csv(sources["csv-long"], index=False)
    _wide(frame).to_csv(sources["csv-wide"], index=False)
    _csv_cells(frame).to_csv(sources["tsv"], sep="\t", index=False)
    pq = frame.copy()
    pq["reference"] = [[r] for r in pq["reference"]]  # a list column of references
    pq.to_parquet(sources["parquet"])
    folders = {}
    for fmt, source in sources.items():
        folders[fmt] = root / f"imported-{fmt}"
        assert main(["import", str(source), str(folders[fmt])]) == 0
    folders["frame"] = root / "imported-frame"
    import_table(frame, folders["frame"])
    return frame, sources, folders


def _same(a, b):
    assert (a.systems, a.inputs) == (b.systems, b.inputs)
    assert sorted(a.score_names) == sorted(b.score_names)
    for name in a.score_names:
        np.testing.assert_array_equal(a.matrix(name), b.matrix(name), err_msg=name)
    np.testing.assert_array_equal(a.ratings("relevance"), b.ratings("relevance"))
    np.testing.assert_array_equal(a.summaries(), b.summaries())
    assert a.references().tolist() == b.references().tolist()
    assert a.human_scores == b.human_scores and a.default_human == b.default_human


def test_every_format_gives_the_same_study(study):
    frame, sources, folders = study
    direct = from_frame(frame, name="study")
    assert direct.shape == (N_SYSTEMS, N_DOCS) and direct.has_texts and direct.n_references == 1
    assert direct.human_scores == ["relevance", "normalized_acu"] and direct.default_human == "relevance"
    assert direct.ratings("relevance").shape == (N_SYSTEMS, N_DOCS, 3)
    np.testing.assert_allclose(direct.matrix("relevance"), np.mean(direct.ratings("relevance"), axis=2))
    for folder in folders.values():
        _same(load(folder), direct)
    for source in sources.values():  # a table loads directly too, with the same inference
        _same(load(source), direct)
    # the readable name: the folder's, not its path
    assert load(folders["tsv"]).name == "imported-tsv"
    assert load(folders["tsv"]).display_name("normalized_acu") == "Normalized ACU"
    assert load(folders["tsv"]).display_name(R2) == "ROUGE-2 F (stem)"


def test_import_shows_the_mapping_and_never_overwrites_a_user_folder(study, tmp_path, capsys):
    _, sources, _ = study
    assert main(["import", str(sources["csv-wide"]), str(tmp_path / "w"), "--dry-run"]) == 0
    shown = capsys.readouterr().out
    assert "format:     wide (one column per system: FIELD:SYSTEM)" in shown
    assert "document:   doc_id  (inferred)   --doc" in shown and "systems:    6 (sys0, sys1" in shown
    assert "human:      relevance, normalized_acu  (inferred)   --human" in shown
    assert not (tmp_path / "w").exists()
    # a second import into its own folder replaces it; a folder holding anything else is refused
    assert main(["import", str(sources["csv-long"]), str(tmp_path / "w")]) == 0
    assert main(["import", str(sources["csv-long"]), str(tmp_path / "w")]) == 0
    (tmp_path / "w" / "notes.txt").write_text("mine")
    assert main(["import", str(sources["csv-long"]), str(tmp_path / "w")]) == 2
    assert "exists and was not written by metaeval import" in capsys.readouterr().err
    assert (tmp_path / "w" / "notes.txt").read_text() == "mine"
    assert not list(tmp_path.glob(".partial-*"))


def _tree(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_import_writes_by_the_one_ownership_mechanism_and_never_touches_a_file_it_did_not_write(study, tmp_path):
    """metaeval._outputs decides for an import as for a run or a card: its manifest, its refusals."""
    from metaeval.run import outputs as _outputs  # the public face of metaeval._outputs
    from metaeval.run.paths import project_root

    frame, sources, _ = study
    dest = tmp_path / "mine"
    import_table(frame, dest)
    manifest = _outputs.read_manifest(dest, "import")
    assert manifest is not None and set(manifest["files"]) == {"records.jsonl", "dataset.yml"}
    assert sorted(p.name for p in dest.iterdir()) == [".metaeval-run.import.json", "dataset.yml", "records.jsonl"]
    import_table(sources["csv-long"], dest)  # its own unchanged folder: replaced
    assert _outputs.read_manifest(dest, "import")["parameters"] == {"source": str(sources["csv-long"])}
    # a file it did not write, beside its own, or its own edited by hand: refused, every byte left as it was
    for change in ("added", "edited"):
        target = tmp_path / change
        import_table(frame, target)
        if change == "added":
            (target / "notes.txt").write_text("mine")
        else:
            (target / "records.jsonl").write_text("{}\n")
        before = _tree(target)
        with pytest.raises(DataError, match="was not written by metaeval import .*(no previous run wrote|edited since)"):
            import_table(frame, target)
        assert _tree(target) == before, change
    # a folder of the user, a run's results folder, a protected folder: refused, nothing written or removed
    user = tmp_path / "user"
    user.mkdir()
    (user / "thesis.tex").write_text("precious")
    run = tmp_path / "run"
    run.mkdir()
    (run / "table.csv").write_text("x\n1\n")
    _outputs.write_manifest(run, "23_deutsch2021_normality", {}, paper="deutsch2021")
    for folder in (user, run, project_root() / "data"):
        before = _tree(folder)
        with pytest.raises(DataError, match="was not written by metaeval import"):
            import_table(frame, folder)
        assert _tree(folder) == before
    assert not list(tmp_path.glob(".partial-*"))  # no staging left behind


def test_rouge_command_reads_the_imported_folder_and_merges_back(study, tmp_path):
    _, _, folders = study
    ds = load(folders["csv-long"])
    out = tmp_path / "rouge.jsonl"
    assert main(["rouge", str(folders["csv-long"]), str(out), "--methods", "R-1", "--stem", "yes", "--stop",
                 "no"]) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == N_SYSTEMS * N_DOCS
    assert {"id", "instance_id", "summarizer_id", "n_refs", "scores"} == set(records[0])
    merged = tmp_path / "merged"
    merged.mkdir()
    (merged / "records.jsonl").write_text((folders["csv-long"] / "records.jsonl").read_text())
    (merged / "rouge.jsonl").write_text(out.read_text())
    both = load(merged)
    direct = metaeval.rouge.score(list(ds.summaries().ravel()), [list(r) for r in ds.references().ravel()],
                                  ["R-1|stem=1|stop=0|F"], warn=False).iloc[:, 0].to_numpy().reshape(ds.shape)
    np.testing.assert_array_equal(both.matrix("R-1|stem=1|stop=0|F"), direct)


# ----------------------------------------------------------------------------------------------------
# The notebooks and the card on the imported study: no parameter names a metric.

SMALL = {
    "10": {"top_k": 3},
    "20": {"n_trials": 10, "n_resamples": 50},
    "22": {"n_resamples": 50, "n_permutations": 50, "our_rouge": ["rouge-2|stem:yes|stop:no|stat:F|refs:A"]},
    "60": {"systems_grid": [3, 6], "inputs_grid": [4, 8], "n_trials": 5, "n_resamples": 10, "pair_sizes": [4, 8],
           "pair_trials": 5, "pair_resamples": 20},
}


def _rouge(ds, key):
    return metaeval.rouge.score(list(ds.summaries().ravel()), [list(r) for r in ds.references().ravel()], [key],
                                warn=False).iloc[:, 0].to_numpy(dtype=float).reshape(ds.shape)


def _check(nb, out, ds):
    human = ds.matrix("relevance")
    if nb == "10":
        table = pd.read_csv(out / "table1_variants.csv").set_index("variant")
        row = table.loc["rouge-1|stem:no|stop:no|stat:P|agg:median|refs:A"]
        direct = scipy.stats.pearsonr(np.median(_rouge(ds, "R-1|stem=0|stop=0|P"), axis=1), human.mean(axis=1))
        assert row["r"] == pytest.approx(direct.statistic, abs=5e-7)
    elif nb == "20":
        from metaeval.studies import deutsch

        trials = pd.read_csv(out / "table1_ci_simulation_trials.csv")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", metaeval.DegenerateResultWarning)
            direct = deutsch.ci_coverage_simulation(ds.matrix(R2), human, n_trials=10, n_resamples=50,
                                                    coefficient="pearson", confidence_level=0.95,
                                                    rng=np.random.default_rng(0))
        for col in ("target", "low", "high"):
            np.testing.assert_allclose(trials[col], direct[col].astype(float), atol=5e-7, err_msg=col)
    elif nb == "22":
        cis = pd.read_csv(out / "figure4_metric_cis.csv")
        key = "rouge-2|stem:yes|stop:no|stat:F|refs:A"
        row = cis[(cis["level"] == "system") & (cis["metric"] == key)]
        direct = metaeval.correlate(_rouge(ds, R2), human, level="system", coefficient="kendall")
        assert row["r"].iloc[0] == pytest.approx(direct, abs=5e-5)
    elif nb == "60":
        power = pd.read_csv(out / "metric_power.csv")
        # X: the study's own metric (not ROUGE-1 from the texts, as before issue 38); Y: the stored ROUGE-2
        assert set(power["x"]) | set(power["y"]) == {"my_metric", R2}
        x = ds.matrix("my_metric")
        for level in ("system", "summary"):
            rows = power[power["level"] == level]
            direct = abs(metaeval.correlate(x, human, level=level) - metaeval.correlate(ds.matrix(R2), human,
                                                                                        level=level))
            np.testing.assert_allclose(rows["observed_difference"].abs(), direct, atol=5e-5, err_msg=level)


@pytest.mark.parametrize("nb", ["20", pytest.param("10", marks=pytest.mark.slow),
                                pytest.param("22", marks=pytest.mark.slow), pytest.param("60", marks=pytest.mark.slow)])
def test_notebook_on_imported_study(study, tmp_path, nb):
    _, _, folders = study
    folder = folders["csv-wide"]
    result = run_notebook(nb, {"dataset": str(folder), **SMALL[nb], "output_dir": str(tmp_path / "out")})
    _check(nb, result.output_dir, load(folder))


def test_card_on_imported_study(study, tmp_path, capsys):
    _, _, folders = study
    folder = folders["parquet"]
    start = time.perf_counter()
    rc = main(["card", "my_metric", "--dataset", str(folder), "--no-html", "--n-resamples", "50",
               "--planner-trials", "5", "--output", str(tmp_path / "card")])
    assert rc == 0, capsys.readouterr().err
    ds = load(folder)
    table = pd.read_csv(tmp_path / "card" / "correlations.csv")
    # the default baseline is the dataset's own ROUGE-2 (metaeval's key), found under its spelling
    assert set(table["metric"]) == {"my_metric", R2}
    for _, row in table[table["level"].isin(["system", "summary"])].iterrows():
        direct = metaeval.correlate(ds.matrix(row["metric"]), ds.matrix("relevance"), level=row["level"])
        assert row["r"] == pytest.approx(direct, abs=5e-5), (row["metric"], row["level"])
    assert time.perf_counter() - start < 60


def test_likely_mistakes_name_the_fix(study, tmp_path, capsys):
    frame, sources, _ = study
    # 1. an id column with a name nothing recognises
    _csv_cells(frame).rename(columns={"doc_id": "article"}).to_csv(tmp_path / "a.csv", index=False)
    assert main(["import", str(tmp_path / "a.csv"), str(tmp_path / "o")]) == 2
    assert "no document column (one of instance_id, doc, document, doc_id, docid, document_id, ...); name it with " \
           "--doc COLUMN" in capsys.readouterr().err
    # 2. text in a score column
    text = _csv_cells(frame).astype({"normalized_acu": object})
    text.loc[3, "normalized_acu"] = "n/a"
    text.to_csv(tmp_path / "b.csv", index=False)
    assert main(["import", str(tmp_path / "b.csv"), str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "b.csv:5 (row 4), column 'normalized_acu': 'n/a' is not a number" in err and "--ignore normalized_acu" in err
    # ... quoted as a shell takes it when the name has spaces or parentheses
    text.rename(columns={"normalized_acu": "METEOR (%)"}).to_csv(tmp_path / "b2.csv", index=False)
    assert main(["import", str(tmp_path / "b2.csv"), str(tmp_path / "o")]) == 2
    assert "--ignore 'METEOR (%)'" in capsys.readouterr().err
    # 3. a table given where JSONL is read (renamed .jsonl)
    jsonl = tmp_path / "study.jsonl"
    jsonl.write_bytes(sources["csv-long"].read_bytes())
    with pytest.raises(DataError, match=r"it looks like a table: .*`metaeval import .*study\.jsonl DEST"):
        load(jsonl)
    # 4. a table beside JSONL files in a dataset folder
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "texts.jsonl").write_text(json.dumps({"instance_id": "d", "summarizer_id": "A", "summary": "x"}) + "\n")
    (folder / "human.csv").write_text("doc,system,relevance\nd,A,3\n")
    with pytest.warns(metaeval.datasets.DataWarning, match="metaeval import .*human.csv DEST"):
        load(folder)
    # 5. a spreadsheet
    (tmp_path / "s.xlsx").write_bytes(b"PK\x03\x04")
    with pytest.raises(DataError, match="save the sheet as CSV"):
        load(tmp_path / "s.xlsx")


def test_card_default_folder_is_a_readable_name(tmp_path):
    from metaeval.run.cli import _card_folder

    assert re.fullmatch(r"card-R-1_stem=1_stop=0_F-my_study-[0-9a-f]{8}",
                        _card_folder("R-1|stem=1|stop=0|F", str(tmp_path / "my_study")))
    assert _card_folder(str(tmp_path / "scores" / "new.jsonl"), "summeval") == "card-new-summeval"


def test_notebooks_22_23_analyse_every_metric_of_your_data_under_your_names(study):
    """On an imported spreadsheet, `metrics = None` means every non-human score (a new user's METEOR and
    BERTScore columns were silently left out when only the paper's metrics were looked for)."""
    from metaeval import deutsch

    _, _, folders = study
    ds = metaeval.datasets.load(folders["csv-long"])
    metrics, paper, left_out = deutsch.default_metrics(ds, embedded=False)
    assert sorted(metrics) == sorted(set(ds.score_names) - set(ds.human_scores))
    assert "my_metric" in metrics and paper == {} and left_out == []
    # the paper's set applies only to the paper's own data (SummEval, REALSumm): any other dataset, embedded in the
    # atlas or not, is analysed with every metric it has
    assert deutsch.default_metrics(ds, embedded=True) == (metrics, paper, left_out)
    paper_data = metaeval.datasets.load("fabbri2020")
    metrics, paper, left_out = deutsch.default_metrics(paper_data, embedded=True)  # the rest is named
    assert left_out and sorted(metrics + left_out) == sorted(set(paper_data.score_names) - set(paper_data.human_scores))


def test_import_says_when_no_column_is_a_human_score(tmp_path):
    """Columns named like a study's own protocols (prior, ref_based, ref_free) are not human scores by name: the
    importer says so on a normal run and names the option, and --human makes them human."""
    frame = pd.DataFrame({"doc": ["d1", "d1", "d2", "d2"], "system": ["A", "B", "A", "B"],
                          "prior": [1, 2, 3, 4], "ref_free": [2, 1, 4, 3], "my_metric": [.1, .2, .3, .4]})
    shown: list[str] = []
    import_table(frame, tmp_path / "a", show=shown.append)
    assert shown[-1].startswith("note: no column is a human score by its name")
    assert "--human prior ref_free my_metric" in shown[-1]
    shown.clear()
    result = import_table(frame, tmp_path / "b", human=["prior", "ref_free"], show=shown.append)
    assert result.columns.human == ("prior", "ref_free") and not any(s.startswith("note:") for s in shown)
    assert list(load(tmp_path / "b").human_scores) == ["prior", "ref_free"]


def test_defaults_on_a_table_without_rouge_or_texts_are_its_own_metrics():
    """Issue 48: a study of two metrics and one human column (no ROUGE, no texts): notebooks 20 and 60 stopped
    ("no ROUGE-2 under any spelling and no texts") where the dataset's own metrics are the ones to analyse."""
    from metaeval.data.defaults import default_metric
    from metaeval.data.datasets import from_frame

    frame = pd.DataFrame({"doc": ["d1", "d1", "d2", "d2"], "system": ["A", "B", "A", "B"],
                          "bleu_like": [.1, .2, .3, .4], "nli_faith": [.5, .6, .7, .9], "rater_quality": [1, 2, 3, 4]})
    study = from_frame(frame, name="study")
    assert study.human_scores == ["rater_quality"]  # "rater" names a human score
    y = default_metric(study, None, param="metric_y", measures=("rouge-2",), quiet=True)  # notebook 60's Y
    x = default_metric(study, "qa-eval.f1", paper="qa-eval.f1", exclude=[y], own_first=True, quiet=True)
    assert (y, x) == ("bleu_like", "nli_faith")
    assert default_metric(study, None, paper="qa-eval.f1", quiet=True) == "bleu_like"  # notebook 20's
    with pytest.raises(DataError, match="no ROUGE-2 under any spelling"):
        default_metric(study, None, exclude=["bleu_like", "nli_faith"], quiet=True)
