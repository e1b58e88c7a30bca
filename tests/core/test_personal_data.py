"""mnemo.core.personal_data: what is found and scrubbed in English and Chinese
text, however it is written (separators, widths, invisible characters,
numerals of both languages, e-mail addresses written out) and whatever
punctuation follows, and what is kept (amounts, dates, versions, short
numbers). Through the episode promotion path: tests/episodes/test_cases.py;
through proposals: tests/instructions/test_assistant.py."""

from __future__ import annotations

import pytest

from mnemo.core import find_personal_data, scrub_personal_data
from mnemo.core.personal_data import PHONE_REGIONS, fold, personal_words
from mnemo.instructions.hard_rules import check_rewrite

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

#: Issue 56: each reached another user's prompt, through an approved proposal
#: and a promoted episode. Digits joined across any run of non-letters,
#: whatever separates the groups, are one number; separators spelled out are
#: separators. Also held through both paths: tests/instructions/test_assistant.py,
#: tests/episodes/test_cases.py.
ISSUE_56 = [
    ("card 4.111.111.111.111.111 ok", "card [card] ok"),  # no amount has sixteen digits
    ("card 4,111,111,111,111,111 ok", "card [card] ok"),
    ("card 4111111111111111.00 ok", "card [card] ok"),
    ("card 4111. 1111. 1111. 1111 ok", "card [card] ok"),
    ("card 4111|1111|1111|1111 ok", "card [card] ok"),
    ("card 4111 * 1111 * 1111 * 1111 ok", "card [card] ok"),
    ("card 4111:1111:1111:1111 ok", "card [card] ok"),
    ("card 4111+1111+1111+1111 ok", "card [card] ok"),
    ("card 4111~1111~1111~1111 ok", "card [card] ok"),
    ("card 4111---1111---1111---1111 ok", "card [card] ok"),
    ("card 4111 =/= 1111 ## 1111 >> 1111 ok", "card [card] ok"),
    ("我的电话是一三八两两一三八两两两。", "我的电话是[phone]。"),  # 两 is the "two" of numbers read out
    ("电话幺三八杠零零一三杠八零零零。", "电话[phone]。"),
    ("call 650 dash 253 dash 0000 now", "call [phone] now"),  # separators spelled out
    ("call six five oh dash two five three dash zero zero zero zero now", "call [phone] now"),
    ("mail bob @ example . com now", "mail [email] now"),
    ("mail bob-at-example-dot-com now", "mail [email] now"),
    ("mail bob_at_example_dot_com now", "mail [email] now"),
    ("mail bob at example period com now", "mail [email] now"),
    ("mail bob at example point co now", "mail [email] now"),
    ("邮箱bob艾特example点com。", "邮箱[email]。"),
    ("邮箱 bob 艾特 example 点 com。", "邮箱 [email]。"),
    ("邮箱bob at example点com。", "邮箱[email]。"),
    ("我住在建国路 88 号。", "我住在[address]。"),
    ("我住在建国路第88号。", "我住在[address]。"),
    ("I live at Baker Street 221B, London.", "I live at [address], London."),
    ("Send it to Jianguo Road No. 88.", "Send it to [address]."),
    ("i live on baker street 221b.", "i live on [address]."),
    ("call double oh seven five five five one two three four now", "call [number] now"),
    ("邮箱bob@example。com。", "邮箱[email]。"),
    ("phone 138.001.380.00 ok", "phone [phone] ok"),  # no version has eleven digits
    ("at 192.168.100.200 ok", "at [number] ok"),
    ("card 4111 x 1111 $ 1111 & 1111 ok", "card [card] ok"),  # what ends a number ends no card
    ("card 4111 and 1111 and 1111 and 1111 ok", "card [card] ok"),
]

