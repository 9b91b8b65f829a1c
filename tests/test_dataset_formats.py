"""The dataset contract: every accepted format, the merge, dataset.yml, require(), describe, and every way
user data could be lost or misread (issue 11 items 1-3, issue 15 item 4 and "Encoding and reading")."""

import json
import warnings

import metaeval
import numpy as np
import pytest
from datasets_factory import FORMATS, write_dataset
from metaeval.datasets import DataError, DataWarning, display_name, load
from metaeval.run.cli import main


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def _rec(inp, sys, **extra):
    return {"instance_id": inp, "summarizer_id": sys, **extra}


def _grid(**extra_per_cell):
    """Records of a 2 systems x 2 inputs grid with metric m = a distinct number per cell."""
    return [_rec(i, s, metrics={"m": 10 * k + j}, **extra_per_cell)
            for k, s in enumerate("xy") for j, i in enumerate("ab")]


# ----------------------------------------------------------------------------------------------------
# Every accepted format loads to exactly what was written


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_loads_what_was_written(tmp_path, fmt):
    exp = write_dataset(tmp_path / fmt, fmt, n_systems=4, n_inputs=5)
    ds = load(exp.path)
    assert ds.systems == exp.systems and ds.inputs == exp.inputs
    assert sorted(ds.score_names) == sorted(exp.scores)
    for name, matrix in exp.scores.items():
        np.testing.assert_array_equal(ds.matrix(name), matrix, err_msg=name)
    for name, ratings in exp.ratings.items():
        np.testing.assert_array_equal(ds.ratings(name), ratings)
    assert ds.has_texts == exp.has_texts and ds.n_references == exp.n_refs
    if exp.has_texts:
        summaries, references = ds.summaries(), ds.references()
        for a, s in enumerate(exp.systems):
            for b, i in enumerate(exp.inputs):
                assert summaries[a, b] == exp.summaries[(s, i)]
                assert references[a, b] == exp.references[i]
    else:
        with pytest.raises(DataError, match=r"has no texts; this analysis needs summaries and references"):
            ds.summaries()
    if exp.human is None:
        assert ds.human_scores == []
        with pytest.raises(DataError, match=r"has no human score .* name one with default_human in dataset.yml"):
            _ = ds.default_human
    else:
        assert ds.default_human == exp.human


def test_split_files_merge_to_the_same_dataset_as_one_file(tmp_path):
    one = load(write_dataset(tmp_path / "both", "both", seed=3).path)
    split = load(write_dataset(tmp_path / "split", "split", seed=3).path)
    assert split.score_names == one.score_names
    for name in one.score_names:
        np.testing.assert_array_equal(split.matrix(name), one.matrix(name))
    assert (split.summaries() == one.summaries()).all()
    assert split.references().tolist() == one.references().tolist()


def test_sacrerouge_sentence_lists_become_lines(tmp_path):
    _write(tmp_path / "s.jsonl", [_rec("a", "x", summary={"text": ["One .", "Two ."]},
                                       references=[{"text": ["R one .", "R two ."]}, {"text": "Other ."}])])
    ds = load(tmp_path)
    assert ds.summaries()[0, 0] == "One .\nTwo ."
    assert ds.references()[0, 0] == ["R one .\nR two .", "Other ."]
    assert ds.n_references == 2 and ds.score_names == []


def test_metaeval_rouge_output_chains_into_load(tmp_path):
    """`metaeval rouge` -> `load`: ids 'INSTANCE::SUMMARIZER', scores equal to the library's own ROUGE."""
    exp = write_dataset(tmp_path / "r", "rouge", n_systems=3, n_inputs=4)
    ds = load(exp.path)
    variants = ["R-1|stem=0|stop=0|F", "R-2|stem=0|stop=0|R"]
    table = metaeval.rouge.score(ds.texts["summary"].tolist(), ds.texts["references"].tolist(), variants,
                                 columns="key")
    for key in variants:
        np.testing.assert_allclose(ds.matrix(key).ravel(), table[key].to_numpy(), atol=5e-6)
    assert ds.matrix("R-1|stem=0|stop=0|F").std() > 0  # the texts differ, so the test can fail


