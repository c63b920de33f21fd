"""Hypothesis runs derandomized (a fixed seed) by default, so CI is repeatable;
`HYPOTHESIS_PROFILE=thorough python3 -m pytest` explores far more examples."""

import atexit
import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, settings

from compaction_inspector.core.agents.registry import AGENTS
from tests.helpers import isolated_homes

# Tests (and the commands they start) never touch the user's real token cache, nor list
# the sessions of whoever runs them.
os.environ["COMPACTION_INSPECTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="ci-token-cache-")
_AGENTS = tempfile.mkdtemp(prefix="ci-agents-")
os.environ.update(isolated_homes(AGENTS, _AGENTS))
for _folder in (os.environ["COMPACTION_INSPECTOR_CACHE_DIR"], _AGENTS):
    atexit.register(shutil.rmtree, _folder, ignore_errors=True)

settings.register_profile(
    "default",
    derandomize=True,
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "thorough", max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """A run of many tests takes one process per core (most of an app test is Textual
    waiting for a frame, which overlaps); one file or one test runs in this process, as
    starting the workers would cost more than the test."""
    if not hasattr(config.option, "numprocesses") or hasattr(config, "workerinput"):
        return  # xdist left out (-p no:xdist), or this is a worker itself
    if config.option.numprocesses is not None:
        return  # asked for
    narrow = config.args and all("::" in a or os.path.isfile(a) for a in config.args)
    if not narrow:
        config.option.numprocesses = "auto"
        config.option.dist = "worksteal"
