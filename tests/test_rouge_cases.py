"""Hand-checked ROUGE values for measures the golden files do not cover, and bad input."""

import re

import pytest

from metaeval.rouge import score
from metaeval.text import porter_stem, rouge_stem, tokenize
from metaeval.variants import parse_measure, parse_variant, graham_variants, lin_measures, rouge155_variants

# Peer: tokens 1..12; reference: tokens 1..13 (digits are tokens; no stemming, no stopwords apply).
PEER = " ".join(str(i) for i in range(1, 13))
REF = " ".join(str(i) for i in range(1, 14))


def r5(x):
    return float("%.5f" % x)


def f_from(p, r):
    p, r = r5(p), r5(r)
    return r5(p * r / (0.5 * p + 0.5 * r))


def one(name, peer=PEER, refs=(REF,)):
    return float(score([peer], [list(refs)], [name]).iloc[0, 0])


@pytest.mark.parametrize("n", range(5, 10))
def test_rouge_n_high_orders(n):
    # peer has 13-n n-grams, reference 14-n, all peer n-grams occur in the reference
    assert one(f"R-{n}|stem=0|stop=0|R") == r5((13 - n) / (14 - n))
    assert one(f"R-{n}|stem=0|stop=0|P") == 1.0
    assert one(f"R-{n}|stem=0|stop=0|F") == f_from(1.0, (13 - n) / (14 - n))


def test_skip_bigrams_by_hand():
    # S9: pairs at distance <= 10. Peer (12 tokens): 66 pairs minus 1 at distance 11 = 65.
    # Reference (13 tokens): 78 minus 2 (distance 11) minus 1 (distance 12) = 75. Hits 65.
    assert one("R-S9|stem=0|stop=0|R") == r5(65 / 75)
    assert one("R-S9|stem=0|stop=0|P") == 1.0
    # S*: all pairs: peer 66, reference 78, hits 66.
    assert one("R-S*|stem=0|stop=0|R") == r5(66 / 78)
    # SU9 adds unigrams of all tokens but the last: peer 65 + 11 = 76, reference 75 + 12 = 87, hits 76.
    assert one("R-SU9|stem=0|stop=0|R") == r5(76 / 87)
    assert one("R-SU9|stem=0|stop=0|F") == f_from(1.0, 76 / 87)
    # SU*: peer 66 + 11 = 77, reference 78 + 12 = 90.
    assert one("R-SU*|stem=0|stop=0|R") == r5(77 / 90)
    # S0: adjacent pairs only = bigrams
    assert one("R-S0|stem=0|stop=0|R") == one("R-2|stem=0|stop=0|R")


def test_skip_distance_counts_gap_words():
    # "1 x x x x 2": the pair (1, 2) has 4 words between -> inside S4, outside S3
    peer, ref = "1 2", "1 a a a a 2"
    assert one("R-S4|stem=0|stop=0|P", peer, [ref]) == 1.0
    assert one("R-S3|stem=0|stop=0|P", peer, [ref]) == 0.0


def test_rouge_w_two_identical_tokens():
    # README: two identical tokens give R = 0.87055 for ROUGE-W-1.2
    assert one("R-W1.2|stem=0|stop=0|R", "alpha beta", ["alpha beta"]) == 0.87055
    # other weights: (2^w / (2^w)^w)^(1/w) = 2^(1-w)
    assert one("R-W1.5|stem=0|stop=0|R", "alpha beta", ["alpha beta"]) == r5(2 ** (1 - 1.5))


def test_rouge_l_union_over_sentences():
    # reference sentence "a b c d" against peer sentences "a b" and "c d": union LCS = 4 hits
    assert one("R-L|stem=0|stop=0|R", ["aa bb", "cc dd"], ["aa bb cc dd"]) == 1.0
    assert one("R-L|stem=0|stop=0|R", "aa bb cc dd", [["cc dd", "aa bb"]]) == 1.0
    # one sentence each, crossed order: LCS = 2
    assert one("R-L|stem=0|stop=0|R", "cc dd aa bb", ["aa bb cc dd"]) == 0.5


def test_pooled_versus_best_reference():
    refs = ["x y z w", "p q r s"]
    assert one("R-1|stem=0|stop=0|R", "x y", refs) == r5(2 / 8)
    assert one("R-1|stem=0|stop=0|R|f=B", "x y", refs) == 0.5
    assert one("R-1|stem=0|stop=0|P", "x y", refs) == r5(2 / (2 * 2))


