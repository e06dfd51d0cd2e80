"""The plan review in the terminal (reference s.4 "Plan review"): the summary and the keys,
then ``操作/补充> ``. Every key the summary lists works:

- Enter on an empty line (or ``y`` / ``run``) executes;
- Ctrl+O (or ``/view``) shows the full plan and asks again;
- ESC (or ``cancel`` / ``esc``) cancels;
- ``I`` alone asks for the supplement; any other text re-plans with it as the supplement.

The keys are bound by the REPL's review prompt (``KEYS``: key name → the line it stands for), so
a terminal without them still has the typed forms. Closed input cancels: nothing runs that nobody
approved."""

from __future__ import annotations

from typing import Any, Awaitable, Callable

PROMPT = "操作/补充> "
SUPPLEMENT_PROMPT = "补充要求> "
VIEW = "/view"
KEYS = {"c-o": VIEW, "escape": "cancel"}  # prompt_toolkit key names; Enter is an empty line
EXPANDED = "👆 已展开完整计划，继续按 Enter / Ctrl+O / ESC / I。"


async def ask_review(request: dict[str, Any], read_line: Callable[[str], Awaitable[str | None]] | None,
                     say: Callable[[str], None]) -> str:
    for line in str(request.get("summary") or "").splitlines():
        say(line)
    while True:
        raw = await read_line(PROMPT) if read_line is not None else None
        if raw is None:
            return "cancel"
        if raw.strip().lower() == VIEW:
            for line in str(request.get("plan") or "").splitlines():
                say(line)
            say(EXPANDED)
            continue
        if raw.strip().lower() == "i":
            supplement = await read_line(SUPPLEMENT_PROMPT)
            if not (supplement or "").strip():
                continue  # nothing to add: back to the question
            return supplement.rstrip("\n")
        return raw.rstrip("\n")
