"""What a person sees during a turn: a spinner while waiting, the streamed answer, one group
line per tool (reference u.3), failures, and the token usage line after the turn."""

from __future__ import annotations

import json
import sys
from collections import OrderedDict
from typing import Any, TextIO

from rich.status import Status

from paicli.terminal import SafeConsole

from tools.boundary import unwrap

# reference u.3: group header per tool name, with the key parameter listed under it.
GROUP_LABELS = {
    "read_file": "📖 读取 {n} 个文件",
    "write_file": "✏️ 写入 {n} 个文件",
    "edit_file": "✏️ 编辑 {n} 个文件",
    "list_dir": "📂 列出 {n} 个目录",
    "execute_command": "⚡ 执行 {n} 条命令",
    "glob_files": "🔍 搜索代码 {n} 次",
    "grep_code": "🔍 搜索代码 {n} 次",
    "web_search": "🌐 联网搜索 {n} 次",
    "web_fetch": "📰 抓取 {n} 个网页",
    "save_memory": "💾 保存长期记忆 {n} 条",
    "save_skill_reference": "📝 写入 Skill 参考文件 {n} 个",
    "revert_turn": "↩️ 回滚快照 {n} 次",
}
EMPTY_ANSWER = "⚠️ 模型返回了空回复"  # a turn that ends without text is not an answer
KEY_PARAMS = ("path", "command", "name", "query", "url", "fact", "pattern")


def key_param(args: Any) -> str:
    if isinstance(args, dict):
        for key in KEY_PARAMS:
            if args.get(key) not in (None, ""):
                return str(args[key]).replace("\n", " ")[:80]
        raw = json.dumps(args, ensure_ascii=False)
    else:
        raw = str(args)
    return raw if len(raw) <= 80 else raw[:77] + "..."


def group_lines(calls: list[dict[str, Any]]) -> list[str]:
    groups: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()
    for call in calls:
        groups.setdefault(call.get("name") or "unknown", []).append(call)
    lines: list[str] = []
    for name, members in groups.items():
        label = GROUP_LABELS.get(name, "🔧 " + name + " × {n}")
        lines.append(label.format(n=len(members)))
        lines += [f"    └ {key_param(c.get('args'))}" for c in members]
    return lines


def usage_line(result: Any) -> str:
    """reference (u.3), with the input the provider's prefix cache served (issue 13), if any."""
    total = result.input_tokens + result.output_tokens
    cached = getattr(result, "cached_tokens", 0)
    served = f" (缓存命中 {cached}, {cached / result.input_tokens:.0%})" if cached and result.input_tokens else ""
    return (f"📊 Token: {result.input_tokens} 输入{served} / {result.output_tokens} 输出 / {total} 合计 "
            f"| ⏱ {result.seconds:.1f}s")


class Renderer:
    """Turn output for the REPL (answer streamed to ``out``) or for ``-p`` (progress on stderr,
    answer printed once at the end by the caller)."""

    def __init__(self, *, stream_answer: bool, read_line: Any = None, read_review: Any = None,
                 out: TextIO | None = None, err: TextIO | None = None):
        self.stream_answer = stream_answer
        self.read_line = read_line  # async (prompt) -> str | None, for approval questions
        self.read_review = read_review  # the same, with the plan review's keys bound (paicli.review.KEYS)
        # Everything shown here comes from the model or a tool: SafeConsole makes it inert.
        self.out = SafeConsole(file=out or sys.stdout, soft_wrap=True)
        self.err = SafeConsole(file=err or sys.stderr, soft_wrap=True)
        self.progress = self.out if stream_answer else self.err
        self._status: Status | None = None
        self._mid_line = False
        self._streamed = False  # tokens of the current model message were shown

    def waiting(self, text: str = "思考中…") -> None:
        if self._status is None and self.progress.is_terminal:
            self._status = self.progress.status(text, spinner="dots")
            self._status.start()

    def stop_waiting(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def token(self, text: str) -> None:
        self.stop_waiting()
        self._streamed = True
        if self.stream_answer:
            self.out.print(text, end="")
            self._mid_line = not text.endswith("\n")

    def _end_line(self) -> None:
        if self._mid_line:
            self.out.print()
            self._mid_line = False

    def model_message(self, message: Any) -> None:
        self.stop_waiting()
        calls = [*message.tool_calls, *message.invalid_tool_calls]
        if self.stream_answer and not calls and not self._streamed and message.text:
            self.out.print(message.text)  # an answer that was not streamed (finalization)
        self._streamed = False
        if calls:
            self._end_line()
            for line in group_lines(calls):
                self.progress.print(line, style="cyan")
        if calls:
            self.waiting("执行中…")

    def tool_results(self, messages: list[Any]) -> None:
        self.stop_waiting()
        for m in messages:
            if m.status == "error":
                first = unwrap(str(m.content)).splitlines()[0:1] or [""]
                self.progress.print(f"  → {first[0][:160]}", style="yellow")
        self.waiting()

    async def approve(self, request: dict[str, Any]) -> Any:
        from paicli.approve import ask_approval

        self.stop_waiting()
        self._end_line()
        answer = await ask_approval(request, self.read_line, lambda line: self.progress.print(line))
        self.waiting("执行中…")
        return answer

    async def review(self, request: dict[str, Any]) -> Any:
        from paicli.review import ask_review

        self.stop_waiting()
        self._end_line()
        answer = await ask_review(request, self.read_review or self.read_line, lambda line: self.progress.print(line))
        self.waiting("执行中…")
        return answer

    def notice(self, text: str, style: str = "dim") -> None:
        self.stop_waiting()
        self._end_line()
        self.progress.print(text, style=style)

    def finish(self, result: Any) -> None:
        self.stop_waiting()
        self._end_line()
        if result.error:
            self.err.print(result.error, style="red")
        elif not result.answer.strip():
            self.err.print(EMPTY_ANSWER, style="yellow")
        if result.model_calls:
            self.progress.print(usage_line(result), style="dim")
