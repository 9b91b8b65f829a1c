"""ROUGE's fast paths against their definitions, and exactness that must not depend on the CPU.

* the vectorized 5-decimal rounding against Python's correctly rounded ``"%.5f"`` (ties to even);
* ROUGE-W with ``-f B``: the minimal example of issue 15 with ROUGE-1.5.5's values, and every fully
  matched sentence length scores exactly 1 (k^w from the C library's pow on both sides of the ratio);
* the golden comparison re-run in a subprocess with numpy's AVX-512 paths switched off (or on);
* the bit-parallel LCS, the weighted LCS with row copies, the pair-free skip-bigram kernel and the
  batch tokenizer against the plain algorithms;
* zero records: an empty valid result, from the library and from ``metaeval rouge``.
"""

import json
import math
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from metaeval.metrics._inputs import as_sentences
from metaeval.metrics.rouge import _counts, _exact, _lcs, _pairs, _tokens
from metaeval.rouge import score
from metaeval.text import tokenize, tokenize_batch

ROOT = Path(__file__).resolve().parents[1]


def _string_round(values):
    return np.array([v if math.isnan(v) else float(f"{v:.5f}") for v in values])


def test_round5_equals_correctly_rounded_formatting():
    rng = np.random.default_rng(0)
    k = rng.integers(0, 100_000, 20_000)
    # exact binary ties (x * 1e5 = k + 0.5 exactly only for x = odd / 64) and their neighbours
    ties = np.array([o / 64 for o in range(1, 128, 2)])
    near = (k + 0.5) / 1e5
    cases = np.concatenate([
        rng.random(20_000), ties, near, np.nextafter(near, 0), np.nextafter(near, 1), k / 1e5,
        np.nextafter(k / 1e5, 0), -rng.random(1000), [0.0, -0.0, 1.0, 2 / 3, 0.5, np.nan, np.inf, -np.inf, 3e12],
        rng.random(1000) ** (1 / 1.2),
    ])
    ours = _exact._round5(cases)
    expected = _string_round(cases.tolist())
    np.testing.assert_array_equal(ours, expected)
    assert np.signbit(_exact._round5(np.array([-0.0, -1e-9]))).all()
    # the ties go to even, as glibc's printf and Python do: 1/64 = 0.015625 -> 0.01562, 3/64 -> 0.04688
    assert _exact._round5(np.array([1 / 64, 3 / 64])).tolist() == [0.01562, 0.04688]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(min_value=-2.0, max_value=2.0, allow_nan=False), min_size=1, max_size=50))
def test_round5_property(values):
    np.testing.assert_array_equal(_exact._round5(np.array(values)), _string_round(values))


def test_issue15_rouge_w_best_reference_minimal_example():
    # ROUGE-1.5.5 -f B, no stemming: R-W1.2 and R-W1.5 P/R/F = 0.14286 / 1.0 / 0.25. The second reference
    # matches fully, so its score is exactly 1.0 = the first one's, and the first one wins the tie.
    variants = [f"R-W{w}|stem=0|stop=0|{s}|f=B" for w in ("1.2", "1.5") for s in "PRF"]
    frame = score(["a b c d e f g"], [["a", "a b c d e f g"]], variants)
    assert frame.iloc[0].tolist() == [0.14286, 1.0, 0.25, 0.14286, 1.0, 0.25]


