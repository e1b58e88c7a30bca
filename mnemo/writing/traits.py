"""What a shop serves a user by, kept in their own words (issue 55 point 4).

"need a UK 9.5 — thats my size", "I'm vegan (8 yrs now 🌱)", "we've got two cats who shred
everything", "also I'm on the 4th floor with no lift", "我是糖尿病，二型的", "家里养了只金毛",
"我爸妈跟我们一起住", "另外我住6楼没电梯": Qwen2.5-Coder-1.5B kept none of them when the turn
also asked about a product or an order (the eighth blind set: docs/bench.md). So the writing
keeps, as a note quoting the user, each sentence they stated (no question, no supposition, no
clause about an order: :func:`mnemo.writing.grounding.stated_sentences`) with a clause that is
the user's ("I", "my", "we", "我", "家") and names

- a size: "UK 9.5", "my size", "a 32 waist", "6'4", "L码", "42码", "175/70kg";
- a diet or a condition that rules what they eat: "vegan", "halal", "diabetic", "吃素", "痛风";
- who they live with: a pet ("two cats", "金毛"), children ("2yo twins", "宝宝"), parents living
  with them ("爸妈跟我们一起住");
- how their home is reached or a parcel left: "4th floor", "no lift", "leave it with my
  neighbour", "6楼", "没电梯", "放门口鞋柜", "送货前打电话";
- when they are in and what they do: "I work night shifts", "only home at weekends", "I'm a
  nurse", "I'm training for a marathon", "白天上班不在家", "我是老师", "平时喜欢露营" (not one
  errand's: "today", "明天"),

when no note of the extraction, nor one read in code before it, says it already (shares a third
of its content words). "Do you have it in a UK 9.5?" asks; "is the rug ok with pets?" too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from mnemo.core import HAN, content_tokens
from mnemo.writing.grounding import CLAUSE, SENTENCE, is_question, stated_sentences
from mnemo.writing.kin import HE_OR_SHE_ZH, KIN_ZH, opens_on_someone_else, set_aside, users_own
from mnemo.writing.needs import ACCESS
from mnemo.writing.quotes import ABOUT_USER, ASKED, new_facts, quoted, quoting, requested_sentences

#: A size or a build: a shoe or clothing size, a waist, a height, a weight.
_SIZE = (
    r"\b(?:uk|us|eu|size)\s*\d{1,2}(?:[.,]5|½)?\b|\b\d{1,2}(?:[.,]5|½)?\s*(?:uk|us|eu)\b"
    r"|\bmy\s+(?:shoe\s+|dress\s+|ring\s+)?size\b|\bring\s+size\b|(?:戒圈|手寸|指圈)\s*(?:是|为)?\s*\d{1,2}"
    r"|\b\d{2}\s*(?:inch\s+|in\s+|\"\s*)?(?:waist|inside\s+leg|inseam|leg|chest)\b"
    r"|\b(?:waist|inseam|inside\s+leg|chest)\s+(?:is\s+|of\s+)?\d{2}\b"
    r"|\b(?:xxs|xs|xxl|xxxl|xl)\b|\bsize\s+(?:xs|s|m|l|small|medium|large)\b|\b(?:petite|plus[- ]size)\b"
    r"|\b[4-7]\s?(?:'|’|ft|foot)\s?\d{1,2}\b|\b[4-7]\s?(?:ft|foot|feet)\s+tall\b|\b1[4-9]\d\s?cm\s+tall\b"
    r"|\bi(?:'|’)?m\s+(?:very\s+|quite\s+|really\s+)?(?:tall|petite)\b"
    r"|\d{2}(?:\.5)?\s*码|(?<![A-Za-z])[SMLX]{1,4}\s*[码號号]|(?:穿|尺码|鞋码|码数)\s*(?:是|为|：|:)?\s*(?:[SMLX]{1,4}|\d{2,3})"
    r"|\bi(?:'|’)?m\s+(?:\d{2}|in\s+my\s+(?:twenties|thirties|forties|fifties|sixties|seventies|eighties))\b"
    r"(?!\s*(?:min|mins|minutes|hours?|hrs?|%|km|miles|mi|cm|kg|lbs?|pounds|quid|euros?|dollars)\b)"
    r"|我(?:都|已经|今年)?(?:[一二三四五六七八九]?十[一二三四五六七八九]?|\d{2})多?岁"
    r"|我(?:都|已经)(?:[一二三四五六七八九]十|\d0)多了|年纪大|上了年纪|退休"
    r"|身高|体重|腰围|胸围|(?<!\d)1\d{2}\s*/\s*\d{2,3}(?!\d)|我\s*1\d{2}\s*(?:cm|厘米)|我\s*\d{2,3}\s*(?:kg|公斤|斤)|大码|加大码"
)
#: A diet, or a condition that rules what the user eats.
_DIET = (
    r"\b(?:vegan|vegetarian|veggie|pescatarian|pescetarian|halal|kosher|keto|paleo|diabetic|diabetes|gout"
    r"|low[- ](?:sodium|salt|sugar|carb|fat)|plant[- ]based|pregnant|breastfeeding)\b"
    r"|\b(?:don(?:'|’)?t|do\s+not|never|can(?:'|’)?t|cannot)\s+eat\s+(?:pork|beef|meat|fish|eggs?|dairy|sugar)\b"
    r"|吃素|素食|纯素|全素|清真|不吃(?:猪肉|牛肉|羊肉|肉|荤|海鲜|鸡蛋|蛋|辣)|糖尿病|控糖|高血压|高血脂|痛风|尿酸"
    r"|怀孕|孕妇|孕期|哺乳|减脂|生酮|低脂|低盐|低糖|忌口|蛋奶素|奶素|蛋素|\blacto[- ]ovo\b"
)
#: A pet, in Chinese: never part of the user's name ("橘猫": the thirteenth blind set).
_PETS_ZH = r"猫|狗|犬|金毛|泰迪|柯基|哈士奇|柴犬|拉布拉多|边牧|仓鼠|鹦鹉|兔子"
#: Who lives with the user: a pet, children, parents living with them.
_HOUSEHOLD = (
    r"\b(?:cats?|dogs?|kittens?|pupp(?:y|ies)|pets?|rabbits?|bunn(?:y|ies)|hamsters?|parrots?|guinea\s+pigs?"
    r"|tortoises?|labradors?|spaniels?|terriers?|retrievers?)\b"
    r"|\b(?:twins|triplets|toddlers?|bab(?:y|ies)|newborn|kids|children|grandkids|grandchildren)\b"
    r"|\b\d+\s?(?:yo|y/o|year[- ]olds?|month[- ]olds?)\b"
    r"|\b(?:live|lives|living|moved\s+in|staying)\s+with\s+(?:me|us)\b|\b(?:i|we)\s+live\s+with\s+my\b"
    r"|\bmy\s+(?:son|daughter|husband|wife|partner|kids?|boys|girls)\b|\bfamily\s+of\s+(?:\d|two|three|four|five|six)\b"
    r"|\bthere\s+are\s+(?:\d|two|three|four|five|six)\s+of\s+us\b"
    r"|[一二三四五六七八九两\d]口人|家(?:里)?(?:有)?[一二三四五六七八九两\d]个人|我(?:老公|老婆|儿子|女儿|先生|太太)"
    rf"|养了|养着|养的|{_PETS_ZH}|宠物|主子|孩子|宝宝|小孩|娃|双胞胎"
    r"|老人|爸妈|父母|公婆|岳父|岳母|一起住|同住"
)
#: How the user's home is reached or a parcel left there.
_DELIVERY = (
    r"\b(?:\d{1,2}(?:st|nd|rd|th)|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|top)[\s-]+floor\b"
    r"|\bno\s+(?:lift|elevator)\b|\bwalk[- ]?up\b|\bflights?\s+of\s+stairs\b"
    r"|\bleave\s+(?:my\s+|our\s+|the\s+)?(?:it|them|parcels?|packages?|deliveries|everything|stuff)\s+"
    r"(?:with|at|in|behind|on|by|under|next\s+to|outside)\b"
    r"|\b(?:back|side)\s+(?:door|gate)\b|\bporch\b|\bsafe\s+place\b|\bparcel\s+(?:locker|box)\b"
    # "A locker is way better for me" (the sixteenth blind set).
    r"|\blockers?\s+(?:is|are|works?)\s+(?:way\s+|much\s+|so\s+|a\s+lot\s+)?(?:better|best|great|ideal|easier)\b"
    r"|\b(?:with|to|at)\s+(?:my|the|a)\s+neighbou?rs?\b|\bnext\s+door\b"
    r"|\bconcierge\b|\bring\s+(?:the\s+)?(?:door)?bell\b|\bcall\s+(?:me\s+)?(?:first|before|ahead)\b"
    r"|\d{1,2}\s*[楼层]|[一二三四五六七八九十]{1,3}[楼层]|没电梯|无电梯|没有电梯|电梯坏|爬楼"
    r"|放(?:在)?(?:门口|鞋柜|快递柜|丰巢|驿站|邻居|前台|物业|门卫|保安|传达室)|快递柜|丰巢|门卫|(?:交给|给)邻居"
    r"|(?:送货|送之前|送前|上门前|派送前|到了).{0,4}(?:打电话|打个电话|联系|说一声)|别敲门|别按门铃"
    r"|\b(?:plastic[\s-]free|no[\s-]plastic|recyclable|minimal|eco[\s-]?friendly)\s+packag\w*|(?:不要|别用|少用|不用)塑料|环保包装|简易包装"
)
#: When the user is in or can be reached, and their work: "I work night shifts", "only home at weekends",
#: "I'm a nurse", "白天上班不在家", "我是老师".
_SCHEDULE = (
    r"\b(?:work|working)\s+(?:nights|night\s+shifts?|lates|earlies|shifts|from\s+home|weekends|nine\s+to\s+five)\b"
    r"|\bnight\s+shifts?\b|\bnights\b|\b(?:only|usually|never)\s+(?:home|in|around|available|free)\b"
    r"|\b(?:not|never)\s+(?:home|in|around)\s+(?:during|in)\s+the\s+(?:day|week|daytime)\b|\bweekends?\s+only\b"
    r"|\bonly\s+(?:on\s+)?weekends\b|\b(?:before|after)\s+(?:like\s+|about\s+|around\s+)?\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)"
    r"|\bi\s+work\s+as\b|\bi(?:'|’)?m\s+an?\s+(?:\w+\s+)?(?:nurse|teacher|doctor|driver|chef|student|engineer"
    r"|developer|paramedic|firefighter|pilot|farmer|builder|electrician|plumber|carer|midwife|cleaner|lawyer"
    r"|accountant|designer|police\s+officer|courier|shift\s+worker)\b"
    r"|\b(?:before|after|until|til|till)\s+(?:noon|midday|lunch(?:time)?)\b|\bweek(?:end|day)s?\b|\bsaturdays?\b|\bsundays?\b"
    r"|\bi\s+(?:go|do)\s+\w+ing\b|\bi(?:'|’)?m\s+(?:really\s+|big\s+)?into\s+\w+|\bmy\s+hobby\b"
    r"|\btraining\s+for\s+(?:a|an|the|my)\s+\w+|\b(?:half[- ])?marathons?\b|\btriathlons?\b"
    r"|\bi\s+(?:love|enjoy)\s+\w+ing\b|\bi\s+run\s+(?:a|an|my\s+own)\s+\w+|\bleft[- ]handed\b|\blefty\b"
    r"|\b(?:i(?:'ve|’ve|\s+have)\s+got|i\s+(?:own|have))\s+(?:a|an|my\s+own)\s+(?:\w+\s+){0,2}"
    r"(?:bakery|shop|caf[eé]|restaurant|business|salon|store|farm|studio|company)\b|左撇子|左手"
    r"|夜班|倒班|白天(?:要)?上班|白天不在|白天没人|周末|周六|周日|星期[六日天]|礼拜[六天日]|晚上才|工作日|上班时间"
    r"|中午|午休|爱好|我(?:平时|经常|周末|每周)?(?:很)?(?:喜欢|爱)(?:去|玩|做|打|跑|爬|骑|游|看|听|弹|画|烤|钓)"
    r"|(?:平时|业余|没事|闲时|空闲时|有空)(?:很|最|也|都|比较)?(?:喜欢|爱)|马拉松|半马|全马|铁人三项"
    r"|我(?:自己)?(?:在家)?开了(?:个|一个|一家)"
    r"|我是(?:一名|一个|个)?\S{0,4}(?:老师|教师|护士|医生|司机|厨师|学生|程序员|工程师|设计师|律师|会计|警察|快递员|外卖员)"
    r"|(?:跑|送)(?:外卖|快递|滴滴)|开(?:滴滴|网约车|出租)|骑手"
    # "我现在自由职业画插画" (the sixteenth blind set).
    r"|自由职业|插画师|画插画|\bfreelanc(?:e|er|ing)\b|\bself[- ]employed\b"
)
#: A clause about one errand, no standing fact: "I'll be home after 5pm today", "明天白天不在".
_ONE_OFF = re.compile(
    r"\b(?:today|tonight|tomorrow|(?:this|next)\s+(?:time|week|weekend|morning|afternoon|evening))\b"
    r"|今天|明天|后天|这次|这周|今晚|下周|下个?星期|下个?礼拜",
    re.IGNORECASE,
)
_OWN = re.compile("|".join((_SIZE, _DIET)), re.IGNORECASE)
_HOUSEHOLD_OR_DELIVERY = re.compile("|".join((_HOUSEHOLD, _DELIVERY, _SCHEDULE)), re.IGNORECASE)
_TRAIT = re.compile("|".join((_SIZE, _DIET, _HOUSEHOLD, _DELIVERY, _SCHEDULE)), re.IGNORECASE)
#: What the user is, never their name: no pet's or child's word ("Cat", "Kit" are names).
_WHAT = re.compile("|".join((_SIZE, _DIET, _SCHEDULE)), re.IGNORECASE)
#: A clause that takes a trait back: "I'm not vegan any more", "刚才说的不吃辣作废" (:mod:`mnemo.writing.retract`
#: reads what it removes).
_TAKEN_BACK = re.compile(
    r"\b(?:no\s+longer|any\s*more|scratch\s+that|ignore\s+(?:that|what)|was\s+wrong|not\s+true)\b"
    r"|作废|不算|说错|搞错|不对|不再",
    re.IGNORECASE,
)


#: Asked by the user, though not about them (:data:`mnemo.writing.quotes.ASKED`), or told: "pls tell them to
#: ring the bell twice", "dont call before noon", "just leave things in the back porch", "别敲门", "can future
#: deliveries go to the parcel locker ...?" (the fourteenth blind set).
_ASKED = re.compile(
    rf"{ASKED.pattern}|能不能|可不可以|能否|\b(?:can|could|would)\s+(?:the\s+)?(?:couriers?|drivers?)\b"
    r"|\b(?:can|could)\s+(?:all\s+)?(?:my\s+|the\s+)?future\s+(?:deliver(?:y|ies)|parcels?|packages?|orders?)\b"
    r"|\b(?:don(?:'|’)?t|dont|never)\s+(?:\w+\s+)?(?:call|ring|text|deliver|come|knock|leave)\b"
    r"|\b(?:just\s+)?leave\s+(?:it|them|things|stuff|parcels?|packages?|everything)\b|就(?:放|交给)"
    r"|\bif\s+(?:at\s+all\s+)?poss(?:ible)?\b",  # "also plastic-free packaging if at all poss" (blind15)
    re.IGNORECASE,
)


#: A count with no noun: "we have two and one of them chews everything", "我家有两只".
_HOW_MANY = re.compile(
    r"^\W*(?:we|i)(?:(?:'|’)ve|\s+have|\s+own)?\s+(?:got\s+)?(?:one|two|three|four|five|\d{1,2}|a\s+couple|a\s+few)"
    r"(?=\s*$|\s*[,.!;:]|\s+(?:and|but|so|lol|haha|of\s+them|at\s+home|here|now)\b)"
    rf"|^\W*我(?:们)?(?:家)?(?:有|养了|养着)(?:一|两|三|四|五|\d{{1,2}})[只条个](?!{HAN.pattern}*[吗呢])",
    re.IGNORECASE,
)
_WHO_LIVES = re.compile(_HOUSEHOLD, re.IGNORECASE)


def trait_sentences(texts: Iterable[str]) -> list[str]:
    """Each stated sentence of ``texts``, or standing request asked as a question, or count said after
    a question (:func:`_counted`), with a clause of the user's that names a trait (:data:`_TRAIT`) and
    takes none back; a size or a diet only when the user or their household is the last one named
    before it (:func:`mnemo.writing.kin.users_own`)."""
    texts = list(texts)
    asked = requested_sentences(texts)  # "快递能不能只周六周日送啊？" (the tenth blind set)
    stated = [s.strip() for s in stated_sentences(texts) if not any(s.strip() in r for r in asked)]
    return [sentence for sentence in [*stated, *asked, *_counted(texts)] if _names_a_trait(sentence)]


def _counted(texts: Iterable[str]) -> list[str]:
    """Each count with no noun (:data:`_HOW_MANY`) said right after a question that names who may live
    with the user, that noun put in brackets after the count: "is the lavender diffuser safe around cats?
    we have two and ..." is "we have two [cats] and ..." (the tenth blind set), the product left out."""
    found = []
    for text in texts:
        sentences = SENTENCE.split(text)
        for question, sentence in zip(sentences, sentences[1:], strict=False):
            if is_question(question) and (count := _HOW_MANY.search(sentence)):
                if who := [m.group(0).strip() for m in _WHO_LIVES.finditer(question)]:
                    said = sentence[: count.end()].strip()
                    gap = "" if HAN.search(said[-1:]) else " "
                    found.append(f"{said}{gap}[{who[-1]}]{sentence[count.end() :]}".strip())
    return found


