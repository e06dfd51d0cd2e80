"""One file's facts for the index: its symbols, the names they use, and its searchable chunks.

``extract(data, grammar)`` parses the bytes with tree-sitter and runs the language's query
(``paicli.codeindex.languages``); without a grammar (or when it fails) the file is cut into line windows.
Everything returned is plain tuples, so a worker process can hand it back cheaply.

- A symbol: kind, name, qualified name (``Outer.inner``), signature (its text up to the body,
  whitespace collapsed), doc (Python's docstring, else the comments right above it), first and
  last line, and the index of its parent symbol (-1 at the top).
- A reference: the name, its kind (``call``, ``extends``…), its line, and the innermost symbol
  around it (-1 for module level).
- A chunk: what one row of the full-text index holds: the symbol it belongs to (-1 for a window),
  its line range, and the text of its columns (``paicli.codeindex.words.index_text`` applied). A class's
  chunk leaves out its methods' bodies (each method has its own chunk); lines outside every
  top-level symbol become windows.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from paicli.codeindex.languages import CLASS_LIKE, Grammar
from paicli.codeindex.words import index_text, name_text

WINDOW_LINES, WINDOW_STEP = 60, 50  # a file without a grammar: 60-line windows, 10 lines overlap
MAX_SIGNATURE = 240
MAX_DOC = 1_200
MAX_CHUNK_CHARS = 16_000  # of a chunk's body in the full-text index (the snippet is read from the file)
MAX_SYMBOLS, MAX_REFS = 20_000, 50_000  # per file: a generated monster must not flood the index
PARSE_BUDGET_MICROS = 5_000_000  # a parse that runs longer is abandoned (the file becomes windows)
_COMMENTS = frozenset({"comment", "line_comment", "block_comment", "doc_comment"})
_WRAPPERS = frozenset({"decorated_definition", "export_statement", "template_declaration", "type_declaration",
                       "lexical_declaration", "variable_declaration"})
_BODIES = frozenset({"block", "class_body", "function_body", "enum_class_body", "compound_statement",
                     "field_declaration_list", "declaration_list", "statement_block", "interface_body",
                     "enum_body", "annotation_type_body", "constructor_body", "object_type", "enumerator_list",
                     "enum_variant_list", "field_declaration_list", "class_body"})
_SPACE = re.compile(r"\s+")
_TRAILING_COMMENT = re.compile(r"[ \t]+(?:#|//)[^\n]*")  # a comment after the header line is not its signature
_COMMENT_MARKS = re.compile(r"^\s*(?:/\*\*?|\*/|\*(?!/)|///?|//!|#)\s?", re.MULTILINE)
_QUOTES = re.compile(r'^[rbuRBUfF]*("""|\'\'\'|"|\')|("""|\'\'\'|"|\')$')


class Symbol(NamedTuple):
    kind: str
    name: str
    qualified: str
    signature: str
    doc: str
    start_line: int
    end_line: int
    parent: int
    start_byte: int
    end_byte: int


class Ref(NamedTuple):
    name: str
    kind: str
    line: int
    symbol: int


class Chunk(NamedTuple):
    symbol: int
    start_line: int
    end_line: int
    name: str
    signature: str
    doc: str
    body: str


@dataclass
class Facts:
    symbols: list[Symbol] = field(default_factory=list)
    refs: list[Ref] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)
    problem: str | None = None  # why the grammar could not be used (the file became windows)


class ParseTimeout(Exception):
    pass


def extract(data: bytes, grammar: Grammar | None, loaded: tuple[Any, Any] | None, title: str) -> Facts:
    """``loaded`` is ``grammar.load()``'s pair, or None for plain text. ``title`` names window chunks."""
    if grammar is None or loaded is None:
        return Facts(chunks=windows(data, title, 1))
    try:
        return _parsed(data, grammar, loaded, title)
    except (ParseTimeout, RecursionError, ValueError, RuntimeError) as error:
        facts = Facts(chunks=windows(data, title, 1))
        facts.problem = f"{grammar.name} 语法解析失败（{type(error).__name__}），按文本窗口索引"
        return facts


def _parsed(data: bytes, grammar: Grammar, loaded: tuple[Any, Any], title: str) -> Facts:
    import tree_sitter

    language, query = loaded
    tree = tree_sitter.Parser(language).parse(lambda at, _point: data[at : at + 65_536], progress_callback=_deadline())
    if tree is None:
        raise ParseTimeout()
    defs, refs = _captures(tree_sitter.QueryCursor(query), tree.root_node)
    symbols = _symbols(defs, data, grammar)
    facts = Facts(symbols=symbols, refs=_refs(refs, symbols, data))
    facts.chunks = _chunks(symbols, data, title)
    return facts