#: However a piece is written, it is found (issue 43): separators of every
#: kind and number, widths, invisible characters, numerals of both languages.
WRITTEN_ANYHOW = [
    ("card 5500   0000   0000   0004 ok", "card [card] ok"),  # several spaces
    ("card 4111.1111.1111.1111.", "card [card]."),
    ("card 4111,1111,1111,1111 ok", "card [card] ok"),
    ("card 4111, 1111, 1111, 1111 ok", "card [card] ok"),  # listed, Luhn-valid
    ("Amex 3782, 8224, 6310, 005 ok", "Amex [card] ok"),
    ("card 4111\t1111\n1111 1111 ok", "card [card] ok"),  # a tab and a line break
    ("card 4111–1111—1111-1111 ok", "card [card] ok"),  # every dash
    ("card 4111\u200b1111\u200b1111\u200b1111 ok", "card [card] ok"),  # zero-width spaces
    ("card 4111\u00ad1111\u20601111\ufeff1111 ok", "card [card] ok"),  # soft hyphen, word joiner, BOM
    ("card ４１１１ １１１１ １１１１ １１１１ ok", "card [card] ok"),  # full width
    ("card ٤١١١١١١١١١١١١١١١ ok", "card [card] ok"),  # Arabic-Indic digits
    ("Order 12345 is late.", "Order [number] is late."),
    ("tel 4\u200b15 555\u00a00134.", "tel [phone]."),
    ("France: 01.42.68.53.00.", "France: [phone]."),
    ("call five five five zero one three four now", "call [number] now"),
    ("Call Four One Five-Five Five Five-Oh One Three Four.", "Call [phone]."),
    ("mail bob at example dot com please", "mail [email] please"),
    ("mail bob[at]example[dot]com please", "mail [email] please"),
    ("mail bob(at)example.com please", "mail [email] please"),
    ("mail bob {at} mail {dot} example {dot} org please", "mail [email] please"),
    ("mail bob @ example.com please", "mail [email] please"),
    ("mail bob\u200b@exam\u200bple.com please", "mail [email] please"),
    ("mail ｂｏｂ＠ｅｘａｍｐｌｅ．ｃｏｍ please", "mail [email] please"),
    ("I live at 221B Baker Street, London.", "I live at [address], London."),
    ("Send it to No. 88 Jianguo Road.", "Send it to [address]."),
    ("Ship to 350 5th Avenue, New York.", "Ship to [address], New York."),
    ("i live at 12 baker street.", "i live at [address]."),
    ("我的电话是一三八 零零一三 八零零零。", "我的电话是[phone]。"),
    ("卡号四一一一 一一一一 一一一一 一一一一。", "卡号[card]。"),
    ("订单号１２３４５到了。", "订单号[number]到了。"),
    ("订单号壹贰叁肆伍。", "订单号[number]。"),
    ("电话：138-0013-8000。", "电话：[phone]。"),
    ("邮箱 bob at example dot com。", "邮箱 [email]。"),
    ("邮箱bob＠example．com。", "邮箱[email]。"),
    ("我住在北京市朝阳区建国路88号3号楼501室，谢谢。", "我住在[address]，谢谢。"),
    ("地址：上海市南京西路一二六六号。", "地址：[address]。"),
    *ISSUE_56,
]

#: What a case needs and identifies no one: kept as it is.
KEPT = [
    "I ordered 2 items; the order arrived on 12 May.",
    "It cost €35.50, then 1,299.00 yuan in 2026 (delivered 2026-05-12).",
    "Filter model F-300, 3 pieces, 10:30 am, a refund of ¥12500.00, a rate of 0.12345.",
    "共3件，5月12日到货，价格¥35.50。",
    # Normal text that a looser finder would take (issue 43: do not over-scrub).
    "We met on 2026-12-04 at 10:30; it shipped 2026/12/04, 04.12.2026 or 12/04/2026.",
    "It cost $1,299.00, 12 500,00 € or 1.299.000,50 ₽ at 0.5% interest.",
    "3 items, 2 boxes, order 1234 and order #998, orders 1234, 5678 and 9012.",
    "Orders 1234, 5678, 9012, 3456 (not Luhn-valid); in 2023, 2024, 2025, 2026 (years, Luhn-valid).",
    "macOS 10.15.7, Python 3.12.1, v2.4.10 and router 192.168.1.1.",
    "It happened in 2026.\n\n1. Restart it.",
    "Look at example.com for help, or meet me at the park at 5.",
    "One or two of them, maybe three; oh, one more.",
    "Route 66 and 3 new road bikes on Main Street; there is only one main street.",
    "一个一个地来，三五成群，第一步。",
    "二〇二六年十二月四日，共三件，一千二百元。",
    "订单号1234，共3件，v2.4.10版本。",
    # Digits join across any non-letters (issue 56), but amounts, times and dates
    # are no number, nor amounts side by side, lists, list items or a blank line.
    "It costs $12.50, or $120 + $35 shipping; 50% + 30% off.",
    "Open 10:30-11:30 and 14:00–17:30, at 10:30:45 on 2026-05-25 10:30.",
    "Refund 1,299.00 - 35.50 = 1,263.50 at a rate of 7.1234, ¥99 × 3 = ¥297.",
    "Updated in 2026:\n1. Unplug it.\n2. Wait 10 minutes.\n3) Plug it in.",
    "Steps: 1) unplug 2) wait 30 s 3) plug in; chapter 3.2, sizes 42 / 43, 1/2 cup.",
    "2026年5月25日 14:30 到货，共两件，下午两点到五点。",
    "Look at example . com or meet me at home. Then we go.",
    "Booked 2026-05-12-2026-05-14 and 2026/05/31-2026/06/02, a double check of 12.",
]

