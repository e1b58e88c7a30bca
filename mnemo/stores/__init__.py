"""Where memories are kept: the backends (in-memory, PostgreSQL, the
embedded PostgreSQL, the platform's), their one factory, the embedders behind
the index and recall's sparse ranking, and the guard the run's store goes through. Imports only
:mod:`mnemo.core`; PostgreSQL's packages load only when PostgreSQL is used.
"""

from mnemo.stores.embedded_postgres import (
    DEFAULT_DATA_DIR,
)
from mnemo.stores.factory import (
    open_postgres_store,
)
from mnemo.stores.guard import (
    guarded,
)
from mnemo.stores.platform import (
    PGDATA_ENV,
)
from mnemo.stores.postgres_setup import (
    CONNECT_TIMEOUT_S,
)
from mnemo.stores.remote import (
    ServerStore,
)
from mnemo.stores.sparse import (
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
    "open_postgres_store",
    "sparse_dot",
    "sparse_encoder",
]
