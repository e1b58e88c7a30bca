"""mnemo.core.reads.abatch_named: one round trip, each group's results under its name."""

from __future__ import annotations

from langgraph.store.base import GetOp, Item

from mnemo.core import abatch_named
from tests.conftest import CountingStore


async def test_each_group_gets_its_own_results_in_one_round_trip():
    store = CountingStore()
    for key in ("a", "b", "c"):
        await store.aput(("ns",), key, {"v": key})
    store.trips = 0
    got = await abatch_named(
        store,
        {
            "first": [GetOp(("ns",), "a")],
            "none": [],
            "rest": [GetOp(("ns",), "c"), GetOp(("ns",), "missing"), GetOp(("ns",), "b")],
        },
    )
    assert store.trips == 1
    assert list(got) == ["first", "none", "rest"]
    assert [it.value["v"] if isinstance(it, Item) else None for it in got["first"]] == ["a"]
    assert got["none"] == []
    assert [it.value["v"] if isinstance(it, Item) else None for it in got["rest"]] == ["c", None, "b"]


async def test_no_reads_make_no_round_trip():
    store = CountingStore()
    assert await abatch_named(store, {"head": [], "values": []}) == {"head": [], "values": []}
    assert store.trips == 0
