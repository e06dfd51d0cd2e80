"""What ``paicli --mode plan|team -p`` shows (issue 26): each task's tool calls on stderr with its
id, approvals that cannot be asked refused by name with exit 1, a planning failure on stderr with
what the model sent, and the token line counting every unit; stdout carries only the summary."""

from __future__ import annotations

import json
import re
import subprocess

from tests.support.openai_server import ByContent, Reply, verdict

GOAL = "读取 alpha.txt 和 beta.txt，然后运行 wc 统计两者的行数"
PLANNING = "请为以下任务制定执行计划"
COMMAND = "wc -l alpha.txt beta.txt"


def call(name: str, arguments: dict) -> dict:
    return {"name": name, "arguments": arguments}


def plan_reply(tasks: list[dict]) -> Reply:
    return Reply(json.dumps({"summary": "读取并统计", "tasks": tasks}, ensure_ascii=False), usage=(100, 20))


TASKS = [{"id": "a", "description": "读取 alpha", "type": "FILE_READ"},
         {"id": "b", "description": "读取 beta", "type": "FILE_READ"},
         {"id": "c", "description": "运行统计命令", "type": "COMMAND", "dependencies": ["a", "b"]}]


def routes() -> ByContent:
    return ByContent({
        PLANNING: [plan_reply(TASKS)],
        "当前任务：读取 alpha": [Reply("", tool_calls=[call("read_file", {"path": "alpha.txt"})], usage=(10, 1)),
                              Reply("alpha 一行", usage=(10, 1))],
        "当前任务：读取 beta": [Reply("", tool_calls=[call("read_file", {"path": "beta.txt"})], usage=(10, 1)),
                             Reply("beta 一行", usage=(10, 1))],
        "当前任务：运行统计命令": [Reply("", tool_calls=[call("execute_command", {"command": COMMAND})], usage=(10, 1)),
                                Reply("共 2 行", usage=(10, 1))],
    })


def files(project) -> None:
    (project / "alpha.txt").write_text("a\n", encoding="utf-8")
    (project / "beta.txt").write_text("b\n", encoding="utf-8")


def test_each_tasks_tool_calls_show_on_stderr_with_its_id_and_the_run_ends_with_a_token_line(run_paicli, server,
                                                                                             project):
    files(project)
    script = routes()
    server.script = script.script()
    done = run_paicli("--mode", "plan", "-p", GOAL, "--yes")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "✅ 计划执行完成！\n[task_3] 共 2 行"
    err = done.stderr.splitlines()
    assert "[task_1] 📖 读取 1 个文件" in err and "[task_2] 📖 读取 1 个文件" in err
    assert "    └ alpha.txt" in err and "    └ beta.txt" in err
    assert "[task_3] ⚡ 执行 1 条命令" in err and f"    └ {COMMAND}" in err
    # the planner's call and the six task calls: 100 + 6 × 10 in, 20 + 6 × 1 out
    assert err[-1].startswith("📊 Token: 160 输入 / 26 输出 / 186 合计 | ⏱ "), err[-1]
    assert script.left() == {}


def test_the_token_line_counts_the_tokens_the_provider_served_from_its_cache_in_every_unit(run_paicli, server,
                                                                                          project):
    files(project)
    server.prefix_cache = "openai"  # each request's start that repeats the previous one is reported cached
    script = routes()
    for replies in script.routes.values():  # usage estimated from the text, so cached <= input
        replies[:] = [Reply(r.content, tool_calls=r.tool_calls) for r in replies]
    server.script = script.script()
    done = run_paicli("--mode", "plan", "-p", GOAL, "--yes")
    assert done.returncode == 0, done.stderr
    line = done.stderr.splitlines()[-1]
    # the planner's request is the first, with nothing cached: what the line counts, the units sent
    served = re.match(r"📊 Token: \d+ 输入 \(缓存命中 (\d+), \d+%\) / \d+ 输出", line)
    assert served and int(served[1]) > 0, line


def test_without_yes_and_a_terminal_each_refusal_is_named_and_the_run_exits_1(run_paicli, server, project):
    files(project)
    script = routes()
    server.script = script.script()
    # PAICLI_HITL=on: the person is asked (at the default level the reviewer answers instead)
    done = run_paicli("--mode", "plan", "-p", GOAL, "--session", "s-refused", env={"PAICLI_HITL": "on"},
                      stdin=subprocess.DEVNULL)
    assert done.returncode == 1, done.stderr
    assert f"🚫 [task_3] 无法询问审批，已拒绝: execute_command {COMMAND}" in done.stderr.splitlines()
    assert done.stderr.splitlines()[-1] == ("⚠️ 1 个审批请求无法询问，已拒绝（会话 s-refused）。用 --yes 放行全部审批，"
                                            "或在终端中运行 paicli --session s-refused 逐个确认。")
    assert "HITL 审批请求" not in done.stderr  # no dialog nobody can answer
    assert done.stdout.strip() == "✅ 计划执行完成！\n[task_3] 共 2 行"  # the summary, as the model wrote it


