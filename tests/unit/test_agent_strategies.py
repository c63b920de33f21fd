"""Claude Code's and Codex's own auto-compact (docs/agents.md), replayed as strategies:
exact figures with chars/4 counts (a text of 4n characters is n tokens)."""

from compaction_inspector.core.agents.claude_code import strategy as claude_code
from compaction_inspector.core.agents.claude_code.strategy import ClaudeCodeOptions
from compaction_inspector.core.agents.codex.strategy import CodexOptions
from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.model import Message
from compaction_inspector.core.replaying.simulate import simulate
from compaction_inspector.core.replaying.simulation import Policy
from compaction_inspector.core.strategies import Context, run
from tests.helpers import a, call, result, snapshot, u


def session() -> list[Message]:
    msgs: list[Message] = [u("<environment_context>cwd</environment_context>", is_meta=True)]
    for k in range(6):
        msgs += [u(f"task {k} " + "w" * 400), call(f"r{k}", "Read", input={"file_path": f"src/f{k % 3}.py"})]
        msgs += [
            result(f"r{k}", text=f"contents of f{k % 3} v{k} " + "x" * 2000),
            a("done " + "d" * 200, id=f"e{k}"),
        ]
    msgs += [call("todo", "TodoWrite", input={"todos": [{"content": "ship it", "status": "pending"}]})]
    msgs += [result("todo", text="ok"), u("next")]
    return msgs


CONTEXT = Context(window=Window(10_000, 1_000))  # usable 9,000: Claude Code's point is 9,000 - 13,000 < 0


def test_claude_code_summarizes_all_and_puts_back_the_latest_files() -> None:
    msgs = session()
    before = snapshot(msgs)
    r = run(
        CATALOGUE.strategies["claude-code"],
        msgs,
        ClaudeCodeOptions(auto_compact_tokens=3000, summary_chars=600),
        CONTEXT,
    )
    assert snapshot(msgs) == before  # the input is never changed
    assert r.messages is not None and [m.kind for m in r.messages] == [
        "marker", "summary", "attachment", "attachment", "attachment",
    ]  # fmt: skip
    # the three files last read, each once at its latest content, newest first; no todo list
    assert [m.text.split("\n")[1][:15] for m in r.messages[2:5]] == [
        "contents of f2 ",
        "contents of f1 ",
        "contents of f0 ",
    ]
    assert "v5" in r.messages[2].text and "v3" in r.messages[4].text
    assert len(r.messages[1].text) <= 600 and r.messages[1].is_compact_summary
    stats = r.stats.to_dict()
    assert (stats["triggered"], stats["point"], stats["files_reread"], stats["truncations"]) == (
        True,
        3000,
        3,
        0,
    )
    assert [s.title for s in r.steps] == ["Auto-compact"]
    assert run(
        CATALOGUE.strategies["claude-code"], msgs, ClaudeCodeOptions(auto_compact_tokens=9_000), CONTEXT
    ).steps[0].title == ("Not triggered")


def test_claude_codes_summarize_request_over_the_window_is_truncated_first() -> None:
    msgs = session()
    small = Context(window=Window(2_500, 0))
    r = run(
        CATALOGUE.strategies["claude-code"],
        msgs,
        ClaudeCodeOptions(auto_compact_tokens=1_000, summary_prompt_tokens=500),
        small,
    )
    titles = [s.title for s in r.steps]
    assert titles[-1] == "Auto-compact" and titles[0].startswith("Summarize request: retry 1: drop")
    assert r.stats.truncations == len(titles) - 1 >= 1  # type: ignore[attr-defined]


def test_codex_keeps_the_initial_context_recent_user_messages_and_a_summary() -> None:
    msgs = session()
    local = CodexOptions(auto_compact_token_limit=3000, remote=False, user_message_tokens=250)
    r = run(CATALOGUE.strategies["codex"], msgs, local, CONTEXT)
    assert r.messages is not None
    kinds = ["meta", "marker", "message", "message", "message", "message", "summary"]
    assert [m.kind for m in r.messages] == kinds
    # the newest prompts within 250 of Codex's tokens (bytes / 4): "next" (1), tasks 5 and 4
    # (102 each), and task 3 cut to the 45 left
    assert [m.text[:6] for m in r.messages[2:6]] == ["task 3", "task 4", "task 5", "next"]
    assert len(r.messages[2].text) == 45 * 4
    assert r.stats.to_dict()["limit"] == 3000 and r.stats.to_dict()["user_messages_kept"] == 4
    # remotely (the default), the initial context goes back before the last prompt
    remote = run(
        CATALOGUE.strategies["codex"],
        msgs,
        CodexOptions(auto_compact_token_limit=3000, user_message_tokens=250),
        CONTEXT,
    )
    assert remote.messages is not None
    assert [m.kind for m in remote.messages] == ["marker", *kinds[2:5], "meta", "message", "summary"]
    # the limit is capped at 90 % of the raw window: the effective 10,000 / 0.95 = 10,526
    stats = run(
        CATALOGUE.strategies["codex"], msgs, CodexOptions(auto_compact_token_limit=50_000), CONTEXT
    ).stats
    assert stats.limit == 9_473  # type: ignore[attr-defined]


def test_a_replay_under_claude_code_compacts_and_builds_on_its_result() -> None:
    replay = simulate(
        session(),
        Policy(CATALOGUE.strategies["claude-code"], ClaudeCodeOptions(auto_compact_tokens=2000)),
        CONTEXT,
    )
    events = [p for p in replay.points if p.event]
    # the summary lists the span's paths and numbers word for word (core.replaying.summary),
    # then the re-read files
    assert [(p.round, p.tokens_before, p.tokens_after) for p in events] == [(7, 2101, 1615), (8, 2126, 555)]
    assert all(e.event is not None and e.event.titles == ("Auto-compact",) for e in events)
    # persisted: the requests after it build on the compacted history, under the point again
    assert [p.tokens_before for p in replay.points if p.round == 9] == [707]


def test_claude_code_says_a_window_too_small_for_its_rule_has_no_point() -> None:
    """9,000 usable less Claude Code's 13,000 is no point at all: it never fires, and says why."""
    result = claude_code.run(session(), ClaudeCodeOptions(), CONTEXT)
    assert [s.title for s in result.steps] == ["Not triggered"]
    assert result.steps[0].explanation.startswith("A usable window of 9,000 leaves no auto-compact point")
    assert result.stats.point is None and result.stats.triggered is False
    assert simulate(session(), Policy(CATALOGUE.strategies["claude-code"]), CONTEXT).totals.compactions == 0
