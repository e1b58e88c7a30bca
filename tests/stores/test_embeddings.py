"""mnemo.stores.embeddings: the bundled embedder's async batch path."""

from __future__ import annotations

import subprocess
import sys
import threading

import numpy as np

from mnemo.stores import LocalE5Embeddings

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
        "from mnemo.stores import default_embeddings as e\n"
        "before = set(os.listdir('/proc/self/task'))\n"
        "e.embed_documents(['a note to embed ' * 20])\n"
        "print(len(set(os.listdir('/proc/self/task')) - before))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "0", out
