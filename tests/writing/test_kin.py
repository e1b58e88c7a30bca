"""mnemo.writing.kin: whose a clause is, and the words said only of someone else, which no note of the user's
may hold (the fifteenth blind set: "用户希望日语客服" of "我朋友说你们有日语客服 他在学日语 我就算了")."""

from __future__ import annotations

from langchain_core.messages import HumanMessage

from harness.scripted import ScriptedChatModel, tool_call
from mnemo import alist_notes
from mnemo.writing import aextract_messages
from mnemo.writing.kin import names_someone, others_words, users_own
from tests.writing import EXTRACT

FRIEND = "另外用中文回我就行 我英语不咋地。我朋友说你们有日语客服 他在学日语 我就算了"


def test_the_last_one_named_before_a_trait_says_whose_it_is():
    assert users_own("my husband is") and users_own("") and users_own("I'm")
    assert not users_own("my roommate's") and not users_own("我室友倒是")


def test_words_said_only_of_someone_else():
    words = others_words([FRIEND])
    assert {"日", "客"} <= words and "语" not in words  # "语" the user said of themselves too ("英语")
    assert others_words(["I'm staying with my sister there"]) == frozenset()  # the user is the subject
    assert "vegan" in others_words(["my roommate's vegan but she does her own shopping"])
    assert names_someone("用户说他学日语") and not names_someone("用户希望日语客服")


async def test_a_note_of_the_user_s_with_another_s_words_is_not_kept(store, user):
    answer = tool_call("MemoryExtraction", notes=["用户希望日语客服", "用户说他学日语", "用户英语不好"])

    async def load():
        return ScriptedChatModel(respond=lambda messages, tools: answer)

    await aextract_messages(store, user, load, [HumanMessage(FRIEND, id="h1")], 0, **EXTRACT)
    assert sorted(n["text"] for n in await alist_notes(store, user)) == ["用户英语不好", "用户说他学日语"]
