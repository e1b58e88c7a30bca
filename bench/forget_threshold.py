"""How ``forget_note(about=...)`` matches (``mnemo.notes.forget.FORGET_RULES``),
measured on ``bench/data/forget_requests.json``: hand-written English and Chinese
requests against users' notes (some saved with a context), each labelled with the
notes it names (none for a near miss).

Every request is replayed through :func:`mnemo.notes.forget.decide` (the
production rule) on each note's similarity by its text alone, for each
threshold and gap of the grid, per script of the request. A request is *exact*
when it deletes what it names (nothing, for a near miss), *wrong* when it
deletes a note it does not name (data loss), *asked* when it deletes nothing
though it names a note (the tool answers with the candidates), *partial* when it
deletes some of the notes it names and nothing else. The rule of each script is
chosen on the tune users only (:func:`choose`); the held-out users (the file's
``held_out``) are reported beside it, with the former rule (the store's score,
text or text in context, at or above 0.80 and within 0.03 of the best). At the
chosen rules the real path (:func:`mnemo.notes.aforget_about` on a fresh
in-memory store per request, the notes written with their contexts) is run as a
check of the replay.

    .venv/bin/python -m bench.forget_threshold [--out bench/results]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.common import REPO_ROOT, CachingEmbeddings, display_path, meta, write_json

REQUESTS = REPO_ROOT / "bench" / "data" / "forget_requests.json"
SPLITS = ("tune", "held_out")
SCRIPTS = ("LATIN", "CJK")
THRESHOLDS = [round(0.78 + 0.005 * i, 3) for i in range(35)]  # 0.78 .. 0.95
GAPS = [round(0.005 * i, 3) for i in range(17)]  # 0 .. 0.08
OUTCOMES = ("exact", "wrong", "asked", "partial")
#: The rule :func:`choose` applies to the tune requests of one script.
RULE = (
    "no tune request deletes a note it does not name; then the most tune requests exact; "
    "then the highest threshold, then the widest gap (the fewest deletions near an edge)"
)
#: What forget matched by before issue 56 (reported beside, never chosen on).
FORMER = {"min_score": 0.80, "margin": 0.03, "scores": "the store's: the better of the text and the text in context"}


def outcome(deleted: set[str], named: set[str]) -> str:
    if deleted - named:
        return "wrong"
    if deleted == named:
        return "exact"
    return "partial" if deleted else "asked"


def score_cases(emb: CachingEmbeddings, data: dict[str, Any]) -> list[dict[str, Any]]:
    """Each request with its user's notes scored by their text alone (``text``)
    and as the store scores them (``store``: the better of text and text in context)."""
    from mnemo.core import script_of
    from mnemo.notes.model import indexed_text

    held_out = set(data["held_out"])
    notes = {u: [(n["text"], indexed_text(n["text"], n.get("context"))) for n in ns] for u, ns in data["users"].items()}
    emb.warm("p", {t for ns in notes.values() for pair in ns for t in pair}, desc="notes (passages)")
    emb.warm("q", {c["about"] for c in data["cases"]}, desc="requests (queries)")
    rows = []
    for case in data["cases"]:
        q, own = emb.vector("q", case["about"]), notes[case["user"]]
        pairs = [(float(q @ emb.vector("p", text)), float(q @ emb.vector("p", full))) for text, full in own]
        scored = [(s, max(s, f), text) for (s, f), (text, _) in zip(pairs, own, strict=True)]
        rows.append(
            {
                **case,
                "split": "held_out" if case["user"] in held_out else "tune",
                "script": script_of(case["about"]),
                "text": sorted(((round(s, 4), t) for s, _, t in scored), reverse=True),
                "store": sorted(((round(s, 4), t) for _, s, t in scored), reverse=True),
            }
        )
    return rows


def deleted_by(row: dict[str, Any], min_score: float, gap: float) -> set[str]:
    from mnemo.notes.forget import ForgetRule, decide

    n, decision = decide([s for s, _ in row["text"]], ForgetRule(min_score, gap))
    return {t for _, t in row["text"][:n]} if decision == "clear" else set()


def former_deleted(row: dict[str, Any]) -> set[str]:
    hits = [(s, t) for s, t in row["store"][:5] if s >= FORMER["min_score"]]
    return {t for s, t in hits if s >= hits[0][0] - FORMER["margin"]} if hits else set()


def tally(rows: list[dict[str, Any]], deleted: Any) -> dict[str, int]:
    counts = Counter(outcome(deleted(r), set(r["forget"])) for r in rows)
    return {o: counts.get(o, 0) for o in OUTCOMES} | {"requests": len(rows)}


def sweep(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per script, threshold and gap: the outcomes per split."""
    table = []
    for script in SCRIPTS:
        part = {s: [r for r in rows if r["script"] == script and r["split"] == s] for s in SPLITS}
        for t in THRESHOLDS:
            for g in GAPS:
                table.append(
                    {"script": script, "min_score": t, "gap": g}
                    | {s: tally(part[s], lambda r, t=t, g=g: deleted_by(r, t, g)) for s in SPLITS}
                )
    return table


