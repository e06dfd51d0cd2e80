"""Every behaviour citation in the code resolves to a heading of docs/behavior.md.

The code cites sections of PaiCLI's behaviour (``# reference (e.1): ...``, ``(o.5 rule 11)``,
``reference t``, ``Q13``); the document they cite must be in the repository, so a reader who
follows a citation finds it. Design documents outside the repository must not be cited at all.
Code that points at a section of docs/architecture.md (``docs/architecture.md, "Persistence"``)
names one of its headings, and the links of the repository's documents lead somewhere.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "behavior.md"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
LINKED_DOCS = (DOC, ARCHITECTURE, ROOT / "CONTRIBUTING.md", ROOT / "README.md", ROOT / "bench" / "README.md",
               ROOT / "docs" / "deploy.md")
CITING_DIRS = ("memory", "prompts", "tools", "nodes", "graphs", "paicli", "tests", "bench")
SKIP_PARTS = {"__pycache__", ".venv", "node_modules"}

SECTION = r"[a-y](?:\.\d+)*"
ITEM = rf"{SECTION}(?:[–-]{SECTION})?"
# "d.5", "(o.5)", "j.4.2", "s.2.11", "n.2-n.4": a dotted id anywhere.
DOTTED = re.compile(rf"(?<![\w.])([a-y](?:\.\d+)+)(?:[–-]([a-y](?:\.\d+)+))?(?![\w])")
# "reference (g)", "reference t, d.5, s.7", "reference (b)/(e.1)", "reference j–o": ids after the word.
AFTER_REFERENCE = re.compile(rf"\breference\s+\(?({ITEM}(?:\)?\s*(?:,|/|and)\s*\(?{ITEM})*)(?![\w'’])")
ITEM_IN_LIST = re.compile(rf"(?<![\w.])({SECTION})(?:[–-]({SECTION}))?(?![\w])")
MESSAGE_RECORD = re.compile(r"\breference 0\.1\b")
QUESTION = re.compile(r"\bQ(\d{1,2})\b")
OUTSIDE_DOCS = re.compile(r"\b(?:ARCHITECTURE|STYLE)\.md\b")

HEADING = re.compile(r"^#{2,4}\s+(.+?)\s*$")
HEADING_ID = re.compile(r"^(?:\(([a-y])\)|((?:[a-y]|0)(?:\.\d+)+))\s")
HEADING_QUESTIONS = re.compile(r"^(Q\d+(?:\s+and\s+Q\d+)*)\b")
LINK_ANCHOR = re.compile(r"\]\(#([^)\s]+)\)")
LINK = re.compile(r"\]\(([^)\s]+)\)")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # https:, mailto:
ARCHITECTURE_SECTION = re.compile(r'docs/architecture\.md, "([^"]+)"')


def _expand(first: str, last: str | None) -> list[str]:
    """``j``–``o`` and ``o.2``–``o.6`` name every section in between."""
    if not last:
        return [first]
    if len(first) == len(last) == 1:
        return [chr(c) for c in range(ord(first), ord(last) + 1)]
    head, _, low = first.rpartition(".")
    other, _, high = last.rpartition(".")
    if head == other and low.isdigit() and high.isdigit():
        return [f"{head}.{n}" for n in range(int(low), int(high) + 1)]
    return [first, last]


def citations_in(line: str) -> set[str]:
    found: set[str] = set()
    for match in DOTTED.finditer(line):
        found.update(_expand(match.group(1), match.group(2)))
    for match in AFTER_REFERENCE.finditer(line):
        for item in ITEM_IN_LIST.finditer(match.group(1)):
            found.update(_expand(item.group(1), item.group(2)))
    if MESSAGE_RECORD.search(line):
        found.add("0.1")
    found.update("Q" + n for n in QUESTION.findall(line))
    return found


def python_files(dirs=CITING_DIRS) -> list[Path]:
    files = [p for d in dirs for p in sorted((ROOT / d).rglob("*.py"))]
    return [p for p in files if p != Path(__file__).resolve() and not any(
        part in SKIP_PARTS or part.startswith(".") for part in p.relative_to(ROOT).parts)]


def cited() -> dict[str, list[str]]:
    """Cited id -> the places citing it (``path:line``)."""
    places: dict[str, list[str]] = {}
    for path in python_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for section in citations_in(line):
                places.setdefault(section, []).append(f"{path.relative_to(ROOT)}:{number}")
    return places


def headings(doc: Path = DOC) -> list[str]:
    text = doc.read_text(encoding="utf-8")
    text = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)  # headings inside examples
    return [m.group(1) for line in text.splitlines() if (m := HEADING.match(line))]


def documented() -> set[str]:
    ids: set[str] = set()
    for heading in headings():
        if m := HEADING_ID.match(heading):
            ids.add(m.group(1) or m.group(2))
        elif m := HEADING_QUESTIONS.match(heading):
            ids.update(re.findall(r"Q\d+", m.group(1)))
    return ids


def github_anchor(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("line, expected", [
    ("# reference (e.1): keep the 3 most recent tool results", {"e.1"}),
    ('"""Search tools: glob_files and grep_code (reference t)."""', {"t"}),
    ("(reference t, d.5, s.7)", {"t", "d.5", "s.7"}),
    ("reference (b)/(e.1): min(100k, ...)", {"b", "e.1"}),
    ("reference (j.4.3, n.5): the entries", {"j.4.3", "n.5"}),
    ("(reference n.2 and n.4)", {"n.2", "n.4"}),
    ("(reference o.2–o.6)", {"o.2", "o.3", "o.4", "o.5", "o.6"}),
    ("(reference j–o, t, v.7, x)", set("jklmno") | {"t", "v.7", "x"}),
    ("decided before this function (o.5 rule 11)", {"o.5"}),
    ("reference (g) step 5: the earliest", {"g"}),
    ("the reference's seven steps (c.2) read best", {"c.2"}),
    ("# reference 0.1: derived content", {"0.1"}),
    ("staleness (Q13), reference h.2 \"Reasoning\"", {"Q13", "h.2"}),
    ("e.g. a float 0.1, i.e. nothing; the reference is silent", set()),
])
def test_citations_are_recognised_in_every_form_the_code_uses(line, expected):
    assert citations_in(line) == expected


def test_every_cited_reference_section_has_a_heading_in_docs_behavior():
    places, known = cited(), documented()
    missing = {section: where[:3] for section, where in sorted(places.items()) if section not in known}
    assert not missing, f"docs/behavior.md has no heading for these citations: {missing}"


def test_the_citations_found_include_the_well_known_ones():
    # Guards the scanner itself: if it silently found nothing, the test above would pass.
    assert {"a", "e.1", "j.4.2", "o.5", "s.2.11", "t", "0.1", "Q13"} <= set(cited())


def test_no_python_file_cites_design_documents_outside_the_repository():
    offenders = [f"{p.relative_to(ROOT)}:{n}" for p in python_files(("",))
                 for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                 if OUTSIDE_DOCS.search(line)]
    assert not offenders, f"cite docs/behavior.md (or say why) instead: {offenders}"


def test_links_inside_docs_behavior_point_at_its_headings():
    anchors = {github_anchor(h) for h in headings()}
    links = set(LINK_ANCHOR.findall(DOC.read_text(encoding="utf-8")))
    assert links and not links - anchors, f"dangling links: {sorted(links - anchors)}"


def dangling_links(doc: Path) -> list[str]:
    """Relative links of ``doc`` whose file does not exist, or whose ``#anchor`` is no heading there."""
    dangling = []
    for target in LINK.findall(doc.read_text(encoding="utf-8")):
        if EXTERNAL.match(target):
            continue
        file, _, anchor = target.partition("#")
        destination = (doc.parent / file).resolve() if file else doc
        if not destination.exists() or anchor and (
                destination.suffix != ".md" or anchor not in {github_anchor(h) for h in headings(destination)}):
            dangling.append(target)
    return dangling


