"""The writer the crash test kills: ``python -m tests.crash_writer URI PHASE``.

Opens mnemo's PostgreSQL store on ``URI`` and writes batches of three items
under ``("dur", PHASE)`` for ever, printing ``ack N`` after batch ``N``'s
``abatch`` returned (acknowledged), and ``ready`` once the store is open.
"""

from __future__ import annotations

import asyncio
import sys

from langgraph.store.base import PutOp

from harness.store_backends import HashEmbeddings
from mnemo.stores.factory import open_store

#: Items per batch; a batch is all-or-nothing.
BATCH_SIZE = 3
DIMS = 16


def batch_ops(phase: str, batch: int) -> list[PutOp]:
    return [
        PutOp(
            ("dur", phase),
            f"{batch:07d}-{j}",
            {"text": f"{phase} batch {batch} item {j} 数据 🐘", "batch": batch, "pad": "x" * 500},
        )
        for j in range(BATCH_SIZE)
    ]


async def write_until_killed(uri: str, phase: str) -> None:
    index = {"embed": HashEmbeddings(DIMS), "dims": DIMS, "fields": ["text"]}
    async with open_store(postgres_uri=uri, index=index, pool_config={"max_size": 2}) as store:
        print("ready", flush=True)
        batch = 0
        while True:
            await store.abatch(batch_ops(phase, batch))
            print(f"ack {batch}", flush=True)  # acknowledged: abatch returned
            batch += 1


if __name__ == "__main__":
    asyncio.run(write_until_killed(sys.argv[1], sys.argv[2]))