def _deadline():
    import time

    limit = time.monotonic() + PARSE_BUDGET_MICROS / 1e6

    def progress(*_state: Any) -> bool:
        return time.monotonic() > limit  # True cancels the parse

    return progress


def _captures(cursor: Any, root: Any) -> tuple[list[tuple[Any, Any, str]], list[tuple[Any, str]]]:
    defs: dict[tuple[int, int, str], tuple[Any, Any, str]] = {}
    refs: list[tuple[Any, str]] = []
    for _pattern, captures in cursor.matches(root):
        kind = next((c for c in captures if c.startswith("def.")), None)
        if kind is not None:
            node, name = captures[kind][0], captures.get("name")
            if name:
                defs.setdefault((node.start_byte, node.end_byte, kind), (node, name[0], kind[4:]))
            continue
        for capture, nodes in captures.items():
            if capture.startswith("ref."):
                refs.extend((n, capture[4:]) for n in nodes)
        if len(refs) > MAX_REFS:
            break
    ordered = sorted(defs.values(), key=lambda d: (d[0].start_byte, -d[0].end_byte))
    return ordered[:MAX_SYMBOLS], refs[:MAX_REFS]


def _text(data: bytes, start: int, end: int) -> str:
    return data[start:end].decode("utf-8", errors="replace")


def _symbols(defs: list[tuple[Any, Any, str]], data: bytes, grammar: Grammar) -> list[Symbol]:
    symbols: list[Symbol] = []
    stack: list[int] = []
    for node, name_node, kind in defs:
        while stack and symbols[stack[-1]].end_byte <= node.start_byte:
            stack.pop()
        parent = stack[-1] if stack else -1
        wrapper = _wrapper(node)
        name = _text(data, name_node.start_byte, name_node.end_byte)
        kind, outer = _refined(kind, node, name_node, data, symbols[parent] if parent >= 0 else None)
        prefix = ".".join(p for p in (symbols[parent].qualified if parent >= 0 else "", outer) if p)
        symbols.append(Symbol(
            kind=kind, name=name, qualified=f"{prefix}.{name}" if prefix else name,
            signature=_signature(node, wrapper, data), doc=_doc(node, wrapper, data, grammar),
            start_line=wrapper.start_point[0] + 1, end_line=node.end_point[0] + 1, parent=parent,
            start_byte=node.start_byte, end_byte=node.end_byte))
        stack.append(len(symbols) - 1)
    return symbols


def _wrapper(node: Any) -> Any:
    """The node a definition's decorators, ``export`` and doc comment hang on."""
    while node.parent is not None and node.parent.type in _WRAPPERS:
        node = node.parent
    return node


def _refined(kind: str, node: Any, name_node: Any, data: bytes, parent: Symbol | None) -> tuple[str, str]:
    """The kind as a reader names it, and an outer name the tree does not nest (C++ ``A::f``,
    Go's receiver type)."""
    outer = ""
    if kind == "class" and node.type == "class_declaration":  # Kotlin spells interfaces this way
        words = {c.type for c in node.children if not c.is_named}
        kind = "interface" if "interface" in words else kind
        modifiers = next((c for c in node.children if c.type == "modifiers"), None)
        if modifiers is not None and b"enum" in data[modifiers.start_byte:modifiers.end_byte]:
            kind = "enum"
    if name_node.parent is not None and name_node.parent.type == "qualified_identifier":
        scope = name_node.parent.child_by_field_name("scope")
        outer = _text(data, scope.start_byte, scope.end_byte).replace("::", ".") if scope is not None else ""
    if node.type == "method_declaration" and node.child_by_field_name("receiver") is not None:
        receiver = node.child_by_field_name("receiver")
        names = re.findall(r"[A-Za-z_]\w*", _text(data, receiver.start_byte, receiver.end_byte))
        outer = names[-1] if names else ""
    if kind == "function" and (outer or (parent is not None and parent.kind in CLASS_LIKE - {"namespace"})):
        kind = "method"
    return kind, outer


def _body(node: Any) -> Any:
    body = node.child_by_field_name("body")
    if body is not None:
        return body
    return next((c for c in reversed(node.children) if c.type in _BODIES), None)


def _signature(node: Any, wrapper: Any, data: bytes) -> str:
    body = _body(node)
    end = body.start_byte if body is not None and body.start_byte > node.start_byte else min(node.end_byte, node.start_byte + 400)
    text = _TRAILING_COMMENT.sub("", _text(data, wrapper.start_byte, end))
    text = _SPACE.sub(" ", text).strip().rstrip("{:= ").strip()
    return text if len(text) <= MAX_SIGNATURE else text[: MAX_SIGNATURE - 1] + "…"


