"""mnemo.writing.remembered: a fact the user asks to be remembered is kept in their
words when the extractor dropped it (issue 55 point 4: Qwen2.5-Coder-1.5B did, after a
supposition, in Chinese), and a question about memory asks nothing to be kept."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from mnemo import alist_notes
from mnemo.writing import aextract_messages
from mnemo.writing.remembered import remembered_facts, remembered_notes
from tests.writing import EXTRACT, load_nothing_extracted


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        (
            "If I went vegan, would your bars work for me? Anyway, please remember that I can't eat shellfish.",
            ["I can't eat shellfish."],
        ),
        ("假如我改吃素的话，蛋白棒还适合我吗？对了，请记住我不吃香菜。", ["我不吃香菜。"]),
        ("要是我买家庭装，小冰箱放得下吗？另外记住，我不喝牛奶。", ["我不喝牛奶。"]),
        ("Could you remember that I'm vegan?", ["I'm vegan"]),
        ("你能记住我不吃辣吗？", ["我不吃辣"]),
        ("Remember: I have two cats.", ["I have two cats."]),
        # What stands between the ask and the fact (issue 55, the second blind set).
        ("ok. also pls remember this about me: I'm colour-blind.", ["I'm colour-blind."]),
        ("另外帮我记一下哦，我对酒精过敏。", ["我对酒精过敏。"]),
        # Words before a colon, a pronoun typed without its apostrophe (issue 55, the fourth blind set).
        (
            "but pls remember this for real: I always want refunds back to my PayPal, never store credit.",
            ["I always want refunds back to my PayPal, never store credit."],
        ),
        ("remember: im vegan", ["im vegan"]),
        # Nothing asked to be kept: a question about memory, a memory of the user's own.
        ("Do you remember my size?", []),
        ("I can't remember my password.", []),
        ("Remember that time I ordered a lamp?", []),
        ("我记得我买过。", []),
        # A question that asks, by its tag or after "btw" (one rule with grounding's: asks_to_remember).
        ("btw can you remember that I'm vegetarian?", ["I'm vegetarian"]),
        ("帮我记一下我不吃辣好吗？", ["我不吃辣"]),
        ("Keep in mind I'm vegan, ok?", ["I'm vegan"]),
    ],
)
def test_a_fact_asked_to_be_remembered_is_read_in_code(text, facts):
    assert remembered_facts([text]) == facts


@pytest.mark.parametrize("text", ["Remember that time I ordered a lamp?", "Do you remember I'm vegan?"])
def test_grounding_and_the_reader_read_one_request(text):
    """A question that asks nothing to be kept is no request to grounding either: no sentence stated."""
    from mnemo.writing.grounding import asks_to_remember, stated

    assert asks_to_remember("Could you remember that I'm vegan?")  # precondition: a question may ask
    assert not asks_to_remember(text) and remembered_facts([text]) == []
    assert stated(text).strip() == ""


def test_the_note_quotes_the_fact_unless_a_note_of_the_extraction_says_it():
    text = "Anyway, please remember that I can't eat shellfish."
    assert remembered_notes([text], ["The user lives in Leeds."]) == [
        ("The user said: “I can't eat shellfish.”", "I can't eat shellfish.")
    ]
    assert remembered_notes([text], ["The user can't eat shellfish."]) == []
    assert remembered_notes(["对了，请记住我不吃香菜。"], []) == [("用户说：“我不吃香菜。”", "我不吃香菜。")]


async def test_a_fact_the_extractor_dropped_is_kept_and_a_business_record_never(store, user):
    thread = [HumanMessage("假如我改吃素的话，蛋白棒还适合我吗？对了，请记住我不吃香菜。", id="h1")]
    assert await aextract_messages(store, user, load_nothing_extracted, thread, 0, **EXTRACT) == (1, 0)
    assert [n["text"] for n in await alist_notes(store, user)] == ["用户说：“我不吃香菜。”"]
    thread.append(HumanMessage("Please remember that my order 8841 is late.", id="h2"))
    assert await aextract_messages(store, user, load_nothing_extracted, thread, 1, **EXTRACT) == (2, 0)
    assert len(await alist_notes(store, user)) == 1  # an order is the order system's, never memory's


async def test_a_fact_the_user_s_memory_already_says_is_not_quoted_again(store, user):
    """The note the tool wrote earlier (or in this turn) is shown to the extraction: no second copy."""
    from mnemo import aremember

    await aremember(store, user, "The user can't eat shellfish.")
    thread = [HumanMessage("Please remember that I can't eat shellfish.", id="h1")]
    assert await aextract_messages(store, user, load_nothing_extracted, thread, 0, **EXTRACT) == (1, 0)
    assert [n["text"] for n in await alist_notes(store, user)] == ["The user can't eat shellfish."]
    thread.append(HumanMessage("Please remember that I have two cats.", id="h2"))  # the control: a new fact
    assert await aextract_messages(store, user, load_nothing_extracted, thread, 1, **EXTRACT) == (2, 0)
    assert len(await alist_notes(store, user)) == 2