@pytest.mark.parametrize("weight", ["1.2", "1.5", "2", "3.7"])
def test_fully_matched_sentence_scores_exactly_one(weight):
    # hit = len^w (the WLCS of a sentence with itself) and base = len^w must be the same double: the
    # ratio is then exactly 1 before the 1/w power; a vectorized pow 1 ulp off gave 1 +- 2^-52.
    words = [f"w{i}" for i in range(90)]
    peers = [" ".join(words[:n]) for n in range(1, 91)]
    refs = [[p] for p in peers]
    variants = [f"R-W{weight}|stem=0|stop=0|{s}" for s in "PR"]
    frame = score(peers, refs, variants, rounding=False)
    w = float(weight)
    assert (frame.iloc[:, 0] == 1.0).all()
    # R-W's quirk: the reference count is (sum len^w)^w, so R = (len^w / (len^w)^w)^(1/w), in libc pow
    expected = [math.pow(math.pow(n, w) / math.pow(math.pow(n, w), w), 1 / w) for n in range(1, 91)]
    assert frame.iloc[:, 1].tolist() == expected
    best = score(peers, [["w0", p] for p in peers], [f"R-W{weight}|stem=0|stop=0|P|f=B"], rounding=False)
    # the first reference "w0" scores 1.0 too and wins the tie: P = (1 / len^w)^(1/w) = 1 / len (the second
    # reference would give P = 1)
    np.testing.assert_allclose(best.iloc[:, 0].to_numpy(), 1 / np.arange(1, 91), rtol=1e-12)


def test_pow_is_the_c_library_pow():
    table = _exact._pow_table(200, 1.2)
    assert table.tolist() == [math.pow(k, 1.2) for k in range(201)]
    x = np.random.default_rng(1).random(500) * 100
    assert _exact._libc_pow(x, 1 / 1.2).tolist() == [math.pow(v, 1 / 1.2) for v in x.tolist()]


def test_golden_rouge_with_other_numpy_cpu_features():
    """The golden comparison in a subprocess with numpy's AVX-512 dispatch turned off (or, when this run
    has it off, back on), so that CI checks exactness under both sets of CPU features."""
    env = dict(os.environ)
    if env.get("NPY_DISABLE_CPU_FEATURES"):
        env.pop("NPY_DISABLE_CPU_FEATURES")
    else:
        env["NPY_DISABLE_CPU_FEATURES"] = "X86_V4 AVX512_ICL"
    tests = [
        "tests/test_rouge_golden.py::test_demo_golden_including_best_reference",
        "tests/test_rouge_golden.py::test_malformed_golden_with_reasons",
        "tests/test_rouge_golden.py::test_summeval_golden",
        "tests/test_rouge_exactness.py::test_issue15_rouge_w_best_reference_minimal_example",
        "tests/test_rouge_exactness.py::test_fully_matched_sentence_scores_exactly_one",
    ]
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout


# ----------------------------------------------------------------------------------------------------
# Fast kernels against the plain algorithms


def _slots(peer, V):
    """Each token's slot (order of first occurrence in ``peer``, -1 if absent) and the words per bit row."""
    slot = np.full(V, -1, np.int64)
    ns = 0
    for t in peer.tolist():
        if slot[t] < 0:
            slot[t] = ns
            ns += 1
    return slot, (peer.shape[0] + 63) // 64


def _positions(peer, slot):
    """The 1-based positions of each slot in ``peer`` (CSR by slot), as _wlcs_mark takes them."""
    n_slots = int(slot.max()) + 1
    pos_off = np.zeros(n_slots + 1, np.int64)
    pos_list = np.zeros(max(peer.shape[0], 1), np.int64)
    groups = [[j + 1 for j, t in enumerate(peer.tolist()) if slot[t] == q] for q in range(n_slots)]
    for q, g in enumerate(groups):
        pos_off[q + 1] = pos_off[q] + len(g)
        pos_list[pos_off[q]:pos_off[q + 1]] = g
    return pos_off, pos_list


