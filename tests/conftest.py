"""Shared fixtures: one tiny finished study for the tests that only read one.

Training even a tiny study costs seconds, so it is trained once per test session; tests that
change a study make their own.
"""

from __future__ import annotations

import pytest
from specs import TINY_SPACE, TinyStudy


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
