"""Which strategies exist, and how each one's options are set.

Each strategy module declares one `Strategy`; `core.strategies.REGISTRY` lists them. The
config file's sections, the command line's flags, the app's panel form, palette, number
keys, compare cycle and demo are all made from these declarations, so a new strategy is
one module and its line in the registry.

An option's field carries an `Option` in its metadata (made with `option()`): its help,
the kind of value, its range, its flag, its label in the panel, and whether the config
file keeps it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from compaction_inspector.core.measuring.segment import Segment
from compaction_inspector.core.model import Message, immutable
from compaction_inspector.core.replaying.context import Context
from compaction_inspector.core.strategies.base import CompactionResult, OptionError, Plan, Stats, positive_int
from compaction_inspector.core.text import shown

# int: a whole number; int?, str?: or nothing; number?: a decimal number or nothing; bool;
# percents: whole percents "75,85,95"; choice: one of `choices`; names: a set of names "Read,Bash"
KINDS = ("int", "int?", "number?", "str?", "bool", "percents", "choice", "names")


@immutable()
class Option:
    """How one field of a strategy's options is set."""

    help: str
    kind: str = "int"
    minimum: int | None = None  # the least whole number allowed; None: the strategy checks it
    label: str | None = None  # its label in the app's panel; None: not in the panel
    flag: str | None = ""  # its command-line flag: "" derives it from the name, None: no flag
    saved: bool = True  # read from and written to compaction.yaml
    group: str | None = None  # a mapping in compaction.yaml (and flags) set together: trim's trigger
    key: str | None = None  # its key in that group
    choices: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        assert self.kind in KINDS, self.kind


class Options(Protocol):
    """A strategy's options: a frozen dataclass whose fields carry an `Option` each."""

    __dataclass_fields__: ClassVar[dict[str, Any]]


OptionsT = TypeVar("OptionsT", bound=Options)  # one strategy's own options type


class UnknownKey(OptionError):
    """A config key no option has; the message names its whole place."""


def option(default: Any, help: str, **how: Any) -> Any:
    """A field of an options dataclass, with how it is set (see `Option`)."""
    return field(default=default, metadata={"option": Option(help, **how)})


@immutable()
class Setting:
    """A field of a strategy's options and how it is set."""

    name: str
    default: Any
    option: Option

    @property
    def key(self) -> str:
        """Its name in messages and in compaction.yaml: `trigger.turns` for a grouped one."""
        o = self.option
        return f"{o.group}.{o.key}" if o.group else self.name

    @property
    def flag(self) -> str | None:
        o = self.option
        if o.flag is None or o.flag:
            return o.flag
        stem = self.key.replace(".", "-").replace("_", "-")
        return f"--no-{stem}" if o.kind == "bool" and self.default is True else f"--{stem}"

    def parse(self, raw: str) -> Any:
        """A value typed in the panel or given on the command line; an error says what
        is wanted ("a whole number, not 'x'"), for the caller to name the field."""
        kind, raw = self.option.kind, raw.strip()
        if kind in ("int?", "number?", "str?") and not raw:
            return None
        if kind == "number?":
            try:
                return float(raw) if "." in raw else int(raw)
            except ValueError:
                raise OptionError(f"a number, not {raw!r}") from None
        if kind in ("int", "int?"):
            if not raw.lstrip("-").isdigit():
                raise OptionError(f"a whole number, not {raw!r}")
            return int(raw)
        if kind == "percents":
            try:
                return tuple(int(x) for x in raw.split(","))
            except ValueError:
                raise OptionError(f"whole percents like 75,85,95, not {raw!r}") from None
        if kind == "names":
            return frozenset(x.strip() for x in raw.split(",") if x.strip())
        if kind == "bool":
            if raw.lower() not in ("true", "false"):
                raise OptionError(f"true or false, not {raw!r}")
            return raw.lower() == "true"
        return raw

    def show(self, value: Any) -> str:
        """A value as the panel shows it (`parse` reads it back)."""
        if value is None:
            return ""
        if self.option.kind in ("percents", "names"):
            return ",".join(map(str, sorted(value) if self.option.kind == "names" else value))
        return str(value)


def settings(options_type: type) -> list[Setting]:
    """The settable fields of an options dataclass, in order."""
    return [
        Setting(f.name, f.default, f.metadata["option"])
        for f in dataclasses.fields(options_type)
        if "option" in f.metadata
    ]


def check(options: Options) -> None:
    """The range of every field that declares one: whole numbers from their minimum, a
    choice among its choices. Rules across fields stay in the strategy."""
    for s in settings(type(options)):
        value = getattr(options, s.name)
        if s.option.minimum is not None and value is not None:
            positive_int(s.key, value, s.option.minimum)
        if s.option.choices and value not in s.option.choices:
            raise OptionError(f"{s.key} must be {' or '.join(s.option.choices)}, not {value!r}")


