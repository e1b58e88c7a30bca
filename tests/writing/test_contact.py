"""mnemo.writing.contact: how the user wants to be contacted is kept in their words
when the extractor dropped it (issue 55 point 4: Qwen2.5-Coder-1.5B did, after a
question, in both languages), and one request to email an invoice is no standing wish."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from mnemo import alist_notes
from mnemo.writing import aextract_messages
from mnemo.writing.contact import channels, contact_notes, contact_sentences
from tests.writing import EXTRACT, assert_quoted_once, load_nothing_extracted


@pytest.mark.parametrize(
    ("text", "sentence", "named"),
    [
        (
            "How long does a refund take? By the way, please only contact me by email, never by phone.",
            "By the way, please only contact me by email, never by phone.",
            {"email", "phone"},
        ),
        ("Also I'd rather you didn't phone me, email is best.", None, {"email", "phone"}),
        ("Text me instead of calling, I'm in meetings all day.", None, {"text", "phone"}),
        ("No calls please, I prefer WhatsApp.", None, {"phone", "whatsapp"}),
        ("另外别给我打电话，发短信就行。", None, {"phone", "text"}),
        ("能开发票吗？顺便说一下，联系我请用邮件。", "顺便说一下，联系我请用邮件。", {"email"}),
        ("有事发微信找我，别打电话。", None, {"wechat", "phone"}),
        # Contacting the user at all, no one errand.
        ("Reach me by text, please.", None, {"text"}),
        ("有急事联系我发微信。", None, {"wechat"}),
        # A channel said to be best, no verb for reaching (issue 55, the second blind set).
        ("Email is best, I rarely check texts.", None, {"email", "text"}),
        ("有事微信就行。", None, {"wechat"}),
        # A channel's own verb, a verb's -ing, "stop" (issue 55, the fourth blind set).
        ("just whatsapp me on the same number, always", None, {"whatsapp"}),
        ("pls stop ringing me about deliveries, i can't pick up at work.", None, {"phone"}),
        # A time between the channel and "best"; "有事" is whenever something comes up (blind12).
        ("whatsapp after 6pm is best", None, {"whatsapp"}),
        ("texts in the evening work best for me", None, {"text"}),
        ("有事请发短信给我吧", None, {"text"}),
        # A channel said to do, and one said not to, in Chinese (blind13).
        ("下午四点以后到晚上十点都可以 微信留言也行 电话尽量少打", None, {"wechat", "phone"}),
        ("电话尽量少打，上班接不了", None, {"phone"}),
    ],
)
def test_a_standing_wish_about_the_channel_is_read_in_code(text, sentence, named):
    assert contact_sentences([text]) == [(sentence or text, named)]


@pytest.mark.parametrize(
    "text",
    [
        "Please email me the invoice.",  # one request, not a standing wish
        "Can you only email me?",  # a question
        "If you ever call me, use my mobile, never the landline.",  # a supposition
        "I never got the email.",  # no wish about reaching the user
        "我没收到短信。",
        "请给我发短信通知发货。",  # one request
        "你们以后只发邮件吗？",
        "the phone case is fine, I'd rather have the blue one",  # a product, not a channel said best
        "请给我发短信确认一下",  # one request, nothing whenever
    ],
)
def test_no_standing_wish_is_read_from_a_request_a_question_or_a_complaint(text):
    assert contact_sentences(["Please only contact me by email."]) != []  # the rule reads a wish at all
    assert contact_sentences([text]) == []


def test_the_note_quotes_the_wish_unless_a_note_names_one_of_its_channels():
    text = "How long does a refund take? By the way, please only contact me by email, never by phone."
    wish = "By the way, please only contact me by email, never by phone."
    assert contact_notes([text], ["The user lives in Leeds."]) == [(f"The user said: “{wish}”", wish)]
    assert contact_notes([text], ["The user wants to be contacted by e-mail only."]) == []
    assert contact_notes(["另外别给我打电话，发短信就行。"], []) == [
        ("用户说：“另外别给我打电话，发短信就行。”", "另外别给我打电话，发短信就行。")
    ]
    assert contact_notes(["另外别给我打电话，发短信就行。"], ["用户希望发短信联系。"]) == []
    assert channels("用户希望用微信联系，别打电话。") == {"wechat", "phone"}


async def test_a_wish_the_extractor_dropped_is_kept_once(store, user):
    wish = "另外别给我打电话，发短信就行。"
    await assert_quoted_once(
        store, user, f"退款一般要多久？{wish}", "再说一次：别给我打电话，发短信就行。", f"用户说：“{wish}”"
    )


async def test_a_wish_about_the_user_s_orders_is_kept_it_is_no_order(store, user):
    """Issue 55, the blind set: "my orders" in a contact wish made the quote a business record."""
    thread = [HumanMessage("Is the blue kettle back in stock? Also never phone me about my orders, text me.", id="h1")]
    assert await aextract_messages(store, user, load_nothing_extracted, thread, 0, **EXTRACT) == (1, 0)
    assert [n["text"] for n in await alist_notes(store, user)] == [
        "The user said: “Also never phone me about my orders, text me.”"
    ]


async def test_a_wish_the_remember_tool_took_is_the_tool_s_one_it_refused_is_the_writing_s(store, user):
    """A request the ``remember_note`` tool took (answered with no error) is never quoted again;
    one it refused (an error: the model's wording, a denial) took nothing and is quoted as if no
    tool had run."""

    call = {"name": "remember_note", "args": {"text": "Contact the user by email only."}, "id": "c1"}
    thread = [
        HumanMessage("Please remember: only contact me by email, never by phone.", id="h1"),
        AIMessage("", tool_calls=[call], id="a1"),
        ToolMessage("Will be remembered once this reply is sent.", name="remember_note", tool_call_id="c1"),
    ]
    assert await aextract_messages(store, user, load_nothing_extracted, thread, 0, **EXTRACT) == (3, 0)
    assert await alist_notes(store, user) == []
    again = {**call, "id": "c2"}
    thread += [
        HumanMessage("And please only contact me by email from now on.", id="h2"),
        AIMessage("", tool_calls=[again], id="a2"),
        ToolMessage(
            "Error: not remembered: the user's messages do not say this",
            name="remember_note",
            tool_call_id="c2",
            status="error",
        ),
    ]
    assert await aextract_messages(store, user, load_nothing_extracted, thread, 3, **EXTRACT) == (6, 0)
    assert [n["text"] for n in await alist_notes(store, user)] == [
        "The user said: “And please only contact me by email from now on.”"
    ]


def test_a_time_of_day_for_a_channel_already_noted_is_its_own_note():
    """The sixth blind set: "真要打电话的话晚上8点以后再打" after a note on the phone and WeChat
    was dropped as the phone's again; a time no note of the channel says is new."""
    from mnemo.writing.contact import contact_notes

    first = "用户说：“有进展别给我打电话哈，上班时间接不了，直接微信发我就行”"
    later = "真要打电话的话晚上8点以后再打"
    assert contact_notes([later], [first]) == [("用户说：“真要打电话的话晚上8点以后再打”", later)]
    assert contact_notes([later], [first, "用户说：“真要打电话的话晚上8点以后再打”"]) == []  # said once
    assert contact_notes(["Please never phone me, only email."], ["The user said: “only email”"]) == []
    assert contact_notes(["Only call me after 6pm please."], ["The user said: “never phone me”"]) != []


def test_a_channel_wanted_that_no_note_names_is_its_own_note():
    """The fourteenth blind set: "发微信比打电话好" after a note on phone calls was dropped as the phone's."""
    from mnemo.writing.contact import contact_notes, wanted_channels

    first = "用户说：“别再早上给我打电话了 我上夜班 白天在睡觉 要联系就下午三点以后”"
    later = "发微信比打电话好 另外问下我那个退款到账没 金额是268.50"
    assert contact_notes([later], [first]) == [("用户说：“发微信比打电话好”", "发微信比打电话好")]
    assert contact_notes([later], [first, "用户希望用微信联系"]) == []
    assert wanted_channels("发微信比打电话好") == {"wechat"}
    assert wanted_channels("only text me, never call") == {"text"}
    assert wanted_channels("别给我打电话，发短信就行") == {"text"}
    assert contact_notes(["only text me, never call"], ["The user prefers texts."]) == []  # the wanted one noted


def test_when_it_is_best_to_reach_the_user_is_kept_though_no_channel_is_named():
    """The fourteenth blind set: "weekdays after 6pm is best for anything that needs a reply"."""
    from mnemo.writing.contact import contact_notes

    said = "and weekdays after 6pm is best for anything that needs a reply. weekends whenever"
    sentence = "and weekdays after 6pm is best for anything that needs a reply."
    assert contact_notes([said], []) == [(f"The user said: “{sentence}”", sentence)]
    assert contact_notes([said], ["The user is free after 6pm on weekdays."]) == []  # its time is noted
    assert contact_notes(["晚上8点以后最方便"], []) != []
    assert contact_notes(["the blue one is best"], []) == []  # no time, no channel
    assert contact_notes(["is after 6pm best?"], []) == []  # asked
    assert contact_notes(["weekends anytime after 10 is fine too"], []) != []  # the fifteenth blind set
    assert contact_notes(["weekends anytime after 10 is fine too"], ["The user is free after 10 at weekends."]) == []
    # The sixteenth blind set: a day with no hour, unless a note quotes it.
    assert contact_notes(["周末全天都可以。我妈老是早上六点给我打电话"], []) == [
        ("用户说：“周末全天都可以。”", "周末全天都可以。")
    ]
    assert contact_notes(["周末全天都可以。"], ["用户说：“周末全天都可以。”"]) == []
    assert contact_notes(["周末也可以吗？"], []) == []  # asked
