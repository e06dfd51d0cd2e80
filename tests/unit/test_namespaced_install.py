"""Issue 36 item 5: paicli's folders are imported under paicli's own name only.

The checkout keeps ``graphs/``, ``memory/``, ``nodes/``, ``prompts/`` and ``tools/`` beside
``paicli/`` (``paicli/<name>`` is a symlink to each); the wheel ships them inside ``paicli/``. Either
way there is one name per module: nothing imports a top-level ``tools`` (which a user's own
``tools/`` package would shadow), and no module is loaded twice under two names.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

import paicli
from paicli.graphs.react import build_graph
from paicli.nodes.core.state import Deps, RunContext
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call

ROOT = Path(__file__).resolve().parents[2]
ROOTS = tuple(sorted(p.name for p in (ROOT / "paicli").iterdir() if p.is_symlink()))  # codeindex, graphs, memory, ...


def top_level_copies() -> list[str]:
    return sorted(name for name in sys.modules if name.split(".")[0] in ROOTS)


async def test_a_graph_run_imports_no_top_level_graphs_memory_nodes_prompts_or_tools(tmp_path):
    (tmp_path / "notes.txt").write_text("make builds it\n", encoding="utf-8")
    model = ScriptedChatModel([ai("", tool_call("read_file", {"path": "notes.txt"})), ai("make 构建")])
    graph = build_graph(Deps(model=model), checkpointer=InMemorySaver())
    state = await graph.ainvoke({"messages": [HumanMessage("怎么构建？")]}, {"configurable": {"thread_id": "t"}},
                                context=RunContext(project_root=str(tmp_path), approval="yes"))
    model.assert_consumed()
    assert "make builds it" in state["messages"][2].content
    assert top_level_copies() == []
    assert {"paicli.tools.builtin.files", "paicli.memory.tokens", "paicli.nodes.model.call_model",
            "paicli.graphs.react", "paicli.prompts"} <= set(sys.modules)


def test_the_checkout_is_no_import_root_so_its_folders_are_not_top_level_packages():
    assert all(Path(p or ".").resolve() != ROOT for p in sys.path)
    assert [name for name in ROOTS if importlib.util.find_spec(name) is not None] == []


def test_each_folder_is_the_paicli_package_of_its_name():
    for name in ROOTS:
        module = importlib.import_module(f"paicli.{name}")
        assert Path(module.__file__).resolve() == ROOT / name / "__init__.py"
        assert Path(module.__file__).parent == Path(paicli.__file__).parent / name  # one name: paicli.<name>
