"""LoCoMo retrieval: does the right memory reach the model, and at what token cost?

For every conversation, every dialog turn becomes a note of one user, written
through mnemo's own write path (:func:`mnemo.aremember_many`, one call per
turn, as the agent's ``write_memory`` does once per turn), so mnemo's dedupe,
fields and namespace rules apply; each question is then answered with mnemo's
own recall path. Methods compared in the same run, with the same embedding
model and the same note texts:

``mnemo``
    :func:`mnemo.arecall` with ``limit=max(k)`` and ``margin=None`` (no
    relevance cut): the ranking mnemo's recall produces (dense hits fused
    with BM25 over the user's notes, as the agent's ``recall_notes`` and
    ``load_memory`` do). Each turn's note carries its context: the turn
    before it in the same session (``contexts=`` of
    :func:`mnemo.aremember_many`), embedded beside the note's own text
    (:func:`mnemo.notes.model.indexed_text`).
``mnemo_no_context``
    the same, with the notes written without a context (text alone).
``mnemo_thresholded``
    the same call with mnemo's default relevance rule (dense hits at least
    ``RECALL_MARGIN`` above the median of the user's candidates in their
    script, :func:`mnemo.notes.recall.relevant_hits`; what ``recall_notes`` and
    ``load_memory`` keep): fewer notes, fewer tokens.
``memory_agent``
    LangChain's ``memory-agent`` template: the whole value
    ``{"content", "context"}`` embedded (index ``fields`` left at ``["$"]``),
    ``store.asearch(("memories", user), query=str([last messages]), limit=10)``,
    no threshold. Its recall@25 is capped by that ``limit=10``.
``bm25``
    ``bm25s`` over the same texts (English stopwords, no stemming; Chinese is
    segmented with ``jieba``), only documents sharing a term are returned.
``full_context``
    every turn in the prompt: recall 1 by definition; the token-cost reference.

``mnemo_snapshot`` (under ``token_cost``) is what ``load_memory`` would
really inject for the question with the agent's defaults
(:class:`nodes.context.Context`): the relevant notes plus
the most recent ones, rendered under the character budget; its recall is
reported once (it does not depend on k).

Recall of a question = fraction of its evidence turns (turn level) or
evidence sessions (session level: the sessions of the top-k retrieved turns)
found in the top k; averaged over the questions of a category; ``overall``
averages categories 1-4 question-weighted, category 5 (adversarial) is
reported apart. A note that dedupe merged several turns into counts for all
of them.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from bench.common import CachingEmbeddings, TokenCounter, display_path, meta, progress, write_json
from bench.locomo_ask import MEMORY_AGENT_LIMIT, Bm25Index, QuestionResult, Tuning, bm25_tokens, evaluate_conversation
from bench.locomo_data import ALL_CATEGORIES, CATEGORY_NAMES, TUNE_CONVERSATIONS, Conversation, load_locomo, truncate
from bench.locomo_tables import (
    evidence_summary,
    mean_main,
    method_tables,
    print_table,
    recall_table,
    snapshot_recall,
    split_tables,
)
from bench.locomo_write import Timing, stored_text, turn_contexts

#: What the other benchmarks take from here (the LoCoMo run's face).
__all__ = [
    "DRAGON_REFERENCE",
    "MEMORY_AGENT_LIMIT",
    "METHODS",
    "TUNE_CONVERSATIONS",
    "Bm25Index",
    "QuestionResult",
    "Tuning",
    "bm25_tokens",
    "run",
    "stored_text",
    "turn_contexts",
]

#: LoCoMo paper (Maharana et al., 2024), Table 3: DRAGON retriever, dialog
#: turns as the retrieval unit, all 10 conversations, all categories.
DRAGON_REFERENCE = {"recall@5": 0.567, "recall@10": 0.662, "recall@25": 0.767, "recall@50": 0.827}

#: The headline table's methods (``python -m bench locomo``); ``python -m bench
#: tune`` adds mnemo's ablations (:data:`bench.tune.ABLATIONS`).
METHODS = ("mnemo", "memory_agent", "bm25", "full_context")

_DESCRIPTIONS = {
    "mnemo": (
        "mnemo.arecall(limit=max k, margin=None) over notes written with mnemo.aremember_many, one call per turn"
    ),
    "memory_agent": (
        "LangChain memory-agent template: value {content, context} embedded whole (fields ['$']), "
        "asearch(query=str([question]), limit=10), no threshold; recall@k>10 is capped by the limit"
    ),
    "bm25": "bm25s, English stopwords, no stemming, jieba for Chinese; documents with no shared term are not returned",
    "full_context": "all turns in the prompt: recall 1 by definition; token-cost reference",
}


# --------------------------------------------------------------------------
# entry point


def run(
    data: Path,
    out: Path,
    *,
    ks: list[int],
    smoke: bool = False,
    note_format: str = "said",
    emb: CachingEmbeddings | None = None,
    counter: TokenCounter | None = None,
    tuning: Tuning | None = None,
) -> dict[str, Any]:
    """Run the LoCoMo benchmark and write ``out/locomo.json`` (with
    ``tuning``: its methods and grids too, into ``out/<tuning.name>.json``);
    returns the result."""
    started = time.time()
    ks = sorted(set(ks))
    conversations = load_locomo(data, note_format=note_format)
    if smoke:
        conversations = [truncate(conversations[0], sessions=2, questions=12)]
    if emb is None:
        from mnemo.stores.embeddings import embeddings as default_embeddings

        emb = CachingEmbeddings(default_embeddings)
    counter = counter or TokenCounter()

    timing: Timing = defaultdict(float)
    results, statuses, per_conversation = _evaluate_all(conversations, emb, ks, counter, timing, tuning)
    questions_total = Counter(q.category for c in conversations for q in c.questions)
    evaluated = Counter(r.category for r in results)
    names = METHODS + (tuning.methods if tuning else ())
    methods = method_tables(results, ks, names, {**_DESCRIPTIONS, **(tuning.descriptions if tuning else {})})

    from mnemo.notes import RECALL_MARGIN
    from mnemo.notes.model import DEDUPE_THRESHOLD
    from nodes.context import Context

    ctx = Context(user_id="x")
    result = {
        "benchmark": tuning.name if tuning else "locomo",
        "data": {
            "path": display_path(data),
            "conversations": len(conversations),
            "turns": sum(len(c.turns) for c in conversations),
            "smoke": smoke,
            "note_format": note_format,
        },
        "k": ks,
        "questions": {c: evaluated.get(c, 0) for c in ALL_CATEGORIES},
        "questions_total": {c: questions_total.get(c, 0) for c in ALL_CATEGORIES},
        "questions_without_evidence": {c: questions_total.get(c, 0) - evaluated.get(c, 0) for c in ALL_CATEGORIES},
        "categories": CATEGORY_NAMES,
        "evidence": evidence_summary(conversations),
        "methods": methods,
        "reference": {
            "name": "LoCoMo paper (Maharana et al., ACL 2024), Table 3, DRAGON, dialog turns, "
            "all 10 conversations, all categories",
            "turn": DRAGON_REFERENCE,
        },
        "mnemo_write": {
            "turns": sum(statuses.values()),
            "notes": statuses["stored"],
            "statuses": dict(statuses),
            "merged_turns": statuses["duplicate"] + statuses["refined"],
            "dedupe_threshold": DEDUPE_THRESHOLD,
            "recall_margin": RECALL_MARGIN,
        },
        "token_cost": {
            "tokenizer": counter.name,
            "unit": "mean tokens per question, categories 1-4",
            "full_context": mean_main(results, lambda r: r.full_context_tokens),
            "mnemo_snapshot": {
                "description": (
                    f"what load_memory injects with the agent's defaults: up to {ctx.recall_limit} notes "
                    f"at least {ctx.recall_margin} above the median of the user's notes in their script "
                    f"plus {ctx.recent_limit} most recent notes, "
                    f"{ctx.memory_char_budget}-character budget (the profile is empty here)"
                ),
                "tokens": mean_main(results, lambda r: r.snapshot_tokens),
                "notes_shown": mean_main(results, lambda r: r.snapshot_notes),
                "turn": snapshot_recall(results, "turn"),
                "session": snapshot_recall(results, "session"),
            },
            **{f"{m}@{k}": methods[m]["tokens"][f"recall@{k}"] for m in names if m != "full_context" for k in ks},
        },
        "split": split_tables(results, ks, names),
        **(tuning.tables(results, ks) if tuning else {}),
        "per_conversation": per_conversation,
        "embedding_cache": emb.stats(),
        "timing_s": {k: round(v, 1) for k, v in sorted(timing.items())},
    }
    name = tuning.name if tuning else "locomo"
    result["meta"] = meta(name, started, tokenizer=counter.name)
    write_json(out / f"{name}.json", result)
    print_table(result)
    return result


def _evaluate_all(
    conversations: list[Conversation],
    emb: CachingEmbeddings,
    ks: list[int],
    counter: TokenCounter,
    timing: Timing,
    tuning: Tuning | None,
) -> tuple[list[QuestionResult], Counter, dict[str, Any]]:
    """Every conversation evaluated: the per-question results, the write
    statuses, and a summary per conversation."""
    statuses: Counter = Counter()
    results: list[QuestionResult] = []
    per_conversation = {}
    for conv in progress(conversations, desc="LoCoMo conversations", unit="conv"):
        conv_results, conv_statuses = asyncio.run(evaluate_conversation(conv, emb, ks, counter, timing, tuning))
        results.extend(conv_results)
        statuses.update(conv_statuses)
        per_conversation[conv.sample_id] = {
            "turns": len(conv.turns),
            "sessions": len({t.session for t in conv.turns}),
            "notes": conv_statuses["stored"],
            "questions_evaluated": len(conv_results),
            f"mnemo_turn_recall@{ks[-1]}": recall_table(conv_results, "mnemo", "turn", [ks[-1]])[f"recall@{ks[-1]}"][
                "overall"
            ],
        }
    return results, statuses, per_conversation
