"""The messages team members are given (reference s.5 runStep), built from prompts/team/.

A step sees the goal and the approved results of its own dependencies, never another step's
attempts or a rejected result: that is what review is for. Dependency results are cut to the
reference's 500 characters; the trusted URLs of those branches are listed in full.
"""

from __future__ import annotations

from dataclasses import dataclass

from paicli.nodes.team.plan import TeamStep
from paicli.prompts import PromptSources, load_resource, render

DEPENDENCY_RESULT_CHARS = 500  # reference s.5 runStep item 2
PIECES = ("planning", "context", "dependency", "urls", "task", "retry", "review")


@dataclass(frozen=True)
class Dependency:
    step: TeamStep
    result: str  # its approved (last accepted) result


class TeamInputs:
    """The prompt pieces, loaded once per builder (user and project overrides apply)."""

    def __init__(self, sources: PromptSources = PromptSources()):
        self.t = {name: load_resource(f"team/{name}.md", sources).strip() for name in PIECES}

    def planning(self, goal: str) -> str:
        return render(self.t["planning"], {"goal": goal.strip()})

    def context(self, goal: str, dependencies: list[Dependency], urls: list[str]) -> str:
        """The step's context: the goal, its dependencies' results, their trusted URLs."""
        parts = [render(self.t["context"], {"goal": goal.strip()})]
        parts += [self._dependency(d) for d in dependencies]
        if urls:
            parts.append(render(self.t["urls"], {"urls": "\n".join(f"- {u}" for u in urls)}))
        return "\n\n".join(parts)

    def step(self, context: str, step: TeamStep) -> str:
        return f"{context}\n\n{render(self.t['task'], {'description': step['description']})}"

    def retry(self, context: str, step: TeamStep, feedback: str) -> str:
        """reference s.5 runStep item 7.2: the context plus why the last result was rejected."""
        rejected = render(self.t["retry"], {"feedback": feedback})
        return self.step(f"{context}\n\n{rejected}", step)

    def review(self, step: TeamStep, result: str) -> str:
        return render(self.t["review"], {"description": step["description"], "result": result})

    def _dependency(self, dependency: Dependency) -> str:
        result = dependency.result.strip()
        if len(result) > DEPENDENCY_RESULT_CHARS:
            result = result[:DEPENDENCY_RESULT_CHARS] + "..."
        step = dependency.step
        return render(self.t["dependency"], {"id": step["id"], "description": step["description"], "result": result})
