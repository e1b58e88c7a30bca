"""How the user wants to be contacted is kept, in their own words (issue 55 point 4).

"How long does a refund take? By the way, please only contact me by email, never
by phone." "另外别给我打电话，发短信就行。" A small model drops a standing wish about
the channel when a question or another wish comes first (Qwen2.5-Coder-1.5B did,
in both languages and both halves of the labelled set: docs/models.md). So the
writing keeps, as a note quoting the user, each sentence they stated that

- asks to be reached, or not, through a channel ("contact me by email", "phone
  me", "给我打电话", "联系我"),
- names a channel (:data:`CHANNELS`), and
- says it is standing: only, never, rather, best, instead; 只, 别, 最好, 就行, 以后 ...;
  or speaks of contacting the user at all, no one errand ("contact me by text", "联系我请发短信"),

when no note of the extraction names one of its channels (the model's own note
about the wish is enough: a second one, quoting, would repeat it). "Please email me the
invoice." is one request, not a standing wish, and is not kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from mnemo.writing.grounding import stated_sentences
from mnemo.writing.quotes import quoted, quoting

#: Each channel, by the words that name it in a sentence or a note.
CHANNELS: dict[str, re.Pattern[str]] = {
    "email": re.compile(r"\be-?mails?\b|邮件|邮箱|电邮", re.IGNORECASE),
    "text": re.compile(r"\b(?:texts?|sms|text\s+messages?)\b|短信|短讯", re.IGNORECASE),
    "phone": re.compile(r"\b(?:phone|phoning|call|calls|calling|ring|ringing)\b|电话", re.IGNORECASE),
    "wechat": re.compile(r"\bwechat\b|微信", re.IGNORECASE),
    "whatsapp": re.compile(r"\bwhatsapp\b", re.IGNORECASE),
}
#: Reaching the user: "contact me", "phone me", "stop ringing me", "whatsapp me", "get in touch with me",
#: "WhatsApp is best", "whatsapp after 6pm is best"; "联系我", "打电话",
#: "发短信", "微信就行", "微信留言也行", "电话尽量少打".
_REACH = re.compile(
    r"\b(?:contact|reach|call|phone|ring|text|e-?mail|message|notify|whatsapp|wechat|sms|dm)(?:ing|e?d)?\s+me\b"
    r"|\b(?:phoning|messaging|writing\s+to|write\s+to|get\s+in\s+touch\s+with)\s+me\b"
    r"|\b(?:calls|texts|emails|e-mails)\s+(?:to\s+me|are|is|only|please)\b"
    r"|\bby\s+(?:e-?mail|phone|text|sms)\b"
    r"|\b(?:whatsapp|wechat|e-?mail|texts?|sms|phone)\s+(?:(?:after|before|from|until|till|during|on|at|around|in(?:\s+the)?)\s+[\w:.]+(?:\s*(?:am|pm))?\s+){0,2}(?:is|are|works?)\s+(?:best|better|fine|ok|okay|preferred|easiest)\b"
    r"|(?:微信|短信|邮件|邮箱)(?:联系|留言|发消息)?(?:也|都)?(?:就行|就好|最好|最方便|行|可以)"
    r"|电话\S{0,3}(?:少打|别打|不要打|不打)"
    r"|联系我|联络我|通知我|找我|打电话|打我电话|来电|发短信|发邮件|发微信",
    re.IGNORECASE,
)
#: A wish that stands, not one errand: "only", "never", "rather", "instead", "stop"; "只", "别", "就行";
#: contacting the user at all ("contact me", "联系我").
_STANDING = re.compile(
    r"\b(?:only|never|don't|do\s+not|didn't|rather|prefer|preferred|best|always|instead|from\s+now\s+on|no\s+more|stop)\b"
    r"|\b(?:whenever|any\s*time|if\s+(?:anything|something)\s+comes\s+up)\b"
    r"|只|别|不要|不用|最好|就行|就好|请用|以后|一律|尽量|都用|有事|有什么事|有啥事"
    r"|\b(?:contact|reach)\s+me\b|\bget\s+in\s+touch\s+with\s+me\b|联系我|联络我"
    r"|\bbetter\s+than\b|比\S{0,6}?(?:好|方便|强)",  # "发微信比打电话好" (the fourteenth blind set)
    re.IGNORECASE,
)
#: A channel the sentence does not want: "never call", "don't ring", "rather than a call", "别打电话",
#: "比打电话好", "电话少打".
_UNWANTED = {
    name: re.compile(
        rf"(?:\b(?:never|don(?:'|’)?t|dont|do\s+not|no|not|stop|rather\s+than|instead\s+of|than)\s+(?:\w+\s+)?"
        rf"|(?:别|不要|不用|少|比|不)\S{{0,4}}?)(?:{words.pattern})|(?:{words.pattern})\S{{0,2}}?(?:少打|别打|不要打|不打)",
        re.IGNORECASE,
    )
    for name, words in CHANNELS.items()
}
#: When it is best to reach the user, no channel named: "weekdays after 6pm is best for anything that
#: needs a reply" (the fourteenth blind set), "weekends anytime after 10 is fine too" (the fifteenth),
#: "晚上8点以后最方便", "周末全天都可以".
_BEST_TIME = re.compile(
    r"\b(?:after|before|from|between|around)\s+(?:like\s+|about\s+)?\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)"
    r"[^.!?]{0,12}?\b(?:is|are|works?)\s+(?:best|better|ideal|easiest)\b"
    r"|\b(?:after|before|from|between)\s+\d{1,2}(?::\d{2})?\s*(?:am|pm)?\s+(?:is|are|works?)\s+(?:fine|ok|okay|good|best)\b"
    r"|[0-9一二三四五六七八九十两]{1,3}\s*点(?:以后|之后|后|以前|之前|前)(?:联系我?)?(?:最方便|比较方便|最好|方便)"
    # "周末全天都可以" (the sixteenth blind set).
    r"|(?:^|(?<=[，,\s]))(?:周末|周六|周日|工作日|晚上|白天|中午|下午|上午)(?:全天|整天|一整天|随时)?(?:都|也)?(?:可以|行|方便)",
    re.IGNORECASE,
)


def channels(text: str) -> set[str]:
    """The channels (keys of :data:`CHANNELS`) ``text`` names."""
    return {name for name, words in CHANNELS.items() if words.search(text)}


def contact_sentences(texts: Iterable[str]) -> list[tuple[str, set[str]]]:
    """Each stated sentence of ``texts`` that tells how the user wants to be reached,
    with the channels it names: ``(sentence, channels)``."""
    return [
        (sentence.strip(), named)
        for sentence in stated_sentences(texts)
        if ((named := channels(sentence)) and _REACH.search(sentence) and _STANDING.search(sentence))
        or (not named and _BEST_TIME.search(sentence))
    ]


def wanted_channels(sentence: str) -> set[str]:
    """The channels ``sentence`` names and does not turn down (:data:`_UNWANTED`): "text", of "only text me,
    never call"; "wechat", of "发微信比打电话好"."""
    return {name for name in channels(sentence) if not _UNWANTED[name].search(sentence)}


