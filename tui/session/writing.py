"""What a session screen writes to files: the config it was tuned to, exports (the
screen as SVG, the steps as Markdown), the HTML report and checkpoints. Every write is
atomic, never over a file that exists and never to the transcript; served in a browser,
exports go to the browser instead. Slow writes run in the screen's workers."""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.screen import Screen

from compaction_inspector.core.config import Config, ConfigError
from compaction_inspector.core.config_file import save
from compaction_inspector.core.files import Changed, WriteRefused, free_stem, write_atomic
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.model import Session, immutable
from compaction_inspector.core.strategies import CompactionResult, Stats
from compaction_inspector.core.text import counted
from compaction_inspector.tui.widgets.transcript import TranscriptView

if TYPE_CHECKING:
    from compaction_inspector.core.reporting.html_report import ReportOptions
    from compaction_inspector.core.sweeping.sweep import Sweep

EXPORT_WAITS = 20  # an export waits at most this many 50 ms ticks for the notices to go


@immutable()
class Shown:
    """What the screen shows, as a write needs it."""

    path: Path  # the transcript: never written
    export_dir: Path
    stepped: str  # what is stepped through: a strategy, or the transcript's own compactions
    session: Session | None
    inspection: Inspection | None
    result: CompactionResult[Stats] | None
    step: int

    @property
    def stem(self) -> str:
        """What exports are named after: the file, what is stepped, the step."""
        return f"{self.path.stem}-{self.stepped}-{f'step{self.step + 1}' if self.step >= 0 else 'before'}"


def save_config(
    screen: Screen[Any], shown: Shown, config: Config, configure: Callable[[Config], None]
) -> None:
    """`config`, scoped to this session's agent and model, to the file it came from
    (else `compaction.yaml` here); `configure` takes the saved one, so the next save
    updates that file."""
    session = shown.session
    config = config.scoped_to(session) if session is not None else config
    target = Path(config.source) if config.source else Path.cwd() / "compaction.yaml"
    try:
        save(config, target, protect=shown.path)
    except (OSError, ConfigError) as exc:
        screen.notify(str(exc), title="Not saved", severity="error")
        return
    configure(dataclasses.replace(config, source=str(target)))
    scope = config.window_for
    where = (
        f"; its window {config.window.context_window:,} applies to {scope.describe()} only"
        if scope is not None and config.window_chosen
        else ""
    )
    screen.notify(f"Saved to {target}{where}", title="Config saved", timeout=6)


def export(screen: Screen[Any], shown: Shown) -> None:
    """The screen as SVG and the steps up to the one shown as Markdown, to new files;
    the screen is taken once the notifications are gone, so none is in the picture."""
    screen.app.clear_notifications()
    _export_when_clear(screen, shown, EXPORT_WAITS)


def _export_when_clear(screen: Screen[Any], shown: Shown, waits: int) -> None:
    """Export once the notices have left the screen (they go on the next refreshes)."""
    if waits and screen.query("Toast"):  # Textual's notices, by their type's name
        screen.set_timer(0.05, lambda: _export_when_clear(screen, shown, waits - 1))
    else:
        _export(screen, shown)


def _export(screen: Screen[Any], shown: Shown) -> None:
    # what only a write needs is imported when one is made, not at every start
    from compaction_inspector.tui.screenshot import offline_svg

    inspection, result, upto = shown.inspection, shown.result, shown.step
    if screen.app.is_web:  # served: the files go to the browser, not to the server's folder
        _deliver(screen, shown.stem + ".svg", offline_svg(screen.app))
        if inspection is not None and result is not None:
            name = shown.stem + ".md"
            _in_worker(
                screen, "export Markdown", lambda: _deliver_markdown(screen, name, inspection, result, upto)
            )
        return
    stem = free_stem(shown.export_dir / shown.stem, (".svg", ".md"))
    try:
        svg = write_atomic(
            stem.with_name(stem.name + ".svg"), offline_svg(screen.app), protect=shown.path, overwrite=False
        )
    except (OSError, WriteRefused) as exc:
        screen.notify(str(exc), title="Export failed", severity="error")
        return
    if inspection is not None and result is not None:
        steps = len(result.steps) if upto < 0 else upto + 1
        screen.notify(
            f"{svg.name} written; {stem.name}.md, the Markdown of {counted(steps, 'step')}, is being written",
            timeout=3,
        )
        _in_worker(
            screen,
            "export Markdown",
            lambda: _export_markdown(screen, shown.path, stem, inspection, result, upto),
        )
    else:
        screen.notify(svg.name, title=f"Exported to {stem.parent.resolve()}", timeout=5)


