"""``python -m bench tune --only spread``: recall that covers several evidence
turns (issue 46), two attempts over mnemo's ranking of a question's best
notes (``arecall(margin=None)``, ``mnemo.notes.recall.FUSION_CANDIDATES`` of them),
bench-side:

``neighbours``
    the notes said just before and just after each of the ``m`` best hits,
    in the same session, join the ranking by reciprocal rank fusion with
    weight ``w`` (a multi-hop question's second turn may be the one next to
    the first; in the product: a read of the hits' thread around the time
    they were said, in the second round trip);
``diversity``
    at most ``cap`` notes of one group ahead of the rest, the notes over the
    cap after them in order: ``session`` (the session a note was said in; in
    the product, the thread or the day of ``first_seen``) or ``exchange``
    (notes linked by their ``context``, as stored: one said in reply to the
    other, or both in reply to one message), so that near-copies of one
    exchange leave room for the other evidence.

Each grid holds recall as it ships (``(0, 0.0)``, ``("none", 0)``); the
setting is chosen on the tune conversations, the held-out gain over recall as
it ships reported with a paired bootstrap (:func:`bench.tune_stats.grid_table`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench.common import CachingEmbeddings, TokenCounter
from bench.locomo_ask import QuestionHook, QuestionResult
from bench.locomo_write import Timing, Written
from bench.tune_stats import category_rows, grid_table

#: (best hits whose neighbours are followed, weight of the neighbours'
#: ranking in the fusion); (0, 0.0) is recall as it ships.
NEIGHBOUR_GRID = [(0, 0.0)] + [(m, w) for m in (1, 3, 5) for w in (0.1, 0.3, 0.5)]
#: (group, notes of one group ahead of the rest); ("none", 0) is recall as it ships.
DIVERSITY_GRID = [("none", 0)] + [("session", c) for c in (1, 2, 3, 4)] + [("exchange", c) for c in (1, 2)]


def replies_to(context: str, text: str) -> bool:
    """Whether a note's stored ``context`` is ``text`` (whole, or cut at a word
    with an ellipsis: :func:`mnemo.notes.validate_context`)."""
    return context == text or (context.endswith("…") and text.startswith(context[:-1]))


def same_exchange(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two notes of one exchange: one said in reply to the other, or both in reply to one message."""
    ca, cb = a.get("context", ""), b.get("context", "")
    return bool((ca and replies_to(ca, b["text"])) or (cb and replies_to(cb, a["text"])) or (ca and ca == cb))


def capped(notes: list[dict[str, Any]], cap: int, linked: Callable[[Any, Any], bool]) -> list[str]:
    """The ids of ``notes`` (best first) with at most ``cap`` notes linked to
    one another ahead; those over the cap follow, in their order."""
    head: list[dict[str, Any]] = []
    tail: list[dict[str, Any]] = []
    for note in notes:
        (tail if sum(linked(note, kept) for kept in head) >= cap else head).append(note)
    return [n["id"] for n in head + tail]


async def prepare_spread(
    written: Written, emb: CachingEmbeddings, timing: Timing, counter: TokenCounter, ks: list[int]
) -> QuestionHook:
    """The conversation's turn order (whose neighbours, which session);
    returns the hook that records every setting's ranking per question."""
    from mnemo import arecall
    from mnemo.core import reciprocal_rank_fusion
    from mnemo.notes.recall import FUSION_CANDIDATES, FUSION_K

    turns = written.conv.turns
    place = {t.dia_id: i for i, t in enumerate(turns)}
    note_of: dict[str, str] = {}  # a turn -> the note credited for it
    for nid, covered in written.covers.items():
        for dia in covered:
            note_of.setdefault(dia, nid)

    def neighbours(nid: str) -> list[str]:
        """The notes of the turns just before and after ``nid``'s, in the same session."""
        out = []
        for i in sorted(place[d] for d in written.covers[nid]):
            for j in (i - 1, i + 1):
                if 0 <= j < len(turns) and turns[j].session == turns[i].session:
                    if (other := note_of.get(turns[j].dia_id)) and other != nid:
                        out.append(other)
        return out

    def sessions(note: dict[str, Any]) -> set[int]:
        return {turns[place[d]].session for d in written.covers[note["id"]]}

    groups: dict[str, Callable[[Any, Any], bool]] = {
        "session": lambda a, b: bool(sessions(a) & sessions(b)),
        "exchange": same_exchange,
    }
    limit = max(ks)

    async def per_question(q: Any, r: QuestionResult) -> None:
        hits = await arecall(written.store, written.user, q.question, limit=FUSION_CANDIDATES, margin=None)
        pool: list[dict[str, Any]] = [dict(n) for n in hits]
        ids: list[str] = [n["id"] for n in pool]
        for m, weight in NEIGHBOUR_GRID:
            ranked = ids
            if m:
                near = list(dict.fromkeys(x for nid in ids[:m] for x in neighbours(nid)))
                ranked = reciprocal_rank_fusion([ids, near], k=FUSION_K, weights=[1.0, weight])
            r.grids["neighbours"][(m, weight)] = [written.covers[nid] for nid in ranked[:limit]]
        for group, cap in DIVERSITY_GRID:
            ranked = ids if group == "none" else capped(pool, cap, groups[group])
            r.grids["diversity"][(group, cap)] = [written.covers[nid] for nid in ranked[:limit]]

    return per_question


def spread_tables(results: list[QuestionResult], ks: list[int]) -> dict[str, Any]:
    """``neighbours`` and ``diversity``: each against recall as it ships, with
    every setting's tune R@10 per category."""
    out = {
        "neighbours": grid_table(
            results,
            ks,
            "neighbours",
            NEIGHBOUR_GRID,
            lambda s: {"best_hits_followed": s[0], "weight": s[1]},
            shipped=(0, 0.0),
            baseline=(0, 0.0),
        ),
        "diversity": grid_table(
            results,
            ks,
            "diversity",
            DIVERSITY_GRID,
            lambda s: {"group": s[0], "cap": s[1]},
            shipped=("none", 0),
            baseline=("none", 0),
        ),
    }
    out["neighbours"]["tune_recall@10_by_category"] = category_rows(results, "neighbours", NEIGHBOUR_GRID)
    out["diversity"]["tune_recall@10_by_category"] = category_rows(results, "diversity", DIVERSITY_GRID)
    return out