def choose(table: list[dict[str, Any]], script: str) -> dict[str, Any] | None:
    """:data:`RULE` on the tune columns of ``script``'s rows of ``table``."""
    safe = [r for r in table if r["script"] == script and r["tune"]["wrong"] == 0]
    if not safe:
        return None
    return max(safe, key=lambda r: (r["tune"]["exact"], r["min_score"], r["gap"]))


async def real_path(rows: list[dict[str, Any]], users: dict[str, Any], emb: CachingEmbeddings) -> dict[str, int]:
    """:func:`mnemo.notes.aforget_about` with the shipped rules, a fresh store per
    request: requests whose deletions equal the replay's."""
    from langgraph.store.memory import InMemoryStore

    from mnemo import User
    from mnemo.notes import aforget_about, alist_notes, aremember_many
    from mnemo.notes.forget import FORGET_RULES
    from mnemo.stores import index_config

    agree = 0
    for row in rows:
        store = InMemoryStore(index=index_config(emb))  # type: ignore[arg-type]  # IndexConfig is a TypedDict
        user = User.of("bench-forget")
        notes = users[row["user"]]
        await aremember_many(store, user, [n["text"] for n in notes], contexts=[n.get("context") for n in notes])
        before = {n["text"] for n in await alist_notes(store, user)}
        await aforget_about(store, user, row["about"])
        gone = before - {n["text"] for n in await alist_notes(store, user)}
        rule = FORGET_RULES[row["script"]]
        agree += gone == deleted_by(row, rule.min_score, rule.gap)
    return {"requests": len(rows), "agreeing_with_replay": agree}


def measure(emb: CachingEmbeddings | None = None, path: Path = REQUESTS) -> dict[str, Any]:
    from mnemo.notes.forget import FORGET_RULES

    if emb is None:
        from mnemo.stores.embeddings import embeddings as default_embeddings

        emb = CachingEmbeddings(default_embeddings)
    data = json.loads(path.read_text(encoding="utf-8"))
    rows = score_cases(emb, data)
    table = sweep(rows)
    chosen = {s: choose(table, s) for s in SCRIPTS}
    by = {s: [r for r in rows if r["script"] == s] for s in SCRIPTS}
    return {
        "file": display_path(path),
        "requests": {s: {sp: sum(r["split"] == sp for r in by[s]) for sp in SPLITS} for s in SCRIPTS},
        "kinds": dict(Counter(r["kind"] for r in rows)),
        "rule": RULE,
        "chosen_on_tune": chosen,
        "shipped": {s: {"min_score": r.min_score, "gap": r.gap} for s, r in FORGET_RULES.items()},
        "former": FORMER
        | {s: {sp: tally([r for r in by[s] if r["split"] == sp], former_deleted) for sp in SPLITS} for s in SCRIPTS},
        "real_path_check": asyncio.run(real_path(rows, data["users"], emb)),
        # the sweep through each chosen rule (the whole grid is recomputed in seconds)
        "sweep": [
            r
            for r in table
            if (c := chosen[r["script"]]) is not None and (r["min_score"] == c["min_score"] or r["gap"] == c["gap"])
        ],
        "rows": [{**r, "text": r["text"][:3], "store": r["store"][:3]} for r in rows],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("bench/results"))
    args = parser.parse_args()
    started = time.time()
    result = measure()
    result["meta"] = meta("forget-threshold", started)
    write_json(args.out / "forget_threshold.json", result)
    print(f"rule: {RULE}")
    for script in SCRIPTS:
        c = result["chosen_on_tune"][script]
        print(f"{script}: chosen {c and (c['min_score'], c['gap'])}")
        print(f"  tune {c and c['tune']}; held out {c and c['held_out']}")
        print(f"  former: tune {result['former'][script]['tune']}; held out {result['former'][script]['held_out']}")
    print(f"real path agrees with the replay: {result['real_path_check']}")


if __name__ == "__main__":
    main()
