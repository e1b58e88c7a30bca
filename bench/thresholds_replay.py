"""Recall's relevance rule (``RECALL_MARGIN``, :func:`mnemo.notes.recall.relevant_hits`),
replayed: recall's own pipeline with mnemo's functions (the top
:data:`~mnemo.notes.recall.FUSION_CANDIDATES` dense candidates, the rule, mnemo's
BM25 over its write-time index, reciprocal rank fusion), per margin and for the
former fixed cut. :class:`Replay` gathers it on LoCoMo's questions (tune
conversations apart from held-out ones, the margin chosen on the tune ones only);
:func:`probe_analysis` runs it on ``bench/data/recall_probe.json`` (hand-written
users, English and Chinese: is the note a question is about recalled, and first;
how many notes a greeting brings; and, for the default, whether the real
:func:`mnemo.arecall` returns what the replay computed).
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import REPO_ROOT, CachingEmbeddings, display_path

#: The fixed similarity cut recall used before the relevance rule.
FORMER_MIN_SCORE = 0.78
#: Margins of the relevance rule measured (None: no cut).
MARGINS: list[float | None] = [None, 0.0, 0.0025, 0.005, 0.0075, 0.01, 0.0125, 0.015, 0.02, 0.03]
#: Recall's ``limit`` in the replay (the LoCoMo benchmark's largest k) and the k reported.
REPLAY_LIMIT = 25
REPLAY_KS = (5, 10, 25)
#: What the agent puts in the prompt per turn (``recall_limit``), for the probe users.
PROBE_LIMIT = 5
PROBE = REPO_ROOT / "bench" / "data" / "recall_probe.json"


def rules() -> dict[str, Any]:
    """Rule name -> the dense hits it keeps from one user's candidates (best
    first): the former fixed cut and the relevance rule at each margin."""
    from mnemo.core import semantic_hits
    from mnemo.notes import relevant_hits

    found: dict[str, Any] = {
        f"former: score >= {FORMER_MIN_SCORE}": lambda hits: semantic_hits(hits, _REPLAY_NS, min_score=FORMER_MIN_SCORE)
    }
    for m in MARGINS:
        found["no cut" if m is None else f"margin {m}"] = lambda hits, m=m: relevant_hits(hits, margin=m)
    return found


_REPLAY_NS = ("bench-thresholds", "notes")
_STAMP = datetime(2026, 1, 1, tzinfo=UTC)


class ReplayUser:
    """One user's notes (``texts``, keys = their positions) as recall sees
    them: a vector per note and mnemo's write-time BM25 index, as the notes'
    writes leave it (:func:`mnemo.notes.index_of`)."""

    def __init__(self, texts: list[str]) -> None:
        from mnemo.notes import index_of

        self.texts = texts
        self.index = index_of({str(i): t for i, t in enumerate(texts)})

    def ranked(self, scores: np.ndarray, query: str, keep: Any, limit: int) -> tuple[list[int], list[int]]:
        """(the dense hits ``keep`` lets through, what recall returns), as note positions."""
        from langgraph.store.base import SearchItem

        from mnemo.notes import FUSION_CANDIDATES, bm25_ranking, query_terms, rank_keys

        top = np.argsort(-scores, kind="stable")[: max(limit, FUSION_CANDIDATES)]
        hits = [
            SearchItem(_REPLAY_NS, str(i), {"text": self.texts[i]}, _STAMP, _STAMP, score=float(scores[i])) for i in top
        ]
        dense = keep(hits)
        lexical = bm25_ranking(query_terms(query), self.index, limit=FUSION_CANDIDATES)
        return [int(it.key) for it in dense], [int(k) for k in rank_keys(dense, lexical)[:limit]]


class Replay:
    """Per rule and split: evidence kept by the dense half, other turns
    passing, turn recall@k of what recall returns."""

    def __init__(self, tune: tuple[str, ...]) -> None:
        self.tune = tune
        self.rules = rules()
        self.rows: dict[tuple[str, str], dict[str, list[float]]] = {}

    def add(self, conversation: str, notes: ReplayUser, scores: np.ndarray, query: str, evidence: set[int]) -> None:
        part = "tune" if conversation in self.tune else "held_out"
        for name, keep in self.rules.items():
            dense, returned = notes.ranked(scores, query, keep, REPLAY_LIMIT)
            row = self.rows.setdefault(
                (name, part), {"kept": [], "total": [], "other": [], **{f"r{k}": [] for k in REPLAY_KS}}
            )
            row["kept"].append(len(evidence & set(dense)))
            row["total"].append(len(evidence))
            row["other"].append(len(set(dense) - evidence))
            for k in REPLAY_KS:
                row[f"r{k}"].append(len(evidence & set(returned[:k])) / len(evidence))

    def summary(self) -> dict[str, Any]:
        def part(name: str, split: str) -> dict[str, Any] | None:
            row = self.rows.get((name, split))
            if not row:
                return None
            return {
                "questions": len(row["total"]),
                "evidence_kept_by_dense": round(sum(row["kept"]) / sum(row["total"]), 4),
                "other_turns_passing_per_question": round(float(np.mean(row["other"])), 1),
                **{f"recall@{k}": round(float(np.mean(row[f"r{k}"])), 4) for k in REPLAY_KS},
            }

        rows = [{"rule": name, "tune": part(name, "tune"), "held_out": part(name, "held_out")} for name in self.rules]
        return {
            "limit": REPLAY_LIMIT,
            "tune_conversations": list(self.tune),
            "rows": rows,
            "chosen_on_tune": choose_margin(rows),
        }


def choose_margin(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The largest margin whose tune recall@k is at least the former cut's at
    every k: as much of the noise cut as the tune conversations allow."""
    former = rows[0]["tune"]
    if former is None:
        return None
    ok = [
        float(r["rule"].split()[-1])
        for r in rows
        if r["rule"].startswith("margin ") and all(r["tune"][f"recall@{k}"] >= former[f"recall@{k}"] for k in REPLAY_KS)
    ]
    return {"rule": "largest margin with tune recall@5/10/25 >= the former cut's", "margin": max(ok) if ok else None}


