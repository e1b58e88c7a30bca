"""Who the user names beside themselves, in one place: :mod:`mnemo.writing.fields` reads whose name or
town a value is (anyone named is someone else), :mod:`mnemo.writing.traits` whose size or diet a
clause states (the household's is the user's to keep: "my husband is type 2 diabetic")."""

#: Those who share the user's household.
HOUSEHOLD_EN = r"wife|husband|partner|son|daughter|kids?|child|children|bab(?:y|ies)|twins?"
HOUSEHOLD_ZH = r"老婆|老公|妻子|丈夫|儿子|女儿|孩子|宝宝|娃|小孩|双胞胎"
#: Everyone else the user may name.
OTHERS_EN = (
    r"mum|mom|mother|dad|father|parents?|sister|brother|grand\w*|gran|nan|nana|granny|aunt|auntie|uncle|cousin"
    r"|niece|nephew|friend|mate|boss|colleague|neighbou?r|girlfriend|boyfriend|fianc\w*|in-laws?"
)
OTHERS_ZH = (
    r"男朋友|女朋友|妈|爸|母亲|父亲|姐|哥|弟|妹|爷爷|奶奶|外公|外婆|姥姥|姥爷|朋友|同事|同学|老板|领导|邻居|闺蜜|对象"
    r"|婆婆|公公|岳母|岳父|舅|姨|叔|姑|男孩|女孩"
)
#: Anyone the user names by relation.
KIN_EN = f"{OTHERS_EN}|{HOUSEHOLD_EN}"
KIN_ZH = f"{OTHERS_ZH}|{HOUSEHOLD_ZH}"
#: He or she, in Han: not "其他" (other) nor "吉他" (a guitar). "我是不吃牛肉 其他肉都吃 ... 名字打错了 是马丽" named
#: no one else (the fourteenth blind set).
HE_OR_SHE_ZH = r"(?<![其吉])[他她]"
