"""issue 38 item 4 end to end: `paicli -p /graph` as a real process, with basedpyright serving
Python and no server for Java. Python's answer is the server's, and tells apart two methods of one
name that the code index mixes up; Java's is the index's; each says which in its first line."""

from __future__ import annotations

import pytest

from tests.cli.test_lsp_e2e import SLOW_MACHINE
from tests.support.code_project import write_polyglot
from tests.support.language_servers import require

BILLING = ("class Cart:\n    def total(self) -> int:\n        return 1\n\n\n"
           "class Invoice:\n    def total(self) -> int:\n        return 2\n")
CHECKOUT = ("from billing import Cart, Invoice\n\n\ndef pay(cart: Cart) -> int:\n    return cart.total()\n\n\n"
            "def bill(invoice: Invoice) -> int:\n    return invoice.total()\n")


@pytest.mark.process
def test_graph_is_exact_for_python_from_basedpyright_and_approximate_for_java(run_paicli, project):
    require("python", "basedpyright")
    write_polyglot(project)
    (project / "billing.py").write_text(BILLING)
    (project / "checkout.py").write_text(CHECKOUT)
    env = {**SLOW_MACHINE, "PAICLI_LSP_JAVA": "off"}  # basedpyright comes first for Python
    assert run_paicli("-p", "/index", env=env).returncode == 0
    done = run_paicli("-p", "/graph Cart.total", env=env, timeout=180)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "🕸️ Cart.total · 精确（basedpyright）"
    assert "    billing.py:2  method Cart.total  def total(self) -> int" in lines
    assert "    checkout.py:5  pay (call)" in lines
    assert not any("checkout.py:9" in line for line in lines)  # Invoice.total's use: the index's guess only
    java = run_paicli("-p", "/graph Warehouse", env=env, timeout=180)
    assert java.returncode == 0, java.stderr
    out = java.stdout.splitlines()
    assert out[0] == "🕸️ Warehouse · 近似（代码索引）"
    assert "    src/main/java/com/example/inventory/ColdStorage.java:9  ColdStorage (实现)" in out
    assert "按名称匹配" in out[-1]
    off = run_paicli("-p", "/graph Cart.total", env={"PAICLI_LSP": "off"})
    assert off.returncode == 0 and off.stdout.splitlines()[0] == "🕸️ Cart.total · 近似（代码索引）"
    assert "    checkout.py:9  bill (call)" in off.stdout.splitlines()  # by name, both uses