PUNCTUATION = [".", ",", ";", ":", "!", "?", "。", "，", "；", "！", "？", ")", "）"]


@pytest.mark.parametrize(("text", "scrubbed"), SCRUBBED)
def test_personal_data_is_scrubbed_in_english_and_chinese(text, scrubbed):
    assert scrub_personal_data(text) == scrubbed


@pytest.mark.parametrize(("text", "scrubbed"), WRITTEN_ANYHOW)
def test_personal_data_is_found_however_it_is_written(text, scrubbed):
    assert scrub_personal_data(text) == scrubbed
    (found,) = find_personal_data(text)
    assert text[found.start : found.end] == found.text  # the span in the text as written
    assert check_rewrite(text) == (
        f"it contains personal data ({found.text!r}); shared instructions must not carry a user's data"
    )


@pytest.mark.parametrize("text", KEPT)
def test_amounts_dates_and_short_numbers_are_kept(text):
    assert find_personal_data(text) == []
    assert scrub_personal_data(text) == text
    assert check_rewrite(text) is None


@pytest.mark.parametrize(
    "date", ["2026-12-25", "2026/05/31", "25.12.2026", "12/25/2026", "31/05/26", "05/31/26", "25-12-2026"]
)
def test_a_date_whose_day_is_over_12_is_kept_in_either_order(date):
    assert find_personal_data(f"Delivered {date}.") == []
    assert scrub_personal_data(f"Delivered {date}, 10:30.") == f"Delivered {date}, 10:30."
    for not_a_date in (date.replace("12", "13").replace("05", "13"), date.replace("25", "32").replace("31", "32")):
        assert [f.kind for f in find_personal_data(f"Ref {not_a_date}.")] == ["number"], not_a_date


#: Every Chinese numeral a phone number is read out with, and its digit.
ZH_NUMERALS = {
    "〇": "0", "零": "0", "一": "1", "幺": "1", "壹": "1", "二": "2", "两": "2", "兩": "2", "贰": "2", "貳": "2",
    "三": "3", "叁": "3", "四": "4", "肆": "4", "五": "5", "伍": "5", "六": "6", "陆": "6", "七": "7", "柒": "7",
    "八": "8", "捌": "8", "九": "9", "玖": "9",
}  # fmt: skip


@pytest.mark.parametrize(("numeral", "digit"), ZH_NUMERALS.items())
def test_every_chinese_numeral_of_a_phone_number_reads_as_its_digit(numeral, digit):
    assert fold(numeral).text == digit
    number = f"一三八{numeral * 4}八零零零"  # 138 dddd 8000
    assert [(f.kind, f.text) for f in find_personal_data(f"电话{number}。")] == [("phone", number)]
    assert scrub_personal_data(f"电话{number}。") == "电话[phone]。"


def test_a_listed_card_is_found_even_when_a_group_looks_like_a_year():
    card = _luhn_valid("411120261111111")  # 4111 2026 1111 111x
    listed = ", ".join(card[i : i + 4] for i in range(0, 16, 4))
    assert "2026" in listed.split(", ")
    assert [(f.kind, f.text) for f in find_personal_data(f"Card: {listed}.")] == [("card", listed)]
    assert find_personal_data("In 2023, 2024, 2025, 2026.") == []  # years all: a list, Luhn-valid as it is
    after_years = f"In 2023, 2024, 2025, 2026, {listed}."
    assert [(f.kind, f.text) for f in find_personal_data(after_years)] == [("card", listed)]


