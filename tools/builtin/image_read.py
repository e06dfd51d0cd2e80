"""read_file of an image (issue 39): the image itself for a model with vision; for any other model
read_file goes on as before, and a binary file is its one line of type and size. ``read_file``
asks here first; what is not an image goes on as text.

For a vision model the result text names the image and its ``artifact["images"]`` holds the
``image_url`` part; ``execute_tools`` moves it into the internal user message that follows the
tool results (reference r), so the ledger keeps it once.
"""

from __future__ import annotations

from pathlib import Path

from paicli.tools.base import ToolContext, ToolText, failed
from paicli.tools.images import ARTIFACT_KEY, IMAGE_TYPES, ImageError, image_mime, load_image


def read_image(path: Path, raw: str, ctx: ToolContext) -> ToolText | None:
    """None when ``path`` is not an image (by extension and magic number) or the model has no vision."""
    if not ctx.vision:
        return None
    if path.suffix.lower() not in IMAGE_TYPES:
        with path.open("rb") as fh:
            if image_mime(path, fh.read(262)) is None:
                return None
    try:
        image = load_image(ctx.root, raw)
    except ImageError as exc:
        return failed(f"读取文件失败: {exc}")
    return ToolText(f"{image.describe()}，图片内容见下一条消息", {ARTIFACT_KEY: [image.part()]})
