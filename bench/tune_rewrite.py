"""``python -m bench tune --only rewrite``: the chat model writes the search
queries for a question (issue 46), an attempt, bench-side, on demand.

The model of ``$MNEMO_MODEL`` (any ``init_chat_model`` provider; for a local
server, ``openai:NAME`` with ``OPENAI_BASE_URL``, e.g. ``python -m bench
serve-model``) is asked, with :data:`PROMPT` as its system message and the
question as the user's, for up to :data:`QUERIES` search queries, one a line.
Each is recalled as the question is (``arecall(margin=None)``,
``mnemo.notes.recall.FUSION_CANDIDATES`` notes) and the rankings join mnemo's by
reciprocal rank fusion, each with weight ``w``; ``w = 0`` is recall as it ships. Only questions of categories
1-4 are sent to the model (adversarial ones keep mnemo's ranking).

Without ``$MNEMO_MODEL`` the part reports ``model: null`` and ranks nothing.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from typing import Any

from bench.common import CachingEmbeddings, TokenCounter
from bench.locomo_ask import QuestionHook, QuestionResult
from bench.locomo_data import MAIN_CATEGORIES
from bench.locomo_write import Timing, Written
from bench.tune_stats import category_rows, grid_table

#: Queries of the model's reply that are recalled, at most.
QUERIES = 3
#: Characters of one query kept.
QUERY_CHARS = 300
#: Tokens of the model's reply, at most.
MAX_TOKENS = 80
#: Weight of each query's ranking in the fusion; 0.0 is recall as it ships.
REWRITE_GRID = [0.0, 0.25, 0.5, 1.0]
#: What the model is asked (its system message; the question is the user's message).
PROMPT = (
    "You search a long chat between two friends for the messages that answer a question about them. "
    "Write 3 short search queries, each for a different fact the answer needs (name the person and one specific "
    "thing, e.g. a hobby, a place, an event). One query per line, nothing else."
)


def queries(question: str, reply: str) -> list[str]:
    """The search queries of the model's ``reply``: one a line, list marks and
    quotes dropped, the question itself and repeats left out, at most
    :data:`QUERIES`, each cut at :data:`QUERY_CHARS`."""
    out: list[str] = []
    for line in reply.splitlines():
        line = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", line).strip().strip('"').strip()[:QUERY_CHARS]
        if line and line.casefold() != question.casefold() and line not in out:
            out.append(line)
    return out[:QUERIES]


def chat_model() -> Any:
    """The model of ``$MNEMO_MODEL`` at temperature 0, :data:`MAX_TOKENS` at most (capped
    as mnemo caps it, :func:`mnemo.models.build.cap_arguments`), or ``None`` without it."""
    name = os.environ.get("MNEMO_MODEL")
    if not name:
        return None
    from langchain.chat_models import init_chat_model

    from mnemo.models.build import cap_arguments

    return init_chat_model(name, temperature=0, timeout=120, max_retries=0, **cap_arguments(name, MAX_TOKENS))


#: Where the part takes its model (tests put a scripted one).
MODEL = chat_model


async def prepare_rewrite(
    written: Written, emb: CachingEmbeddings, timing: Timing, counter: TokenCounter, ks: list[int]
) -> QuestionHook:
    """The model (once per conversation); returns the hook that records every weight's ranking per question."""
    from langchain_core.messages import HumanMessage, SystemMessage

    from mnemo import arecall
    from mnemo.core import reciprocal_rank_fusion
    from mnemo.notes.recall import FUSION_CANDIDATES, FUSION_K

    limit = max(ks)
    model = MODEL()

    async def per_question(q: Any, r: QuestionResult) -> None:
        if model is None:
            return
        hits = await arecall(written.store, written.user, q.question, limit=FUSION_CANDIDATES, margin=None)
        base = [n["id"] for n in hits]
        extra: list[list[str]] = []
        if r.category in MAIN_CATEGORIES:
            start = time.perf_counter()
            # the sync client, in a thread: each conversation runs in its own event loop, and an
            # async client's pooled connections (langchain-openai shares one) outlive theirs
            reply = await asyncio.to_thread(model.invoke, [SystemMessage(PROMPT), HumanMessage(q.question)])
            timing["rewrite_model_s"] += time.perf_counter() - start
            for text in queries(q.question, str(reply.content)):
                hits = await arecall(written.store, written.user, text, limit=FUSION_CANDIDATES, margin=None)
                extra.append([n["id"] for n in hits])
        for weight in REWRITE_GRID:
            ranked = base
            if weight and extra:
                ranked = reciprocal_rank_fusion([base, *extra], k=FUSION_K, weights=[1.0] + [weight] * len(extra))
            r.grids["rewrite"][weight] = [written.covers[nid] for nid in ranked[:limit]]

    return per_question


def rewrite_tables(results: list[QuestionResult], ks: list[int]) -> dict[str, Any]:
    """``rewrite`` against recall as it ships, with every weight's tune R@10
    per category; ``model: null`` without ``$MNEMO_MODEL``."""
    if not any(r.grids.get("rewrite") for r in results):
        return {"rewrite": {"model": None, "needs": "MNEMO_MODEL (and OPENAI_BASE_URL for a local server)"}}
    table = grid_table(results, ks, "rewrite", REWRITE_GRID, lambda w: {"weight": w}, shipped=0.0, baseline=0.0)
    return {
        "rewrite": {
            "model": os.environ.get("MNEMO_MODEL"),
            "prompt": PROMPT,
            **table,
            "tune_recall@10_by_category": category_rows(results, "rewrite", REWRITE_GRID),
        }
    }
