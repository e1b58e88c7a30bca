"""mnemo.writing.mended: a sentence that takes a value back at once is read with the value it gives
(the fourteenth blind set quoted "allergic to latex, thats wrong, its nickel" whole: a false memory)."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from mnemo import alist_notes
from mnemo.writing import aextract_messages
from mnemo.writing.grounding import stated
from mnemo.writing.mended import mended
from tests.writing import EXTRACT, load_nothing_extracted


@pytest.mark.parametrize(
    ("said", "read"),
    [
        ("im allergic to latex, thats wrong, its nickel", "im allergic to [nickel]"),
        ("I wear a size Medium — that was a typo, it's Large.", "I wear a size [Large]."),
        ("my dog is called Rex, that's not right, actually Max", "my dog is called [Max]"),
        ("I'm allergic to latex, that's wrong, is it not?", "I'm allergic to latex, that's wrong, is it not?"),
        ("that's wrong, the parcel never came", "that's wrong, the parcel never came"),
    ],
)
def test_the_value_taken_back_is_replaced_by_the_one_given(said, read):
    assert mended(said) == read


async def test_the_value_taken_back_is_in_no_note(store, user):
    """Through the write pipeline, with an extractor that keeps nothing: the allergy is kept, the latex is not."""
    said = "also i told ur chat last week im allergic to latex, thats wrong, its nickel. the hoop earrings ok?"
    assert "latex" not in stated(said) and "nickel" in stated(said)
    await aextract_messages(store, user, load_nothing_extracted, [HumanMessage(said, id="h1")], 0, **EXTRACT)
    texts = [n["text"] for n in await alist_notes(store, user)]
    assert texts == ["The user said: “also i told ur chat last week im allergic to [nickel].”"]


def test_a_value_of_the_past_is_left_out_and_kept_apart():
    from mnemo.writing.mended import bygone_parts, without_bygone

    assert without_bygone("床是1米8的 1米5那是以前租的房子") == "床是1米8的"
    assert bygone_parts("床是1米8的 1米5那是以前租的房子") == ["1米5那是以前租的房子"]
    assert without_bygone("size is UK 8, 7 was before my feet grew. ok?") == "size is UK 8,. ok?"
    assert without_bygone("I was born in Leeds") == "I was born in Leeds"  # nothing of the past said