def with_values(options: OptionsT, values: Mapping[str, Any]) -> OptionsT:
    """`options` with the fields named in `values` replaced. A field of a group given
    replaces the whole group: the others it leaves out become None."""
    if not values:
        return options
    changes = dict(values)
    groups = {s.option.group for s in settings(type(options)) if s.name in values and s.option.group}
    for s in settings(type(options)):
        if s.option.group in groups and s.name not in changes:
            changes[s.name] = None
    try:
        return dataclasses.replace(options, **changes)
    except TypeError as exc:
        raise OptionError(str(exc)) from exc


def from_config(options: OptionsT, section: Mapping[str, Any], where: str) -> OptionsT:
    """`options` with a compaction.yaml section on top. Unknown keys name their place."""
    saved = [s for s in settings(type(options)) if s.option.saved]
    allowed = list(dict.fromkeys(s.option.group or s.name for s in saved))
    values: dict[str, Any] = {}
    for key, value in section.items():
        if key not in allowed:
            raise UnknownKey(f"unknown key {f'{where}.{key}'!r}; allowed: {', '.join(allowed)}")
        members = [s for s in saved if s.option.group == key]
        if not members:
            s = next(s for s in saved if s.name == key)
            values[s.name] = _from_yaml(s, value)
            continue
        if not isinstance(value, dict):
            raise OptionError(f"{key} must be a mapping of keys to values")
        keys = [m.option.key for m in members]
        for sub in value:
            if sub not in keys:
                allowed_keys = ", ".join(map(str, keys))
                raise UnknownKey(f"unknown key {f'{where}.{key}.{sub}'!r}; allowed: {allowed_keys}")
        for m in members:
            values[m.name] = value.get(m.option.key)
    return with_values(options, values)


def _from_yaml(s: Setting, value: Any) -> Any:
    kind = s.option.kind
    if kind == "percents":
        if not isinstance(value, list):
            raise OptionError(f"{s.key} must be a list like [75, 85, 95]")
        return tuple(value)
    if kind == "names":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise OptionError(f"{s.key} must be a list of tool names")
        return frozenset(value)
    if kind == "number?" and (isinstance(value, bool) or not isinstance(value, int | float | None)):
        raise OptionError(f"{s.key} must be a number, not {shown(value)}")
    if kind == "bool":
        if not isinstance(value, bool):  # 'no' and 0 are not read as a choice either way
            raise OptionError(f"{s.key} must be true or false, not {shown(value)}")
        return value
    return value


TRIGGER, KEEP = "trigger", "keep"  # what a strategy's tuning keys move: where it fires, what it keeps
TOKEN_STEP = 1_000  # one press of a tuning key on a setting in tokens


def first_set(options: Options, choices: Sequence[tuple[str, int]]) -> tuple[str, int] | None:
    """Of `choices` (a setting's name, one press's step), the first the options set: the
    one in force (a family's variants each set one trigger and one tail)."""
    return next(((name, step) for name, step in choices if getattr(options, name) is not None), None)


def described(options: Options) -> str:
    """Its saved settings in words, as compaction.yaml names them: "trigger.turns 8,
    trigger.tokens none, keep_initial_user true"."""

    def value(s: Setting, v: Any) -> str:
        if v is None:
            return "none"
        if isinstance(v, bool):
            return "true" if v else "false"
        return s.show(v) or "none"

    return ", ".join(
        f"{s.key} {value(s, getattr(options, s.name))}" for s in settings(type(options)) if s.option.saved
    )


def to_config(options: Options) -> dict[str, Any]:
    """The saved fields as a compaction.yaml section (a group holds only what is set)."""
    out: dict[str, Any] = {}
    for s in settings(type(options)):
        if not s.option.saved:
            continue
        value = getattr(options, s.name)
        if s.option.kind == "percents":
            value = list(value)
        elif s.option.kind == "names":
            value = sorted(value)
        if s.option.group:
            group = out.setdefault(s.option.group, {})
            if value:
                group[s.option.key] = value
        else:
            out[s.name] = value
    return out