def _doc(node: Any, wrapper: Any, data: bytes, grammar: Grammar) -> str:
    if grammar.doc_from_body:
        body = _body(node)
        first = body.named_children[0] if body is not None and body.named_children else None
        if first is not None and first.type == "expression_statement" and first.named_children \
                and first.named_children[0].type == "string":
            raw = _text(data, first.start_byte, first.end_byte)
            return _clip(_QUOTES.sub("", raw.strip()).strip(), MAX_DOC)
    lines: list[str] = []
    row, sibling = wrapper.start_point[0], wrapper.prev_named_sibling
    while sibling is not None and (sibling.type in _COMMENTS or sibling.type == "attribute_item"):
        if sibling.end_point[0] < row - 1:
            break
        if sibling.type in _COMMENTS:
            lines.insert(0, _COMMENT_MARKS.sub("", _text(data, sibling.start_byte, sibling.end_byte)))
        row, sibling = sibling.start_point[0], sibling.prev_named_sibling
    return _clip(_SPACE.sub(" ", " ".join(lines)).strip().removesuffix("*/").strip(), MAX_DOC)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _refs(captured: list[tuple[Any, str]], symbols: list[Symbol], data: bytes) -> list[Ref]:
    starts = [s.start_byte for s in symbols]
    refs = []
    for node, kind in captured:
        name = _text(data, node.start_byte, node.end_byte)
        if kind == "import" and name[:1] in "\"<":  # C's #include "x.h" / <x.h>: the header's stem
            name = name.strip("\"<>").rsplit("/", 1)[-1].split(".")[0]
        refs.append(Ref(name, kind, node.start_point[0] + 1, _enclosing(node.start_byte, starts, symbols)))
    return refs


def _enclosing(position: int, starts: list[int], symbols: list[Symbol]) -> int:
    index = bisect.bisect_right(starts, position) - 1
    while index >= 0 and symbols[index].end_byte <= position:
        index = symbols[index].parent
    return index


def _chunks(symbols: list[Symbol], data: bytes, title: str) -> list[Chunk]:
    children: dict[int, list[int]] = {}
    for i, s in enumerate(symbols):
        children.setdefault(s.parent, []).append(i)
    chunks = []
    for i, s in enumerate(symbols):
        body = _without_children(s, [symbols[c] for c in children.get(i, ())], data)
        chunks.append(Chunk(i, s.start_line, s.end_line, name_text(s.name, s.qualified), index_text(s.signature),
                            index_text(s.doc), index_text(body[:MAX_CHUNK_CHARS])))
    chunks += _uncovered(data, [symbols[c] for c in children.get(-1, ())], title)
    return chunks


def _without_children(symbol: Symbol, inner: list[Symbol], data: bytes) -> str:
    """A container's own text: each nested symbol is left out after its first line."""
    pieces, cursor = [], symbol.start_byte
    for child in inner:
        first_line_end = data.find(b"\n", child.start_byte, child.end_byte)
        pieces.append(_text(data, cursor, first_line_end if first_line_end != -1 else child.end_byte))
        cursor = child.end_byte
    pieces.append(_text(data, cursor, symbol.end_byte))
    return "\n".join(pieces)


def _uncovered(data: bytes, top: list[Symbol], title: str) -> list[Chunk]:
    """Windows over the lines outside every top-level symbol (imports, constants, scripts)."""
    lines = data.split(b"\n")
    covered = bytearray(len(lines) + 2)
    for s in top:
        covered[s.start_line : s.end_line + 1] = b"\x01" * (s.end_line - s.start_line + 1)
    runs, start = [], None
    for number in range(1, len(lines) + 1):
        free = not covered[number]
        if free and start is None:
            start = number
        if not free and start is not None:
            runs.append((start, number - 1))
            start = None
    if start is not None:
        runs.append((start, len(lines)))
    chunks = []
    for first, last in runs:
        chunks += _windows_of(lines, first, last, title)
    return chunks


def windows(data: bytes, title: str, first: int) -> list[Chunk]:
    lines = data.split(b"\n")
    return _windows_of(lines, first, len(lines), title)


def _windows_of(lines: list[bytes], first: int, last: int, title: str) -> list[Chunk]:
    chunks = []
    for start in range(first, last + 1, WINDOW_STEP):
        end = min(last, start + WINDOW_LINES - 1)
        text = b"\n".join(lines[start - 1 : end]).decode("utf-8", errors="replace")
        if text.strip():
            chunks.append(Chunk(-1, start, end, title, "", "", index_text(text[:MAX_CHUNK_CHARS])))
        if end == last:
            break
    return chunks
