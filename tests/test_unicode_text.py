"""The opt-in Unicode tokenizer (``tok:unicode``) of ROUGE and BLEU, against hand-counted values.

Every count is written out next to its assertion. ROUGE's own tokenizer (ROUGE-1.5.5: ASCII letters and
digits only) gives these texts 0 or near 0, which is what the option is for; it stays the default.
"""

from __future__ import annotations

import math

import pytest

from metaeval.metrics.bleu import bleu_signature, sentence_bleu, system_bleu
from metaeval.metrics.variants import RougeVariant, parse_measure, parse_variant
from metaeval.rouge import score
from metaeval.text import snowball_stem, unicode_tokenize


def values(summary, reference, measures, extra="stem=0|stop=0"):
    names = [f"{m}|{extra}|tok=unicode|{s}" for m in measures for s in "PRF"]
    return score([summary], [[reference]], names).iloc[0].tolist()


def test_greek():
    # η γάτα κάθεται στο χαλί / η γάτα κοιμάται στο χαλί (ΓΆΤΑ case-folds to γάτα): 4 of 5 unigrams shared,
    # P = R = F = 4/5; bigrams η-γάτα, στο-χαλί shared of 4 each: 2/4 = 0.5
    assert values("Η γάτα κάθεται στο χαλί.", "Η ΓΆΤΑ κοιμάται στο χαλί.", ["R-1", "R-2"]) == [0.8] * 3 + [0.5] * 3
    # final sigma: ΓΆΤΟΣ and γάτος fold to the same token
    assert unicode_tokenize("ΓΆΤΟΣ γάτος") == ["γάτοσ", "γάτοσ"]
    # ROUGE-1.5.5's tokens: no letter is ASCII, nothing to count
    assert score(["Η γάτα κάθεται στο χαλί."], [["Η ΓΆΤΑ κοιμάται στο χαλί."]], ["R-1|stem=0|stop=0|F"]).iloc[0, 0] == 0


def test_greek_snowball_stems():
    # Snowball (greek): οι->οι, γάτες->γατ, κοιμούνται->κοιμ / η->η, γάτα->γατ, κοιμάται->κοιμ: 2 of 3 shared
    assert [snowball_stem(t, "el") for t in unicode_tokenize("Οι γάτες κοιμούνται")] == ["οι", "γατ", "κοιμ"]
    assert values("Οι γάτες κοιμούνται", "Η γάτα κοιμάται", ["R-1"], "stem=1|stop=0|lang=el") == [0.66667] * 3
    # without stemming only nothing matches: οι/η, γάτες/γάτα, κοιμούνται/κοιμάται all differ
    assert values("Οι γάτες κοιμούνται", "Η γάτα κοιμάται", ["R-1"]) == [0.0] * 3


def test_russian():
    # кошка сидит на ковре / кошка спит на ковре: 3 of 4 unigrams (0.75); bigrams: на-ковре of 3 (1/3)
    assert values("Кошка сидит на ковре", "Кошка спит на ковре", ["R-1", "R-2"]) == [0.75] * 3 + [0.33333] * 3
    # Snowball (russian): кошки/кошка -> кошк, сидят/сидит -> сид, на, коврах/ковре -> ковр: 4 of 4
    assert values("Кошки сидят на коврах", "Кошка сидит на ковре", ["R-1"], "stem=1|stop=0|lang=ru") == [1.0] * 3


def test_chinese_characters_are_tokens():
    # 猫 坐 在 垫 子 上 (6; 。 is punctuation) / 猫 在 垫 子 上 睡 觉 (7): 5 shared characters, P = 5/6 = 0.83333,
    # R = 5/7 = 0.71429, F = 2PR/(P + R) = 0.76923; bigrams 在垫 垫子 子上 shared: P = 3/5, R = 3/6,
    # F = 0.6/1.1 = 0.54545; LCS 猫在垫子上 = 5: as ROUGE-1
    got = values("猫坐在垫子上。", "猫在垫子上睡觉。", ["R-1", "R-2", "R-L"])
    assert got == [0.83333, 0.71429, 0.76923, 0.6, 0.5, 0.54545, 0.83333, 0.71429, 0.76923]
    assert unicode_tokenize("コーヒーを飲みます") == ["コ", "ー", "ヒ", "ー", "を", "飲", "み", "ま", "す"]
    assert unicode_tokenize("ภาษาไทย") == ["ภ", "า", "ษ", "า", "ไ", "ท", "ย"]


