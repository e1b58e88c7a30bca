"""The dedupe threshold (``DEDUPE_THRESHOLD`` + the lexical guard of :mod:`mnemo.core.text`),
measured as :func:`mnemo.aremember_many`'s lookup scores a new text: as a *passage*
against the stored note's *passage* (the lookup's one encoding of the text, which
the put reuses: :func:`mnemo.stores.passage_query`).

On ``bench/data/paraphrases.json``: hand-written pairs, ``same`` (two wordings of
one fact: should dedupe) and ``different`` (related but distinct facts: must both
be kept), in a tune split and a held-out one (the topics the file lists under
``held_out``, a Chinese pair with its English twin). For every threshold of
:data:`THRESHOLDS`, the share of ``same`` pairs deduped and of ``different`` pairs
merged, by similarity alone and with the guard, per split; the threshold is chosen
on the tune pairs only (:func:`choose`), the held-out ones are reported beside it.
The former lookup (the new text as a *query*) is reported too. At the default
threshold the real write path (:func:`mnemo.aremember`, a fresh store per pair) is
run as a cross-check of the formula.

On LoCoMo (:func:`turn_merges`): each turn against its nearest earlier turn of the
conversation, as the lookup sees a conversation written note by note: distinct
turns the threshold and the guard would merge, per split, both ways of scoring.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench import stats
from bench.common import PARAPHRASES, CachingEmbeddings, display_path

THRESHOLDS = [round(0.85 + 0.01 * i, 2) for i in range(15)]  # 0.85 .. 0.99
PERCENTILES = (5, 25, 50, 75, 95)
SPLITS = ("tune", "held_out")
#: The rule :func:`choose` applies to the tune pairs.
RULE = "the highest threshold of the best plateau: most tune same-fact pairs deduped, no tune different pair merged"
#: What the lookup scored before issue 44 (reported beside, never chosen on).
FORMER: dict[str, Any] = {"threshold": 0.88, "lookup": "the new text as a query against the stored note as a passage"}


def percentiles(values: Iterable[float]) -> dict[str, float | None]:
    """p5 to p95 of similarities, to 4 decimals (:func:`bench.stats.percentiles`)."""
    return stats.percentiles(values, PERCENTILES, 4)


def _rate(rows: Sequence[dict], kind: str, threshold: float, *, key: str, guarded: bool = True) -> float | None:
    """The share of ``rows`` of ``kind`` merged at ``threshold`` (None: no such row)."""
    chosen = [r for r in rows if r["kind"] == kind]
    hits = [r for r in chosen if r[key] >= threshold and (r["guard"] or not guarded)]
    return round(len(hits) / len(chosen), 4) if chosen else None


def _sweep_row(rows: Sequence[dict], t: float) -> dict[str, Any]:
    """At ``t``: every pair, each split, by the lookup's similarity; the former lookup's beside."""
    split = {s: [r for r in rows if r["split"] == s] for s in SPLITS}
    row: dict[str, Any] = {
        "threshold": t,
        "same_deduped": _rate(rows, "same", t, key="similarity"),
        "different_merged": _rate(rows, "different", t, key="similarity"),
        "same_deduped_similarity_only": _rate(rows, "same", t, key="similarity", guarded=False),
        "different_merged_similarity_only": _rate(rows, "different", t, key="similarity", guarded=False),
    }
    for s in SPLITS:
        row[f"{s}_same_deduped"] = _rate(split[s], "same", t, key="similarity")
        row[f"{s}_different_merged"] = _rate(split[s], "different", t, key="similarity")
    for s in SPLITS:
        row[f"former_{s}_same_deduped"] = _rate(split[s], "same", t, key="similarity_query_passage")
        row[f"former_{s}_different_merged"] = _rate(split[s], "different", t, key="similarity_query_passage")
    return row


def choose(sweep: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """:data:`RULE` on the tune columns of ``sweep``: the highest of the thresholds
    that dedupe the most tune same-fact pairs with no tune different pair merged (a
    missed duplicate costs a line of prompt, a wrong merge loses a fact; the highest
    such threshold merges the fewest distinct texts the guard lets through)."""
    safe = [r for r in sweep if r["tune_different_merged"] == 0]
    if not safe:
        return {"rule": RULE, "threshold": None}
    best = max(r["tune_same_deduped"] for r in safe)
    return {"rule": RULE, "threshold": max(r["threshold"] for r in safe if r["tune_same_deduped"] == best)}


def _at(sweep: Sequence[dict[str, Any]], threshold: float | None, prefix: str = "") -> dict[str, Any] | None:
    """The split figures of ``sweep`` at ``threshold`` (``prefix``: ``"former_"`` for the former lookup's)."""
    row = next((r for r in sweep if threshold is not None and abs(r["threshold"] - threshold) < 1e-9), None)
    if row is None:
        return None
    return {
        s: {"same_deduped": row[f"{prefix}{s}_same_deduped"], "different_merged": row[f"{prefix}{s}_different_merged"]}
        for s in SPLITS
    }


def dedupe_analysis(emb: CachingEmbeddings, path: Path = PARAPHRASES, *, smoke: bool = False) -> dict[str, Any]:
    from mnemo.core import adds_nothing
    from mnemo.notes.model import DEDUPE_THRESHOLD

    data = json.loads(path.read_text(encoding="utf-8"))
    held_out = set(data["held_out"])
    limit = 4 if smoke else None  # --smoke: a few pairs of each kind (English and Chinese)
    same = data["same"][:limit] + (data["same"][-limit:] if limit else [])
    different = data["different"][:limit] + (data["different"][-limit:] if limit else [])
    pairs = [("same", a, b) for a, b in same] + [("different", a, b) for a, b in different]
    texts = sorted({t for _, a, b in pairs for t in (a, b)})
    emb.warm("p", texts, desc="paraphrases (passages)")
    emb.warm("q", texts, desc="paraphrases (queries)")
    rows = [
        {
            "kind": kind,
            "split": "held_out" if a in held_out else "tune",
            "stored": a,
            "new": b,
            # passage to passage: symmetric, so the order the two were said in changes nothing
            "similarity": round(float(emb.vector("p", b) @ emb.vector("p", a)), 4),
            "similarity_query_passage": round(float(emb.vector("q", b) @ emb.vector("p", a)), 4),
            # the guard as repeated_note applies it: the new text adds nothing (duplicate)
            # or the old one's words are all in the new one (refinement)
            "guard": adds_nothing(b, a) or adds_nothing(a, b),
        }
        for kind, a, b in pairs
    ]
    sweep = [_sweep_row(rows, t) for t in THRESHOLDS]
    chosen = choose(sweep)
    agree, statuses = asyncio.run(_real_path(rows, emb, DEDUPE_THRESHOLD))
    return {
        "file": display_path(path),
        "lookup": "the new text as a passage against the stored note as a passage",
        "pairs": {kind: sum(r["kind"] == kind for r in rows) for kind in ("same", "different")},
        "pairs_per_split": {
            s: {k: sum(r["kind"] == k and r["split"] == s for r in rows) for k in ("same", "different")} for s in SPLITS
        },
        "similarity": {
            kind: percentiles(r["similarity"] for r in rows if r["kind"] == kind) for kind in ("same", "different")
        }
        | {
            f"{kind}_former_query_passage": percentiles(
                r["similarity_query_passage"] for r in rows if r["kind"] == kind
            )
            for kind in ("same", "different")
        },
        "default_threshold": DEDUPE_THRESHOLD,
        "sweep": sweep,
        "chosen_on_tune": {**chosen, **(_at(sweep, chosen["threshold"]) or {})},
        "former": {**FORMER, **(_at(sweep, FORMER["threshold"], "former_") or {})},
        "real_path_check": {
            "threshold": DEDUPE_THRESHOLD,
            "pairs_agreeing_with_formula": agree,
            "pairs": len(rows),
            "statuses": statuses,
        },
        "rows": rows,
    }


async def _real_path(rows: list[dict], emb: CachingEmbeddings, threshold: float) -> tuple[int, dict[str, int]]:
    """Store ``stored`` then ``new`` with :func:`mnemo.aremember` in a fresh store;
    count the pairs where the outcome equals the formula's prediction."""
    from langgraph.store.memory import InMemoryStore

    from mnemo import User, aremember
    from mnemo.stores import index_config

    agree = 0
    statuses: dict[str, int] = {}
    for row in rows:
        store = InMemoryStore(index=index_config(emb))  # type: ignore[arg-type]  # IndexConfig is a TypedDict
        user = User.of("bench-thresholds")
        await aremember(store, user, row["stored"])
        result = await aremember(store, user, row["new"], dedupe_threshold=threshold)
        merged = result["status"] != "stored"
        key = f"{row['kind']}:{result['status']}"
        statuses[key] = statuses.get(key, 0) + 1
        agree += merged == (row["similarity"] >= threshold and row["guard"])
    return agree, statuses


def turn_merges(emb: CachingEmbeddings, conversations: Sequence[Any], tune: Sequence[str]) -> dict[str, Any]:
    """LoCoMo turns as notes (the paper's wording): each turn's nearest earlier turn
    of its conversation by the lookup's similarity, and per split the distinct turns
    the threshold and the guard would merge, by passage (the lookup) and by query
    (the former lookup)."""
    from bench.locomo import stored_text
    from mnemo.core import adds_nothing

    nearest: dict[str, list[float]] = {"passage": [], "query": []}
    merged: dict[str, dict[str, list[float]]] = {way: {s: [] for s in SPLITS} for way in nearest}
    turns = dict.fromkeys(SPLITS, 0)
    for conv in conversations:
        split = "tune" if conv.sample_id in tune else "held_out"
        texts = [stored_text(t.text) for t in conv.turns]
        P = emb.matrix("p", texts)
        scores = {"passage": P @ P.T, "query": emb.matrix("q", texts) @ P.T}
        turns[split] += max(len(texts) - 1, 0)
        for way, S in scores.items():
            for i in range(1, len(texts)):
                j = int(np.argmax(S[i, :i]))
                nearest[way].append(float(S[i, j]))
                if adds_nothing(texts[i], texts[j]) or adds_nothing(texts[j], texts[i]):
                    merged[way][split].append(float(S[i, j]))  # merged at any threshold up to this score
    return {
        "turns": turns,
        "nearest_earlier_turn": {way: percentiles(v) for way, v in nearest.items()},
        "merged": {
            way: [
                {"threshold": t, **{s: sum(score >= t for score in merged[way][s]) for s in SPLITS}} for t in THRESHOLDS
            ]
            for way in merged
        },
    }
