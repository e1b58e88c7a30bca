"""The attempts of ``python -m bench tune --only spread`` (bench.tune_spread):
which notes are of one exchange, and how a cap per group reorders a ranking
(their runs: test_bench.py)."""

from __future__ import annotations

from bench.tune_spread import capped, replies_to, same_exchange


def note(nid: str, text: str, context: str = "") -> dict[str, str]:
    return {"id": nid, "text": text, **({"context": context} if context else {})}


def test_a_reply_is_known_by_its_context_whole_or_cut_at_a_word():
    said = "Ana said, I moved to a new apartment near the river last spring."
    assert replies_to(said, said)
    assert replies_to("Ana said, I moved to a new apartment…", said)  # cut by validate_context
    assert not replies_to("Ana said, I moved to a new flat…", said)
    assert not replies_to("Ana said, I moved", said)  # a prefix without the cut's ellipsis is another text


def test_notes_of_one_exchange_reply_to_each_other_or_to_one_message():
    question = note("a", "Ben said, how is Luna?")
    answer = note("b", "Ana said, Luna loves the park.", context=question["text"])
    aside = note("c", "Ana said, and she caught a frisbee.", context=question["text"])
    other = note("d", "Ben said, I hurt my knee.", context="Ana said, the park is next door.")
    assert same_exchange(answer, question) and same_exchange(question, answer)  # a reply, either way round
    assert same_exchange(answer, aside)  # both in reply to the question
    assert not same_exchange(other, question) and not same_exchange(other, answer)
    assert not same_exchange(note("e", "x"), note("f", "y"))  # no context: no exchange


def test_a_cap_defers_the_notes_over_it_and_keeps_the_order_otherwise():
    notes = [note(n, n) for n in ("a1", "a2", "b1", "a3", "b2", "c1")]

    def group(x, y):
        return x["id"][0] == y["id"][0]

    assert capped(notes, 1, group) == ["a1", "b1", "c1", "a2", "a3", "b2"]
    assert capped(notes, 2, group) == ["a1", "a2", "b1", "b2", "c1", "a3"]
    assert capped(notes, 3, group) == [n["id"] for n in notes]  # no group over the cap: unchanged