def _in_worker(screen: Screen[Any], description: str, job: Callable[[], None]) -> None:
    """A write of many steps takes seconds on a long session: not on the UI thread."""
    screen.run_worker(job, thread=True, group="export", description=description)


def _deliver(screen: Screen[Any], name: str, text: str) -> None:
    screen.app.deliver_text(io.StringIO(text), save_filename=name)
    screen.notify(f"{name} sent to your browser", title="Exported", timeout=5)


def _deliver_markdown(
    screen: Screen[Any], name: str, inspection: Inspection, result: CompactionResult[Stats], upto: int
) -> None:
    from compaction_inspector.core.reporting.markdown import compaction_markdown

    screen.app.call_from_thread(_deliver, screen, name, compaction_markdown(inspection, result, upto))


def _export_markdown(
    screen: Screen[Any],
    path: Path,
    stem: Path,
    inspection: Inspection,
    result: CompactionResult[Stats],
    upto: int,
) -> None:
    """The steps up to the one shown, as Markdown: every step's diff."""
    from compaction_inspector.core.reporting.markdown import compaction_markdown

    try:
        md = compaction_markdown(inspection, result, upto)
        name = write_atomic(stem.with_name(stem.name + ".md"), md, protect=path, overwrite=False).name
    except (OSError, WriteRefused) as exc:
        screen.app.call_from_thread(screen.notify, str(exc), title="Export failed", severity="error")
        return
    screen.app.call_from_thread(
        screen.notify, f"{stem.name}.svg and {name}", title=f"Exported to {stem.parent.resolve()}", timeout=5
    )


def report(screen: Screen[Any], shown: Shown, strategy: str, compare: str) -> None:
    """The session's story as one HTML file (`compaction-inspector report`): every
    strategy's steps and line, the one on screen first and compared with `compare` as on
    screen, with the settings in force (tuned here or not) and the command that makes it
    again."""
    inspection = shown.inspection
    if inspection is None:
        return
    from compaction_inspector.core.reporting.html_report import ReportOptions

    first = (strategy, *(n for n in inspection.config.catalogue.strategies if n != strategy))
    screen.notify("The HTML report is being written", timeout=3)
    options = ReportOptions(strategies=first, compare=compare)
    _in_worker(screen, "HTML report", lambda: _report(screen, shown, inspection, options))


def _report(screen: Screen[Any], shown: Shown, inspection: Inspection, options: ReportOptions) -> None:
    from compaction_inspector.core.reporting.html_report import report as html_report

    page = html_report(inspection, options)
    name = f"{shown.path.stem}-report.html"
    if screen.app.is_web:
        screen.app.call_from_thread(_deliver, screen, name, page)
        return
    try:
        stem = free_stem(shown.export_dir / f"{shown.path.stem}-report", (".html",))
        out = write_atomic(stem.with_name(stem.name + ".html"), page, protect=shown.path, overwrite=False)
    except (OSError, WriteRefused) as exc:
        screen.app.call_from_thread(screen.notify, str(exc), title="Report not written", severity="error")
        return
    screen.app.call_from_thread(
        screen.notify, f"{out} (open it in a browser)", title="Report written", timeout=8
    )


