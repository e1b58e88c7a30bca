"""Imports run one way: graphs -> nodes -> (nodes.context, nodes.state, nodes.client_writes) -> mnemo;
inside mnemo, sub-packages in the order of :data:`MNEMO_LAYERS`, each reached
from outside through its face (its ``__init__``); no module imports itself
back through others, and none grows past :data:`MAX_MODULE_LINES`. ``harness``
(what the tests and bench run mnemo with) stands outside the product, and bench
imports nothing from ``tests``.

Read from the source (every ``import``, including those inside functions), so
a cycle fails here even when import order happens to hide it at run time.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: First-party top-level packages (tests/ may import anything but bench).
PACKAGES = ("graphs", "nodes", "mnemo", "server", "web", "bench", "harness")


def _layers_of_the_page() -> tuple[tuple[str, ...], frozenset[str]]:
    """mnemo's sub-packages, lowest first, and those on one floor, as
    docs/architecture.md draws them (``a -> b, c | d``: ``->`` and ``,`` run
    upwards, ``|`` stands beside): the page is where the order is written."""
    page = (ROOT / "docs" / "architecture.md").read_text("utf-8")
    line = next(x for x in page.splitlines() if x.startswith("core -> "))
    layers = tuple(re.findall(r"\w+", line))
    beside = frozenset(name for group in re.findall(r"\w+(?:\s*\|\s*\w+)+", line) for name in re.findall(r"\w+", group))
    return layers, beside


#: mnemo's sub-packages, lowest first: each may import only those before it,
#: and none of :data:`BESIDE` (the store and the memory kinds besides notes,
#: on one floor) imports another.
MNEMO_LAYERS, BESIDE = _layers_of_the_page()
#: The product's code (bench/ measures it from outside, through the faces).
PRODUCT = ("graphs", "nodes", "mnemo", "server", "web")
MAX_MODULE_LINES = 350


def _is_module(name: str) -> bool:
    parts = name.split(".")
    return (ROOT.joinpath(*parts).with_suffix(".py")).is_file() or (ROOT.joinpath(*parts) / "__init__.py").is_file()


def imported_modules(path: Path) -> set[str]:
    """Absolute module names ``path`` imports (relative imports resolved):
    ``from a import b`` names ``a.b`` when that is a module, else ``a``."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            for alias in node.names:
                names.add(f"{module}.{alias.name}" if _is_module(f"{module}.{alias.name}") else module)
    return names


def module_imports(packages: tuple[str, ...] = PACKAGES) -> dict[str, set[str]]:
    """First-party module -> the first-party modules it imports."""
    out: dict[str, set[str]] = {}
    for package in packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            out[module] = {m for m in imported_modules(path) if m.split(".")[0] in PACKAGES}
    return out


def package_edges() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {p: set() for p in PACKAGES}
    for module, imports in module_imports().items():
        src = module.split(".")[0]
        edges[src].update(m.split(".")[0] for m in imports if m.split(".")[0] != src)
    return edges


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """A cycle of ``edges`` as a path (first == last), or ``None``."""
    state: dict[str, str] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = "open"
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                return [*path[path.index(nxt) :], nxt] if nxt in path else [node, nxt]
            if nxt not in state and (cycle := visit(nxt, [*path, nxt])):
                return cycle
        state[node] = "done"
        return None

    for start in sorted(edges):
        if start not in state and (cycle := visit(start, [start])):
            return cycle
    return None


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_between_top_level_packages():
    edges = package_edges()
    assert "nodes" in edges["graphs"] and "mnemo" in edges["nodes"]  # the scan sees imports
    assert find_cycle(edges) is None, f"import cycle between packages: {' -> '.join(find_cycle(edges) or [])}"


def test_mnemo_imports_no_other_first_party_package():
    assert package_edges()["mnemo"] == set()


def test_bench_is_outside_the_product_and_its_tests():
    """bench/ measures the product from outside: neither the product nor its
    tests (tests/) import from it (bench's own tests live in bench/tests/)."""
    edges = package_edges()
    assert "mnemo" in edges["bench"]  # the scan sees imports of bench's modules
    assert {p for p in PRODUCT if "bench" in edges[p]} == set()
    imports = {str(p.relative_to(ROOT)): imported_modules(p) for p in sorted((ROOT / "tests").rglob("*.py"))}
    assert "mnemo" in imports["tests/conftest.py"]  # the scan reads tests/
    leaning = {path: sorted(m for m in found if m.split(".")[0] == "bench") for path, found in imports.items()}
    assert {path: found for path, found in leaning.items() if found} == {}


