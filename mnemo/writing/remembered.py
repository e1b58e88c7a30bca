"""A request to remember is kept, read in code (issue 55 point 4).

"..., would your protein bars still work for me? Anyway, please remember that I
can't eat shellfish." A small model drops the fact asked to be remembered when a
question or a supposition comes first (Qwen2.5-Coder-1.5B did, in both languages:
docs/models.md), and the agent answers "I'll remember". So the writing keeps the
fact the user asked to remember, as a note quoting them, when no note of the
extraction says it already. A question about memory ("Do you remember my size?")
asks nothing to be kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from mnemo.writing.grounding import REMEMBER_EN, REMEMBER_ZH, SENTENCE, asks_to_remember
from mnemo.writing.quotes import quoted_new

#: A request to remember (:data:`mnemo.writing.grounding.REMEMBER_EN`), "remember this abt me: I'm ...",
#: "pls remember this for real: I always ...":
#: the fact is what follows, about the user (I, my, we, our).
_ASKED_EN = re.compile(
    REMEMBER_EN
    + r"(?:[^:：.!?\n]{0,30}[:：]|(?:\s+(?:this|the\s+following))?(?:\s+(?:about|abt)\s+me)?\s*,?)\s+(?:that\s+)?"
    r"(?P<fact>(?:I|I'm|Im|I've|Ive|I'd|my|we|we're|our)\b.+)",
    re.IGNORECASE,
)
#: "请记住我不吃香菜", "帮我记下：我……", "别忘了我……", "帮我记一下哈，我……".
_ASKED_ZH = re.compile(rf"{REMEMBER_ZH}\s*[哈啊呀吧哦喔嘛]?\s*[，,：:]?\s*(?P<fact>我.+)")
#: A question's end, left out of the fact ("..., I'm vegan?", "我不吃辣吗？"), with its tag ("..., ok?", "……好吗？").
_ASKED_END = re.compile(
    r"\s*(?:[,，]?\s*(?:好吗|好不好|行吗|行不行|可以吗|成吗|ok|okay|alright|yeah|right))?\s*(?:吗|嘛|呢)?\s*[?？]+\s*$",
    re.IGNORECASE,
)


def remembered_facts(texts: Iterable[str]) -> list[str]:
    """The facts the user's ``texts`` ask to be remembered, in their words."""
    facts: list[str] = []
    for text in texts:
        for sentence in SENTENCE.split(text):
            if not asks_to_remember(sentence):
                continue
            for pattern in (_ASKED_EN, _ASKED_ZH):
                if (m := pattern.search(sentence)) is not None:
                    facts.append(_ASKED_END.sub("", m.group("fact")).strip())
                    break
    return facts


def remembered_notes(texts: Sequence[str], notes: Iterable[str]) -> list[tuple[str, str]]:
    """The notes to add for the facts of :func:`remembered_facts` that none of
    ``notes`` says (shares a third of their content words): ``(note text, the fact)``."""
    return quoted_new(texts, remembered_facts(texts), notes)
