"""What `report --redact` leaves out of a shared report, exactly."""

import pytest

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.reporting.redact import redacted


@pytest.mark.parametrize(
    ("text", "shared"),
    [
        ("Author: Jane Q. Doe <jane.doe@example.com>", "Author: <name> <<email>>"),
        ("Co-authored-by: John Smith <js@x.io>", "Co-authored-by: <name> <<email>>"),
        ("Signed-off-by: Alan Turing <at@b.co>", "Signed-off-by: <name> <<email>>"),
        ('git config user.name "Ada Lovelace"', 'git config user.name "<name>"'),
        ("Grace Hopper <grace@navy.mil> wrote", "<name> <<email>> wrote"),
        ("mail me at bob.smith+ci@corp.example.org today", "mail me at <email> today"),
        (
            "issue I_kwDOHq2xYc5abcdef, PR PR_kwDOAB12cd34, user MDQ6VXNlcjEyMzQ1Njc=",
            "issue <id>, PR <id>, user <id>",
        ),
        ("read /home/jane/src/app.py", "read <path>"),
        ('import "github.com/acme/billing/internal/ledger"', 'import "github.com/<repository>"'),
        ("see https://gitlab.com/acme/billing/-/merge_requests/7", "see https://gitlab.com/<repository>"),
        ("git clone git@github.com:acme/billing.git", "git clone <email>:<repository>"),
        ("version 2.1.49 of app.py/main", "version 2.1.49 of app.py/main"),  # no host: kept
        (
            "The Config Parser breaks on MDXProvider",
            "The Config Parser breaks on MDXProvider",
        ),  # no person here
    ],
)
def test_redacted(text: str, shared: str) -> None:
    assert redacted(text) == shared


@pytest.mark.parametrize(
    ("text", "shared"),
    [
        ('{"assignee": "Jane Doe", "createdBy": "jdoe", "title": "Fix it"}',
         '{"assignee": "<name>", "createdBy": "<name>", "title": "Fix it"}'),
        ('"author": {"login": "octocat", "displayName": "Mona Lisa"}',
         '"author": {"login": "<name>", "displayName": "<name>"}'),
        ("commit 1a2b3c\nAuthor: jdoe\nDate: today", "commit 1a2b3c\nAuthor: <name>\nDate: today"),
        ("Co-Authored-By: Claude <noreply@anthropic.com>", "Co-Authored-By: Claude <<email>>"),
        ("Claude Code <noreply@anthropic.com> wrote it", "Claude Code <<email>> wrote it"),
        ("Author: dependabot[bot] <49699333+dependabot[bot]@users.noreply.github.com>",
         "Author: dependabot[bot] <49699333+dependabot[bot]@users.noreply.github.com>"),
        ('{"createdBy": "github-actions[bot]"}', '{"createdBy": "github-actions[bot]"}'),
    ],
)  # fmt: skip
def test_a_persons_name_in_tool_output_is_masked_and_a_bots_is_kept(text: str, shared: str) -> None:
    assert redacted(text) == shared


def test_an_agent_s_signature_is_kept_as_its_package_names_it() -> None:
    """The names an agent signs with come from its package (`Files.signs_as`), through
    the catalogue: given them, a report keeps an agent's signature as a bot's."""
    signed = "Co-Authored-By: Codex"
    names = tuple(name for agent in CATALOGUE.agents for name in agent.signs_as)
    assert redacted(signed) == "Co-Authored-By: <name>"
    assert redacted(signed, names) == signed
