"""Deterministic large Claude Code sessions for benchmarks and stress tests.

    python -m compaction_inspector.sample_sessions.generate 10MB -o big.jsonl [--seed 1]

The same size and seed always give the same bytes. Sessions look like real ones: human
turns followed by streamed multi-line replies (thinking, text, tool_use lines sharing a
message id), tool results of realistic sizes (file reads, test logs), parallel tool calls,
repeated usage on every line, and the non-conversation lines Claude Code also writes.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

WORDS = [
    "parser",
    "config",
    "token",
    "session",
    "volley",
    "round",
    "summary",
    "cache",
    "request",
    "window",
    "budget",
    "module",
    "import",
    "test",
    "failure",
    "fix",
    "branch",
    "commit",
    "retry",
    "limit",
    "buffer",
    "stream",
    "encode",
    "schema",
    "field",
    "value",
    "index",
    "offset",
    "length",
    "error",
    "warning",
    "latency",
    "worker",
    "queue",
]
TOOLS = ("Read", "Bash", "Grep", "Edit", "Glob")


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def _code(rng: random.Random, lines: int) -> str:
    out = []
    for i in range(lines):
        name = f"{rng.choice(WORDS)}_{rng.choice(WORDS)}"
        out.append(f"{i + 1:6d}\tdef {name}(self, {rng.choice(WORDS)}: int) -> str:  # {rng.choice(WORDS)}")
    return "\n".join(out)


def lines(seed: int = 1) -> Iterator[dict[str, Any]]:
    """An endless session, one JSONL record at a time."""
    rng = random.Random(seed)
    session_id = f"00000000-0000-4000-8000-{seed:012d}"
    counter = 0
    parent: str | None = None
    context = 15_000

    def uid() -> str:
        nonlocal counter
        counter += 1
        return f"{counter:08x}-0000-4000-8000-{seed:012d}"

    def base(kind: str, parent_uuid: str | None) -> dict[str, Any]:
        return {
            "parentUuid": parent_uuid,
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/dev/project",
            "sessionId": session_id,
            "version": "2.0.37",
            "type": kind,
            "uuid": uid(),
            "timestamp": f"2026-11-01T{counter // 3600 % 24:02d}:{counter // 60 % 60:02d}"
            f":{counter % 60:02d}.000Z",
        }

    response = 0
    while True:
        human = base("user", parent)
        human["message"] = {"role": "user", "content": _sentence(rng, rng.randint(8, 40))}
        parent = human["uuid"]
        yield human
        for _ in range(rng.randint(2, 12)):
            response += 1
            message_id = f"msg_{seed:04d}{response:018d}"
            parallel = 2 if rng.random() < 0.2 else 1
            blocks: list[dict[str, Any]] = [
                {
                    "type": "thinking",
                    "thinking": _sentence(rng, rng.randint(10, 60)),
                    "signature": "sig",
                },
                {"type": "text", "text": _sentence(rng, rng.randint(5, 30))},
            ]
            calls = []
            for p in range(parallel):
                tool = rng.choice(TOOLS)
                call_id = f"toolu_{seed:04d}{response:014d}{p}"
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call_id,
                        "name": tool,
                        "input": {"file_path": f"/home/dev/project/{rng.choice(WORDS)}.py"},
                    }
                )
                calls.append(call_id)
            usage = {
                "input_tokens": 3,
                "cache_creation_input_tokens": rng.randint(200, 3000),
                "cache_read_input_tokens": context,
                "output_tokens": rng.randint(50, 900),
            }
            tool_lines = []
            for block in blocks:
                record = base("assistant", parent)
                record["requestId"] = f"req_{seed:04d}{response:018d}"
                record["message"] = {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5-20250929",
                    "content": [block],
                    "usage": usage,
                }
                parent = record["uuid"]
                if block["type"] == "tool_use":
                    tool_lines.append(record["uuid"])
                yield record
            for call_id, call_line in zip(calls, tool_lines, strict=True):
                # Mostly short outputs, sometimes a file read, rarely a huge log: about 1 KB
                # per line on average, as in real sessions.
                roll = rng.random()
                size = (
                    rng.choice((1, 2, 4, 8)) if roll < 0.8 else rng.choice((20, 60)) if roll < 0.98 else 600
                )
                result = base("user", call_line)
                result["message"] = {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": call_id, "content": _code(rng, size)}],
                }
                parent = result["uuid"]
                context += size * 12
                yield result
        final = base("assistant", parent)
        response += 1
        final["message"] = {
            "id": f"msg_{seed:04d}{response:018d}",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [{"type": "text", "text": _sentence(rng, rng.randint(20, 80))}],
            "usage": {
                "input_tokens": 3,
                "cache_creation_input_tokens": 500,
                "cache_read_input_tokens": context,
                "output_tokens": 200,
            },
        }
        parent = final["uuid"]
        yield final
        if rng.random() < 0.3:
            yield {
                "type": "queue-operation",
                "operation": "enqueue",
                "sessionId": session_id,
                "content": "next",
            }


def parse_size(text: str) -> int:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmM]?)[bB]?\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"size like 1MB, 500KB or 1048576, not {text!r}")
    number, unit = float(match.group(1)), match.group(2).lower()
    return int(number * {"": 1, "k": 1024, "m": 1024 * 1024}[unit])


def generate(path: str | Path, size: int, seed: int = 1) -> int:
    """Write a session of at least `size` bytes (ending at a whole line); return its size."""
    written = 0
    with open(path, "w", encoding="utf-8") as out:
        for record in lines(seed):
            line = json.dumps(record, separators=(",", ":")) + "\n"
            out.write(line)
            written += len(line.encode("utf-8"))
            if written >= size:
                return written
    raise AssertionError("unreachable: the session never ends")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("size", type=parse_size, help="e.g. 1MB, 10MB, 100MB")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    size = generate(args.output, args.size, args.seed)
    print(f"wrote {size:,} bytes to {args.output}")


if __name__ == "__main__":
    main()
