"""The hostile-input corpus and the one way to run the command on it.

`CORPUS` holds hand-made transcripts, each a file name and its bytes: every string field of
every format carrying a terminal escape, markup, wrong types, numbers past any bound,
lone surrogates, deep nesting, YAML tags and alias bombs. `mutants` derives more from the
bundled samples with a seeded random mutator. `run_cli` runs one command in this process
and says how it ended: the exit code, what it printed, and a traceback if one escaped.
`tests/test_hostile.py` runs all of it within CI's budget; `benchmarks/fuzz.py` runs
longer.
"""

from __future__ import annotations

import io
import json
import random
import signal
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from typing import Any

from compaction_inspector.sample_sessions import names, path

# What a transcript can do to a terminal: a clipboard write, a hyperlink, a cursor move
# with a colour, a window title.
ESCAPES = {
    "osc52": "\x1b]52;c;cHduZWQ=\x1b\\",
    "osc8": "\x1b]8;;https://example.com\x07link\x1b]8;;\x07",
    "csi": "\x1b[2J\x1b[31mred",
    "title": "\x1b]0;pwned\x07",
}
# bytes no output may carry: ESC, the 8-bit CSI, OSC and string terminator, BEL
FORBIDDEN = ("\x1b", "\x9b", "\x9d", "\x9c", "\x07")
MARKUP = "9[/bold][link=x]"


def _jsonl(*records: Any) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def claude_code(e: str) -> bytes:
    """A Claude Code session with `e` in every string field the loader reads."""
    base = {"sessionId": f"s{e}", "cwd": f"/p{e}", "version": f"2.1.{e}", "isSidechain": False}
    return _jsonl(
        {"type": "summary", "summary": f"title{e}", "leafUuid": "x"},
        {
            **base,
            "type": "user",
            "uuid": "u1",
            "timestamp": f"2026-01-01T00:00:00Z{e}",
            "message": {"role": "user", "content": f"hello{e}"},
        },
        {
            **base,
            "type": "attachment",
            "uuid": "a1",
            "timestamp": "2026-01-01T00:00:01Z",
            "attachment": {"type": f"todo{e}", "content": f"att{e}", "hookName": f"h{e}"},
        },
        {
            **base,
            "type": "assistant",
            "uuid": "u2",
            "timestamp": "2026-01-01T00:00:02Z",
            "message": {
                "role": "assistant",
                "id": f"m{e}",
                "model": f"claude{e}",
                "content": [
                    {"type": "thinking", "thinking": f"hm{e}"},
                    {"type": "text", "text": f"ok{e}"},
                    {"type": "tool_use", "id": f"t{e}", "name": f"Read{e}", "input": {"file_path": f"/f{e}"}},
                ],
                "usage": {"input_tokens": 10, "output_tokens": 5},
            },
        },
        {
            **base,
            "type": "user",
            "uuid": "u3",
            "timestamp": "2026-01-01T00:00:03Z",
            "message": {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"t{e}", "content": f"body{e}"},
                    {"type": "tool_result", "tool_use_id": f"orphan{e}", "content": "x"},
                ],
            },
        },
        {
            **base,
            "type": "system",
            "subtype": "compact_boundary",
            "uuid": "b1",
            "timestamp": "2026-01-01T00:00:04Z",
            "content": f"Conversation compacted{e}",
            "compactMetadata": {"trigger": e, "preTokens": 100},
        },
        {
            **base,
            "type": "user",
            "uuid": "u4",
            "isCompactSummary": True,
            "timestamp": "2026-01-01T00:00:05Z",
            "message": {"role": "user", "content": f"summary{e}"},
        },
        {
            **base,
            "type": "user",
            "uuid": "u5",
            "timestamp": "2026-01-01T00:00:06Z",
            "message": {"role": "user", "content": f"again{e}"},
        },
        {
            **base,
            "type": "assistant",
            "uuid": "u6",
            "timestamp": "2026-01-01T00:00:07Z",
            "message": {
                "role": "assistant",
                "id": "m2",
                "content": [
                    {
                        "type": "tool_use",
                        "id": f"p{e}",
                        "name": "TodoWrite",
                        "input": {"todos": [{"content": f"todo{e}", "status": f"pending{e}"}]},
                    }
                ],
                "usage": {"input_tokens": 30, "output_tokens": 5},
            },
        },
    )