def test_metaeval_rouge_passes_instance_and_summarizer_through(tmp_path):
    exp = write_dataset(tmp_path / "r", "rouge-fields", n_systems=2, n_inputs=2)
    first = json.loads((exp.path / "rouge.jsonl").read_text().splitlines()[0])
    assert (first["id"], first["instance_id"], first["summarizer_id"]) == ("sys0/doc00", "doc00", "sys0")
    assert load(exp.path).systems == ("sys0", "sys1")


def test_dataset_yml(tmp_path):
    exp = write_dataset(tmp_path / "y", "yml")
    ds = load(exp.path)
    assert ds.recall_oriented is True and ds.info.description == "a small test dataset"
    assert ds.display_name("metric.f1") == "My metric" and ds.display_name("metric.recall") == "metric-R"
    assert ds.human_scores == ["human.relevance"] and ds.default_human == "human.relevance"


@pytest.mark.parametrize(("text", "words"), [
    ("default_human: nope\n", "human score 'nope' is not among the scores"),
    ("colour: red\n", "unknown key 'colour'; known keys: description, default_human"),
    ("recall_oriented: maybe\n", "key 'recall_oriented' must be a bool, got str"),
    ("display_names:\n  ghost: G\n", "display_names names an unknown score 'ghost'"),
    ("human_scores: [a\n", "dataset.yml:2: invalid YAML"),
    ("- a\n- b\n", "expected a mapping of keys"),
])
def test_dataset_yml_errors(tmp_path, text, words):
    write_dataset(tmp_path / "y", "both", n_systems=2, n_inputs=2)
    (tmp_path / "y" / "dataset.yml").write_text(text)
    with pytest.raises(DataError, match=words.replace("(", r"\(").replace(")", r"\)")):
        load(tmp_path / "y")


# ----------------------------------------------------------------------------------------------------
# Nothing the user gave disappears silently (issue 15, severe 4)


@pytest.mark.parametrize("kind", ["Peer", None, "PEER", "system", 1])
def test_summarizer_type_not_exactly_peer_is_an_error(tmp_path, kind):
    records = _grid(summarizer_type="peer")
    records[3]["summarizer_type"] = kind
    _write(tmp_path / "m.jsonl", records)
    with pytest.raises(DataError, match=r"m\.jsonl:4: field 'summarizer_type' must be exactly \"peer\" or "
                                        rf"\"reference\", got {kind!r}"):
        load(tmp_path)


def test_reference_records_need_an_explicit_choice(tmp_path):
    records = _grid() + [{"instance_id": "a", "summarizer_id": "ref-A", "summarizer_type": "reference",
                          "metrics": {"m": 99}}]
    _write(tmp_path / "m.jsonl", records)
    with pytest.raises(DataError, match=r"m\.jsonl:5: field 'summarizer_type' is 'reference' .*"
                                        r"reference_records='skip'"):
        load(tmp_path)
    assert load(tmp_path, reference_records="skip").systems == ("x", "y")
    kept = load(tmp_path, reference_records="as-systems")
    assert kept.systems == ("ref-A", "x", "y") and kept.matrix("m", allow_nan=True)[0, 0] == 99
    (tmp_path / "dataset.yml").write_text("reference_records: skip\n")
    assert load(tmp_path).systems == ("x", "y")


