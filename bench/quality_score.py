"""The labelled set of ``python -m bench memory-quality`` and how a run is scored.

The input format is issue 42's (docs/bench.md#memory-quality):
``{"conversations": [{id, lang, turns, expect: {profile: {field: [str]}, notes: [[str]]},
forbid, forbid_profile, probes: [{ask, in_prompt}]}]}``, plus an optional
``split`` ("tune" / "held_out") and ``kind`` per conversation. Matching is a
case-insensitive substring test, any one of a list. What a run stored and the
probes' system prompts are kept in the result, so :func:`score` can score it
again (``--rescore``) against the same or a corrected set.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from bench.common import REPO_ROOT

#: The set in this repository (bench/data/; written for mnemo).
DEFAULT_SET = REPO_ROOT / "bench" / "data" / "memory_quality.json"
SPLITS = ("tune", "held_out")


def load_set(path: Path, split: str = "all") -> list[dict[str, Any]]:
    """The conversations of ``path`` in ``split`` (``"all"``: every one), checked
    against the format; a conversation without a ``split`` is in every split."""
    conversations = json.loads(path.read_text(encoding="utf-8"))["conversations"]
    seen: set[str] = set()
    for c in conversations:
        where = f"{path}: conversation {c.get('id')!r}"
        if not isinstance(c.get("id"), str) or c["id"] in seen:
            raise ValueError(f"{where}: an id is a string, unique in the set")
        seen.add(c["id"])
        if not c.get("turns") or not all(isinstance(t, str) and t for t in c["turns"]):
            raise ValueError(f"{where}: turns is a non-empty list of texts")
        expect = c.get("expect", {})
        lists = [*expect.get("profile", {}).values(), *expect.get("notes", []), c.get("forbid", [])]
        lists += [c.get("forbid_profile", []), *(p.get("in_prompt", []) for p in c.get("probes", []))]
        if not all(isinstance(x, list) and all(isinstance(s, str) and s for s in x) for x in lists):
            raise ValueError(f"{where}: every expected or forbidden value is a list of non-empty strings")
        if c.get("split", "tune") not in SPLITS:
            raise ValueError(f"{where}: split is one of {SPLITS}")
    return [c for c in conversations if split == "all" or c.get("split", split) == split]


def digest(path: Path) -> str:
    """The set's sha256 (which labels a result was scored against)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _has(text: str, alternatives: Iterable[str]) -> bool:
    folded = text.casefold()
    return any(a.casefold() in folded for a in alternatives)


def score_one(label: dict[str, Any], got: dict[str, Any]) -> dict[str, Any]:
    """What one conversation's stored memory and probe prompts got right and wrong.

    ``got`` is ``{profile: {field: value}, notes: [text], probes: [{ask, system_prompt}]}``."""
    profile = {k: str(v) for k, v in got["profile"].items()}
    expect = label.get("expect", {})
    right = [f for f, alts in expect.get("profile", {}).items() if _has(profile.get(f, ""), alts)]
    wrong = {f: profile.get(f) for f in expect.get("profile", {}) if f not in right}
    notes = [str(n) for n in got["notes"]]
    recalled = [any(_has(n, alts) for n in notes) for alts in expect.get("notes", [])]
    values = [*profile.values(), *notes]
    forbidden = sorted({f for f in label.get("forbid", []) if any(_has(v, [f]) for v in values)})
    forbidden += sorted({f for f in label.get("forbid_profile", []) if any(_has(v, [f]) for v in profile.values())})
    prompts = {p["ask"]: p.get("system_prompt") or "" for p in got["probes"]}
    reached = [_has(prompts.get(p["ask"], ""), p["in_prompt"]) for p in label.get("probes", []) if p["in_prompt"]]
    return {
        "profile_right": right,
        "profile_wrong": wrong,
        "notes_expected": len(recalled),
        "notes_recalled": sum(recalled),
        "notes_missed": [alts for alts, ok in zip(expect.get("notes", []), recalled, strict=True) if not ok],
        "forbidden_stored": forbidden,
        "probes": len(reached),
        "probes_reached": sum(reached),
    }


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 3) if b else None


