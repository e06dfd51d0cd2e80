"""The crash log is private and lives under $PAICLI_HOME/logs, never in the shared /tmp."""

import os
import stat

import pytest

from paicli.errors import run_guarded, write_crash_log


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_log_is_created_private(tmp_path):
    path = write_crash_log(tmp_path / "home" / "logs", "Traceback ...")
    assert path == tmp_path / "home" / "logs" / "crash.log"
    assert path.read_text(encoding="utf-8") == "Traceback ..."
    assert (mode(path), mode(path.parent)) == (0o600, 0o700)


def test_an_older_readable_log_is_narrowed_and_replaced(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir(mode=0o755)
    os.chmod(logs, 0o755)
    (logs / "crash.log").write_text("old and long " * 100, encoding="utf-8")
    os.chmod(logs / "crash.log", 0o644)
    path = write_crash_log(logs, "new")
    assert path.read_text(encoding="utf-8") == "new"
    assert (mode(path), mode(logs)) == (0o600, 0o700)


def test_a_planted_symlink_is_not_followed(tmp_path):
    logs, target = tmp_path / "logs", tmp_path / "victim"
    logs.mkdir()
    target.write_text("keep", encoding="utf-8")
    (logs / "crash.log").symlink_to(target)
    with pytest.raises(OSError):
        write_crash_log(logs, "boom")
    assert target.read_text(encoding="utf-8") == "keep"


def test_a_crash_names_the_log_and_an_unwritable_log_prints_the_traceback(tmp_path, capsys):
    def crash() -> int:
        raise RuntimeError("boom")

    assert run_guarded(crash, log_dir=tmp_path / "logs") == 1
    assert f"traceback 见 {tmp_path / 'logs' / 'crash.log'}" in capsys.readouterr().err
    (tmp_path / "file").write_text("", encoding="utf-8")
    assert run_guarded(crash, log_dir=tmp_path / "file" / "logs") == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "RuntimeError: boom" in err and "无法在" in err and "写入崩溃日志" in err
