"""issue 38: a repository whose configuration makes a language server run its code gains nothing
outside the sandbox. Through the real `paicli -p --yes`, an edit starts the server:

- basedpyright runs the project's `.venv/bin/python` to learn its search paths (it does, as
  tested: a repository may ship one);
- typescript-language-server runs the workspace's `node_modules/typescript/lib/tsserver.js`.

The planted program tries to write a canary beside the real HOME (outside every temp dir, so
only the sandbox keeps it safe), to plant files and a git hook in the project, to read paicli's
config and to reach the fake model server. It does run (it leaves a mark in the sandbox's temp
dir), and none of the rest happens.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from tests.cli.test_oneshot import call
from tests.support.language_servers import require
from tests.support.openai_server import Reply
from paicli.tools.sandbox.command import Mechanism, find_mechanism

pytestmark = pytest.mark.skipif(not isinstance(find_mechanism(), Mechanism), reason="no command sandbox here")
SECRET = "sk-canary-4f1d"


@pytest.fixture
def canary() -> Path:
    base = Path.home()
    if any(str(base.resolve()).startswith(t) for t in ("/tmp", "/var/tmp", tempfile.gettempdir())):
        pytest.skip("the canary would sit in a writable temp dir")
    path = Path(tempfile.mkdtemp(prefix=".paicli-lsp-canary-", dir=base))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def marks(tmp_path: Path) -> Path:
    path = tmp_path / "marks"  # a PAICLI_SANDBOX_WRITABLE root (the sandbox's /tmp is its own), so the planted code can prove it ran
    path.mkdir()
    return path


def planted(kind: str, *, canary: Path, marks: Path, project: Path, home: Path, port: int) -> str:
    """The hostile program, as a shell script (python) or a node script (typescript)."""
    if kind == "sh":
        return f"""#!/bin/sh
echo ran > {marks}/ran
echo owned > {canary}/owned.txt
echo owned > {project}/planted.txt
mkdir -p {project}/.git/hooks && echo owned > {project}/.git/hooks/post-checkout
cat {home}/config.json > {marks}/stolen 2>/dev/null
python3 -c "import socket; socket.create_connection(('127.0.0.1', {port}), 2)" && echo reached > {marks}/net
exec python3 "$@"
"""
    return f"""const fs = require("fs"), net = require("net");
fs.writeFileSync("{marks}/ran", "ran");
for (const p of ["{canary}/owned.txt", "{project}/planted.txt"]) {{ try {{ fs.writeFileSync(p, "owned"); }} catch (e) {{}} }}
try {{ fs.mkdirSync("{project}/.git/hooks", {{recursive: true}}); fs.writeFileSync("{project}/.git/hooks/post-checkout", "owned"); }} catch (e) {{}}
try {{ fs.writeFileSync("{marks}/stolen", fs.readFileSync("{home}/config.json")); }} catch (e) {{}}
const s = net.connect({port}, "127.0.0.1", () => {{ fs.writeFileSync("{marks}/net", "reached"); process.exit(1); }});
s.on("error", () => process.exit(1));
"""


def untouched(canary: Path, marks: Path, project: Path) -> None:
    assert (marks / "ran").exists()  # the repository's program did run, inside the sandbox
    assert list(canary.iterdir()) == []
    assert not (project / "planted.txt").exists() and not (project / ".git").exists()
    assert SECRET not in ((marks / "stolen").read_text() if (marks / "stolen").exists() else "")
    assert not (marks / "net").exists()


def edit_script() -> list[Reply]:
    return [Reply("", tool_calls=[call("write_file", {"path": "app.py", "content": "x: int = 'a'\n"})]),
            Reply("", tool_calls=[call("write_file", {"path": "app.ts", "content": "const n: number = 'a';\n"})]),
            Reply("好了")]


def test_a_project_venv_python_run_by_basedpyright_changes_nothing_outside(run_paicli, server, project, paicli_home,
                                                                          canary, marks):
    require("python", "basedpyright")
    (paicli_home / "config.json").write_text(f'{{"api_key": "{SECRET}"}}')
    venv = project / ".venv" / "bin"
    venv.mkdir(parents=True)
    (project / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / "python").write_text(planted("sh", canary=canary, marks=marks, project=project, home=paicli_home,
                                         port=port_of(server)))
    (venv / "python").chmod(0o755)
    server.script = edit_script()[::2]
    done = run_paicli("-p", "写 app.py", "--yes", env={"PAICLI_LSP_WAIT_SECONDS": "60", "PAICLI_SANDBOX_WRITABLE": str(marks)}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (project / "app.py").read_text() == "x: int = 'a'\n"  # the edit itself went through
    untouched(canary, marks, project)


def test_a_workspace_tsserver_run_by_typescript_language_server_changes_nothing_outside(run_paicli, server, project,
                                                                                       paicli_home, canary, marks):
    require("typescript")
    (paicli_home / "config.json").write_text(f'{{"api_key": "{SECRET}"}}')
    typescript = project / "node_modules" / "typescript"
    (typescript / "lib").mkdir(parents=True)
    (typescript / "package.json").write_text('{"name": "typescript", "version": "5.9.3"}')
    (typescript / "lib" / "tsserver.js").write_text(planted("js", canary=canary, marks=marks, project=project,
                                                            home=paicli_home, port=port_of(server)))
    (project / "tsconfig.json").write_text('{"compilerOptions": {"plugins": [{"name": "typescript"}]}}')
    server.script = edit_script()[1:]
    done = run_paicli("-p", "写 app.ts", "--yes", env={"PAICLI_LSP_WAIT_SECONDS": "60", "PAICLI_SANDBOX_WRITABLE": str(marks)}, timeout=120)
    assert done.returncode == 0, done.stderr
    untouched(canary, marks, project)


def port_of(server) -> int:
    return int(server.base_url.rsplit(":", 1)[1].split("/")[0])
