"""Grouping short texts into topics (research/topics.py): character bigrams for Chinese, words for
English, question words left out, terms weighted by rarity; embeddings only where the model reads
the language."""

from __future__ import annotations

from research.topics import Text, TopicIndex, language_of, terms


def test_chinese_is_cut_into_bigrams_english_into_words_without_question_words():
    assert terms("什麼是學習分析？") == {"學習", "習分", "分析"}
    assert terms("What is learning analytics?") == {"learning", "analytics"}
    assert terms("RAG 如何降低幻覺") == {"rag", "降低", "低幻", "幻覺"}
    assert language_of("RAG 如何降低幻覺") == "zh" and language_of("RAG and hallucination") == "en"


def _index(*texts, local_model=True) -> TopicIndex:
    index = TopicIndex(local_model=local_model)
    for key, text in enumerate(texts):
        index.add(text if isinstance(text, Text) else Text(key, text))
    return index


def test_paraphrases_in_chinese_join_and_other_questions_on_the_subject_do_not():
    index = _index(
        "學習分析的定義是什麼？",
        "學習分析有哪些倫理問題？",
        "布魯姆分類法有哪些層次？",
        "學習分析儀表板如何設計？",
    )
    assert index.match(Text(9, "什麼是學習分析？")) == 0
    assert index.match(Text(9, "學習分析會帶來哪些倫理爭議？")) == 1
    assert index.match(Text(9, "設計學習分析儀表板的原則")) == 3
    assert index.match(Text(9, "檢索增強生成如何減少幻覺？")) is None


def test_a_courses_own_subject_weighs_little_once_it_is_in_many_topics():
    many = _index(*(f"學習分析{x}" for x in ("的倫理", "的隱私", "的儀表板", "的資料來源", "的評量")))
    few = _index("學習分析的倫理")
    question = Text(9, "學習分析的定義")
    assert many.wording(question.terms, many.firsts[0].terms) < few.wording(
        question.terms, few.firsts[0].terms
    )


def test_the_local_models_vectors_judge_english_only():
    close, far = [1.0, 0.0], [0.0, 1.0]
    english = _index(Text(0, "What is learning analytics?", close, "m"))
    # Vectors say the same topic though the words differ: English follows the vectors.
    assert english.match(Text(1, "Define LA", close, "m")) == 0
    # Vectors say another topic though the words are alike: still the vectors.
    assert english.match(Text(1, "What is learning analytics exactly?", far, "m")) is None
    # Chinese with the local model: the vectors are ignored, the words decide.
    chinese = _index(Text(0, "學習分析的定義是什麼？", close, "m"))
    assert chinese.match(Text(1, "布魯姆分類法有哪些層次？", close, "m")) is None
    assert chinese.match(Text(1, "什麼是學習分析？", far, "m")) == 0
    # A remote (multilingual) model's vectors judge Chinese too.
    remote = _index(Text(0, "學習分析的定義是什麼？", close, "m"), local_model=False)
    assert remote.match(Text(1, "布魯姆分類法有哪些層次？", close, "m")) == 0


def test_vectors_of_another_model_are_never_compared():
    index = _index(Text(0, "What is learning analytics?", [1.0, 0.0], "old-model"))
    assert index.match(Text(1, "Define LA", [1.0, 0.0], "new-model")) is None  # words differ: apart
    assert index.match(Text(1, "What is learning analytics?", [0.0, 1.0], "new-model")) == 0  # words alike
