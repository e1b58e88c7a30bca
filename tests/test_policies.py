"""mnemo.kinds.policies, search quality. Seeding (idempotent, following the file)
runs on every backend in tests/test_store_conformance.py."""

from mnemo import asearch_policies, aseed_policies, load_policy_file


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
    # An attacker with write access plants one policy and rewrites another (keeping its digest field).
    await store.aput(POLICIES_NAMESPACE, PLANTED["id"], {**PLANTED, "digest": "0" * 16})
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
    from mnemo import aensure_policies
    from mnemo.kinds import policies as module

    shipped = load_policy_file()
    assert {p["id"] for p in await aensure_policies(store)} == {p["id"] for p in shipped}
    edited = [{**p, "text": p["text"] + " Edited."} if p["id"] == "refund-window" else p for p in shipped]
    monkeypatch.setattr(module, "load_policy_file", lambda: edited)  # the file changed on disk
    await aensure_policies(store)
    hits = await asearch_policies(store, REFUND_QUESTION)
    assert any(h["id"] == "refund-window" and h["text"].endswith("Edited.") for h in hits)
