"""A wish to be answered in a language, read in code (issue 55 point 4).

"Could you answer me in Spanish from now on?", "以后请用英文回复我": a small model
leaves the profile's language as it was (Qwen2.5-Coder-1.5B did, in both languages:
docs/models.md), so the writing sets it from the user's own words whatever the
extractor returned (:func:`mnemo.writing.apply.aapply_extraction`). A request is
one even as a question; a supposition ("If I wrote to you in German, ...") is none.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from mnemo.profile import language_code
from mnemo.writing.grounding import SENTENCE, unsupposed

#: Where a request names the language: a word ("Polish"), or up to six Han characters
#: ("波兰语吧": the longest start of them that is a language's name, :func:`_language`).
_WORD = r"([^\W\d_]+)"
_HAN = r"([A-Za-z]+|[\u3400-\u9fff]{2,6})"
#: The same, as short as the words after it allow ("用波兰语回复": "波兰语").
_HAN_BEFORE = r"([A-Za-z]+|[\u3400-\u9fff]{1,6}?)"
#: "answer me in Spanish", "reply to me only in German", "switch to French", "use English with me";
#: not "I talk with my mum in French" (answering the user, not someone else).
_ASKED_EN = re.compile(
    rf"\b(?:answer|reply|replie|respond|write|talk|speak|chat|communicate|switch)\w*"
    rf"(?:\s+(?:(?:to|with)\s+)?(?:me|us|only|always|just|please|back))*\s+(?:in|to|into)\s+{_WORD}"
    rf"|\buse\s+{_WORD}",
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
    for text in texts:
        for sentence in map(unsupposed, SENTENCE.split(text)):
            for pattern in (_ASKED_EN, _ASKED_ZH):
                for m in pattern.finditer(sentence):
                    asked = _language(next(g for g in m.groups() if g)) or asked
    return asked
