"""mnemo.writing.grounding: what the user's own words do not support is never
stored, whatever the extractor returned (a small model copies its prompt's
example and the ids of the notes it was shown: docs/bench.md)."""

from __future__ import annotations

import logging

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from harness.scripted import ScriptedChatModel, tool_call
from mnemo import aget_profile, alist_notes, aremember
from mnemo.audit import Origin
from mnemo.core import content_tokens
from mnemo.writing import aextract_messages
from mnemo.writing import grounding as grounding_module
from mnemo.writing.apply import Said, aapply_extraction
from mnemo.writing.extraction import MemoryExtraction, NoteUpdate
from mnemo.writing.fields import all_words_said
from mnemo.writing.grounding import said_words, shares_a_word, supported, supposed_words
from mnemo.writing.known import Known
from tests.writing import EXTRACT

#: What SmolLM2-135M said on llama.cpp's server in the real-model check (docs/bench.md).
THREAD = ["Hi, I'm Ingrid.", "I live in Lisbon.", "I'm allergic to peanuts."]


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch):
    monkeypatch.setattr(grounding_module, "_warned", set())


def test_a_note_is_grounded_by_one_shared_content_word():
    words = said_words(THREAD)
    assert shares_a_word("The user is allergic to peanuts.", words)  # a third-person restatement
    assert shares_a_word("用户对花生过敏。", said_words(["我对花生过敏"]))
    assert not shares_a_word("n1", words)  # a note id it was shown
    assert not shares_a_word("I'm in Suzhou.", words)  # the extraction prompt's example
    assert not shares_a_word("The user is here.", words)  # function words only


async def test_what_a_model_copied_is_dropped_and_what_the_user_said_is_stored(store, user, caplog):
    said = [Said(t, None) for t in THREAD]
    extraction = MemoryExtraction(
        name="n2", city="Suzhou", language="en", notes=["n1", "I'm in Suzhou.", "The user is allergic to peanuts."]
    )
    with caplog.at_level(logging.INFO, logger="mnemo.writing.grounding"):
        applied = await aapply_extraction(store, user, extraction, said=said)
    assert [n["text"] for n in await alist_notes(store, user)] == ["The user is allergic to peanuts."]
    profile = await aget_profile(store, user)
    assert profile["language"]["value"] == "en"  # the profile was written: language is not the user's words
    # The model's city is refused; where the user said they live is kept (mnemo.writing.fields.home_city).
    assert "name" not in profile and profile["city"]["value"] == "Lisbon"
    assert sorted(c["field"] for c in applied["profile"]) == ["city", "language"]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2 and "'n1'" in warnings[1] and "name=n2" in warnings[0]

    # The user's own values pass; the same cause is then logged at INFO only.
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="mnemo.writing.grounding"):
        await aapply_extraction(store, user, MemoryExtraction(name="Ingrid", city="Lisbon", notes=["n4"]), said=said)
    profile = await aget_profile(store, user)
    assert (profile["name"]["value"], profile["city"]["value"]) == ("Ingrid", "Lisbon")
    assert [r.levelno for r in caplog.records] == [logging.INFO]


async def test_an_application_s_own_extraction_is_not_checked(store, user):
    await aapply_extraction(store, user, MemoryExtraction(name="Ingrid Larsen", notes=["The user likes jazz."]))
    assert (await aget_profile(store, user))["name"]["value"] == "Ingrid Larsen"
    assert [n["text"] for n in await alist_notes(store, user)] == ["The user likes jazz."]


async def test_a_revision_the_users_words_do_not_touch_is_not_applied(store, user):
    cats = (await aremember(store, user, "The user has two cats."))["note"]
    car = (await aremember(store, user, "The user drives a red car."))["note"]
    known = Known.of_notes([cats, car])  # n1, n2
    junk = MemoryExtraction(updates=[NoteUpdate(id="n1", text="n3")], invalidates=["n2"])
    applied = await aapply_extraction(store, user, junk, said=[Said("Hi, I'm Ingrid.", None)], known=known)
    assert applied["revised"] == []
    assert sorted(n["text"] for n in await alist_notes(store, user)) == sorted([cats["text"], car["text"]])

    applied = await aapply_extraction(
        store, user, MemoryExtraction(invalidates=["n2"]), said=[Said("I sold my car.", None)], known=known
    )
    assert applied["revised"] == [car["id"]]
    assert [n["text"] for n in await alist_notes(store, user)] == [cats["text"]]


