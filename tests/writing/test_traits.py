"""mnemo.writing.traits: a size, a diet, who lives with the user and how their home is
reached are kept in their words when the extractor dropped them (issue 55: Qwen2.5-Coder-1.5B
did, on the eighth blind set), and a question, a supposition, someone else's trait or one
taken back is none."""

from __future__ import annotations

import pytest

from mnemo.writing.traits import names_a_trait, trait_notes, trait_sentences
from tests.writing import assert_quoted_once


@pytest.mark.parametrize(
    ("texts", "sentences"),
    [
        # A size, a height (a number's point and "no." end no sentence).
        (
            ["hey do u have the Trailrunner X2 in stock? need a UK 9.5 — thats my size in pretty much every brand tbh"],
            ["need a UK 9.5 — thats my size in pretty much every brand tbh"],
        ),
        (["I wear a size M in tops and a 32 waist in jeans."], None),
        (
            ["not saying I am lol. anyway I'm 6'4\" so I always need the tall versions, do the chinos come in long?"],
            ["anyway I'm 6'4\" so I always need the tall versions"],
        ),
        (
            ["我平时都穿L码，175/70kg，帮我看看L的黑色还有没 顺便问下订单20391的快递到哪了"],
            ["我平时都穿L码，175/70kg，帮我看看L的黑色还有没"],
        ),
        # A diet or a condition.
        (["I'm vegan (8 yrs now 🌱) so I need to know before I order"], ["I'm vegan (8 yrs now 🌱"]),
        (
            ["我是糖尿病，二型的，买零食都得看配料表 另外帮我查下订单88120发货没"],
            ["我是糖尿病，二型的，买零食都得看配料表"],
        ),
        # Who lives with the user.
        (
            ["is the wool rug ok with pets? we've got two cats who shred literally everything lol"],
            ["we've got two cats who shred literally everything lol"],
        ),
        (["and my 2yo twins put everything in their mouths so non-toxic dyes are a must"], None),
        (["家里养了只金毛，三岁了，肠胃比较敏感，有没有低敏狗粮推荐？"], ["家里养了只金毛，三岁了，肠胃比较敏感"]),
        (["还有我爸妈跟我们一起住，买电器尽量选字大、操作简单的那种"], None),
        # How the home is reached, where a parcel is left ("if I'm out" is a condition, no supposition).
        (
            [
                "for all future deliveries, if I'm out please leave parcels with my neighbour at no. 14. "
                "also I'm on the 4th floor with no lift so anything heavy needs 2 people"
            ],
            [
                "for all future deliveries, if I'm out please leave parcels with my neighbour at no. 14.",
                "also I'm on the 4th floor with no lift so anything heavy needs 2 people",
            ],
        ),
        (["另外我住6楼没电梯，大件记得提前说一声"], None),
        # The tenth blind set: a size a question named ("?? thats my size"), a ring, an age, a household's
        # count, a son, a weekend's wish asked as a question, a wish with no "I", a hobby.
        (
            ["also do u have the trail runners in 11.5 US?? thats my size, 11 is always way too tight."],
            ["also do u have the trail runners in 11.5 US thats my size, 11 is always way too tight."],
        ),
        (["对了那款素圈戒指能刻字吗？我戒圈是13号，别搞错了哈 😂"], ["我戒圈是13号，别搞错了哈 😂"]),
        (["你好～想问下那个羊绒毛衣有没有S码啊，我平时都穿S的，165 50kg左右哈"], ["我平时都穿S的，165 50kg左右哈"]),
        (["你好，我都六十多了，对这些电子产品不太懂"], None),
        (["我们家四口人，要是换个大一点容量的还来得及吗"], ["我们家四口人"]),
        (
            ["anyway whats the return window for shoes? bought sneakers for my son Leo"],
            ["bought sneakers for my son Leo"],
        ),
        (
            ["平时工作日我都在公司，家里没人的，快递能不能只周六周日送啊？上个订单JD88420已经签收了谢谢"],
            ["平时工作日我都在公司，家里没人的，快递能不能只周六周日送啊？"],
        ),
        (["and pls tell them to ring the bell twice, it's a bit broken"], None),
        (["oh and dont call before noon either"], None),
        (
            ["does it come in green? I go hiking in the mountains pretty much every weekend"],
            ["I go hiking in the mountains pretty much every weekend"],
        ),
        # The household's: "my husband is type 2 diabetic" (the tenth blind set), "给我老公买的，他穿XL".
        (["oh and my husband is type 2 diabetic so sugar free options would be amazing"], None),
        (["给我老公买的，他穿XL"], None),
    ],
)
def test_a_trait_the_user_stated_is_read_in_code(texts, sentences):
    assert trait_sentences(texts) == (sentences or texts)