def _names_a_trait(sentence: str) -> bool:
    """Whether a clause of ``sentence`` names a trait of the user's: it, the one before it or the one
    after it says it is theirs ("I've got two dogs, a labrador and a spaniel", "weekdays after 6pm is
    best, I'm at the workshop all day": the thirteenth blind set)."""
    clauses = CLAUSE.split(sentence)
    return any(
        _users(clause, f"{before} {clause}", after) and not set_aside(f"{before} {clause}", sentence)
        for before, clause, after in zip(["", *clauses], clauses, [*clauses[1:], ""], strict=False)
    )


def _users(clause: str, context: str, after: str = "") -> bool:
    """Whether ``clause`` (``context``: it with the clause before; ``after``: the clause after, which
    may say whose it is, never ask) names a trait of the user's."""
    trait = _TRAIT.search(clause)
    if trait is None or _TAKEN_BACK.search(clause) or _ONE_OFF.search(clause):
        return False
    if not (ABOUT_USER.search(f"{context} {after}") or _ASKED.search(context) or _no_ones_delivery(clause, context)):
        return False
    own = _OWN.search(clause)
    if own is None or _HOUSEHOLD_OR_DELIVERY.search(clause):
        # "my cousin in Philly swears by porch cams" is theirs; "my mum lives with us" the household's.
        return not opens_on_someone_else(clause) or bool(_WHO_LIVES.search(clause))
    return users_own(clause[: own.start()])


