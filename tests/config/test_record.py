"""The trial record: typed reads of what trials store, old studies' keys included."""

from __future__ import annotations

import optuna
from optuna.distributions import FloatDistribution
from optuna.trial import TrialState, create_trial

from convtune.config.record import (
    CONFIRMATIONS_ATTR,
    TrialRecord,
    TrialStatus,
    enqueued,
    set_study_attr,
    write_status,
)
from convtune.scaling import confirmations

DIST = {"peak_lr": FloatDistribution(1e-3, 1e-1, log=True)}


def _trial(number: int, **attrs: object) -> optuna.trial.FrozenTrial:
    trial = create_trial(
        state=TrialState.COMPLETE,
        value=100.0 + number,
        params={"peak_lr": 0.01},
        distributions=DIST,
        user_attrs=attrs,
    )
    trial.number = number
    return trial


def test_record_reads_the_stored_attributes_typed() -> None:
    record = TrialRecord.of(
        _trial(3, status="reached", time_to_target=1234.5, recipe={"peak_lr": 0.01}, seed=7)
    )
    assert record.status is TrialStatus.REACHED and record.reached
    assert record.time_to_target == 1234.5 and record.time == 1234.5
    assert record.seed == 7 and record.recipe == {"peak_lr": 0.01}
    assert record.summary()["status"] == "reached" and type(record.summary()["status"]) is str
    unknown = TrialRecord.of(_trial(4, status="something new"))
    assert unknown.status is None and not unknown.reached


def test_a_confirmation_is_read_under_either_key() -> None:
    """Earlier versions marked confirmation runs ``confirmed``, later ones ``confirm``."""
    assert TrialRecord.of(_trial(0, confirmed=True)).confirmation
    assert TrialRecord.of(_trial(1, confirm=True)).confirmation
    assert not TrialRecord.of(_trial(2)).confirmation
    assert enqueued(confirm_id="abc", seed=1) == {"confirm": True, "confirm_id": "abc", "seed": 1}


def test_an_old_studys_confirmations_still_count() -> None:
    study = optuna.create_study()
    set_study_attr(study, CONFIRMATIONS_ATTR, [{"id": "abc", "params": {"peak_lr": 0.01}, "predicted": 90.0}])
    study.add_trial(
        _trial(0, status="reached", time_to_target=100.0, confirmed=True, confirm_id="abc", seed=1)
    )
    study.add_trial(_trial(1, status="reached", time_to_target=110.0, confirm=True, confirm_id="abc", seed=2))
    study.add_trial(_trial(2, status="reached", time_to_target=50.0))  # not a confirmation run
    [entry] = confirmations(study)
    assert entry["trials"] == [0, 1] and entry["seeds"] == [1, 2]
    assert entry["measured_mean"] == 105.0 and entry["n_reached"] == 2


def test_status_is_stored_as_its_word() -> None:
    study = optuna.create_study()
    trial = study.ask()
    write_status(trial, TrialStatus.FAILED, error="boom")
    stored = study.trials[0].user_attrs
    assert stored == {"status": "failed", "error": "boom"} and type(stored["status"]) is str