#: A time of day a wish names: "after 8pm", "11:30", "after 10", "晚上8点以后", "九点前".
_TIME = re.compile(
    r"\b\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)|\b\d{1,2}:\d{2}\b|[0-9一二三四五六七八九十两]{1,3}\s*点"
    r"|\b(?:after|before|from|until|till)\s+\d{1,2}\b",  # "after 10 is fine"
    re.IGNORECASE,
)


def contact_notes(texts: Sequence[str], notes: Iterable[str]) -> list[tuple[str, str]]:
    """The notes to add for the sentences of :func:`contact_sentences` none of whose
    channels a note of ``notes`` names, or with a channel they want no note names ("发微信比打电话好"
    after "别再早上给我打电话了": the fourteenth blind set), or that name a time of day no such note says
    ("真要打电话的话晚上8点以后再打" after "别给我打电话，微信发我就行": the sixth blind set; a sentence
    naming no channel, no note at all): ``(note text, the sentence it quotes)``."""
    notes = list(notes)
    kept = [channels(n) for n in notes]
    form = quoting(texts)
    named_by_notes = set().union(*kept)
    return [
        (quoted(form, sentence), sentence)
        for sentence, named in contact_sentences(texts)
        if (named and not any(named & k for k in kept))
        or wanted_channels(sentence) - named_by_notes
        or _new_time(sentence, [n for n, k in zip(notes, kept, strict=True) if named & k or not named])
        # A best time with no hour ("周末全天都可以"): kept unless a note quotes it.
        or (not named and not _TIME.search(sentence) and not any(sentence in n for n in notes))
    ]


def _new_time(sentence: str, notes: Sequence[str]) -> bool:
    """Whether ``sentence`` names a time of day none of ``notes`` says."""
    return any(all(t.group() not in n for n in notes) for t in _TIME.finditer(sentence))
