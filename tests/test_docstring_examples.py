"""The examples in the extension points' docstrings run as written (they are what a newcomer copies)."""

from __future__ import annotations

import doctest
import importlib

import pytest

EXTENSION_POINTS = [
    "convtune.workloads",  # the Workload protocol
    "convtune.config.optim",  # register_optimizer
    "convtune.config.schedules",  # register_schedule
    "convtune.export.formats",  # register_exporter
]


@pytest.mark.parametrize("module_name", EXTENSION_POINTS)
def test_docstring_examples_run(module_name: str) -> None:
    module = importlib.import_module(module_name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{module_name} has no docstring example"
    assert result.failed == 0
