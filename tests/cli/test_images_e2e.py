"""Images end to end (issue 39): ``@image:`` sends a base64 ``image_url`` part to a vision model and
one clear line (no part, no 400) for one without; read_file of an image follows the tool result as
an image message (reference r); the next turn keeps only the note (reference s.2 step 2)."""

import json

from tests.support.images import png_bytes, write_png
from tests.support.openai_server import Reply

VISION = {"providers": {"custom": {"models": {"m": {"window": 128000, "vision": True}}}}}


def user_contents(request: dict) -> list:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


def test_an_image_mention_sends_a_base64_image_url_part_to_a_vision_model(server, run_paicli, project, paicli_home):
    (paicli_home / "config.json").write_text(json.dumps(VISION), encoding="utf-8")
    write_png(project / "ui.png")
    server.script = [Reply("一个红色方块")]
    done = run_paicli("-p", "图里是什么 @image:ui.png")
    assert done.returncode == 0, done.stderr
    [content] = user_contents(server.requests[0])
    assert content[0] == {"type": "text", "text": "图里是什么 @image:ui.png"}
    assert content[1]["type"] == "image_url"
    assert content[1]["image_url"]["url"] == "data:image/png;base64," + __import__("base64").b64encode(png_bytes()).decode()
    assert "🖼️ 已附加 1 张图片" in done.stderr


def test_a_model_without_vision_gets_a_clear_line_and_a_text_request(server, run_paicli, project):
    write_png(project / "ui.png")
    server.script = [Reply("我看不到图")]
    done = run_paicli("-p", "图里是什么 @image:ui.png")
    assert done.returncode == 0
    assert "⚠️ 当前模型 m 不支持图片输入，未附加 ui.png" in done.stderr
    assert user_contents(server.requests[0]) == ["图里是什么 @image:ui.png"]


def test_read_file_of_an_image_reaches_a_vision_model_then_is_pruned_next_turn(server, run_paicli, project,
                                                                               paicli_home):
    (paicli_home / "config.json").write_text(json.dumps(VISION), encoding="utf-8")
    write_png(project / "chart.png")
    server.script = [Reply("", tool_calls=[{"name": "read_file", "arguments": {"path": "chart.png"}}]),
                     Reply("是一张图表"), Reply("上一轮看过了")]
    assert run_paicli("-p", "看看 chart.png 的内容", "--session", "img").returncode == 0
    second = server.requests[1]["messages"]
    tool = [m for m in second if m["role"] == "tool"][0]
    assert "图片 chart.png（image/png" in tool["content"] and "base64" not in tool["content"]
    follow = second[-1]
    assert follow["role"] == "user" and follow["content"][0]["text"].startswith("工具 read_file 返回了图片内容")
    assert follow["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    context = run_paicli("-p", "/context", "--session", "img")
    assert "    图片:" in context.stdout and "[1 条]" in context.stdout.split("图片:")[1].splitlines()[0]
    assert run_paicli("-p", "还记得吗", "--session", "img").returncode == 0
    third = json.dumps(server.requests[2]["messages"], ensure_ascii=False)
    assert "data:image/png;base64" not in third and "[历史图片附件已省略 1 张；" in third
