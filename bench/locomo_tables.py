"""The LoCoMo benchmark's arithmetic (:mod:`bench.locomo`): recall of a
question at k (turn or session level), per category and ``overall``
(categories 1-4, question-weighted), per method, on the tune conversations
apart from the held-out ones, and the table printed at the end of a run.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from bench.locomo_ask import MEMORY_AGENT_LIMIT, QuestionResult
from bench.locomo_data import ALL_CATEGORIES, MAIN_CATEGORIES, TUNE_CONVERSATIONS, Conversation


def recall_of(evidence: frozenset, covered: set) -> float:
    return len(evidence & covered) / len(evidence)


def recall_table(
    results: list[QuestionResult], method: str, level: str, ks: list[int]
) -> dict[str, dict[str, float | None]]:
    """``{"recall@k": {"overall": x, "1": x, ..., "5": x}}`` for one method and level."""
    out: dict[str, dict[str, float | None]] = {}
    for k in ks:
        per_cat: dict[str, list[float]] = defaultdict(list)
        for r in results:
            if method == "full_context":
                value = 1.0  # every turn is in the prompt
            else:
                turns: set[str] = set().union(*r.ranked[method][:k])
                if level == "turn":
                    value = recall_of(r.evidence, turns)
                else:
                    value = recall_of(r.sessions, {int(d[1:].split(":")[0]) for d in turns})
            per_cat[r.category].append(value)
        row = {"overall": mean_of([v for c in MAIN_CATEGORIES for v in per_cat[c]])}
        row.update({c: mean_of(per_cat[c]) for c in ALL_CATEGORIES})
        out[f"recall@{k}"] = row
    return out


def mean_of(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def mean_main(results: list[QuestionResult], value) -> float | None:
    vals = [value(r) for r in results if r.category in MAIN_CATEGORIES]
    return round(sum(vals) / len(vals), 1) if vals else None


def snapshot_recall(results: list[QuestionResult], level: str) -> dict[str, float | None]:
    per_cat: dict[str, list[float]] = defaultdict(list)
    for r in results:
        if level == "turn":
            per_cat[r.category].append(recall_of(r.evidence, set(r.snapshot_covers)))
        else:
            per_cat[r.category].append(recall_of(r.sessions, {int(d[1:].split(":")[0]) for d in r.snapshot_covers}))
    row = {"overall": mean_of([v for c in MAIN_CATEGORIES for v in per_cat[c]])}
    row.update({c: mean_of(per_cat[c]) for c in ALL_CATEGORIES})
    return row


def method_tables(
    results: list[QuestionResult], ks: list[int], names: tuple[str, ...], descriptions: dict[str, str]
) -> dict[str, Any]:
    """Recall at every k, turn and session level, and tokens, per method."""
    methods: dict[str, Any] = {}
    for m in names:
        methods[m] = {
            "turn": recall_table(results, m, "turn", ks),
            "session": recall_table(results, m, "session", ks),
            "tokens": {f"recall@{k}": mean_main(results, lambda r, m=m, k=k: r.tokens[m][k]) for k in ks},
            "description": descriptions[m],
        }
        if m != "full_context":
            methods[m]["items_returned"] = {
                f"recall@{k}": mean_main(results, lambda r, m=m, k=k: len(r.ranked[m][:k])) for k in ks
            }
    methods["memory_agent"]["limit"] = MEMORY_AGENT_LIMIT
    return methods


def split_tables(results: list[QuestionResult], ks: list[int], names: tuple[str, ...]) -> dict[str, Any]:
    """Turn-level recall of every method on the conversations settings may be
    chosen on (:data:`TUNE_CONVERSATIONS`) and on the others, held out."""
    parts = {
        "tune": [r for r in results if r.conversation in TUNE_CONVERSATIONS],
        "report": [r for r in results if r.conversation not in TUNE_CONVERSATIONS],
    }
    out: dict[str, Any] = {
        "rule": "settings are chosen on the tune conversations only; report is held out",
        "tune_conversations": sorted({r.conversation for r in parts["tune"]}),
        "report_conversations": sorted({r.conversation for r in parts["report"]}),
    }
    for name, part in parts.items():
        out[name] = {
            "questions": sum(1 for r in part if r.category in MAIN_CATEGORIES),
            "turn": {m: recall_table(part, m, "turn", ks) for m in names},
            "snapshot_turn": snapshot_recall(part, "turn"),
        }
    return out


def evidence_summary(conversations: list[Conversation]) -> dict[str, Any]:
    """How many evidence ids the questions cite, and how many matched a turn."""
    unmatched = [u for c in conversations for q in c.questions for u in q.unmatched]
    return {
        "ids": sum(len(q.evidence) + len(q.unmatched) for c in conversations for q in c.questions),
        "matched": sum(len(q.evidence) for c in conversations for q in c.questions),
        "unmatched": len(unmatched),
        "unmatched_ids": unmatched[:50],
    }


def _pct(x: float | None) -> str:
    return "   -" if x is None else f"{100 * x:5.1f}"


def print_table(result: dict[str, Any]) -> None:
    """Recall@k overall (categories 1-4), ours beside the published reference."""
    ks = result["k"]
    questions = sum(result["questions"][c] for c in MAIN_CATEGORIES)
    print(f"\nLoCoMo turn-level recall@k, categories 1-4 ({questions} questions)")
    print(f"{'method':<22}" + "".join(f"{'R@' + str(k):>8}" for k in ks) + f"{'tokens@' + str(ks[-1]):>12}")
    for m, row in result["methods"].items():
        print(
            f"{m:<22}"
            + "".join(f"{_pct(row['turn'][f'recall@{k}']['overall']):>8}" for k in ks)
            + f"{row['tokens'][f'recall@{ks[-1]}'] or 0:>12.0f}"
        )
    ref = result["reference"]["turn"]
    for name, grid in result.items():
        if isinstance(grid, dict) and "chosen_on_tune" in grid:
            print(f"{name}: chosen on the tune conversations {grid['chosen_on_tune']}, shipped {grid['shipped']}")
    print(f"{'DRAGON (paper, all cat.)':<22}" + "".join(f"{_pct(ref.get(f'recall@{k}')):>8}" for k in ks))
    snap = result["token_cost"]["mnemo_snapshot"]
    print(
        f"mnemo snapshot as injected: turn recall {_pct(snap['turn']['overall'])}, {snap['tokens']} tokens "
        f"vs full context {result['token_cost']['full_context']} ({result['token_cost']['tokenizer'].split(';')[0]})\n"
    )
