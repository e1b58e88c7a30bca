"""mnemo.writing.standing: a wish that stands from now on is kept in the user's words when
the extractor dropped it (issue 55, the third blind set: Qwen2.5-Coder-1.5B answered its
prompt's example instead), and a complaint, a time or a question is no such wish."""

from __future__ import annotations

import pytest

from mnemo.writing.standing import standing_notes, standing_sentences
from tests.writing import assert_quoted_once

LOCKER = (
    "Also for all future orders - please never leave parcels with the neighbours, "
    "i'd rather grab them from the parcel locker at the Co-op."
)


@pytest.mark.parametrize(
    ("texts", "sentence"),
    [
        (["Do you have the linen duvet cover in king size? the sage green one", LOCKER + " lol"], LOCKER),
        (
            ["宝宝下个月就要出生了，急用！另外我们家是双胞胎，以后推荐东西可以按两个娃来"],
            "另外我们家是双胞胎，以后推荐东西可以按两个娃来",
        ),
        (["From now on please leave parcels at the back door."], None),
        (["In future I'd like paper packaging, no plastic."], None),
        (["Going forward, pls always pack the glasses in bubble wrap."], None),
        (["For all my orders please use the side gate."], None),  # a wish about orders, no record
        (["麻烦以后都放门卫那里。"], None),
        (["今后快递一律放丰巢，别放门口。"], None),
    ],
)
def test_a_wish_that_stands_from_now_on_is_read_in_code(texts, sentence):
    assert standing_sentences(texts) == [sentence or texts[-1]]


@pytest.mark.parametrize(
    "text",
    [
        "Every time I order it arrives late.",  # a complaint
        "I'll order the blue one next time.",
        "我下单以后一直没发货。",  # a time, after the order
        "两周以后再说吧。",
        "In future, would you stock the blue one?",  # a question
        "If from now on you always ship by DHL, I'll stay.",  # a supposition
        "The future is bright for this brand.",  # no wish
        "From now on please check my order 4411 every day.",  # about an order: the order system's
    ],
)
def test_no_standing_wish_is_read_from_a_complaint_a_time_or_a_question(text):
    assert standing_sentences(["From now on please leave parcels at the back door."]) != []  # the rule reads one
    assert standing_sentences([text]) == []


def test_the_note_quotes_the_wish_unless_a_note_says_it():
    texts = ["Do you have the duvet in king size?", LOCKER]
    assert standing_notes(texts, ["The user lives in Leeds."]) == [(f"The user said: “{LOCKER}”", LOCKER)]
    said = "The user wants parcels never left with the neighbours but at the parcel locker at the Co-op."
    assert standing_notes(texts, [said]) == []


async def test_a_wish_the_extractor_dropped_is_kept_once(store, user):
    wish = "今后快递一律放丰巢，别放门口。"
    await assert_quoted_once(store, user, f"那款竹纤维毛巾有灰色的吗？{wish}", f"再说一次：{wish}", f"用户说：“{wish}”")


def test_the_eleventh_blind_set_s_wishes():
    """ "going fwd", and a wish the model's note of its other clauses does not say."""
    from mnemo.writing.standing import standing_notes, standing_sentences

    invoice = "oh and going fwd pls dont put the printed invoice in my parcels, just email it to me"
    assert standing_sentences([invoice]) == [invoice]
    wrap = "顺便说下，以后给我发货能别用那种塑料气泡膜了嘛，小区垃圾分类太麻烦了，塞点纸团就行"
    assert standing_notes([wrap], ["用户希望以后发货别用塑料气泡膜"]) == []  # precondition: a note of the wish
    assert standing_notes([wrap], ["用户希望小区垃圾分类太麻烦了，塞点纸团就行"]) == [(f"用户说：“{wrap}”", wrap)]
