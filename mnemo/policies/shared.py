"""Shared knowledge: organisation policies, read-only for the model.

``mnemo/data/policies.json`` is the source of truth and ``("org", "policies")`` only its
search index: a hit is served only if it equals the file's policy, and the store is
re-seeded whenever it or the file differs.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import weakref
from importlib import resources
from typing import TypedDict

from langgraph.store.base import BaseStore, PutOp

from mnemo.core import POLICIES_NAMESPACE, alist_all, bounded_query, require_index, score_of, semantic_hits

logger = logging.getLogger(__name__)

#: Minimum similarity for a policy to be returned by :func:`asearch_policies`:
#: the 5th percentile of question-to-evidence similarity on LoCoMo (0.780 with
#: turns as "Name: text"; a question against passages, docs/thresholds.md). The best policy for a real
#: question scores 0.87-0.93. (Notes use a rule relative to the user's notes,
#: :func:`mnemo.notes.recall.relevant_hits`; the policies are one shared, fixed set.)
POLICY_MIN_SCORE = 0.78


class Policy(TypedDict):
    id: str
    title: str
    text: str


class PolicyHit(Policy):
    score: float


def load_policy_file(path: str | None = None) -> list[Policy]:
    """The policies shipped with mnemo, or those of ``path``. Blocking (file I/O)."""
    if path is None:
        raw = resources.files("mnemo").joinpath("data/policies.json").read_text("utf-8")
    else:
        with open(path, encoding="utf-8") as fh:
            raw = fh.read()
    policies = json.loads(raw)
    ids = [p["id"] for p in policies]
    if len(ids) != len(set(ids)):
        raise ValueError("policy ids must be unique")
    return [Policy(id=p["id"], title=p["title"], text=p["text"]) for p in policies]


async def aseed_policies(store: BaseStore, policies: list[Policy]) -> dict[str, int]:
    """Make the store's policies equal ``policies``; returns counts of what changed."""
    stored = {it.key: it.value for it in await alist_all(store, POLICIES_NAMESPACE)}
    ops: list[PutOp] = []
    added = updated = 0
    for policy in policies:
        wanted_value = dict(policy)  # the only value that is served
        current = stored.get(policy["id"])
        if current == wanted_value:  # the whole value: any other field or text is rewritten
            continue
        added += current is None
        updated += current is not None
        ops.append(PutOp(POLICIES_NAMESPACE, policy["id"], wanted_value))
    wanted = {p["id"] for p in policies}
    removed = [key for key in stored if key not in wanted]
    ops.extend(PutOp(POLICIES_NAMESPACE, key, None) for key in removed)
    if ops:
        await store.abatch(ops)
    return {"added": added, "updated": updated, "removed": len(removed)}


async def asearch_policies(
    store: BaseStore,
    query: str,
    *,
    limit: int = 3,
    min_score: float = POLICY_MIN_SCORE,
    policies: list[Policy] | None = None,
) -> list[PolicyHit]:
    """Policies closest in meaning to ``query``, best first, real hits only.

    Only items equal to their policy in ``policies`` (default: the shipped
    file) are served; finding any other item in the namespace re-seeds the
    store from ``policies`` and searches again, so a planted item neither is
    served nor crowds the real ones out of ``limit``.
    """
    if policies is None:
        policies = await asyncio.to_thread(load_policy_file)  # file I/O off the event loop
    trusted: dict[str, dict] = {p["id"]: dict(p) for p in policies}
    require_index(store)
    for _ in range(2):
        items = await store.asearch(POLICIES_NAMESPACE, query=bounded_query(query), limit=limit)
        hits = semantic_hits(items, POLICIES_NAMESPACE, min_score=min_score)
        if all(trusted.get(it.key) == it.value for it in items if it.namespace == POLICIES_NAMESPACE):
            break
        logger.warning("policy store differs from the policy file; re-seeding")
        await aseed_policies(store, policies)
        _seeded.pop(store, None)
    return [
        PolicyHit(id=it.key, title=it.value["title"], text=it.value["text"], score=round(score_of(it), 4))
        for it in hits
        if trusted.get(it.key) == it.value
    ]


# What this process last seeded into each store (a digest of the whole file).
# Seeding is idempotent; this only saves the listing when the file is unchanged.
_seeded: weakref.WeakKeyDictionary[BaseStore, str] = weakref.WeakKeyDictionary()


async def aensure_policies(store: BaseStore) -> list[Policy]:
    """Make ``store`` hold the shipped policies, re-seeding whenever the file
    changed since this process last seeded it; returns the file's policies."""
    policies = await asyncio.to_thread(load_policy_file)  # file I/O off the event loop
    version = hashlib.sha256(json.dumps(policies, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    if _seeded.get(store) != version:
        await aseed_policies(store, policies)
        _seeded[store] = version
    return policies
