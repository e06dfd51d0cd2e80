"""Images in the history (reference 0.1, s.2 step 2): counted, and pruned before each new turn.

A user message or an image tool result keeps its image parts for the turn it belongs to; before
the next turn every older message with image parts is replaced, under the same id, by its text
parts plus the reference's note ``[历史图片附件已省略 N 张；…]`` (``withoutImageContent``). An image is
thousands of tokens on every request; the model has seen it once, and a path or the tool result
above says how to see it again.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage

from paicli.memory.tokens import image_tokens, is_image

PRUNED_NOTE = "[历史图片附件已省略 {count} 张；如需重新查看，请使用上文 Image source 或相关工具结果。]"  # reference 0.1


def images_in(message: BaseMessage) -> list[dict]:
    content = message.content
    return [b for b in content if is_image(b)] if isinstance(content, list) else []


def count_images(messages: Sequence[BaseMessage]) -> tuple[int, int]:
    """(images, their estimated tokens, reference a) in ``messages``: for /context."""
    found = [b for m in messages for b in images_in(m)]
    return len(found), sum(image_tokens(b) for b in found)


def without_images(message: BaseMessage) -> BaseMessage | None:
    """The message without its image parts and with the note; None when it has none."""
    images = images_in(message)
    if not images:
        return None
    kept = [b for b in message.content if not is_image(b)]  # type: ignore[union-attr]
    note = {"type": "text", "text": PRUNED_NOTE.format(count=len(images))}
    return message.model_copy(update={"content": [*kept, note]})


def pruned(messages: Sequence[BaseMessage], before: int) -> list[BaseMessage]:
    """Replacements (same ids) for the messages before index ``before`` that carry images."""
    return [m for m in (without_images(message) for message in messages[:before]) if m is not None]
