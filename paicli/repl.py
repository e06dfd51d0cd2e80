"""The interactive REPL: prompt_toolkit input (history, slash-command completion), rich output.

Ctrl-C or ESC while a turn runs cancels that turn (a running command is killed with its process
group) and keeps the session (``paicli.ui.esc_keys``); Ctrl-C twice in a row at an empty prompt
exits. A pending ``/plan`` or ``/team`` shows in the prompt, and ESC there drops it.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.application import run_in_terminal
from prompt_toolkit.completion import Completer, Completion
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings
from rich.console import Console
from rich.text import Text

from paicli.memory.ledger.owner import LedgerConflict, SessionBusy
from paicli.commands import dispatch as commands
from paicli.run.database_errors import failure_line
from paicli.run.result import RunResult
from paicli.app import App, sandbox_lines
from paicli.modes import MODE_SPECS, STOPPED_REPL
from paicli.ui.render import Renderer
from paicli.ui.status_bar import StatusBar
from paicli.ui.terminal import Hanging, SafeConsole, visible



def history_file(home: Path) -> FileHistory:
    path = home / "history" / "input.history"
    path.parent.mkdir(parents=True, exist_ok=True)
    return FileHistory(str(path))


def review_bindings() -> KeyBindings:
    """Each key of the plan review ends the question with the line it stands for."""
    from paicli.ui.plan_review import KEYS

    bindings = KeyBindings()
    for key, line in KEYS.items():
        bindings.add(key, eager=True)(lambda event, line=line: event.app.exit(result=line))
    return bindings


def banner(app: App, console: Console) -> None:
    s = app.settings
    console.print(Text.assemble(("paicli", "bold"), visible(f" · {s.model} ({s.provider}) · {s.project_root}")))
    console.print(f"会话 {app.session_id}", style="dim", highlight=False)
    from paicli.config.model_switch import window_notice

    if (note := window_notice(s)) is not None:  # issue 39: an unknown model's window, said once
        console.print(visible(note), style="yellow", highlight=False)
    if not getattr(app.args, "resume_run", False) and (line := app.new_session_line()):
        console.print(visible(line), style="yellow", highlight=False)
    for line in sandbox_lines(s):  # issue 24: mechanism, writable roots, network, or why not
        console.print(Hanging.of(line), style="yellow" if line.startswith("⚠️") else "dim", highlight=False)
    console.print("输入任务开始工作；/help 查看命令，Ctrl-C 或 ESC 取消当前任务，连按两次 Ctrl-C 退出。", style="dim")


class CommandCompleter(Completer):
    """Slash commands as they are typed, then a command's sub-commands and flags
    (``paicli.commands.dispatch.completions``, from the command specs)."""

    def get_completions(self, document: Any, complete_event: Any) -> Any:
        text = document.text_before_cursor.lstrip()
        typed = text.rpartition(" ")[2]
        for word in commands.completions(text):
            yield Completion(word, start_position=-len(typed))


def mode_bindings(repl: "Repl") -> KeyBindings:
    """Shift+Tab (``ESC [ Z``) cycles the session mode auto → plan → ask (reference s.1 item 9)."""
    bindings = KeyBindings()

    @bindings.add("s-tab")
    def _cycle(event: Any) -> None:
        from paicli.run.session_modes import next_mode

        mode = next_mode(repl.app.session_mode)
        repl.app.session_mode = mode  # now, so a second press cycles on from here
        event.app.create_background_task(repl.switch_mode(mode))

    pending_key_bindings(bindings, repl)
    return bindings


def pending_key_bindings(bindings: KeyBindings, repl: "Repl") -> None:
    """ESC at the prompt drops a pending ``/plan`` or ``/team`` (reference s.1 item 8; issue 41)."""
    from prompt_toolkit.filters import Condition

    @bindings.add("escape", filter=Condition(lambda: repl.app.next_mode is not None))
    def _drop(event: Any) -> None:
        from paicli.commands.mode import drop_pending

        drop_pending(repl.app, lambda line: run_in_terminal(lambda: repl.say(line)))


def answer_bindings() -> KeyBindings:
    """ESC at a question asked during a run cancels the run, as Ctrl-C does there."""
    bindings = KeyBindings()
    bindings.add("escape")(lambda event: event.app.exit(exception=KeyboardInterrupt()))
    return bindings


class Repl:
    def __init__(self, app: App):
        self.app = app
        self.console = SafeConsole()  # command output quotes memories, session titles, file names
        self.status = StatusBar(app)
        self.prompt = PromptSession(
            history=history_file(app.settings.home),
            completer=CommandCompleter(),
            key_bindings=mode_bindings(self),
            bottom_toolbar=self.status.toolbar if app.settings.status_bar else None,  # reference u.4
        )
        app.on_history_clear = self.forget_history
        self.answers: PromptSession = PromptSession()  # approval answers stay out of the input history
        self._review_keys: KeyBindings | None = None
        self.keys: Any = None  # paicli.ui.esc_keys.EscWatcher while a run works
        self.typed_ahead = ""  # what was typed while the last run worked: the next prompt's text

    async def read_line(self, text: str) -> str | None:
        """A question outside a turn (``/resume``'s choice): Ctrl-C or Ctrl-D answers nothing."""
        try:
            return await self.answers.prompt_async(text, handle_sigint=False)
        except (EOFError, KeyboardInterrupt):
            return None

    async def read_answer(self, text: str) -> str | None:
        """Approval questions during a turn: Ctrl-C cancels the turn, as it does while the turn
        runs (the next turn tells the model which calls were cancelled); Ctrl-D rejects.
        ``handle_sigint=False``: prompt_toolkit would otherwise remove the turn's Ctrl-C
        handler when the question closes."""
        try:
            with self._keys_paused():
                return await self.answers.prompt_async(text, handle_sigint=False, key_bindings=answer_bindings())
        except EOFError:
            return None
        except KeyboardInterrupt:
            raise asyncio.CancelledError from None

    async def read_plan_review(self, text: str) -> str | None:
        """The plan review's question: as ``read_answer``, with Ctrl+O and ESC answering at once
        (``paicli.ui.plan_review.KEYS``). Without these bindings prompt_toolkit's Ctrl+O would accept the
        empty line, which executes the plan."""
        if self._review_keys is None:
            self._review_keys = review_bindings()
        try:
            with self._keys_paused():
                return await self.answers.prompt_async(text, handle_sigint=False, key_bindings=self._review_keys)
        except EOFError:
            return None
        except KeyboardInterrupt:
            raise asyncio.CancelledError from None

    def _keys_paused(self) -> Any:
        from contextlib import nullcontext

        return self.keys.paused() if self.keys is not None else nullcontext()

    def prompt_text(self) -> str:
        """``❯``, led by the mode a pending ``/plan`` or ``/team`` will run the next input in."""
        return f"[{self.app.next_mode}] ❯ " if self.app.next_mode else "❯ "

    def say(self, text: str) -> None:
        self.console.print(text, markup=False)

    async def switch_mode(self, mode: str) -> None:
        from paicli.run.session_modes import switched

        await self.app.set_mode(mode)
        await run_in_terminal(lambda: self.say(switched(mode)))

    def forget_history(self) -> None:
        """``/history clear``: the file is emptied by the command; this forgets what the prompt
        loaded from it, so Up no longer brings old inputs back."""
        fresh = history_file(self.app.settings.home)
        self.prompt.history = self.prompt.default_buffer.history = fresh
        self.prompt.default_buffer.reset()

    def count_skills(self) -> None:
        """In a thread at start: the status bar's skill count, then a redraw of the prompt."""
        try:
            self.status.count_skills()
        except Exception:  # noqa: BLE001 - the bar shows "Skill -" until the next turn
            return
        self.prompt.app.invalidate()

    async def run(self) -> int:
        banner(self.app, self.console)
        if self.app.settings.status_bar:
            threading.Thread(target=self.count_skills, daemon=True).start()
        self.app.start_mcp(self.say)  # in the background: the prompt does not wait for servers
        try:
            if getattr(self.app.args, "resume_run", False):
                await self.continue_run()
            else:
                asyncio.ensure_future(self.unfinished_notice())
            return await self.loop()
        finally:
            await self.app.close_mcp()
            await self.app.close_lsp()
            await self.app.finish_background()
            self.background_notices()
            self.say(f"会话已保存，继续：paicli --session {self.app.session_id}")

    async def continue_run(self) -> None:
        """``paicli --continue``: finish the session's unfinished run, then the REPL goes on."""
        mode = await self.app.session.unfinished_mode()
        if mode is None:
            self.say(f"会话 {self.app.session_id} 没有未完成的运行。")
        else:
            await self.status.after_turn(await self.run_mode(mode, None))  # issue 41: that run's figures

    async def unfinished_notice(self) -> None:
        """Issue 26: one line when the project's newest session (or ``--session``'s) has a run that
        did not end; read
        in a thread, so the first prompt does not wait."""
        from paicli.run.comeback import startup_line

        s = self.app.settings
        try:
            line = await asyncio.to_thread(startup_line, s.home, s.home / "history" / "raw", s.project_root,
                                           self.app.args.session)
        except Exception:  # a hint only: an unreadable ledger is reported when it is used
            return
        if line:
            await run_in_terminal(lambda: self.show_notice(line))

    def background_notices(self) -> None:
        """Q7: the 💾 notice of a finished fact extraction, before the next prompt. Once the
        session exists, notices arrive live and are printed above the prompt being edited."""
        for notice in self.app.background_notices():
            self.show_notice(notice)
        if self.app.started and self.app.session.background.listener is None:
            self.app.session.background.listener = self.notice_now

    def show_notice(self, text: str) -> None:
        self.console.print(text, markup=False, style="dim")

    def notice_now(self, text: str) -> None:
        asyncio.ensure_future(run_in_terminal(lambda: self.show_notice(text)))

    async def loop(self) -> int:
        interrupted, prefill = False, ""
        while True:
            self.background_notices()
            default, prefill = prefill, ""
            try:
                text = await self.next_line(default)
            except KeyboardInterrupt:
                if interrupted:
                    return 0
                interrupted = True
                self.console.print("（再按一次 Ctrl-C 退出）", style="dim")
                continue
            except EOFError:
                return 0
            interrupted = False
            if not text.strip():
                continue
            if commands.is_command(text):
                leave, prefill = await self.command(text)
                if leave:
                    return 0
                continue
            mode = self.app.mode_for_input()
            await self.status.after_turn(await self.run_mode(mode, text.strip()))  # any mode's run (issue 41)

    async def next_line(self, default: str) -> str:
        """The next line to handle: one typed ahead with Enter while a run worked (echoed), else
        the prompt's, starting from ``default`` (an MCP prompt to edit, issue 39) or from what was
        typed ahead without Enter (issue 41)."""
        if not default and "\n" in self.typed_ahead:
            text, self.typed_ahead = self.typed_ahead.split("\n", 1)
            self.console.print(self.prompt_text() + text, markup=False, highlight=False)
            if text.strip():
                self.prompt.history.append_string(text)
            return text
        text, self.typed_ahead = await self.prompt.prompt_async(self.prompt_text,
                                                                default=default or self.typed_ahead), ""
        return text

    async def command(self, text: str) -> tuple[bool, str]:
        """A slash command, and the run it starts (``/plan <task>``, ``/continue``); returns whether
        the REPL ends and the text to prefill the next prompt with."""
        try:
            outcome = await commands.handle(text, self.app, self.say, self.read_line)
        except (SessionBusy, LedgerConflict) as exc:  # /clear on a session another process is busy with
            self.say(str(exc))
            return False, ""
        except Exception as exc:  # issue 35: the database went away; one line, the REPL stays
            if (line := failure_line(exc)) is None:
                raise
            self.console.print(line, markup=False, style="red")
            return False, ""
        if outcome.exit:
            return True, ""
        result = await self.run_mode(*outcome.run) if outcome.run is not None else None
        await self.status.after_turn(result)  # that run's figures
        return False, outcome.prefill or ""

    async def run_mode(self, mode: str, text: str | None) -> RunResult | None:
        """The one entry point for a run in any mode (``paicli.modes``; text None: finish the
        session's unfinished run). ReAct streams its answer; a run apart (Plan, Team) prints its
        banner, is reviewed here and ends with its summary and token line (every unit's calls).
        Ctrl-C cancels it (reference s.7), and a run apart says how to finish it (issue 26).
        Returns its result, or None when it was cancelled or refused."""
        spec = MODE_SPECS[mode]
        renderer = Renderer(stream_answer=True, read_line=self.read_answer, read_plan_review=self.read_plan_review,
                            thinking=self.app.settings.show_thinking, tools=self.app.tool_table(),
                            show_answer=lambda answer: self.console.print(answer, markup=False))
        if spec.banner:
            renderer.notice(spec.banner, style="bold")
        if not spec.runs_apart:
            renderer.waiting()
        task = asyncio.ensure_future(self.app.session.run(mode, text, renderer, review=True))
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, task.cancel)
        from paicli.ui.esc_keys import EscWatcher

        self.keys = EscWatcher(sys.stdin.fileno(), task.cancel, loop)  # ESC cancels it too (issue 41)
        if not self.keys.start():
            self.keys = None
        try:
            result = await task
        except asyncio.CancelledError:
            renderer.notice(spec.cancelled, style="yellow")
            if spec.runs_apart:
                renderer.notice(STOPPED_REPL.format(sid=self.app.session_id), style="yellow")
            return None
        except (SessionBusy, LedgerConflict) as exc:  # another process writes the session: say so, keep the REPL
            renderer.notice(str(exc), style="red")
            return None
        except Exception as exc:  # issue 35: the database went away during the turn; one line, the REPL stays
            if (line := failure_line(exc)) is None:
                raise
            renderer.stop_waiting()
            renderer.notice(line, style="red")
            return None
        finally:
            loop.remove_signal_handler(signal.SIGINT)
            if self.keys is not None:
                self.typed_ahead, self.keys = self.typed_ahead + self.keys.stop(), None  # after what still waits
        renderer.finish(result)  # any mode: a run's summary (a ReAct answer streamed already), the token line
        self.console.print()
        return result


def run_repl(args: Any) -> int:
    app = App(args)
    try:
        if getattr(args, "resume_run", False):
            app.continue_session()
        app.warm_up()
        return asyncio.run(Repl(app).run())
    finally:
        app.close()
