"""mnemo.writing.withheld: a code the user asked not to keep is in no note (the tenth blind set:
the model's note kept a gate code said with "这个你别记")."""

from __future__ import annotations

from mnemo import alist_notes
from mnemo.writing.apply import Said, aapply_extraction
from mnemo.writing.extraction import MemoryExtraction
from mnemo.writing.withheld import withheld, withholds


def test_a_code_the_user_asked_not_to_keep_is_in_no_note():
    """ "大门密码是4827#，不过这个你别记哈" (the tenth blind set): the model's note kept the code."""
    codes = withheld(["大门密码是4827#，不过这个你别记哈，每个月都换", "the gate code is 9911, pls dont save that"])
    assert codes == {"4827", "9911"}
    assert withholds("用户的大门密码是4827", codes) and not withholds("用户住6楼", codes)
    assert withheld(["我住6楼，记住哈"]) == frozenset()  # a request to remember withholds nothing


async def test_the_writing_keeps_no_code_the_user_withheld(store, user):
    model_note = "用户希望快递放丰巢快递柜，大门密码是4827#"
    extraction = MemoryExtraction(notes=[model_note, "用户希望快递放丰巢快递柜。"])
    said = [Said("以后快递都放丰巢快递柜。大门密码是4827#，不过这个你别记哈", None)]
    await aapply_extraction(store, user, extraction, said=said)
    assert [n["text"] for n in await alist_notes(store, user)] == ["用户希望快递放丰巢快递柜。"]


def test_a_note_a_model_offers_holds_no_code_the_user_withheld():
    """``remember_note``'s text goes through the same check as the writing's notes."""
    import pytest

    from mnemo.core import InvalidInputError
    from mnemo.writing import refuse_unsaid

    said = ["以后快递都放丰巢快递柜。大门密码是4827#，不过这个你别记哈"]
    refuse_unsaid("用户希望快递放丰巢快递柜", said)  # precondition: the note without the code is kept
    with pytest.raises(InvalidInputError, match="asked not to keep"):
        refuse_unsaid("用户的大门密码是4827#", said)
