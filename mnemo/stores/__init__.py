"""Where memories are kept: the backends (in-memory, PostgreSQL, the
embedded PostgreSQL, a server's over the SDK), their one factory, the embedders behind
the index and recall's sparse ranking, and the guard the run's store goes through. Imports only
:mod:`mnemo.core`; PostgreSQL's packages load only when PostgreSQL is used.
"""

from mnemo.stores.embedded_postgres import (
    DEFAULT_DATA_DIR,
    PGDATA_ENV,
)
from mnemo.stores.embedded_postgres import env_uri as postgres_env_uri
from mnemo.stores.embeddings import (
    index_config,
    passage_query,
)
from mnemo.stores.factory import (
    open_checkpointer,
    open_postgres_store,
    open_store,
)
from mnemo.stores.guard import (
    guarded,
)
from mnemo.stores.postgres_setup import (
    CONNECT_TIMEOUT_S,
    is_outage,
)
from mnemo.stores.remote import (
    ServerStore,
)
from mnemo.stores.splade import (
    SparseVector,
    sparse_dot,
    sparse_encoder,
)

__all__ = [
    "CONNECT_TIMEOUT_S",
    "DEFAULT_DATA_DIR",
    "PGDATA_ENV",
    "ServerStore",
    "SparseVector",
    "guarded",
    "index_config",
    "is_outage",
    "open_checkpointer",
    "open_postgres_store",
    "open_store",
    "passage_query",
    "postgres_env_uri",
    "sparse_dot",
    "sparse_encoder",
]
