"""create_project (reference t): each skeleton, inside the project, never over someone's files."""

import json

import pytest

from paicli.tools.base import ToolContext
from paicli.tools.registry import run_tool


@pytest.fixture
def ctx(tmp_path) -> ToolContext:
    return ToolContext(root=tmp_path.resolve())


@pytest.mark.parametrize("kind, files", [
    ("java", ["demo/pom.xml", "demo/src/main/java", "demo/src/main/resources"]),
    ("python", ["demo/demo/__init__.py", "demo/main.py", "demo/requirements.txt"]),
    ("node", ["demo/package.json"]),
])
async def test_each_type_makes_its_skeleton(ctx, kind, files):
    result = await run_tool("create_project", {"name": "demo", "type": kind}, ctx)
    assert result == f"项目已创建: demo (类型: {kind})" and result.ok
    for relative in files:
        assert (ctx.root / relative).exists(), relative
    if kind == "java":
        assert "<artifactId>demo</artifactId>" in (ctx.root / "demo/pom.xml").read_text(encoding="utf-8")
    if kind == "node":
        assert json.loads((ctx.root / "demo/package.json").read_text(encoding="utf-8"))["name"] == "demo"


async def test_a_python_project_runs(ctx):
    import subprocess
    import sys

    await run_tool("create_project", {"name": "my-app", "type": "python"}, ctx)
    done = subprocess.run([sys.executable, "main.py"], cwd=ctx.root / "my-app", capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout == "hello from my_app\n"


async def test_an_existing_folder_with_files_is_left_alone(ctx):
    (ctx.root / "demo").mkdir()
    (ctx.root / "demo" / "keep.txt").write_text("mine", encoding="utf-8")
    result = await run_tool("create_project", {"name": "demo", "type": "node"}, ctx)
    assert not result.ok and "已存在且不是空目录" in result
    assert sorted(p.name for p in (ctx.root / "demo").iterdir()) == ["keep.txt"]


@pytest.mark.parametrize("args, named", [
    ({"name": "demo", "type": "rust"}, "type 只能是 java/python/node"),
    ({"name": "../outside", "type": "node"}, "项目名 '../outside' 无效"),
    ({"name": "", "type": "java"}, "项目名 '' 无效"),
])
async def test_bad_arguments_say_what_to_fix(ctx, args, named):
    result = await run_tool("create_project", args, ctx)
    assert not result.ok and named in result
    assert list(ctx.root.iterdir()) == []


async def test_a_protected_name_is_refused_by_the_write_guard(ctx):
    result = await run_tool("create_project", {"name": ".git", "type": "node"}, ctx)
    assert not result.ok
