"""Who the user names beside themselves, in one place: :mod:`mnemo.writing.fields` reads whose name or
town a value is (anyone named is someone else), :mod:`mnemo.writing.traits` whose size or diet a
clause states (the household's is the user's to keep: "my husband is type 2 diabetic")."""

import re
from collections.abc import Iterable

from mnemo.core import content_tokens
from mnemo.writing.grounding import CLAUSE, SENTENCE, stated

#: Those who share the user's household.
HOUSEHOLD_EN = r"wife|husband|partner|son|daughter|kids?|child|children|bab(?:y|ies)|twins?"
HOUSEHOLD_ZH = r"老婆|老公|妻子|丈夫|儿子|女儿|孩子|宝宝|娃|小孩|双胞胎"
#: Everyone else the user may name.
OTHERS_EN = (
    r"mum|mom|mother|dad|father|parents?|sister|brother|grand\w*|gran|nan|nana|granny|aunt|auntie|uncle|cousin"
    r"|niece|nephew|friend|mate|boss|colleague|neighbou?r|girlfriend|boyfriend|fianc\w*|in-laws?"
    r"|room-?mate|flat-?mate|house-?mate|landlord|landlady|lodger"
)
OTHERS_ZH = (
    r"男朋友|女朋友|妈|爸|母亲|父亲|姐|哥|弟|妹|爷爷|奶奶|外公|外婆|姥姥|姥爷|朋友|同事|同学|老板|领导|邻居|闺蜜|对象"
    r"|婆婆|公公|岳母|岳父|舅|姨|叔|姑|男孩|女孩|室友|舍友|房东|表妹|表姐|表哥|表弟|堂妹|堂姐|堂哥|堂弟"
)
#: Anyone the user names by relation.
KIN_EN = f"{OTHERS_EN}|{HOUSEHOLD_EN}"
KIN_ZH = f"{OTHERS_ZH}|{HOUSEHOLD_ZH}"
#: He or she, in Han: not "其他" (other) nor "吉他" (a guitar). "我是不吃牛肉 其他肉都吃 ... 名字打错了 是马丽" named
#: no one else (the fourteenth blind set).
HE_OR_SHE_ZH = r"(?<![其吉])[他她]"
#: Who a clause is about, the last named before a size, a diet or an allergy: the user or their household ("my
#: husband is type 2 diabetic": the tenth blind set), or someone else ("my sister Chloe — she's vegan", "my
#: colleague Dan is vegan", "给我老公买，他穿XL": he is named last; "my roommate's vegan", "我室友倒是花生过敏": the
#: fifteenth).
_WHO = re.compile(
    rf"\b(?P<self>i|i'm|im|i've|ive|me|my|we|we're|our|us|{HOUSEHOLD_EN})\b"
    rf"|\b(?:she|he|they|she's|he's|they're|his|her|their|him|them|{OTHERS_EN})\b"
    rf"|(?P<selfzh>我|{HOUSEHOLD_ZH})(?!{OTHERS_ZH})|{HE_OR_SHE_ZH}|{OTHERS_ZH}",
    re.IGNORECASE,
)


def _is_user(named: re.Match[str]) -> bool:
    """Whether a match of :data:`_WHO` names the user or their household."""
    return bool(named.group("self") or named.group("selfzh"))


def users_own(before: str) -> bool:
    """Whether what follows ``before`` (a clause up to a trait) is the user's: the last one ``before`` names
    is the user or their household, or no one is named."""
    who = list(_WHO.finditer(before))
    return not who or _is_user(who[-1])


def names_someone(text: str) -> bool:
    """Whether ``text`` (a note) names someone beside the user: "用户说他学日语", "The user's dad loves fishing"."""
    return not all(map(_is_user, _WHO.finditer(text)))


