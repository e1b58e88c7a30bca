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
