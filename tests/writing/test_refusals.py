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
        "Text me about my order #5512 when it ships.",  # one order: a record
        "Email the user about their order 7730.",
        "I never got my refunds.",  # refunds' state, no standing wish (issue 55, the fourth blind set)
        "I always get refunds late.",
        "以后退款别拖这么久。",
        "上次的发票抬头又开错了",  # one invoice
        "Can I get an invoice for order 5521?",
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
        # How to be told about the orders is a standing wish, no record (issue 55).
        "The user said: “Never phone me about my orders, a text is fine.”",
        "The user wants to be emailed about their orders, not called.",
        "用户说：“订单有问题发微信找我，别打电话。”",
        "用户对花生过敏。",
        # Where refunds go is a standing wish too (issue 55, the fourth blind set); Alipay is no payment.
        "I always want refunds back to my PayPal, never store credit.",
        "The user said: “all refunds to my card please”",
        "用户说：“以后退款都退到支付宝”",
        "用户常用支付宝。",
        # Whom invoices name, from now on (the seventh blind set).
        "用户说：“以后我的订单发票都开公司抬头:深圳市蓝鲸科技有限公司”",
        "From now on invoices should say Bluewhale Ltd.",
        # No invoice in the parcel, from now on (the eleventh blind set).
        "The user said: “going fwd pls dont put the printed invoice in my parcels”",
        "用户说：“以后别放纸质发票了”",
        # What the user can read invoices in (the fourteenth blind set).
        "The user said: “also I have low vision so large print on paper invoices would really help.”",
        "用户需要大字版的发票",
    ],
)
def test_other_facts_pass(text):
    assert business_record_term(text) is None
    refuse_business_record(text)  # no error


def test_an_order_said_by_its_number_or_as_that_one_is_a_record():
    """The fifteenth blind set: the model kept "用户希望催发单 20261130889 的发货"."""
    for text in ["上次那单还没到", "帮我催发一下", "20261130889 到现在没发货", "物流显示 20261130889", "单号7730215"]:
        assert business_record_term(text) is not None, text
    for text in ["以后下单都寄公司", "发货前打我电话 13812345678", "我在单位上班", "这单位不错"]:
        assert business_record_term(text) is None, text