def test_lcs_kernels_mark_what_the_plain_dynamic_program_marks():
    rng = np.random.default_rng(0)
    for trial in range(1500):
        m, n = int(rng.integers(1, 140)), int(rng.integers(1, 140))
        # small alphabets: long runs and decreasing W rows; large ones: few matches per row (the sparse path)
        A = int(rng.integers(1, 10)) if trial % 3 else int(rng.integers(10, 60))
        model = rng.integers(0, A + int(rng.integers(0, 5)), m).astype(np.int64)  # some tokens not in peer
        peer = rng.integers(0, A, n).astype(np.int64)
        V = int(max(model.max(), peer.max())) + 1
        slot, words = _slots(peer, V)
        pos_off, pos_list = _positions(peer, slot)
        plain = np.zeros(m, np.int8)
        _lcs._lcs_mark_dp(model, peer, plain, False, 1.0)
        # K >= m: the whole bit table; K < m: every K-th row kept, blocks recomputed during the trace
        for K in (m, int(rng.integers(1, m + 1)), 1):
            bits = np.zeros(m, np.int8)
            _lcs._lcs_mark_bits(model, peer, bits, slot, pos_off, pos_list, np.zeros((K + 1) * words, np.uint64),
                                np.zeros(((m - 1) // K + 1) * words, np.uint64), np.zeros(words, np.uint64), words, K)
            np.testing.assert_array_equal(bits, plain, err_msg=f"LCS trial {trial}, K = {K}")
        w = float(rng.choice([1.2, 1.5, 2.0, 3.7]))
        plain_w = np.zeros(m, np.int8)
        _lcs._lcs_mark_dp(model, peer, plain_w, True, w)
        fast_w = np.zeros(m, np.int8)
        _lcs._wlcs_mark(model, peer, fast_w, slot, pos_off, pos_list, np.full((m + 1) * (n + 1), np.nan),
                     np.zeros(m + 1, np.int64), _exact._pow_table(200, w))
        np.testing.assert_array_equal(fast_w, plain_w, err_msg=f"WLCS trial {trial}")


@pytest.fixture(scope="module")
def summeval_texts():
    with open(ROOT / "data" / "summeval" / "summeval_joined.jsonl", encoding="utf-8") as fh:
        recs = [json.loads(line) for line in fh]
    rng = np.random.default_rng(3)
    pick = rng.choice(len(recs), 120, replace=False)
    return [recs[i]["summary"] for i in pick], [recs[i]["references"][:3] for i in pick]


def test_pair_free_skip_bigrams_equal_listed_pairs(summeval_texts, monkeypatch):
    peers, refs = summeval_texts
    # ROUGE-S with skip 200 counts every pair of these texts: it must equal S*
    variants = [f"R-{m}|stem={s}|stop=0|R" for m in ("S4", "SU4", "S9", "SU9", "S200", "SU200") for s in (0, 1)]
    listed = score(peers, refs, variants, rounding=False)
    monkeypatch.setattr(_pairs, "_SKIP_LIST_MAX", 0)
    counted = score(peers, refs, variants, rounding=False)
    np.testing.assert_array_equal(counted.to_numpy(), listed.to_numpy())
    star = score(peers, refs, ["R-S*|stem=0|stop=0|R", "R-SU*|stem=0|stop=0|R"], rounding=False)
    np.testing.assert_array_equal(star.to_numpy(), listed[["R-S200|stem=0|stop=0|R", "R-SU200|stem=0|stop=0|R"]])


def _plain_hits(pr, pair_peer, pair_ref, n, drop_last=False):
    """Clipped n-gram hits by counting tuples (``drop_last``: every token but the text's last, SU's unigrams)."""
    def grams(t):
        ids = pr.tok[pr.text_tok[t] : pr.text_tok[t + 1]].tolist()
        ids = ids[:-1] if drop_last else ids
        return Counter(tuple(ids[i : i + n]) for i in range(len(ids) - n + 1))

    return np.array([sum((grams(p) & grams(r)).values()) for p, r in zip(pair_peer, pair_ref)])


def test_all_orders_at_once_equal_one_order_at_a_time(summeval_texts):
    # _ngram_hits counts every order (and SU's unigrams without the last token) in one pass, stopping at the
    # first order the summary lacks: it must agree with counting each order's grams on its own.
    peers, refs = summeval_texts
    peers = peers + ["", "one", "a a a b", "b a"]
    refs = refs + [["x y"], ["one"], ["a a b a a", ""], ["a"]]
    texts = [as_sentences(t, "t") for t in peers] + [as_sentences(t, "t") for rs in refs for t in rs]
    pair_peer = np.repeat(np.arange(len(peers)), [len(rs) for rs in refs])
    pair_ref = len(peers) + np.arange(sum(len(rs) for rs in refs))
    for stem, stop in ((False, False), (True, True)):
        pr = _tokens._process(texts, stem, stop, "full")
        N = 6
        pos = np.stack([_counts._position_codes(pr, n) for n in range(1, N + 1)])
        both = _counts._ngram_hits(pair_peer, pair_ref, pr.tok, pr.text_tok, pos, True, pr.vocab_size)
        for n in range(1, N + 1):
            np.testing.assert_array_equal(both[n - 1], _plain_hits(pr, pair_peer, pair_ref, n), err_msg=f"order {n}")
        np.testing.assert_array_equal(both[N], _plain_hits(pr, pair_peer, pair_ref, 1, drop_last=True))
        assert both[0].sum() > both[1].sum() > both[3].sum() > 0  # real overlaps were counted


def test_skip_totals_closed_form():
    for L in range(30):
        for skip in (-1, 0, 1, 4, 9, 40):
            d = L if skip < 0 else skip + 1
            pairs = sum(min(d, L - 1 - i) for i in range(L))
            assert _counts._skip_totals(np.array([L]), skip, False)[0] == pairs
            assert _counts._skip_totals(np.array([L]), skip, True)[0] == pairs + max(L - 1, 0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_characters="\n", blacklist_categories=("Cs",))), max_size=6))
