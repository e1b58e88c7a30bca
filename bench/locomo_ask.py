"""A LoCoMo conversation asked (:mod:`bench.locomo`): its turns written
(:mod:`bench.locomo_write`), then every question ranked by every headline
method (mnemo, memory-agent, BM25), with what ``load_memory`` would inject
and what ``python -m bench tune`` adds (:class:`Tuning`).
"""

from __future__ import annotations

import re
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from langgraph.store.memory import InMemoryStore

from bench.common import CachingEmbeddings, TokenCounter, progress
from bench.locomo_data import ALL_CATEGORIES, Conversation
from bench.locomo_write import Timing, Written, stored_text, turn_contexts, warm_cache, write_memory_agent, write_mnemo

#: The memory-agent template's search limit.
MEMORY_AGENT_LIMIT = 10


# --------------------------------------------------------------------------
# BM25


_WORD = re.compile(r"(?u)\b\w\w+\b")
_CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")


def bm25_tokens(text: str) -> list[str]:
    """Lower-cased words minus English stopwords; runs of Chinese characters
    are segmented with jieba (BM25 on unsegmented Chinese sees one "word"
    per sentence and matches nothing)."""
    from bm25s.stopwords import STOPWORDS_EN

    folded = text.casefold()
    tokens: list[str] = []
    runs = _CJK_RUN.findall(folded)
    if runs:
        import logging

        import jieba

        jieba.setLogLevel(logging.WARNING)
        for run in runs:
            tokens.extend(w for w in jieba.lcut(run) if w.strip())
        folded = _CJK_RUN.sub(" ", folded)
    stop = set(STOPWORDS_EN)
    tokens.extend(w for w in _WORD.findall(folded) if w not in stop)
    return tokens


class Bm25Index:
    """``bm25s`` over a list of texts; :meth:`search` returns indices, best first."""

    def __init__(self, texts: list[str]) -> None:
        import bm25s

        self.size = len(texts)
        self.retriever = bm25s.BM25()
        if texts:  # bm25s cannot index an empty corpus (a conversation without turns)
            self.retriever.index([bm25_tokens(t) for t in texts], show_progress=False)

    def search(self, query: str | list[str], k: int) -> list[int]:
        """The best ``k`` texts for ``query`` (a text, or its tokens already)."""
        tokens = bm25_tokens(query) if isinstance(query, str) else query
        if not tokens or not self.size:
            return []
        docs, scores = self.retriever.retrieve([tokens], k=min(k, self.size), show_progress=False)
        return [int(d) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]


@dataclass
class QuestionResult:
    category: str
    evidence: frozenset[str]
    sessions: frozenset[int]
    conversation: str = ""
    #: method -> ranked list of retrieved items, each the set of turns it covers
    ranked: dict[str, list[frozenset[str]]] = field(default_factory=dict)
    #: method -> k -> tokens of the top-k items as they would be injected
    tokens: dict[str, dict[int, int]] = field(default_factory=dict)
    #: mnemo's ranking as note ids and texts (what a second round starts from)
    mnemo_notes: list[tuple[str, str]] = field(default_factory=list)
    #: grid name -> setting -> mnemo's ranking with that setting (``python -m bench tune``)
    grids: dict[str, dict[Any, list[frozenset[str]]]] = field(default_factory=lambda: defaultdict(dict))
    #: mnemo_snapshot: turns covered by what load_memory would inject, and its tokens
    snapshot_covers: frozenset[str] = frozenset()
    snapshot_tokens: int = 0
    snapshot_notes: int = 0
    full_context_tokens: int = 0


def render_notes(notes: list[tuple[str, str]]) -> str:
    """Note lines as mnemo's prompt shows them (``render_snapshot``)."""
    return "\n".join(f"- {text}  (note {nid[:8]})" for nid, text in notes)


def render_memory_agent(items: list) -> str:
    """The memory block of the memory-agent template's system prompt."""
    if not items:
        return ""
    lines = "\n".join(f"[{it.key}]: {it.value} (similarity: {it.score})" for it in items)
    return f"\n<memories>\n{lines}\n</memories>"


def render_full_context(conv: Conversation) -> str:
    by_session: dict[int, list[str]] = defaultdict(list)
    for t in conv.turns:
        by_session[t.session].append(t.text)
    return "\n".join(
        f"Session {s} ({conv.session_dates.get(s, '')}):\n" + "\n".join(lines)
        for s, lines in sorted(by_session.items())
    )


#: What ``python -m bench tune`` runs for one question, beside the headline methods.
QuestionHook = Callable[[Any, QuestionResult], Awaitable[None]]


@dataclass(frozen=True)
class Tuning:
    """What ``python -m bench tune`` adds to the headline run (:mod:`bench.tune`)."""

    name: str  # the result file's stem
    methods: tuple[str, ...]  # beside METHODS
    descriptions: dict[str, str]
    #: once per conversation, after the headline writes: returns the per-question hook
    prepare: Callable[[Written, CachingEmbeddings, Timing, TokenCounter, list[int]], Awaitable[QuestionHook]]
    #: the grids' tables, from every question's result
    tables: Callable[[list[QuestionResult], list[int]], dict[str, Any]]


