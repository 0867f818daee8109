"""What the benchmark scripts' tests share: loading a script (not part of the package) as a module."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="session")
def benchmark_script() -> Callable[[str], ModuleType]:
    """``benchmark_script("pfn")`` is ``benchmarks/pfn.py`` as a module, the benchmarks folder on
    the path for its own imports (``forecast``, ``corpus``)."""

    def load(name: str) -> ModuleType:
        if str(BENCHMARKS) not in sys.path:
            sys.path.insert(0, str(BENCHMARKS))
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[name] = module  # its dataclasses look their module up while it loads
        spec.loader.exec_module(module)  # type: ignore[union-attr]
        return module

    return load
