"""create_project (reference t): a java, python or node skeleton in a new folder of the project.

java: ``src/main/java``, ``src/main/resources`` and a minimal ``pom.xml``; python: the ``<name>/``
package folder, ``main.py`` and ``requirements.txt``; node: ``package.json``. The folder is a
write inside the project (PathGuard, the protected paths, approval as for ``write_file``), and it
must not exist yet or be empty: a skeleton never overwrites anyone's files.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from paicli.tools.base import ToolContext, failed
from paicli.tools.common import str_arg
from paicli.tools.policy.guards import PathGuard

TYPES = ("java", "python", "node")
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")  # a folder, an artifactId, a package name

POM = """<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 http://maven.apache.org/xsd/maven-4.0.0.xsd">
    <modelVersion>4.0.0</modelVersion>
    <groupId>com.example</groupId>
    <artifactId>{name}</artifactId>
    <version>1.0.0-SNAPSHOT</version>
    <packaging>jar</packaging>
    <properties>
        <maven.compiler.release>17</maven.compiler.release>
        <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
    </properties>
</project>
"""


def skeleton(name: str, kind: str) -> dict[str, str]:
    """Relative path -> content; a path ending in ``/`` is an empty folder."""
    if kind == "java":
        return {"src/main/java/": "", "src/main/resources/": "", "pom.xml": POM.format(name=name)}
    if kind == "python":
        package = name.replace("-", "_").lower()
        return {f"{package}/__init__.py": "", "main.py": f'from {package} import __name__ as package\n\n\n'
                f'def main() -> None:\n    print(f"hello from {{package}}")\n\n\nif __name__ == "__main__":\n    main()\n',
                "requirements.txt": ""}
    package = {"name": name.lower(), "version": "1.0.0", "private": True, "main": "index.js",
               "scripts": {"start": "node index.js"}}
    return {"package.json": json.dumps(package, indent=2) + "\n"}


def create_project(args: dict[str, Any], ctx: ToolContext) -> str:
    name, kind = (str_arg(args, "name") or "").strip(), (str_arg(args, "type") or "").strip().lower()
    if kind not in TYPES:
        return failed(f"创建项目失败: type 只能是 {'/'.join(TYPES)}，当前为 '{kind}'")
    if not NAME.fullmatch(name):
        return failed(f"创建项目失败: 项目名 '{name}' 无效（字母开头，只含字母、数字、_ 和 -，最多 64 个字符）")
    folder = PathGuard(ctx.root).resolve_write(name)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        return failed(f"创建项目失败: {name} 已存在且不是空目录，未做任何修改")
    try:
        for relative, content in skeleton(name, kind).items():
            _write(folder, relative, content)
    except OSError as exc:
        return failed(f"创建项目失败: {exc}")
    return f"项目已创建: {name} (类型: {kind})"


def _write(folder: Path, relative: str, content: str) -> None:
    target = folder / relative
    if relative.endswith("/"):
        target.mkdir(parents=True, exist_ok=True)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content, encoding="utf-8")