def probe_analysis(emb: CachingEmbeddings, path: Path = PROBE) -> dict[str, Any]:
    """The hand-written users of ``path``, every rule: the note each question
    is about (recalled? first?) and what an unrelated message brings; for the
    default margin, the real :func:`mnemo.arecall` against the replay."""
    from mnemo.notes import RECALL_MARGIN

    data = json.loads(path.read_text(encoding="utf-8"))
    by_rule = rules()
    users: dict[str, Any] = {}
    agree = checked = 0
    for name, spec in data["users"].items():
        notes = list(spec["notes"])
        user = ReplayUser(notes)
        P = emb.matrix("p", notes)
        asked = [(q, notes.index(note)) for q, note in spec["questions"]]
        Q = emb.matrix("q", [q for q, _ in asked])
        U = emb.matrix("q", spec["unrelated"])
        per_rule: dict[str, Any] = {}
        for rule, keep in by_rule.items():
            ranks, kept = [], 0
            for (q, target), qv in zip(asked, Q, strict=True):
                dense, returned = user.ranked(P @ qv, q, keep, PROBE_LIMIT)
                kept += target in dense
                ranks.append(returned.index(target) + 1 if target in returned else None)
            passing, returned_n = [], []
            for text, uv in zip(spec["unrelated"], U, strict=True):
                dense, returned = user.ranked(P @ uv, text, keep, PROBE_LIMIT)
                passing.append(len(dense))
                returned_n.append(len(returned))
            per_rule[rule] = {
                "questions": len(asked),
                "note_kept_by_dense": kept,
                "note_recalled": sum(r is not None for r in ranks),
                "note_first": sum(r == 1 for r in ranks),
                "rank_of_note": ranks,
                "unrelated_dense_passing_mean": round(float(np.mean(passing)), 2),
                "unrelated_dense_passing_max": max(passing),
                "unrelated_returned_mean": round(float(np.mean(returned_n)), 2),
            }
        users[name] = {
            "about": spec["about"],
            "notes": len(notes),
            "questions": [q for q, _ in asked],
            "unrelated": spec["unrelated"],
            "rules": per_rule,
        }
        a, c = asyncio.run(_real_recall(emb, notes, [q for q, _ in asked] + spec["unrelated"], user, RECALL_MARGIN))
        agree, checked = agree + a, checked + c
    return {
        "file": display_path(path),
        "limit": PROBE_LIMIT,
        "users": users,
        "real_path_check": {"margin": RECALL_MARGIN, "queries_agreeing_with_replay": agree, "queries": checked},
    }


async def _real_recall(
    emb: CachingEmbeddings, notes: list[str], queries: list[str], replay: ReplayUser, margin: float
) -> tuple[int, int]:
    """The notes written with :func:`mnemo.aremember_many` in a fresh store,
    each query recalled with :func:`mnemo.arecall`: how many return exactly
    what the replay computed."""
    from unittest import mock

    from langgraph.store.memory import InMemoryStore

    from mnemo import User, arecall
    from mnemo.notes import aremember_many, relevant_hits
    from mnemo.stores import index_config

    store = InMemoryStore(index=index_config(emb))  # type: ignore[arg-type]  # IndexConfig is a TypedDict
    user = User.of("bench-thresholds")
    await aremember_many(store, user, notes)
    agree = 0
    for q in queries:
        # The replay is the relevance rule and BM25; the learned sparse ranking
        # only reorders the same candidates (``python -m bench sparse``): off here.
        with mock.patch("mnemo.notes.recall.SPARSE_WEIGHT", 0.0):
            real = [n["text"] for n in await arecall(store, user, q, limit=PROBE_LIMIT, margin=margin)]
        _, returned = replay.ranked(
            emb.matrix("p", notes) @ emb.vector("q", q), q, lambda h: relevant_hits(h, margin=margin), PROBE_LIMIT
        )
        agree += real == [notes[i] for i in returned]
    return agree, len(queries)