def sweep_page(screen: Screen[Any], done: Sweep, paths: list[str], export_dir: Path) -> None:
    """A sweep as one HTML page (`sweep --html`), with the command that makes it again,
    never over an earlier one."""
    from compaction_inspector.core.reporting.sweep_report import page as sweep_html

    strategy = done.grid.strategy
    command = ["compaction-inspector", "sweep", *paths, "--strategy", strategy, "--grid", done.grid.spec]
    text = sweep_html(done, command)
    if screen.app.is_web:
        _deliver(screen, f"sweep-{strategy}.html", text)
        return
    try:
        stem = free_stem(export_dir / f"sweep-{strategy}", (".html",))
        out = write_atomic(stem.with_name(stem.name + ".html"), text, overwrite=False)
    except (OSError, WriteRefused) as exc:
        screen.notify(str(exc), title="Sweep not written", severity="error")
        return
    screen.notify(f"{out} (open it in a browser)", title="Sweep written", timeout=8)


def checkpoint(screen: Screen[Any], shown: Shown) -> None:
    """A checkpoint of the transcript up to the message under the cursor, appended to
    `memory/YYYY-MM-DD.md` in the export folder."""
    session = shown.session
    if session is None:
        return
    from compaction_inspector.core.replaying.checkpoint import append_checkpoint  # only when one is written

    entry = screen.query_one("#before", TranscriptView).current
    if entry is not None and entry.origin is None:  # a summary or marker a step made
        screen.notify(
            "This message was made by the step, not written in the transcript: "
            "put the cursor on one of the transcript's messages",
            title="Checkpoint not written",
            severity="warning",
        )
        return
    # the message's place in the transcript, whatever a step shows around it
    last = len(session.messages) - 1
    at = entry.origin if entry is not None and entry.origin is not None else last
    try:
        path, written = append_checkpoint(session, shown.export_dir / "memory", at=at)
    except (OSError, ValueError) as exc:
        screen.notify(str(exc), title="Checkpoint not written", severity="error")
        return
    screen.notify(f"{written.heading} → {path}", title="Checkpoint written", timeout=5)


def apply_setting(screen: Screen[Any], config: Config, strategy: str) -> None:
    """The shown agent strategy's tuned setting, written into the agent's own settings
    file once its diff is seen and accepted (`core.apply`)."""
    from compaction_inspector.core import apply as applying
    from compaction_inspector.tui.screens.applying import ApplyScreen

    agent = config.catalogue.by_format.get(strategy)
    if agent is None or not agent.settings_keys:
        takes = ", ".join(a.format for a in config.catalogue.agents if a.settings_keys)
        screen.notify(
            f"Only an agent's own strategy ({takes}) has a setting of the agent's to write", timeout=5
        )
        return
    options = config.strategies[strategy]  # what was set here, not what the agent's file says
    tuned = [(o, getattr(options, o)) for o in agent.settings_keys if getattr(options, o, None) is not None]
    if not tuned:
        wanted = ", ".join(agent.settings_keys)
        screen.notify(f"Nothing to write: set {wanted} in the strategy panel first", timeout=5)
        return
    option, value = tuned[0]
    try:
        change = applying.planned(agent, option, value)
    except applying.ApplyError as exc:
        screen.notify(str(exc), title="Not written", severity="error")
        return
    if change.before == change.after:
        screen.notify(f"{change.path} sets {change.key} to {value:,} already", timeout=5)
        return

    def written(accepted: bool | None) -> None:
        if not accepted:
            return
        try:
            backup = applying.write(change, force=True)  # the diff shown is the consent
        except Changed:  # another program wrote it since: its diff as it is now, to consent to again
            screen.notify(
                f"{change.path} changed since its diff was shown: nothing written", title="Not written"
            )
            apply_setting(screen, config, strategy)
            return
        except (applying.ApplyError, OSError) as exc:
            screen.notify(str(exc), title="Not written", severity="error")
            return
        kept = f" (the file as it was: {backup})" if backup is not None else ""
        screen.notify(f"Wrote {change.key} = {value:,} to {change.path}{kept}", title="Written", timeout=8)

    screen.app.push_screen(ApplyScreen(change, agent.name), written)
