"""A step's messages as a short head, then a slice of the transcript: what a strategy that
rewrites only the oldest messages makes, step after step. Two such lists ending with the
same slice share it, so a diff of them need only walk what comes before it: a step of a
long session is diffed in the time of the few messages it changed, not of the whole."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import field
from functools import cached_property
from typing import overload

from compaction_inspector.core.model import Message, immutable


@immutable(eq=False)
class Spliced(Sequence[Message]):
    """`head`, then `base[start:end]`, leaving out the messages in `dropped`: a sequence
    whose messages are read without making the list, unless some are dropped."""

    head: tuple[Message, ...]
    base: tuple[Message, ...]
    start: int
    end: int
    dropped: frozenset[Message] = field(default=frozenset())

    @staticmethod
    def whole(messages: tuple[Message, ...]) -> Spliced:
        return Spliced((), messages, 0, len(messages))

    def messages(self) -> tuple[Message, ...]:
        """The list itself, made once (a step's `messages` is this same tuple)."""
        return self._whole

    @overload
    def __getitem__(self, i: int) -> Message: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[Message, ...]: ...
    def __getitem__(self, i: int | slice) -> Message | tuple[Message, ...]:
        if isinstance(i, slice) or self.dropped:
            return self._whole[i]
        size = len(self)
        at = i + size if i < 0 else i
        if not 0 <= at < size:
            raise IndexError(i)
        return self.head[at] if at < len(self.head) else self.base[self.start + at - len(self.head)]

    def __iter__(self) -> Iterator[Message]:
        return iter(self._whole)

    @cached_property
    def _whole(self) -> tuple[Message, ...]:
        if not self.head and not self.dropped and (self.start, self.end) == (0, len(self.base)):
            return self.base
        return self._kept(self.head + self.base[self.start : self.end])

    def __len__(self) -> int:
        return len(self.head) - self._left_out(self.head) + self._count(self.start, self.end)

    def shared(self, after: Spliced) -> tuple[tuple[Message, ...], tuple[Message, ...], int] | None:
        """This list and `after` without the slice both end with, and that slice's length;
        None when they end differently."""
        same = after.base is self.base and after.end == self.end and after.dropped == self.dropped
        if not same:
            return None
        cut = max(self.start, after.start)
        return self._up_to(cut), after._up_to(cut), self._count(cut, self.end)

    def _up_to(self, cut: int) -> tuple[Message, ...]:
        return self._kept(self.head + self.base[self.start : cut])

    def _kept(self, messages: tuple[Message, ...]) -> tuple[Message, ...]:
        return tuple(m for m in messages if m not in self.dropped) if self.dropped else messages

    def _left_out(self, messages: tuple[Message, ...]) -> int:
        return sum(1 for m in messages if m in self.dropped) if self.dropped else 0

    def _count(self, start: int, end: int) -> int:
        """Messages of base[start:end] not dropped (those dropped are few and early: each
        is found by a scan that stops at it)."""
        return end - start - sum(1 for m in self.dropped if start <= self._position(m) < end)

    def _position(self, message: Message) -> int:
        try:
            return self.base.index(message)
        except ValueError:  # not in the slice at all
            return -1


Made = tuple[Message, ...] | Spliced  # what builds a step's messages returns


def made_messages(made: Made) -> tuple[Message, ...]:
    return made.messages() if isinstance(made, Spliced) else made