def codex(e: str) -> bytes:
    """A Codex rollout with `e` in every string field the loader reads."""
    t = "2026-01-01T00:00:00Z"
    return _jsonl(
        {
            "timestamp": t,
            "type": "session_meta",
            "payload": {"id": f"c{e}", "cwd": f"/w{e}", "timestamp": f"{t}{e}", "cli_version": e},
        },
        {"timestamp": t, "type": "turn_context", "payload": {"model": f"gpt{e}", "cwd": f"/w{e}"}},
        {
            "timestamp": t,
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": f"go{e}"}],
            },
        },
        {
            "timestamp": t,
            "type": "response_item",
            "payload": {"type": "reasoning", "summary": [{"text": f"think{e}"}]},
        },
        {
            "timestamp": t,
            "type": "response_item",
            "payload": {
                "type": "function_call",
                "name": f"sh{e}",
                "call_id": f"c{e}",
                "arguments": json.dumps({"cmd": e}),
            },
        },
        {
            "timestamp": t,
            "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": f"c{e}", "output": f"out{e}"},
        },
        {
            "timestamp": t,
            "type": "response_item",
            "payload": {
                "type": "function_call",
                "name": "update_plan",
                "call_id": "p1",
                "arguments": json.dumps({"plan": [{"step": e, "status": e}]}),
            },
        },
        {
            "timestamp": t,
            "type": "event_msg",
            "payload": {
                "type": "token_count",
                "info": {
                    "last_token_usage": {"input_tokens": 50, "output_tokens": 5},
                    "total_token_usage": {"input_tokens": 50},
                    "model_context_window": 1000,
                },
            },
        },
        {
            "timestamp": t,
            "type": "compacted",
            "payload": {
                "message": f"sum{e}",
                "replacement_history": [
                    {
                        "type": "message",
                        "role": "user",
                        "content": [{"type": "input_text", "text": f"kept{e}"}],
                    }
                ],
            },
        },
        {
            "timestamp": t,
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": f"done{e}"}],
            },
        },
    )


def openai_chat(e: str) -> bytes:
    return json.dumps(
        {
            "model": f"gpt{e}",
            "messages": [
                {"role": "system", "content": f"sys{e}"},
                {"role": "user", "content": f"hi{e}"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": f"call{e}", "type": "function", "function": {"name": f"f{e}", "arguments": e}}
                    ],
                },
                {"role": "tool", "tool_call_id": f"call{e}", "content": f"res{e}"},
                {"role": "tool", "tool_call_id": f"stray{e}", "content": "x"},
            ],
        }
    ).encode()


def anthropic_body(e: str) -> bytes:
    return json.dumps(
        {
            "model": f"claude{e}",
            "system": f"sys{e}",
            "tools": [{"name": f"t{e}"}],
            "messages": [
                {"role": "user", "content": f"hi{e}"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": f"i{e}", "name": f"n{e}", "input": {}}],
                },
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": f"i{e}", "content": f"r{e}"}],
                },
            ],
        }
    ).encode()


def proxy_log(e: str) -> bytes:
    body = json.loads(anthropic_body(e))
    return _jsonl({"request": {"body": body}, "response": {"body": {"usage": {"input_tokens": 900}}}})


def plain_yaml(e: str) -> bytes:
    return json.dumps(
        [{"role": "user", "content": f"hi{e}"}, {"role": "assistant", "content": f"yo{e}"}]
    ).encode()


