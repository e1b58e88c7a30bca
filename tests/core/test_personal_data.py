"""mnemo.core.personal_data: what is found and scrubbed in English and Chinese
text, whatever punctuation follows, and what is kept (amounts, dates, short
numbers). Through the episode promotion path: tests/kinds/test_episodes.py."""

from __future__ import annotations

import pytest

from mnemo.core import find_personal_data, personal_words, scrub_personal_data
from mnemo.kinds.hard_rules import check_rewrite

SCRUBBED = [
    ("Hi, my phone is +33 6 12 34 56 78.", "Hi, my phone is [phone]."),
    ("Call me at (415) 555-0134.", "Call me at [phone]."),
    ("call 415.555.0134!", "call [phone]!"),
    ("UK office: +44 20 7946 0958?", "UK office: [phone]?"),
    ("ring 06 12 34 56 78;", "ring [phone];"),
    ("Write to zhou.wang@x.com.", "Write to [email]."),
    ("order #884213 arrived broken", "order [number] arrived broken"),
    ("order 884213: broken", "order [number]: broken"),
    ("My card is 4111 1111 1111 1111.", "My card is [card]."),
    ("account 4111 1111 1111 1112, thanks", "account [number], thanks"),  # no Luhn check digit
    ("parcel ORD-884213!", "parcel ORD-[number]!"),
    ("我的电话是13812345678。", "我的电话是[phone]。"),
    ("请打 +86 138 1234 5678，谢谢", "请打 [phone]，谢谢"),
    ("电话：010-12345678；", "电话：[phone]；"),
    ("邮箱是zhou@x.com！", "邮箱是[email]！"),
    ("QQ邮箱884213@qq.com。", "QQ邮箱[email]。"),  # an address of digits is an address
    ("订单号884213？", "订单号[number]？"),
    ("卡号4111111111111111。", "卡号[card]。"),
]

#: What a case needs and identifies no one: kept as it is.
KEPT = [
    "I ordered 2 items; the order arrived on 12 May.",
    "It cost €35.50, then 1,299.00 yuan in 2026 (delivered 2026-05-12).",
    "Filter model F-300, 3 pieces, 10:30 am, a refund of ¥12500.00, a rate of 0.12345.",
    "共3件，5月12日到货，价格¥35.50。",
]

PUNCTUATION = [".", ",", ";", ":", "!", "?", "。", "，", "；", "！", "？", ")", "）"]


@pytest.mark.parametrize(("text", "scrubbed"), SCRUBBED)
def test_personal_data_is_scrubbed_in_english_and_chinese(text, scrubbed):
    assert scrub_personal_data(text) == scrubbed


@pytest.mark.parametrize("text", KEPT)
def test_amounts_dates_and_short_numbers_are_kept(text):
    assert find_personal_data(text) == []
    assert scrub_personal_data(text) == text


@pytest.mark.parametrize("mark", PUNCTUATION)
@pytest.mark.parametrize(
    ("data", "placeholder"),
    [
        ("+33 6 12 34 56 78", "[phone]"),
        ("13812345678", "[phone]"),
        ("(415) 555-0134", "[phone]"),
        ("zhou@x.com", "[email]"),
        ("#884213", "[number]"),
        ("4111 1111 1111 1111", "[card]"),
    ],
)
def test_whatever_punctuation_follows_the_whole_of_it_goes(data, placeholder, mark):
    assert scrub_personal_data(f"It is {data}{mark} Thanks") == f"It is {placeholder}{mark} Thanks"
    assert scrub_personal_data(f"是{data}{mark}谢谢") == f"是{placeholder}{mark}谢谢"


def test_what_is_found_is_the_whole_piece_in_order():
    found = find_personal_data("Phone +33 6 12 34 56 78, mail a@b.cn, order 884213.")
    assert [(f.kind, f.text) for f in found] == [
        ("phone", "+33 6 12 34 56 78"),
        ("email", "a@b.cn"),
        ("number", "884213"),
    ]


def test_a_shared_instruction_with_personal_data_is_refused_naming_all_of_it():
    assert check_rewrite("Call the customer back at +33 6 12 34 56 78.") == (
        "it contains personal data ('+33 6 12 34 56 78'); shared instructions must not carry a user's data"
    )
    assert check_rewrite("客户的电话是13812345678。") == (
        "it contains personal data ('13812345678'); shared instructions must not carry a user's data"
    )
    assert check_rewrite("Offer 2 free filters when an order arrived late, up to €35.50.") is None
    assert check_rewrite("Call +33 6 12 34 56 78.", shared=False) is None  # a user's own instructions


def test_scrub_replaces_the_longest_personal_word_first_whatever_its_case():
    text = "ZHOU WANG (zhou) wrote from a@b.cn about order #884213; Li and X agreed."
    assert scrub_personal_data(text, ["Zhou", "Zhou Wang", " Li ", "X", ""]) == (
        "[redacted] ([redacted]) wrote from [email] about order [number]; [redacted] and X agreed."
    )


def test_scrub_replaces_a_name_before_the_word_inside_it_whatever_the_alphabet_says():
    assert scrub_personal_data("Ann Wang called.", ["Wang", "Ann Wang"]) == "[redacted] called."


def test_personal_words_are_stripped_distinct_and_two_characters_or_more():
    assert personal_words([" Li ", "Li", "X", "", None, "Zhou Wang"]) == ["Li", "Zhou Wang"]
