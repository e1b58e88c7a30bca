"""mnemo.notes.forget: forgetting by id, and by what a note says, through one
matcher. The two cases of issue 56 run on every backend too
(tests/stores/conformance/test_memory.py); the rule's figures: bench/forget_threshold.py."""

from __future__ import annotations

import pytest
from langgraph.store.base import BaseStore, SearchOp
from langgraph.store.memory import InMemoryStore

from mnemo import IndexMissingError, User, aforget, alist_notes, aremember, aremember_many
from mnemo.notes import aforget_about
from mnemo.notes.forget import FORGET_RULES, MAX_FORGET_NOTES, SHOWN_CANDIDATES, ForgetRule, amatch, decide, rule_for
from tests.store_backends import HashEmbeddings

#: Issue 56: the mill note was saved in reply to a message about the cats.
CATS, MILL, EMAIL = "I have two cats, Mia and Leo.", "I live near the old mill.", "I prefer to be contacted by email."
CATS_REPLY = "Two cats, how lovely! Do Mia and Leo get along with each other?"
ZH_CATS, ZH_PEANUTS = "我养了两只猫。", "我对花生过敏。"
ZH_NOTES = [ZH_CATS, ZH_PEANUTS, "我住在杭州西湖区。", "我喜欢用邮件联系。"]


async def test_a_note_matches_by_its_text_never_by_the_context_it_was_saved_with(store, user):
    await aremember_many(store, user, [CATS, MILL, EMAIL], contexts=[None, CATS_REPLY, None])
    # The precondition: the store's own search ranks the mill note first for "cats", by its context.
    first = await store.asearch(user.namespace("notes"), query="cats", limit=1)
    assert first[0].value["text"] == MILL
    assert [n["text"] for n in await aforget(store, user, about="cats")] == [CATS]
    assert {n["text"] for n in await alist_notes(store, user)} == {MILL, EMAIL}


async def test_a_chinese_request_deletes_the_note_it_names_and_not_one_saved_beside_it(store, user):
    contexts = [None, "两只猫真可爱！它们叫什么名字？", None, None]
    await aremember_many(store, user, ZH_NOTES, contexts=contexts)
    first = await store.asearch(user.namespace("notes"), query="我的猫", limit=2)
    assert ZH_PEANUTS in [it.value["text"] for it in first]  # the precondition: its context brings it up
    assert [n["text"] for n in await aforget(store, user, about="我的猫")] == [ZH_CATS]
    assert {n["text"] for n in await alist_notes(store, user)} == set(ZH_NOTES[1:])


async def test_a_chinese_request_is_held_to_the_chinese_threshold(store, user):
    await aremember_many(store, user, ZH_NOTES)
    match = await amatch(store, user, "我的狗")  # the user keeps cats, no dog
    assert match.notes[0]["text"] == ZH_CATS
    # The precondition: the cats note is over the English threshold; a Chinese pair scores higher.
    assert match.notes[0]["score"] >= FORGET_RULES["LATIN"].min_score
    assert match.decision == "no_match" and await aforget(store, user, about="我的狗") == []
    assert len(await alist_notes(store, user)) == len(ZH_NOTES)


def test_the_rule_is_chosen_by_the_script_of_the_request_and_the_strictest_for_another():
    assert rule_for("my cats") == FORGET_RULES["LATIN"] and rule_for("我的猫") == FORGET_RULES["CJK"]
    assert FORGET_RULES["CJK"].min_score > FORGET_RULES["LATIN"].min_score
    strictest = ForgetRule(max(r.min_score for r in FORGET_RULES.values()), max(r.gap for r in FORGET_RULES.values()))
    assert rule_for("мои кошки") == strictest


def test_only_a_clear_match_is_deleted():
    rule = ForgetRule(min_score=0.5, gap=0.25)
    assert decide([], rule) == (0, "no_notes")
    assert decide([0.49, 0.1], rule) == (0, "no_match")
    assert decide([0.5], rule) == (1, "clear")  # the threshold is inclusive, and nothing under it is close
    assert decide([0.625, 0.375], rule) == (1, "clear")  # the gap exactly: clear
    assert decide([0.625, 0.376], rule) == (0, "too_close")  # under the gap: which one is meant?
    assert decide([0.9, 0.8, 0.5, 0.25], rule) == (3, "clear")  # all over it go, the next is far enough
    assert decide([0.9, 0.8, 0.5, 0.26], rule) == (0, "too_close")
    assert decide([0.9] * 6, rule) == (0, "too_many")
    assert decide([0.9] * 6, rule, max_notes=6) == (6, "clear")


class ScoredStore(InMemoryStore):
    """A store whose search for ``query`` scores each note as ``scores`` says
    (by its text, best first, cut to the search's limit): boundaries exactly."""

    def __init__(self, query: str, scores: dict[str, float]) -> None:
        super().__init__(index={"dims": 16, "embed": HashEmbeddings(16), "fields": ["text"]})
        self.query, self.scores = query, scores

    async def abatch(self, ops):
        ops = list(ops)
        scored = [i for i, op in enumerate(ops) if isinstance(op, SearchOp) and op.query == self.query]
        wide = [
            SearchOp(op.namespace_prefix, query=op.query, limit=1000) if i in scored else op for i, op in enumerate(ops)
        ]
        results = await super().abatch(wide)
        for i in scored:
            for it in results[i]:
                it.score = self.scores.get(it.value.get("text"), 0.0)
            results[i] = sorted(results[i], key=lambda it: -it.score)[: ops[i].limit]
        return results


