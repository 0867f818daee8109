"""A sampler that is not told the trials the pruner stopped (``stop_value: withheld``).

A stopped trial is stored COMPLETE with a right-censored value (:func:`convtune.study.outcome.censored_value`),
which is what the dashboard and ``convtune study best`` show. What TPE should learn from it is
less clear. Told that value, paused trials that stood behind early but were forecast to cross
soon fill the best tenth TPE imitates; told "after every trial that reached", a paused winner is
one TPE steers away from (docs/benchmarks.md, "Evidence for a pause"). Withheld, a stop is
neither: the sampler models only the trials that ran to their end (reached, ran out, diverged),
and a configuration it proposes again near a paused one resumes it from its checkpoint.

Example:
    >>> import optuna
    >>> sampler = StopsWithheld(optuna.samplers.TPESampler(seed=0))
    >>> study = optuna.create_study(sampler=sampler)
    >>> study.optimize(lambda t: t.suggest_float("x", 0, 1) ** 2, n_trials=3)
    >>> len(study.trials)
    3
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from typing import Any

import optuna
from optuna.distributions import BaseDistribution
from optuna.samplers import BaseSampler
from optuna.trial import FrozenTrial, TrialState

from convtune.config.record import is_stopped


class _StudyWithoutStops:
    """``study`` as the wrapped sampler sees it: every call goes through, but the trial lists
    leave out the trials the pruner stopped."""

    def __init__(self, study: optuna.Study) -> None:
        self._inner_study = study

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner_study, name)

    def _get_trials(
        self,
        deepcopy: bool = True,
        states: Container[TrialState] | None = None,
        use_cache: bool = False,
    ) -> list[FrozenTrial]:
        trials = self._inner_study._get_trials(deepcopy=deepcopy, states=states, use_cache=use_cache)
        return [t for t in trials if not is_stopped(t)]

    def get_trials(
        self, deepcopy: bool = True, states: Container[TrialState] | None = None
    ) -> list[FrozenTrial]:
        return [
            t for t in self._inner_study.get_trials(deepcopy=deepcopy, states=states) if not is_stopped(t)
        ]

    @property
    def trials(self) -> list[FrozenTrial]:
        return self.get_trials()


class StopsWithheld(BaseSampler):
    """Wrap ``sampler`` so that it samples as if the study's stopped trials had not run.

    Everything else (search space, seed, constraints, storage writes) is the wrapped sampler's.
    """

    def __init__(self, sampler: BaseSampler) -> None:
        self._sampler = sampler

    def infer_relative_search_space(
        self, study: optuna.Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        return self._sampler.infer_relative_search_space(_StudyWithoutStops(study), trial)

    def sample_relative(
        self, study: optuna.Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        return self._sampler.sample_relative(_StudyWithoutStops(study), trial, search_space)

    def sample_independent(
        self, study: optuna.Study, trial: FrozenTrial, param_name: str, param_distribution: BaseDistribution
    ) -> Any:
        return self._sampler.sample_independent(
            _StudyWithoutStops(study), trial, param_name, param_distribution
        )

    def before_trial(self, study: optuna.Study, trial: FrozenTrial) -> None:
        self._sampler.before_trial(_StudyWithoutStops(study), trial)

    def after_trial(
        self,
        study: optuna.Study,
        trial: FrozenTrial,
        state: TrialState,
        values: Sequence[float] | None,
    ) -> None:
        self._sampler.after_trial(_StudyWithoutStops(study), trial, state, values)

    def reseed_rng(self) -> None:
        self._sampler.reseed_rng()
