"""docs/architecture.md against the code: the entry points it lists are what
``langgraph.json`` loads, each layer's "Imports:" names the layers it imports,
and the rules of its reads hold in the source."""

from __future__ import annotations

import ast
import json
import re

from tests.project.test_import_layers import MNEMO_LAYERS, PRODUCT, ROOT, _layer, module_imports, package_edges

PAGE = (ROOT / "docs" / "architecture.md").read_text("utf-8")

#: The modules that may read the store by key (``GetOp``, ``aget``): keys mnemo derives.
KEY_READERS = {
    "mnemo/notes/index.py",
    "mnemo/notes/recall.py",
    "mnemo/notes/bulk.py",
    "mnemo/audit/chain.py",
    "mnemo/instructions/proposals.py",
}


def section(title: str) -> str:
    return PAGE.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_the_entry_points_are_what_the_server_loads():
    entries = section("Entry points")
    loaded = set()
    for config in ("langgraph.json", "langgraph.postgres.json"):
        data = json.loads((ROOT / config).read_text("utf-8"))
        paths = [*data["graphs"].values(), data["auth"]["path"], data["http"]["app"], data["store"]["index"]["embed"]]
        paths += [data["store"]["path"]] if "path" in data["store"] else []
        loaded |= {p.removeprefix("./").split(":")[0] for p in paths}
    assert {"server/graphs.py", "server/auth.py", "web/app.py", "server/store.py"} <= loaded
    assert {p for p in loaded if f"`{p}`" not in entries} == set()
    for main in ("mnemo/__main__.py", "bench/__main__.py", "mnemo/__init__.py"):
        assert (ROOT / main).is_file() and f"`{main}`" in entries


def test_each_layer_imports_what_the_page_says():
    """Every sub-package whose section names its imports names exactly the layers it imports."""
    actual: dict[str, set[str]] = {layer: set() for layer in MNEMO_LAYERS}
    for module, imported in module_imports(("mnemo",)).items():
        if here := _layer(module):
            actual[here] |= {there for t in imported if (there := _layer(t)) and there != here}
    checked = 0
    for layer in MNEMO_LAYERS:
        text = PAGE.split(f"\n### `mnemo/{layer}/`\n", 1)[1].split("\n### ", 1)[0]
        said = re.search(r"Imports: ([^.;(]*)", text)
        assert said, f"mnemo/{layer}/ says nothing of its imports"
        if "layers below" in said[1] or "everything" in said[1]:
            continue
        named = set(re.findall(r"`(\w+)`", said[1]))
        assert named == actual[layer], (
            f"mnemo/{layer}/: the page says {sorted(named)}, it imports {sorted(actual[layer])}"
        )
        checked += 1
    # core, audit, models, stores, profile, episodes, policies, instructions, notes...
    assert checked >= 9 and actual["notes"]


def _calls(name_of):
    for package in PRODUCT:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                if isinstance(node, ast.Call) and (name := name_of(node.func)):
                    yield str(path.relative_to(ROOT)), name, node


def _name(func: ast.expr) -> str | None:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def test_only_the_listed_modules_read_by_key():
    """A key read makes a ghost namespace on InMemoryStore: only where the page says."""
    readers = {
        path for path, name, _ in _calls(_name) if name in ("GetOp", "aget") and not path.startswith("mnemo/stores/")
    }
    assert "mnemo/notes/index.py" in readers  # the scan sees them
    assert readers == KEY_READERS
    assert all(f"`{path}`" in PAGE for path in KEY_READERS)


def test_every_search_names_its_limit():
    """The stores' default (10) is never relied on."""
    searches = [(path, node) for path, name, node in _calls(_name) if name in ("asearch", "SearchOp", "search_items")]
    assert len(searches) > 5  # the scan sees them
    unbounded = [f"{path}:{node.lineno}" for path, node in searches if "limit" not in {k.arg for k in node.keywords}]
    assert unbounded == []


def test_web_routes_write_through_mnemos_functions():
    """No route writes the store itself (a raw write would have no audit record)."""
    writes = ("put_item", "delete_item", "aput", "adelete", "abatch", "PutOp")
    calls = [(path, name) for path, name, _ in _calls(_name) if path.startswith("web/")]
    assert ("web/app_memory.py", "aremember") in calls  # the scan sees the routes' calls
    assert [f"{path}: {name}" for path, name in calls if name in writes] == []


def test_bench_imports_mnemos_faces_and_the_graph_only():
    edges = package_edges()
    assert "mnemo" in edges["bench"]  # the scan sees bench's imports
    assert edges["bench"] <= {"mnemo", "graphs", "nodes", "harness"}


def _sentences(page: str) -> list[str]:
    """The page's prose as sentences: code blocks, tables and headings left out, a list
    item a sentence of its own, a code span or a link's target one word."""
    prose = re.sub(r"```.*?```", "\n\n", page, flags=re.S)
    found: list[str] = []
    for block in re.split(r"\n\s*\n", prose):
        kept = [ln for ln in block.splitlines() if not ln.lstrip().startswith(("|", "#"))]
        items = re.split(r"\n(?=\s*(?:[-*]|\d+\.)\s)", "\n".join(kept))
        for item in items:
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", re.sub(r"`[^`]*`", "X", item))
            found += [s for s in re.split(r"(?<=[.!?])\s+", " ".join(text.split())) if s.strip()]
    return found


def test_the_page_is_read_in_one_sitting():
    """Issue 58: at most 400 lines, sentences of at most 60 words, 25 at the median."""
    words = sorted(len(s.split()) for s in _sentences(PAGE))
    assert len(PAGE.splitlines()) <= 400
    assert len(words) > 100 and words[-1] <= 60, [s for s in _sentences(PAGE) if len(s.split()) > 60]
    assert words[len(words) // 2] <= 25


def test_adding_a_memory_kind_names_every_registry_a_test_requires():
    steps = PAGE.split("**A memory kind.**", 1)[1].split("**A tool.**", 1)[0]
    for required in ("mnemo/core/namespaces.py", "VERBATIM", "`CHECKS`", "mnemo/turn/parts.py", "MemorySnapshot"):
        assert required in steps, required