@pytest.mark.parametrize(
    "text",
    [
        "Do you have it in a UK 9.5?",  # a question
        "Is the rug ok with pets?",
        "If I were vegan, would the box suit me?",  # a supposition
        "假如我吃素，这个套餐能换吗？",
        "The box is vegan and gluten-free.",  # not about the user
        "my colleague Dan is vegan btw",  # someone else's diet
        "I'm buying a present for my sister — she's vegan, so nothing leather please",
        "刚才说的不吃辣作废，给我推点辣的吧",  # taken back
        "I'm not vegan any more.",
        "我要买10斤大米",  # a quantity, no build
        "What do you remember about my pets?",  # a question about memory (the e2e test's)
    ],
)
def test_no_trait_is_read_from_a_question_a_supposition_or_someone_else(text):
    assert trait_sentences(["I'm vegan."]) == ["I'm vegan."]  # the rule reads one at all
    assert trait_sentences([text]) == []


def test_the_note_quotes_the_trait_unless_a_note_says_it():
    vegan = "I'm vegan, 8 years now."
    assert trait_notes([vegan], ["The user lives in Leeds."]) == [(f"The user said: “{vegan}”", vegan)]
    assert trait_notes([vegan], ["The user has been vegan for 8 years."]) == []  # a third of its words
    assert trait_notes(["我家养了两只猫。"], []) == [("用户说：“我家养了两只猫。”", "我家养了两只猫。")]
    # A note sharing its words but naming no trait of it says none (the tenth blind set).
    tall = "fyi im 6'3 so regular leg trousers never reach my ankles"
    assert trait_notes([tall], ["The user wants to use regular leg trousers that reach their ankles."]) != []
    assert trait_notes([tall], ["The user is 6'3."]) == []
    size = "thats my size, 11 is always way too tight"  # no trait but generic words: a third of them shared
    assert trait_notes([size], ["The user lives in Leeds."]) != []
    assert trait_notes([size], ["The user said 11 is always way too tight."]) == []


async def test_a_trait_the_extractor_dropped_is_kept_once(store, user):
    await assert_quoted_once(
        store,
        user,
        "do u have the boots in stock? I'm a UK 9.5 in everything",
        "again, I'm a UK 9.5 in everything",
        "The user said: “I'm a UK 9.5 in everything”",
    )


@pytest.mark.parametrize(
    "text",
    [
        "btw I work night shifts so please don't deliver before 2pm",
        "I'm a nurse, so I'm never home during the day",
        "我白天上班不在家，快递放门卫就行",
        "我是小学老师，白天上课接不了电话",
        "please nothing before like 11am, I sleep late",  # the sixth blind set: no channel named
    ],
)
def test_when_the_user_is_in_and_their_work_are_read(text):
    assert trait_sentences([text]) == [text]


@pytest.mark.parametrize("text", ["I'll be home after 5pm today.", "我明天白天不在家"])
def test_one_errand_s_time_is_none(text):
    assert trait_sentences(["I'm only home after 5pm."]) != []  # precondition: a standing one is read
    assert trait_sentences([text]) == []


async def test_an_ask_to_forget_keeps_nothing_it_names(store, user):
    """ "Forget my dog." names a pet: no fact to keep, whatever reader reads it."""
    from langchain_core.messages import HumanMessage

    from mnemo import alist_notes
    from mnemo.writing import aextract_messages
    from tests.writing import EXTRACT, load_nothing_extracted

    assert trait_sentences(["Forget my dog."]) == ["Forget my dog."]  # precondition: a reader reads it
    thread = [HumanMessage("Forget my dog.", id="h1")]
    await aextract_messages(store, user, load_nothing_extracted, thread, 0, **EXTRACT)
    assert await alist_notes(store, user) == []