async def test_a_revision_to_a_question_is_not_applied_however_it_ends(store, user):
    cats = (await aremember(store, user, "The user has two cats."))["note"]
    said = [Said("I have three cats now.", None)]
    for asked in ("Does the user have three cats?", "Does the user have three cats？」"):
        extraction = MemoryExtraction(updates=[NoteUpdate(id="n1", text=asked)])
        applied = await aapply_extraction(store, user, extraction, said=said, known=Known.of_notes([cats]))
        assert applied["revised"] == [], asked
    stated = MemoryExtraction(updates=[NoteUpdate(id="n1", text="The user has three cats.")])
    applied = await aapply_extraction(store, user, stated, said=said, known=Known.of_notes([cats]))
    assert applied["revised"] == [cats["id"]]  # the same words, stated: applied
    assert [n["text"] for n in await alist_notes(store, user)] == ["The user has three cats."]


async def test_an_update_with_another_fact_is_a_note_of_its_own(store, user):
    """The seventh blind set: "I'm lactose intolerant too" written over the hazelnut allergy's
    note. A new text sharing no word with the note, not taken back, is another fact."""
    nuts = (await aremember(store, user, "The user said: “I'm allergic to hazelnuts so need to be careful”"))["note"]
    over = MemoryExtraction(updates=[NoteUpdate(id="n1", text="The user is lactose intolerant.")])
    said = [Said("ok ty. oh and I'm lactose intolerant too, so the yoghurt-coated ones are a no go for me", None)]
    applied = await aapply_extraction(store, user, over, said=said, known=Known.of_notes([nuts]))
    assert applied["revised"] == []
    assert sorted(n["text"] for n in await alist_notes(store, user)) == [
        "The user is lactose intolerant.",
        "The user said: “I'm allergic to hazelnuts so need to be careful”",
    ]


async def test_an_update_to_what_another_note_says_merges_into_it(store, user):
    oslo = (await aremember(store, user, "The user lives in Oslo."))["note"]
    lisbon = (await aremember(store, user, "The user lives in Lisbon."))["note"]
    extraction = MemoryExtraction(updates=[NoteUpdate(id="n1", text="The user lives in Lisbon.")])
    said = [Said("I live in Lisbon now, not Oslo.", None)]
    applied = await aapply_extraction(store, user, extraction, said=said, known=Known.of_notes([oslo, lisbon]))
    assert applied["revised"] == [oslo["id"]]
    notes = await alist_notes(store, user)
    assert [(n["id"], n["text"]) for n in notes] == [(lisbon["id"], "The user lives in Lisbon.")]  # not twice


async def test_the_pipeline_checks_what_the_extractor_returns_against_the_users_messages(store, user):
    def copying(messages, tool_names):
        return tool_call("MemoryExtraction", name="n2", notes=["n1", "The user is allergic to peanuts."])

    async def load():
        return ScriptedChatModel(respond=copying)

    thread = [HumanMessage(t, id=f"h{i}") for i, t in enumerate(THREAD)]
    progress = await aextract_messages(
        store, user, load, thread, 0, failures=0, said_at=None, timeout_s=30, origin=Origin(source="extractor")
    )
    assert progress == (len(thread), 0)  # written, not failed: the turn goes on
    assert [n["text"] for n in await alist_notes(store, user)] == ["The user is allergic to peanuts."]
    assert "name" not in await aget_profile(store, user)


