"""``python -m bench overhead --smoke``: every graph runs through the server and the JSON has the figures;
and what a turn encodes, counted in-process."""

from __future__ import annotations

import json

import pytest

from bench.cli import main
from bench.overhead import count_encodings, encoder_cpu_ms


@pytest.mark.e2e
def test_overhead_smoke_reports_both_graphs_and_their_ratio(tmp_path):
    assert main(["overhead", "--smoke", "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "overhead.json").read_text())
    assert set(data["graphs"]) == {"mnemo", "mnemo_hot_path", "bare"}
    for name, g in data["graphs"].items():
        assert g["turns"] == 2 and g["turns_failed"] == 0, (name, g)
        assert g["cpu_ms"]["p50"] > 0 and g["wall_ms"]["p50"] > 0, (name, g)
        assert g["step_wall_ms"]["call_model"]["n"] >= 2, (name, g)
        assert g["cpu_ms_by_turn"]["profile"]["n"] == g["cpu_ms_by_turn"]["remember"]["n"] == 1, (name, g)
    # mnemo's memory steps are timed; the bare agent has none.
    for name in ("mnemo", "mnemo_hot_path"):
        assert {"load_memory", "compact_history", "write_memory"} <= set(data["graphs"][name]["step_wall_ms"])
    assert set(data["graphs"]["bare"]["step_wall_ms"]) == {"call_model"}
    assert data["ratio_mnemo_over_bare"]["cpu_ms_p50"] > 0
    assert data["ratio_mnemo_over_bare"]["wall_ms_p50"] > 0
    assert data["ratio_mnemo_hot_path_over_bare"]["cpu_ms_p50"] > 0
    assert data["server_log_trouble"] == 0
    assert set(data["encodings"]) == {"after_turn", "hot"}
    assert set(data["encoder_cpu_ms"]) == set(data["ratio_mnemo_hot_path_without_encoders_over_bare"])
    assert set(data["encoder_cpu_ms"]) == {"profile", "remember"}


@pytest.fixture(params=["memory", "postgres"])
def postgres_uri(request, tmp_path):
    """``None`` for the in-memory store, or an embedded PostgreSQL's URI."""
    if request.param == "memory":
        yield None
        return
    from mnemo.stores import running_embedded_postgres
    from tests.store_backends import SKIP_POSTGRES_REASON, skip_postgres

    if skip_postgres():
        pytest.skip(SKIP_POSTGRES_REASON)
    with running_embedded_postgres(tmp_path / "pgdata", database="encodings", cleanup="delete") as pg:
        yield pg.uri


def test_a_turn_embeds_each_text_once(postgres_uri):
    """On every backend: before the reply, the latest message once as a query (load_memory) and
    nothing else: ``remember_note`` queues its note. After the reply
    (write_memory), the note once as a query (the dedupe lookup) and once as
    each of its two passages (its text, its text in context), and one SPLADE
    encoding of each: nothing twice."""
    counts = count_encodings(turns=3, memory_write_mode="hot", postgres_uri=postgres_uri)
    read = {"query": 1, "passage": 0, "sparse": 1}
    assert counts["profile"] == {"load_memory": read}
    assert counts["remember"]["load_memory"] == read
    assert counts["remember"]["write_memory"] == {"query": 1, "passage": 2, "sparse": 1}
    # call_model and the tools encode nothing: the answer waits for the message's query alone
    assert set(counts["remember"]) == {"load_memory", "write_memory"}


def test_the_encoders_cpu_is_read_per_call_on_the_hot_path():
    cpu = encoder_cpu_ms(turns=3)
    for kind in ("profile", "remember"):
        assert cpu[kind]["e5"] > 0 and cpu[kind]["sparse"] > 0, cpu
    # only the hot path's steps count: the note remember_note queued is encoded in write_memory, after the reply
    from bench.overhead import _cpu_ms

    log = [
        ("load_memory", "query", 1, 0.010),
        ("load_memory", "sparse", 1, 0.002),
        ("write_memory", "passage", 2, 0.05),
    ]
    assert _cpu_ms([log]) == {"e5": 10.0, "sparse": 2.0}
    # the methods are the classes' again afterwards
    from mnemo.stores import default_embeddings, sparse_encoder

    assert "query" not in vars(default_embeddings._get_model())
    assert "encode" not in vars(sparse_encoder())
