"""Every example in convtune's docstrings runs and prints what it says (they are what a newcomer
copies; those that need a study, a server or a cluster are marked ``+SKIP`` where they stand)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
import tomllib
from pathlib import Path

import pytest

import convtune

# ``__main__`` modules run the CLI when imported.
MODULES = sorted(
    m.name for m in pkgutil.walk_packages(convtune.__path__, "convtune.") if not m.name.endswith("__main__")
)


def _optional_packages() -> dict[str, str]:
    """Import name of each package of convtune's optional extras -> the extra that installs it."""
    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    out = {}
    for extra, requirements in project["project"]["optional-dependencies"].items():
        if extra == "dev":
            continue
        for requirement in requirements:
            out[re.split(r"[\[<>=!~ ;]", requirement, maxsplit=1)[0].replace("-", "_")] = extra
    return out


OPTIONAL = _optional_packages()


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    try:
        module = importlib.import_module(name)
    except ImportError as error:
        missing = (error.name or "").split(".")[0]
        if missing not in OPTIONAL:
            raise  # a core import broken: that is a failure, not a skip
        pytest.skip(
            f"{name} imports {missing}, of the extra convtune[{OPTIONAL[missing]}], not installed here"
        )
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in doctest.DocTestFinder().find(module, name):
        runner.run(test)
    assert runner.failures == 0, f"{runner.failures} docstring example(s) of {name} failed (output above)"


# The extension points must show how they are used, not only have examples that pass.
EXTENSION_POINTS = [
    "convtune.workloads",  # the Workload protocol
    "convtune.config.optim",  # register_optimizer
    "convtune.config.schedules",  # register_schedule
    "convtune.export.formats",  # register_exporter
    "convtune.curves._forecast",  # forecast_time_to_target
    "convtune.pruners._time_to_target",  # TimeToTargetPruner, reach_probability
]


@pytest.mark.parametrize("name", EXTENSION_POINTS)
def test_the_extension_points_have_examples(name: str) -> None:
    tests = doctest.DocTestFinder().find(importlib.import_module(name), name)
    assert any(t.examples for t in tests), f"{name} has no docstring example"