FORMATS: dict[str, Callable[[str], bytes]] = {
    "claude.jsonl": claude_code,
    "codex.jsonl": codex,
    "openai.json": openai_chat,
    "anthropic.json": anthropic_body,
    "proxy.jsonl": proxy_log,
    "plain.json": plain_yaml,
}


def _claude_reply(uuid: str, message_id: str, content: Any, **fields: Any) -> dict[str, Any]:
    """A Claude Code assistant line with `content` (and `fields` beside the message, or
    `usage` inside it)."""
    usage = {"usage": fields.pop("usage")} if "usage" in fields else {}
    message = {"role": "assistant", "id": message_id, "content": content, **usage}
    return {"type": "assistant", "uuid": uuid, "sessionId": "s", "message": message, **fields}


def _claude_line(**fields: Any) -> dict[str, Any]:
    return {
        "type": "user",
        "uuid": "u",
        "sessionId": "s",
        "isSidechain": False,
        "message": {"role": "user", "content": "hi"},
        **fields,
    }


def _codex_lines(*payloads: dict[str, Any], meta: dict[str, Any] | None = None) -> bytes:
    t = "2026-01-01T00:00:00Z"
    return _jsonl(
        {"timestamp": t, "type": "session_meta", "payload": {"id": "c", "cwd": "/w", **(meta or {})}},
        {
            "timestamp": t,
            "type": "response_item",
            "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
        },
        *({"timestamp": t, "type": "response_item", "payload": p} for p in payloads),
    )


def _nested(depth: int) -> str:
    """JSON text nested `depth` levels deep (too deep for the encoder to write)."""
    return '{"content": [' * depth + '"deep"' + "]}" * depth


def _with_raw(record: dict[str, Any], raw: str) -> bytes:
    """`record` as a line whose value `"RAW"` is replaced by the JSON text `raw`."""
    return json.dumps(record).replace('"RAW"', raw).encode() + b"\n"


BIG = int("9" * 401)


