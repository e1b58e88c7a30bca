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

from mnemo.profile import LANGUAGE_NAMES
from mnemo.writing.grounding import SENTENCE, unsupposed

#: A language's names a request uses (its code, "en", is no word of a sentence).
_NAMES = {name: code for code, names in LANGUAGE_NAMES.items() for name in names if name != code}
_NAME = "|".join(sorted(map(re.escape, _NAMES), key=len, reverse=True))
#: "answer me in Spanish", "reply to me only in German", "switch to French", "use English with me";
#: not "I talk with my mum in French" (answering the user, not someone else).
_ASKED_EN = re.compile(
    rf"\b(?:answer|reply|replie|respond|write|talk|speak|chat|communicate|switch)\w*"
    rf"(?:\s+(?:(?:to|with)\s+)?(?:me|us|only|always|just|please|back))*\s+(?:in|to|into)\s+({_NAME})\b"
    rf"|\buse\s+({_NAME})\b",
    re.IGNORECASE,
)
#: "用英文回复我", "改用中文和我交流", "跟我说英语", "以后用日语回答", "以后你们回我都用英文吧"; not
#: "你们回我都用英文，我看不懂" (a complaint: no wish before it, no 吧 after).
_ASKED_ZH = re.compile(
    rf"(?:用|改用|换成|使用)\s*({_NAME})\s*(?:来)?(?:回复|回答|答复|回|交流|沟通|和我|跟我|与我|对我|聊|说|讲|写)"
    rf"|(?:跟我|和我|对我)(?:说|讲)\s*({_NAME})"
    rf"|(?:以后|今后|往后|请|麻烦)[^。！？]{{0,8}}?(?:回复|回答|答复|回)[^。！？，,]{{0,4}}?用\s*({_NAME})"
    rf"|(?:回复|回答|答复|回)[^。！？，,]{{0,4}}?用\s*({_NAME})\s*吧",
    re.IGNORECASE,
)


def asked_language(texts: Iterable[str]) -> str | None:
    """The language (its code in :data:`mnemo.profile.LANGUAGE_NAMES`) the user's
    ``texts`` ask to be answered in, the last one asked; ``None`` when they ask for none."""
    asked = None
    for text in texts:
        for sentence in map(unsupposed, SENTENCE.split(text)):
            for pattern in (_ASKED_EN, _ASKED_ZH):
                for m in pattern.finditer(sentence):
                    asked = _NAMES[next(g for g in m.groups() if g).casefold()]
    return asked
