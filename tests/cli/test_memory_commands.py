"""``/save`` and ``/memory`` through ``paicli -p``: the reference's examples, on a real file."""

from __future__ import annotations

import json
import os
import re
import time
from datetime import UTC, datetime, timedelta

import pytest

from paicli.commands.memory import shown_time


@pytest.fixture
def cli(run_paicli):
    def run(command: str, **kw) -> str:
        done = run_paicli("-p", command, **kw)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    return run


@pytest.fixture
def cli_fails(run_paicli):
    """A command that did not do what was asked: exit 1, why on stderr, nothing on stdout."""

    def run(command: str, **kw) -> str:
        done = run_paicli("-p", command, **kw)
        assert (done.returncode, done.stdout) == (1, ""), done.stderr
        return done.stderr.strip()

    return run


def _memory_file(paicli_home):
    return paicli_home / "memory" / "long_term_memory.json"


def _ids(text: str) -> list[str]:
    return re.findall(r"fact-[0-9a-f]{8}", text)


def _id_of(paicli_home, content: str) -> str:
    entries = json.loads(_memory_file(paicli_home).read_text(encoding="utf-8"))
    return next(e["id"] for e in entries if e["content"] == content)


def test_save_then_normalised_duplicate_then_numeric_conflict(cli, cli_fails, paicli_home, project):
    stored = cli("/save 项目使用 Java 17")
    assert stored == "💾 已保存到长期记忆(project): 项目使用 Java 17"
    [entry] = json.loads(_memory_file(paicli_home).read_text(encoding="utf-8"))
    assert entry["metadata"] == {"source": "fact", "scope": "project", "project": str(project.resolve())}

    duplicate = cli("/save 项目使用Ｊａｖａ１７。")  # reference (k): NFKC, case, punctuation
    assert duplicate.startswith(f"💾 长期记忆中已有等价条目 {entry['id']}，未重复写入，已刷新其核实时间")

    conflict = cli_fails("/save 项目使用 Java 21").splitlines()
    assert conflict[0] == "⚠️ 未写入：新内容与已有长期记忆高度相似但不一致，可能是同一事实的新旧版本。"
    assert conflict[1].startswith(f"  已有 {entry['id']}（写入 ") and conflict[1].endswith("）: 项目使用 Java 17")
    assert conflict[-2] == f"  - 改用新的：/memory replace {entry['id']} 项目使用 Java 21（或调用 save_memory 并传 replace_id={entry['id']}）"
    assert conflict[-1] == "  - 两条都保留：/save --force 项目使用 Java 21"
    assert len(json.loads(_memory_file(paicli_home).read_text(encoding="utf-8"))) == 1

    kept = cli("/save --force 项目使用 Java 21")
    assert kept == "💾 已保存到长期记忆(project): 项目使用 Java 21"


def test_replace_is_blocked_by_a_third_conflicting_entry(cli, cli_fails, paicli_home):
    cli("/save 项目使用 Java 17")
    java17 = _id_of(paicli_home, "项目使用 Java 17")
    cli("/save --force 项目使用 Java 21")
    blocked = cli_fails(f"/memory replace {java17} 项目使用 Java 25")
    assert blocked.startswith("⚠️ 未写入") and "项目使用 Java 21" in blocked
    listed = cli("/memory list")
    assert "项目使用 Java 17" in listed and "Java 25" not in listed


def test_replace_verify_delete_search_and_clear(cli, cli_fails, paicli_home):
    cli("/save --global 默认用中文回答")
    old = _id_of(paicli_home, "默认用中文回答")
    replaced = cli(f"/memory replace {old} 默认用英文回答")
    assert replaced.startswith(f"💾 已用新内容替换长期记忆 {old}(global)\n  旧: 默认用中文回答\n  新: 默认用英文回答 (fact-")
    new = _ids(replaced)[-1]
    assert cli(f"/memory verify {new}") == f"✅ 已刷新核实时间: {new} 默认用英文回答"
    assert cli_fails("/memory verify fact-00000000") == "📭 未找到长期记忆: fact-00000000"
    assert cli("/memory search 英文").splitlines()[0] == "🔎 长期记忆搜索: 英文："
    assert cli_fails("/memory search") == "❌ 请提供搜索关键词，例如 /memory search Chrome 登录态"
    assert cli(f"/memory delete {new}") == f"🗑️ 已删除长期记忆: {new}"
    assert cli("/memory list") == "📭 没有匹配的长期记忆。"
    cli("/save 构建用 Maven")
    assert cli_fails("/memory clear") == "❌ 没有可以确认的终端，长期记忆未清空；在脚本里请加 --yes（将删除当前项目的 1 条项目记忆）"
    assert cli("/memory clear --yes").splitlines()[-1] == "🧹 长期记忆已清空：当前项目的 1 条项目记忆"
    assert cli_fails("/save") == "❌ 请提供要保存的内容，例如 /save 这个项目使用Java 17，或 /save --global 默认用中文回答"