def _someone_elses(clause: str) -> bool:
    """Whether ``clause`` is about someone else: it names someone and never the user ("我朋友说你们有日语客服",
    "my roommate's vegan"; not "I'm staying with my sister", "我和我老公都不吃辣"); "my" before a relation
    names the relation."""
    named = [m for m in _WHO.finditer(clause) if not _MY_RELATION.match(clause, m.start())]
    return bool(named) and not any(map(_is_user, named))


#: "my sister", "our landlord": whose, not who.
_MY_RELATION = re.compile(rf"(?:my|our)\s+(?:{OTHERS_EN})\b", re.IGNORECASE)


def others_words(texts: Iterable[str]) -> frozenset[str]:
    """The content words the user's ``texts`` state only in clauses about someone else (:func:`_someone_elses`):
    a note that names no one else and holds one says of the user what was said of another ("用户希望日语客服"
    of "我朋友说你们有日语客服 他在学日语 我就算了": the fifteenth blind set)."""
    theirs: set[str] = set()
    own: set[str] = set()
    for text in texts:
        for sentence in SENTENCE.split(stated(text)):
            for clause in CLAUSE.split(sentence):
                (theirs if _someone_elses(clause) else own).update(content_tokens(clause))
    return frozenset(theirs - own)


#: The user setting a household member's fact aside as none of theirs: "my partner's coeliac but that's his
#: problem haha, he does his own baking", "my husband ... don't call him, he didn't order anything", "我老公乳糖不耐，
#: 不过他的东西他自己买，不用管他" (the sixteenth blind set).
_SET_ASIDE = re.compile(
    r"\b(?:that'?s|it'?s)\s+(?:his|her|their)\s+(?:problem|thing|business|issue)\b"
    r"|\b(?:he|she|they)\s+(?:does|do|buys?|orders?|gets?|sorts?)\s+(?:his|her|their)\s+own\b"
    r"|\b(?:don'?t|do\s+not|never)\s+(?:call|ring|phone|contact|text|email)\s+(?:him|her|them)\b"
    r"|\b(?:he|she|they)\s+(?:didn'?t|did\s+not|never|doesn'?t|does\s+not)\s+(?:order|shop|buy)"
    rf"|不用管{HE_OR_SHE_ZH}|别管{HE_OR_SHE_ZH}|{HE_OR_SHE_ZH}的东西{HE_OR_SHE_ZH}?自己买|{HE_OR_SHE_ZH}自己(?:买|下单|搞定)",
    re.IGNORECASE,
)
#: The user themself, not their "my"/"our" (我 before a relation is whose: "我老公").
_THEMSELF = re.compile(rf"\b(?:i|i'm|im|i've|ive|i'd|me|we|we're|us)\b|我(?!{KIN_ZH})", re.IGNORECASE)
_HOUSEHOLD = re.compile(rf"\b(?:{HOUSEHOLD_EN})\b|{HOUSEHOLD_ZH}", re.IGNORECASE)


def set_aside(clause: str, sentence: str) -> bool:
    """Whether ``clause`` is about a household member (naming one, not the user themself) whom ``sentence``
    sets aside as none of the user's business (:data:`_SET_ASIDE`): their fact is no note of the user's."""
    return bool(_SET_ASIDE.search(sentence) and _HOUSEHOLD.search(clause) and not _THEMSELF.search(clause))


#: A clause whose subject is someone else: "my cousin in Philly swears by porch cams", "My neighbor gets hers left
#: with the doorman" (the sixteenth blind set), "我邻居喜欢让快递员送上楼"; not "leave it with my neighbour".
_OPENS_ON_OTHERS = re.compile(
    rf"^\W*(?:(?:my|our)\s+(?:{OTHERS_EN})\b|(?:he|she|they)\b|(?:我|我们)?(?:{OTHERS_ZH})|{HE_OR_SHE_ZH})",
    re.IGNORECASE,
)


def opens_on_someone_else(clause: str) -> bool:
    """Whether ``clause`` opens on someone else as its subject (:data:`_OPENS_ON_OTHERS`)."""
    return bool(_OPENS_ON_OTHERS.search(clause))