def imports_under(folder: str) -> dict[str, set[str]]:
    """Path of each module under ``folder`` -> the modules it imports."""
    return {str(p.relative_to(ROOT)): imported_modules(p) for p in sorted((ROOT / folder).rglob("*.py"))}


def test_the_harness_serves_tests_and_bench_from_outside_the_product():
    """harness/ (the dev-server starter, the stub model server, the scripted models)
    may import the product; the product never imports it, and it imports neither
    bench nor tests."""
    edges = package_edges()
    assert "mnemo" in edges["harness"] and "harness" in edges["bench"]  # the scan sees the harness's imports
    assert {p for p in PRODUCT if "harness" in edges[p]} == set()
    assert edges["harness"] - set(PRODUCT) == set()
    leaning = {
        path: sorted(m for m in found if m.split(".")[0] == "tests") for path, found in imports_under("harness").items()
    }
    assert {path: found for path, found in leaning.items() if found} == {}


def test_bench_imports_nothing_from_tests():
    """What bench and the tests both run is in harness/: bench (its own tests in
    bench/tests/ too) imports nothing from tests/."""
    imports = imports_under("bench")
    assert "harness.devserver" in imports["bench/load.py"]  # the scan sees imports inside functions
    assert "harness.store_backends" in imports["bench/tests/conftest.py"]  # and bench's own tests
    leaning = {path: sorted(m for m in found if m.split(".")[0] == "tests") for path, found in imports.items()}
    assert {path: found for path, found in leaning.items() if found} == {}


#: The modules of nodes/ the steps stand on: they import mnemo and one another only.
BELOW_THE_NODES = ("nodes.context", "nodes.state", "nodes.client_writes")


def test_context_and_state_sit_below_the_nodes():
    imports = module_imports()
    assert "nodes.context" in imports["nodes.load_memory"]  # the scan sees in-package imports
    assert "nodes.client_writes" in imports["nodes.state"]
    for module in BELOW_THE_NODES:
        assert {m for m in imports[module] if not m.startswith("mnemo") and m not in BELOW_THE_NODES} == set(), module


def test_the_server_takes_of_the_nodes_the_clients_rule_alone():
    """``server`` reaches the graph through ``graphs``; of ``nodes`` it imports
    only the rule of what a client writes, which the graph's state applies too."""
    imports = module_imports(("server",))
    assert "nodes.client_writes" in imports["server.access"]  # the scan sees the server's imports
    leaning = {m: sorted(t for t in found if t.split(".")[0] == "nodes") for m, found in imports.items()}
    assert {m: t for m, t in leaning.items() if set(t) - {"nodes.client_writes"}} == {}


def test_the_graph_imports_from_its_package_whatever_was_imported_first():
    """The trap of a package cycle: ``import nodes.tools`` before the graph."""
    code = "import nodes.tools, nodes.load_memory; import graphs; print(graphs.graph.name)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "mnemo"


