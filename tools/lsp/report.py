"""Diagnostics as the model and the person read them (issue 38; reference s.2 item 8.2, t).

Pure functions on plain data. A server's diagnostics become ``Problem``s (errors and warnings
only; 1-based line and column, the column counted in characters, not LSP's UTF-16 units). After
an edit only what is **new** is told: a problem is known by its severity, source, code and
message (not its line, which moves with every edit above it), counted with multiplicity, so a
second identical error is new and a fixed one simply disappears. The model gets one internal
message for the whole step, bounded; the person one folded ``🩺`` line per file.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

ERROR, WARNING = 1, 2  # LSP DiagnosticSeverity; information and hints are not reported
SEVERITY_WORDS = {ERROR: "错误", WARNING: "警告"}
MAX_MESSAGE = 240  # characters of one diagnostic's message
HEADER = "[LSP 诊断] 刚才的编辑之后，语言服务器报告了以下新问题（行:列 从 1 开始）："
MORE = "…另有 {n} 条未列出"
ICON = "🩺"


@dataclass(frozen=True)
class Problem:
    severity: int
    line: int  # 1-based
    column: int  # 1-based, in characters
    message: str
    source: str = ""
    code: str = ""

    @property
    def key(self) -> str:
        return f"{self.severity}|{self.source}|{self.code}|{self.message}"


@dataclass(frozen=True)
class FileReport:
    path: str  # project-relative, as the model named it
    server: str  # which server said so
    new: tuple[Problem, ...]
    current: tuple[str, ...]  # the keys of every problem the file has now (what is "seen" next time)
    fixed: int = 0  # problems seen before that are gone


def utf16_column(line_text: str, units: int) -> int:
    """1-based character column of LSP position ``units`` (UTF-16 code units) in ``line_text``."""
    count = 0
    for index, char in enumerate(line_text):
        if count >= units:
            return index + 1
        count += 2 if ord(char) > 0xFFFF else 1
    return len(line_text) + 1


def utf16_units(line_text: str, column: int) -> int:
    """The LSP character offset of 1-based character ``column``."""
    return sum(2 if ord(c) > 0xFFFF else 1 for c in line_text[:max(0, column - 1)])


def problems(diagnostics: Iterable[Any], text: str) -> list[Problem]:
    """lsprotocol ``Diagnostic``s as errors and warnings, in file order."""
    lines = text.splitlines()
    found = []
    for d in diagnostics:
        severity = int(d.severity or ERROR)  # the spec: a missing severity is the client's to choose
        if severity not in SEVERITY_WORDS:
            continue
        line = d.range.start.line
        column = utf16_column(lines[line] if line < len(lines) else "", d.range.start.character)
        code = "" if d.code is None else str(d.code)
        found.append(Problem(severity, line + 1, column, _one_line(d.message), d.source or "", code))
    return sorted(found, key=lambda p: (p.line, p.column, p.severity))


def _one_line(message: str) -> str:
    flat = " ".join(str(message).split())
    return flat if len(flat) <= MAX_MESSAGE else flat[:MAX_MESSAGE - 1] + "…"


def compare(path: str, server: str, now: Sequence[Problem], seen: Sequence[str]) -> FileReport:
    """What is new in ``now`` against the keys ``seen`` the last time this file was reported."""
    left = Counter(seen)
    new = []
    for problem in now:
        if left[problem.key] > 0:
            left[problem.key] -= 1
        else:
            new.append(problem)
    return FileReport(path, server, tuple(new), tuple(p.key for p in now), fixed=sum(left.values()))


def model_text(reports: Sequence[FileReport], limit: int) -> str | None:
    """The internal message for the model: each file's new problems, at most ``limit`` listed
    in all, the rest counted. None when nothing is new."""
    listed, lines = 0, [HEADER]
    for report in reports:
        if not report.new:
            continue
        lines.append(f"{report.path}（{report.server}）")
        shown = report.new[:max(0, limit - listed)]
        lines += [_problem_line(p) for p in shown]
        listed += len(shown)
        if len(shown) < len(report.new):
            lines.append(MORE.format(n=len(report.new) - len(shown)))
    return "\n".join(lines) if listed or len(lines) > 1 else None


def _problem_line(p: Problem) -> str:
    tail = f" [{p.source}{' ' + p.code if p.code else ''}]" if p.source or p.code else ""
    return f"- {SEVERITY_WORDS[p.severity]} {p.line}:{p.column} {p.message}{tail}"


def person_line(report: FileReport) -> str | None:
    """The folded line per file: counts, and the first new problem; None when nothing changed."""
    if not report.new and not report.fixed:
        return None
    counts = Counter(p.severity for p in report.new)
    parts = [f"{counts[s]} 个{w}" for s, w in SEVERITY_WORDS.items() if counts[s]]
    said = "新增 " + "、".join(parts) if parts else "没有新问题"
    if report.fixed:
        said += f"，已消除 {report.fixed} 个"
    first = report.new[0] if report.new else None
    detail = f" · {first.line}:{first.column} {first.message[:80]}" if first else ""
    return f"{ICON} {report.path}: {said}（{report.server}）{detail}"
