"""No import circle among the project's modules (issue 25 item 5): a module never imports,
directly or through others, a module that imports it back. Every import counts: at the top, inside
a function (a lazy import only hides a circle until the day it runs first) and under
``TYPE_CHECKING``. The graph is grimp's (import-linter's own dependency), the one the layer contracts
are checked on."""

import grimp
import pytest

PACKAGES = ("paicli",)  # graphs, memory, nodes, prompts and tools are paicli.<name>


def circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[module] = min(low[module], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == index[module]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == module:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def chain(graph: grimp.ImportGraph, group: list[str]) -> str:
    """One way round the circle, for the failure message."""
    first, second = group[0], next(m for m in group[1:] if graph.find_shortest_chain(group[0], m))
    there = graph.find_shortest_chain(importer=first, imported=second) or ()
    back = graph.find_shortest_chain(importer=second, imported=first) or ()
    return " -> ".join([*there, *back[1:]])


def test_the_circle_finder_finds_a_circle_through_three_modules():
    graph = grimp.ImportGraph()
    for module in ("a", "a.x", "a.y", "a.z", "a.w"):
        graph.add_module(module)
    for importer, imported in (("a.x", "a.y"), ("a.y", "a.z"), ("a.z", "a.x"), ("a.w", "a.x")):
        graph.add_import(importer=importer, imported=imported)
    assert circles(graph) == [["a.x", "a.y", "a.z"]]
    assert chain(graph, ["a.x", "a.y", "a.z"]) == "a.x -> a.y -> a.z -> a.x"


@pytest.fixture(scope="module")
def project_graph() -> grimp.ImportGraph:
    """Every module of the installed paicli: grimp walks paicli/ and follows its symlinks into
    graphs/, memory/, nodes/, prompts/ and tools/."""
    return grimp.build_graph(*PACKAGES, cache_dir=None)


def test_no_module_imports_itself_back(project_graph):
    graph = project_graph
    assert {"paicli.commands.dispatch", "paicli.memory.ledger.index", "paicli.tools.mcp.servers"} <= graph.modules
    found = circles(graph)
    assert not found, "import circles:\n" + "\n".join(chain(graph, group) for group in found)


@pytest.mark.parametrize("module", ["paicli.studio.graphs", "paicli.studio.stores", "paicli.commands.db"])
def test_studio_and_paicli_db_wire_graphs_without_the_cli_session(project_graph, module):
    """What Studio and ``paicli db`` need of the CLI's wiring is ``paicli.run.wiring``, not the session."""
    assert project_graph.find_shortest_chain(importer=module, imported="paicli.run.wiring") is not None
    assert project_graph.find_shortest_chain(importer=module, imported="paicli.run.session") is None