def test_the_auto_reviewers_refusal_in_a_task_is_shown_with_the_tasks_id(run_paicli, server, project):
    files(project)
    script = routes()
    server.script = script.script()
    server.reviews = [verdict("ask", "会统计文件")]  # the default level: the reviewer answers, not the person
    done = run_paicli("--mode", "plan", "-p", GOAL)
    assert done.returncode == 0, done.stderr
    err = done.stderr.splitlines()
    assert "  [task_3] ⊘ auto 未放行 execute_command：会统计文件（已交回模型处理）" in err, done.stderr
    assert not any(line.startswith("  ⊘") for line in err)  # no line of a task's call without its id


def test_a_reply_that_is_not_a_plan_goes_to_stderr_with_a_bounded_preview(run_paicli, server):
    reply = "抱歉\x1b]52;c;aGk=\x07，我不会写 JSON。" + "很长" * 400
    server.script = [Reply(reply)]
    done = run_paicli("--mode", "plan", "-p", GOAL, "--session", "s-bad")
    assert done.returncode == 1
    assert done.stdout == ""
    err = done.stderr.splitlines()
    assert "❌ 执行失败: 计划必须是 JSON 对象" in err
    preview = next(line for line in err if line.startswith("模型的回复"))
    assert preview.startswith(f"模型的回复（{len(reply)} 字符）: 抱歉␛]52;c;aGk=␇，我不会写 JSON。很长")
    assert len(preview) < 400 and preview.endswith("...")
    assert "\x1b" not in done.stderr
    assert err[-1] == "会话 s-bad，回到它：paicli --session s-bad"


def test_verbose_shows_a_commands_output_and_an_edits_diff_on_stderr_only(run_paicli, server, project):
    (project / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    script = [Reply("", tool_calls=[call("execute_command", {"command": "printf 'one\\ntwo\\n'"})]),
              Reply("", tool_calls=[call("edit_file", {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"})]),
              Reply("修好了")]
    server.script = list(script)
    quiet = run_paicli("-p", "修复 add", "--yes")
    assert quiet.returncode == 0, quiet.stderr
    assert "⎿ exit code" not in quiet.stderr and "│ +a + b" not in quiet.stderr
    (project / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    server.script = server.script + script
    loud = run_paicli("-p", "修复 add", "--yes", "--verbose")
    assert loud.returncode == 0, loud.stderr
    assert loud.stdout == "修好了\n"
    err = loud.stderr.splitlines()
    assert "    ⎿ exit code 0 · 输出 2 行" in err and "    │ one" in err and "    │ two" in err
    # issue 41: the change against the file, whole lines, with its hunk and its counts
    assert "  ↳ calc.py" in err and "    │ -    return a - b" in err and "    │ +    return a + b" in err
    assert any(line.startswith("    ⎿ +1 -1 行，32 → 32 字节，sha256 ") for line in err)


def test_a_react_turn_and_a_plan_run_with_the_same_calls_end_on_the_same_token_line(run_paicli, server, project):
    """Issue 36 item 4: one usage value for every mode. A ReAct turn that reads a file then answers,
    and a Plan run whose planner and one task make calls with the same figures, count the same."""
    files(project)
    react = [Reply("", tool_calls=[call("read_file", {"path": "alpha.txt"})], usage=(100, 20)),
             Reply("alpha 一行", usage=(10, 1))]
    server.script = react
    turn = run_paicli("-p", "读一下 alpha.txt")
    assert turn.returncode == 0, turn.stderr
    assert turn.stdout == "alpha 一行\n"
    one = ByContent({PLANNING: [plan_reply([{"id": "a", "description": "读取 alpha", "type": "FILE_READ"}])],
                     "当前任务：读取 alpha": [Reply("alpha 一行", usage=(10, 1))]})
    server.script = server.script + one.script()  # the server counts its replies across runs
    run = run_paicli("--mode", "plan", "-p", GOAL, "--yes")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "✅ 计划执行完成！\n[task_1] alpha 一行"
    lines = [[line for line in done.stderr.splitlines() if line.startswith("📊 Token:")] for done in (turn, run)]
    assert [len(found) for found in lines] == [1, 1]
    same = [found[0].split(" | ⏱ ")[0] for found in lines]
    assert same == ["📊 Token: 110 输入 / 21 输出 / 131 合计"] * 2, same