@immutable()
class Strategy(Generic[OptionsT]):
    """A strategy as the product knows it, typed by its options."""

    name: str  # as the command line, the config and the app name it
    label: str  # short, for the panel and the keys
    description: str  # one line, for the palette and the help
    options: type[OptionsT]  # its options dataclass; the defaults are `options()`
    run: Callable[[Sequence[Message], OptionsT, Context], CompactionResult[Stats]]
    # the rule: (segment, end, options, stored history or None) -> what it makes of the request
    plan: Callable[[Segment, int, OptionsT, Any], Plan]
    # cheap pre-check of a replay: (options, context tokens, messages, context, human turns so
    # far) -> False only when it certainly changes nothing
    fires: Callable[[OptionsT, int, int, Context, int], bool] | None = None  # None: always runs
    # what the agent counts besides the context, at most, before each request segment.messages[:i]
    # (added to the pre-check's context tokens); None: nothing besides
    beside: Callable[[Segment, OptionsT], Sequence[int]] | None = None
    persists: Callable[[OptionsT], bool] = lambda options: False  # its result replaces the stored history
    timeline: bool = True  # a replay under it means something (PTL retry runs only when refused)
    policy_label: Callable[[OptionsT], str] | None = None  # how a replay's legend names it with its options
    contrast: Callable[[OptionsT], OptionsT] | None = None  # the options the timeline compares it as
    # what its options left unset (None) come to in a context: a form shows them, never blank
    in_force: Callable[[OptionsT, Context], dict[str, int | None]] | None = None
    # the bands it draws on the gauge and the timeline: (thresholds, target), in % of the
    # usable window; None: it draws none
    bands: Callable[[OptionsT], tuple[tuple[int, ...], int]] | None = None
    # one press of a tuning key: (options, "thresholds" or "target", points) -> its options
    # (raises OptionError out of range); None: the keys move its knobs, if it has any
    tune: Callable[[OptionsT, str, int], OptionsT] | None = None
    # what the tuning keys move, by (options, TRIGGER or KEEP): (the setting's name, one
    # press's step), or None where it has no such setting
    knob: Callable[[OptionsT, str], tuple[str, int] | None] | None = None
    # a variant of a family: its documented defaults (None: the options type's own) and
    # where they are documented
    defaults: Callable[[], OptionsT] | None = None
    family: str | None = None  # the family whose rule it applies; its flags are the family's
    source: str = ""
    # what its source documents that the family's options cannot say: why a setting is
    # refused (None: accepted), and what of it is not modelled or not its source's default
    limits: Callable[[OptionsT], str | None] | None = None
    caveat: str = ""
    # a flag of its own beside its family's for one of its options, by the option's name, in
    # the words its agent gives that setting ("--roo-condense-percent")
    aliases: Mapping[str, str] = field(default_factory=dict)

    def checked(self, options: OptionsT) -> OptionsT:
        """`options`, or an OptionError where its source refuses them (an API's minimum)."""
        why = self.limits(options) if self.limits is not None else None
        if why:
            raise OptionError(f"{self.name}: {why}")
        return options

    @property
    def config_key(self) -> str:
        """Its section in compaction.yaml."""
        return self.name.replace("-", "_")

    def default_options(self) -> OptionsT:
        """Its options as documented: a variant's defaults, else its options type's."""
        return self.defaults() if self.defaults is not None else self.options()

    @property
    def flag_key(self) -> str:
        """What its command-line flags are stored under: a family's variants share them."""
        return (self.family or self.name).replace("-", "_")

    @property
    def settings(self) -> list[Setting]:
        return settings(self.options)

    def label_of(self, options: OptionsT) -> str:
        return self.policy_label(options) if self.policy_label else self.name


@immutable()
class Family(Generic[OptionsT]):
    """One rule that several agents apply with their own settings: each agent's strategy
    is a variant of it (`variant`), sharing its options, flags and replay."""

    name: str
    options: type[OptionsT]
    # (the variant's name, messages, options, context) -> its result, named as the variant
    run: Callable[[str, Sequence[Message], OptionsT, Context], CompactionResult[Stats]]
    plan: Callable[[Segment, int, OptionsT, Any], Plan]
    fires: Callable[[OptionsT, int, int, Context, int], bool]
    persists: Callable[[OptionsT], bool]
    knob: Callable[[OptionsT, str], tuple[str, int] | None] | None = None

    def variant(
        self,
        name: str,
        label: str,
        description: str,
        source: str,
        defaults: Callable[[], OptionsT],
        *,
        limits: Callable[[OptionsT], str | None] | None = None,
        caveat: str = "",
        aliases: Mapping[str, str] | None = None,
    ) -> Strategy[OptionsT]:
        """An agent's strategy: its name, its documented defaults and where they are
        documented; what its source refuses and what is not modelled of it."""
        run = self.run
        return Strategy(
            name=name,
            label=label,
            description=description,
            options=self.options,
            run=lambda messages, options, context: run(name, messages, options, context),
            plan=self.plan,
            fires=self.fires,
            persists=self.persists,
            defaults=defaults,
            family=self.name,
            source=source,
            knob=self.knob,
            limits=limits,
            caveat=caveat,
            aliases=aliases or {},
        )
