"""python-lsp-server, the Python fallback where neither basedpyright nor pyright is installed
(issue 38): its pyflakes diagnostics come through the same path, style warnings left out."""

from __future__ import annotations

from tests.support.language_servers import require, sandbox_in
from tests.unit.test_lsp_manager import SLOW_MACHINE
from paicli.tools.lsp.manager import LanguageServers
from paicli.tools.lsp.options import LspOptions


async def test_pylsp_reports_an_undefined_name_and_no_style_lines(tmp_path):
    pylsp = require("python", "pylsp")
    root = tmp_path.resolve()
    (root / "m.py").write_text("import os\nprint(undefined_name)\nx=1;y   =  2\n")
    lsp = LanguageServers(LspOptions(commands={"python": pylsp.argv}, wait=SLOW_MACHINE), sandbox_in(tmp_path))
    try:
        found = await lsp.diagnose(str(root), [("m.py", str(root / "m.py"))], {})
        assert found.reports, found
        [report] = found.reports
        assert report.server == "pylsp"
        messages = [(p.line, p.message) for p in report.new]
        assert (2, "undefined name 'undefined_name'") in messages
        assert all(p.source == "pyflakes" for p in report.new)  # pycodestyle is switched off
    finally:
        await lsp.close()
