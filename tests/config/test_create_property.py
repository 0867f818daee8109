"""Property: ``study create`` over random specs stores the valid ones and refuses the rest cleanly.

Every generated spec either loads and is stored whole (the stored spec reads back equal), or
raises a :class:`~convtune.errors.ConvtuneError` (one line at the CLI) and writes nothing: no
study, no storage file. Any other exception is a check missing at create.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import optuna
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from convtune.config.record import SPEC_ATTR, study_attr
from convtune.config.spec import load_spec
from convtune.errors import ConvtuneError
from convtune.study import create_study

# Values a user might type anywhere: plausible ones, edge cases and wrong types.
ANY = st.one_of(
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, -1, 0.5, 1e-3, "fast", "", "32", True, None, [1, 2]]),
)
POSITIVE_INT = st.one_of(st.sampled_from([16, 32]), ANY)
LR = st.one_of(
    st.floats(1e-4, 1.0), st.fixed_dictionaries({"low": ANY, "high": ANY, "log": st.booleans()}), ANY
)
SPACE = st.fixed_dictionaries(
    {"peak_lr": LR, "horizon_samples": st.one_of(st.just(4096), ANY), "micro_batch_size": POSITIVE_INT},
    optional={
        "warmup_steps": st.one_of(st.just(0), ANY),
        "schedule": st.sampled_from(["constant", "cosine", "nope"]),
        "optimizer": st.sampled_from(["sgd", "adamw", "nope"]),
        "precision": st.sampled_from(["fp32", "fp8"]),
    },
)
SPEC = st.fixed_dictionaries(
    {
        "workload": st.just("digits"),
        "target": st.sampled_from(["accuracy>=0.9", "accuracy>=1.5", "acuracy>=0.9", "val_loss<=0.3", "x"]),
        "cost": st.sampled_from(["samples", "wallclock", "flops"]),
    },
    optional={
        "seed": ANY,
        "max_cost": ANY,
        "eval_every": st.one_of(st.fixed_dictionaries({"samples": ANY}), ANY),
        "duplicate_tolerance": ANY,
        "world_size": ANY,
        "sampler": st.sampled_from(["tpe", "random", "cmaes"]),
    },
)
NAME = st.one_of(st.just("s"), st.text(max_size=600))


@settings(
    max_examples=80,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(spec=SPEC, space=SPACE, name=NAME)
def test_create_stores_valid_specs_and_refuses_the_rest_writing_nothing(
    spec: dict, space: dict, name: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "space.yaml").write_text(yaml.safe_dump(space))
        (root / "s.yaml").write_text(yaml.safe_dump({**spec, "space": "space.yaml"}))
        db = root / "studies" / "c.db"
        try:
            loaded = load_spec(root / "s.yaml")
            create_study(name, loaded, f"sqlite:///{db}")
        except ConvtuneError as exc:
            event(f"refused at {(exc.where or '').split(': ')[-1] or 'top level'}")
            assert "\n" not in exc.one_line()
            assert not db.exists(), f"refused ({exc.one_line()}) but wrote {db}"
            return
        event("stored")
        stored = study_attr(optuna.load_study(study_name=name, storage=f"sqlite:///{db}"), SPEC_ATTR)
        assert stored["target"] == loaded.target and stored["seed"] == loaded.seed
        assert 0 <= loaded.seed < 2**32 and loaded.target_spec.metric in ("accuracy", "val_loss")
        assert loaded.max_cost > 0 and not math.isnan(loaded.max_cost)