async def test_only_the_users_words_ground_a_value_not_the_question_they_answer(store, user):
    def from_the_question(messages, tool_names):  # a model that reads the yes as the question's words
        return tool_call("MemoryExtraction", city="Lisbon", notes=["The user lives in Lisbon."])

    async def load():
        return ScriptedChatModel(respond=from_the_question)

    asked = AIMessage("Do you live in Lisbon?", id="a1")
    thread = [asked, HumanMessage("Yes, that's right.", id="h1")]
    assert await aextract_messages(store, user, load, thread, 0, **EXTRACT) == (2, 0)  # written, not failed
    assert "city" not in await aget_profile(store, user)
    assert await alist_notes(store, user) == []

    # The precondition: the question reached the write (as the note's context), and the user's own words ground.
    thread += [HumanMessage("Yes, I live in Lisbon.", id="h2")]
    assert await aextract_messages(store, user, load, thread, 2, **EXTRACT) == (3, 0)
    assert (await aget_profile(store, user))["city"]["value"] == "Lisbon"
    assert [(n["text"], n.get("context")) for n in await alist_notes(store, user)] == [
        ("The user lives in Lisbon.", asked.text)
    ]


#: What Qwen2.5-Coder-1.5B on llama.cpp was told and stored (issue 42).
MOVED = "Actually I just moved from leeds to bristol last month."


def test_one_shared_word_does_not_ground_a_note_half_of_its_words_and_its_names_do():
    from mnemo.writing.grounding import supported

    words = said_words([MOVED])
    assert shares_a_word("The user moved to Suzhou last March.", words)  # what let it through before
    assert not supported("The user moved to Suzhou last March.", words)  # the prompt's example: Suzhou, March
    assert not supported("I moved to Suzhou last March", words)
    assert supported("The user moved to Bristol last month.", words)  # "Bristol" said as "bristol"
    assert supported("The user moved from Leeds to Bristol.", words)
    assert not supported("The user sold houses and moved.", words)  # one word of three
    assert supported("The user moved recently.", words)  # one of two: half
    cats = said_words(["I have a cat."])
    assert not supported("The user has two cats and a dog.", cats)  # the prompt's other example, half unsaid
    peanuts = said_words(["请记住我对花生过敏。"])
    assert supported("用户对花生过敏。", peanuts)  # Chinese, character by character
    assert not supported("用户去年三月搬到了苏州。", said_words(["上个月我从武汉搬到了厦门。"]))
    assert not supported("The user is allergic to peanuts.", peanuts)  # another language than the user's


async def test_the_users_own_words_pass_whatever_their_case_and_the_prompts_example_does_not(store, user):
    said = [Said(MOVED, None), Said("请记住我对花生过敏。", None)]
    extraction = MemoryExtraction(city="Bristol", notes=["The user moved to Suzhou last March.", "用户对花生过敏。"])
    await aapply_extraction(store, user, extraction, said=said)
    assert (await aget_profile(store, user))["city"]["value"] == "Bristol"
    assert [n["text"] for n in await alist_notes(store, user)] == ["用户对花生过敏。"]


async def test_a_question_is_no_note_though_every_word_is_the_users(store, user):
    said = [Said("I'm based in Manchester, do you deliver there?", None)]
    extraction = MemoryExtraction(
        notes=["I'm based in Manchester, do you deliver there?", "The user is based in Manchester."]
    )
    await aapply_extraction(store, user, extraction, said=said)
    assert [n["text"] for n in await alist_notes(store, user)] == ["The user is based in Manchester."]


def test_a_note_a_model_offers_is_refused_unless_the_users_words_say_it():
    from mnemo.core import InvalidInputError
    from mnemo.writing import refuse_unsaid

    refuse_unsaid("The user is allergic to peanuts.", THREAD)  # a restatement passes
    refuse_unsaid("用户对花生过敏。", ["请记住我对花生过敏。"])
    for offered, said in [
        ("I'm allergic to peanuts", ["请记住我对花生过敏。"]),  # translated: not the user's words
        ("The user moved to Suzhou last March.", THREAD),  # the prompt's example
        ("Does the user like peanuts?", THREAD),  # a question
    ]:
        with pytest.raises(InvalidInputError, match="not remembered"):
            refuse_unsaid(offered, said)