async def evaluate_conversation(
    conv: Conversation,
    emb: CachingEmbeddings,
    ks: list[int],
    counter: TokenCounter,
    timing: Timing,
    tuning: Tuning | None = None,
) -> tuple[list[QuestionResult], Counter]:
    """Write the conversation through mnemo and through the memory-agent
    layout, then retrieve for every question with every method (and what
    ``tuning`` adds)."""
    from mnemo import User

    user = User.of(f"locomo-{conv.sample_id}")
    texts = [stored_text(t.text) for t in conv.turns]
    contexts = turn_contexts(conv, texts)
    questions = [q for q in conv.questions if q.evidence and q.category in ALL_CATEGORIES]
    agent_queries = [str([q.question]) for q in questions]
    warm_cache(conv, emb, texts, contexts, questions, agent_queries, timing)
    statuses: Counter = Counter()
    store, covers = await write_mnemo(conv, texts, contexts, user, emb, statuses, timing)
    written = Written(
        conv=conv,
        user=user,
        texts=texts,
        contexts=contexts,
        store=store,
        covers=covers,
        statuses=statuses,
        agent_store=InMemoryStore(),
        agent_ns=("memories", user.label),
        dia_of_key={},
    )
    await write_memory_agent(conv, texts, emb, written, timing)
    start = time.perf_counter()
    bm25 = Bm25Index(texts)
    timing["bm25_index_s"] += time.perf_counter() - start
    hook = await tuning.prepare(written, emb, timing, counter, ks) if tuning else None

    full_tokens = counter.count(render_full_context(conv))
    results: list[QuestionResult] = []
    for q, agent_query in zip(
        progress(questions, desc=f"{conv.sample_id}: questions asked", unit="q", leave=False),
        agent_queries,
        strict=False,
    ):
        r = QuestionResult(
            q.category,
            frozenset(q.evidence),
            frozenset(q.sessions),
            conversation=conv.sample_id,
            full_context_tokens=full_tokens,
        )
        await _retrieve(q, agent_query, written, bm25, r, ks, counter, timing)
        await _snapshot(q, user, written, r, counter)
        if hook is not None:
            await hook(q, r)
        results.append(r)
    return results, written.statuses


async def _retrieve(
    q: Any,
    agent_query: str,
    written: Written,
    bm25: Bm25Index,
    r: QuestionResult,
    ks: list[int],
    counter: TokenCounter,
    timing: Timing,
) -> None:
    """Rank the turns for ``q`` with every headline method; record the ranks and tokens in ``r``."""
    from mnemo import arecall

    max_k = max(ks)
    t0 = time.perf_counter()
    notes = await arecall(written.store, written.user, q.question, limit=max_k, margin=None)
    t1 = time.perf_counter()
    timing["mnemo_recall_s"] += t1 - t0
    items = await written.agent_store.asearch(written.agent_ns, query=agent_query, limit=MEMORY_AGENT_LIMIT)
    t2 = time.perf_counter()
    timing["memory_agent_search_s"] += t2 - t1
    lexical = bm25.search(q.question, max_k)
    timing["bm25_search_s"] += time.perf_counter() - t2

    r.mnemo_notes = [(n["id"], n["text"]) for n in notes]
    record_notes(r, "mnemo", r.mnemo_notes, written.covers, ks, counter)
    record_agent(r, "memory_agent", items, written, ks, counter)
    r.ranked["bm25"] = [frozenset({written.conv.turns[i].dia_id}) for i in lexical]
    r.tokens["bm25"] = {k: counter.count("\n".join(f"- {written.texts[i]}" for i in lexical[:k])) for k in ks}
    r.tokens["full_context"] = {k: r.full_context_tokens for k in ks}


def record_notes(
    r: QuestionResult,
    method: str,
    notes: list[tuple[str, str]],
    covers: dict[str, frozenset[str]],
    ks: list[int],
    counter: TokenCounter,
) -> None:
    """A mnemo method's ranking (note ids and texts, best first) and its tokens at every k, into ``r``."""
    r.ranked[method] = [covers[nid] for nid, _ in notes]
    r.tokens[method] = {k: counter.count(render_notes(notes[:k])) for k in ks}


def record_agent(
    r: QuestionResult, method: str, items: list, written: Written, ks: list[int], counter: TokenCounter
) -> None:
    """A memory-agent layout's search results and their tokens at every k, into ``r``."""
    r.ranked[method] = [frozenset({written.dia_of_key[it.key]}) for it in items]
    r.tokens[method] = {k: counter.count(render_memory_agent(items[:k])) for k in ks}


async def _snapshot(q: Any, user: Any, written: Written, r: QuestionResult, counter: TokenCounter) -> None:
    """What load_memory would inject for ``q``, with the agent's defaults."""
    from mnemo.turn import aload_snapshot, render_snapshot
    from mnemo.turn.snapshot import fit_snapshot
    from nodes.context import Context

    ctx = Context(user_id=user.id)
    snapshot = await aload_snapshot(
        written.store,
        user,
        q.question,
        recall_limit=ctx.recall_limit,
        recent_limit=ctx.recent_limit,
        recall_margin=ctx.recall_margin,
    )
    rendered = render_snapshot(snapshot, char_budget=ctx.memory_char_budget)
    fitted = fit_snapshot(snapshot, char_budget=ctx.memory_char_budget)  # the notes in `rendered`
    shown = fitted["relevant"] + fitted["recent"]
    r.snapshot_covers = frozenset().union(*(written.covers[n["id"]] for n in shown)) if shown else frozenset()
    r.snapshot_tokens = counter.count(rendered)
    r.snapshot_notes = len(shown)