#: How a parcel is left, in Chinese with no subject: "新小区快递员进不来 都是放门口丰巢" (the fifteenth blind set).
_DELIVERY_ZH = re.compile(_DELIVERY, re.IGNORECASE)
#: Someone, or a product, a Chinese clause may be about instead of the user.
_NOT_THE_USERS = re.compile(rf"{HE_OR_SHE_ZH}|{KIN_ZH}|这款|那款|这个|那个|产品|商品|宝贝")


#: What makes it stand, not one parcel's ("快递柜里也没有 麻烦查一下").
_ALWAYS_ZH = re.compile(r"都|一般|平时|每次|一直|只能|以后|默认|总是")


def _no_ones_delivery(clause: str, context: str) -> bool:
    """Whether ``clause`` is Chinese that says how a parcel is always left and names no one else nor a product
    (``context``: it with the clause before): the user's, as a Chinese clause without a subject is."""
    standing = HAN.search(clause) and _DELIVERY_ZH.search(clause) and _ALWAYS_ZH.search(clause)
    return bool(standing) and not _NOT_THE_USERS.search(context)


def names_a_trait(value: str) -> bool:
    """Whether ``value`` names what the user is or has, not who: "左撇子", "素食者", "Vegan", "程序员",
    "a nurse", "橘猫", "色盲" (a name the extractor took from "我是左撇子", "I'm vegan btw", "我家有只橘猫")."""
    value = value.strip()
    if re.search(_PETS_ZH, value):  # "橘猫": a pet in Han; not "Cat", a name in Latin
        return True
    return any(_WHAT.search(said) or ACCESS.search(said) for said in (value, f"我是{value}", f"I'm a {value}"))