async def test_what_the_user_supposed_or_asked_grounds_nothing_what_they_stated_does(store, user):
    from mnemo.writing.grounding import stated

    assert stated("I'm based in Manchester, do you deliver there?").strip() == "I'm based in Manchester"
    assert stated("我住在成都，你们那边能送货吗？").strip() == "我住在成都"
    # A dash between words starts the asking clause too (the sixth blind set); a hyphen in a word does not.
    dashed = "Hi, I live in Brighton and I've got a sofa cover on order — when's it arriving?"
    assert "I live in Brighton and I've got a sofa cover on order" in stated(dashed)
    assert "arriving" not in stated(dashed)
    assert stated("I live in Leeds - do you ship there?").strip() == "I live in Leeds"
    assert stated("Is the e-mail from you?").strip() == ""
    # A question's place is the user's when the next sentence says so (the sixth blind set).
    there = "do you do click & collect in Norwich? that's where I live"
    assert "Norwich" in stated(there) and "Norwich" not in stated("do you do click & collect in Norwich? thanks")
    assert "杭州" in stated("你们在杭州有门店吗？我就住那边")
    assert "Oslo" not in stated("Do you ship to Oslo? My sister lives there.")
    assert stated("Could you remember that I'm vegetarian?").strip() == "Could you remember that I'm vegetarian?"
    assert stated("帮我记一下我不吃辣好吗？").strip() == "帮我记一下我不吃辣好吗？"  # asked to remember
    assert stated("Keep in mind I'm vegan, ok?").strip() == "Keep in mind I'm vegan, ok?"
    # A supposition after a space between Han; a question ending "……不" (blind13).
    assert stated("顺便问下 如果我下个月去上海出差的话能寄到酒店不").strip() == ""
    assert stated("我住深圳 快递能寄到酒店不").strip() == "我住深圳"
    assert "北京" in stated("顺便说下 我搬去北京了就寄北京")  # precondition: a stated clause is kept
    assert "北京" not in stated("顺便说下 如果我搬去北京了就寄北京")
    # A condition a parcel is left by is no supposition (blind14); one that supposes a move still is.
    assert "next door" in stated("if the lockers full just leave it with next door, she's always in")
    assert "门卫" in stated("要是快递柜满了就放门卫")
    assert stated("If I had a car, would you leave it with next door?").strip() == ""
    # A Chinese supposition inside a clause takes the clause (blind15); "只要是" supposes nothing.
    assert "上海" not in stated("都是放门口丰巢。我老公说明年要是调去上海还得再搬一次 不过八字还没一撇")
    assert stated("只要是纯棉的都行") == "只要是纯棉的都行" and "丰巢" in stated("都是放门口丰巢。")
    # A value said to be of the past is left out, from the word before it (blind15).
    assert stated("床是1米8的 1米5那是以前租的房子").strip() == "床是1米8的"
    assert stated("and size is UK 8, 7 was before my feet decided to grow").strip() == "and size is UK 8,"
    assert stated("also plastic-free packaging, if at all poss") == "also plastic-free packaging, if at all poss"
    # Not remembering is no request to remember: the question's words ground nothing.
    assert stated("I can't remember my size, is it the M I'm wearing?").strip() == "I can't remember my size"
    said = [
        Said("If I had a car, I would drive to your Denver warehouse myself.", None),
        Said("Should I take the annual plan or stay on monthly billing?", None),
        Said("如果我有车的话，我就自己去你们广州的仓库取货了。可惜没有，我住在佛山。", None),
    ]
    extraction = MemoryExtraction(
        city="Denver",
        notes=["The user would drive to the Denver warehouse.", "The user wants the annual plan.", "用户住在佛山。"],
    )
    await aapply_extraction(store, user, extraction, said=said)
    assert [n["text"] for n in await alist_notes(store, user)] == ["用户住在佛山。"]  # what was stated is kept
    # The supposed city is refused; the one they stated is where they live (mnemo.writing.fields.home_city).
    assert (await aget_profile(store, user))["city"]["value"] == "佛山"
    await aapply_extraction(store, user, MemoryExtraction(city="广州"), said=said)  # supposed: never the city
    assert (await aget_profile(store, user))["city"]["value"] == "佛山"


