"""A small real language server for the LSP tests (pygls's server side over stdio).

``python fake_lsp.py MODE [ARG]``:

- ``ok``: every line of an opened or changed document that holds ``ERROR`` is one error
  diagnostic (source ``fake``), ``WARN`` one warning; published with the document's version;
- ``slow SECONDS``: the same, each set published that much later;
- ``crash``: prints a reason on stderr and exits 3 before reading anything;
- ``mute``: reads its input and never answers (not even ``initialize``);
- ``die-after-open``: answers ``initialize``, then exits 4 at the first document;
- ``pidfile PATH``: as ``ok``, and writes its pid to PATH first (the lifecycle tests).
- ``slow-nav SECONDS``: as ``ok``, each definition or references request answered that much later;
- ``elsewhere PATH``: as ``ok``, and a word defined in no document it was sent is "defined" in PATH.

Navigation over the documents it was sent (opened or changed), as a server that has scanned
nothing else: ``textDocument/definition`` answers the first line holding ``def <word>`` or
``class <word>`` (the asking document's first); ``textDocument/references`` every whole-word
occurrence, the declaration's only when asked for.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

from lsprotocol import types as t
from pygls.lsp.server import LanguageServer

MODE = sys.argv[1] if len(sys.argv) > 1 else "ok"
ARG = sys.argv[2] if len(sys.argv) > 2 else ""
server = LanguageServer("fake-lsp", "1")
texts: dict[str, str] = {}


def publish(uri: str, version: int, text: str) -> None:
    if MODE == "die-after-open":
        os._exit(4)
    if MODE == "slow":
        time.sleep(float(ARG))
    found = []
    for number, line in enumerate(text.splitlines()):
        for word, severity in (("ERROR", t.DiagnosticSeverity.Error), ("WARN", t.DiagnosticSeverity.Warning)):
            at = line.find(word)
            if at >= 0:
                where = t.Range(t.Position(number, at), t.Position(number, at + len(word)))
                found.append(t.Diagnostic(where, f"{word.lower()} here: {line.strip()}", severity=severity, source="fake"))
    server.text_document_publish_diagnostics(t.PublishDiagnosticsParams(uri=uri, diagnostics=found, version=version))


@server.feature(t.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: LanguageServer, params: t.DidOpenTextDocumentParams) -> None:
    texts[params.text_document.uri] = params.text_document.text
    publish(params.text_document.uri, params.text_document.version, params.text_document.text)


@server.feature(t.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: LanguageServer, params: t.DidChangeTextDocumentParams) -> None:
    text = params.content_changes[-1].text
    texts[params.text_document.uri] = text
    publish(params.text_document.uri, params.text_document.version, text)


def word_at(uri: str, position: t.Position) -> str:
    lines = texts.get(uri, "").splitlines()
    line = lines[position.line] if position.line < len(lines) else ""
    start = end = position.character
    while start > 0 and (line[start - 1].isalnum() or line[start - 1] == "_"):
        start -= 1
    while end < len(line) and (line[end].isalnum() or line[end] == "_"):
        end += 1
    return line[start:end]


def occurrences(word: str, uri: str):
    """(uri, line, column, line text) of every whole-word ``word`` in the documents it was sent,
    ``uri``'s first."""
    for where in sorted(texts, key=lambda u: u != uri):
        for number, text in enumerate(texts[where].splitlines()):
            for found in re.finditer(rf"(?<!\w){re.escape(word)}(?!\w)", text):
                yield where, number, found.start(), text


def location(uri: str, line: int, column: int, word: str) -> t.Location:
    return t.Location(uri, t.Range(t.Position(line, column), t.Position(line, column + len(word))))


def navigating() -> None:
    if MODE == "slow-nav":
        time.sleep(float(ARG))


@server.feature(t.TEXT_DOCUMENT_DEFINITION)
def definition(ls: LanguageServer, params: t.DefinitionParams) -> list[t.Location]:
    navigating()
    word = word_at(params.text_document.uri, params.position)
    for uri, number, at, text in occurrences(word, params.text_document.uri):
        if re.search(rf"\b(def|class)\s+{re.escape(word)}\b", text):
            return [location(uri, number, at, word)]
    if MODE == "elsewhere" and word:
        return [location(Path(ARG).as_uri(), 0, 0, word)]
    return []


@server.feature(t.TEXT_DOCUMENT_REFERENCES)
def references(ls: LanguageServer, params: t.ReferenceParams) -> list[t.Location]:
    navigating()
    word = word_at(params.text_document.uri, params.position)
    found = []
    for uri, number, at, text in occurrences(word, params.text_document.uri):
        declaration = re.search(rf"\b(def|class)\s+{re.escape(word)}\b", text)
        if params.context.include_declaration or not declaration:
            found.append(location(uri, number, at, word))
    return found


if __name__ == "__main__":
    if MODE == "crash":
        print("fake-lsp: cannot start: no toolchain", file=sys.stderr)
        sys.exit(3)
    if MODE == "mute":
        while sys.stdin.buffer.read(1):
            pass
        sys.exit(0)
    if MODE == "pidfile":
        with open(ARG, "w") as f:
            f.write(str(os.getpid()))
        MODE = "ok"
    server.start_io()
