"""What a person sees during a turn: a spinner while waiting, the streamed answer, one group
line per tool (reference u.3), failures, and the token usage line after the turn."""

from __future__ import annotations

import json
import sys
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Callable, Mapping, TextIO

from rich.status import Status
from rich.text import Text

from paicli.run.result import RunResult
from paicli.ui.terminal import Hanging, SafeConsole, visible
from paicli.ui.thinking import CONVERSATION, ThinkingView

from paicli.tools.boundary import unwrap
from paicli.tools.call import facts_for
from paicli.tools.facts import ToolFacts

if TYPE_CHECKING:
    from paicli.tools.base import ToolSpec

EMPTY_ANSWER = "⚠️ 模型返回了空回复"  # a turn that ends without text is not an answer
# Issue 26: an approval nobody can answer (``-p`` without a terminal or ``--yes``) is refused
# and said so; the refusal is the reason the model reads.
NO_TERMINAL_REASON = "没有终端可以询问审批（-p 未加 --yes）"
REFUSED_LINE = "🚫 {unit}无法询问审批，已拒绝: {tool} {target}"
REFUSED_CLOSING = ("⚠️ {n} 个审批请求无法询问，已拒绝（会话 {sid}）。用 --yes 放行全部审批，"
                   "或在终端中运行 paicli --session {sid} 逐个确认。")
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


def group_lines(calls: list[dict[str, Any]], facts: Callable[[str], ToolFacts]) -> list[str]:
    """The batch's lines (reference u.3): a header per tool, from its facts (``facts``: the run's
    table's, by name), then a line per call."""
    groups: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()
    for call in calls:
        groups.setdefault(call.get("name") or "unknown", []).append(call)
    lines: list[str] = []
    for name, members in groups.items():
        if facts(name).web == "browser":  # issue 40: a browser call is its action and page, one line each
            from paicli.tools.browser.display import browser_line

            lines += [browser_line(name, c.get("args")) for c in members]
            continue
        label = facts(name).label or "🔧 " + name + " × {n}"  # reference u.3: group header
        lines.append(label.format(n=len(members)))
        lines += [f"    └ {key_param(c.get('args'))}" for c in members]
    return lines


