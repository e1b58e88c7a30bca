"""The similarity a past case needs to be shown as an example
(``mnemo.episodes.cases.EPISODE_MIN_SCORE``), measured on a small labelled set.

``bench/data/episode_pairs.json``: 48 pairs (past request, new request,
similar or not), English and Chinese, written for mnemo; most dissimilar
pairs are hard negatives from the same shop ("purifier makes no air" vs "how
often do I change the filter"). Scores are what the store computes: cosine
of the new request embedded as a query and the past one as a passage
(multilingual-e5-small, which compresses scores into ~0.7-0.95).

The threshold maximises F0.5 (precision counts twice as much as recall: a
wrong example misleads, a missing one costs nothing but the example).

    .venv/bin/python -m bench.episode_threshold [--out bench/results]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

PAIRS = Path(__file__).parent / "data" / "episode_pairs.json"


def load_pairs(path: Path = PAIRS) -> list[dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8"))["pairs"]


def scores(pairs: list[dict[str, Any]], embeddings: Any = None) -> list[float]:
    if embeddings is None:
        from mnemo.stores.embeddings import embeddings
    queries = np.array([embeddings.embed_query(p["query"]) for p in pairs])
    cases = np.array(embeddings.embed_documents([p["case"] for p in pairs]))
    cos = (queries * cases).sum(1) / np.linalg.norm(queries, axis=1) / np.linalg.norm(cases, axis=1)
    return [round(float(x), 4) for x in cos]


def rates(pairs: list[dict[str, Any]], sims: list[float], threshold: float) -> dict[str, float]:
    tp = sum(1 for p, s in zip(pairs, sims, strict=True) if p["similar"] and s >= threshold)
    fp = sum(1 for p, s in zip(pairs, sims, strict=True) if not p["similar"] and s >= threshold)
    positives = sum(1 for p in pairs if p["similar"])
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / positives if positives else 0.0
    f05 = 1.25 * precision * recall / (0.25 * precision + recall) if precision + recall else 0.0
    return {
        "threshold": threshold,
        "precision": round(precision, 3),
        "recall": round(recall, 3),
        "false_positives": fp,
        "f0.5": round(f05, 3),
    }


def measure(pairs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    pairs = pairs or load_pairs()
    sims = scores(pairs)
    grid = [round(float(t), 3) for t in np.arange(0.80, 0.951, 0.005)]
    table = [rates(pairs, sims, t) for t in grid]
    best = max(table, key=lambda r: (r["f0.5"], r["threshold"]))
    return {
        "pairs": len(pairs),
        "best": best,
        "table": table,
        "scores": [{**p, "score": s} for p, s in zip(pairs, sims, strict=True)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("bench/results"))
    args = parser.parse_args()
    started = time.time()
    result = measure()
    from bench.common import meta, write_json

    result["meta"] = meta("episode-threshold", started)
    write_json(args.out / "episode_threshold.json", result)
    print(f"{'threshold':>10}{'precision':>11}{'recall':>8}{'FP':>4}{'F0.5':>7}")
    for row in result["table"]:
        print(
            f"{row['threshold']:>10}{row['precision']:>11}{row['recall']:>8}{row['false_positives']:>4}{row['f0.5']:>7}"
        )
    print(f"best (F0.5): {result['best']}")


if __name__ == "__main__":
    main()
