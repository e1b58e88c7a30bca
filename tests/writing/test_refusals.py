import pytest

from mnemo import InvalidInputError
from mnemo.writing.refusals import business_record_term, refuse_business_record


@pytest.mark.parametrize(
    "text",
    [
        "My order #8841 was refunded.",
        "My order to Leeds is late.",
        "The user's order 20931 has not arrived.",
        "Order number A123 is delayed.",
        "The user got a refund last week.",
        "The user's payment failed twice.",
        "The user needs an invoice for the blender.",
        "用户的订单还没到。",
        "用户申请了退款。",
    ],
)
def test_business_records_are_refused(text):
    assert business_record_term(text) is not None
    with pytest.raises(InvalidInputError, match="order system"):
        refuse_business_record(text)


@pytest.mark.parametrize(
    "text",
    [
        "The user is allergic to peanuts.",
        "The user is learning Spanish in order to travel.",
        "The user orders coffee every morning.",
        "The user said: “Please send my orders to 14 Harbour Lane until June.”",
        "用户对花生过敏。",
    ],
)
def test_other_facts_pass(text):
    assert business_record_term(text) is None
    refuse_business_record(text)  # no error