def _corpus() -> dict[str, bytes]:
    corpus: dict[str, bytes] = {}
    for name, make in FORMATS.items():
        for kind, e in ESCAPES.items():
            corpus[f"escape-{kind}-{name}"] = make(e)
        corpus[f"markup-{name}"] = make(MARKUP)
        corpus[f"surrogate-{name}"] = make("\\ud800").replace(b"\\\\ud800", b"\\ud800")
    corpus.update(
        {
            "codex-summary-int.jsonl": _codex_lines({"type": "reasoning", "summary": 5}),
            "codex-summary-nan.jsonl": _codex_lines({"type": "reasoning", "summary": float("nan")}),
            "codex-summary-items.jsonl": _codex_lines(
                {"type": "reasoning", "summary": [5, None, {"text": 7}]}
            ),
            "openai-tool-calls-int.json": b'{"messages":[{"role":"assistant","tool_calls":5}]}',
            "openai-tool-calls-junk.json": b'{"messages":[{"role":"user","content":"q"},'
            b'{"role":"assistant","tool_calls":[5,{"function":3},{"function":{"name":[1]}}]}]}',
            "claude-big-usage.jsonl": _jsonl(
                _claude_line(),
                _claude_reply(
                    "a",
                    "m",
                    "ok",
                    usage={"input_tokens": BIG, "output_tokens": -BIG, "cache_read_input_tokens": 1e308},
                ),
                _claude_line(uuid="u2"),
                _claude_reply("b", "m2", "ok", usage={"input_tokens": 2**70}),
            ),
            "codex-big-usage.jsonl": _codex_lines(
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "a"}]},
                meta={"model_context_window": BIG},
            )
            + _jsonl(
                {
                    "timestamp": "t",
                    "type": "event_msg",
                    "payload": {
                        "type": "token_count",
                        "info": {
                            "last_token_usage": {"input_tokens": BIG, "cached_input_tokens": -5},
                            "model_context_window": BIG,
                        },
                    },
                }
            ),
            "plain-binary.yaml": b"- role: user\n  content: !!binary aGk=\n"
            b"- role: assistant\n  content: ok\n",
            "plain-timestamp.yaml": b"- role: user\n  content: 2001-12-14t21:59:43.10-05:00\n"
            b"- role: assistant\n  content: !!set {a, b}\n",
            "plain-alias-bomb.yaml": b"a: &a [x, x, x, x, x, x, x, x, x, x]\n"
            + b"".join(
                f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n".encode()
                for i in range(8)
            )
            + b"messages: [{role: user, content: *i}]\n",
            "claude-deep-attachment.jsonl": _jsonl(_claude_line())
            + _with_raw(
                {
                    "type": "attachment",
                    "uuid": "a",
                    "sessionId": "s",
                    "attachment": {"type": "x", "content": "RAW"},
                },
                _nested(600),
            ),
            "claude-deep-content.jsonl": _with_raw(
                _claude_line(message={"role": "user", "content": ["RAW"]}), _nested(900)
            ),
            "codex-window-true.jsonl": _codex_lines(meta={"model_context_window": True})
            + _jsonl(
                {
                    "timestamp": "t",
                    "type": "event_msg",
                    "payload": {"type": "token_count", "info": {"model_context_window": True}},
                }
            ),
            "codex-window-float.jsonl": _codex_lines()
            + _jsonl(
                {
                    "timestamp": "t",
                    "type": "event_msg",
                    "payload": {"type": "token_count", "info": {"model_context_window": 1.5e300}},
                }
            ),
            "claude-far-timestamp.jsonl": _jsonl(
                _claude_line(timestamp="9999-12-31T23:59:59-14:00"),
                _claude_line(uuid="u2", timestamp="0001-01-01T00:00:00+14:00"),
            ),
            "claude-mixed-timestamps.jsonl": _jsonl(
                _claude_line(timestamp="2026-01-01T00:00:00"),
                _claude_reply(
                    "a",
                    "m",
                    [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}],
                    timestamp="2026-01-01T00:00:01Z",
                ),
                _claude_line(
                    uuid="u2",
                    timestamp="2026-01-01T03:00:00",
                    message={
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x" * 400}],
                    },
                ),
                _claude_line(uuid="u3", timestamp="2026-01-01T05:00:00+02:00"),
            ),
            "codex-plan-int.jsonl": _codex_lines(
                {"type": "function_call", "name": "update_plan", "call_id": "p", "arguments": '{"plan": 5}'},
                {
                    "type": "function_call",
                    "name": "update_plan",
                    "call_id": "q",
                    "arguments": '{"plan": [5, {"step": 3, "status": []}]}',
                },
            ),
            "claude-todos-junk.jsonl": _jsonl(
                _claude_line(),
                _claude_reply(
                    "a",
                    "m",
                    [
                        {"type": "tool_use", "id": "t", "name": "TodoWrite", "input": {"todos": 5}},
                        {
                            "type": "tool_use",
                            "id": "t2",
                            "name": "TodoWrite",
                            "input": {"todos": [5, {"content": [1]}]},
                        },
                    ],
                ),
            ),
            "claude-unanswered.jsonl": _jsonl(
                _claude_line(),
                *(
                    _claude_reply(
                        f"a{i}", f"m{i}", [{"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {}}]
                    )
                    for i in range(1000)
                ),
            ),
        }
    )
    return corpus


CORPUS = _corpus()


def mutants(seed: int, count: int, sources: dict[str, bytes] | None = None) -> Iterator[tuple[str, bytes]]:
    """`count` files derived from `sources` (default the bundled samples), each a seeded
    mutation: a line dropped, doubled or swapped, a value given the wrong type, a number
    made huge, an escape or markup put into a string, bytes flipped."""
    rng = random.Random(seed)
    sources = sources or {name: path(name).read_bytes() for name in names()}
    for n in range(count):
        name = rng.choice(sorted(sources))
        data = sources[name]
        for _ in range(rng.randint(1, 4)):
            data = _mutate(rng, data)
        yield f"mutant-{seed}-{n}-{name}", data


