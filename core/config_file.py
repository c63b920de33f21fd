"""`compaction.yaml` read and written: found at `--config FILE`, else ./compaction.yaml,
else the user config directory; read as plain data and validated (an unknown key or an
out-of-range value is a `ConfigError` naming the key and what is allowed); saved with
its comments kept."""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from compaction_inspector.core.catalogue import Catalogue
from compaction_inspector.core.config import Config, ConfigError, Scope, WindowSource, whole_number
from compaction_inspector.core.config_path import find
from compaction_inspector.core.files import open_regular, same_file, write_atomic
from compaction_inspector.core.replaying.summarizer import Command
from compaction_inspector.core.strategies import OptionError
from compaction_inspector.core.strategies.declaration import UnknownKey, from_config
from compaction_inspector.core.text import shown as _shown


def _top(catalogue: Catalogue) -> tuple[str, ...]:
    """The keys a configuration file may hold at its top: each strategy's section among them."""
    return ("preset", "context_window", "reserved_output", "window_for", "tokenizer", "media_tokens",
            "pressure", "overhead_tokens", *(s.config_key for s in catalogue.strategies.values()), "keys",
            "summarizer", "statusline")  # fmt: skip


def _mapping(value: Any, key: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"{key} must be a mapping of keys to values")
    return value


def _known(data: dict[str, Any], allowed: tuple[str, ...], where: str) -> None:
    for key in data:
        if key not in allowed:
            name = f"{where}.{key}" if where else str(key)
            raise ConfigError(f"unknown key {name!r}; allowed: {', '.join(allowed)}")


def from_dict(data: Any, base: Config, source: str | None = None) -> Config:
    """A validated Config from parsed YAML, on top of `base`."""
    config = base
    data = _mapping(data, "the configuration")
    _known(data, _top(config.catalogue), "")
    chooser = WindowSource("file", source or "the configuration")
    if "preset" in data and data["preset"] is not None:
        config = config.with_preset(str(data["preset"]), chooser)
    elif "preset" in data:  # null: no agent's rule, as a window saved without one says
        config = dataclasses.replace(config, preset=None)
    try:
        config = config.overridden(
            tokenizer=data.get("tokenizer"),
            context_window=whole_number(data["context_window"], "context_window", 1)
            if "context_window" in data
            else None,
            reserved_output=whole_number(data["reserved_output"], "reserved_output")
            if "reserved_output" in data
            else None,
            pressure=data.get("pressure"),
            overhead_tokens=data.get("overhead_tokens"),
            chooser=chooser,
        )
    except ValueError as exc:  # a ConfigError already names the key; a Window error too
        raise ConfigError(str(exc)) from exc
    keys = _mapping(data.get("keys"), "keys")
    scope = _mapping(data.get("window_for"), "window_for")
    _known(scope, ("agent", "model"), "window_for")
    if scope and not isinstance(scope.get("agent"), str):
        raise ConfigError(
            f"window_for.agent must name an agent's format ({', '.join(config.catalogue.by_format)}, ...)"
        )
    model = scope.get("model")
    if model is not None and not isinstance(model, str):
        raise ConfigError("window_for.model must be a model's name, or null for every model")
    strategies = dict(config.strategies)
    for name, strategy in config.catalogue.strategies.items():
        where = strategy.config_key
        with _section(where):
            strategies[name] = strategy.checked(
                from_config(strategies[name], _mapping(data.get(where), where), where)
            )
    return Config(
        config.catalogue,
        window=config.window,
        tokenizer=config.tokenizer,
        media_tokens=whole_number(data.get("media_tokens", config.media_tokens), "media_tokens"),
        preset=config.preset,
        strategies=strategies,
        keys={**config.keys, **{str(k): str(v) for k, v in keys.items()}},
        source=source,
        pressure=config.pressure,
        overhead_tokens=config.overhead_tokens,
        window_source=config.window_source,
        window_for=Scope(scope["agent"], model) if scope else config.window_for,
        summarizer=_summarizer(data["summarizer"]) if "summarizer" in data else config.summarizer,
        status_colours=_status_colours(data["statusline"], config.status_colours)
        if "statusline" in data
        else config.status_colours,
    )


def _summarizer(value: Any) -> Command | None:
    """`summarizer: {command: "...", timeout_seconds: 60}`; null: the local summarizer."""
    if value is None:
        return None
    section = _mapping(value, "summarizer")
    _known(section, ("command", "timeout_seconds"), "summarizer")
    command, timeout = section.get("command"), section.get("timeout_seconds", 60)
    if not isinstance(command, str) or not command.strip():
        raise ConfigError("summarizer.command must be a command line, such as `python3 summarize.py`")
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= 3600:
        raise ConfigError(
            f"summarizer.timeout_seconds must be a number of seconds from 0 to 3600, not {timeout!r}"
        )
    return Command(command, float(timeout))


