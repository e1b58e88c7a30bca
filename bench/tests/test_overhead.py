"""``python -m bench overhead --smoke``: every graph runs through the server on every store and the JSON
has the figures and the summary; the summary takes the worst kind of turn; what a turn encodes, counted
in-process."""

from __future__ import annotations

import json

import pytest

from bench.cli import main
from bench.load import KINDS
from bench.overhead import GOALS, _cpu_ms, count_encodings, encoder_cpu_ms, goals, summarize
from bench.overhead_serve import anchor, run_starts
from harness.store_backends import skip_postgres

SUMMARY = [key for key, *_ in GOALS]


@pytest.mark.e2e
def test_overhead_smoke_serves_every_graph_on_every_store(tmp_path):
    stores = {"memory"} if skip_postgres() else {"memory", "postgres"}
    only = ["--only", "memory"] if skip_postgres() else []
    assert main(["overhead", "--smoke", "--out", str(tmp_path), *only]) == 0
    data = json.loads((tmp_path / "overhead.json").read_text())
    assert set(data["stores"]) == stores
    for name, store in data["stores"].items():
        assert set(store["graphs"]) == {"bare", "memory_agent", "mnemo"}, name
        assert store["server_log_trouble"] == 0, name
        for graph, g in store["graphs"].items():
            assert g["turns"] == 4 and g["turns_failed"] == 0, (name, graph, g)
            # Every run's start is read from the server's log: the queue's wait, then the graph's part.
            assert g["unanchored"] == 0, (name, graph, g)
            for kind in KINDS:  # one turn of each kind, streamed to its first token and its end
                ttft, wall = g["ttft_ms"][kind]["p50"], g["wall_ms"][kind]["p50"]
                assert 0 < ttft <= wall and g["cpu_ms"][kind]["p50"] > 0, (name, graph, kind, g)
                queue, after = g["queue_ms"][kind]["p50"], g["ttft_run_ms"][kind]["p50"]
                assert 0 < queue < ttft and 0 < after < ttft, (name, graph, kind, g)
                assert abs(queue + after - ttft) < 5, (name, graph, kind, g)  # one turn of the kind: the parts add up
        calls = {graph: g["tool_calls"] for graph, g in store["graphs"].items()}
        # A "Remember ..." turn makes each memory graph call its own tool (the stub answers both); bare calls none.
        assert calls["mnemo"]["remember"].get("remember_note") == 1, calls
        assert calls["memory_agent"] == {"profile": {}, "remember": {"upsert_memory": 1}, "question": {}, "recall": {}}
        assert calls["bare"] == {kind: {} for kind in KINDS}
        for graph, c in store["concurrent"].items():  # 2 users x 2 turns at once
            assert c["turns"] == 4 and c["turns_failed"] == 0 and c["turns_per_s"] > 0, (name, graph, c)
            assert c["ttft_ms"]["all"]["p95"] > 0 and c["unanchored"] == 0, (name, graph, c)
            assert 0 < c["ttft_run_ms"]["all"]["p95"] <= c["ttft_ms"]["all"]["max"], (name, graph, c)
    assert list(data["summary"]) == SUMMARY
    measured = [k for k in SUMMARY if k != "ttft_added_p50_ms_postgres" or "postgres" in stores]
    for key in measured:
        value = data["summary"][key]
        assert isinstance(value, int | float) and not isinstance(value, bool), (key, value)
    assert set(data["ttft_added_from_request_p50_ms"]) == stores
    assert [g["key"] for g in data["goals"]] == SUMMARY
    assert {g["status"] for g in data["goals"] if g["key"] in measured} <= {"pass", "short"}
    assert set(data["encoder_cpu_ms"]) == set(KINDS)
    assert (tmp_path / "overhead.png").stat().st_size > 0


def _logged(key: str, value: str) -> str:
    """``key=value`` as ``langgraph dev``'s console log colours it."""
    return f"\x1b[36m{key}\x1b[0m=\x1b[35m{value}\x1b[0m"


RUN = "5d0c6a3e-1111-4b7e-9c1e-1f2e3d4c5b6a"
OTHER = "0f9e8d7c-2222-4b7e-9c1e-1f2e3d4c5b6a"


def test_a_runs_start_is_read_from_the_servers_log_and_splits_its_time_to_first_token():
    log = "\n".join(
        [
            "\x1b[2m2026-12-04T21:36:55.9Z\x1b[0m [\x1b[32m\x1b[1minfo     \x1b[0m] "
            + "\x1b[1mStarting background run       \x1b[0m "
            + " ".join([_logged("graph_id", "bare"), _logged("run_id", RUN), _logged("run_queue_ms", "812")])
            + " "
            + _logged("run_started_at", "2026-12-04T21:36:55.000000+00:00"),
            f"Background run succeeded {_logged('run_id', OTHER)} {_logged('run_started_at', '2026-12-04T21:00:00Z')}",
            f"Starting background run {_logged('run_id', RUN)} {_logged('run_started_at', '2026-12-04T21:40:00Z')}",
        ]
    )
    start = run_starts(log)
    assert set(start) == {RUN}  # another line naming a run is not its start; a retry keeps the first
    assert start[RUN] == 1_796_420_215.0  # 2026-12-04T21:36:55Z
    turns = [
        {"run_id": RUN, "sent_at": start[RUN] - 0.8, "first_token_at": start[RUN] + 0.05},
        {"run_id": OTHER, "sent_at": 1.0, "first_token_at": 2.0},
    ]
    anchor(turns, start)
    assert turns[0]["queue"] == pytest.approx(0.8) and turns[0]["ttft_run"] == pytest.approx(0.05)
    assert turns[1]["queue"] is None and turns[1]["ttft_run"] is None  # no start in the log: not guessed