_VALUES: list[Any] = [
    5,
    -1,
    BIG,
    None,
    True,
    [],
    {},
    "",
    1.5e300,
    [5],
    {"a": 5},
    "\\ud800",
    *ESCAPES.values(),
    MARKUP,
]


def _mutate(rng: random.Random, data: bytes) -> bytes:
    lines = data.split(b"\n")
    choice = rng.randrange(6)
    i = rng.randrange(len(lines))
    if choice == 0 and len(lines) > 1:
        del lines[i]
    elif choice == 1:
        lines.insert(i, lines[rng.randrange(len(lines))])
    elif choice == 2:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif choice == 3:  # a value of the wrong type somewhere in a JSON line
        try:
            value = json.loads(lines[i])
        except ValueError:
            value = None
        if value is not None:
            lines[i] = json.dumps(_replace_somewhere(rng, value)).encode()
    elif choice == 4 and lines[i]:
        at = rng.randrange(len(lines[i]))
        lines[i] = lines[i][:at] + bytes([rng.randrange(256)]) + lines[i][at + 1 :]
    else:
        lines[i] = lines[i].replace(b'"', json.dumps(rng.choice(list(ESCAPES.values())))[:-1].encode(), 1)
    return b"\n".join(lines)


def _replace_somewhere(rng: random.Random, value: Any) -> Any:
    if isinstance(value, dict) and value and rng.random() < 0.8:
        key = rng.choice(list(value))
        return {**value, key: _replace_somewhere(rng, value[key])}
    if isinstance(value, list) and value and rng.random() < 0.8:
        at = rng.randrange(len(value))
        return [*value[:at], _replace_somewhere(rng, value[at]), *value[at + 1 :]]
    return rng.choice(_VALUES)


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str
    crash: str | None  # the traceback of an exception that escaped

    @property
    def leaked(self) -> list[str]:
        return [c for c in FORBIDDEN if c in self.out or c in self.err]


class Hang(Exception):
    pass


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    def ring(signum: int, frame: Any) -> None:
        raise Hang(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, ring)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def run_cli(argv: list[str], seconds: int = 60) -> Outcome:
    """`compaction-inspector argv` in this process, its output written as UTF-8 bytes
    (as a terminal would take them), never to the real terminal."""
    from compaction_inspector.tui.cli import main

    out, err = io.BytesIO(), io.BytesIO()
    text_out = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    text_err = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
    code, crash = 0, None
    try:
        with deadline(seconds), redirect_stdout(text_out), redirect_stderr(text_err):
            code = main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        crash = traceback.format_exc()
        code = 1
    for stream in (text_out, text_err):
        stream.flush()
    return Outcome(
        code, out.getvalue().decode("utf-8", "replace"), err.getvalue().decode("utf-8", "replace"), crash
    )


COMMANDS: list[list[str]] = [
    ["analyze"],
    ["analyze", "--json"],
    *(
        ["compact", "--strategy", s]
        for s in ("trim", "ptl-retry", "hysteresis", "microcompact", "claude-code", "codex")
    ),
    ["compact", "--strategy", "hysteresis", "--json"],
    ["simulate", "--compare", "claude-code"],
    ["simulate", "--json", "--strategy", "codex"],
    ["compactions"],
    ["compactions", "--json"],
    ["compare", "--strategies", "anthropic-context-editing,cline,opencode-prune"],
    ["compare", "--json", "--strategies", "aider,openhands"],
    ["sweep", "--strategy", "cline", "--grid", "trigger.percent=50:90:40", "--jobs", "1", "--json"],
]
