"""mnemo.stores.embeddings: the bundled embedder's async batch path, and the
passages a marked query leaves for the put that follows."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from mnemo.core import MAX_EMBED_CHARS
from mnemo.stores import passage_query
from mnemo.stores.embeddings import LocalE5Embeddings

TEXTS = [
    "The user is allergic to peanuts.",
    "用户住在苏州。",
    "The user's daughter's school starts at 8:15 on Mondays, and on Fridays at 9.",
    "The user prefers short answers.",
    "The user has two cats, Miso and Tofu.",
]


async def test_a_batch_spread_over_threads_keeps_the_order_and_the_vectors():
    embedder = LocalE5Embeddings()
    together = embedder.embed_documents(TEXTS)
    spread = await embedder.aembed_documents(TEXTS)
    assert len(spread) == len(TEXTS)
    assert np.array_equal(np.asarray(spread), np.asarray(together))
    # each text's own vector, not a neighbour's
    assert np.array_equal(np.asarray(spread[3]), np.asarray(embedder.embed_documents([TEXTS[3]])[0]))


async def test_each_core_embeds_a_share_of_the_batch_in_its_own_thread(monkeypatch):
    calls: list[tuple[list[str], int]] = []

    class Model:
        def passage(self, texts):
            calls.append((list(texts), threading.get_ident()))
            return np.zeros((len(texts), 384))

    monkeypatch.setattr("mnemo.stores.embeddings.os.cpu_count", lambda: 2)
    embedder = LocalE5Embeddings()
    monkeypatch.setattr(embedder, "_get_model", lambda: Model())
    assert len(await embedder.aembed_documents(TEXTS)) == len(TEXTS)
    assert sorted(c[0] for c in calls) == [TEXTS[:3], TEXTS[3:]]
    assert threading.get_ident() not in {c[1] for c in calls}  # never on the event loop's thread

    calls.clear()
    await embedder.aembed_documents(TEXTS[:1])
    assert [c[0] for c in calls] == [TEXTS[:1]]

    calls.clear()
    threaded = LocalE5Embeddings(num_threads=2)  # the engine's own threads: one call for the batch
    monkeypatch.setattr(threaded, "_get_model", lambda: Model())
    await threaded.aembed_documents(TEXTS)
    assert [c[0] for c in calls] == [TEXTS]


def test_the_shipped_embedder_runs_each_call_on_the_calling_thread_alone():
    # A fresh process: the engine's thread count is fixed when it loads. Two
    # threads per call would leave an OpenMP worker thread behind.
    probe = (
        "import os\n"
        "from mnemo.stores.embeddings import embeddings as e\n"
        "before = set(os.listdir('/proc/self/task'))\n"
        "e.embed_documents(['a note to embed ' * 20])\n"
        "print(len(set(os.listdir('/proc/self/task')) - before))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "0", out


class HashModel:
    """A model of distinct vectors per text and kind, each call recorded."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []
        self.lock = threading.Lock()

    @staticmethod
    def vector(kind: str, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(f"{kind}:{text}".encode()).digest()[:8], "big")
        return np.random.default_rng(seed).standard_normal(384).astype(np.float32)

    def _embed(self, kind: str, texts):
        many = [texts] if isinstance(texts, str) else list(texts)
        with self.lock:
            self.calls.append((kind, many))
        out = np.stack([self.vector(kind, t) for t in many])
        return out[0] if isinstance(texts, str) else out

    def query(self, texts):
        return self._embed("query", texts)

    def passage(self, texts):
        return self._embed("passage", texts)


def _embedder(monkeypatch, **kw) -> tuple[LocalE5Embeddings, HashModel]:
    model = HashModel()
    embedder = LocalE5Embeddings(**kw)
    monkeypatch.setattr(embedder, "_get_model", lambda: model)
    return embedder, model


async def test_a_marked_query_is_the_texts_passage_and_the_put_after_it_reuses_it(monkeypatch):
    real = LocalE5Embeddings()
    marked = real.embed_query(passage_query(TEXTS[0]))
    assert np.array_equal(marked, LocalE5Embeddings().embed_documents([TEXTS[0]])[0])  # bit for bit
    assert not np.allclose(marked, real.embed_query(TEXTS[0]), atol=1e-3)  # not the query's vector

    embedder, model = _embedder(monkeypatch)
    note, in_context = TEXTS[0], TEXTS[0] + " (in reply to: any allergies?)"
    assert await embedder.aembed_query(passage_query(note)) == HashModel.vector("passage", note).tolist()
    put = await embedder.aembed_documents([note, in_context])
    assert put == [HashModel.vector("passage", t).tolist() for t in (note, in_context)]
    assert model.calls == [("passage", [note]), ("passage", [in_context])]  # the note once
    model.calls.clear()
    assert embedder.embed_documents([note]) == put[:1]  # taken by the put: embedded anew
    assert model.calls == [("passage", [note])] and len(embedder._recent) == 0
    model.calls.clear()
    for _ in range(2):  # the sync path; a second lookup before the put reuses the first's
        assert embedder.embed_query(passage_query(note)) == put[0]
    assert embedder.embed_documents([note]) == put[:1] and model.calls == [("passage", [note])]
    model.calls.clear()
    assert await embedder.aembed_query(note) == HashModel.vector("query", note).tolist()  # unmarked: a query
    assert model.calls == [("query", [note])]


def test_the_kept_passages_are_bounded_and_each_texts_own(monkeypatch):
    embedder, model = _embedder(monkeypatch, recent=2)
    for text in TEXTS[:3]:
        embedder.embed_query(passage_query(text))
    assert len(embedder._recent) == 2
    model.calls.clear()
    got = embedder.embed_documents([TEXTS[1], TEXTS[1] + " ", TEXTS[0], TEXTS[2]])
    assert got == [HashModel.vector("passage", t).tolist() for t in (TEXTS[1], TEXTS[1] + " ", TEXTS[0], TEXTS[2])]
    assert model.calls == [("passage", [TEXTS[1] + " ", TEXTS[0]])]  # the oldest was let go; a near text is not a hit
    assert len(embedder._recent) == 0  # the put took what it used
    long = "a" * MAX_EMBED_CHARS
    embedder.embed_query(passage_query(long + "b"))  # the model embeds the cut text: keyed by it
    model.calls.clear()
    assert embedder.embed_documents([long]) == [HashModel.vector("passage", long).tolist()]
    assert model.calls == []


def test_concurrent_lookups_and_puts_each_get_their_own_texts_vector(monkeypatch):
    embedder, _ = _embedder(monkeypatch, recent=48)
    texts = [f"The user's note number {i}." for i in range(64)]
    want = {t: HashModel.vector("passage", t).tolist() for t in texts}

    def lookup(text: str) -> bool:
        return embedder.embed_query(passage_query(text)) == want[text]

    def put(text: str) -> bool:
        return embedder.embed_documents([text]) == [want[text]]

    def write(text: str) -> bool:
        return lookup(text) and put(text)

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(lookup, texts * 2))  # each text looked up twice, side by side with the others
        assert len(embedder._recent) == 48
        assert all(pool.map(put, texts))  # those kept, and those let go
        assert all(pool.map(write, texts * 3))
    assert len(embedder._recent) == 0  # each put came after its lookup and took what was left
