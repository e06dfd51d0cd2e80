"""The languages paicli asks a language server about, and the servers it looks for (issue 38).

Plain data: a file's language from its extension, the LSP ``languageId`` of the document, the
files that mark a project root of that language, and the servers to try, best first. The first
one found on this machine serves the language (``tools/lsp/resolve.py``); the user may name
another command per language (``PAICLI_LSP_<LANGUAGE>``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any


@dataclass(frozen=True)
class Candidate:
    """One server to look for: ``argv[0]`` is found on PATH (or beside paicli's interpreter)."""

    argv: tuple[str, ...]
    # Sent with workspace/didChangeConfiguration and as the answer to workspace/configuration.
    settings: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def name(self) -> str:
        return PurePath(self.argv[0]).name


@dataclass(frozen=True)
class Language:
    key: str  # PAICLI_LSP_<KEY> names its command
    name: str  # what a person reads
    ids: dict[str, str]  # extension -> LSP languageId
    markers: tuple[str, ...]  # a directory holding one of these is a root of this language
    candidates: tuple[Candidate, ...]


# pyright's own "standard" checks, not basedpyright's stricter default ("recommended"), whose
# dozens of style warnings per file would drown the errors an edit introduced. A project's own
# pyrightconfig.json / [tool.basedpyright] still wins over this (pyright reads it first).
_PYRIGHT = {"analysis": {"typeCheckingMode": "standard", "diagnosticMode": "openFilesOnly"}}
# pylsp: pyflakes finds undefined names and syntax errors; pycodestyle's style lines are noise here.
_PYLSP = {"pylsp": {"plugins": {"pycodestyle": {"enabled": False}, "mccabe": {"enabled": False}}}}

LANGUAGES: tuple[Language, ...] = (
    Language("python", "Python", {".py": "python", ".pyi": "python"},
             ("pyproject.toml", "pyrightconfig.json", "setup.py", "setup.cfg"),
             (Candidate(("basedpyright-langserver", "--stdio"), {"basedpyright": _PYRIGHT}),
              Candidate(("pyright-langserver", "--stdio"), {"python": _PYRIGHT}),
              Candidate(("pylsp",), _PYLSP))),
    Language("typescript", "TypeScript/JavaScript",
             {".ts": "typescript", ".tsx": "typescriptreact", ".mts": "typescript", ".cts": "typescript",
              ".js": "javascript", ".jsx": "javascriptreact", ".mjs": "javascript", ".cjs": "javascript"},
             ("tsconfig.json", "jsconfig.json", "package.json"),
             (Candidate(("typescript-language-server", "--stdio")),)),
    Language("go", "Go", {".go": "go"}, ("go.work", "go.mod"), (Candidate(("gopls",)),)),
    Language("rust", "Rust", {".rs": "rust"}, ("Cargo.toml",), (Candidate(("rust-analyzer",)),)),
    Language("c", "C/C++", {".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp",
                            ".hh": "cpp", ".hxx": "cpp"},
             ("compile_commands.json", "compile_flags.txt", ".clangd", "CMakeLists.txt"),
             (Candidate(("clangd", "--background-index=false")),)),
    Language("java", "Java", {".java": "java"}, ("pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle"),
             (Candidate(("jdtls",)),)),
)
BY_KEY = {language.key: language for language in LANGUAGES}
_BY_SUFFIX = {suffix: language for language in LANGUAGES for suffix in language.ids}


def language_of(path: str | PurePath) -> Language | None:
    return _BY_SUFFIX.get(PurePath(path).suffix.lower())


def language_id(path: str | PurePath) -> str:
    language = language_of(path)
    return language.ids[PurePath(path).suffix.lower()] if language else "plaintext"


def root_of(path: str, project: str, language: Language) -> str:
    """The nearest directory from ``path`` up to ``project`` that holds one of the language's
    markers; ``project`` when none does. Never above the project: a server's root is writable
    and read by it, and the project is what the sandbox opens."""
    import os

    current = os.path.dirname(path)
    while current.startswith(project) and len(current) >= len(project):
        if any(os.path.exists(os.path.join(current, marker)) for marker in language.markers):
            return current
        if current == project:
            break
        current = os.path.dirname(current)
    return project
