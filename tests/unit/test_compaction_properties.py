"""Property: clearing and summarising never break tool-call pairing (issue 4's invariant).

Random histories mix parallel calls, invalid calls, long outputs, reasoning, skill injections,
runaway reminders, image messages and multimodal user input; every rewrite must leave no
assistant tool call without all its results and no result without its call.
"""

import itertools

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from paicli.memory.context.clearing import ToolResultClearer
from paicli.memory.context.compaction import Compactor, compact_if_needed
from paicli.memory.context.profile import ContextProfile
from paicli.memory.context.rounds import IMAGE_TOOL_RESULT, RUNAWAY_REMINDER, internal, user_indices
from paicli.memory.context.summary import compact_full
from paicli.memory.tokens import Estimator
from tests.graphs.conftest import assert_paired
from tests.support.properties import examples
from tests.unit.compaction_helpers import FakeSummarizer, skill_injection, summary_prompts
from paicli.tools.boundary import wrap

PROMPTS = summary_prompts()
_ids = itertools.count()


def nid(prefix):
    return f"{prefix}{next(_ids)}"


@st.composite
def user_message(draw):
    text = draw(st.text(min_size=1, max_size=40))
    if draw(st.booleans()):
        image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * draw(st.integers(0, 5_000))}}
        return HumanMessage([{"type": "text", "text": text}, image], id=nid("u"))
    return HumanMessage(text, id=nid("u"))


@st.composite
def tool_step(draw):
    """One assistant message with parallel (possibly invalid) calls, then every result in order."""
    names = draw(st.lists(st.sampled_from(["read_file", "grep_code", "execute_command", "load_skill"]), min_size=1, max_size=4))
    calls = [{"name": n, "args": {"path": f"f{i}.py"}, "id": nid("c"), "type": "tool_call"} for i, n in enumerate(names)]
    invalid = [{"name": "edit_file", "args": "{broken", "id": nid("b"), "error": None, "type": "invalid_tool_call"}
               for _ in range(draw(st.integers(0, 1)))]
    reasoning = {"reasoning_content": "思考" * draw(st.integers(0, 50))}
    step = [AIMessage(draw(st.text(max_size=20)), tool_calls=calls, invalid_tool_calls=invalid,
                      additional_kwargs=reasoning, id=nid("a"))]
    for c in [*calls, *invalid]:
        size = draw(st.sampled_from([5, 399, 400, 3_000, 20_000]))
        step.append(ToolMessage(wrap(c["name"], "x" * size), tool_call_id=c["id"], name=c["name"], id=nid("t")))
    extras = draw(st.lists(st.sampled_from(["skill", "image", "runaway"]), max_size=2))
    for kind in extras:
        if kind == "skill":
            step.append(skill_injection(draw(st.sampled_from(["git", "pdf", "docx"]))))
        else:
            step.append(internal("内部提醒", IMAGE_TOOL_RESULT if kind == "image" else RUNAWAY_REMINDER, id=nid("i")))
    return step


@st.composite
def histories(draw):
    messages = []
    for _ in range(draw(st.integers(1, 7))):
        messages.append(draw(user_message()))
        for step in draw(st.lists(tool_step(), max_size=3)):
            messages.extend(step)
        if draw(st.booleans()):
            messages.append(AIMessage(draw(st.text(max_size=30)), id=nid("a")))
    return messages


SETTINGS = settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(histories(), st.integers(0, 4))
def test_clearing_never_breaks_pairing(messages, keep):
    cleared = ToolResultClearer(keep_recent=keep).clear(messages)
    assert_paired(cleared.messages)
    assert [m.id for m in cleared.messages] == [m.id for m in messages]


@SETTINGS
@given(histories(), st.integers(1, 4), st.integers(0, 4))
async def test_summarising_never_breaks_pairing(messages, retain, keep):
    cleared = ToolResultClearer(keep_recent=keep).clear(messages).messages
    outcome = await compact_full(cleared, summarize=FakeSummarizer(), prompts=PROMPTS,
                                 estimate=Estimator().estimate, force=True, retain_rounds=retain)
    event(f"summary: {outcome.reason.name if outcome.reason else 'rebuilt'}")
    if outcome.messages is None:
        return
    assert_paired(outcome.messages)
    kept = outcome.messages[2:]
    assert kept == cleared[len(cleared) - len(kept):]
    assert len(user_indices(kept)) >= retain


@SETTINGS
@given(histories(), st.booleans(), st.sampled_from([8_000, 32_000]))
async def test_pipeline_never_breaks_pairing(messages, force, window):
    result = await compact_if_needed(messages, ContextProfile.from_window(window), Estimator(),
                                     summarize=FakeSummarizer(), prompts=PROMPTS, force=force)
    event(f"pipeline: {result.strategy.name if result else 'none'}")
    assert_paired(result.messages if result else messages)


@SETTINGS
@given(histories(), st.lists(st.tuples(st.sampled_from(["append", "drop", "clear"]), st.integers(0, 50)), max_size=6))
def test_incremental_estimate_equals_a_fresh_one(messages, edits):
    estimator = Estimator()
    for action, at in edits:
        estimator.estimate(messages)
        if action == "append":
            messages = messages + [HumanMessage("追加" * at, id=nid("u"))]
        elif action == "drop" and messages:
            messages = messages[: at % len(messages)] + messages[at % len(messages) + 1:]
        else:
            messages = ToolResultClearer(keep_recent=at % 4).clear(messages).messages
        assert estimator.estimate(messages) == Estimator().estimate(messages)


@SETTINGS
@given(histories(), st.booleans(), st.integers(0, 4), st.sampled_from([8_000, 16_000, 32_000, 64_000]))
async def test_the_router_skips_compaction_only_when_the_pipeline_would_change_nothing(messages, cleared, keep, window):
    """``Compactor.would_act`` (the router in front of the model call) against the pipeline itself:
    when it says no, the pipeline returns nothing; under the summary trigger they always agree."""
    clearer = ToolResultClearer(keep_recent=keep)
    messages = clearer.clear(messages).messages if cleared else messages
    profile, estimator = ContextProfile.from_window(window), Estimator()
    compactor = Compactor(FakeSummarizer(), PROMPTS, estimator, clearer)
    tokens = estimator.estimate(messages)
    acts = compactor.would_act(messages, profile, tokens)
    result = await compactor.compact_if_needed(messages, profile)
    event(f"router: {'compact' if acts else 'skip'}, pipeline: {result.strategy.name if result else 'none'}")
    if not acts:
        assert result is None
    if tokens < profile.compression_trigger_tokens:
        assert acts == (result is not None)