def _status_colours(value: Any, base: tuple[int, int]) -> tuple[int, int]:
    """`statusline: {yellow_at: 85, red_at: 95}`, in % of the agent's point."""
    section = _mapping(value, "statusline")
    _known(section, ("yellow_at", "red_at"), "statusline")
    yellow, red = section.get("yellow_at", base[0]), section.get("red_at", base[1])
    for key, percent in (("yellow_at", yellow), ("red_at", red)):
        if isinstance(percent, bool) or not isinstance(percent, int) or not 1 <= percent <= 200:
            raise ConfigError(
                f"statusline.{key} must be a whole percent of the point, 1 to 200, not {_shown(percent)}"
            )
    if yellow > red:
        raise ConfigError(f"statusline.yellow_at ({yellow}) must not be above red_at ({red})")
    return yellow, red


@contextmanager
def _section(name: str) -> Iterator[None]:
    """Option errors inside a section name their key as `section.key`."""
    try:
        yield
    except UnknownKey as exc:
        raise ConfigError(str(exc)) from exc
    except OptionError as exc:
        raise ConfigError(f"{name}.{exc}") from exc


def load(catalogue: Catalogue, explicit: str | Path | None = None) -> Config:
    """The configuration in force (`find`) over the defaults of `catalogue`."""
    path = find(explicit)
    if path is None:
        return Config(catalogue)
    # YAML is imported where a file is read or written: most starts find none
    import yaml

    from compaction_inspector.core import yamlfile

    try:
        with open_regular(path) as f:
            raw = f.read()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 text (byte {exc.start:,} cannot be read)") from exc
    try:
        data = yamlfile.load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}") from exc
    try:
        return from_dict(data, Config(catalogue), str(path))
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from exc


def as_yaml(config: Config, window: bool = False) -> str:
    """`config` as a new compaction.yaml holds it: every setting, read back as the same
    (the window as `Config.to_dict` says)."""
    import yaml

    return "# Compaction Inspector settings (see README)\n" + yaml.safe_dump(
        config.to_dict(window), sort_keys=False, allow_unicode=True
    )


def save(config: Config, path: str | Path, protect: str | Path | None = None) -> Path:
    """Write `config` to `path`. A new file gets every setting; a file the config was
    loaded from keeps its comments, order and layout, with only the values that changed
    rewritten. Any other existing file (one that could not be used, say) is never
    replaced: ConfigError says why."""
    import yaml

    from compaction_inspector.core import yamlfile

    target = Path(path)
    values = config.to_dict()
    if not target.exists():
        return write_atomic(target, as_yaml(config), protect=protect)
    if config.source is None or not same_file(config.source, target):
        raise ConfigError(f"{target} exists and the settings in force were not read from it: not replaced")
    try:
        with open_regular(target) as f:
            text = f.read().decode("utf-8")
        held = from_dict(yamlfile.load(text), Config(config.catalogue)).to_dict(window=True)
        text = _merged(text, _changed(values, held))
    except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError) as exc:
        raise ConfigError(f"{target} cannot be read again to keep its comments: {exc}") from exc
    return write_atomic(target, text, protect=protect)


def _changed(values: Mapping[str, Any], held: Mapping[str, Any]) -> dict[str, Any]:
    """What of `values` differs from what the file `held` comes to: only that is written,
    so a setting the file leaves to its default stays unwritten."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        before = held.get(key)
        if isinstance(value, Mapping) and isinstance(before, Mapping):
            inner = _changed(value, before)
            if inner:
                out[key] = inner
        elif value != before:
            out[key] = value
    return out


def _merged(text: str, values: Mapping[str, Any]) -> str:
    """`text` (a YAML mapping) with `values` set in it: a changed value is rewritten in
    place, a new key added at the end of its mapping, comments and order kept."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    rt = YAML()  # round-trip: comments and layout survive a load and a dump
    try:
        document = rt.load(text)
    except YAMLError as exc:
        raise ValueError(str(exc)) from exc
    if not isinstance(document, dict):
        raise ValueError("it is not a mapping")

    def update(target: Any, new: Mapping[str, Any]) -> None:
        for key, value in new.items():
            if isinstance(value, Mapping) and isinstance(target.get(key), dict):
                update(target[key], value)
            elif target.get(key) != value:
                target[key] = list(value) if isinstance(value, tuple) else value

    update(document, values)
    out = io.StringIO()
    rt.dump(document, out)
    return out.getvalue()