def test_a_system_missing_from_one_file_is_not_dropped(tmp_path):
    """Texts for 3 systems, scores for 2: the grid keeps all 3, and using the score names the gap."""
    _write(tmp_path / "texts.jsonl", [_rec(i, s, summary=f"{s} {i}", references=["r"]) for s in "xyz" for i in "ab"])
    _write(tmp_path / "scores.jsonl", _grid())
    ds = load(tmp_path)
    assert ds.systems == ("x", "y", "z") and ds.has_texts
    assert ds.describe().set_index("score").loc["m", ["complete", "missing"]].tolist() == [4, 2]
    with pytest.raises(DataError, match=r"score 'm' of dataset .* is missing in 2 of 6 cells, "
                                        r"e\.g\. \(z, a\), \(z, b\)"):
        ds.matrix("m")
    with pytest.raises(DataError, match=r"'m' \(2 cells\) missing in 2 of 6 cells .*; notebook 99 needs them "
                                        r"complete: pass incomplete='drop-inputs', 'drop-systems' or 'keep-nan'"):
        ds.require(scores=["m"], purpose="notebook 99")
    # a notebook's user is told the parameter, in the form the command line takes, or that there is none
    import matplotlib as mpl
    from metaeval.run.session import start

    with mpl.rc_context():  # start() sets the notebooks' plotting style: not for the tests after this one
        # the one wording of the fix (data.datasets), as the preflight says it too
        with pytest.raises(DataError, match=r"needs them complete: set the notebook's parameter `incomplete` to "
                                            r"drop-inputs or drop-systems \(`-p incomplete drop-inputs` on the "
                                            r"command line"):
            start("demo", tmp_path, scores=["m"], incomplete="raise", resolve=False)
        with pytest.raises(DataError, match=r"needs them complete: this notebook has no `incomplete` parameter"):
            start("demo", tmp_path, scores=["m"], resolve=False)
    with pytest.warns(DataWarning, match=r"dropped 1 of 3 systems where 'm' \(2 cells\) is missing "
                                         r"\(incomplete='drop-systems'\): z"):
        smaller = ds.require(scores="m", incomplete="drop-systems")
    assert smaller.systems == ("x", "y")
    np.testing.assert_array_equal(smaller.matrix("m"), [[0, 1], [10, 11]])


def test_flattened_name_collision_is_an_error(tmp_path):
    _write(tmp_path / "m.jsonl", [_rec("a", "x", metrics={"x": {"y": 1}, "x.y": 2})])
    with pytest.raises(DataError, match=r"m\.jsonl:1: score name 'x\.y' occurs twice in one record after joining "
                                        r"nested names with '\.' \(metrics\['x'\]\['y'\] and metrics\['x\.y'\]\)"):
        load(tmp_path)


def test_collision_between_score_fields_is_an_error(tmp_path):
    _write(tmp_path / "m.jsonl", [_rec("a", "x", metrics={"litepyramid": {"recall": 0.5}}, litepyramid_recall=0.5)])
    with pytest.raises(DataError, match=r"score name 'litepyramid\.recall' occurs twice in one record"):
        load(tmp_path)
    _write(tmp_path / "m.jsonl", [_rec("a", "x", metrics={"s": 1}, scores={"s": 1})])
    with pytest.raises(DataError, match=r"score name 's' occurs twice .*\(metrics\['s'\] and scores\['s'\]\)"):
        load(tmp_path)


def test_same_value_from_two_files_is_merged_different_is_an_error(tmp_path):
    _write(tmp_path / "a.jsonl", _grid())
    _write(tmp_path / "b.jsonl", _grid())
    assert load(tmp_path).matrix("m").tolist() == [[0, 1], [10, 11]]
    changed = _grid()
    changed[2]["metrics"]["m"] = 10.5
    _write(tmp_path / "b.jsonl", changed)
    with pytest.raises(DataError, match=r"b\.jsonl:3: duplicate score 'm' for system 'y', input 'a' with a different "
                                        r"value \(10\.5 here, 10\.0 first seen at .*a\.jsonl:3\)"):
        load(tmp_path)


def test_conflicting_texts_are_errors(tmp_path):
    _write(tmp_path / "a.jsonl", [_rec("a", "x", summary="one")])
    _write(tmp_path / "b.jsonl", [_rec("a", "x", summary="two")])
    with pytest.raises(DataError, match=r"b\.jsonl:1: duplicate summary for system 'x', input 'a' "
                                        r"with a different text"):
        load(tmp_path)
    _write(tmp_path / "b.jsonl", [{"instance_id": "a", "references": ["r1"]}, _rec("a", "x", references=["r2"])])
    with pytest.raises(DataError, match=r"references for system 'x', input 'a' differ from the input's references"):
        load(tmp_path)


