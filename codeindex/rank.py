"""A map of the repository: its most important definitions, within a token budget.

The reference graph has a node per symbol and one per file (for module-level code). A symbol or
file that uses a name links to every definition of that name, each link weighing 1/n for n
definitions (a name defined in more than ``MAX_DEFINITIONS`` places says nothing and links
nowhere); a member links to its class. PageRank over that graph (``DAMPING``, power iteration
with numpy) says which definitions the rest of the code leans on. It is personalized: the
random walk restarts, with weight ``FOCUS_SHARE``, at the files of the conversation and at the
symbols named by the focus words, so their neighbourhood ranks first.

The map lists the best-ranked definitions grouped by file (files in the order of their best
symbol, symbols by line), adding definitions while the text stays within ``budget`` tokens as
``estimate`` counts them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from paicli.codeindex.store import Store
from paicli.codeindex.words import identifier_words

DAMPING = 0.85
ITERATIONS = 40
FOCUS_SHARE = 0.8
MAX_DEFINITIONS = 40
MAP_KINDS = frozenset({"class", "interface", "enum", "struct", "trait", "type", "function", "method", "object",
                       "annotation", "impl"})


@dataclass(frozen=True)
class Ranked:
    path: str
    line: int
    kind: str
    qualified: str
    signature: str
    rank: float


def ranked(store: Store, focus_files: Iterable[str] = (), focus_words: str = "") -> list[Ranked]:
    conn = store.connection()
    symbols = conn.execute("SELECT s.id, s.file_id, s.name, s.parent_id, s.kind, f.path, s.start_line, s.qualified, "
                           "s.signature FROM symbols s JOIN files f ON f.id = s.file_id").fetchall()
    if not symbols:
        return []
    files = dict(conn.execute("SELECT id, path FROM files"))
    node = {sid: i for i, (sid, *_rest) in enumerate(symbols)}
    file_node = {fid: len(symbols) + i for i, fid in enumerate(files)}
    by_name: dict[str, list[int]] = defaultdict(list)
    for sid, _fid, name, *_rest in symbols:
        by_name[name].append(node[sid])
    src, dst, weight = _edges(conn, symbols, node, file_node, by_name)
    restart = _restart(symbols, files, file_node, set(focus_files), focus_words)
    scores = _pagerank(len(symbols) + len(files), src, dst, weight, restart)
    out = [Ranked(path, line, kind, qualified, signature, float(scores[node[sid]]))
           for sid, _fid, _name, _parent, kind, path, line, qualified, signature in symbols if kind in MAP_KINDS]
    return sorted(out, key=lambda r: -r.rank)


def _edges(conn, symbols, node, file_node, by_name) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    src, dst, weight = [], [], []
    for file_id, symbol_id, name in conn.execute("SELECT file_id, symbol_id, name FROM refs"):
        targets = by_name.get(name)
        if not targets or len(targets) > MAX_DEFINITIONS:
            continue
        origin = node.get(symbol_id, file_node.get(file_id)) if symbol_id is not None else file_node.get(file_id)
        if origin is None:
            continue
        share = 1.0 / len(targets)
        for target in targets:
            if target != origin:
                src.append(origin)
                dst.append(target)
                weight.append(share)
    for sid, _fid, _name, parent, *_rest in symbols:
        if parent is not None and parent in node:
            src.append(node[sid])
            dst.append(node[parent])
            weight.append(1.0)
    return np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64), np.array(weight, dtype=np.float64)


def _restart(symbols, files, file_node, focus_files: set[str], focus_words: str) -> np.ndarray:
    count = len(symbols) + len(files)
    restart = np.full(count, 1.0 / count)
    words = {w for token in focus_words.split() for w in [token.lower(), *identifier_words(token)]}
    focused = np.zeros(count)
    for i, (_sid, _fid, name, _parent, _kind, path, *_rest) in enumerate(symbols):
        if path in focus_files or (words and (name.lower() in words or set(identifier_words(name)) <= words)):
            focused[i] = 1.0
    for fid, path in files.items():
        if path in focus_files:
            focused[file_node[fid]] = 1.0
    if focused.sum() == 0:
        return restart
    return (1 - FOCUS_SHARE) * restart + FOCUS_SHARE * focused / focused.sum()


def _pagerank(count: int, src: np.ndarray, dst: np.ndarray, weight: np.ndarray, restart: np.ndarray) -> np.ndarray:
    out_weight = np.bincount(src, weights=weight, minlength=count)
    share = weight / np.where(out_weight[src] == 0, 1, out_weight[src])
    dangling = out_weight == 0
    rank = restart.copy()
    for _ in range(ITERATIONS):
        flow = np.bincount(dst, weights=rank[src] * share, minlength=count)
        rank = (1 - DAMPING) * restart + DAMPING * (flow + rank[dangling].sum() * restart)
    return rank


def render(ranks: list[Ranked], budget: int, estimate: Callable[[str], int]) -> list[str]:
    """Files with their best definitions, as many as fit in ``budget`` tokens."""
    chosen: list[Ranked] = []
    used = 0
    paths: set[str] = set()
    for r in ranks:
        cost = estimate(_line(r)) + (0 if r.path in paths else estimate(r.path + ":"))
        if used + cost > budget:
            if chosen:
                break
            continue
        chosen.append(r)
        paths.add(r.path)
        used += cost
    order = list(dict.fromkeys(r.path for r in chosen))
    lines = []
    for path in order:
        lines.append(f"{path}:")
        lines += [_line(r) for r in sorted((r for r in chosen if r.path == path), key=lambda r: r.line)]
    return lines


def _line(r: Ranked) -> str:
    signature = r.signature or f"{r.kind} {r.qualified}"
    signature = signature if len(signature) <= 140 else signature[:139] + "…"
    return f"  {r.line:>5}│ {signature}"
