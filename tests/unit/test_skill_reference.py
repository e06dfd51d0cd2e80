"""save_skill_reference on real directories: which paths, which skills, links at every level, the
limits, append and overwrite, and the cross-process lock (reference t)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from filelock import FileLock

from paicli.tools.base import ToolContext
from paicli.tools.registry import run_tool
from paicli.tools.skills.library import SkillLibrary
from paicli.tools.skills.reference import (
    LOCK_FILE, MAX_FILE_BYTES, MAX_WRITE_CHARS, save_skill_reference, save_skill_reference_spec,
)
from tests.unit.test_skills_catalog import home, project, write_skill  # noqa: F401 (fixtures)
from tests.support.waiting import patience

TOOL = "save_skill_reference"


@pytest.fixture
def skill(home):
    """The user skill ``notes`` in ``home``."""
    return write_skill(home / "skills", "notes", "记录经验")


def library_of(home: Path, builtin: Path | None = None) -> SkillLibrary:
    return SkillLibrary(home, builtin=builtin) if builtin is not None else SkillLibrary(home)


async def save(home: Path | None, project: Path, builtin: Path | None = None, **args):
    spec = save_skill_reference_spec(library_of(home, builtin) if home is not None else SkillLibrary(None))
    return await run_tool(TOOL, args, ToolContext(root=project), {TOOL: spec})


async def test_append_creates_references_and_separates_entries_with_a_blank_line(home, project, skill):
    first = await save(home, project, name="notes", file="references/pitfalls.md", content="# 坑\n- 先跑迁移")
    assert first.ok
    assert first == ('Skill 参考文件已追加: notes/references/pitfalls.md（本次 10 字符，文件共 20 字节）。'
                     '可用 load_skill(name="notes", file="references/pitfalls.md") 读取')
    assert (await save(home, project, name="notes", file="references/pitfalls.md", content="- 再重启")).ok
    assert (skill / "references" / "pitfalls.md").read_text(encoding="utf-8") == "# 坑\n- 先跑迁移\n\n- 再重启"


@pytest.mark.parametrize("before, after", [("a", "a\n\nb"), ("a\n", "a\n\nb"), ("a\n\n", "a\n\nb"), ("", "b")])
async def test_the_separator_leaves_exactly_one_blank_line(home, project, skill, before, after):
    (skill / "references").mkdir()
    (skill / "references" / "x.md").write_text(before, encoding="utf-8")
    assert (await save(home, project, name="notes", file="references/x.md", content="b")).ok
    assert (skill / "references" / "x.md").read_text(encoding="utf-8") == after


async def test_overwrite_replaces_the_file_atomically_and_leaves_no_temporary_file(home, project, skill):
    target = skill / "references" / "guide.md"
    target.parent.mkdir()
    target.write_text("old\n", encoding="utf-8")
    old_inode = target.stat().st_ino
    result = await save(home, project, name="notes", file="references/guide.md", content="new", overwrite="true")
    assert result.ok and result.startswith("Skill 参考文件已覆盖写入: notes/references/guide.md")
    assert target.read_text(encoding="utf-8") == "new"
    assert target.stat().st_ino != old_inode  # a new file renamed over the old one, not rewritten in place
    assert sorted(p.name for p in target.parent.iterdir()) == ["guide.md"]


@pytest.mark.parametrize("file, written", [
    ("references/sub/deep/x.md", "references/sub/deep/x.md"),
    ("./references/x.md", "references/x.md"),
    ("references\\win.md", "references/win.md"),
    ("references/Upper.MD", "references/Upper.MD"),
])
async def test_accepted_paths(home, project, skill, file, written):
    result = await save(home, project, name="notes", file=file, content="x")
    assert result.ok, result
    assert (skill / written).read_text(encoding="utf-8") == "x"


@pytest.mark.parametrize("file, says", [
    ("foo.md", "只能写 Skill 目录 references/ 下的文件，例如 references/foo.md"),
    ("SKILL.md", "只能写 Skill 目录 references/ 下的文件"),
    ("scripts/run.md", "只能写 Skill 目录 references/ 下的文件"),
    ("references", "只能写 Skill 目录 references/ 下的文件"),
    ("references/../SKILL.md", "不能是绝对路径或含 .."),
    ("../other/references/x.md", "不能是绝对路径或含 .."),
    ("/etc/references/x.md", "不能是绝对路径或含 .."),
    ("~/references/x.md", "不能是绝对路径或含 .."),
    ("references/run.sh", "必须是 .md 文件"),
    ("references/.md", "不能以 . 开头"),
    ("references/.hidden/x.md", "不能以 . 开头"),
    ("references/a\nb.md", "控制字符"),
])
async def test_refused_paths_write_nothing(home, project, skill, file, says):
    before = sorted(p.relative_to(skill) for p in skill.rglob("*"))
    result = await save(home, project, name="notes", file=file, content="x")
    assert not result.ok and result.startswith("🛡️ 策略拒绝: ") and says in result
    assert sorted(p.relative_to(skill) for p in skill.rglob("*")) == before


async def test_only_an_existing_user_skill_takes_references(home, project, tmp_path):
    builtin = tmp_path / "builtin"
    write_skill(builtin, "shipped")
    write_skill(project / ".paicli" / "skills", "theirs")
    write_skill(home / "skills", "mine")
    write_skill(project / ".paicli" / "skills", "mine")  # cannot shadow the user's (issue 23 item 7)
    cases = {"shipped": "是 builtin Skill（内置 Skill 是只读的）", "theirs": "是 project Skill（项目 Skill 属于项目作者）",
             "ghost": "用户 Skill 'ghost' 不存在", "../mine": "用户 Skill '../mine' 不存在"}
    for name, says in cases.items():
        result = await save(home, project, builtin, name=name, file="references/x.md", content="x")
        assert not result.ok and says in result, result
    assert not list(tmp_path.rglob("references"))
    assert (await save(home, project, builtin, name="mine", file="references/x.md", content="x")).ok
    assert [p.relative_to(tmp_path) for p in tmp_path.rglob("references")] == [home.relative_to(tmp_path) / "skills" / "mine" / "references"]


async def test_a_broken_user_skill_and_a_missing_home_are_refused(home, project):
    (home / "skills" / "broken").mkdir(parents=True)  # no SKILL.md
    result = await save(home, project, name="broken", file="references/x.md", content="x")
    assert "Skill 'broken' 无法使用：缺少 SKILL.md" in result
    result = await save(None, project, name="broken", file="references/x.md", content="x")
    assert "没有用户 Skill 目录（未设置 PAICLI_HOME）" in result


# --- links at every level ---------------------------------------------------------------

@pytest.fixture
def outside(tmp_path):
    target = tmp_path / "outside"
    target.mkdir()
    (target / "x.md").write_text("precious\n", encoding="utf-8")
    return target


def link_skill_dir(home, outside):
    write_skill(outside, "linked")
    (home / "skills").mkdir(parents=True, exist_ok=True)
    (home / "skills" / "linked").symlink_to(outside / "linked")
    return "linked", "references/x.md"


def link_references(skill, outside):
    (skill / "references").symlink_to(outside)
    return "notes", "references/x.md"


def link_subdirectory(skill, outside):
    (skill / "references").mkdir()
    (skill / "references" / "sub").symlink_to(outside)
    return "notes", "references/sub/x.md"


def link_file(skill, outside):
    (skill / "references").mkdir()
    (skill / "references" / "x.md").symlink_to(outside / "x.md")
    return "notes", "references/x.md"


def dangling_file_link(skill, outside):
    (skill / "references").mkdir()
    (skill / "references" / "x.md").symlink_to(outside / "new.md")
    return "notes", "references/x.md"


@pytest.mark.parametrize("overwrite", [False, True])
@pytest.mark.parametrize("plant", [link_references, link_subdirectory, link_file, dangling_file_link])
async def test_a_link_at_any_level_is_refused_and_nothing_outside_changes(home, project, skill, outside, plant,
                                                                           overwrite):
    name, file = plant(skill, outside)
    result = await save(home, project, name=name, file=file, content="evil", overwrite=overwrite)
    assert not result.ok and result.startswith("🛡️ 策略拒绝: ") and "符号链接" in result, result
    assert sorted(p.name for p in outside.iterdir()) == ["x.md"]
    assert (outside / "x.md").read_text(encoding="utf-8") == "precious\n"


async def test_a_linked_skill_directory_is_refused(home, project, outside):
    name, file = link_skill_dir(home, outside)
    result = await save(home, project, name=name, file=file, content="evil")
    assert "🛡️ 策略拒绝: Skill 参考文件路径中的 linked 是符号链接，拒绝写入" == result
    assert not (outside / "linked" / "references").exists()


async def test_a_linked_skills_folder_is_the_users_own_setup_and_works(tmp_path, project):
    real = tmp_path / "dotfiles" / "skills"
    write_skill(real, "notes")
    home = tmp_path / "home"
    home.mkdir()
    (home / "skills").symlink_to(real)
    assert (await save(home, project, name="notes", file="references/x.md", content="ok")).ok
    assert (real / "notes" / "references" / "x.md").read_text(encoding="utf-8") == "ok"


async def test_a_fifo_or_a_directory_in_place_of_the_file_is_refused_without_hanging(home, project, skill):
    (skill / "references").mkdir()
    os.mkfifo(skill / "references" / "pipe.md")
    (skill / "references" / "dir.md").mkdir()
    for file in ("references/pipe.md", "references/dir.md"):
        result = await save(home, project, name="notes", file=file, content="x")
        assert not result.ok and "不是普通文件" in result


async def test_references_being_a_file_fails_with_the_reason(home, project, skill):
    (skill / "references").write_text("not a folder", encoding="utf-8")
    result = await save(home, project, name="notes", file="references/x.md", content="x")
    assert not result.ok and result.startswith("保存 Skill 参考文件失败: ")


# --- limits -----------------------------------------------------------------------------

async def test_at_most_8000_characters_per_write_counted_in_characters(home, project, skill):
    assert (await save(home, project, name="notes", file="references/a.md", content="字" * MAX_WRITE_CHARS)).ok
    result = await save(home, project, name="notes", file="references/b.md", content="x" * (MAX_WRITE_CHARS + 1))
    assert not result.ok
    assert result == "保存 Skill 参考文件失败: content 共 8001 字符，超过每次 8000 字符上限；请分多次追加"
    assert not (skill / "references" / "b.md").exists()


async def test_at_most_64_kb_per_file_for_append_and_overwrite(home, project, skill):
    target = skill / "references" / "big.md"
    target.parent.mkdir()
    target.write_bytes(b"x" * (MAX_FILE_BYTES - 10) + b"\n")
    ok = await save(home, project, name="notes", file="references/big.md", content="y" * 8)  # + "\n" = 65536
    assert ok.ok and target.stat().st_size == MAX_FILE_BYTES
    over = await save(home, project, name="notes", file="references/big.md", content="z")
    assert not over.ok and "写入后文件将有 65539 字节，超过单个文件 64KB 上限" in over
    assert target.stat().st_size == MAX_FILE_BYTES
    assert (await save(home, project, name="notes", file="references/big.md", content="短", overwrite=True)).ok
    assert target.read_text(encoding="utf-8") == "短"


async def test_empty_arguments_say_what_is_missing(home, project, skill):
    assert "name 和 file 不能为空" in await save(home, project, file="references/x.md", content="x")
    assert "content 不能为空" in await save(home, project, name="notes", file="references/x.md", content="")
    bad = await save(home, project, name="notes", file="references/x.md", content="x", overwrite="maybe")
    assert not bad.ok and "参数 overwrite 必须是布尔值" in bad


def test_the_tool_is_serial():
    assert not save_skill_reference_spec(SkillLibrary(None)).parallel_safe


# --- the lock ---------------------------------------------------------------------------

APPEND = textwrap.dedent("""
    import sys
    from pathlib import Path
    from paicli.tools.base import ToolContext
    from paicli.tools.skills.library import SkillLibrary
    from paicli.tools.skills.reference import save_skill_reference
    home, project, tag, count = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    library = SkillLibrary(home)
    for i in range(count):
        entry = "\\n".join(f"{tag}-{i}-{line}" for line in range(40))
        result = save_skill_reference({"name": "notes", "file": "references/log.md", "content": entry},
                                      ToolContext(root=project), library)
        assert result.startswith("Skill 参考文件已追加"), result
