from paicli.ui.context_view import ContextUsage, render_context, tokens


def usage(**overrides):
    values = dict(model="glm-5.1", provider="glm", window=128_000, system_tokens=3_100, memory_tokens=0,
                  schema_tokens=6_000, conversation_tokens=18_300, conversation_messages=42, summary_trigger=95_000,
                  summary_percent=74, clearing_trigger=57_000, clearing_keep=3, session_memory=False,
                  prompt_cache="glm-prompt-cache")
    values.update(overrides)
    return ContextUsage(**values)


def test_token_numbers_are_abbreviated_like_the_reference():
    assert [tokens(999), tokens(27_400), tokens(1_500_000)] == ["999", "27.4k", "1.5M"]


def test_context_report_matches_the_reference_layout():
    lines = render_context(usage())
    assert lines[1] == "📊 上下文占用   glm-5.1 (glm)   窗口: 128.0k"
    assert lines[3] == "  [" + "█" * 6 + "░" * 24 + "]  21%  (27.4k / 128.0k)"
    assert "    系统提示词:            3.1k  ( 2.4%)  [1 条]" in lines
    assert "    对话:                 18.3k  (14.3%)  [42 条]" in lines
    assert "  压缩阈值: 95.0k (74%)   距压缩还有: 67.6k" in lines
    assert "  旧工具结果清理: 57.0k 触发，保留最近 3 条" in lines
    assert "  自动压缩: 完整摘要（Session Memory 实验开关关闭）" in lines


def test_switches_show_when_off_or_on():
    lines = render_context(usage(clearing_trigger=None, session_memory=True, window=16_000))
    assert "  旧工具结果清理: 关闭" in lines
    assert "  自动压缩: Session Memory 优先，完整摘要回退" in lines
    assert "  MCP resources 自动索引: 关闭（window 不足 32k）" in lines


def test_the_mcp_resource_index_line_tells_the_truth_on_a_large_window():
    assert "  MCP resources 自动索引: 关闭（没有可索引的 MCP 资源）" in render_context(usage(window=128_000))
    assert "  MCP resources 自动索引: 开启" in render_context(usage(window=128_000, mcp_index=True))


def test_images_still_in_the_conversation_have_a_row():
    assert not any("图片:" in line for line in render_context(usage()))
    [row] = [line for line in render_context(usage(images=2, image_tokens=512)) if "图片:" in line]
    assert "512" in row and "[2 条]" in row


def test_the_skill_index_and_injected_bodies_have_rows_of_their_own():
    lines = render_context(usage(skill_index_tokens=120, skill_body_tokens=2_400, skill_bodies=2))
    assert "    Skill 索引:             120  ( 0.1%)" in lines
    assert "    Skill 正文:            2.4k  ( 1.9%)  [2 条]" in lines
    assert lines.index("    Skill 正文:            2.4k  ( 1.9%)  [2 条]") > lines.index(
        "    对话:                 18.3k  (14.3%)  [42 条]")
