"""Redaction of identifiers in exported free text (no database needed)."""

import pytest

from governance.pseudonyms import Pseudonymizer
from governance.redaction import Redactor


@pytest.mark.parametrize(
    "text, expected",
    [
        ("我的學號是B09901001，請寄信到 s_alice@example.test", "我的學號是[STUDENT_ID]，請寄信到 [EMAIL]"),
        ("r12345678 和 A123456789", "[STUDENT_ID] 和 [NATIONAL_ID]"),
        ("居留證 AB12345678、新式 A812345678", "居留證 [NATIONAL_ID]、新式 [NATIONAL_ID]"),
        ("手機0912-345-678或0912 345 678或0912345678", "手機[PHONE]或[PHONE]或[PHONE]"),
        ("+886 912 345 678, 886912345678, +886-2-2345-6789", "[PHONE], [PHONE], [PHONE]"),
        ("電話:(02)2345-6789 分機; 037-123456; 0800-123-456", "電話:[PHONE] 分機; [PHONE]; [PHONE]"),
        ("call +1 415 555 0100 now", "call [PHONE] now"),
    ],
)
def test_patterns_are_replaced(text, expected):
    assert Redactor().text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "OpenAlex W2741809807, doi 10.1016/j.compedu.2020.103456",
        "2025-08-01 到 2026-01-31，共 3.14159 小時，1,234,567 人",
        "ISBN 978-0-13-110362-7, page 12-34, at 09:30",
    ],
)
def test_ordinary_numbers_survive(text):
    assert Redactor().text(text) == text


def test_known_people_are_replaced_but_short_usernames_do_not_eat_words():
    redactor = Redactor(["s_alice", "陳同學", "Student Chen", "ta", "alice@uni.example"])
    assert (
        redactor.text("s_alice 問 陳同學 and Student Chen; ask the TA about data")
        == "[PERSON] 問 [PERSON] and [PERSON]; ask the TA about data"
    )
    assert redactor.text("S_ALICE wrote") == "[PERSON] wrote"
    assert redactor.data({"query": "s_alice", "n": 3, "list": ["陳同學"]}) == {
        "query": "[PERSON]",
        "n": 3,
        "list": ["[PERSON]"],
    }


def test_pseudonyms_are_stable_per_key_and_differ_across_keys():
    a, a_again, b = Pseudonymizer(b"k" * 32), Pseudonymizer(b"k" * 32), Pseudonymizer(b"j" * 32)
    assert a.person(7) == a_again.person(7) != b.person(7)
    assert a.person(7) != a.person(8) and a.person(7).startswith("p_")
    with pytest.raises(ValueError):
        Pseudonymizer(b"")


@pytest.mark.parametrize(
    "text, expected",
    [
        # A one-character Chinese surname with its given name, known to the platform.
        ("林安說要交報告", "[PERSON]說要交報告"),
        # Anyone addressed with a title, known or not (outside the study's channels too).
        ("黃大偉同學和歐陽娜娜學姊都來了", "[PERSON]同學和[PERSON]學姊都來了"),
        ("問過林老師了", "問過[PERSON]老師了"),
        # A two-letter romanised surname in a full name, either order; titled Latin names.
        (
            "Wei Li and Li Wei met Prof. Ho and Dr Chen-Yu Wu",
            "[PERSON] and [PERSON] met [PERSON] and [PERSON]",
        ),
        # ...without eating words that merely contain it, nor a lone "Li" or "TA".
        ("Wei Lin asked the TA; Li is a common name", "Wei Lin asked the TA; Li is a common name"),
        ("請問各位同學，大家都說", "請問各位同學，大家都說"),
    ],
)
def test_names_in_both_languages(text, expected):
    assert Redactor(["林安", "Wei Li", "Li Wei", "Li"]).text(text) == expected
