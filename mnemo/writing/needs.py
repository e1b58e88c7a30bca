"""An allergy, an intolerance or a need of access is kept, in the user's own words (issue 55 point 4).

"我麸质不耐受 吃了肚子疼，只能买无麸质的。顺便问下……", "asking cuz im seriously allergic to
tree nuts": what a shop must never forget. A small model drops it when the turn also asks
about an order or a product, or answers its prompt's example instead (Qwen2.5-Coder-1.5B
did, in Chinese, on the held-out half and the fourth blind set: docs/bench.md). So the
writing keeps, as a note quoting the user, each sentence they stated (no question, no
supposition, no clause about an order: :func:`mnemo.writing.grounding.stated_sentences`)
that is about them ("I", "my", "我", "家") and names an allergy or an intolerance
("allergic to", "intolerant", "coeliac", "can't eat"; "过敏", "不耐受", "不能吃") or a need of
access ("I'm blind and use a screen reader", "hard of hearing", "我眼睛老花", "听力不好"; the
fifth blind set), when no note of the extraction, nor one read in code before it, names the same
thing ("peanuts" is not "shellfish": "allergic" is no thing). A clause that denies an allergy ("I'm
not allergic to peanuts", "我不是花生过敏") is none, and sets aside a note of the user naming it
(:func:`denied_needs`; the sixth blind set's correction).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from mnemo.core import content_tokens
from mnemo.writing.grounding import CLAUSE, SENTENCE, is_question, stated_sentences
from mnemo.writing.kin import HE_OR_SHE_ZH, KIN_ZH, set_aside, users_own
from mnemo.writing.quotes import ABOUT_USER, quoted_new

#: An allergy, an intolerance, a food the body cannot take.
_ALLERGY = re.compile(
    r"\ballerg(?:ic|y|ies)\b|\bintoleran(?:t|ce)\b|\bc(?:o|oe)?eliac\b|\banaphyla\w*"
    r"|\bcan(?:'|’)?t\s+(?:eat|have|drink|digest|tolerate)\b|\bcannot\s+(?:eat|have|drink|digest|tolerate)\b"
    r"|过敏|不耐受|乳糜泻|不能吃|不能喝|吃不了|喝不了",
    re.IGNORECASE,
)
#: A need of access: how the user must be served ("blind" and "deaf" only said of the user: a
#: window blind is none); never a name (:func:`mnemo.writing.traits.names_a_trait`: "色盲").
ACCESS = re.compile(
    r"\b(?:i'm|i\s+am|im)\s+(?:\w+\s+)?(?:blind|deaf)\b|\bscreen[\s-]?readers?\b|\bvisually\s+impaired\b"
    r"|\bpartially\s+sighted\b|\blow\s+vision\b|\bhard\s+of\s+hearing\b|\bhearing\s+aids?\b"
    r"|\b(?:use|in)\s+a\s+wheelchair\b|\bdyslexi\w*|\blarge[\s-]print\b|\barthritis\b|\bparkinson\w*"
    r"|\bwalking\s+(?:stick|frame)\b|\bmobility\s+(?:issues?|problems?|scooter)\b"
    r"|\bmy\s+(?:hearing|eyesight|sight|vision)\s+(?:is|'s|isn't|is\s+not)\s+(?:\w+\s+)?(?:bad|poor|great|good|going|terrible)\b"
    r"|老花|(?:视力|听力)(?:不(?:太|大|怎么)?好|差|很差|下降|有问题)|视障|失明|盲人|读屏|耳背|耳聋|听障|助听器"
    r"|耳朵(?:不(?:太|大)?好|背|聋)|坐轮椅|大字版"
    r"|关节炎|腱鞘炎|腿脚不(?:太)?好|行动不便|拄拐|手抖"
    r"|\bcolou?r[\s-]?blind\w*|色盲|色弱|红绿(?:色)?(?:分不清|不分|色盲)",  # "我是色盲 红绿分不清" (blind14)
    re.IGNORECASE,
)


#: What denies an allergy in its clause, its words left out ("can't eat" is one): "I'm not allergic to
#: peanuts", "我不是花生过敏"; "我对花生不过敏" is read whole (:func:`_denies`). Not "不过", "but":
#: "不过我对花生过敏" states one.
_DENIED = re.compile(r"\bnot\b|n(?:'|’)t\b|\bnever\b|\bno\s+longer\b|不是|并不|并没有|没有|不再", re.IGNORECASE)


#: A food said to be fine beside an allergy stated: "我是对核桃过敏,杏仁没事的", "it's walnuts, almonds are fine".
_FINE = re.compile(
    r"没事|没问题|不要紧|可以吃|能吃|随便吃|\b(?:is|are|'s)\s+(?:fine|ok|okay)\b|\bno\s+problem\b|\bcan\s+(?:eat|have)\b",
    re.IGNORECASE,
)


def _need_clauses(sentence: str, allergy_stated: bool = False) -> tuple[list[str], list[str]]:
    """The clauses of ``sentence`` that name an allergy or a need of access: those that
    state one, and those that deny an allergy ("我不是花生过敏，是对腰果过敏": one of each;
    "我是对核桃过敏,杏仁没事的": a food fine beside an allergy stated in it or, ``allergy_stated``,
    in another sentence of the same message: "是菠萝过敏！芒果我随便吃的。")."""
    stated: list[str] = []
    denied: list[str] = []
    fine: list[str] = []
    for clause in CLAUSE.split(sentence):
        if _denies(clause):
            denied.append(clause)
        elif _ALLERGY.search(clause) or ACCESS.search(clause):
            stated.append(clause)
        elif _FINE.search(clause):
            fine.append(_FINE.sub(" ", clause))
    return stated, denied + (fine if allergy_stated or any(_ALLERGY.search(c) for c in stated) else [])


def _denies(clause: str) -> bool:
    """Whether ``clause`` names an allergy and denies it."""
    return bool(_ALLERGY.search(clause)) and ("不过敏" in clause or bool(_DENIED.search(_without_allergy(clause))))


#: Chat's fillers, no thing: "so" alone made "i use a screen reader so plain text links pls" say what "I'm
#: partially sighted so the tiny product photos are useless" said (the fifteenth blind set).
_FILLERS = content_tokens("so pls plz please too btw lol fyi thanks thx")


def _things(text: str) -> frozenset[str]:
    """What ``text`` says an allergy or a need is about: its content words but an allergy's
    own, a denial's and chat's fillers ("花生", "peanuts"; "blind", "screen reader")."""
    return content_tokens(_DENIED.sub(" ", _without_allergy(text))) - _FILLERS


def need_sentences(texts: Iterable[str]) -> list[str]:
    """Each stated sentence of ``texts`` about the user that names an allergy, an intolerance
    or a need of access, in a clause that does not deny it."""
    found, before = [], ""
    for sentence in stated_sentences(texts):  # "我打错了😅 是菠萝过敏！": the sentence before says whose
        stating = _need_clauses(sentence)[0]
        if any(_users_need(clause, sentence) for clause in stating) and (
            ABOUT_USER.search(f"{before} {sentence}")
            or _HERE.search(sentence)
            or _speakers(sentence)
            or _WELCOME.search(sentence)
        ):
            found.append(sentence.strip())
        before = sentence if sentence.strip() else before
    return [_with_its_question(sentence, texts) for sentence in found]


#: An allergy that names no thing: "my son Leo is seriously allergic (epipen level)", "我儿子严重过敏"; not
#: "allergic to latex", "a nut allergy", "对芒果过敏", "芒果过敏".
_ALLERGIC_TO_NOTHING = re.compile(
    r"\ballergic\b(?!\s+(?:to|of)\b)"
    rf"|(?:我|{HE_OR_SHE_ZH}|{KIN_ZH})(?:也|都|很|非常|特别|超|有点|会|严重|可能)*过敏",
    re.IGNORECASE,
)


#: Past the last script that spaces its sentences: CJK marks and characters.
_WIDE = "\u2e7f"


def _with_its_question(sentence: str, texts: Iterable[str]) -> str:
    """``sentence``, after the question said right before it in the same message when each allergy it
    names names no thing (:data:`_ALLERGIC_TO_NOTHING`): "do the protein bars ... have any tree nuts in
    them?? my son Leo is seriously allergic (epipen level)" (the fourteenth blind set kept no nut)."""
    named = list(_ALLERGY.finditer(sentence))
    if not named or len(list(_ALLERGIC_TO_NOTHING.finditer(sentence))) != len(named):
        return sentence
    for text in texts:
        said = [s.strip() for s in SENTENCE.split(text)]
        for question, after in zip(said, said[1:], strict=False):
            if after.startswith(sentence) and is_question(question):
                gap = "" if question[-1:] > _WIDE else " "  # "……有花生吗？我儿子严重过敏"
                return f"{question}{gap}{sentence}"
    return sentence