def question_marks_by_name() -> set[str]:
    """What Unicode names a question mark (and the interrobang), but those that open one, the
    invisible tag and the Greek question mark (``;`` itself once normalised)."""
    import sys
    import unicodedata

    named = {chr(c): unicodedata.name(chr(c), "") for c in range(sys.maxunicode + 1)}
    return {
        ch
        for ch, name in named.items()
        if ("QUESTION MARK" in name or "QUESTION EXCLAMATION" in name or name == "INTERROBANG")
        and unicodedata.category(ch)[0] in "PS"
        and not any(word in name for word in ("INVERTED", "INITIAL", "GREEK", "WITH QUESTION MARK"))
    }


def test_the_question_marks_are_those_unicode_names_and_no_semicolon():
    from mnemo.writing.grounding import QUESTION_MARKS

    assert {"?", "？", "؟", "﹖", "⁇", "‽", "❓"} <= QUESTION_MARKS  # the precondition of the comparison
    assert question_marks_by_name() == QUESTION_MARKS
    assert not {";", "\u037e", "；", "¿"} & QUESTION_MARKS


@pytest.mark.parametrize("mark", sorted(question_marks_by_name()))
@pytest.mark.parametrize("after", ["", " ", "  \n", ")", '"', "」", "”", "!", "...", " 🙂", "?"])
def test_an_offered_question_is_refused_however_it_ends(mark, after):
    from mnemo.core import InvalidInputError
    from mnemo.writing import refuse_unsaid

    said = ["I have a dog called Max."]
    asked = "Is the user's dog called Max"
    for stating in (".", "", "!", ")", ";"):
        refuse_unsaid(asked + stating + after.replace("?", ""), said)  # the same words, stated: kept
    with pytest.raises(InvalidInputError, match="a question states no fact"):
        refuse_unsaid(asked + mark + after, said)


#: Where a name may stand in a note: opening it, a later sentence or a clause after ":" or ";"
#: (where a capital does not tell a name) ...
OPENING = [
    "{name} is the user's dog.",
    "The user has a cat. {name} is the dog.",
    "The user has a dog: {name}.",
    "The user has a cat; {name} is the dog.",
    '"{name}" is the user\'s dog.',
]
#: ... or inside a sentence: its second word, after a comma, in brackets or quotes, at the end, as an owner.
INNER = [
    "Dog {name} is the user's.",
    "The user has a dog, {name}.",
    "The user has a dog called {name}.",
    "The user's dog ({name}) has a cat.",
    'The user\'s dog is called "{name}".',
    "The user's dog is {name}'s.",
]
NAME_PLACES = OPENING + INNER
#: (what the user said, a name they said, one they did not)
NAMES = [
    (["I have a dog called Max and a cat."], "Max", "Rex"),
    (["I have a dog called José and a cat."], "José", "Émile"),  # letters outside ASCII
    (["I have a dog called Максим and a cat."], "Максим", "Борис"),
]


@pytest.mark.parametrize(("texts", "named", "unnamed"), NAMES)
@pytest.mark.parametrize("place", NAME_PLACES)
def test_every_name_a_note_gives_is_the_users_wherever_it_stands(place, texts, named, unnamed):
    from mnemo.core import content_tokens
    from mnemo.writing.grounding import supported

    words = said_words(texts)
    assert supported(place.format(name=named), words)  # the name the user said: kept
    note = place.format(name=unnamed)
    tokens = content_tokens(note)
    assert 2 * len(tokens & words) >= len(tokens)  # half of its words the user's: only the name refuses it
    assert not supported(note, words)


def test_a_name_inside_chinese_and_a_sentences_first_word_in_another_form():
    from mnemo.core import content_tokens
    from mnemo.writing.grounding import supported

    words = said_words(["我的狗叫Max。"])
    assert supported("用户的狗叫Max。", words) and not supported("用户的狗叫Rex。", words)
    # A sentence's first word is the user's in some form: a verb, not only a name.
    words = said_words(["I live in Lisbon and work at the bakery."])
    for kept in ("Lives in Lisbon.", "Living in Lisbon.", "Works at the bakery.", "The user works at the bakery."):
        assert supported(kept, words), kept
    lisa = "Lisa is at the Lisbon bakery."
    assert 2 * len(content_tokens(lisa) & words) >= len(content_tokens(lisa))  # only the name refuses it
    assert not supported(lisa, words)  # three letters of "Lisbon" do not name Lisa