def test_a_listed_card_of_19_digits_in_five_groups_is_found():
    card = _luhn_valid("6" + "2" * 17)
    listed = ", ".join(card[i : i + 4] for i in range(0, 19, 4))
    assert [(f.kind, f.text) for f in find_personal_data(f"UnionPay {listed} ok")] == [("card", listed)]


@pytest.mark.parametrize(
    "gap", [" ", "   ", "\t", "\n", " \n ", "\r\n", ". ", "|", " * ", "+", "~", "---", " -/- ", "()"]
)
def test_digit_groups_are_one_number_across_any_run_of_non_letters_and_one_line_break(gap):
    """docs/security.md: groups join across anything but letters, what ends a
    list or an amount, two line breaks, and one before a list item."""
    (found,) = find_personal_data(f"Ref 123{gap}45 ok")
    assert (found.kind, found.text) == ("number", f"123{gap}45")


@pytest.mark.parametrize("gap", ["\n\n", "\n \n", "\n-\n", "\r\n\r\n", " x ", "号", ", ", "; ", "、", " $", "€", "% "])
def test_digit_groups_are_two_numbers_across_letters_a_list_a_currency_or_two_line_breaks(gap):
    assert [f.text for f in find_personal_data(f"Ref 123{gap}45678 ok")] == ["45678"]  # the second alone
    assert find_personal_data(f"Ref 123{gap}45 ok") == []


def test_a_line_break_before_a_list_item_ends_a_number():
    assert [f.text for f in find_personal_data("Ref 1234\n1 unit.")] == ["1234\n1"]  # no item: one number
    for item in ("1. Restart it.", "12) Restart it.", "3."):
        assert find_personal_data(f"Ref 1234\n{item}") == [], item
        assert find_personal_data(f"Since 2026:\n{item}") == [], item


def test_the_folded_text_maps_each_character_back_to_where_it_came_from():
    text = "a\u200b４ five-six 三"
    folded = fold(text)
    assert folded.text == "a4 5-6 3"
    assert [text[s:e] for s, e in zip(folded.starts, folded.ends, strict=True)] == [
        *("a", "４", " ", "five", "-", "six", " ", "三")
    ]
    assert text[slice(*folded.span(1, 6))] == "４ five-six"  # as written, from the folded "4 5-6"


@pytest.mark.parametrize("written", ["{}", "#{}", "Order {}.", "No. {} ok", "订单{}号", "{}-AB"])
def test_a_run_of_five_digits_or_more_is_a_number_and_four_is_not(written):
    for run in ("12345", "123456", "12 345", "1234 5"):
        (found,) = find_personal_data(written.format(run))
        assert (found.kind, found.text.lstrip("#")) == ("number", run)
    assert find_personal_data(written.format("1234")) == []  # the positive's precondition: one digit less


def _luhn_valid(body: str) -> str:
    """``body`` with the check digit that makes it Luhn-valid."""
    doubled = [int(d) * (1 + i % 2) for i, d in enumerate(reversed(body + "0"))]
    total = sum(n - 9 if n > 9 else n for n in doubled)
    return body + str(-total % 10)


@pytest.mark.parametrize(
    "card",
    [
        "3782 822463 10005",  # American Express, 15
        "3056 930902 5904",  # Diners Club, 14
        "4222222222222",  # Visa, 13
        "6011 0009 9013 9424",  # Discover, 16
        *(_luhn_valid("6" + "2" * (n - 2)) for n in range(13, 20)),  # every length, 19 (UnionPay) included
    ],
)
def test_cards_of_13_to_19_luhn_valid_digits_are_cards(card):
    (found,) = find_personal_data(f"Card: {card}.")
    assert (found.kind, found.text) == ("card", card)
    wrong = card[:-1] + str((int(card[-1]) + 1) % 10)  # the check digit off by one
    assert [(f.kind, f.text) for f in find_personal_data(f"Card: {wrong}.")] == [("number", wrong)]