def test_unrounded_values():
    frame = score(["aa bb cc"], [["aa bb dd"]], ["R-1|stem=0|stop=0|R"], rounding=False)
    assert frame.iloc[0, 0] == 2 / 3


def test_stemming_and_stopwords():
    assert tokenize("Hello, WORLD-wide 3.5") == ["hello", "world", "wide", "3", "5"]
    assert porter_stem("statement") == "statem"
    assert rouge_stem("went") == "go"
    assert rouge_stem("running", exceptions="empty") == "run"
    # "the" is a SMART stopword: removed with stop=1
    assert one("R-1|stem=0|stop=1|R", "cats", ["the cats"]) == 1.0
    assert one("R-1|stem=1|stop=0|R", "cat", ["cats"]) == 1.0  # cats (4 chars) -> cat
    assert rouge_stem("was") == "was" and rouge_stem("bus") == "bus"  # 3 chars or fewer are kept
    assert one("R-1|stem=1|stop=0|R", "houses", ["house"]) == 1.0


def test_variant_grids():
    assert len(graham_variants()) == 192
    assert len({v.signature for v in graham_variants()}) == 192
    assert len(rouge155_variants()) == 96
    assert [m.name for m in lin_measures()][:3] == ["R-1", "R-2", "R-3"]
    assert len(lin_measures()) == 17
    v = parse_variant("rouge-su4|stem:yes|stop:no|stat:F|agg:mean|refs:A")
    assert v.signature == "rouge-su4|stem:yes|stop:no|stat:F|agg:mean|refs:A"
    assert parse_variant(v.rouge.key).signature == v.rouge.signature


def test_empty_and_non_ascii_texts():
    frame = score(["", "Résumé naïve"], [["some words"], ["resume naive"]], ["R-1|stem=0|stop=0|F"])
    assert frame.iloc[0, 0] == 0.0
    # non-ASCII bytes split words: "r sum" / "na ve" vs "resume naive" share nothing
    assert frame.iloc[1, 0] == 0.0


@pytest.mark.parametrize(
    "args,error,match",
    [
        (([1], [["x"]]), TypeError, r"summaries\[0\]"),
        ((["x"], ["not a list"]), TypeError, r"references\[0\]"),
        ((["x"], [[3]]), TypeError, r"references\[0\]\[0\]"),
        ((["x"], [["x"]], ["R-Q"]), ValueError, "unknown ROUGE measure"),
        ((["x"], [["x"]], ["R-0"]), ValueError, "n >= 1"),
        ((["x"], [["x"]], ["R-1|alpha=1.5"]), ValueError, "alpha"),
        ((["x", "y"], [["x"]]), ValueError, "same length"),
        (("x", [["x"]]), TypeError, "single string"),
    ],
)
def test_bad_input(args, error, match):
    with pytest.raises(error, match=match):
        score(*args)


def test_measure_parsing_errors():
    with pytest.raises(ValueError, match="weight"):
        parse_measure("R-W0.5")
    with pytest.raises(ValueError, match="cannot parse 'Q'"):
        parse_variant("R-1|stem=1|stop=0|Q")


# ----------------------------------------------------------------------------------------------------
# Hostile sizes and contradictory signatures (issue 24, items 7 and 10)


def test_rouge_n_longer_than_every_text_computes_no_order_beyond_the_text(monkeypatch):
    """Catches: ROUGE-N building position codes for every order up to n (R-100000 on 3 tokens ran for
    minutes): an order longer than every text has no grams, so nothing beyond the longest text is built."""
    from metaeval.metrics.rouge import _pairs

    real, orders = _pairs._position_codes, []

    def counting(pr, n):
        orders.append(n)
        assert len(orders) <= 10, "n-gram orders beyond the longest text are being built"
        return real(pr, n)

    monkeypatch.setattr(_pairs, "_position_codes", counting)
    frame = score(["a b c"], [["a b c"]], ["R-100000|stem=0|stop=0|F", "R-3|stem=0|stop=0|F", "R-4|stem=0|stop=0|R"])
    # 0 grams of order 100000 or 4 in either text (P = R = F = 0); the one trigram matches
    assert frame.iloc[0].tolist() == [0.0, 1.0, 0.0]
    assert max(orders) == 3


