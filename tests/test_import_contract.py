"""The import contract: convtune's packages are layers, and a module imports only from its own
layer or the layers below it. Every import counts, those inside functions and under
``TYPE_CHECKING`` too, so a dependency cannot hide in a lazy import. Within a layer the module
graph has no cycles either.

The layers, lowest first (ARCHITECTURE.md names the same order):
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from convtune._moved import MOVED

PACKAGE = Path(__file__).resolve().parent.parent / "convtune"

LAYERS: list[tuple[str, ...]] = [
    ("convtune.errors",),
    ("convtune.workloads",),  # the Workload protocol and built-ins: what a spec names
    ("convtune.config",),  # spec, space, recipe, target, registries, the trial record
    ("convtune.curves",),
    ("convtune.pruners",),
    ("convtune.training",),  # engine, probes
    ("convtune.execution",),  # executors, ranks, channel, session, follow
    ("convtune.storage",),  # storages, leases
    ("convtune.study",),  # objective, outcome, run loop, workers
    ("convtune.scaling",),
    ("convtune.report",),  # best, dashboard, plots
    ("convtune.replay",),  # tuner replays: the recorded-curve executor, studies over grids, confirm
    ("convtune.export",),
    ("convtune.integrations",),  # Trainer / Lightning callbacks (optional extras)
    ("convtune.cli",),
]
# The package root is the public facade (it may import anything lazily); ``_moved`` answers for
# the old module paths (``convtune.engine``, ...), which nothing inside the repository may use.
FACADE = {"convtune", "convtune._moved"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> int | None:
    for index, prefixes in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return index
    return None


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(path: Path, name: str) -> set[str]:
    """The convtune modules ``path`` imports anywhere in its body (a package's submodule when named)."""
    found: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base)
    return {m for m in found if m == "convtune" or m.startswith("convtune.")}


GRAPH = {name: imports_of(path, name) for name, path in MODULES.items()}


def test_every_module_sits_in_a_layer() -> None:
    lost = sorted(name for name in MODULES if layer_of(name) is None and name not in FACADE)
    assert not lost, f"modules in no layer (add them to LAYERS): {lost}"
    assert not set(MOVED) & set(MODULES), "an old path is a file again: the import hook would hide it"


@pytest.mark.parametrize("name", sorted(set(GRAPH) - FACADE))
def test_imports_point_down(name: str) -> None:
    own = layer_of(name)
    assert own is not None
    for target in sorted(GRAPH[name]):
        assert target not in MOVED, f"{name} imports the deprecated path {target} (now {MOVED.get(target)})"
        if target in FACADE:
            assert target == "convtune", f"{name} imports {target}"
            continue
        other = layer_of(target)
        assert other is not None and other <= own, (
            f"{name} (layer {LAYERS[own][0]}) imports {target} (layer {LAYERS[other][0] if other is not None else '?'}), "
            "which sits above it"
        )


def test_no_import_cycles() -> None:
    state: dict[str, int] = {}  # 1 on the path, 2 done
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for target in sorted(GRAPH.get(node, ())):
            if target in FACADE:
                continue
            if state.get(target) == 1:
                cycle = stack[stack.index(target) :] + [target]
                pytest.fail("import cycle: " + " → ".join(cycle))
            if target not in state:
                visit(target)
        stack.pop()
        state[node] = 2

    for node in sorted(GRAPH):
        if node not in state and node not in FACADE:
            visit(node)


def test_the_contract_sees_lazy_imports() -> None:
    """The check reads function-local imports: one placed upward inside a function fails it."""
    assert "convtune.execution.launcher" in GRAPH["convtune.study.run"]  # imported inside run_study


# The stored record is read and written in one place: ``convtune.config.record`` (and the
# storage's leases and creation tokens, which mark trials below the record); the pruner reads
# them through it too.
RECORD_KEEPERS = {"convtune.config.record", "convtune.storage.leases", "convtune.storage.backends"}
STORED_ATTRIBUTES = {
    "user_attrs",
    "system_attrs",
    "set_user_attr",
    "set_system_attr",
    "set_trial_user_attr",
    "set_trial_system_attr",
    "get_trial_user_attrs",
    "get_trial_system_attrs",
}


@pytest.mark.parametrize("name", sorted(set(GRAPH) - FACADE - RECORD_KEEPERS))
def test_only_the_record_touches_stored_attributes(name: str) -> None:
    tree = ast.parse(MODULES[name].read_text())
    touched = sorted(
        f"line {node.lineno}: .{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in STORED_ATTRIBUTES
    )
    assert not touched, (
        f"{name} reads or writes stored attributes itself (use convtune.config.record): {touched}"
    )


def test_old_module_paths_import_the_moved_module_with_one_warning() -> None:
    """User scripts and notebooks that import an old path keep working; ``from convtune import session`` is silent."""
    code = """
import warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    from convtune import session          # the documented name: no warning
    import convtune.engine
    from convtune.spec import StudySpec
    import convtune.engine as again
import convtune.execution.session, convtune.training.engine, convtune.config.spec
assert session is convtune.execution.session and again is convtune.training.engine
assert StudySpec is convtune.config.spec.StudySpec
assert convtune.training.engine.__spec__.name == "convtune.training.engine"
moved = [str(w.message) for w in caught if w.category is DeprecationWarning]
assert len(moved) == 2 and all("moved to" in m for m in moved), moved
assert all(w.filename == "<string>" for w in caught if w.category is DeprecationWarning)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_the_pruner_and_the_study_do_not_import_scipy_stats() -> None:
    # scipy.stats costs every process about a second to import, and every worker, rank and CLI
    # call imports the pruner and the study: modules that need it import it where they use it.
    code = "import sys, convtune.pruners, convtune.study; print('scipy.stats' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
