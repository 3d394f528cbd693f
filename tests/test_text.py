"""memkit.text: NFKC normalization and Chinese/English tokenization."""

from __future__ import annotations

from memkit.text import IRREGULAR, light_stem, normalize, s_stem, tokenize


def test_chinese_unigrams_then_bigrams() -> None:
    assert tokenize("住在杭州") == ["住", "在", "杭", "州", "住在", "在杭", "杭州"]


def test_single_cjk_character_has_no_bigram() -> None:
    assert tokenize("茶") == ["茶"]


def test_cjk_punctuation_splits_runs() -> None:
    toks = tokenize("杭州，上海")
    assert "杭州" in toks and "上海" in toks
    assert "州上" not in toks


def test_english_words_lowercased_without_punctuation() -> None:
    assert tokenize("Where do I live?") == ["where", "do", "i", "live"]


def test_english_plurals_stemmed() -> None:
    assert tokenize("She lives with cats") == ["she", "live", "with", "cat"]
    assert s_stem("stories") == "story" and s_stem("glass") == "glass" and s_stem("bus") == "bus"


def test_mixed_text_keeps_order() -> None:
    assert tokenize("我住在杭州 near West Lake") == [
        "我", "住", "在", "杭", "州", "我住", "住在", "在杭", "杭州", "near", "west", "lake",
    ]  # fmt: skip


def test_nfkc_full_width_to_ascii() -> None:
    assert normalize("ＰＹＴＨＯＮ ３") == "python 3"
    assert tokenize("ＡＢＣ１２３") == ["abc123"]
    assert tokenize("ＡＢＣ１２３") == tokenize("abc123")


def test_stopwords_dropped_on_request() -> None:
    # question words are stopwords since the LoCoMo evaluation (a question has them, its answer never)
    assert tokenize("where do I live", keep_stopwords=False) == ["live"]
    # CJK stopword unigrams go, bigrams containing them stay
    toks = tokenize("我的猫", keep_stopwords=False)
    assert "我" not in toks and "的" not in toks and "猫" in toks and "我的" in toks


def test_underscore_and_empty() -> None:
    assert tokenize("user_87") == ["user", "87"]
    assert tokenize("") == [] and tokenize("!!! ...") == []


def test_light_stemmer_joins_inflections() -> None:
    assert tokenize("painted painting paints paint") == ["paint"] * 4
    assert tokenize("loved loving loves") == ["love"] * 3
    assert tokenize("running bring red") == ["run", "bring", "red"]


def test_chinese_question_words_dropped_with_their_bigrams() -> None:
    toks = tokenize("我住在哪里？", keep_stopwords=False)
    assert toks == ["住", "我住", "住在"]
    assert "什么" not in tokenize("你喜欢喝什么", keep_stopwords=False)
    assert "什么" in tokenize("你喜欢喝什么")  # kept when stopwords are kept


def test_irregular_forms_meet_their_lemma() -> None:
    # a question asks "when did she go", the memory says "she went"
    assert tokenize("go goes going went gone") == ["go"] * 5
    assert tokenize("bought buy") == ["buy", "buy"] and tokenize("children child") == ["child", "child"]
    assert tokenize("made making make") == ["make"] * 3  # the lemma is stemmed like any word
    # forms that are usually another word are not mapped
    assert tokenize("rose ground left") == ["rose", "ground", "left"]
    assert IRREGULAR["went"] == "go" and "was" not in IRREGULAR  # stopwords are dropped before


def test_base_form_meets_its_inflections_final_e() -> None:
    assert len(set(tokenize("capture captured capturing captures"))) == 1
    assert len(set(tokenize("agree agreed agreeing"))) == 1
    assert tokenize("classes class beaches beach") == ["class", "class", "beach", "beach"]
    assert tokenize("seeing see fleeing flee freed free") == ["see", "see", "flee", "flee", "free", "free"]
    # short consonant-vowel-consonant stems keep their e: love / lake stay readable
    assert tokenize("love lake live") == ["love", "lake", "live"]
    assert light_stem("café") == "café" and light_stem("hope") == light_stem("hoping") == "hope"
