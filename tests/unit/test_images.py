"""Images (issue 39): ``@image:`` and pasted paths, the path rules and size limit, read_file of an
image with and without vision, and the pruning of older images (reference 0.1, s.2 step 2)."""

import base64

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from paicli.memory.context.images import PRUNED_NOTE, count_images, pruned
from paicli.memory.tokens import estimate_messages
from paicli.run.image_input import attach, image_paths
from tests.support.images import png_bytes, write_png
from paicli.tools.base import ToolContext
from paicli.tools.images import ARTIFACT_KEY, MAX_IMAGE_BYTES
from paicli.tools.registry import run_tool


def test_mentions_and_pasted_paths_that_exist_are_found_once(tmp_path):
    write_png(tmp_path / "shots" / "a.png")
    write_png(tmp_path / "b c.PNG")
    text = "看 @image:shots/a.png 和 '%s' 还有 ./shots/a.png /nowhere/x.png" % (tmp_path / "b c.PNG")
    assert image_paths(text, tmp_path) == ["shots/a.png", str(tmp_path / "b c.PNG")]
    assert image_paths("看看 shots/a.png 的内容", tmp_path) == []  # a file name in prose is prose
    assert image_paths("没有图片 foo.py", tmp_path) == []


def test_a_vision_model_gets_base64_image_url_parts_and_the_text_as_typed(tmp_path):
    write_png(tmp_path / "a.png")
    content, notes = attach("这是什么 @image:a.png", tmp_path, vision=True, model="v")
    assert content[0] == {"type": "text", "text": "这是什么 @image:a.png"}
    url = content[1]["image_url"]["url"]
    assert content[1]["type"] == "image_url" and url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == png_bytes()
    assert notes == ["🖼️ 已附加 1 张图片：图片 a.png（image/png，{:,} 字节）".format(len(png_bytes()))]


def test_a_model_without_vision_gets_one_line_and_text_only(tmp_path):
    write_png(tmp_path / "a.png")
    content, notes = attach("这是什么 @image:a.png", tmp_path, vision=False, model="deepseek-chat")
    assert content == "这是什么 @image:a.png"
    assert notes == ["⚠️ 当前模型 deepseek-chat 不支持图片输入，未附加 a.png；/model list 中标注“图片”的模型可以看图"]


@pytest.mark.parametrize("setup, named", [
    (lambda root: write_png(root / "big.png", padding=MAX_IMAGE_BYTES), "超过 5MB 上限"),
    (lambda root: (root / "fake.png").write_text("not an image"), "不是支持的图片"),
    (lambda root: None, "图片不存在"),
])
def test_an_image_that_cannot_go_is_one_line_and_the_text_still_goes(tmp_path, setup, named):
    setup(tmp_path)
    name = {"超过 5MB 上限": "big.png", "不是支持的图片": "fake.png", "图片不存在": "gone.png"}[named]
    content, notes = attach(f"看 @image:{name}", tmp_path, vision=True, model="v")
    assert content == f"看 @image:{name}" and len(notes) == 1 and named in notes[0]


def test_an_image_outside_the_project_is_refused_by_the_path_rules(tmp_path):
    outside = write_png(tmp_path / "elsewhere" / "x.png")
    root = tmp_path / "project"
    root.mkdir()
    content, notes = attach(f"看 {outside}", root, vision=True, model="v")
    assert content == f"看 {outside}" and notes[0].startswith(f"⚠️ 未附加图片 {outside}：")


async def test_read_file_of_an_image_is_an_image_part_for_vision_and_a_line_otherwise(tmp_path):
    write_png(tmp_path / "logo.png")
    seen = await run_tool("read_file", {"path": "logo.png"}, ToolContext(root=tmp_path.resolve(), vision=True))
    assert seen.ok and seen.startswith("图片 logo.png（image/png，") and "图片内容见下一条消息" in seen
    assert seen.artifact[ARTIFACT_KEY][0]["image_url"]["url"].startswith("data:image/png;base64,")
    blind = await run_tool("read_file", {"path": "logo.png"}, ToolContext(root=tmp_path.resolve()))
    assert blind == f"读取文件失败: logo.png 是二进制文件（类型: image/png，大小: {len(png_bytes())} 字节），不返回原始内容"
    assert not blind.artifact  # one line: its type and size
    text = await run_tool("read_file", {"path": "notes.png"}, ToolContext(root=tmp_path.resolve(), vision=True))
    assert not text.ok  # missing: the usual read_file failure


def test_older_images_are_pruned_with_the_reference_note_and_counted():
    part = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 4000}}
    old = HumanMessage([{"type": "text", "text": "看图"}, part, part], id="u1")
    now = HumanMessage([{"type": "text", "text": "再看"}, part], id="u2")
    messages = [old, AIMessage("好的", id="a1"), now]
    assert count_images(messages) == (3, 3 * 256)  # reference (a): max(256, min(4096, bytes // 768))
    [replaced] = pruned(messages, 2)
    assert replaced.id == "u1" and replaced.content == [{"type": "text", "text": "看图"},
                                                        {"type": "text", "text": PRUNED_NOTE.format(count=2)}]
    assert estimate_messages([replaced]) < estimate_messages([old])