def trait_notes(texts: Sequence[str], notes: Iterable[str]) -> list[tuple[str, str]]:
    """The notes to add for the sentences of :func:`trait_sentences` that none of ``notes``
    says: some note names each trait the sentence names (:func:`_traits`: "The user has one cat."
    says "one of my cats died"). Not a third of its words shared, as the other readers ask: "The user
    wants to use regular leg trousers that reach their ankles." kept out "im 6'3 so regular leg
    trousers never reach my ankles" (the tenth blind set). A sentence whose traits are only generic words
    ("thats my size") is new when no note shares a third of its words (:func:`mnemo.writing.quotes.new_facts`).
    ``(note text, the sentence it quotes)``."""
    notes = list(notes)
    named = frozenset().union(*map(_traits, notes))
    form = quoting(texts)
    return [
        (quoted(form, s), s)
        for s in trait_sentences(texts)
        if ((traits := _traits(s)) and not traits <= named) or (not traits and new_facts([s], notes))
    ]


#: Words of a trait that name no one trait ("size", "floor", "UK").
_GENERIC = frozenset({"size", "floor", "uk", "us", "eu", "my", "no"})


def _traits(text: str) -> frozenset[str]:
    """What ``text`` names of traits (:data:`_TRAIT`): the words of each, singular ("cat"), but
    generic ones; a trait in Han whole ("金毛", "6楼": its characters name others too)."""
    names: set[str] = set()
    for m in _TRAIT.finditer(text):
        span = m.group(0).strip()
        if span.isascii():
            names |= {w.removesuffix("s") for w in content_tokens(span)} - _GENERIC
        else:
            names.add(span)
    return frozenset(names)
