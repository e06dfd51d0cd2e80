"""langgraph-checkpoint-conformance on the ledger saver: every base capability (58 tests) and the
extended ones it implements (delete_for_runs, copy_thread, prune), inside pytest (notes §3)."""

from __future__ import annotations

import shutil
import tempfile

from langgraph.checkpoint.conformance import checkpointer_test, validate

from paicli.memory.ledger.saver import JsonlLedgerSaver

EXTENDED = ("delete_for_runs", "copy_thread", "prune")


@checkpointer_test(name="JsonlLedgerSaver")
async def ledger_saver():
    directory = tempfile.mkdtemp(prefix="ledger-conformance-")
    try:
        yield JsonlLedgerSaver(directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


async def test_ledger_saver_passes_the_conformance_suite():
    report = await validate(ledger_saver)
    report.print_report()
    failures = {name: result.failures for name, result in report.results.items() if result.failures}
    assert report.passed_all_base(), failures
    assert not failures, failures
    assert sum(report.results[c].tests_passed for c in ("put", "put_writes", "get_tuple", "list", "delete_thread")) == 58
    for capability in EXTENDED:
        result = report.results[capability]
        assert result.tests_passed > 0 and not result.tests_failed, (capability, result.failures)
