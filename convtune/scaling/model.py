"""Scaling curves across trials, and the configuration they predict reaches the target fastest.

Three parametric fits and one regression, each from what trials already record:

* **steps to target** against effective batch ``B`` and peak LR (:class:`StepsFit`):
  ``log S = log S_min + log(1 + B_noise/B) + k·(log lr − log lr*(B))²`` with
  ``lr*(B) = lr_ref·(B/B_ref)^α`` — McCandlish et al. (2018)'s critical batch (hence samples
  ``E = E_min·(1 + B/B_noise)``) and the LR-scaling exponent (α = 1 linear, ½ square-root) in one
  least-squares fit, so an LR left untuned at one batch does not bias ``B_noise``;
  :class:`CriticalBatchFit` is the batch-only fit on the best trial per batch (the plotted one);
* **cost per optimizer step** against micro-batch, accumulation, world size and precision
  (:class:`StepTimeFit`): ``accum·(a_p + b_p·micro) + o_w`` — accumulation multiplies compute,
  not communication or the optimizer step;
* a Gaussian process over every knob (:class:`ResidualGP`) on what the parametric fits leave
  unexplained (schedule, warmup, optimizer, horizon, …).

:class:`ScalingModel` combines them into a predicted time-to-target, in the study's cost, for any
configuration in the space; :func:`recommend` searches the space for its argmin.

Example:
    >>> study, spec = convtune.study.open_study("demo")            # doctest: +SKIP
    >>> rec = convtune.recommend(study)                            # doctest: +SKIP
    >>> rec.time_to_target, rec.interval, rec.supported_by         # doctest: +SKIP
    (11.8, (9.1, 15.3), ('critical_batch', 'lr_scaling', 'step_time', 'gp'))
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from convtune.config.recipe import Recipe
from convtune.scaling.fits import CriticalBatchFit, Encoder, ResidualGP, StepsFit, StepTimeFit
from convtune.scaling.points import (
    _MEASURED_SIGMA,
    LEVEL,
    TrialPoint,
    _spec_of,
    _z,
    params_key,
    seed_spread,
    trial_points,
)

if TYPE_CHECKING:
    import optuna

    from convtune.config.space import Param, SearchSpace
    from convtune.config.spec import StudySpec

# Selection is risk-averse by this many standard deviations (log scale): a candidate far from
# every trial needs a clearly better mean to beat one next to measured data, and a configuration
# no trial ran must beat the best measured one (scored by its measurement) by that margin too.
# 0.5 was as good as 1 or 2 on the recorded-grid replays (docs/benchmarks.md).
_RISK = 0.5
# Past this log-scale sd (a factor of ~3,700 at 90%) a prediction says nothing more.
_MAX_LOG_SD = 5.0
# Knobs the parametric fits model, so candidates may take values no trial tried.
_MODELLED = {"micro_batch_size", "grad_accum_steps", "global_batch_size", "world_size", "precision"}


# ---- the combined model ------------------------------------------------------------------------


@dataclass(frozen=True)
class Prediction:
    """Predicted time-to-target of one configuration (cost units) with a ``level`` interval."""

    params: dict[str, Any]
    recipe: Recipe
    log_mean: float
    log_sd: float
    level: float

    @property
    def time_to_target(self) -> float:
        return math.exp(self.log_mean)

    @property
    def interval(self) -> tuple[float, float]:
        z = _z(self.level)
        return (math.exp(self.log_mean - z * self.log_sd), math.exp(self.log_mean + z * self.log_sd))


class ScalingModel:
    """The fits of one study, combined: ``T = S(B, lr) · cost_per_step(config) · exp(GP residual)``.

    Example:
        >>> model = ScalingModel.from_study(study, spec)                 # doctest: +SKIP
        >>> model.predict([{"peak_lr": 3e-3, "micro_batch_size": 32}])   # doctest: +SKIP
    """

    def __init__(
        self,
        space: SearchSpace,
        cost: str,
        points: list[TrialPoint],
        *,
        seed_sigma: float | None = None,
        level: float = LEVEL,
        seed: int = 0,
    ):
        self.space, self.cost, self.level, self.seed = space, cost, level, seed
        self.points = points
        self.usable = [p for p in points if p.usable]
        self.seed_sigma = seed_sigma
        self.steps_fit = StepsFit.fit(
            [p.batch for p in self.usable],
            [p.lr for p in self.usable],
            [p.steps for p in self.usable],
            sigma=[p.sigma for p in self.usable],
            level=level,
        )
        envelope = [p for p in self.usable if p.measured] or self.usable
        self.critical_batch = CriticalBatchFit.fit(
            [p.batch for p in envelope], [p.steps for p in envelope], level=level
        )
        self.step_time = StepTimeFit.fit(points, cost=cost)
        self.encoder = Encoder(space.distributions())
        self.gp: ResidualGP | None = None
        self.residual_const = (0.0, 1.0)
        if self.usable:
            x = np.stack([self.encoder.encode(p.params) for p in self.usable])
            y = np.log([p.time for p in self.usable]) - self._parametric(
                [Recipe.from_dict(p.recipe) for p in self.usable]
            )
            noise = np.array([p.sigma for p in self.usable])
            self.gp = ResidualGP.fit(self.encoder, x, y, noise, seed=seed)
            # Too few points for the GP: the residual is a constant (their weighted mean) whose
            # spread is the points' own, never zero (a bare fit predicted one sample).
            weights = 1 / np.maximum(noise, _MEASURED_SIGMA) ** 2
            mean = float(np.sum(weights * y) / np.sum(weights))
            spread = float(np.std(y, ddof=1)) if len(y) >= 2 else 1.0
            self.residual_const = (mean, max(spread, 0.5))
        # LRs past the lowest one that diverged (scaled to each batch by the fitted exponent) are
        # not predicted: no curve says how fast a run that blows up is.
        self.diverged_scaled_lr = min(
            (self._scaled_lr(p.batch, p.lr) for p in points if p.diverged), default=math.inf
        )

    @classmethod
    def from_study(cls, study: optuna.Study, spec: StudySpec | None = None, **kwargs: Any) -> ScalingModel:
        spec = spec or _spec_of(study)
        points = trial_points(study, spec.cost)
        kwargs.setdefault("seed_sigma", seed_spread(study, points))
        return cls(spec.search_space, spec.cost, points, **kwargs)

    @property
    def supported_by(self) -> tuple[str, ...]:
        fits = []
        if self.steps_fit and self.steps_fit.b_noise is not None:
            fits.append("critical_batch")
        if self.steps_fit and self.steps_fit.lr_exponent is not None:
            fits.append("lr_scaling")
        elif self.steps_fit and "curvature" in self.steps_fit.free:
            fits.append("lr_optimum")
        if self.step_time is not None:
            fits.append("step_time")
        if self.gp is not None:
            fits.append("gp")
        return tuple(fits)

    def _scaled_lr(self, batch: float, lr: float) -> float:
        alpha = (self.steps_fit.lr_exponent if self.steps_fit else None) or 0.0
        return lr / batch**alpha

    def _step_costs(self, recipes: Sequence[Recipe]) -> np.ndarray:
        if self.step_time is None:
            scale = float(np.median([p.step_cost / p.batch for p in self.usable])) if self.usable else 1.0
            return np.array([r.effective_batch_size * scale for r in recipes])
        return np.array(
            [
                self.step_time.predict(r.micro_batch_size, r.grad_accum_steps, r.world_size, r.precision)
                for r in recipes
            ]
        )

    def _parametric(self, recipes: Sequence[Recipe]) -> np.ndarray:
        """log T from the parametric fits alone (0 where there are none: the GP then holds it all)."""
        if self.steps_fit is None:
            return np.zeros(len(recipes))
        batch = np.array([r.effective_batch_size for r in recipes], dtype=float)
        lr = np.array([r.peak_lr for r in recipes])
        return self.steps_fit.log_steps(batch, lr) + np.log(np.maximum(self._step_costs(recipes), 1e-12))

    def recipe_of(self, params: Mapping[str, Any]) -> Recipe:
        import optuna

        return self.space.recipe(optuna.trial.FixedTrial(dict(params)))

    def predict(self, params_list: Sequence[Mapping[str, Any]]) -> list[Prediction]:
        """Predicted time-to-target (with interval) of each configuration, in the study's cost."""
        if not self.usable:
            raise ValueError("no trial reached the target or has a forecast yet")
        recipes = [self.recipe_of(p) for p in params_list]
        log_mean = self._parametric(recipes)
        var = np.zeros(len(recipes))
        if self.steps_fit is not None:
            batch = np.array([r.effective_batch_size for r in recipes], dtype=float)
            var += self.steps_fit.log_steps_sd(batch, np.array([r.peak_lr for r in recipes])) ** 2
        if self.step_time is not None:
            var += self.step_time.log_sigma**2
        if self.gp is not None:
            x = np.stack([self.encoder.encode(p) for p in params_list])
            residual, sd = self.gp.predict(x)
            log_mean = log_mean + residual
            var = var + sd**2
        elif self.usable:
            log_mean = log_mean + self.residual_const[0]
            var = var + self.residual_const[1] ** 2
        var += (self.seed_sigma if self.seed_sigma is not None else _MEASURED_SIGMA) ** 2
        # An unidentified fit (a covariance of 1e16) says nothing beyond "any factor": cap it.
        var = np.minimum(var, _MAX_LOG_SD**2)
        return [
            Prediction(dict(p), r, float(m), float(math.sqrt(v)), self.level)
            for p, r, m, v in zip(params_list, recipes, log_mean, var, strict=True)
        ]

    # ---- search ----------------------------------------------------------------------------

    def candidates(self, n: int = 2000, *, seed: int = 0) -> list[dict[str, Any]]:
        """Samples from the space's distributions, every trial's params, and their neighbourhoods."""
        rng = np.random.default_rng(seed)
        out: list[dict[str, Any]] = [dict(p.params) for p in self.points if not p.diverged]
        ranked = sorted(self.usable, key=lambda p: p.time)[:5]
        for p in ranked:
            for _ in range(n // 10):
                out.append(_perturb(self.space, p.params, rng))
        while len(out) < n + len(self.points) + len(ranked) * (n // 10):
            out.append(sample_params(self.space, rng))
        seen, unique = set(), []
        tried = self._tried_categoricals()
        lr_ranges = self._lr_ranges()
        for params in out:
            key = params_key(params)
            if key in seen or self._categoricals(params) not in tried:
                continue
            seen.add(key)
            unique.append(params)
        # LR stays within 2× of what trials of the same optimizer ran (scaled to the batch by the
        # fitted exponent): the optimum LR is optimizer-specific (Lion's sits well below AdamW's),
        # and the shared LR fit cannot know that from a few trials.
        if lr_ranges:
            recipes = [self.recipe_of(p) for p in unique]
            unique = [
                p
                for p, r in zip(unique, recipes, strict=True)
                if (bounds := lr_ranges.get(r.optimizer_name)) is not None
                and bounds[0] / 2 <= self._scaled_lr(r.effective_batch_size, r.peak_lr) <= bounds[1] * 2
            ]
        return unique

    def _as_measured(self, preds: list[Prediction]) -> list[Prediction]:
        """A configuration that trials ran to the target is predicted by what they measured.

        Its mean is theirs and its sd the seed-to-seed spread over √n, so a configuration no
        trial ran must beat it by its own uncertainty (``risk`` sd's) to be recommended.
        """
        runs: dict[str, list[float]] = {}
        for p in self.points:
            if p.measured:
                runs.setdefault(params_key(p.params), []).append(math.log(p.time))
        sigma = self.seed_sigma if self.seed_sigma is not None else _MEASURED_SIGMA
        out = []
        for pred in preds:
            logs = runs.get(params_key(pred.params))
            if logs:
                pred = replace(pred, log_mean=float(np.mean(logs)), log_sd=sigma / math.sqrt(len(logs)))
            out.append(pred)
        return out

    def _lr_ranges(self) -> dict[str, tuple[float, float]]:
        """Per optimizer, the lowest and highest batch-scaled LR a non-diverged trial ran."""
        out: dict[str, tuple[float, float]] = {}
        for p in self.points:
            if p.diverged:
                continue
            lr = self._scaled_lr(p.batch, p.lr)
            low, high = out.get(p.recipe.get("optimizer", "adamw"), (lr, lr))
            out[p.recipe.get("optimizer", "adamw")] = (min(low, lr), max(high, lr))
        return out

    def _categoricals(self, params: Mapping[str, Any]) -> str:
        """The choices no parametric fit models (schedule, optimizer, warm-up choices, clipping …)."""
        from optuna.distributions import CategoricalDistribution

        return json.dumps(
            {
                k: params.get(k)
                for k, d in self.encoder.distributions.items()
                if isinstance(d, CategoricalDistribution) and k.split(".")[-1] not in _MODELLED
            },
            sort_keys=True,
            default=str,
        )

    def _tried_categoricals(self) -> set[str]:
        """Combinations of unmodelled choices that some trial reached the target with.

        Batch, LR, precision and world size move freely (the fits say how they scale); a
        schedule or optimizer no reached trial used is never recommended on the regression's
        extrapolation alone — with a handful of trials that guess is the commonest bad pick.
        """
        measured = [p for p in self.usable if p.measured] or self.usable
        return {self._categoricals(p.params) for p in measured}

    def top(
        self,
        k: int = 1,
        *,
        n_candidates: int = 2000,
        seed: int = 0,
        min_distance: float = 0.1,
        risk: float | None = None,
    ) -> list[Prediction]:
        """The ``k`` best candidates by mean + ½ sd (log scale), fastest first.

        Each pick lies at least ``min_distance`` (encoded space, ranges scaled to [0, 1]) from
        the ones before it, so ``confirm --top 3`` runs three configurations, not one three times.
        Raises ``ValueError`` before any trial reached the target.
        """
        if not any(p.measured for p in self.points):
            # Forecasts alone extrapolate from prefixes; scaled again they predicted nonsense
            # (about one second on the charlm demo), so a prediction needs a measured crossing.
            raise ValueError("no trial reached the target yet: nothing to scale from")
        candidates = self.candidates(n_candidates, seed=seed)
        preds = [
            p
            for p in self.predict(candidates)
            if self._scaled_lr(p.recipe.effective_batch_size, p.recipe.peak_lr) < self.diverged_scaled_lr
        ]
        preds = self._as_measured(preds)
        risk = _RISK if risk is None else risk
        preds.sort(key=lambda p: p.log_mean + risk * p.log_sd)
        chosen: list[Prediction] = []
        codes: list[np.ndarray] = []
        for pred in preds:
            code = self.encoder.encode(pred.params)
            if all(np.sqrt(np.sum((code - c) ** 2)) >= min_distance for c in codes):
                chosen.append(pred)
                codes.append(code)
                if len(chosen) == k:
                    break
        return chosen


def _draw(param: Param, rng: np.random.Generator, out: dict[str, Any]) -> None:
    if param.is_fixed:
        value = param.value
    elif param.choices is not None:
        value = param.choices[int(rng.integers(len(param.choices)))]
        out[param.optuna_name] = value
    else:
        value = _draw_range(param, rng.random())
        out[param.optuna_name] = value
    for child in param.children.get(value, ()):
        _draw(child, rng, out)


def _draw_range(param: Param, u: float) -> float | int:
    low, high = float(param.low), float(param.high)  # type: ignore[arg-type]
    value = (
        math.exp(math.log(low) + u * (math.log(high) - math.log(low)))
        if param.log
        else low + u * (high - low)
    )
    if param.step:
        value = low + round((value - low) / float(param.step)) * float(param.step)
    value = min(max(value, low), high)
    return int(round(value)) if param.is_int else float(value)


def sample_params(space: SearchSpace, rng: np.random.Generator) -> dict[str, Any]:
    """One configuration drawn uniformly (log-uniformly where the space says log)."""
    out: dict[str, Any] = {}
    for param in space.params:
        _draw(param, rng, out)
    return out


def _perturb(space: SearchSpace, params: Mapping[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    """A neighbour: ranges moved by ~10% of their (log) width, a choice switched now and then."""
    out: dict[str, Any] = {}

    def walk(param: Param) -> None:
        if param.is_fixed:
            value = param.value
        elif param.choices is not None:
            value = params.get(param.optuna_name, param.choices[0])
            if rng.random() < 0.15 or value not in param.choices:
                value = param.choices[int(rng.integers(len(param.choices)))]
            out[param.optuna_name] = value
        else:
            current = params.get(param.optuna_name)
            if current is None:
                u = rng.random()
            else:
                low, high, x = float(param.low), float(param.high), float(current)  # type: ignore[arg-type]
                if param.log:
                    low, high, x = math.log(low), math.log(high), math.log(x)
                u = (x - low) / (high - low) if high > low else 0.5
                u = float(np.clip(u + rng.normal(0, 0.1), 0, 1))
            value = _draw_range(param, u)
            out[param.optuna_name] = value
        for child in param.children.get(value, ()):
            walk(child)

    for param in space.params:
        walk(param)
    return out