def server_mentions(path: Path) -> list[str]:
    """Where ``path`` imports the LangGraph server's own package (``langgraph_api``)
    or names it in a string (``"langgraph_api" in sys.modules``): ``line: name``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""] if not node.level else []
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = [node.value]
        else:
            continue
        found += [f"{node.lineno}: {name}" for name in names if name.split(".")[0] == "langgraph_api"]
    return found


def test_mnemo_does_not_know_the_server():
    """The library runs without a LangGraph server: what only the server has
    (its store, scheduling a run, the test that a run is the server's) is the app's."""
    assert server_mentions(ROOT / "web" / "server_store.py")  # the scan sees an import of it
    assert server_mentions(ROOT / "nodes" / "background_writer.py")  # and a string naming it
    found = {str(p.relative_to(ROOT)): server_mentions(p) for p in sorted((ROOT / "mnemo").rglob("*.py"))}
    assert {path: names for path, names in found.items() if names} == {}


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "mnemo" and len(parts) > 1 and parts[1] in MNEMO_LAYERS else None


def test_no_import_cycle_between_modules_of_mnemo():
    imports = module_imports(("mnemo",))
    assert "mnemo.notes.model" in imports["mnemo.notes.plan"]  # the scan sees module imports
    edges = {m: {i for i in imported if i in imports} for m, imported in imports.items()}
    assert find_cycle(edges) is None, f"import cycle: {' -> '.join(find_cycle(edges) or [])}"


def test_every_sub_package_of_mnemo_stands_on_the_page():
    """A new sub-package is placed in the drawing, or its imports go unchecked."""
    packages = {p.parent.name for p in (ROOT / "mnemo").glob("*/__init__.py")}
    assert packages - {"app"} == set(MNEMO_LAYERS)  # mnemo.app, the app's face, stands beside them
    assert "stores" in packages and "profile" in BESIDE


def test_sub_packages_of_mnemo_import_only_lower_layers():
    found = set()
    for module, imported in module_imports(("mnemo",)).items():
        here = _layer(module)
        for target in imported:
            there = _layer(target)
            if here and there and there != here:
                found.add((here, there))
                assert MNEMO_LAYERS.index(there) < MNEMO_LAYERS.index(here), f"{module} imports {target}"
                assert not {here, there} <= BESIDE, f"{module} imports {target}"
    assert ("notes", "profile") in found  # the scan sees imports between sub-packages


def face_modules() -> set[str]:
    """The modules a face hands on as they are (``mnemo.core.env``, in ``mnemo.core``'s ``__all__``):
    ``from mnemo.core import env`` imports the face, though the scan names the module."""
    found = set()
    for layer in MNEMO_LAYERS:
        tree = ast.parse((ROOT / "mnemo" / layer / "__init__.py").read_text("utf-8"))
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
                names = ast.literal_eval(node.value)
                found |= {f"mnemo.{layer}.{name}" for name in names if _is_module(f"mnemo.{layer}.{name}")}
    return found


def test_code_outside_a_sub_package_imports_its_face():
    """The product; tests and bench import a name no face exports from the module
    that defines it (``tests/project/test_faces.py``)."""
    handed_on = face_modules()
    assert "mnemo.core.env" in handed_on  # the one module a face hands on
    seen = 0
    for module, imported in module_imports(PRODUCT).items():
        for target in imported:
            there = _layer(target)
            if there is None or _layer(module) == there:
                continue
            seen += 1
            assert target == f"mnemo.{there}" or target in handed_on, (
                f"{module} imports {target}: import from mnemo.{there}, its face"
            )
    assert seen > 20  # the scan sees imports of faces


def test_no_two_modules_of_the_product_share_a_name():
    """A module's name says what it holds: two ``registry.py`` (or ``settings.py``)
    with unrelated jobs make every import and traceback ambiguous."""
    paths = sorted(p for package in PRODUCT for p in (ROOT / package).rglob("*.py") if p.name != "__init__.py")
    assert len(paths) > 100  # the scan reads the product
    names: dict[str, list[str]] = {}
    for path in paths:
        names.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    assert {name: found for name, found in names.items() if len(found) > 1} == {}


def test_no_module_is_over_the_size_cap():
    """The product's modules and the benchmarks' (their tests aside, as tests/ is)."""
    paths = [path for package in (*PRODUCT, "bench") for path in (ROOT / package).rglob("*.py")]
    sizes = {
        str(path.relative_to(ROOT)): len(path.read_text("utf-8").splitlines())
        for path in paths
        if "tests" not in path.relative_to(ROOT).parts
    }
    assert sizes["mnemo/notes/plan.py"] > 100 and sizes["bench/cli.py"] > 100  # the scan reads both
    over = {p: n for p, n in sizes.items() if n > MAX_MODULE_LINES}
    assert over == {}


def inline_imports(packages: tuple[str, ...] = PRODUCT) -> dict[str, bool]:
    """``path:line`` of each first-party import inside a function, and whether a
    comment on its lines says why it is not at the top."""
    found = {}
    for package in packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            lines = path.read_text("utf-8").splitlines()
            for node in ast.walk(ast.parse("\n".join(lines))):
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                for inner in ast.walk(node):
                    if isinstance(inner, ast.Import):
                        names = [alias.name for alias in inner.names]
                    elif isinstance(inner, ast.ImportFrom):
                        names = [inner.module or ""] if inner.level == 0 else [package]  # relative: its own package
                    else:
                        continue
                    if any(name.split(".")[0] in PACKAGES for name in names):
                        span = lines[inner.lineno - 1 : inner.end_lineno]
                        found[f"{path.relative_to(ROOT)}:{inner.lineno}"] = any("#" in line for line in span)
    return found


def test_imports_stand_at_the_top_or_say_why_not():
    """A first-party import inside a function is there for a cycle or start-up
    time, and a comment on its lines says which."""
    found = inline_imports()
    assert [ok for where, ok in found.items() if where.startswith("mnemo/stores/postgres_setup.py")] == [True]
    assert [where for where, commented in found.items() if not commented] == []
