"""What the user took back: the only words that may remove what memory holds (issue 55).

An extraction may invalidate a note it was shown, or forget a profile field. A small
model does both unasked: Qwen2.5-Coder-1.5B, given "oh and order 7730418 is already on
its way, can that one be redirected too?" after an address the user gave, invalidated
every note it was shown, and forgot every profile field after "is the code SAVE10 still
valid?" (the second blind set, docs/bench.md). A removal is held to the user's words as a
new fact is: applied only when a sentence of theirs takes something back
(:func:`retracting_sentences`) and names it: for a note, one of its words
(:func:`retracts`); for a field, the field or its value (:func:`forgets_field`).

A sentence takes back when it asks to forget ("forget my address", "把我的地址删了",
a question too), or states a change or a denial ("I sold my car", "I'm not vegan
any more", "I moved", "我不吃素了", "我搬家了"); never a supposition, and never a
sentence about an order, a refund or a payment (:mod:`mnemo.writing.refusals`): the
order system's records are no fact about the user to take back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from mnemo.core import HAN, content_tokens
from mnemo.profile import LANGUAGE_NAMES, STYLE_WORDS
from mnemo.writing.grounding import CLAUSE, SENTENCE, is_question, unsupposed
from mnemo.writing.refusals import business_record_term

#: A reminder, read as no part of a retraction: "don't forget", "别忘了".
_REMINDER = re.compile(r"\b(?:don't|do\s+not|never)\s+forget\b|别忘|不要忘", re.IGNORECASE)
#: An ask to forget: "forget my address", "把我的地址删了".
_FORGET = re.compile(r"\b(?:forget|delete|remove|erase|drop)\b|忘(?:掉|记|了吧)|删|清除|去掉", re.IGNORECASE)
#: A change or a denial: "no longer", "not ... any more", "sold", "moved", "wrong", "now"; "不再", "不……了",
#: "搬", "其实", "现在".
_CHANGE = re.compile(
    r"\b(?:no\s+longer|any\s*more|not|never|no|wrong|mistake|incorrect|actually|instead|stopped|quit|gave\s+up"
    r"|sold|moved|changed|switched|ignore|scratch\s+that|outdated|now)\b|n't\b"
    r"|不再|不是|别再|已经不|没有了|不\S{0,6}了|没\S{0,6}了|搬|改|换|取消|戒|卖|错|其实|现在",
    re.IGNORECASE,
)
#: An ask to forget that states no fact: "Forget my dog.", "delete that note", "把那条删掉"; not "please
#: remove the cheese, I'm vegan" (:func:`asks_to_forget`).
_FORGET_FACT = re.compile(
    r"\bforget\b|\b(?:delete|remove|erase)\s+(?:that|this|it|what\s+i\s+said"
    r"|(?:the|my|that|this)\s+(?:\w+\s+)?(?:notes?|memor(?:y|ies)|info|information|details?))\b"
    r"|忘掉|忘了吧|忘记|别记|不用记|删掉|删除|删了",
    re.IGNORECASE,
)


def asks_to_forget(sentence: str) -> bool:
    """Whether ``sentence`` asks to forget (no reminder: "don't forget"): what it names is
    no fact to keep (:func:`mnemo.writing.wanted.in_their_words`)."""
    return bool(_FORGET_FACT.search(_REMINDER.sub(" ", sentence)))


#: The words naming each profile field in a sentence that takes it back ("forget my name", "我搬家了").
_FIELD_WORDS = {
    "name": re.compile(r"\b(?:name|called)\b|名字|叫", re.IGNORECASE),
    "city": re.compile(r"\b(?:city|town|live|living|lives|moved|address)\b|城市|住|搬", re.IGNORECASE),
    "language": re.compile(
        r"\blanguage\b|语言|" + "|".join(re.escape(n) for names in LANGUAGE_NAMES.values() for n in names[1:]),
        re.IGNORECASE,
    ),
    "response_style": re.compile(
        r"\bstyle\b|风格|" + "|".join(re.escape(w) for words in STYLE_WORDS.values() for w in words), re.IGNORECASE
    ),
}


def retracting_sentences(texts: Iterable[str]) -> list[str]:
    """Each sentence of the user's ``texts`` that takes something back: asks to forget,
    or states (no question) a change or a denial, then only its changing clauses when they
    name something (:func:`_changing_part`); its supposition left out, and none about a
    business record."""
    found = []
    for text in texts:
        for sentence in map(unsupposed, SENTENCE.split(text)):
            if business_record_term(sentence) is not None:
                continue
            words = _REMINDER.sub(" ", sentence)
            if _FORGET.search(words):
                found.append(sentence)
            elif _CHANGE.search(words) and not is_question(sentence):
                found.append(_changing_part(sentence))
    return found


#: Words of a change that say it of what the sentence named elsewhere ("the vegan thing, that's not true any more",
#: "Stop answering in German, not needed any more").
_ABOUT_IT = content_tokens("true right case need needed relevant valid accurate correct thing stuff apply applies same")


def _changing_part(sentence: str) -> str:
    """The clauses of ``sentence`` that state its change or denial, when they name something of their own
    beside the change's words: "出差完就回去，不是搬家哈" takes back a move, not the trip its other clause
    names (the sixteenth blind set); "my dog, I don't have it any more" names nothing but in the sentence."""
    changing = [c.strip() for c in CLAUSE.split(sentence) if _CHANGE.search(_REMINDER.sub(" ", c))]
    own = content_tokens(_CHANGE.sub(" ", " ".join(changing))) - _CHATTER - _ABOUT_IT
    return "，".join(changing) if own else sentence


#: Words of chat and of a quoting note that name nothing taken back ("so", "ok", "said", "说"), a negation's
#: stub ("don" of "don't", "不", "没") and laughter ("哈": "说不定下周就放弃了哈哈" took back a peanut allergy's note
#: that ended "帮我避开哈", "don't call him" an ICU nurse's "don't ring me before 2pm", "上次帮他买衣服颜色搞错了，
#: 不过……" a hearing aid's "听力不太好": the sixteenth blind set).
_CHATTER = frozenset(
    {"so", "ok", "okay", "oh", "hi", "hey", "ty", "thx", "pls", "please", "said", "说", "lol", "haha", "ll", "ve", "re"}
    | {"don", "dont", "didn", "didnt", "doesn", "won", "isn", "aren", "wasn", "weren", "can", "cant", "couldn"}
    | set("哈呵嘿嘻啦呀哦嗯噢嘛不没")
)


def retracts(note: str, taken_back: Sequence[str]) -> bool:
    """Whether the sentences ``taken_back`` (of :func:`retracting_sentences`) take back
    ``note``: one shares one of its content words, but chatter (:data:`_CHATTER`: the
    seventh blind set's "so" tied "I'm lactose intolerant too, so ..." to a hazelnut allergy)."""
    words = content_tokens(note) - _CHATTER
    return any(not words.isdisjoint(content_tokens(s)) for s in taken_back)


def forgets_field(field: str, taken_back: Sequence[str], value: str | None = None) -> bool:
    """Whether the sentences ``taken_back`` (of :func:`retracting_sentences`) take back the
    profile ``field``: one names the field (:data:`_FIELD_WORDS`) or its current ``value``."""
    named = _FIELD_WORDS.get(field)
    return any(
        (named is not None and named.search(s)) or (value and value.casefold() in s.casefold()) for s in taken_back
    )


#: Words of an ask to forget that name nothing to forget ("forget the teacher thing": "teacher").
_ASKING_WORDS = content_tokens(
    "forget delete remove erase drop thing stuff bit part note notes memory info details actually"
)
#: Characters of a Chinese ask to forget that name nothing: "健身房那个别记了 删掉吧" names "健身房".
_ASKING_HAN = re.compile(r"[的了吧呢啊哈呀嘛那这个别记删掉除忘不用要我你他她说也都就还是在把给]+")


def forgotten(texts: Iterable[str], shown: Mapping[str, str]) -> list[str]:
    """The keys of ``shown`` (key -> note text) that a clause of the user's ``texts`` asks to forget
    (:func:`asks_to_forget`) names: one of its words ("actually forget the teacher thing"), or two
    Han characters of it in a row ("健身房那个别记了 删掉吧"; one character names too much). A small
    model keeps the note it was asked to forget (the thirteenth blind set)."""
    words: set[str] = set()
    pairs: set[str] = set()
    for text in texts:
        for sentence in SENTENCE.split(text):
            for clause in CLAUSE.split(sentence):
                if asks_to_forget(clause) and business_record_term(clause) is None:
                    words |= {w for w in content_tokens(clause) if w.isascii()} - _ASKING_WORDS - _CHATTER
                    han = " ".join(re.findall(f"{HAN.pattern}+", clause))
                    for run in re.split(rf"{_ASKING_HAN.pattern}|\s+", han):
                        pairs |= {run[i : i + 2] for i in range(len(run) - 1)}
    return [
        key
        for key, note in shown.items()
        if words & {w for w in content_tokens(note) if w.isascii()} or any(p in note for p in pairs)
    ]
