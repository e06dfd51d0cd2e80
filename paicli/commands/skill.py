"""``/skill list|show|on|off|trust|reload`` (reference s.6).

Works on the App's skill library, which the session's ``load_skill`` shares, so a change here is
in the next model call's ``## Skills`` index. ``/skill trust`` is also how a script trusts a
project skill: ``paicli -p "/skill trust <name>"``.
"""

from __future__ import annotations

from typing import Any

from paicli.tools.skills.library import Listed
from paicli.tools.skills.state import SkillStateError

USAGE = "用法: /skill list | show <名称> | on <名称> | off <名称> | trust <名称> | reload"


def skill(app: Any, payload: str, say: Any) -> None:
    sub, _, name = payload.partition(" ")
    sub, name = sub.lower() or "list", name.strip()
    if sub == "list":
        _list(app, say)
    elif sub == "reload":
        app.skills.reload()
        listing = app.skills.listing(app.settings.project_root)
        broken = sum(1 for listed in listing if listed.skill.problem)
        say(f"🔄 已重新扫描 Skill：{len(listing) - broken} 个可用，{broken} 个损坏")
    elif sub in ("show", "on", "off", "trust") and name:
        listed = app.skills.lookup(app.settings.project_root, name)
        if listed is None:
            say.fail(f"❌ 未找到 skill '{name}'，可用 /skill list 查看")
            return
        try:
            {"show": _show, "on": _on, "off": _off, "trust": _trust}[sub](listed, app, say)
        except SkillStateError as error:  # skills.json is damaged; nothing was written
            say.fail(f"❌ {error}")
    else:
        say.fail(f"❌ {USAGE}")


def status(listed: Listed) -> str:
    if listed.skill.problem:
        return f"损坏：{listed.skill.problem}"
    if not listed.enabled:
        return "已禁用"
    return "未信任（/skill trust 后才会作为指令加载）" if not listed.trusted else "可用"


def _list(app: Any, say: Any) -> None:
    listing = app.skills.listing(app.settings.project_root)
    if not listing:
        say("📭 还没有 Skill。把 SKILL.md 放进 ~/.paicli/skills/<名称>/ 或 .paicli/skills/<名称>/ 后 /skill reload")
        return
    say(f"🧩 Skills（{len(listing)} 个）：")
    for listed in listing:
        icon = "❌" if listed.skill.problem else "⏸️" if not listed.enabled else "🔒" if not listed.trusted else "✅"
        say(f"  {icon} {listed.skill.name} [{listed.skill.source}] {status(listed)}")
        if listed.skill.description:
            say(f"     {listed.skill.description}")


def _show(listed: Listed, app: Any, say: Any) -> None:
    s = listed.skill
    say(f"🧩 {s.name} [{s.source}] {status(listed)}")
    say(f"   文件: {s.path}")
    if s.digest:
        say(f"   sha256: {s.digest}")
    if s.description:
        say(f"   描述: {s.description}")
    if s.body:
        say("")
        for line in s.body.splitlines():
            say(line)


def _on(listed: Listed, app: Any, say: Any) -> None:
    app.skills.set_enabled(listed.skill.name, True)
    say(f"✅ 已启用 skill '{listed.skill.name}'")


def _off(listed: Listed, app: Any, say: Any) -> None:
    app.skills.set_enabled(listed.skill.name, False)
    say(f"⏸️ 已禁用 skill '{listed.skill.name}'，load_skill 不会再加载它")


def _trust(listed: Listed, app: Any, say: Any) -> None:
    s = listed.skill
    if s.problem:
        say.fail(f"❌ skill '{s.name}' 无法使用，不能信任：{s.problem}")
    elif s.source != "project":
        say(f"ℹ️ skill '{s.name}' 来自 {s.source}，不需要信任")
    else:
        app.skills.trust(s)
        say(f"🔓 已信任项目 skill '{s.name}'（{s.path}，sha256 {s.digest[:12]}…）；文件改动后需要重新信任")
