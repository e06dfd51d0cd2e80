"""A small real language server for the LSP tests (pygls's server side over stdio).

``python fake_lsp.py MODE [ARG]``:

- ``ok``: every line of an opened or changed document that holds ``ERROR`` is one error
  diagnostic (source ``fake``), ``WARN`` one warning; published with the document's version;
- ``slow SECONDS``: the same, each set published that much later;
- ``crash``: prints a reason on stderr and exits 3 before reading anything;
- ``mute``: reads its input and never answers (not even ``initialize``);
- ``die-after-open``: answers ``initialize``, then exits 4 at the first document;
- ``pidfile PATH``: as ``ok``, and writes its pid to PATH first (the lifecycle tests).
Definitions: ``textDocument/definition`` answers the first line holding ``def <word>``.
"""

from __future__ import annotations

import os
import sys
import time

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


@server.feature(t.TEXT_DOCUMENT_DEFINITION)
def definition(ls: LanguageServer, params: t.DefinitionParams) -> list[t.Location]:
    text = texts.get(params.text_document.uri, "")
    line = text.splitlines()[params.position.line]
    start = params.position.character
    while start > 0 and (line[start - 1].isalnum() or line[start - 1] == "_"):
        start -= 1
    end = params.position.character
    while end < len(line) and (line[end].isalnum() or line[end] == "_"):
        end += 1
    word = line[start:end]
    for number, candidate in enumerate(text.splitlines()):
        if f"def {word}" in candidate:
            at = candidate.index(word)
            return [t.Location(params.text_document.uri, t.Range(t.Position(number, at), t.Position(number, at + len(word))))]
    return []


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