def test_accented_latin():
    # le café est très chaud / le café était très chaud (CAFE + combining acute composes to café under NFKC):
    # 4 of 5 shared
    assert values("Le café est très chaud", "Le CAFE\u0301 était très chaud", ["R-1"]) == [0.8] * 3
    # ROUGE-1.5.5's tokens: le caf est tr s chaud / le cafe tait tr s chaud: le tr s chaud, 4 of 6
    assert score(["Le café est très chaud"], [["Le CAFE\u0301 était très chaud"]],
                 ["R-1|stem=0|stop=0|F"]).iloc[0, 0] == 0.66667
    # Snowball (french): les->le, résumés->résum, étaient, courts->court / le, résumé->résum, était, court: 3 of 4
    assert values("Les résumés étaient courts", "Le résumé était court", ["R-1"], "stem=1|stop=0|lang=fr") == [0.75] * 3
    assert unicode_tokenize("Straße") == ["strasse"]


def test_bleu_with_unicode_tokens():
    # hypothesis 猫在垫子上 (5 characters), reference 猫在垫子上了 (6): every n-gram matches (p1..p4 = 5/5, 4/4,
    # 3/3, 2/2), brevity penalty exp(1 - 6/5): BLEU = 100 exp(-0.2) = 81.873
    assert system_bleu(["猫在垫子上"], [["猫在垫子上了"]], tokenizer="unicode") == pytest.approx(100 * math.exp(-0.2))
    # whitespace tokens: one token each, different: 0
    assert system_bleu(["猫在垫子上"], [["猫在垫子上了"]]) == 0.0
    assert sentence_bleu(["Η ΓΆΤΑ"], [["η γάτα"]], tokenizer="unicode")[0] == pytest.approx(100.0)
    assert "|tok:unicode|" in bleu_signature(1, sentence=False, tokenizer="unicode")
    with pytest.raises(ValueError, match="tokenizer must be one of"):
        sentence_bleu(["a"], [["a"]], tokenizer="intl")


def test_recorded_in_signature_and_key_and_never_a_default():
    v = parse_variant("rouge-1|tok:unicode|lang:el|stem:yes")
    assert v.signature == "rouge-1|stem:yes|stop:no|stat:F|refs:A|tok:unicode|lang:el"
    assert v.key == "R-1|stem=1|stop=0|F|tok=unicode|lang=el"
    assert parse_variant(v.signature) == v and parse_variant(v.key) == v
    # tok:unicode stems only when asked; the default variant is still ROUGE-1.5.5's
    assert parse_variant("rouge-1|tok:unicode").stem is False
    assert parse_variant("rouge-1") == RougeVariant(parse_measure("R-1")) and RougeVariant(parse_measure("R-1")).tok == "rouge"
    frame = score(["a b"], [["a b"]], ["R-1|stem=0|stop=0|F", "R-1|stem=0|stop=0|F|tok=unicode"])
    assert list(frame.columns) == ["R-1|stem=0|stop=0|F", "R-1|stem=0|stop=0|F|tok=unicode"]


@pytest.mark.parametrize("signature,match", [
    ("rouge-1|lang:el", "lang .* applies to tok:unicode only"),
    ("rouge-1|tok:unicode|stem:yes", "Snowball stemmer of lang, got lang None"),
    ("rouge-1|tok:unicode|stem:yes|lang:zh", "got lang 'zh'"),
    ("rouge-1|tok:unicode|exc:empty", "exc selects ROUGE-1.5.5's WordNet exception table"),
    ("rouge-1|tok:unicode|stop:yes|lang:el", "only with lang:en"),
    ("rouge-1|tok:icu", "tok must be 'rouge'"),
])
def test_options_that_do_not_apply_are_refused(signature, match):
    with pytest.raises(ValueError, match=match):
        parse_variant(signature)


def test_cli_rouge_with_the_unicode_tokenizer(tmp_path):
    import json

    from metaeval.run.cli import main

    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text(json.dumps({"id": "g1", "peer": "Οι γάτες κοιμούνται", "refs": ["Η γάτα κοιμάται"]},
                              ensure_ascii=False) + "\n", encoding="utf-8")
    # without --stem/--stop: no stemming, no stopwords (the Unicode tokenizer's opt-in defaults); 0 of 3 shared
    assert main(["rouge", str(src), str(out), "--methods", "R-1", "--tokenizer", "unicode"]) == 0
    scores = json.loads(out.read_text(encoding="utf-8"))["scores"]
    assert scores == {f"R-1|stem=0|stop=0|{s}|tok=unicode": 0.0 for s in "PRF"}
    # Greek Snowball stems: γατ and κοιμ shared, 2 of 3
    assert main(["rouge", str(src), str(out), "--methods", "R-1", "--tokenizer", "unicode", "--lang", "el",
                 "--stem", "yes"]) == 0
    scores = json.loads(out.read_text(encoding="utf-8"))["scores"]
    assert scores == {f"R-1|stem=1|stop=0|{s}|tok=unicode|lang=el": 0.66667 for s in "PRF"}
    with pytest.raises(SystemExit, match="give --lang"):
        main(["rouge", str(src), str(out), "--tokenizer", "unicode", "--stem", "yes"])
    with pytest.raises(SystemExit, match="lang .* applies to tok:unicode only"):
        main(["rouge", str(src), str(out), "--lang", "el"])