def test_unknown_field_is_an_error_unless_ignored(tmp_path):
    _write(tmp_path / "m.jsonl", [_rec("a", "x", metrics={"m": 1}, quality=4)])
    with pytest.raises(DataError, match=r"m\.jsonl:1: unknown field 'quality' \(SacreROUGE Metrics JSONL\); put "
                                        r"scores under \"metrics\" or \"scores\""):
        load(tmp_path)
    assert load(tmp_path, ignore_fields=["quality"]).score_names == ["m"]
    (tmp_path / "dataset.yml").write_text("ignore_fields: [quality]\n")
    assert load(tmp_path).score_names == ["m"]


def test_null_score_is_a_missing_cell_reported_on_use(tmp_path):
    records = _grid()
    records[1]["metrics"]["m"] = None
    _write(tmp_path / "m.jsonl", records)
    ds = load(tmp_path)
    with pytest.raises(DataError, match=r"missing in 1 of 4 cells, e\.g\. \(x, b\)"):
        ds.matrix("m")
    assert np.isnan(ds.require(scores=["m"], incomplete="keep-nan").matrix("m")[0, 1])


# ----------------------------------------------------------------------------------------------------
# Malformed records: the file, the line, the field and the expected format


@pytest.mark.parametrize(("record", "words"), [
    ({"summarizer_id": "x", "metrics": {"m": 1}}, "m.jsonl:1: missing field 'instance_id'; expected JSONL records"),
    ({"instance_id": "a", "metrics": {"m": 1}}, "m.jsonl:1: missing field 'summarizer_id' (only input-level records"),
    ({"instance_id": ["a"], "summarizer_id": "x", "metrics": {"m": 1}},
     "field 'instance_id' must be a string (or an integer), got list (SacreROUGE Metrics JSONL)"),
    ({"instance_id": "", "summarizer_id": "x", "metrics": {"m": 1}}, "field 'instance_id' is empty"),
    ({"id": 3, "scores": {"m": 1}}, ("field 'id' = 3 does not name (instance_id, summarizer_id); expected "
                                    "\"INSTANCE::SUMMARIZER\"")),
    ({"id": "a::b::c", "scores": {"m": 1}}, "field 'id' = 'a::b::c' does not name"),
    ({"instance_id": "a", "summarizer_id": "x"}, "the record holds no summary, references or scores"),
    ({"instance_id": "a", "summarizer_id": "x", "summary": 5}, ("field 'summary' must be a string, a list of sentence "
                                                              "strings or {\"text\": ...}, got int")),
    ({"instance_id": "a", "summarizer_id": "x", "summary": {"txt": "s"}},
     "field 'summary' is an object without 'text'"),
    ({"instance_id": "a", "summarizer_id": "x", "summary": "s", "peer": "s"}, "fields 'summary' and 'peer' both give"),
    ({"instance_id": "a", "summarizer_id": "x", "references": []}, "field 'references' is an empty list"),
    ({"instance_id": "a", "summarizer_id": "x", "references": "r"}, "field 'references' must be a list of references"),
    ({"instance_id": "a", "summarizer_id": "x", "references": ["r"], "reference": "r"},
     "fields ['references', 'reference'] all give references"),
    ({"instance_id": "a", "summarizer_id": "x", "metrics": {"m": "high"}},
     "score 'm' is 'high', expected a number, a list of numbers (one per annotator) or null"),
    ({"instance_id": "a", "summarizer_id": "x", "metrics": {"m": True}}, "score 'm' is True, expected a number"),
    ({"instance_id": "a", "summarizer_id": "x", "metrics": {"m": []}}, "score 'm' is an empty list"),
    ({"instance_id": "a", "summarizer_id": "x", "metrics": {"m": [1, None]}}, "score 'm' is None, expected a number"),
    ({"instance_id": "a", "summarizer_id": "x", "metrics": [1]},
     "field 'metrics' must be an object of scores, got list"),
    ({"instance_id": "a", "summarizer_id": "x", "metrics": {"": 1}}, "field 'metrics' holds an empty score name"),
])
def test_malformed_record_names_file_line_and_field(tmp_path, record, words):
    (tmp_path / "m.jsonl").write_text(json.dumps(record) + "\n")
    with pytest.raises(DataError) as info:
        load(tmp_path)
    assert words in str(info.value)
    assert str(tmp_path / "m.jsonl") in str(info.value)