def test_memory_status_and_help(cli, project):
    cli("/save 构建用 Maven")
    assert "自动事实提取: 关闭" in cli("/memory")  # the test environment turns it off
    lines = cli("/memory", env={"PAICLI_MEMORY_AUTO_EXTRACT_ENABLED": None}).splitlines()
    assert lines[0] == "📋 记忆系统状态："
    # issue 41: Chinese labels, as the rest of /memory
    assert lines[1] == "上下文策略: 窗口 128000 | 压缩阈值 74%（95000 tokens）| MCP 资源索引: 关闭 | 提示词缓存: 无"
    assert lines[3] == "自动事实提取: 开启"
    assert lines[5].startswith("Token 统计: 调用 0 次 | 总输入: 0 | 总输出: 0 | 缓存命中: 0 |")
    assert lines[6] == "MCP 服务器: MCP 0（/mcp 查看详情）"
    assert lines[4].startswith("长期记忆: 1条 / ") and lines[4].endswith("(事实: 1, 摘要: 0, 工具结果: 0)")
    assert f"   当前项目作用域: {project.resolve()}" in lines
    assert "   /memory verify <id> - 确认记忆仍然成立，刷新最后核实时间" in lines


def test_an_unknown_memory_verb_is_named_in_one_line(cli_fails, paicli_home):
    # It used to print the status and exit 0, so `/memory serach 端口` looked like an answer.
    assert cli_fails("/memory serach 端口") == (
        "❌ 未知 /memory 子命令: serach（可用: list、search、delete、verify、replace、clear）")


def test_list_marks_stale_pending_and_external_entries(cli, paicli_home, project):
    old = (datetime.now(UTC) - timedelta(days=31)).strftime("%Y-%m-%dT%H:%M:%SZ")
    fresh = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    key = str(project.resolve())
    (project / "pom.xml").write_text("<project/>", encoding="utf-8")
    entries = [
        {"id": "fact-0000000a", "content": "很久没核实的事实", "type": "FACT", "timestamp": old,
         "lastVerifiedAt": old, "metadata": {"source": "fact", "scope": "project", "project": key}},
        {"id": "fact-0000000b", "content": "自动提取的事实", "type": "FACT", "timestamp": fresh,
         "lastVerifiedAt": fresh, "metadata": {"source": "auto_extracted", "scope": "project", "project": key,
                                               "verification": "unverified"}},
        {"id": "fact-0000000c", "content": "网页之后保存的", "type": "FACT", "timestamp": fresh,
         "lastVerifiedAt": fresh, "metadata": {"source": "fact", "scope": "global", "external_context": "true",
                                               "external_context_sources": "web_fetch"}},
        {"id": "fact-0000000d", "content": "构建配置在 pom.xml", "type": "FACT", "timestamp": fresh,
         "lastVerifiedAt": fresh, "metadata": {"source": "fact", "scope": "project", "project": key,
                                               "source_files": "pom.xml"}},
    ]
    path = _memory_file(paicli_home)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(entries, ensure_ascii=False, indent=2), encoding="utf-8")
    later = time.time() + 60
    os.utime(project / "pom.xml", (later, later))  # the linked file changed after verification (Q13)
    lines = cli("/memory list").splitlines()
    assert lines[0] == "📋 长期记忆列表："
    old_shown = shown_time(datetime.strptime(old, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC))
    assert lines[1].endswith(f"最后核实 {old_shown} · ⚠️ 可能已过时")
    assert lines[3].endswith("· 尚未经用户核实 · 🔎 自动提取，待核实")
    assert lines[5].startswith("- fact-0000000c [global] · ") and lines[5].endswith("🌐 写入时会话含外部内容(web_fetch)")
    assert lines[7].endswith("· ⚠️ 可能已过时")


def test_a_hand_written_paicli_file_loads_unchanged(cli, paicli_home, project):
    entries = [{"id": "fact-1a2b3c4d", "content": "项目使用 Java 17", "type": "FACT",
                "timestamp": "2026-09-23T08:00:00Z", "lastVerifiedAt": "2026-09-23T08:00:00Z",
                "metadata": {"source": "fact", "scope": "project", "project": str(project.resolve())},
                "tokenCount": 5}]
    path = _memory_file(paicli_home)
    path.parent.mkdir(parents=True)
    text = json.dumps(entries, ensure_ascii=False, indent=2) + "\n"
    path.write_text(text, encoding="utf-8")
    listed = cli("/memory list")
    shown = shown_time(datetime(2026, 9, 23, 8, tzinfo=UTC))  # issue 41: local time, as /snapshot's
    assert "- fact-1a2b3c4d [project] " in listed and f"写入 {shown} · 最后核实 {shown}" in listed
    assert "T08:00:00Z" not in listed
    assert path.read_text(encoding="utf-8") == text  # reading never rewrites


def test_a_corrupt_file_is_backed_up_and_the_next_save_keeps_what_can_be_read(cli, paicli_home):
    cli("/save --global 第一条记忆内容")
    cli("/save --global 第二条记忆内容完全不同")
    path = _memory_file(paicli_home)
    torn = path.read_text(encoding="utf-8")[:-40]  # the last entry is cut
    path.write_text(torn, encoding="utf-8")
    saved = cli("/save --global 第三条记忆")
    assert saved == "💾 已保存到长期记忆(global): 第三条记忆"
    [backup] = path.parent.glob("long_term_memory.json.corrupt-*")
    assert backup.read_text(encoding="utf-8") == torn
    contents = [e["content"] for e in json.loads(path.read_text(encoding="utf-8"))]
    assert contents == ["第一条记忆内容", "第三条记忆"]