async def test_a_note_the_extractor_revised_to_say_the_trait_says_it(store, user):
    """The new text of a note ("The user lives with two cats.") says the trait: no quote beside it."""
    from langchain_core.messages import HumanMessage

    from harness.scripted import ScriptedChatModel, tool_call
    from mnemo import alist_notes, aremember
    from mnemo.writing import aextract_messages
    from tests.notes.test_revise import shown
    from tests.writing import EXTRACT

    await aremember(store, user, "The user lives alone.")

    async def load():
        def revise(messages, tools):
            (note_id,) = shown(messages).values()
            return tool_call("MemoryExtraction", updates=[{"id": note_id, "text": "The user lives with two cats."}])

        return ScriptedChatModel(respond=revise)

    thread = [HumanMessage("I've got two cats now.", id="h1")]
    await aextract_messages(store, user, load, thread, 0, **EXTRACT)
    assert [n["text"] for n in await alist_notes(store, user)] == ["The user lives with two cats."]


@pytest.mark.parametrize(
    "text",
    [
        "if nobody answers just leave things in the back porch, it's covered",  # a condition that happens
        "oh and I'm left-handed so the scissors I got last time were useless",
        "I've got a lil bakery in town, need a big batch of the kraft cake boxes",
    ],
)
def test_the_eleventh_blind_set_s_traits(text):
    assert trait_sentences([text]) == [text]


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        ("我住在厦门，平时喜欢露营⛺", None),  # a hobby without 我 in its clause: the clause before is theirs
        (
            "also I'm training for a marathon so mostly buying running gear these days. is order 50936 refunded yet?",
            "also I'm training for a marathon so mostly buying running gear these days.",
        ),
        # A standing request asked of the couriers, and the sentence that goes on with it.
        (
            "my last parcel (order 31822) got left on the doorstep in the rain 🙄 from now on can couriers always "
            "leave stuff with my neighbour at no. 14 if I'm out? or in the blue recycling bin by the gate",
            "from now on can couriers always leave stuff with my neighbour at no. 14 if I'm out? "
            "or in the blue recycling bin by the gate",
        ),
    ],
)
def test_the_twelfth_blind_set_s_traits(text, sentence):
    assert trait_sentences([text]) == [sentence or text]


@pytest.mark.parametrize(
    "text",
    [
        "我平时喜欢的那款帐篷还有货吗？",  # asked
        "can couriers leave stuff with a neighbour?",  # asked, nothing that stands
        "do you sell marathon gels?",
    ],
)
def test_no_hobby_or_request_is_read_from_a_question(text):
    assert trait_sentences(["我平时喜欢露营"]) != []  # precondition: a hobby is read at all
    assert trait_sentences([text]) == []


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        (
            "also is the lavender diffuser safe around cats? we have two and one of them chews everything too lol",
            "we have two [cats] and one of them chews everything too lol",  # the product left out (blind10)
        ),
        ("这个驱虫药对猫安全吗？我家有两只", "我家有两只[猫]"),
        ("有没有L码？那是我的尺码", "有没有L码那是我的尺码"),  # one clause: the size is the user's
    ],
)
def test_a_count_or_a_size_after_a_question_is_the_user_s(text, sentence):
    assert trait_sentences([text]) == [sentence]


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        # The clause after says whose ("I'm at the workshop"); weekdays a schedule.
        (
            "and weekdays after 6pm is best, I'm at the workshop all day. btw where's my parcel?",
            "and weekdays after 6pm is best, I'm at the workshop all day.",
        ),
        # A space after a number before Han is a comma: the question's clause left out.
        ("我的鞋码是42 帮我看看那双跑鞋有没有货 我在南京", "我的鞋码是42 我在南京"),
        # A standing request asked with "能不能……都", "when stuff comes can the courier ...".
        ("快递能不能都放小区门口的丰巢柜 别送上门 我家狗见生人就叫", None),
        (
            "hiya, when stuff comes can the courier leave it in the blue recycling bin by the side gate? nobody's home",
            "hiya, when stuff comes can the courier leave it in the blue recycling bin by the side gate?",
        ),
    ],
)
def test_the_thirteenth_blind_set_s_traits(text, sentence):
    assert (sentence or text) in trait_sentences([text])


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        (
            "hey the parcel got soaked 😩 can future deliveries go to the parcel locker at the Tesco instead?",
            "can future deliveries go to the parcel locker at the Tesco instead?",
        ),
        (
            "if the lockers full just leave it with next door at no.14, Mrs Okafor, she's always in. order 77120934?",
            "if the lockers full just leave it with next door at no.14, Mrs Okafor, she's always in.",
        ),
        ("要是快递柜满了就放门卫 谢谢", "要是快递柜满了就放门卫 谢谢"),
    ],
)
def test_the_fourteenth_blind_set_s_traits(text, sentence):
    assert sentence in trait_sentences([text])


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        (
            "对了新小区快递员进不来 都是放门口丰巢。我老公说明年要是调去上海还得再搬一次",
            "对了新小区快递员进不来 都是放门口丰巢。",
        ),
        ("我跑外卖的 一般都是等红灯瞄一眼消息", None),
        ("also plastic-free packaging if at all poss 🌱", None),
    ],
)
def test_the_fifteenth_blind_set_s_traits(text, sentence):
    assert trait_sentences([text]) == [sentence or text]