@pytest.mark.parametrize("doc", LINKED_DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_in_the_documents_lead_to_a_file_and_heading(doc):
    assert not dangling_links(doc), f"{doc.relative_to(ROOT)}: dangling links {dangling_links(doc)}"


def test_code_pointing_at_docs_architecture_names_one_of_its_sections():
    places: dict[str, list[str]] = {}
    for path in python_files(("",)):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for section in ARCHITECTURE_SECTION.findall(line):
                places.setdefault(section, []).append(f"{path.relative_to(ROOT)}:{number}")
    known = set(headings(ARCHITECTURE))
    assert {"One execution unit", "Persistence"} <= set(places), "the scanner found none of the known pointers"
    missing = {section: where for section, where in places.items() if section not in known}
    assert not missing, f"docs/architecture.md has no such heading: {missing}"


# A path of ours (`nodes/core/state.py`, ``paicli/studio/command.py``) a document or the code names:
# after a module moves, the old path keeps reading as true. The glossary's "was" column
# (docs/architecture.md, "Words") names old paths on purpose.
OUR_PATH = re.compile(rf"(?<![\w./-])((?:{'|'.join(CITING_DIRS)}|docs)/[\w./-]*\w\.(?:py|md|json|txt))(?![\w/])")
BACKTICKED = re.compile(r"`([^`\n]+)`")


def missing_paths(texts: list[tuple[str, str]]) -> list[str]:
    """``where: path`` for each path in ``(where, text)`` that is not a file of the repository."""
    return [f"{where}: {path}" for where, text in texts for path in OUR_PATH.findall(text)
            if not (ROOT / path).exists()]


@pytest.mark.parametrize("doc", LINKED_DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_paths_a_document_names_exist(doc):
    text = doc.read_text(encoding="utf-8").split("\n## Words\n")[0]
    spans = [(f"{doc.relative_to(ROOT)}:{n}", span) for n, line in enumerate(text.splitlines(), 1)
             for span in BACKTICKED.findall(line)]
    assert not missing_paths(spans), f"no such file: {missing_paths(spans)}"


def test_the_module_paths_the_code_names_exist():
    lines = [(f"{path.relative_to(ROOT)}:{n}", line) for path in python_files()
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)]
    python = [(where, line) for where, line in lines if ".py" in line]
    missing = [m for m in missing_paths(python) if m.endswith(".py")]
    assert not missing, f"no such module: {missing}"
    old = "nodes/" + "support/state.py"  # spelled in two so no rewriting script updates it
    assert missing_paths([("x", f"`{old}`")]), "the scanner misses an old path"