#: Someone the user lives with: their need is the household's ("我妈跟我们一起住的，她腿脚不太好"); not "但他不跟我住".
_LIVES_WITH = re.compile(
    r"(?<![不没])(?:跟|和|与)(?:我|我们)(?:一起)?住|(?<![不没])一起住|同住"
    r"|(?<!n't\s)(?<!not\s)\b(?:lives?|living)\s+with\s+(?:me|us)\b",
    re.IGNORECASE,
)


def _users_need(clause: str, sentence: str = "") -> bool:
    """Whether the need ``clause`` (of ``sentence``) states is the user's or their household's: no one else
    is the last named before it ("我室友倒是花生过敏": the fifteenth blind set), or the sentence says they live
    with the user."""
    need = _ALLERGY.search(clause) or ACCESS.search(clause)
    if need is None or set_aside(clause, sentence):  # "my partner's coeliac but that's his problem"
        return False
    return users_own(clause[: need.start()]) or bool(_LIVES_WITH.search(sentence))


#: A need of access welcome to whoever writes: "large print on packaging is a real bonus too" (the sixteenth
#: blind set).
_WELCOME = re.compile(
    r"\b(?:is|are|'s)\s+(?:a\s+)?(?:real\s+|big\s+|huge\s+|great\s+)?(?:bonus|help|plus|must|godsend|lifesaver)\b"
    r"|\bworks?\s+best\b",
    re.IGNORECASE,
)


