"""``/init [--force]`` (reference i): a short PAI.md written from the project's files, without a
model call.

Only facts are taken from the repository, never its prose: the project's name from its manifest,
the build files present, the names of its scripts and make targets, its top-level folders. Each
is checked against a plain identifier pattern, so text a repository ships (a README, a script
body) never becomes an instruction in PAI.md, which every later system prompt includes. The
sections a person knows best (pitfalls, don'ts) are left for them to fill in.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/-]{0,63}")
MAX_SCRIPTS = 8
MAX_DIRS = 12
SKIPPED_DIRS = {"node_modules", "__pycache__", "dist", "build", "target", "venv", "env", "site-packages"}
USAGE = "用法: /init 或 /init --force"

# (file, what it says about the project, the commands it implies)
MANIFESTS = (
    ("pyproject.toml", "Python 项目", ("pip install -e .", "python -m pytest")),
    ("package.json", "Node.js 项目", ("npm install",)),
    ("Cargo.toml", "Rust 项目", ("cargo build", "cargo test")),
    ("go.mod", "Go 项目", ("go build ./...", "go test ./...")),
    ("pom.xml", "Java（Maven）项目", ("mvn -q package", "mvn test")),
    ("build.gradle", "Java/Kotlin（Gradle）项目", ("./gradlew build", "./gradlew test")),
    ("build.gradle.kts", "Java/Kotlin（Gradle）项目", ("./gradlew build", "./gradlew test")),
)


def _plain(value: object) -> str | None:
    return value if isinstance(value, str) and NAME.fullmatch(value) else None


def _project_name(root: Path) -> str:
    try:
        name = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8")).get("project", {}).get("name")
    except (OSError, ValueError, AttributeError):
        name = None
    if _plain(name) is None:
        name = _package_json(root).get("name")
    return _plain(name) or _plain(root.name) or "本项目"


def _package_json(root: Path) -> dict:
    try:
        data = json.loads((root / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _make_targets(root: Path) -> list[str]:
    try:
        text = (root / "Makefile").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    targets = re.findall(r"^([A-Za-z][A-Za-z0-9_-]*):(?!=)", text, re.MULTILINE)
    return list(dict.fromkeys(targets))[:MAX_SCRIPTS]


def _folders(root: Path) -> list[str]:
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return []
    names = [e.name for e in entries if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")
             and e.name not in SKIPPED_DIRS and _plain(e.name)]
    return names[:MAX_DIRS]


def render(root: Path) -> str:
    found = [(file, kind, cmds) for file, kind, cmds in MANIFESTS if (root / file).is_file()]
    kinds = list(dict.fromkeys(kind for _file, kind, _cmds in found))
    lines = ["# PAI.md", "", "由 /init 根据项目文件生成（没有调用模型）。请检查并补充，它会进入之后每一轮的系统提示。", "",
             "## 项目定位", f"- 名称：{_project_name(root)}",
             f"- 类型：{'、'.join(kinds) if kinds else '未识别（没有找到常见的构建文件）'}"]
    lines += [f"- 构建文件：{', '.join(f'`{file}`' for file, _k, _c in found)}"] if found else []
    commands = [cmd for _f, _k, cmds in found for cmd in cmds]
    scripts = _package_json(root).get("scripts")
    if isinstance(scripts, dict):
        commands += [f"npm run {name}" for name in list(scripts)[:MAX_SCRIPTS] if _plain(name)]
    commands += [f"make {target}" for target in _make_targets(root)]
    lines += ["", "## 常用命令"] + ([f"- `{c}`" for c in dict.fromkeys(commands)] or ["- （待补充：构建、测试、运行的命令）"])
    folders = _folders(root)
    lines += ["", "## 架构"] + ([f"- `{name}/`：（待补充）" for name in folders] or ["- （待补充：主要目录和模块）"])
    lines += ["", "## 坑点", "- （待补充：容易出错的地方、环境要求）",
              "", "## 不要做", "- 不要提交 `.env`、密钥和令牌", "- 不要改写 git 历史或推送到远端，除非用户明确要求", ""]
    return "\n".join(lines)


def init_pai_md(root: Path, force: bool) -> tuple[bool, str]:
    """(written, the line to show)."""
    target = root / "PAI.md"
    if target.is_symlink():  # writing would follow it wherever it points
        return False, f"❌ {target} 是符号链接，/init 不会写入它"
    if target.exists() and not force:
        return False, f"⚠️ {target} 已存在，未覆盖；用 /init --force 重新生成"
    text = render(root)
    temp = target.with_name(f".PAI.md.{os.getpid()}.tmp")
    try:
        temp.write_text(text, encoding="utf-8")
        os.replace(temp, target)  # replaces the file itself, never a link's target
    except OSError as exc:
        temp.unlink(missing_ok=True)
        return False, f"❌ 无法写入 {target}: {exc.strerror or exc}"
    return True, f"📝 已生成 {target}（{len(text.splitlines())} 行，未调用模型）。请检查并补充坑点和禁止事项。"