def test_infinite_score_is_an_error(tmp_path):
    (tmp_path / "m.jsonl").write_text('{"instance_id": "a", "summarizer_id": "x", "metrics": {"m": Infinity}}\n')
    with pytest.raises(DataError, match=r"m\.jsonl:1: score 'm' is inf; scores must be finite numbers"):
        load(tmp_path)


# ----------------------------------------------------------------------------------------------------
# Encoding and reading (issue 15)


@pytest.mark.parametrize("empty", ["", "   ", "\t"])
def test_empty_name_or_path_is_refused(empty):
    with pytest.raises(DataError, match=r"name_or_path is empty; give a dataset name \(summeval, realsumm"):
        load(empty)


def test_none_name_is_refused():
    with pytest.raises(DataError, match=r"name_or_path must be a dataset name .* or a path, got NoneType"):
        load(None)


def test_non_utf8_file_names_file_and_line(tmp_path):
    good = json.dumps(_rec("a", "x", summary="caf\u00e9")) + "\n"
    (tmp_path / "m.jsonl").write_bytes(good.encode() + good.replace("\u00e9", "E").encode()
                                       + json.dumps(_rec("b", "x", summary="caf")).encode()[:-3] + b"\xe9\"}\n")
    with pytest.raises(DataError, match=r"m\.jsonl:3: not UTF-8 text \(byte 0xe9 at column \d+\); "
                                        r"save the file as UTF-8"):
        load(tmp_path)


def test_utf8_bom_and_blank_lines_are_accepted(tmp_path):
    (tmp_path / "m.jsonl").write_bytes(b"\xef\xbb\xbf" + json.dumps(_rec("a", "x", metrics={"m": 1})).encode()
                                       + b"\n\n  \n")
    assert load(tmp_path).matrix("m").tolist() == [[1.0]]


def test_empty_file_and_empty_folder(tmp_path):
    (tmp_path / "m.jsonl").write_text("\n \n")
    with pytest.raises(DataError, match=r"m\.jsonl: the file is empty \(no JSON records\)"):
        load(tmp_path)
    (tmp_path / "sub").mkdir()
    with pytest.raises(DataError, match=r"sub: directory holds no \*\.jsonl files"):
        load(tmp_path / "sub")


def test_invalid_json_and_non_object(tmp_path):
    (tmp_path / "m.jsonl").write_text(json.dumps(_rec("a", "x", summary="s")) + "\n[1, 2]\n")
    with pytest.raises(DataError, match=r"m\.jsonl:2: expected a JSON object, got list; expected JSONL records"):
        load(tmp_path)


def test_unread_data_files_in_a_folder_are_named(tmp_path):
    _write(tmp_path / "m.jsonl", _grid())
    (tmp_path / "more.json").write_text("[]")
    with pytest.warns(DataWarning, match=r"only \*\.jsonl files are read; not reading more\.json"):
        load(tmp_path)


# ----------------------------------------------------------------------------------------------------
# require() and describe


def test_require_texts_and_scores(fabbri):
    with pytest.raises(DataError, match=r"^dataset 'fabbri2020' has no texts; notebook 21 needs summaries and "
                                        r"references$"):
        fabbri.require(texts=True, purpose="notebook 21")
    with pytest.raises(DataError, match=r"^dataset 'fabbri2020' has no score 'rouge-su4\.f2'; this analysis needs it"):
        fabbri.require(scores=["rouge-su4.f2"])
    assert fabbri.require(scores=["qa-eval.f1", "expert.relevance"]) is fabbri
    with pytest.raises(ValueError, match="incomplete must be"):
        fabbri.require(scores=["qa-eval.f1"], incomplete="drop")


