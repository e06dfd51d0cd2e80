"""What a memory says it is about, when it says so first (issue 16, a ranking rule).

"报表服务的前端打包耗时 5 秒" answers a question about 报表服务, not "前端用什么打包": its words
match, but they qualify a subject the question never named. A memory opens with its subject
when it starts with a short phrase before "的" ("报表服务的", "Redis 的"; not a place such as
"数据库里的"), with a named component that acts ("推荐服务使用 …", "支付网关部署在 …"), with a code name
("user-service keeps logs …") or with an English possessive ("billing's …"). The retriever
ranks such a memory lower when the query names none of its subject's terms, directly or through
the thesaurus. The user and the project are the subject of every question, so a memory about
them ("用户的开发机是 …") never counts as being about something else.
"""

from __future__ import annotations

import re

from paicli.memory.longterm.terms import key_terms

# "报表服务的", "Redis 的"; not a place ("数据库里的时间字段" is about the time fields)
LEAD_ZH = re.compile(r"^\s*([^，,。；;：:、！？!?()（）的]{2,12}?)(?<![里中内上下])\s*的")
# "推荐服务使用 MySQL 作为数据库": a named component that acts, without a "的"
LEAD_COMPONENT = re.compile(r"^\s*([^，,。；;：:、！？!?()（）的\s]{1,8}?(?:服务|网关|后台|系统|平台|模块|组件))\s*"
                            r"(?=使用|采用|用|在|部署|监听|依赖|调用|跑|运行)")
LEAD_CODE_NAME = re.compile(r"^\s*([A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)+)\b")  # "user-service keeps"
LEAD_POSSESSIVE = re.compile(r"^\s*(?:the\s+)?([\w-]+)'s\s", re.IGNORECASE)  # "billing's owner"
# Terms of the implicit subject of every question: the user and the project.
# A component's kind, not its name: "服务" in a question does not name 推荐服务.
KIND = frozenset({"服务", "网关", "后台", "系统", "平台", "模块", "组件", "service", "server", "gateway"})
IMPLICIT = frozenset({"用户", "项目", "我们", "团队", "公司", "user", "project", "team", "we", "our"})


def subject_terms(content: str) -> frozenset[str]:
    """The key terms of the subject ``content`` opens with; empty when it names none or names
    the user or the project."""
    for pattern in (LEAD_ZH, LEAD_COMPONENT, LEAD_CODE_NAME, LEAD_POSSESSIVE):
        match = pattern.match(content)
        if match:
            found = key_terms(match.group(1))
            return frozenset() if found <= IMPLICIT else (found - KIND or found)
    return frozenset()