def rows_of(text: str, width: int) -> int:
    """The terminal rows ``text`` took, printed from a line's start on a ``width``-cell terminal."""
    from rich.cells import cell_len

    return sum(max(1, -(-cell_len(line) // max(1, width))) for line in text.split("\n"))


def usage_line(result: RunResult) -> str:
    """reference (u.3), with the input the provider's prefix cache served (issue 13), if any; the
    same line for a run in any mode: its ``usage`` counts every model call of it."""
    usage = result.usage
    served = f" (缓存命中 {usage.cached}, {usage.cached / usage.input:.0%})" if usage.cached and usage.input else ""
    return (f"📊 Token: {usage.input} 输入{served} / {usage.output} 输出 / {usage.total} 合计 "
            f"| ⏱ {result.seconds:.1f}s")


class RunLine:
    """A Plan/Team run's live status line (issue 26): the units running, the seconds since the
    run started, the tool calls so far. The spinner renders it on every refresh, so the seconds
    move; it is stopped, like any spinner, before a question is asked."""

    def __init__(self, clock: Any = time.monotonic):
        self._clock, self.started = clock, clock()
        self.running: list[str] = []
        self.waiting: dict[str, str] = {}  # issue 40: a unit waiting for the browser -> the unit using it
        self.calls = 0

    def text(self) -> str:
        units = ", ".join(f"{u}（等待浏览器：{self.waiting[u]} 正在使用）" if u in self.waiting else u
                          for u in self.running) if self.running else "—"
        return f"运行中: {units} · {self._clock() - self.started:.0f}s · 工具调用 {self.calls} 次"

    def __rich__(self) -> Text:
        return Text(self.text(), style="dim")


class Renderer:
    """Turn output for the REPL (answer streamed to ``out``) or for ``-p`` (progress on stderr,
    answer printed once at the end by the caller)."""

    def __init__(self, *, stream_answer: bool, read_line: Any = None, read_plan_review: Any = None,
                 out: TextIO | None = None, err: TextIO | None = None, interactive: bool = True,
                 previews: bool = True, thinking: str = "off", show_answer: Callable[[str], None] | None = None,
                 tools: Callable[[], Mapping[str, ToolSpec]] = dict):
        self.stream_answer = stream_answer
        self._answered = False  # a ReAct answer was shown as it came (streamed, or printed whole): finish leaves it
        self.interactive = interactive  # False: approvals cannot be asked, they are refused and counted
        self.refused: list[str] = []  # one line per approval refused that way
        self.previews = previews  # a command's output, an edit's diff under the call (-p: --verbose)
        self._calls: dict[str, dict[str, Any]] = {}  # call id -> the call, for its preview
        self.tools = tools  # the run's tool table as it is now (MCP servers join it): the calls' facts
        self.read_line = read_line  # async (prompt) -> str | None, for approval questions
        self.read_plan_review = read_plan_review  # the same, with the plan review's keys bound (paicli.ui.plan_review.KEYS)
        # Everything shown here comes from the model or a tool: SafeConsole makes it inert.
        self.out = SafeConsole(file=out or sys.stdout, soft_wrap=True)
        self.err = SafeConsole(file=err or sys.stderr, soft_wrap=True)
        self.progress = self.out if stream_answer else self.err
        self.show_answer = show_answer or (lambda text: self.out.print(text, markup=False))
        self._status: Status | None = None
        self._mid_line = False
        self._streamed = False  # tokens of the current model message were shown
        self._shown = ""  # and what they said, as printed
        self.run_line: Any = None  # a Plan/Team run's live status (``RunLine``), shown instead of ``text``
        # issue 39: reasoning, dimmed, where progress goes (the REPL's terminal; -p --verbose: stderr)
        self.thinking = ThinkingView(self.progress, thinking, self._spin)
        self._reasoned = False  # reasoning of the current model message was shown as it streamed

    def _spin(self, text: Any) -> bool:
        """The live status line shows ``text`` (the newest reasoning) on a terminal."""
        if not self.progress.is_terminal:
            return False
        if self._status is None:
            self._status = self.progress.status(text, spinner="dots")
            self._status.start()
        else:
            self._status.update(text)
        return True

    def reasoning(self, text: str, label: str = CONVERSATION) -> None:
        """A piece of streamed reasoning (``reasoning_content`` and the providers' equivalents)."""
        self._reasoned = True
        self.thinking.feed(text, label)

    def reasoning_block(self, text: str, label: str) -> None:
        """A unit's or planner's whole reasoning, shown when its message arrives."""
        self.stop_waiting()
        self.thinking.block(text, label)

    def waiting(self, text: str = "思考中…") -> None:
        if self._status is None and self.progress.is_terminal:
            self._status = self.progress.status(self.run_line or text, spinner="dots")
            self._status.start()

    def stop_waiting(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def token(self, text: str) -> None:
        self.thinking.close()
        self.stop_waiting()
        self._streamed = True
        if self.stream_answer:
            self.out.print(text, end="")
            self._shown += text
            self._mid_line = not text.endswith("\n")

    def discard_stream(self) -> None:
        """The answer streamed so far is not the answer (its call is retried, unstreamed): on a
        terminal it is erased, and the retried answer is printed whole when it comes, once."""
        self.stop_waiting()
        if self.stream_answer and self._shown and self.out.is_terminal:
            rows = rows_of(visible(self._shown), self.out.width)
            self.out.file.write("\r" + (f"\x1b[{rows - 1}A" if rows > 1 else "") + "\x1b[J")
            self.out.file.flush()
            self._mid_line = False
        self._end_line()
        self._streamed, self._shown = False, ""

    def _end_line(self) -> None:
        if self._mid_line:
            self.out.print()
            self._mid_line = False

    def model_message(self, message: Any, unit: str | None = None) -> None:
        """``unit``: the Plan task or Team step whose call this is; its text is not the answer."""
        self.stop_waiting()
        reasoning = message.additional_kwargs.get("reasoning_content") if unit is None else None
        if isinstance(reasoning, str) and reasoning.strip() and not self._reasoned:
            self.thinking.block(reasoning, CONVERSATION)  # an answer that was not streamed (s.2)
        self.thinking.close()
        self._reasoned = False
        calls = [*message.tool_calls, *message.invalid_tool_calls]
        if self.stream_answer and not calls and not self._streamed and message.text and unit is None:
            self.out.print(message.text)  # an answer that was not streamed (finalization)
        if self.stream_answer and not calls and unit is None:
            self._answered = True
        self._streamed, self._shown = False, ""
        self._calls.update({c["id"]: c for c in message.tool_calls if c.get("id")})
        if calls:
            self._end_line()
            prefix = f"[{unit}] " if unit else ""
            for line in group_lines(calls, self.facts):  # the unit's id leads each group; its items follow
                self.progress.print(line if line.startswith(" ") else prefix + line, style="cyan")
        if calls:
            self.waiting("执行中…")

    def tool_results(self, messages: list[Any], unit: str | None = None) -> None:
        self.thinking.close()
        self.stop_waiting()
        prefix = f"[{unit}] " if unit else ""
        for m in messages:
            if m.status == "error":
                first = unwrap(str(m.content)).splitlines()[0:1] or [""]
                self.progress.print(Hanging(f"  {prefix}→ ", first[0][:160]), style="yellow")
            if self.previews:
                for line in self._preview(m, prefix):
                    self.progress.print(line, style="dim")
        self.waiting()

    def _preview(self, message: Any, prefix: str) -> list[str]:
        from paicli.ui.previews import command_preview, edit_preview

        call = self._calls.pop(message.tool_call_id, None) or {}
        preview = self.facts(call.get("name") or message.name).preview
        if preview == "command":
            lines = command_preview(unwrap(str(message.content)), getattr(message, "artifact", None))
        elif message.status == "error":
            return []  # nothing was changed
        else:
            lines = edit_preview(preview, call.get("args"), getattr(message, "artifact", None))
        return [f"  {prefix}↳ {key_param(call.get('args'))}", *lines] if lines else []

    def facts(self, name: str | None) -> ToolFacts:
        return facts_for(name, self.tools())

    async def approve(self, request: dict[str, Any]) -> Any:
        from paicli.ui.approve import ask_approval

        self.thinking.close()
        self.stop_waiting()
        self._end_line()
        if not self.interactive:
            return self.refuse(request)
        answer = await ask_approval(request, self.read_line, lambda line: self.progress.print(line))
        call = self._calls.get(str(request.get("call_id")))
        if call is not None and isinstance(answer, dict) and answer.get("decision") == "edit":
            self._calls[call["id"]] = {**call, "args": answer["args"]}  # its preview names what ran
        self.waiting("执行中…")
        return answer

    def refuse(self, request: dict[str, Any]) -> dict[str, Any]:
        unit = f"[{request['unit']}] " if request.get("unit") else ""
        line = REFUSED_LINE.format(unit=unit, tool=request.get("tool"), target=key_param(request.get("args")))
        self.refused.append(line)
        self.err.print(line, style="yellow")
        return {"decision": "reject", "reason": NO_TERMINAL_REASON}

    async def review(self, request: dict[str, Any]) -> Any:
        from paicli.ui.plan_review import ask_plan_review

        self.stop_waiting()
        self._end_line()
        width = self.progress.width if self.progress.is_terminal else None  # rows fit the terminal (issue 41)
        answer = await ask_plan_review(request, self.read_plan_review or self.read_line,
                                       lambda line: self.progress.print(line), width)
        self.waiting("执行中…")
        return answer

    def notice(self, text: str, style: str = "dim") -> None:
        self.thinking.close()
        self.stop_waiting()
        self._end_line()
        self.progress.print(Hanging.marked(text), style=style)

    def diagnostics(self, lines: list[str]) -> None:
        """Issue 38: the folded 🩺 line per edited file, and a server missing, failed or slow;
        shown where edits' diffs are (the REPL; ``-p`` with ``--verbose``)."""
        if not self.previews:
            return
        self.stop_waiting()
        self._end_line()
        for line in lines:
            self.progress.print(line, style="dim")
        self.waiting()

    def finish(self, result: RunResult) -> None:
        """A run's closing lines, in any mode: why it failed (its text and ``detail``, on stderr),
        else its answer unless it was shown as it came (a ReAct answer in the REPL; a run's summary
        or ``-p``'s answer are shown here, through ``show_answer``), or that a completed run came
        back empty; then the token line."""
        self.thinking.close()
        self.stop_waiting()
        self._end_line()
        if result.failed:
            for line in (result.answer, result.detail):
                if line.strip():
                    self.err.print(line, style="red")
        elif result.answer.strip() and not self._answered:
            self.show_answer(result.answer)
        elif result.completed and not result.answer.strip():
            self.err.print(EMPTY_ANSWER, style="yellow")
        if result.usage.calls:
            self.progress.print(usage_line(result), style="dim")
