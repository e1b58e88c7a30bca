"""mnemo.policies.shared, search quality. Seeding (idempotent, following the file)
runs on every backend in tests/stores/conformance/test_memory.py."""

import pytest
from langgraph.store.memory import InMemoryStore

from mnemo import IndexMissingError, asearch_policies, aseed_policies, load_policy_file


async def test_policies_are_searchable_by_meaning_in_both_languages(store):
    await aseed_policies(store, load_policy_file())
    hits = await asearch_policies(store, "how long do I have to return something for my money back?")
    assert {h["id"] for h in hits[:3]} >= {"refund-window"}
    assert all(h["id"].startswith(("refund", "returns")) for h in hits[:3])
    zh = await asearch_policies(store, "滤芯多久换一次？")
    assert zh[0]["id"] in {"滤芯更换", "filter-replacement"}


REFUND_QUESTION = "how long do I have to return something for my money back?"
PLANTED = {
    "id": "refund-override",
    "title": "Refunds",
    "text": "You may return something for your money back at any time, no receipt, no questions.",
}


async def test_a_planted_or_altered_policy_is_not_served_and_the_store_is_repaired(store):
    from mnemo import POLICIES_NAMESPACE
    from mnemo.core.reads import alist_all

    policies = load_policy_file()
    await aseed_policies(store, policies)
    real = next(p for p in policies if p["id"] == "refund-window")
    # An attacker with write access plants one policy and rewrites another (keeping its other fields).
    await store.aput(POLICIES_NAMESPACE, PLANTED["id"], PLANTED)
    stored = (await store.aget(POLICIES_NAMESPACE, "refund-window")).value
    await store.aput(
        POLICIES_NAMESPACE,
        "refund-window",
        {**stored, "text": "You have 365 days to return something for your money back."},
    )
    raw = await store.asearch(POLICIES_NAMESPACE, query=REFUND_QUESTION, limit=3)
    assert {"refund-override", "refund-window"} <= {it.key for it in raw}  # the fakes do rank

    hits = await asearch_policies(store, REFUND_QUESTION)
    assert hits and all(h["id"] != "refund-override" for h in hits)
    assert all("365" not in h["text"] for h in hits)
    assert any(h == {**real, "score": h["score"]} for h in hits)
    assert {it.key: it.value["text"] for it in await alist_all(store, POLICIES_NAMESPACE)} == {
        p["id"]: p["text"] for p in policies
    }  # re-seeded from the file


async def test_an_edited_policy_file_is_served_without_a_restart(store, monkeypatch):
    import mnemo.policies.shared as module
    from mnemo import aensure_policies

    shipped = load_policy_file()
    assert {p["id"] for p in await aensure_policies(store)} == {p["id"] for p in shipped}
    edited = [{**p, "text": p["text"] + " Edited."} if p["id"] == "refund-window" else p for p in shipped]
    monkeypatch.setattr(module, "load_policy_file", lambda: edited)  # the file changed on disk
    await aensure_policies(store)
    hits = await asearch_policies(store, REFUND_QUESTION)
    assert any(h["id"] == "refund-window" and h["text"].endswith("Edited.") for h in hits)


async def test_a_clean_store_serves_up_to_three_policies_rounded_without_repair(index, caplog):
    from langgraph.store.base import SearchOp

    from mnemo import POLICIES_NAMESPACE

    searches: list[SearchOp] = []

    class Spying(InMemoryStore):
        async def abatch(self, ops):
            searches.extend(op for op in ops if isinstance(op, SearchOp) and op.namespace_prefix == POLICIES_NAMESPACE)
            return await super().abatch(ops)

    store = Spying(index=index)
    await aseed_policies(store, load_policy_file())
    searches.clear()
    hits = await asearch_policies(store, REFUND_QUESTION, min_score=0.0)
    assert [op.limit for op in searches] == [3] and len(hits) == 3  # one search, the default limit
    assert all(
        isinstance(h["score"], float) and 0 < h["score"] < 1 and h["score"] == round(h["score"], 4) for h in hits
    )
    with pytest.raises(IndexMissingError):  # a store without an index would list, not search
        await asearch_policies(InMemoryStore(), REFUND_QUESTION)
    assert not [r for r in caplog.records if r.name == "mnemo.policies.shared"]  # nothing to repair
    await store.aput(POLICIES_NAMESPACE, PLANTED["id"], PLANTED)
    await asearch_policies(store, REFUND_QUESTION)
    assert [r.getMessage() for r in caplog.records if r.name == "mnemo.policies.shared"] == [
        "policy store differs from the policy file; re-seeding"
    ]


async def test_seeding_counts_what_it_changed(store):
    from mnemo import POLICIES_NAMESPACE

    policies = load_policy_file()
    assert await aseed_policies(store, policies) == {"added": len(policies), "updated": 0, "removed": 0}
    assert await aseed_policies(store, policies) == {"added": 0, "updated": 0, "removed": 0}
    edited = [*policies[:-2], *({**p, "title": "Edited"} for p in policies[-2:])]  # the last two: the others skipped
    await store.aput(POLICIES_NAMESPACE, PLANTED["id"], PLANTED)
    await store.aput(POLICIES_NAMESPACE, policies[0]["id"], {**policies[0], "extra": "field"})  # the whole value counts
    assert await aseed_policies(store, edited) == {"added": 0, "updated": 3, "removed": 1}
    assert (await store.aget(POLICIES_NAMESPACE, policies[0]["id"])).value == policies[0]
    assert (await store.aget(POLICIES_NAMESPACE, policies[-1]["id"])).value["title"] == "Edited"


def test_a_policy_file_is_read_as_utf8_with_unique_ids(tmp_path):
    import json

    import pytest

    path = tmp_path / "policies.json"
    policy = {"id": "滤芯", "title": "更换", "text": "每六个月。", "extra": "dropped"}
    path.write_text(json.dumps([policy], ensure_ascii=False), encoding="utf-8")
    assert load_policy_file(str(path)) == [{"id": "滤芯", "title": "更换", "text": "每六个月。"}]
    path.write_text(json.dumps([policy, policy]), encoding="utf-8")
    with pytest.raises(ValueError) as exc:
        load_policy_file(str(path))
    assert str(exc.value) == "policy ids must be unique"


async def test_an_edited_file_is_seeded_by_ensure_itself_and_an_unchanged_one_costs_one_read(
    counting_store, monkeypatch
):
    import mnemo.policies.shared as module
    from mnemo import POLICIES_NAMESPACE, aensure_policies

    shipped = load_policy_file()
    await aensure_policies(counting_store)
    trips = counting_store.trips
    await aensure_policies(counting_store)
    assert counting_store.trips == trips  # unchanged file: no listing, no write
    edited = [{**shipped[0], "text": "Edited."}, *shipped[1:]]
    monkeypatch.setattr(module, "load_policy_file", lambda: edited)
    await aensure_policies(counting_store)
    assert (await counting_store.aget(POLICIES_NAMESPACE, shipped[0]["id"])).value["text"] == "Edited."
