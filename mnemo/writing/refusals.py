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
    r"|订单|退款|付款|支付|发票|运单|快递单号",
    re.IGNORECASE,
)


#: Where the user's orders go, a standing wish and no record ("send my orders to 14 Harbour Lane", issue 55).
_DESTINATION = re.compile(
    r"\b(?:send|ship|deliver|post|mail|forward)\w*\s+(?:all\s+)?my\s+orders?\s+(?:to|at)\b", re.IGNORECASE
)


def business_record_term(text: str) -> str | None:
    """The phrase that makes ``text`` a business record (an order, a refund,
    a payment, an invoice), or ``None``."""
    m = _BUSINESS_RECORD.search(_DESTINATION.sub(" ", text))
    return m.group(0) if m else None


def refuse_business_record(text: str) -> None:
    """Raise :class:`InvalidInputError` when ``text`` is a business record:
    the order system, not memory, is authoritative for those."""
    if (term := business_record_term(text)) is not None:
        raise InvalidInputError(
            f"not remembered: {term!r} is about orders, refunds or payments, which the order system "
            "keeps (a remembered copy would go stale); they are looked up, never remembered"
        )
