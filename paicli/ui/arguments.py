"""argparse for paicli's four command lines, in Chinese like the rest of the UI.

argparse writes its own words in English: the ``usage:``, ``options:`` and ``positional
arguments:`` headings, and every error (``error: argument --mode: invalid choice: ...``). ``Parser``
gives the headings in Chinese and turns argparse's error messages into one Chinese line; a message
it does not know is shown as argparse wrote it.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any, NoReturn

# argparse's messages (3.11 to 3.13), matched whole; {0}, {1} are the captured parts.
ERRORS = (
    (re.compile(r"the following arguments are required: (.+)"), "缺少参数: {0}"),
    (re.compile(r"unrecognized arguments: (.+)"), "无法识别的参数: {0}"),
    (re.compile(r"ambiguous option: (\S+) could match (.+)"), "选项 {0} 有歧义，可能是 {1}"),
    (re.compile(r"argument (\S+): invalid choice: (.+?) \(choose from (.+)\)"), "参数 {0} 的值 {1} 无效（可选: {2}）"),
    (re.compile(r"argument (\S+): invalid (\w+) value: (.+)"), "参数 {0} 需要 {1} 类型的值，收到 {2}"),
    (re.compile(r"argument (\S+): expected one argument"), "参数 {0} 需要一个值"),
    (re.compile(r"argument (\S+): expected at most one argument"), "参数 {0} 最多接受一个值"),
    (re.compile(r"argument (\S+): expected at least one argument"), "参数 {0} 至少需要一个值"),
    (re.compile(r"argument (\S+): ignored explicit argument (.+)"), "参数 {0} 不接受值 {1}"),
    (re.compile(r"argument (\S+): not allowed with argument (\S+)"), "参数 {0} 不能与 {1} 同用"),
)


def chinese(message: str) -> str:
    for pattern, text in ERRORS:
        found = pattern.fullmatch(message)
        if found:
            return text.format(*found.groups())
    return message


class _Formatter(argparse.HelpFormatter):
    def _format_usage(self, usage: Any, actions: Any, groups: Any, prefix: str | None) -> str:
        text = super()._format_usage(usage, actions, groups, prefix)
        # "用法:  " takes the seven cells of "usage: ", so wrapped lines stay under the first
        return text.replace("usage: ", "用法:  ", 1) if prefix is None else text


class Parser(argparse.ArgumentParser):
    def __init__(self, **kwargs: Any):
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(**kwargs)
        self._positionals.title = "位置参数"
        self._optionals.title = "选项"

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: {chinese(message)}（{self.prog} --help 查看用法）\n")