RULE = FORGET_RULES["LATIN"]


async def test_two_notes_too_close_to_tell_apart_are_both_kept_and_returned_to_ask_which(user):
    store = ScoredStore("my cat", {"The user has a cat.": RULE.min_score + 0.01, "The user had a cat once.": 0.5})
    await aremember_many(store, user, list(store.scores))
    assert [n["text"] for n in await aforget(store, user, about="my cat")] == ["The user has a cat."]  # clear
    await aremember(store, user, "The user has a cat.")
    store.scores["The user had a cat once."] = RULE.min_score + 0.01 - RULE.gap / 2  # under the threshold, close
    match = await aforget_about(store, user, "my cat")
    assert match.decision == "too_close"
    assert [n["text"] for n in match.notes] == ["The user has a cat.", "The user had a cat once."]
    assert all(n["id"] and "score" in n for n in match.notes)
    assert len(await alist_notes(store, user)) == 2


async def test_nothing_over_the_threshold_returns_the_nearest_notes_and_deletes_nothing(user):
    scores = {f"The user's fact number {i}.": RULE.min_score - 0.01 * (i + 1) for i in range(5)}
    store = ScoredStore("the weather on Mars", scores)
    await aremember_many(store, user, list(scores))
    match = await aforget_about(store, user, "the weather on Mars")
    assert match.decision == "no_match" and len(match.notes) == SHOWN_CANDIDATES
    assert [n["text"] for n in match.notes] == list(scores)[:SHOWN_CANDIDATES]
    assert len(await alist_notes(store, user)) == 5


async def test_more_notes_than_a_forget_takes_are_all_kept(user):
    cats = [f"The user's cat number {i} is called Cat{i}." for i in range(MAX_FORGET_NOTES + 1)]
    store = ScoredStore("my cats", dict.fromkeys(cats, 0.95))
    await aremember_many(store, user, cats)
    assert (await aforget_about(store, user, "my cats")).decision == "too_many"
    assert len(await alist_notes(store, user)) == len(cats)
    assert len(await aforget(store, user, about="my cats", max_notes=len(cats))) == len(cats)


async def test_forget_by_id_and_by_meaning_returns_what_was_removed(store, user):
    await aremember(store, user, "The user lives near the sea.")
    a = (await aremember(store, user, "The user has two cats."))["note"]
    assert [n["text"] for n in await aforget(store, user, note_id=a["id"])] == ["The user has two cats."]
    assert await aforget(store, User.of("b"), about="living near the sea") == []  # another user's
    assert [n["text"] for n in await aforget(store, user, about="living near the sea")] == [
        "The user lives near the sea."
    ]
    assert await alist_notes(store, user) == []
    assert (await aforget_about(store, user, "anything at all")).decision == "no_notes"


async def test_a_loose_neighbour_or_a_near_miss_is_never_deleted(store, user):
    pets = ["The user has two cats.", "The user has a dog named Rex.", "The user keeps a rabbit."]
    await aremember_many(store, user, [*pets, "The user prefers email contact."])
    assert [n["text"] for n in await aforget(store, user, about="the user's two cats")] == [pets[0]]
    assert await aforget(store, user, about="my hamster") == []
    assert await aforget(store, user, about="the weather on Mars") == []
    assert {n["text"] for n in await alist_notes(store, user)} == {*pets[1:], "The user prefers email contact."}


async def test_forget_about_nothing_deletes_nothing(user):
    store = ScoredStore("", {"The user has a cat.": 0.99})
    await aremember(store, user, "The user has a cat.")
    assert await aforget(store, user, about="   ") == []
    assert len(await alist_notes(store, user)) == 1


async def test_forget_by_meaning_needs_the_vector_index(user):
    plain = InMemoryStore()
    plain.put(user.namespace("notes"), "k", {"text": "The user has a cat."})
    with pytest.raises(IndexMissingError, match="index"):
        await aforget(plain, user, about="the user's cat")
    assert plain.get(user.namespace("notes"), "k") is not None


class Remote(BaseStore):
    """A store that does not say which embedder it searches with (as a remote one)."""

    def __init__(self, inner: BaseStore) -> None:
        self.inner = inner

    def batch(self, ops):
        return self.inner.batch(ops)

    async def abatch(self, ops):
        return await self.inner.abatch(ops)


async def test_a_note_with_a_context_cannot_be_matched_without_the_stores_embedder(store, user):
    await aremember_many(store, user, [CATS, MILL], contexts=[None, CATS_REPLY])
    with pytest.raises(IndexMissingError, match="embedder"):
        await aforget(Remote(store), user, about="cats")
    assert len(await alist_notes(store, user)) == 2
    plain = InMemoryStore(index=store.index_config)
    await aremember(plain, user, CATS)  # no context: the store's score is the text's
    assert [n["text"] for n in await aforget(Remote(plain), user, about="cats")] == [CATS]
