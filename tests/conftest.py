"""Shared fixtures: one tiny finished study for the tests that only read one.

Training even a tiny study costs seconds, so it is trained once per test session; tests that
change a study make their own.
"""

from __future__ import annotations

import os

# The suite is CI's, and CI has no GPU: on a machine with GPUs they are hidden before torch
# looks, so every test, launched rank and child process trains on the CPU as in CI. The CUDA
# path has its own check (`python benchmarks/gpu_check.py`); CONVTUNE_TEST_GPU=1 shows the GPUs.
if os.environ.get("CONVTUNE_TEST_GPU") != "1":
    os.environ["CUDA_VISIBLE_DEVICES"] = ""

import pytest  # noqa: E402
from specs import TINY_SPACE, TinyStudy  # noqa: E402


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist (``make test`` runs ``-n 2``), give each worker a core of its own.

    convtune sizes torch's threads from the cores it may use (``default_threads``); two workers
    each sizing for the whole machine would run two threads per core, which collapses small
    CPU training to a crawl. Pinned, every test, its launched ranks and its child processes
    see one core, as on a one-core machine.
    """
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if not worker.startswith("gw") or not hasattr(os, "sched_setaffinity"):
        return
    cores = sorted(os.sched_getaffinity(0))
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers <= len(cores) and len(cores) > 1:
        os.sched_setaffinity(0, {cores[int(worker[2:]) % len(cores)]})


@pytest.fixture(scope="session")
def tiny_study(tmp_path_factory: pytest.TempPathFactory) -> TinyStudy:
    """The session's tiny study; read it, never change it."""
    # Imported here: collecting a test that does not use the study should not load torch.
    from convtune.config.record import enqueued
    from convtune.config.spec import StudySpec
    from convtune.report.dashboard import DashboardHooks
    from convtune.study import create_study, run_study

    tiny = TinyStudy(name="tiny", directory=tmp_path_factory.mktemp("tiny-study"))
    spec = StudySpec.from_dict(
        {
            "workload": "digits",
            "space": TINY_SPACE,
            "target": "accuracy>=0.9",
            "cost": "samples",
            "max_cost": 8192,
            "eval_every": {"samples": 1024},
            "pruner": "none",
        }
    )
    study = create_study(tiny.name, spec, tiny.url)
    study.enqueue_trial({"peak_lr": 3.0e-3}, user_attrs=enqueued(baseline=True))
    study.enqueue_trial({"peak_lr": 1.0e-2}, user_attrs={"confirmed": True})
    run_study(tiny.name, n_trials=2, storage=tiny.url, hooks=DashboardHooks)
    return tiny