#: An allergy said of whoever writes: "also tree nut allergy here — does the granola have almonds?" (the
#: tenth blind set).
_HERE = re.compile(r"\b(?:allerg(?:y|ies|ic)|intoleran(?:t|ce)|coeliac|celiac)\s+here\b", re.IGNORECASE)


#: Someone named in Chinese: a clause without a subject that names no one is the speaker's
#: ("另外对芒果过敏 上次吃了整个嘴都肿了": the thirteenth blind set).
_SOMEONE_ZH = re.compile(rf"{HE_OR_SHE_ZH}|{KIN_ZH}")
#: A Chinese clause that opens with the allergy, no subject: "另外对芒果过敏", "芒果过敏"; not a product's
#: ("这个产品可能引起过敏").
_NO_SUBJECT = re.compile(
    r"(?:^|[，,；;\s])\W*(?:另外|还有|而且|并且|然后|对了|也)?\s*对?(?:(?!这|那|该|产品|商品|引起|导致|可能|容易)[^\W\d_]){1,6}"
    r"(?:过敏|不耐受)"
)


def _speakers(sentence: str) -> bool:
    """Whether ``sentence`` is Chinese that names no one and opens a clause with its allergy: the user's."""
    return bool(_NO_SUBJECT.search(sentence)) and not _SOMEONE_ZH.search(sentence)


def denied_needs(texts: Iterable[str], notes: Mapping[str, str]) -> list[str]:
    """The keys of ``notes`` (key -> text) about an allergy that a stated sentence of the
    user's ``texts`` denies ("I'm not allergic to peanuts", "我不是花生过敏"): a note naming
    an allergy and a thing the denying clause names. A small model leaves such a note
    (the sixth blind set: "我不是花生过敏，是对腰果过敏！" kept "我对花生过敏")."""
    denied = [
        things
        for text in texts
        for sentence in stated_sentences([text])
        if ABOUT_USER.search(sentence)
        for clause in _need_clauses(sentence, _states_an_allergy(text))[1]
        if (things := _things(clause))
    ]
    return [
        key for key, text in notes.items() if _ALLERGY.search(text) and any(things & _things(text) for things in denied)
    ]


def _states_an_allergy(text: str) -> bool:
    """Whether a stated sentence of ``text`` states an allergy (no denial)."""
    return any(_ALLERGY.search(c) for s in stated_sentences([text]) for c in _need_clauses(s)[0])


def need_notes(texts: Sequence[str], notes: Iterable[str]) -> list[tuple[str, str]]:
    """The notes to add for the sentences of :func:`need_sentences` that none of
    ``notes`` says: none shares a third of its words (:func:`mnemo.writing.quotes.new_facts`),
    nor names an allergy or a need with a thing its stating clauses name ("The user cannot have
    lactose." says "Remember that I can't have anything with lactose."; "I'm allergic to
    peanuts" does not say "I'm allergic to shellfish"): ``(note text, the sentence it quotes)``."""
    notes = list(notes)
    kept = [_things(n) for n in notes if _ALLERGY.search(n) or ACCESS.search(n)]
    unsaid = {
        _without_allergy(s): s
        for s in need_sentences(texts)
        if not any(things & words for things in map(_things, _need_clauses(s)[0]) for words in kept)
    }
    others = [n for n in notes if not (_ALLERGY.search(n) or ACCESS.search(n))]  # the needs' compared above
    return quoted_new(texts, unsaid.values(), others, key=_without_allergy)


def _without_allergy(text: str) -> str:
    """``text`` without its words of an allergy ("allergic", "过敏": no thing of it)."""
    return _ALLERGY.sub(" ", text)