""")


def appender(home: Path, project: Path, tag: str, count: int) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(Path.cwd())}
    return subprocess.Popen([sys.executable, "-c", APPEND, str(home), str(project), tag, str(count)], env=env,
                            stderr=subprocess.PIPE, text=True)


@pytest.mark.process
def test_an_append_waits_for_the_lock_another_process_holds(home, project, skill):
    target = skill / "references" / "log.md"
    with FileLock(str(home / LOCK_FILE)):
        child = appender(home, project, "a", 1)
        time.sleep(1.5)
        assert child.poll() is None and not target.exists()  # still waiting for the lock
    assert child.wait(timeout=patience(30)) == 0, child.stderr.read()
    assert target.read_text(encoding="utf-8").startswith("a-0-0\n")


@pytest.mark.process
def test_two_processes_appending_keep_every_entry_whole(home, project, skill):
    children = [appender(home, project, tag, 12) for tag in ("a", "b")]
    for child in children:
        assert child.wait(timeout=60) == 0, child.stderr.read()
    entries = (skill / "references" / "log.md").read_text(encoding="utf-8").split("\n\n")
    assert len(entries) == 24
    for entry in entries:
        lines = entry.split("\n")
        tag, i = lines[0].split("-")[:2]
        assert lines == [f"{tag}-{i}-{n}" for n in range(40)]


def test_a_lock_held_too_long_gives_a_clear_failure(home, project, skill):
    args = {"name": "notes", "file": "references/x.md", "content": "x"}
    with FileLock(str(home / LOCK_FILE)):
        result = save_skill_reference(args, ToolContext(root=project), SkillLibrary(home), lock_timeout=0.2)
    assert not result.ok
    assert result == "保存 Skill 参考文件失败: 另一个 paicli 进程正在写 Skill 参考文件，0.2 秒内没有等到，请稍后重试"
    assert not (skill / "references").exists()