@pytest.mark.parametrize("place", INNER)
def test_inside_a_sentence_a_name_is_the_users_exactly_not_in_another_form(place):
    from mnemo.writing.grounding import supported

    words = said_words(["I have a dog called Maxine and a cat."])
    assert supported(place.format(name="Maxine"), words)
    assert not supported(place.format(name="Max"), words)  # "Max" starts "Maxine": not the name said


async def test_what_was_only_supposed_is_no_note_a_request_to_remember_after_it_is(store, user):
    """Issue 55 point 4: Qwen2.5-Coder-1.5B kept "改吃素" from "假如我改吃素的话……？对了，请记住我不吃香菜。"."""
    from mnemo.core import InvalidInputError
    from mnemo.writing import refuse_unsaid

    chinese = "假如我改吃素的话，你们的蛋白棒还适合我吗？对了，请记住我不吃香菜。"
    english = "If I were to go vegan, would your protein bars suit me? Anyway, remember I can't eat shellfish."
    extraction = MemoryExtraction(
        notes=[
            "用户不吃香菜，改吃素了。",
            "用户不吃香菜。",
            "The user is going vegan and can't eat shellfish.",
            "The user can't eat shellfish.",
        ]
    )
    await aapply_extraction(store, user, extraction, said=[Said(chinese, None), Said(english, None)])
    assert sorted(n["text"] for n in await alist_notes(store, user)) == [
        "The user can't eat shellfish.",
        "用户不吃香菜。",
    ]
    with pytest.raises(InvalidInputError, match="not remembered"):
        refuse_unsaid("用户不吃香菜，改吃素了。", [chinese])  # a note a model offers: the same rule
    refuse_unsaid("用户不吃香菜。", [chinese])


@pytest.mark.parametrize(
    ("text", "lead", "note"),
    [
        # A supposition after a lead-in clause (issue 55, the blind set's "问一下，假如……").
        ("请问，假如我买的茶叶罐子摔坏了，能换新的吗？", "", "用户的茶叶罐子摔坏了。"),  # "请问" asks too
        (
            "One thing - say I sent the lamp back unopened, is shipping free?",
            "One thing",
            "The user sent the lamp back.",
        ),
        (
            "Hi there, let's say my jacket shrinks in the wash, can I return it?",
            "Hi there",
            "The user's jacket shrinks.",
        ),
        ("I'm vegan, if that matters for the recipe box.", "I'm vegan", "The user's recipe box matters."),
    ],
)
def test_a_supposition_after_a_lead_in_states_nothing_the_lead_in_does(text, lead, note):
    from mnemo.writing.grounding import stated

    assert stated(text).strip() == lead
    assert supported(note, content_tokens(text))  # every word of it is the user's: only supposed
    assert not supported(note, said_words([text]), supposed_words([text]))


async def test_a_temporary_address_is_a_note_with_its_end_never_the_city(store, user):
    """Issue 55 point 4: the town of a delivery address, or the address, stored as the city."""
    from datetime import timedelta

    from mnemo.notes import now
    from mnemo.writing.extraction import TemporaryNote

    until = (now() + timedelta(days=30)).date().isoformat()
    said = [Said("Until the end of June please send my orders to 14 Harbour Lane, Brighton, I'm staying there.", None)]
    for city in ("Brighton", "14 Harbour Lane, Brighton"):
        extraction = MemoryExtraction(
            city=city,
            temporary_notes=[
                TemporaryNote(text="The user's deliveries go to 14 Harbour Lane, Brighton.", expires=until)
            ],
        )
        await aapply_extraction(store, user, extraction, said=said)
        assert "city" not in await aget_profile(store, user)
    notes = await alist_notes(store, user)
    assert [(n["text"], n["expires_at"][:10]) for n in notes] == [
        ("The user's deliveries go to 14 Harbour Lane, Brighton.", until)
    ]
    # The precondition: a city said as where the user lives is stored.
    lives = [Said("I live in Brighton.", None), *said]
    await aapply_extraction(store, user, MemoryExtraction(city="Brighton"), said=lives)
    assert (await aget_profile(store, user))["city"]["value"] == "Brighton"
    zh = [Said("七月底之前，我的快递都寄到西湖区文三路 88 号吧，我暂时住朋友家。", None)]
    for city in ("西湖区", "西湖区文三路 88 号"):
        await aapply_extraction(store, user, MemoryExtraction(city=city), said=zh)
        assert (await aget_profile(store, user))["city"]["value"] == "Brighton"


