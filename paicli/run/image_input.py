"""Images in what the user typed (issue 39; reference s.2 step 6): ``@image:<path>``, and a pasted
image path (what a terminal types when a file is dropped on it, quoted or not), become
``image_url`` parts of the user's message, for a model with vision.

The path rules and size limit are ``paicli.tools.images``': only a file inside the project, at most
5 MB, a real png/jpeg/gif/webp/bmp. Each image that cannot go gets one line saying why, and the
text goes on without it; a model without vision gets one line instead of the images, never a
request the provider would refuse with a 400. The message's text stays exactly what was typed
(the turn policy and fact extraction read it).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from paicli.tools.base import PolicyError
from paicli.tools.images import Image, ImageError, is_image_path, load_image

MENTION = re.compile(r"(?<![\w@])@image:(\"[^\"]+\"|'[^']+'|\S+)")
# A pasted path, as a terminal types a dropped file: quoted, or starting with / ~ ./ ../, on its
# own between spaces. A bare file name in prose ("看看 chart.png") is prose: the model may read it.
PASTED = re.compile(r"(?<!\S)(\"[^\"]+\"|'[^']+'|(?:~|\.{1,2})?/[^\s\"']*\.(?:png|jpe?g|gif|webp|bmp))(?!\S)",
                    re.IGNORECASE)


def image_paths(text: str, root: Path) -> list[str]:
    """The paths to attach, in order, each once: every ``@image:`` and every pasted image path
    that exists (a pasted path that is not there stays text)."""
    found = [_unquote(m.group(1)) for m in MENTION.finditer(text)]
    rest = MENTION.sub(" ", text)
    for match in PASTED.finditer(rest):
        raw = _unquote(match.group(1))
        if is_image_path(raw) and (root / Path(raw).expanduser()).is_file():
            found.append(raw)
    unique: dict[str, str] = {}
    for raw in found:  # ./a.png and a.png are one image
        unique.setdefault(os.path.normpath(os.path.expanduser(raw)), raw)
    return list(unique.values())


def _unquote(raw: str) -> str:
    return raw[1:-1] if len(raw) > 1 and raw[0] == raw[-1] and raw[0] in "\"'" else raw


def attach(text: str, root: Path, vision: bool, model: str) -> tuple[str | list[dict[str, Any]], list[str]]:
    """The user's message content and the lines to show. Text only when nothing is attached."""
    paths = image_paths(text, root)
    if not paths:
        return text, []
    if not vision:
        names = "、".join(paths)
        return text, [f"⚠️ 当前模型 {model} 不支持图片输入，未附加 {names}；/model list 中标注“图片”的模型可以看图"]
    images: list[Image] = []
    notes: list[str] = []
    for raw in paths:
        try:
            images.append(load_image(root, str(Path(raw).expanduser())))
        except (ImageError, PolicyError) as exc:
            notes.append(f"⚠️ 未附加图片 {raw}：{getattr(exc, 'reason', None) or exc}")
    if not images:
        return text, notes
    notes.append(f"🖼️ 已附加 {len(images)} 张图片：{'、'.join(i.describe() for i in images)}")
    return [{"type": "text", "text": text}, *(i.part() for i in images)], notes