def test_luhn_valid_numbers_shorter_or_longer_than_a_card_are_numbers():
    for n in (12, 20):
        number = _luhn_valid("6" + "2" * (n - 2))
        assert [f.kind for f in find_personal_data(f"Ref {number}.")] == ["number"]


#: Each region of PHONE_REGIONS, a number as it is usually written there.
USUAL_WRITING = {
    "CN": ["138-0013-8000", "(010) 6552 9988"],
    "US": ["(415) 555-0134", "415.555.0134"],
    "GB": ["020 7946 0958", "07700 900123"],
    "IN": ["098765 43210", "022-2345 6789"],
    "AU": ["(02) 9374 4000", "0412 345 678"],
    "FR": ["01.42.68.53.00", "06 12 34 56 78"],
    "DE": ["(030) 12345678", "0171 1234567"],
}


@pytest.mark.parametrize("region", PHONE_REGIONS)
def test_every_phone_region_finds_its_numbers_in_its_usual_writing(region):
    assert set(USUAL_WRITING) == set(PHONE_REGIONS)
    for number in USUAL_WRITING[region]:
        for text in (f"Tel. {number}, thanks", f"电话{number}。"):
            assert [(f.kind, f.text) for f in find_personal_data(text)] == [("phone", number)], text


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
    assert personal_words([" Li ", "Li", "X", "", None, "Zhou Wang", "\u200b\u200b", "Ｘ\u200b"]) == [
        *("Li", "Zhou Wang")
    ]


def test_a_personal_word_is_found_also_written_in_other_widths_or_with_invisible_characters():
    assert check_rewrite("Greet Zhou Wang.", personal=["Zhou Wang"]) is not None  # the precondition
    for written in ("Zh\u200bou Wang", "ＺＨＯＵ ＷＡＮＧ", "zhou\u00a0wang", "Zhou W\u2060ang"):
        assert check_rewrite(f"Greet {written}.", personal=["Zhou Wang"]) == (
            "it contains personal data of the user who gave the feedback ('Zhou Wang')"
        ), written
        assert scrub_personal_data(f"{written} wrote; {written} agreed.", ["Zhou Wang"]) == (
            "[redacted] wrote; [redacted] agreed."
        )
    assert scrub_personal_data("杭\u200b州的周 伟", ["杭州", "周伟"]) == "[redacted]的周 伟"  # a space is not invisible


@pytest.mark.parametrize("text", ["a" * 10_000, "bob@" + "a." * 5_000, "a.b-c_d+" * 1_250])
def test_a_long_text_without_personal_data_is_read_in_linear_time(text):
    """A run that could start an e-mail address is tried from its start only:
    tried from each of its characters, 10,000 letters took 10 s of CPU."""
    import time

    started = time.process_time()
    assert [f.kind for f in find_personal_data(text + " and 12345")] == ["number"]  # read to the end
    assert time.process_time() - started < 2.0


#: docs/security.md, "Still not found": each passes, as the page says.
STILL_NOT_FOUND = [
    "mail bob at example.com or bob at example . com",
    "call fifty-five fifty-five",
    "call 650, 253, 0000 or 650、253、0000",
    "ref 1234 x 5678 $ 90",
    "ref 123\n\n4567",
    "pay 4,155,550 or 655.299.88",
    "电话洞幺拐洞",
    "I live at 12 baker street in London.",
]

#: docs/security.md, "Scrubbed though it identifies no one" (deny by default).
SCRUBBED_ANYWAY = [
    ("It cost 10000 yuan.", "10000"),
    ("Chrome 120.0.6099.109 here.", "120.0.6099.109"),
    ("at 192.168.100.200 ok", "192.168.100.200"),
    ("in 2026. 12 items", "2026. 12"),
    ("ISO 9001:2015 ok", "9001:2015"),
    ("120 + 35 = 155 ok", "120 + 35 = 155"),
    ("on Main Street 5 minutes away", "Main Street 5"),
]


@pytest.mark.parametrize("text", STILL_NOT_FOUND)
def test_what_the_security_page_says_still_passes_passes(text):
    assert find_personal_data(text) == []


@pytest.mark.parametrize(("text", "found"), SCRUBBED_ANYWAY)
def test_what_the_security_page_says_is_scrubbed_anyway_is(text, found):
    assert [f.text for f in find_personal_data(text)] == [found]