async def test_a_copy_of_a_prompt_example_is_never_the_users_note_whatever_they_said(store, user, caplog):
    """A copied "用户希望用邮件联系。" beside "我不看邮件" (I don't read email): its words said, its fact not."""
    said = [Said("还有，有事请联系我，发短信，我不看邮件。", None)]
    copied, own = "用户希望用邮件联系。", "用户希望发短信联系。"
    assert all_words_said("邮件", said_words([s.text for s in said]))  # the copy's words were said
    with caplog.at_level(logging.INFO, logger="mnemo.writing.grounding"):
        await aapply_extraction(store, user, MemoryExtraction(notes=[copied, own]), said=said)
    assert [n["text"] for n in await alist_notes(store, user)] == [own]
    assert "用户希望用邮件联系" in caplog.text


@pytest.mark.parametrize(
    ("text", "record", "fact"),
    [
        ("订单A88231漏发了一个滤网，麻烦补寄。另外我家有个小宝宝。", "用户漏发了一个滤网。", "用户家有个小宝宝。"),
        (
            "order 5521-X came with the wrong lid. also I'm diabetic",
            "The user got the wrong lid.",
            "The user is diabetic.",
        ),
        (
            "I'm allergic to nuts, and my order 123 had a broken lid.",
            "The user had a broken lid.",
            "The user is allergic to nuts.",
        ),
    ],
)
def test_a_clause_about_an_order_grounds_no_note_the_user_s_other_clauses_do(text, record, fact):
    """Issue 55, the second blind set: a fragment of an order's complaint ("少发了个杯盖") was stored."""
    assert supported(record, content_tokens(text))  # every word of it is the user's, in the order's clause
    assert not supported(record, said_words([text]))
    assert supported(fact, said_words([text]))


def test_a_chinese_question_without_its_mark_is_no_note():
    """Issue 55, the third blind set: "用户希望保温杯能进洗碗机吗" was stored."""
    from mnemo.writing.grounding import is_question

    assert is_question("用户希望保温杯能进洗碗机吗") and is_question("还能改颜色吗 🙏")
    assert not is_question("用户希望保温杯能进洗碗机。") and not is_question("用户不吃辣")
    said = said_words(["保温杯能进洗碗机吗"])
    assert not supported("用户希望保温杯能进洗碗机吗", said)


def test_an_emoji_ends_a_sentence_and_keeps_its_selector_and_skin_tone():
    """Issue 55, the third blind set: a self-introduction and a question joined by "👋" were one question."""
    from mnemo.writing.grounding import SENTENCE, stated

    text = "Hiya, Marguerite here from Galway 👋 do u ship fresh flowers to Ireland or only the dried ones?"
    assert supported("The user is Marguerite from Galway.", said_words([text]))
    assert "Ireland" not in stated(text) and "Galway" in stated(text)
    assert [s for s in SENTENCE.split("给我推点辣的吧🌶️ 好的👍🏽 ok 👨‍👩‍👧 fine") if s] == [
        "给我推点辣的吧🌶️",
        "好的👍🏽",
        "ok 👨‍👩‍👧",
        "fine",
    ]


