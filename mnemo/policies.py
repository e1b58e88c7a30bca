"""Shared knowledge: organisation policies, read-only for the model.

Namespace :data:`~mnemo.identity.POLICIES_NAMESPACE` (``("org", "policies")``),
one item per policy, key = the policy id. The file ``mnemo/data/policies.json``
is the source of truth: :func:`aseed_policies` makes the store match it
(adds new, rewrites changed, removes dropped policies) and writes nothing when
it already matches, so it is safe to run at every start or first use.

Policies are searchable by meaning (``text`` is embedded). The agent has a
search tool and no write tool for them.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import weakref
from importlib import resources
from typing import TypedDict

from langgraph.store.base import BaseStore, PutOp

from mnemo.store_reads import alist_all, score_of, semantic_hits
from mnemo.identity import POLICIES_NAMESPACE
from mnemo.recall import RECALL_MIN_SCORE

#: Minimum similarity for a policy to be returned by :func:`asearch_policies`:
#: the recall threshold, for the same reason (a question against passages;
#: docs/thresholds.md). The best policy for a real question scores 0.87-0.93.
POLICY_MIN_SCORE = RECALL_MIN_SCORE


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


def _digest(policy: Policy) -> str:
    return hashlib.sha256(json.dumps(policy, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


async def aseed_policies(store: BaseStore, policies: list[Policy]) -> dict[str, int]:
    """Make the store's policies equal ``policies``; returns counts of what changed."""
    stored = {it.key: it.value for it in await alist_all(store, POLICIES_NAMESPACE)}
    ops: list[PutOp] = []
    added = updated = 0
    for policy in policies:
        digest = _digest(policy)
        current = stored.get(policy["id"])
        if current is not None and current.get("digest") == digest:
            continue
        added += current is None
        updated += current is not None
        ops.append(PutOp(POLICIES_NAMESPACE, policy["id"], {**policy, "digest": digest}))
    wanted = {p["id"] for p in policies}
    removed = [key for key in stored if key not in wanted]
    ops.extend(PutOp(POLICIES_NAMESPACE, key, None) for key in removed)
    if ops:
        await store.abatch(ops)
    return {"added": added, "updated": updated, "removed": len(removed)}


async def asearch_policies(
    store: BaseStore, query: str, *, limit: int = 3, min_score: float = POLICY_MIN_SCORE
) -> list[PolicyHit]:
    """Policies closest in meaning to ``query``, best first, real hits only."""
    items = await store.asearch(POLICIES_NAMESPACE, query=query, limit=limit)
    return [
        PolicyHit(id=it.key, title=it.value["title"], text=it.value["text"], score=round(score_of(it), 4))
        for it in semantic_hits(items, POLICIES_NAMESPACE, min_score=min_score)
    ]


# Stores already seeded by this process. Seeding is idempotent; this only
# saves the listing on every later call.
_seeded: weakref.WeakSet[BaseStore] = weakref.WeakSet()


async def aensure_policies(store: BaseStore) -> None:
    """Seed the shipped policies into ``store`` once per process (first use)."""
    if store in _seeded:
        return
    policies = await asyncio.to_thread(load_policy_file)  # file I/O off the event loop
    await aseed_policies(store, policies)
    _seeded.add(store)
