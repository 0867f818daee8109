"""Every example in convtune's docstrings runs and prints what it says (they are what a newcomer
copies; those that need a study, a server or a cluster are marked ``+SKIP`` where they stand)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import convtune

# ``__main__`` modules run the CLI when imported.
MODULES = sorted(
    m.name for m in pkgutil.walk_packages(convtune.__path__, "convtune.") if not m.name.endswith("__main__")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    try:
        module = importlib.import_module(name)
    except ImportError as error:  # an optional extra (transformers, lightning) not installed
        pytest.skip(f"{name} needs an optional dependency: {error}")
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
