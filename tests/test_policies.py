from mnemo import POLICIES_NAMESPACE, aseed_policies, asearch_policies, load_policy_file
from mnemo._store import alist_all


async def test_seeding_is_idempotent(store):
    policies = load_policy_file()
    assert await aseed_policies(store, policies) == {"added": len(policies), "updated": 0, "removed": 0}
    stamps = {it.key: it.updated_at for it in await alist_all(store, POLICIES_NAMESPACE)}
    assert await aseed_policies(store, policies) == {"added": 0, "updated": 0, "removed": 0}
    assert {it.key: it.updated_at for it in await alist_all(store, POLICIES_NAMESPACE)} == stamps


async def test_seeding_follows_the_file(store):
    policies = load_policy_file()
    await aseed_policies(store, policies)
    changed = [{**policies[0], "text": policies[0]["text"] + " (revised)"}, *policies[1:-1]]
    assert await aseed_policies(store, changed) == {"added": 0, "updated": 1, "removed": 1}
    assert len(await alist_all(store, POLICIES_NAMESPACE)) == len(policies) - 1


async def test_policies_are_searchable_by_meaning_in_both_languages(store):
    await aseed_policies(store, load_policy_file())
    hits = await asearch_policies(store, "how long do I have to return something for my money back?")
    assert {h["id"] for h in hits[:3]} >= {"refund-window"}
    assert all(h["id"].startswith(("refund", "returns")) for h in hits[:3])
    zh = await asearch_policies(store, "滤芯多久换一次？")
    assert zh[0]["id"] in {"滤芯更换", "filter-replacement"}