def test_require_drop_inputs_and_keep_nan(tmp_path):
    records = _grid() + [_rec(i, s, metrics={"n": 1.0}) for s in "xy" for i in "ab" if (s, i) != ("y", "b")]
    _write(tmp_path / "m.jsonl", records)
    ds = load(tmp_path)
    assert ds.require(scores=["m"]) is ds  # the incomplete 'n' does not block an analysis of 'm'
    with pytest.warns(DataWarning, match=r"dropped 1 of 2 inputs where 'n' \(1 cell\) is missing .*: b"):
        assert ds.require(scores=["m", "n"], incomplete="drop-inputs").inputs == ("a",)
    kept = ds.require(scores=["n"], incomplete="keep-nan")
    assert np.isnan(kept.matrix("n")).sum() == 1
    with pytest.raises(DataError, match="is missing in 1 of 4 cells"):
        ds.matrix("n")  # the original is unchanged


def test_require_everything_missing_raises(tmp_path):
    _write(tmp_path / "m.jsonl", [_rec("a", "x", metrics={"m": 1}), _rec("b", "y", metrics={"n": 1})])
    with pytest.raises(DataError, match=r"every one of the 2 inputs misses some of "
                                        r"'m' \(3 cells\) and 'n' \(3 cells\)"):
        load(tmp_path).require(scores=["m", "n"], incomplete="drop-inputs")


def test_drop_leaves_out_a_system_with_none_of_the_cells_first(tmp_path):
    """XSum hallucinations: Gold (the reference annotated as a system) has no metric score and two inputs have
    none; drop-inputs left out every input ("would leave nothing"), drop-systems every system."""
    cells = [(s, i) for s in "xyz" for i in "abcd" if s != "z" and i != "d"]
    _write(tmp_path / "m.jsonl", [_rec(i, s, metrics={"m": 1.0 + len(s + i)}) for s, i in cells]
           + [_rec("d", "z", metrics={"h": 1.0})])
    ds = load(tmp_path)
    with pytest.raises(DataError, match=r"drop-inputs leaves out 1 of 4 inputs and 1 of 3 systems with none of the "
                                        r"cells \(z\), drop-systems 1 of 3 systems and 1 of 4 inputs with none"):
        ds.require(scores=["m"])
    for policy in ("drop-inputs", "drop-systems"):
        with pytest.warns(DataWarning, match=r"with none of the cells \((z|d)\)"):
            kept = ds.require(scores=["m"], incomplete=policy)
        assert (kept.systems, kept.inputs) == (("x", "y"), ("a", "b", "c"))


