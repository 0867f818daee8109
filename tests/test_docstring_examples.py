"""Every example in convtune's docstrings runs and prints what it says (those that need a study,
a server or a cluster are marked ``+SKIP`` where they stand)."""

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


def test_the_examples_are_found() -> None:
    found = sum(
        len([t for t in doctest.DocTestFinder().find(importlib.import_module(n), n) if t.examples])
        for n in ("convtune.curves._forecast", "convtune.pruners._time_to_target")
    )
    assert found >= 3
