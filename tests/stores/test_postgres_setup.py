"""mnemo.stores.postgres_setup: every pooled connection carries the statement
and lock timeouts (docs/postgres.md, *A server that hangs*), whatever the pool's
overrides, on the store's pool and the checkpointer's, and after a TTL sweep
lifted one for itself. A frozen PostgreSQL is bounded by the client's deadlines
too, so no end-to-end test would see them go: this one reads them."""

from __future__ import annotations

import asyncio

import pytest

from harness.store_backends import SKIP_POSTGRES_REASON, HashEmbeddings, skip_postgres
from mnemo.stores.factory import open_checkpointer, open_store
from mnemo.stores.postgres_setup import LOCK_TIMEOUT_S, STATEMENT_TIMEOUT_S, make_pool

pytestmark = pytest.mark.skipif(skip_postgres(), reason=SKIP_POSTGRES_REASON)

INDEX = {"embed": HashEmbeddings(16), "dims": 16, "fields": ["text"]}
DEADLINES = {"statement_timeout": f"{STATEMENT_TIMEOUT_S}s", "lock_timeout": f"{LOCK_TIMEOUT_S}s"}


async def settings(pool, n: int) -> list[dict[str, str]]:
    """The timeouts of ``n`` pooled connections, held at once (so each is another)."""
    held = asyncio.Event()
    got: list[dict[str, str]] = []

    async def one() -> None:
        async with pool.connection() as conn:
            row = await (
                await conn.execute(
                    "SELECT current_setting('statement_timeout') AS statement_timeout, "
                    "current_setting('lock_timeout') AS lock_timeout, pg_backend_pid() AS pid"
                )
            ).fetchone()
            got.append(dict(row))  # the pool's rows are dicts
            if len(got) == n:
                held.set()
            await held.wait()

    await asyncio.wait_for(asyncio.gather(*(one() for _ in range(n))), 60)
    assert len({row.pop("pid") for row in got}) == n  # the precondition: n connections
    return got


@pytest.fixture
def uri(pg):
    yield pg.create_database("postgres_setup")
    pg.drop_database("postgres_setup")


async def test_every_pooled_connection_carries_the_timeouts(uri):
    async with make_pool(uri, {"min_size": 3}) as pool:
        assert await settings(pool, 3) == [DEADLINES] * 3


async def test_options_of_the_pool_config_add_to_the_timeouts_never_drop_them(uri):
    options = {"min_size": 2, "kwargs": {"options": "-c lock_timeout=200 -c application_name=mine"}}
    async with make_pool(uri, options) as pool:
        assert await settings(pool, 2) == [{**DEADLINES, "lock_timeout": "200ms"}] * 2  # changed, not dropped
        async with pool.connection() as conn:
            assert (await (await conn.execute("SHOW application_name")).fetchone())["application_name"] == "mine"


async def test_the_stores_and_the_checkpointers_pools_carry_them_after_a_sweep(uri):
    one = {"min_size": 1, "max_size": 1}  # the connection swept is the one read
    async with open_store(postgres_uri=uri, index=INDEX, pool_config=one, sweep=False) as store:
        await store.aput(("u_sweep", "notes"), "gone", {"text": "x"}, ttl=0.001)
        await asyncio.sleep(0.2)
        assert await store.sweep_ttl() == 1  # the sweep ran without statement_timeout, for itself
        assert await store.aget(("u_sweep", "notes"), "gone") is None
        assert await settings(store.conn, 1) == [DEADLINES]
    async with open_checkpointer(postgres_uri=uri, pool_config={"min_size": 2}) as saver:
        assert await settings(saver.conn, 2) == [DEADLINES] * 2
