"""The committed results are what the code computes: a small committed figure,
the recall probe of ``bench/results/thresholds.json`` (hand-written users in
``bench/data/``, no LoCoMo needed), recomputed and compared exactly.

Exactly means on the same arithmetic: the embedder's last bits differ between
CPUs (:func:`bench.common.embedder_fingerprint`), so on a machine whose
fingerprint is not the results' the comparison is skipped, and says so."""

from __future__ import annotations

import json

import pytest

from bench.common import DEFAULT_OUT, CachingEmbeddings, embedder_fingerprint
from bench.thresholds import probe_analysis
from mnemo.stores.embeddings import embeddings


def test_the_committed_recall_probe_is_what_the_code_computes():
    committed = json.loads((DEFAULT_OUT / "thresholds.json").read_text(encoding="utf-8"))
    made_on, here = committed["meta"].get("embedder"), embedder_fingerprint()
    if made_on != here:
        pytest.skip(
            f"bench/results was computed where the embedder rounds differently ({made_on}, here {here})"
            " — run `python -m bench thresholds --out bench/results` to enable"
        )
    fresh = json.loads(json.dumps(probe_analysis(CachingEmbeddings(embeddings))))  # as written to the file
    assert fresh["real_path_check"]["queries"] > 0  # the real recall ran
    assert fresh == committed["probe"]