def test_a_200000_token_line_against_a_60_token_reference():
    """Catches: ROUGE-L/W refusing (or allocating a table of 200,000^2 cells for) one long summary line
    against a short reference. Hand count: the reference's 60 distinct tokens occur in order in the summary,
    spread among 199,940 filler tokens; the LCS is the whole reference (one run of 60 marked reference
    positions): R-L R = 60/60, P = 60/200,000 = 0.0003; R-W: hits 60^1.2, R = (60^1.2 / (60^1.2)^1.2)^(1/1.2) =
    60^-0.2 = 0.44093 (ROUGE-1.5.5 raises the reference's base to w twice), P = (60^1.2 / 200,000^1.2)^(1/1.2) =
    0.0003; R-1 as R-L (60 hits)."""
    ref = " ".join(f"w{i}" for i in range(60))
    filler = ["x"] * 199_940
    for i in range(60):
        filler.insert(i * 3300, f"w{i}")
    summary = " ".join(filler)
    assert len(summary.split()) == 200_000
    names = [f"{m}|stem=0|stop=0|{s}" for m in ("R-L", "R-W1.2", "R-1") for s in ("R", "P")]
    frame = score([summary], [[ref]], names)
    assert frame.iloc[0].tolist() == [1.0, 0.0003, round(60 ** -0.2, 5), 0.0003, 1.0, 0.0003]


def test_checkpointed_lcs_equals_the_whole_table(monkeypatch):
    """Catches: a block boundary error in the checkpointed ROUGE-L trace (used when the bit table would be
    large): on random texts with long sentences it must give exactly the values of the whole-table path."""
    import numpy as np

    from metaeval.metrics.rouge import _pairs

    rng = np.random.default_rng(7)
    words = [f"t{i}" for i in range(12)]

    def text(n_sent):
        return "\n".join(" ".join(rng.choice(words, int(rng.integers(1, 300)))) for _ in range(n_sent))

    peers = [text(int(rng.integers(1, 4))) for _ in range(40)]
    refs = [[text(int(rng.integers(1, 4))) for _ in range(int(rng.integers(1, 3)))] for _ in range(40)]
    names = ["R-L|stem=0|stop=0|R", "R-L|stem=0|stop=0|P", "R-L|stem=0|stop=0|F|f=B"]
    whole = score(peers, refs, names, rounding=False)
    monkeypatch.setattr(_pairs, "_BIT_ROWS_LIMIT", 0)  # every sentence longer than ~sqrt(M) goes in blocks
    assert _pairs._lcs_block_rows(299, 299, False) < 299
    blocks = score(peers, refs, names, rounding=False)
    assert (whole.to_numpy() == blocks.to_numpy()).all()
    assert whole.to_numpy().min() > 0


def test_rouge_w_beyond_its_table_limit_names_the_fix(monkeypatch):
    from metaeval.metrics.rouge import _pairs

    monkeypatch.setattr(_pairs, "_WLCS_TABLE_LIMIT", 1000)
    with pytest.raises(ValueError, match=r"variants: ROUGE-W on a reference sentence of 20 tokens .* leave R-W out"):
        score([" ".join(["a"] * 20)], [[" ".join(["a"] * 20)]], ["R-W1.2|stem=0|stop=0|F"])


@pytest.mark.parametrize("signature,first,second", [
    ("rouge-1|stat:P|stat:R", "stat:P", "stat:R"),
    ("rouge-1|stem:yes|stem:no", "stem:yes", "stem:no"),
    ("R-1|F|P", "F", "P"),
    ("R-1|stem=1|stop=0|F|stat:R", "F", "stat:R"),
    ("rouge-l|refs:A|f=B", "refs:A", "f=B"),
])
def test_contradictory_options_are_refused(signature, first, second):
    """Catches: the last of two contradictory options winning silently."""
    with pytest.raises(ValueError, match=rf"variant '{re.escape(signature)}': conflicting options "
                                         rf"'{re.escape(first)}' and '{re.escape(second)}'"):
        parse_variant(signature)
    with pytest.raises(ValueError, match="conflicting options"):
        score(["the cat"], [["the cat"]], [signature])


def test_repeated_equal_options_are_one_option():
    assert parse_variant("R-1|stem=1|stem:yes|F|stat:f").signature == "rouge-1|stem:yes|stop:no|stat:F|refs:A"


def test_a_missing_reference_is_not_an_empty_one():
    """Catches: None among a record's references scored as an empty reference (P = 0.5 instead of 1.0)."""
    with pytest.raises(ValueError, match=r"references\[0\]\[1\] \(record 'doc7'\) is None: remove"):
        score(["the cat"], [["the cat", None]], ["R-1|stem=0|stop=0|P"], ids=["doc7"])
    # an empty reference is still an empty reference
    assert score(["the cat"], [["the cat", ""]], ["R-1|stem=0|stop=0|P"]).iloc[0, 0] == 0.5