def figures(labels: Sequence[dict[str, Any]], scored: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The metrics of issue 42 over ``scored`` (each with its ``score`` and
    ``turns``): profile accuracy (expected fields right), note recall, false
    memories (conversations with a forbidden string stored), reach (probes
    whose fact is in the prompt), model requests and seconds per turn."""
    by_id = {c["id"]: c for c in labels}
    fields = sum(len(by_id[s["id"]].get("expect", {}).get("profile", {})) for s in scored)
    turns = [t for s in scored for t in s["turns"]]
    false = [s["id"] for s in scored if s["score"]["forbidden_stored"]]
    notes = sum(s["score"]["notes_expected"] for s in scored)
    probes = sum(s["score"]["probes"] for s in scored)
    return {
        "conversations": len(scored),
        "profile_fields": fields,
        "profile_accuracy": _ratio(sum(len(s["score"]["profile_right"]) for s in scored), fields),
        "notes_expected": notes,
        "note_recall": _ratio(sum(s["score"]["notes_recalled"] for s in scored), notes),
        "false_memories": len(false),
        "false_memory_rate": _ratio(len(false), len(scored)),
        "false_memory_ids": false,
        "probes": probes,
        "reach": _ratio(sum(s["score"]["probes_reached"] for s in scored), probes),
        "turns": len(turns),
        "requests_per_turn": _ratio(sum(t["requests"] for t in turns), len(turns)),
        "seconds_per_turn": _ratio(sum(t["seconds"] for t in turns), len(turns)),
    }


def score(labels: Sequence[dict[str, Any]], conversations: list[dict[str, Any]]) -> dict[str, Any]:
    """Score every conversation (its ``score`` is set in place) and return the
    figures per split (``all``, ``tune``, ``held_out``) and language (``all``, ``en``, ...)."""
    by_id = {c["id"]: c for c in labels}
    missing = [c["id"] for c in conversations if c["id"] not in by_id]
    if missing:
        raise ValueError(f"conversations not in the labelled set: {missing}")
    for c in conversations:
        c["score"] = score_one(by_id[c["id"]], c)
    out: dict[str, Any] = {}
    for split in ("all", *SPLITS):
        chosen = [c for c in conversations if split == "all" or c.get("split") == split]
        if not chosen:
            continue
        langs = sorted({c["lang"] for c in chosen})
        out[split] = {"all": figures(labels, chosen)}
        out[split].update({lang: figures(labels, [c for c in chosen if c["lang"] == lang]) for lang in langs})
    return out


def rescore(result_path: Path, data: Path) -> dict[str, Any]:
    """Score a results file again against the set at ``data`` (a corrected label,
    a new metric) without talking to any model; the file is rewritten."""
    from bench.common import display_path, write_json

    result = json.loads(result_path.read_text(encoding="utf-8"))
    from bench.prompt_cache import add_cache_figures

    result["figures"] = add_cache_figures(
        score(load_set(data), result["conversations"]), result.get("model_requests", [])
    )
    result["meta"]["data"] = {**result["meta"].get("data", {}), "path": display_path(data), "sha256": digest(data)}
    write_json(result_path, result)
    return result


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def report(result: dict[str, Any]) -> str:
    """The figures as the markdown table of docs/bench.md."""
    meta = result["meta"]
    lines = [
        f"model `{meta['model']}`, commit `{meta['commit']}`, set `{meta['data']['path']}` "
        f"({meta['data']['sha256'][:12]})",
        "",
        "| split | lang | conv. | profile accuracy | note recall | false memories | reach | requests/turn | s/turn |",
        "|---" * 9 + "|",
    ]
    for split, langs in result["figures"].items():
        for lang, f in langs.items():
            lines.append(
                f"| {split} | {lang} | {f['conversations']} | {_cell(f['profile_accuracy'])} | "
                f"{_cell(f['note_recall'])} | {f['false_memories']} | {_cell(f['reach'])} | "
                f"{_cell(f['requests_per_turn'])} | {_cell(f['seconds_per_turn'])} |"
            )
    return "\n".join(lines)
