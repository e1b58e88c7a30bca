"""mnemo.policies, search quality. Seeding (idempotent, following the file)
runs on every backend in tests/test_store_conformance.py."""

from mnemo import aseed_policies, asearch_policies, load_policy_file


async def test_policies_are_searchable_by_meaning_in_both_languages(store):
    await aseed_policies(store, load_policy_file())
    hits = await asearch_policies(store, "how long do I have to return something for my money back?")
    assert {h["id"] for h in hits[:3]} >= {"refund-window"}
    assert all(h["id"].startswith(("refund", "returns")) for h in hits[:3])
    zh = await asearch_policies(store, "滤芯多久换一次？")
    assert zh[0]["id"] in {"滤芯更换", "filter-replacement"}
