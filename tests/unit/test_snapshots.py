"""Turn snapshots (tools/snapshots; issue 29): the shadow repository on real projects and real git."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from paicli.config.feature_settings import ConfigError
from paicli.config.settings import load_settings
from paicli.tools.base import ToolContext
from paicli.tools.snapshots.git import Git
from paicli.tools.snapshots.options import MiB, SnapshotOptions
from paicli.tools.snapshots.revert import revert_turn
from paicli.tools.snapshots.store import Label, TurnSnapshots

LABEL = Label.of("react", "修复 add\n第二行", "s1")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("A = 1\n")
    (root / "README.md").write_text("readme\n")
    return root


@pytest.fixture
def snapshots(tmp_path: Path) -> TurnSnapshots:
    return TurnSnapshots(tmp_path / "home" / "snapshots", SnapshotOptions(max_file_bytes=1000, max_snapshot_bytes=5000))


def files(snapshots: TurnSnapshots, project: Path, number: int = 1) -> set[str]:
    store = snapshots.project(project)
    tree = store.entries()[number - 1].tree
    return set(Git(store.repo, store.root, store.folder / "index").out("ls-tree", "-r", "--name-only", tree).splitlines())


def object_files(snapshots: TurnSnapshots, project: Path) -> list[Path]:
    return sorted(p for p in (snapshots.project(project).repo / "objects").rglob("*") if p.is_file())


def test_a_snapshot_of_a_folder_that_is_not_a_repository_honours_gitignore_and_skips_paicli(snapshots, project):
    (project / ".gitignore").write_text("*.log\n")
    (project / "src" / ".gitignore").write_text("generated/\n")
    (project / "src" / "generated").mkdir()
    (project / "src" / "generated" / "x.py").write_text("x\n")
    (project / "run.log").write_text("log\n")
    (project / ".paicli" / "tool-outputs").mkdir(parents=True)
    (project / ".paicli" / "tool-outputs" / "001.txt").write_text("out\n")
    taken = snapshots.take(project, LABEL)
    assert taken.new_tree and taken.notices == []
    assert (taken.entry.mode, taken.entry.input, taken.entry.session) == ("react", "修复 add", "s1")
    assert files(snapshots, project) == {".gitignore", "README.md", "src/.gitignore", "src/a.py"}
    assert not (project / ".git").exists()  # nothing was created in the project


def test_nothing_changed_since_the_last_snapshot_writes_no_object(snapshots, project):
    snapshots.take(project, LABEL)
    before = object_files(snapshots, project)
    again = snapshots.take(project, Label.of("plan", "again", "s2"))
    assert not again.new_tree
    assert object_files(snapshots, project) == before
    assert [e.input for e in snapshots.project(project).entries()] == ["again", "修复 add"]
    (project / "README.md").write_text("changed\n")
    assert snapshots.take(project, LABEL).new_tree
    assert len(object_files(snapshots, project)) == len(before) + 2  # the new blob and the new root tree


def test_a_file_over_the_limit_is_left_out_named_and_left_alone_by_a_restore(snapshots, project):
    big = project / "data.bin"
    big.write_bytes(b"1" * 500)
    snapshots.take(project, LABEL)
    assert "data.bin" in files(snapshots, project)
    big.write_bytes(b"2" * 2000)  # now over max_file_bytes: its earlier version must not stay either
    taken = snapshots.take(project, LABEL)
    assert taken.notices == ["📸 快照没有包含 data.bin（2.0 KB）：单个文件超过大小上限"]
    assert "data.bin" not in files(snapshots, project)
    assert snapshots.take(project, LABEL).notices == []  # the same file again: said once
    store = snapshots.project(project)
    plan = store.restore(3, Label.of("restore", "/restore 3", "s1"))
    assert [x.path for x in plan.kept] == ["data.bin"]
    assert plan.changes.count == 0 and big.read_bytes() == b"2" * 2000


def test_files_past_the_snapshot_limit_are_left_out(snapshots, project):
    for i in range(8):
        (project / f"f{i}.txt").write_bytes(b"x" * 900)  # 8 × 900 > 5000
    taken = snapshots.take(project, LABEL)
    left = [x.path for x in taken.entry.left_out]
    assert left == ["f5.txt", "f6.txt", "f7.txt"] and all(x.why == "snapshot" for x in taken.entry.left_out)
    assert not set(left) & files(snapshots, project)
    assert taken.notices[0].endswith("：超过单个快照的大小上限")
    # The limit bounds what one snapshot adds: the next one takes the rest.
    assert snapshots.take(project, LABEL).entry.left_out == ()
    assert set(left) <= files(snapshots, project)


def test_restore_rewinds_deletes_and_recreates_and_a_second_restore_undoes_it(snapshots, project):
    (project / "link").symlink_to("/etc/hostname")
    snapshots.take(project, LABEL)
    store = snapshots.project(project)
    (project / "src" / "a.py").unlink()
    (project / "src").rmdir()
    (project / "README.md").write_text("rewritten\n")
    (project / "new" / "deep").mkdir(parents=True)
    (project / "new" / "deep" / "n.txt").write_text("new\n")
    preview = store.preview(1)
    assert (preview.changes.added, preview.changes.removed, preview.changes.modified) == (
        ("src/a.py",), ("new/deep/n.txt",), ("README.md",))
    assert len(store.entries()) == 1  # a preview records nothing
    done = store.restore(1, Label.of("restore", "/restore 1", "s1"))
    assert done.changes == preview.changes
    assert (project / "src" / "a.py").read_text() == "A = 1\n" and (project / "README.md").read_text() == "readme\n"
    assert not (project / "new").exists()  # emptied folders go too
    assert os.readlink(project / "link") == "/etc/hostname"
    assert [e.mode for e in store.entries()] == ["restore", "react"]
    store.restore(1, Label.of("restore", "/restore 1", "s1"))
    assert (project / "new" / "deep" / "n.txt").read_text() == "new\n"
    assert not (project / "src").exists() and (project / "README.md").read_text() == "rewritten\n"


def test_a_restore_with_nothing_to_change_records_nothing(snapshots, project):
    snapshots.take(project, LABEL)
    store = snapshots.project(project)
    assert store.restore(1, Label.of("restore", "/restore 1", "s1")).changes.count == 0
    assert len(store.entries()) == 1


def test_a_corrupt_shadow_repository_is_set_aside_with_one_line_and_a_new_one_started(snapshots, project):
    snapshots.take(project, LABEL)
    store = snapshots.project(project)
    (store.repo / "config").write_text("[core\nnot a config at all\n")
    taken = snapshots.take(project, LABEL)
    [line] = taken.notices
    assert line.startswith("⚠️ 快照仓库已损坏，已移到 ") and "repo.corrupt-" in line
    assert list(store.folder.glob("repo.corrupt-*")) and list(store.folder.glob("snapshots.jsonl.corrupt-*"))
    assert [e.seq for e in store.entries()] == [1]
    assert files(snapshots, project) == {"README.md", "src/a.py"}


def test_a_broken_staging_index_is_rebuilt_silently(snapshots, project):
    snapshots.take(project, LABEL)
    store = snapshots.project(project)
    store.git.index.write_bytes(b"garbage")
    taken = snapshots.take(project, LABEL)
    assert taken.notices == [] and not taken.new_tree


@pytest.mark.process
def test_two_processes_take_snapshots_under_one_lock(snapshots, project, tmp_path):
    script = ("import sys; from pathlib import Path; from paicli.tools.snapshots.store import TurnSnapshots, Label\n"
              "s = TurnSnapshots(Path(sys.argv[1]))\n"
              "for i in range(6):\n"
              "    (Path(sys.argv[2]) / f'{sys.argv[3]}-{i}.txt').write_text(str(i))\n"
              "    s.take(sys.argv[2], Label('react', f'{sys.argv[3]} {i}', sys.argv[3]))\n")
    children = [subprocess.Popen([sys.executable, "-c", script, str(snapshots.directory), str(project), name],
                                 cwd=Path(__file__).resolve().parents[2]) for name in ("p1", "p2")]
    assert [child.wait(timeout=60) for child in children] == [0, 0]
    entries = snapshots.project(project).entries()
    assert sorted(e.seq for e in entries) == list(range(1, 13))
    assert {e.session for e in entries} == {"p1", "p2"}
    assert {"p1-5.txt", "p2-5.txt"} <= files(snapshots, project)


def test_clean_keeps_the_newest(snapshots, project):
    for i in range(4):
        (project / "README.md").write_text(f"v{i}\n")
        snapshots.take(project, Label.of("react", f"t{i}", "s1"))
    store = snapshots.project(project)
    removed, _freed = store.clean(2)
    assert removed == 2
    assert [e.input for e in store.entries()] == ["t3", "t2"]
    assert store.status().count == 2 and store.status().trees == 2


def test_paicli_home_inside_the_project_is_never_snapshotted(project):
    (project / "home" / "history").mkdir(parents=True)
    (project / "home" / "history" / "s1.jsonl").write_text("{}\n")  # a ledger a restore must not rewind
    inner = TurnSnapshots(project / "home" / "snapshots")
    inner.take(project, LABEL)
    assert files(inner, project) == {"README.md", "src/a.py"}


def test_revert_turn_restores_and_reports_and_refuses_bad_offsets(snapshots, project):
    ctx = ToolContext(root=project.resolve(), session_id="s9")
    assert revert_turn({"offset": 1}, ctx, snapshots) == "恢复快照失败: 这个项目还没有快照"
    assert not revert_turn({"offset": 1}, ctx, snapshots).ok
    snapshots.take(project, LABEL)
    (project / "README.md").write_text("broken\n")
    assert revert_turn({"offset": 0}, ctx, snapshots) == "恢复快照失败: offset 必须是不小于 1 的整数"
    assert revert_turn({"offset": "x"}, ctx, snapshots).startswith("恢复快照失败: 参数 offset 必须是整数")
    text = revert_turn({"offset": "1"}, ctx, snapshots)
    assert text.startswith("↩️ 已恢复到快照 1（") and "~ README.md" in text and "/restore 1" in text
    assert (project / "README.md").read_text() == "readme\n"
    latest = snapshots.project(project).entries()[0]
    assert (latest.mode, latest.input, latest.session) == ("restore", "revert_turn(offset=1)", "s9")


def test_settings_read_the_snapshot_settings_and_allow_revert_only_from_the_environment(tmp_path, project):
    base = {"PAICLI_HOME": str(tmp_path / "home"), "PAICLI_API_KEY": "k", "PAICLI_MODEL": "m",
            "PAICLI_BASE_URL": "http://127.0.0.1:9/v1"}
    (project / ".env").write_text("PAICLI_ALLOW_REVERT=yes\nPAICLI_SNAPSHOT_KEEP=7\n")
    s = load_settings(project, base).snapshots
    assert (s.keep, s.allow_revert, s.max_file_bytes) == (7, False, 10 * MiB)
    assert load_settings(project, {**base, "PAICLI_ALLOW_REVERT": "yes"}).snapshots.allow_revert
    with pytest.raises(ConfigError, match="PAICLI_SNAPSHOT_MAX_MB 必须是正整数"):
        load_settings(project, {**base, "PAICLI_SNAPSHOT_MAX_MB": "0"})


class SnapshotApp:
    """What /snapshot and /restore read of the App: settings and the session id."""

    def __init__(self, home: Path, project: Path):
        self.settings = type("S", (), {"home": home, "project_root": project, "snapshots": SnapshotOptions()})()
        self.session_id = "repl-session"
        self.args = type("A", (), {"yes": False})()


def answers(*lines: str):
    queue = list(lines)

    async def read_line(prompt: str) -> str | None:
        return queue.pop(0) if queue else None

    return read_line


async def test_restore_at_the_repl_lists_the_changes_asks_and_a_no_changes_nothing(tmp_path, project):
    from paicli.commands import dispatch as commands
    from paicli.tools.snapshots.store import snapshot_home

    app = SnapshotApp(tmp_path / "home", project)
    TurnSnapshots(snapshot_home(app.settings.home)).take(project, LABEL)
    (project / "README.md").write_text("broken\n")
    said, failed = [], []
    outcome = await commands.handle("/restore", app, commands.Output(said.append, failed.append), answers("n"))
    assert not outcome.failed and said[-1] == "已取消，工作区没有改动。"
    assert said[0].startswith("↩️ 将恢复到快照 1（") and said[0].endswith("将新增 0 个、删除 0 个、修改 1 个文件")
    assert "   ~ README.md" in said
    assert (project / "README.md").read_text() == "broken\n"

    said.clear()
    outcome = await commands.handle("/restore 1", app, commands.Output(said.append, failed.append), answers("y"))
    assert not outcome.failed and failed == []
    assert (project / "README.md").read_text() == "readme\n"
    assert said[-1] == "   恢复前的工作区已保存为快照 1：再输入 /restore 1 可撤销这次恢复"
    latest = TurnSnapshots(snapshot_home(app.settings.home)).project(project).entries()[0]
    assert (latest.mode, latest.input, latest.session) == ("restore", "/restore 1", "repl-session")

    for bad in ("/restore 0", "/restore x", "/snapshot clean -1", "/snapshot nope"):
        failed.clear()
        assert (await commands.handle(bad, app, commands.Output(said.append, failed.append), answers())).failed
        assert len(failed) == 1 and failed[0].startswith("❌ "), bad


def test_a_file_that_becomes_a_folder_and_back_and_a_nested_repository(snapshots, project):
    (project / "thing").write_text("a file\n")
    snapshots.take(project, LABEL)
    (project / "thing").unlink()
    (project / "thing" / "inner").mkdir(parents=True)
    (project / "thing" / "inner" / "x.txt").write_text("now a folder\n")
    (project / "vendor" / "lib").mkdir(parents=True)  # someone else's repository: not snapshotted
    subprocess.run(["git", "init", "-q"], cwd=project / "vendor" / "lib", check=True,
                   env={"PATH": os.environ["PATH"], "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"})
    (project / "vendor" / "lib" / "code.c").write_text("int x;\n")
    snapshots.take(project, LABEL)
    assert files(snapshots, project) == {"README.md", "src/a.py", "thing/inner/x.txt"}
    store = snapshots.project(project)
    store.restore(2, Label.of("restore", "/restore 2", "s1"))
    assert (project / "thing").read_text() == "a file\n"
    assert (project / "vendor" / "lib" / "code.c").exists()  # not in any snapshot: left alone
    store.restore(1, Label.of("restore", "/restore 1", "s1"))
    assert (project / "thing" / "inner" / "x.txt").read_text() == "now a folder\n"


def test_lock_files_a_killed_git_left_behind_are_cleared(snapshots, project):
    snapshots.take(project, LABEL)
    store = snapshots.project(project)
    (store.folder / "index.lock").write_text("")
    (project / "README.md").write_text("changed\n")
    taken = snapshots.take(project, LABEL)
    assert taken.new_tree and taken.notices == [] and not (store.folder / "index.lock").exists()
    assert "README.md" in files(snapshots, project)