def test_tokenize_batch_equals_tokenize(sentences):
    ids, lengths, vocab = tokenize_batch(sentences)
    assert lengths.sum() == ids.size
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    for k, sentence in enumerate(sentences):
        assert [vocab[i] for i in ids[offsets[k] : offsets[k + 1]]] == tokenize(sentence)


def test_tokenize_batch_refuses_newlines():
    with pytest.raises(ValueError, match="newlines"):
        tokenize_batch(["a\nb"])


# ----------------------------------------------------------------------------------------------------
# Zero records (issue 15: a SIGSEGV in a numba kernel)


def test_zero_records_give_an_empty_frame():
    frame = score([], [])
    assert frame.shape == (0, 96)
    assert list(frame.columns)[:2] == ["R-1|stem=0|stop=0|P", "R-1|stem=0|stop=0|R"]
    one = score([], [], ["R-SU*|stem=1|stop=0|F", "R-W1.2|stem=0|stop=0|F|f=B"], columns="signature")
    assert one.shape == (0, 2) and one.dtypes.eq(float).all()


def test_records_without_tokens_or_references():
    frame = score(["", "   ", None], [[], [""], ["..."]], ["R-L|stem=0|stop=0|F", "R-SU4|stem=0|stop=0|F"],
                  warn=False)
    assert np.isnan(frame.iloc[0]).all()
    assert frame.iloc[1:].to_numpy().tolist() == [[0.0, 0.0], [0.0, 0.0]]


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_cli_rouge_on_empty_input(tmp_path, content):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text(content, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "metaeval", "rouge", str(src), str(out)], capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert out.exists() and out.read_text(encoding="utf-8") == ""
    assert "wrote 0 records" in done.stderr


def test_long_texts_unlimited_skip_bigrams_by_hand():
    # 2,000 distinct tokens against themselves: every one of the 1,999,000 pairs matches
    text = " ".join(f"t{i}" for i in range(2000))
    frame = score([text], [[text]], ["R-S*|stem=0|stop=0|R", "R-SU*|stem=0|stop=0|P"], rounding=False)
    assert frame.iloc[0].tolist() == [1.0, 1.0]
    half = " ".join(f"t{i}" for i in range(1000))
    # the first half's pairs: 499,500 of 1,999,000 (R); SU adds 999 of 1,999 unigrams
    frame = score([half], [[text]], ["R-S*|stem=0|stop=0|R", "R-SU*|stem=0|stop=0|R"], rounding=False)
    assert frame.iloc[0].tolist() == [499_500 / 1_999_000, (499_500 + 999) / (1_999_000 + 1999)]
