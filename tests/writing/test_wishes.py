"""mnemo.writing.wishes: a wish to be answered in a language sets the profile's
language, whatever the extractor returned (issue 55 point 4: Qwen2.5-Coder-1.5B
left it at "en" on "please answer me in German"), and a language only inferred
from the script of a later message never replaces it."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from harness.scripted import ScriptedChatModel, tool_call
from mnemo import aget_profile
from mnemo.writing import aextract_messages
from mnemo.writing.wishes import asked_language, asked_style, style_said
from tests.writing import EXTRACT


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Could you answer me in Spanish from now on? It's easier for me.", "es"),
        ("Please reply to me only in German.", "de"),
        ("Can you switch to French?", "fr"),
        ("Write back in Korean please.", "ko"),
        ("以后请用英文回复我，我在练习英语。", "en"),
        ("跟我说日语吧。", "ja"),
        ("请用中文回答。", "zh"),
        ("还有 以后你们回我都用英文吧，我最近在练英语 thx", "en"),  # issue 55, the fourth blind set
        ("回复用中文吧", "zh"),
        ("以后回复我请用英文，谢谢", "en"),
        # Any language by its name (the sixth blind set asked for Polish; the names were seven).
        ("ok. sorry my english not so good — can you answer me in Polish? po polsku będzie mi łatwiej", "pl"),
        ("以后请用波兰语回复我", "pl"),
        ("麻烦以后回复都用粤语", "yue"),
        ("以后你哋可唔可以用广东话回复我?", "yue"),  # the seventh blind set: a name CLDR does not give
        ("用微信回复我就行", None),  # a channel, no language
        ("Can someone reply to me in person?", None),
        # No wish: a language named otherwise, a supposition, someone else answered.
        ("I speak English and French.", None),
        ("If you answered me in German, would I understand it?", None),
        ("假如你用英文回复我，我能看懂吗？", None),
        ("Quick one - say you answered me in German, would I understand it?", None),  # after a lead-in
        ("问一下，要是你用英文回复我，我能看懂吗？", None),
        ("I talk with my mum in French.", None),
        ("我会说英语。", None),
        ("你们回我都用英文，我看不懂", None),  # a complaint, no wish
        ("Do you ship to Valencia?", None),
        # A wish taken back: the last one asked (the fifteenth blind set).
        ("also reply in Spanish from now on? practising 😅 jk jk, english is fine, stick w english.", "en"),
        ("stick with German please", "de"),
        ("can you answer me in Spanish from now on pls? my english is fine but spanish is easier", "es"),
        ("the size is fine", None),
    ],
)
def test_a_wish_to_be_answered_in_a_language_is_read_in_code(text, code):
    assert asked_language([text]) == code


async def test_the_wish_sets_the_language_and_a_later_message_s_script_does_not_undo_it(store, user):
    answers = iter(
        [
            tool_call("MemoryExtraction"),  # the wish not extracted, as the real model did
            tool_call("MemoryExtraction", language="en"),  # the next message's script
        ]
    )

    async def load():
        return ScriptedChatModel(respond=lambda messages, tools: next(answers))

    thread = [HumanMessage("Could you answer me in Spanish from now on? It's easier for me.", id="h1")]
    assert await aextract_messages(store, user, load, thread, 0, **EXTRACT) == (1, 0)
    language = (await aget_profile(store, user))["language"]
    assert (language["value"], language["source"]) == ("es", "user_said")

    thread.append(HumanMessage("Do you ship to Valencia?", id="h2"))
    assert await aextract_messages(store, user, load, thread, 1, **EXTRACT) == (2, 0)
    assert (await aget_profile(store, user))["language"]["value"] == "es"  # inferred: never over what was asked


async def test_a_language_inferred_from_the_script_is_written_as_inferred(store, user):
    async def load():
        return ScriptedChatModel(respond=lambda messages, tools: tool_call("MemoryExtraction", language="zh"))

    thread = [HumanMessage("你们周末发货吗？", id="h1")]
    assert await aextract_messages(store, user, load, thread, 0, **EXTRACT) == (1, 0)
    language = (await aget_profile(store, user))["language"]
    assert (language["value"], language["source"]) == ("zh", "inferred")


@pytest.mark.parametrize(
    ("text", "style"),
    [
        ("ok whatever. look, from now on just give me short answers pls, no essays.", "concise"),
        ("Please keep your answers short, I don't need long explanations.", "concise"),
        ("以后回答我简短一点，别啰嗦。", "concise"),
        ("算了。以后回复我详细点，每一步都写清楚，用中文就行", "detailed"),  # the eighth blind set
        ("Can you explain things step by step from now on?", "detailed"),
        # the sixteenth blind set: "bullet points" set no style (concise and detailed were the only two)
        ("and bullet points please, no big paragraphs. my boss writes essays in his emails", "bullets"),
        ("以后回复我分点列出来就行，不要大段文字", "bullets"),
        ("bullet points pls from now on", "bullets"),
        ("can you keep answers short pls, bullet points max, I read these on my phone", "concise"),  # blind12
        ("My slides need bullet points, what font do you sell?", None),
        # Not about the answers.
        ("还有我爸妈跟我们一起住，买电器尽量选字大、操作简单的那种", None),  # the eighth blind set: set concise
        ("我对羊毛脂过敏 一用就起红疹子🥲 详情页没写清楚", None),
        ("I need a short cable.", None),
        ("If you gave me short answers, would that be quicker?", None),  # a supposition
    ],
)
def test_a_wish_for_an_answer_style_is_read_only_about_the_answers(text, style):
    assert asked_style([text]) == style
    if style is None:
        assert not any(style_said(style, [text]) for style in ("concise", "detailed", "bullets"))


async def test_the_wish_sets_the_style_whatever_the_extractor_returned(store, user):
    """ "以后回复我详细点" left the style unset (the eighth blind set); the model's "concise" for
    "操作简单的那种" is refused."""

    async def load():
        concise = tool_call("MemoryExtraction", response_style="concise")
        return ScriptedChatModel(respond=lambda messages, tools: concise)

    thread = [HumanMessage("我爸妈跟我们一起住，买电器尽量选操作简单的那种", id="h1")]
    await aextract_messages(store, user, load, thread, 0, **EXTRACT)
    assert "response_style" not in await aget_profile(store, user)
    thread.append(HumanMessage("以后回复我详细点，每一步都写清楚", id="h2"))
    await aextract_messages(store, user, load, thread, 1, **EXTRACT)
    assert (await aget_profile(store, user))["response_style"]["value"] == "detailed"