def _store(ttft: dict[str, list[float]], cpu: dict[str, list[float]], turns_per_s: list[float]) -> dict:
    """A store's figures: per graph (bare, memory_agent, mnemo) ttft and cpu p50 per kind, turns/s."""
    names = ("bare", "memory_agent", "mnemo")
    graphs = {
        g: {
            "ttft_run_ms": {k: {"p50": v[i]} for k, v in ttft.items()},
            "ttft_ms": {k: {"p50": v[i] + 500} for k, v in ttft.items()},  # the summary reads the run's part
            "cpu_ms": {k: {"p50": v[i]} for k, v in cpu.items()},
        }
        for i, g in enumerate(names)
    }
    return {"graphs": graphs, "concurrent": {g: {"turns_per_s": turns_per_s[i]} for i, g in enumerate(names)}}


def test_the_summary_takes_the_worst_kind_of_turn_and_store():
    stores = {
        "memory": _store(
            {"profile": [100, 0, 130], "remember": [100, 0, 190]},
            {"profile": [20, 40, 50], "remember": [20, 100, 130]},
            [4.0, 2.0, 1.8],
        ),
        "postgres": _store(
            {"profile": [100, 0, 150], "remember": [100, 0, 120]},
            {"profile": [20, 40, 70], "remember": [25, 100, 110]},
            [4.0, 2.0, 1.0],
        ),
    }
    encoders = {"profile": {"e5": 20.0, "sparse": 10.0}, "remember": {"e5": 50.0, "sparse": 20.0}}
    figures = summarize(stores, encoders)
    assert figures == {
        "ttft_added_p50_ms": 90.0,  # remember, in memory
        "ttft_added_p50_ms_postgres": 50.0,  # profile, on PostgreSQL
        "cpu_ratio_over_memory_agent": 1.75,  # profile on PostgreSQL: 70 / 40
        "own_work_ratio_over_bare": 3.0,  # remember in memory: (130 - 70) / 20
        "concurrent_turns_per_s_ratio_over_memory_agent": 0.5,  # PostgreSQL: the lowest
    }
    assert [g["status"] for g in goals(figures)] == ["short", "pass", "short", "short", "short"]
    only_memory = summarize({"memory": stores["memory"]}, encoders)
    assert only_memory["ttft_added_p50_ms_postgres"] is None
    assert goals(only_memory)[1]["status"] == "not measured"


def test_a_turn_embeds_each_text_once(postgres_uri):
    """On every backend: before the reply, the latest message once as a query (load_memory) and
    nothing else: ``remember_note`` queues its note. After the reply
    (write_memory), the note once as each of its two passages (its text, which
    the dedupe lookup embeds and the put reuses; its text in context) and once
    by SPLADE: nothing twice, and the note never as a query."""
    counts = count_encodings(turns=3, memory_write_mode="hot", postgres_uri=postgres_uri)
    read = {"query": 1, "passage": 0, "sparse": 1}
    assert counts["profile"] == {"load_memory": read}
    assert counts["remember"]["load_memory"] == read
    assert counts["remember"]["write_memory"] == {"query": 0, "passage": 2, "sparse": 1}
    # call_model and the tools encode nothing: the answer waits for the message's query alone
    assert set(counts["remember"]) == {"load_memory", "write_memory"}


def test_the_encoders_cpu_is_summed_per_turn_over_the_steps_asked():
    """No timing compared: a log written by hand, its sums and medians read back."""
    logs = [
        [
            ("load_memory", "query", 1, 0.030),
            ("load_memory", "sparse", 1, 0.010),
            ("write_memory", "passage", 2, 0.050),
        ],
        [("load_memory", "query", 1, 0.020), ("load_memory", "sparse", 1, 0.006), ("write_memory", "sparse", 1, 0.004)],
        [("load_memory", "query", 1, 0.040), ("load_memory", "sparse", 1, 0.008)],
    ]
    assert _cpu_ms(logs) == {"e5": 40.0, "sparse": 10.0}
    assert _cpu_ms(logs, ("load_memory",)) == {"e5": 30.0, "sparse": 8.0}
    assert _cpu_ms(logs, ("call_model",)) == {"e5": 0.0, "sparse": 0.0}


def test_the_encoders_cpu_is_read_per_call_in_a_turn_as_shipped():
    cpu = encoder_cpu_ms(turns=len(KINDS))
    assert set(cpu) == set(KINDS), cpu
    # every kind of turn embeds its message (E5 and SPLADE), so each reads some CPU; which kind
    # costs more is a timing, left to the benchmark (the counts are test_a_turn_embeds_each_text_once's)
    for kind in KINDS:
        assert cpu[kind]["e5"] > 0 and cpu[kind]["sparse"] > 0, cpu
    # the methods are the classes' again afterwards
    from mnemo.stores import sparse_encoder
    from mnemo.stores.embeddings import embeddings as default_embeddings

    assert "query" not in vars(default_embeddings._get_model())
    assert "encode" not in vars(sparse_encoder())