def test_someone_else_s_diet_and_one_parcel_s_locker_are_no_trait():
    assert trait_sentences(["I'm vegan"]) != [] and trait_sentences(["都是放门口丰巢"]) != []  # precondition
    assert trait_sentences(["my roommate's vegan but she does her own shopping"]) == []
    assert trait_sentences(["她那边都是放门口丰巢"]) == []  # someone else's
    assert trait_sentences(["快递柜里也没有 麻烦查一下"]) == []


def test_a_delivery_asked_once_or_supposed_is_no_trait():
    assert trait_sentences(["can future deliveries go to the parcel locker?"]) != []  # precondition
    assert trait_sentences(["can this delivery go to the parcel locker?"]) == []  # one errand
    assert trait_sentences(["if I moved, would you leave it with next door?"]) == []  # supposed, asked


def test_a_need_of_access_is_never_a_name():
    assert not names_a_trait("马丽")  # precondition
    assert names_a_trait("色盲") and names_a_trait("Deaf")


def test_the_clause_after_says_whose_never_asks():
    """ "快递柜里也没有 麻烦查一下": a request after a clause makes no trait of it the user's."""
    assert trait_sentences(["快递柜里也没有 我查一下"]) != []  # precondition: "我" after says whose
    assert trait_sentences(["快递柜里也没有 麻烦查一下"]) == []


def test_a_count_after_a_question_naming_no_household_is_none():
    assert trait_sentences(["is it safe for kids? I have 3"]) == ["I have 3 [kids]"]  # precondition
    assert trait_sentences(["how many do I need? we have two"]) == []


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        ("另外我吃蛋奶素好几年了", None),
        ("我现在自由职业画插画，天天窝在家里", None),
        ("A locker is way better for me.", None),
        ("i'm a freelancer so im home most days", None),
    ],
)
def test_the_sixteenth_blind_set_s_traits(text, sentence):
    assert trait_sentences([text]) == [sentence or text]


def test_a_household_member_set_aside_or_someone_else_opening_a_clause_is_no_trait():
    """The sixteenth blind set: "my partner's coeliac but that's his problem", "my cousin in Philly swears by
    porch cams"; a household member's own fact is kept, someone living with the user too."""
    assert trait_sentences(["my husband is type 2 diabetic so no sugar in the hamper pls"]) != []  # precondition
    assert trait_sentences(["my partner's coeliac but that's his problem haha, he does his own baking."]) == []
    assert trait_sentences(["我老公乳糖不耐，不过他的东西他自己买，不用管他😂"]) == []
    assert trait_sentences(["my husband's the early bird, he'd pick up at 6am lol but don't call him"]) == []
    assert trait_sentences(["my cousin in Philly swears by porch cams but nah"]) == []
    assert trait_sentences(["My neighbor gets hers left with the doorman but we don't have one lol."]) == []
    assert trait_sentences(["leave it with my neighbour at no. 14 if im out"]) != []  # whose, not who
    assert trait_sentences(["my mum lives with us so someone is always home"]) != []  # the household's
    assert trait_sentences(["my husband and I are vegan but he does his own shopping"]) != []  # the user's too