def test_require_texts_partial(tmp_path):
    _write(tmp_path / "m.jsonl", [_rec(i, s, summary="s", references=["r"], metrics={"m": 1})
                                  for s in "xy" for i in "ab" if (s, i) != ("x", "b")]
           + [_rec("b", "x", metrics={"m": 1})])
    ds = load(tmp_path)
    assert not ds.has_texts and ds.n_references == 0
    with pytest.raises(DataError, match=r"texts missing in 1 of 4 cells \(e\.g\. \(x, b\)\)"):
        ds.require(texts=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        assert ds.require(texts=True, incomplete="drop-inputs").has_texts


def test_matrix_is_a_copy(fabbri):
    m = fabbri.matrix("qa-eval.f1")
    m[:] = 0
    assert fabbri.matrix("qa-eval.f1").sum() > 0


def test_display_names():
    assert display_name("expert.relevance") == "Relevance (expert)"
    assert display_name("qa-eval.f1") == "QAEval-F1"
    assert display_name("turker.consistency") == "Consistency (crowd)"
    # metaeval's own ROUGE signatures and keys read as the metrics they are (issue 25)
    assert display_name("rouge-su4|stem:yes|stop:no|stat:F|refs:A") == "ROUGE-SU4 F (stem)"
    assert display_name("R-2|stem=1|stop=1|R|f=B") == "ROUGE-2 R (stem, no stopwords, best reference)"
    assert display_name("grouge-1|lam:0.5") == "grouge-1|lam:0.5"  # any other signature is shown as it is
    assert display_name("human.normalized_acu") == "Normalized ACU (human)"
    assert load("realsumm").display_name("litepyramid.recall") == "LitePyramid"


def test_describe_table_and_cli(tmp_path, capsys):
    _write(tmp_path / "m.jsonl", [_rec(i, s, summary="s", references=["r1", "r2"], metrics={"m": 1, "human": {"q": 2}})
                                  for s in "xyz" for i in "ab"][:-1])
    table = load(tmp_path).describe()
    assert table.columns.tolist() == ["score", "display_name", "human", "complete", "missing"]
    assert table.values.tolist() == [["human.q", "Q (human)", True, 5, 1], ["m", "M", False, 5, 1]]
    assert main(["describe", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for line in ("systems: 3 (x, y, z)", "inputs: 2", "texts: partial (5 of 6 summaries)",
                 "references per input: 0 to 2", "default human score: human.q"):
        assert line in out
    assert "1 cell missing" in out
    assert main(["describe", ""]) == 2
    assert "metaeval describe: name_or_path is empty" in capsys.readouterr().err


def test_datasets_cli_lists_embedded(capsys):
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out.splitlines()
    # the atlas table (header, then summeval, realsumm, ...), then the other loadable names
    assert [line.split()[0] for line in out[1:3]] == ["summeval", "realsumm"]
    assert "24 x 100" in out[2]
    assert any(line.split()[:1] == ["fabbri2020"] for line in out)
    assert any(line.split()[:1] == ["bhandari2020"] for line in out)


def test_describe_realsumm_cli(capsys):
    assert main(["describe", "realsumm"]) == 0
    out = capsys.readouterr().out
    for line in ("systems: 24 (banditsumm_out, bart_out,", "inputs: 100", "texts: yes (2400 of 2400 summaries)",
                 "references per input: 1", "human scores: litepyramid.recall", "recall-oriented: yes"):
        assert line in out
    assert "cells missing" not in out


# ----------------------------------------------------------------------------------------------------
# The embedded datasets join on every key


def test_realsumm_texts_and_deutsch_scores_join_on_all_2400_keys():
    ds = load("realsumm")
    assert ds.shape == (24, 100) and ds.has_texts and ds.n_references == 1
    assert ds.default_human == "litepyramid.recall" and ds.human_scores == ["litepyramid.recall"]
    assert ds.recall_oriented
    texts_only = load(metaeval.datasets.data_dir() / "realsumm" / "realsumm_joined.jsonl")
    scores_only = load("bhandari2020")
    assert texts_only.systems == scores_only.systems == ds.systems
    assert texts_only.inputs == scores_only.inputs == ds.inputs
    assert set(ds.score_names) == set(scores_only.score_names)
    for name in ds.score_names:  # every Deutsch metric complete on the 2400 cells
        assert not np.isnan(ds.matrix(name)).any()
    # LitePyramid is in both sources and identical in all 2400 cells (else loading would have failed)
    np.testing.assert_array_equal(texts_only.matrix("litepyramid.recall"), scores_only.matrix("litepyramid.recall"))
    for name in ["qa-eval.f1", "rouge-1.recall", "rouge-2.recall", "rouge-l.recall", "bertscore.recall", "s3.pyr",
                 "METEOR", "BEwTE.f1", "AutoSummENG", "MeMoG", "NPowER", "MoverScore", "js-2"]:
        assert name in ds.score_names
    a, b = ds.systems.index("bart_out"), ds.inputs.index("0")
    assert ds.summaries()[a, b].startswith("Two CNN Heroes are among the earthquake survivors in Kathmandu")
    assert ds.references()[a, b][0].startswith("Anuradha Koirala and 425 young women")
    assert ds.matrix("litepyramid.recall").mean() == pytest.approx(texts_only.matrix("litepyramid.recall").mean())


def test_summeval_texts_ratings_and_fabbri_scores_join_on_all_1600_keys(summeval, fabbri):
    assert summeval.shape == (16, 100) and summeval.has_texts and summeval.n_references == 11
    assert set(summeval.score_names) == set(fabbri.score_names)
    assert summeval.human_scores[:4] == ["expert.coherence", "expert.consistency", "expert.fluency",
                                         "expert.relevance"]
    assert summeval.human_scores[4:] == ["turker.coherence", "turker.consistency", "turker.fluency",
                                         "turker.relevance"]
    assert summeval.default_human == "expert.relevance" and not summeval.recall_oriented
    for name in fabbri.score_names:
        np.testing.assert_array_equal(summeval.matrix(name), fabbri.matrix(name), err_msg=name)
    np.testing.assert_array_equal(summeval.ratings("expert.relevance"), fabbri.ratings("expert.relevance"))
    assert fabbri.require(scores=fabbri.score_names) is fabbri  # complete on all 1600 keys


def test_embedded_loads_are_cached_user_files_are_reread(tmp_path):
    assert load("fabbri2020") is load("fabbri2020")
    _write(tmp_path / "m.jsonl", _grid())
    assert load(tmp_path).matrix("m")[0, 0] == 0
    records = _grid()
    records[0]["metrics"]["m"] = 5  # same file size, written within the same clock tick
    _write(tmp_path / "m.jsonl", records)
    assert load(tmp_path).matrix("m")[0, 0] == 5


def test_folder_of_folders_names_the_subfolders(tmp_path):
    (tmp_path / "one").mkdir()
    _write(tmp_path / "one" / "m.jsonl", _grid())
    with pytest.raises(DataError, match=r"directory holds no \*\.jsonl files "
                                        r"\(its subfolders one do: load one of them\)"):
        load(tmp_path)
    with pytest.raises(DataError, match=r"unknown dataset 'bad\\x00path': not a known name"):
        load("bad\0path")


def test_a_mistyped_name_gets_the_near_match():
    """A typo of a known name is answered with that name (before: only the list of every known name)."""
    with pytest.raises(DataError, match=r"unknown dataset 'summevl' \(did you mean 'summeval'\?\): not a known name"):
        load("summevl")


def test_duplicate_json_key_is_an_error(tmp_path):
    (tmp_path / "m.jsonl").write_text('{"instance_id": "a", "summarizer_id": "x", "metrics": {"m": 1, "m": 2}}\n')
    with pytest.raises(DataError, match=r"m\.jsonl:1: key 'm' appears twice in one JSON object"):
        load(tmp_path)


def test_summeval_expert_mean_is_checked_or_loaded(tmp_path):
    rec = _rec("a", "x", summary="s", references=["r"], expert_annotations={"relevance": [1, 2, 4]},
               expert_mean={"relevance": 7 / 3})
    _write(tmp_path / "m.jsonl", [rec])
    assert load(tmp_path).matrix("expert.relevance")[0, 0] == pytest.approx(7 / 3)
    rec["expert_mean"] = {"relevance": 2.0}
    _write(tmp_path / "m.jsonl", [rec])
    with pytest.raises(DataError, match=r"field 'expert_mean' gives 'relevance' = 2\.0 but the mean of "
                                        r"expert_annotations\['relevance'\] is 2\.33"):
        load(tmp_path)
    rec["expert_mean"] = {"relevance": 7 / 3, "coherence": 4.5}  # a mean without annotations is not lost
    _write(tmp_path / "m.jsonl", [rec])
    assert load(tmp_path).matrix("expert.coherence")[0, 0] == 4.5


def test_null_texts_are_missing_texts(tmp_path):
    _write(tmp_path / "t.jsonl", [{"id": "a::x", "peer": None, "refs": ["r"]}, {"id": "a::y", "peer": "s", "refs": ["r"]},
                                  _rec("b", "x", summary="s", references=None, metrics={"m": 1})])
    ds = load(tmp_path)
    assert ds.texts is not None and not ds.has_texts
    assert ds.summaries().tolist() == [[None, "s"], ["s", None]]
    with pytest.raises(DataError, match=r"texts missing in 3 of 4 cells"):
        ds.require(texts=True)