def test_a_space_between_han_characters_is_a_comma():
    """Issue 55, the fifth blind set: "我眼睛老花得厉害 发票能不能……" lost its first clause with the invoice's."""
    from mnemo.writing.grounding import stated

    assert stated("我眼睛老花得厉害，发票要大字版的").strip() == "我眼睛老花得厉害，"  # the comma's precondition
    assert stated("我眼睛老花得厉害 发票要大字版的").strip() == "我眼睛老花得厉害"
    assert stated("我在杭州 你们能送货吗？").strip() == "我在杭州"  # a question's asking clause
    assert stated("I live in Leeds now").strip() == "I live in Leeds now"  # Latin words keep their spaces


def test_a_number_s_point_and_no_end_no_sentence_a_condition_that_happens_is_no_supposition():
    """ "a UK 9.5", "my neighbour at no. 14": one sentence each; "if I'm out please leave it with my
    neighbour" states a wish (the eighth blind set lost both)."""
    from mnemo.writing.grounding import SENTENCE, stated

    assert SENTENCE.split("I'm 9. 5 more to go") == ["I'm 9.", "5 more to go"]  # precondition: a point ends one
    assert SENTENCE.split("need a UK 9.5 in these") == ["need a UK 9.5 in these"]
    assert SENTENCE.split("leave it with my neighbour at no. 14. thanks") == [
        "leave it with my neighbour at no. 14.",
        "thanks",
    ]
    assert stated("If I had a car, I would drive.").strip() == ""  # precondition: a supposition states nothing
    wish = "for all future deliveries, if I'm out please leave parcels with my neighbour"
    assert stated(wish) == wish
    assert stated("如果我不在家就放门口鞋柜") == "如果我不在家就放门口鞋柜"
    nobody = "if nobody answers just leave things in the back porch"  # the eleventh blind set
    assert stated(nobody) == nobody
    assert stated("如果我搬去大连，积分还能用吗").strip() == ""


def test_chinese_asking_clauses_and_a_question_s_size_made_the_user_s():
    """The tenth blind set: "有没有S码啊" and "狗粮有小包装的吗，" asked without a mark; "?? thats my size"
    makes the question's size the user's; a question's lead clauses end a sentence of their own."""
    from mnemo.writing.grounding import stated, stated_sentences

    assert stated("我平时都穿S的").strip() == "我平时都穿S的"  # precondition: a statement is kept
    assert stated("想问下那个羊绒毛衣有没有S码啊，我平时都穿S的").strip() == "我平时都穿S的"
    assert stated("顺便问下狗粮有小包装的吗，家里那只柯基嘴巴挑得很").strip() == "家里那只柯基嘴巴挑得很"
    assert stated("上次那个订单还没到呢，我在家呢").strip() != ""  # 呢 states
    size = "do u have the trail runners in 11.5 US?? thats my size"
    assert "11.5" in stated(size) and "11.5" not in stated("do u have the trail runners in 11.5 US?? thanks")
    night = "I work night shifts — can deliveries come in the evening?? the driver woke me up at 9am today"
    assert [s for s in stated_sentences([night]) if s] == ["I work night shifts", "the driver woke me up at 9am today"]


async def test_where_the_user_says_they_live_is_the_city_when_the_model_gave_none(store, user):
    """ "I live in Bristol but I'm staying at my sister's in Cardiff until 15 March" left the city unset."""
    said = [Said("Hi, I live in Bristol but I'm staying at my sister's in Cardiff until 15 March.", None)]
    await aapply_extraction(store, user, MemoryExtraction(city="Cardiff"), said=said)
    assert (await aget_profile(store, user))["city"]["value"] == "Bristol"
    from mnemo.writing.fields import home_city

    for texts, city in [
        (["我家是在南京的哈"], "南京"),
        (["I live in a flat."], None),  # no town's name
        (["My sister lives in Leeds."], None),
        (["I live in Cardiff until March."], None),  # only for now
        (["I live at 14 Harbour Lane."], None),
    ]:
        assert home_city(texts, said_words(texts)) == city


async def test_a_district_the_model_gave_is_its_city_the_user_named(store, user):
    said = [Said("我叫林晓雯，住厦门思明区这边，上周买的扫地机器人到现在都没发货！", None)]
    await aapply_extraction(store, user, MemoryExtraction(city="思明区"), said=said)
    assert (await aget_profile(store, user))["city"]["value"] == "厦门"
