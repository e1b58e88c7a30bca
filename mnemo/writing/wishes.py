"""A wish to be answered in a language or a style, read in code (issue 55 point 4).

"Could you answer me in Spanish from now on?", "以后请用英文回复我": a small model
leaves the profile's language as it was (Qwen2.5-Coder-1.5B did, in both languages:
docs/models.md), so the writing sets it from the user's own words whatever the
extractor returned (:func:`mnemo.writing.apply.aapply_extraction`). A request is
one even as a question; a supposition ("If I wrote to you in German, ...") is none.

So is the style: "以后回复我详细点，每一步都写清楚" left it unset, and "买电器尽量选字大、操作
简单的那种" set it to concise (the eighth blind set): a style is asked only in a sentence
that is about the answers (:func:`asked_style`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from mnemo.core import HAN
from mnemo.profile import STYLE_WORDS, language_code
from mnemo.writing.grounding import SENTENCE, unsupposed

#: Where a request names the language: a word ("Polish"), or up to six Han characters
#: ("波兰语吧": the longest start of them that is a language's name, :func:`_language`).
_WORD = r"([^\W\d_]+)"
_HAN = f"([A-Za-z]+|{HAN.pattern}{{2,6}})"
#: The same, as short as the words after it allow ("用波兰语回复": "波兰语").
_HAN_BEFORE = f"([A-Za-z]+|{HAN.pattern}{{1,6}}?)"
#: "answer me in Spanish", "reply to me only in German", "switch to French", "use English with me"; "jk jk,
#: english is fine, stick w english" after "reply in Spanish from now on?" (the fifteenth blind set);
#: not "I talk with my mum in French" (answering the user, not someone else).
_ASKED_EN = re.compile(
    rf"\b(?:answer|reply|replie|respond|write|talk|speak|chat|communicate|switch)\w*"
    rf"(?:\s+(?:(?:to|with)\s+)?(?:me|us|only|always|just|please|back))*\s+(?:in|to|into)\s+{_WORD}"
    rf"|\buse\s+{_WORD}"
    rf"|\b(?:stick|stay|keep)\s+(?:w/?|with|to|in)\s+{_WORD}|(?<!my\s)\b{_WORD}\s+(?:is|'s|’s)\s+(?:fine|ok|okay|good|better)\b",
    re.IGNORECASE,
)
#: "用英文回复我", "改用中文和我交流", "跟我说英语", "以后用日语回答", "以后你们回我都用英文吧"; not
#: "你们回我都用英文，我看不懂" (a complaint: no wish before it, no 吧 after).
_ASKED_ZH = re.compile(
    rf"(?:用|改用|换成|使用)\s*{_HAN_BEFORE}\s*(?:来)?(?:回复|回答|答复|回|交流|沟通|和我|跟我|与我|对我|聊|说|讲|写)"
    rf"|(?:跟我|和我|对我)(?:说|讲)\s*{_HAN}"
    rf"|(?:以后|今后|往后|请|麻烦)[^。！？]{{0,8}}?(?:回复|回答|答复|回)[^。！？，,]{{0,4}}?用\s*{_HAN}"
    rf"|(?:回复|回答|答复|回)[^。！？，,]{{0,4}}?用\s*{_HAN_BEFORE}\s*吧",
    re.IGNORECASE,
)


def _language(named: str) -> str | None:
    """The code of the language ``named`` names, or of the longest start of it that is one
    ("波兰语吧": "波兰语"): :func:`mnemo.profile.language_code`."""
    for end in range(len(named), 1, -1):
        if (code := language_code(named[:end])) is not None:
            return code
    return None


def asked_language(texts: Iterable[str]) -> str | None:
    """The language (its code: :func:`mnemo.profile.language_code`) the user's ``texts``
    ask to be answered in, the last one asked; ``None`` when they ask for none."""
    asked = None
    for sentence in _wished(texts):
        for pattern in (_ASKED_EN, _ASKED_ZH):
            for m in pattern.finditer(sentence):
                asked = _language(next(g for g in m.groups() if g)) or asked
    return asked


def _wished(texts: Iterable[str]) -> Iterator[str]:
    """Each sentence of ``texts`` without its supposition (:func:`mnemo.writing.grounding.unsupposed`): a
    request is one even as a question."""
    for text in texts:
        yield from map(unsupposed, SENTENCE.split(text))


#: A sentence about the answers: "keep your answers short", "give me ...", "no big paragraphs", "bullet points
#: please", "回复我", "每一步都写清楚"; not "my slides need bullet points".
_BULLETED = r"bullet(?:ed)?\s+(?:points?|lists?)"
_ABOUT_ANSWERS = re.compile(
    r"\b(?:answers?|repl(?:y|ies)|responses?|respond|explain\w*|messages?|keep\s+it|give\s+me|tell\s+me"
    r"|walk\s+me|talk\s+to\s+me|write\s+(?:to\s+)?me|instructions?|essays?|paragraphs?"
    rf"|(?:in|use|with)\s+{_BULLETED}|{_BULLETED}\s+(?:please|pls|plz|only|from\s+now))\b"
    r"|回复|回答|答复|回我|解释|说|讲|写|告诉我|给我",
    re.IGNORECASE,
)
#: Each style's words beyond its name's (:data:`mnemo.profile.STYLE_WORDS`).
_STYLE = {
    "concise": re.compile(
        r"\b(?:short(?:er)?|brief(?:er)?|concise|succinct|terse|to\s+the\s+point|no\s+essays?|no\s+fluff"
        r"|(?:just|only)\s+the\s+(?:gist|basics|key\s+points|short\s+version)|tl;?dr|one[- ]liners?)\b"
        r"|简短|简洁|简明|简单点|简单一点|短点|短一点|啰嗦|废话|说重点|讲重点|直接说",
        re.IGNORECASE,
    ),
    "detailed": re.compile(
        r"\b(?:detailed|in\s+detail|more\s+detail|thorough(?:ly)?|step[- ]by[- ]step|every\s+step|each\s+step"
        r"|in[- ]depth|verbose|full\s+explanations?|explain\s+(?:everything|it\s+all|fully))\b"
        r"|详细|详尽|具体点|具体一点|每一步|一步一步|一步步",
        re.IGNORECASE,
    ),
    "bullets": re.compile(
        r"\b(?:bullet(?:ed)?(?:\s+(?:points?|lists?))?|bullets|point\s+form|(?:as|in)\s+a\s+list|no\s+(?:big\s+|long\s+)?"
        r"paragraphs?|list\s+(?:it|them)\s+out)\b|分点|分条|列表|列出来|一条一条|要点式",
        re.IGNORECASE,
    ),
}


def asked_style(texts: Iterable[str]) -> str | None:
    """The answer style (a key of :data:`mnemo.profile.STYLE_WORDS`) the user's ``texts`` ask
    for, the last one asked: a sentence about the answers with one style's words and not another's
    (bullets, a form, yield to a length: "keep answers short pls, bullet points max" asks concise);
    ``None`` when they ask for none."""
    asked = None
    for sentence in _about_answers(texts):
        styles = [style for style, words in _STYLE.items() if words.search(sentence)]
        styles = [style for style in styles if style != "bullets"] or styles
        asked = styles[0] if len(styles) == 1 else asked
    return asked


def _about_answers(texts: Iterable[str]) -> Iterator[str]:
    """Each wished sentence of ``texts`` (:func:`_wished`) about the answers (:data:`_ABOUT_ANSWERS`)."""
    return (sentence for sentence in _wished(texts) if _ABOUT_ANSWERS.search(sentence))


def style_said(style: str, texts: Iterable[str]) -> bool:
    """Whether the user's ``texts`` ask for the answer ``style``: :func:`asked_style`, or a
    sentence about the answers naming it (:data:`mnemo.profile.STYLE_WORDS`)."""
    texts = list(texts)
    if (asked := asked_style(texts)) is not None:
        return asked == style
    names = STYLE_WORDS.get(style, ())
    return any(any(name in sentence.casefold() for name in names) for sentence in _about_answers(texts))
