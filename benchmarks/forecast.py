"""Outcome-independent forecast benchmark on recorded learning curves, leave-one-workload-out.

Every recorded run of a workload (complete, never-reaching and diverged runs alike) is cut at
fixed fractions of its *planned* run (``horizon_samples``: 10%, 25%, 50%), never at a fraction of
its own time-to-target (that prefix leaks the answer). At each cut every forecaster sees the
evaluations up to there and forecasts when the curve will cross the target. Targets are chosen
per workload by a rule that looks at no forecaster: quantiles of the best metric over the
workload's complete runs, so that ~35% and ~60% of those runs reach them.

Forecasters: convtune's (``forecast_time_to_target``) with the LR schedule and without it, a line
through the last two points, a power law ``a + b c^-alpha`` fitted by least squares (pow3), and
"2 x the cost so far"; and convtune's told ten other runs of the same workload, standing in for a
study's finished trials: read as references (``convtune-refs``), through them a reach line
(``convtune-line``, ``convtune-lower``: check L) or a logit offset on ``probability``
(``convtune-shift``: check M). Whatever convtune learns (the calibration of its crossing distribution)
is fitted leave-one-workload-out: the figures of a workload come from a calibration fitted on
the *other* workloads. Workloads the forecaster was developed on (``HOME``: charlm, digits) are
used for fitting only, never reported.

Scores, per workload and cut (cost = samples):

* on curves that reach the target later in the planned run: median relative error of the
  estimate (an estimate beyond 2x the true crossing, or infinite, counts as "never" and as an
  error of 1), share within 20%, share "never", 80%-interval coverage (and what a forecast
  with the same probabilities could cover were they right: :func:`coverage_bound`), pairwise
  ranking accuracy (of two curves at the same cut, which reaches first; ties count half);
* on curves that never reach within the planned run: share called "not within the run"
  (estimate beyond the horizon);
* calibration of ``probability`` (reach within the planned run) and of
  ``Forecast.probability_before(t)`` at the horizon and at other curves' true crossings: the
  largest gap between the mean forecast and the observed rate over deciles holding >= 30 cases;
* the low tail of ``probability_before(t)`` (what a pruner stops on): how many forecasts fell
  below 0.002 and 0.01, and how many of those crossed by ``t`` all the same;
* ms per call (CPU time of the raw and the calibrated stage, median);
* what a single reach threshold would trade ("never" among runs that reach against non-reaching
  runs called so) and the ROC AUC of ``probability``: the limit of the calibrated probability.

Usage::

    python benchmarks/forecast.py                                  # benchmarks/data/corpus + home
    python benchmarks/forecast.py --data DIR_OR_FILE ... --markdown out.md
    python benchmarks/forecast.py --write-calibration convtune/curves/calibration.json
    python benchmarks/forecast.py --data benchmarks/data/corpus \
        --write-heldout-calibrations benchmarks/data/calibrations_heldout   # one per replay fold
    python benchmarks/forecast.py --data DIR ... --no-home \
        --calibration convtune/curves/calibration.json          # one fixed table, as a user gets it
    python benchmarks/forecast.py --data DIR ... --fold-by-data [--report DIR ...]   # folders held out whole
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import os
import pickle
import statistics
import sys
import time
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import least_squares

from convtune.config.target import Target
from convtune.curves import LRSchedule, shift_probability, study_offset, time_to_target
from convtune.curves._calibration import (
    CrossingCalibration,
    ahead,
    blend_estimates,
    fit_blend,
    fit_blow_up,
    fit_threshold,
)
from convtune.curves._forecast import Forecast, RawForecast, point_estimate, raw_forecast
from convtune.curves._reach import CurveSummary, ReachModel, reach_features, within_features
from convtune.curves._references import PLATEAU_NOISE, ReferenceRun
from convtune.curves._references import moved as moved_noise_units

HERE = Path(__file__).resolve().parent
HOME_FILE = HERE / "data" / "curves.jsonl"
HOME = ("charlm", "digits")
DEFAULT_DATA = [HERE / "data" / "corpus"]
CUTS = (0.10, 0.25, 0.50)
REACH_SHARES = (0.35, 0.60)
METHODS = (
    "convtune",
    "convtune-refs",
    "convtune-line",
    "convtune-lower",
    "convtune-shift",
    "convtune-blind",
    "line2",
    "pow3",
    "2x",
)
CALIBRATED = ("convtune", "convtune-blind")
# Forecasters that are a calibrated one's raw stage and calibration, told more: "convtune-refs"
# also reads the finished runs of its study (``references``), here N_REFERENCES other runs of the
# same workload drawn at random, standing in for a study's finished trials.
WITH_REFERENCES = {"convtune-refs": "convtune"}
# Forecasters that are a calibrated one's forecasts with the reach threshold moved per study
# (check L, :func:`study_line`) by the same drawn runs' own forecasts: "convtune-line" as check L
# wrote it, "convtune-lower" with the line only ever lowered (measured after L failed: seen).
STUDY_LINE = {"convtune-line": "convtune", "convtune-lower": "convtune"}
# A calibrated forecaster whose `probability` is shifted per study (check M, :func:`study_shift`)
# by how the same drawn runs' own forecasts at the same cut came out.
STUDY_SHIFT = {"convtune-shift": "convtune"}
N_REFERENCES = 10
MIN_DECILE = 30


# ---- data -------------------------------------------------------------------------------------


@dataclass
class Run:
    samples: np.ndarray
    metric: np.ndarray
    horizon: float
    schedule: LRSchedule | None
    diverged: bool
    schedule_name: str = "?"


@dataclass
class Workload:
    name: str
    metric: str
    maximize: bool
    runs: list[Run] = field(default_factory=list)
    source: str = ""  # the --data entry it was loaded from ("" for the home workloads)

    @property
    def home(self) -> bool:
        return self.name in HOME


def _lines(path: Path) -> Iterable[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as fh:  # type: ignore[operator]
        yield from fh


def _floats(xs: list[Any]) -> np.ndarray:
    return np.asarray([math.nan if x is None else float(x) for x in xs], dtype=float)


def load_grid_file(path: Path) -> Workload | None:
    """One workload in the convtune grid v1 format (header line, then one run per line)."""
    lines = iter(_lines(path))
    try:
        header = json.loads(next(lines))
    except (StopIteration, json.JSONDecodeError):
        return None
    if header.get("convtune_grid") != 1:
        return None
    w = Workload(str(header["workload"]), str(header["metric"]), header.get("direction") == "maximize")
    for line in lines:
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line being written
        curve = rec["curve"]
        sched = rec.get("schedule")
        w.runs.append(
            Run(
                samples=_floats(curve["samples"]),
                metric=_floats(curve["metric"]),
                horizon=float(rec["horizon_samples"]),
                schedule=LRSchedule.from_dict(sched) if sched else None,
                diverged=rec.get("status") == "diverged",
                schedule_name=str((rec.get("knobs") or {}).get("schedule", "?")),
            )
        )
    return w


def load_home(path: Path = HOME_FILE) -> list[Workload]:
    """The two home workloads, from ``benchmarks/record_curves.py``'s older format."""
    out: dict[str, Workload] = {}
    for line in _lines(path):
        rec = json.loads(line)
        name = rec["workload"]
        w = out.setdefault(name, Workload(name, rec["metric"], rec["metric"] == "accuracy"))
        ev = rec["evals"]
        metric = _floats(ev["metric"])
        w.runs.append(
            Run(
                samples=_floats(ev["samples"]),
                metric=metric,
                horizon=float(rec["budget_samples"]),
                schedule=LRSchedule.from_dict(rec["schedule"]),
                diverged=not bool(np.all(np.isfinite(metric))),
            )
        )
    return list(out.values())


def load_all(paths: list[Path], home: bool, max_runs: int | None = None) -> list[Workload]:
    files: list[tuple[Path, str]] = []
    for p in paths:
        if p.is_dir():
            files += [(q, str(p)) for q in sorted(p.iterdir()) if q.name.endswith((".jsonl", ".jsonl.gz"))]
        elif p.exists():
            files.append((p, str(p)))
    workloads = []
    for f, source in files:
        w = load_grid_file(f)
        if w is not None and len(w.runs) >= 10:
            w.source = source
            workloads.append(w)
    if home and HOME_FILE.exists():
        workloads += load_home()
    if max_runs is not None:
        for w in workloads:
            w.runs = w.runs[:max_runs]
    return workloads


def targets_for(w: Workload) -> list[Target]:
    """Target levels reached by ~35% / ~60% of the workload's complete runs."""
    best = []
    for r in w.runs:
        ok = np.isfinite(r.metric)
        if r.diverged or not ok.any():
            continue
        best.append(float(np.max(r.metric[ok]) if w.maximize else np.min(r.metric[ok])))
    out = []
    for share in REACH_SHARES:
        q = 1.0 - share if w.maximize else share
        value = float(f"{np.quantile(best, q):.5g}")
        out.append(Target("m", ">=" if w.maximize else "<=", value))
    return out


# ---- baselines --------------------------------------------------------------------------------


def _oriented(values: np.ndarray, target: Target) -> tuple[np.ndarray, float]:
    sign = 1.0 if target.lower_is_better else -1.0
    return sign * values, sign * target.value


def line2(c: np.ndarray, v: np.ndarray, target: Target) -> float:
    """A line through the last two points, to the target (``inf`` if not improving)."""
    if c.size < 2 or not np.all(np.isfinite(v[-2:])):
        return math.inf
    y, yt = _oriented(v[-2:], target)
    slope = (y[1] - y[0]) / max(c[-1] - c[-2], 1e-300)
    if not slope < 0:
        return math.inf
    return float(c[-1] + (yt - y[1]) / slope)


def pow3(c: np.ndarray, v: np.ndarray, target: Target) -> float:
    """``a + b c^-alpha`` by least squares on the prefix, solved for the target."""
    ok = np.isfinite(v) & (c > 0)
    if np.count_nonzero(ok) < 3:
        return math.inf
    y, yt = _oriented(v[ok], target)
    u = c[ok] / c[ok][-1]
    span = max(float(np.ptp(y)), 1e-9)

    def resid(th: np.ndarray) -> np.ndarray:
        return th[0] + th[1] * u ** -th[2] - y

    x0 = np.array([float(np.min(y)) - 0.1 * span, span, 0.5])
    try:
        res = least_squares(resid, x0, bounds=([-np.inf, 0.0, 0.01], [np.inf, np.inf, 5.0]), max_nfev=200)
    except ValueError:
        return math.inf
    a, b, alpha = res.x
    if not yt > a or b <= 0:
        return math.inf
    return float(c[ok][-1] * (b / (yt - a)) ** (1.0 / alpha))


def twice(c: np.ndarray, v: np.ndarray, target: Target) -> float:
    return 2.0 * float(c[-1]) if c.size and c[-1] > 0 else math.inf


BASELINES: dict[str, Callable[[np.ndarray, np.ndarray, Target], float]] = {
    "line2": line2,
    "pow3": pow3,
    "2x": twice,
}


# ---- cases ------------------------------------------------------------------------------------


@dataclass
class Case:
    workload: str
    target_index: int
    cut: float
    c_last: float
    horizon: float
    truth: float  # measured crossing over the whole run; inf: never within the planned run
    others: np.ndarray  # true crossings of the workload's other runs (same target), for calibration
    estimates: dict[str, float] = field(default_factory=dict)
    raw: dict[str, RawForecast] = field(default_factory=dict)
    raw_ms: dict[str, float] = field(default_factory=dict)
    calibrated_ms: dict[str, float] = field(default_factory=dict)
    forecasts: dict[str, Forecast] = field(default_factory=dict)
    # Per calibrated method, the estimate if called reaching (what another reach threshold would
    # have said, with ``called_at``); None where no threshold applies (already reached, diverged).
    given_reach: dict[str, float | None] = field(default_factory=dict)
    schedule_name: str = "?"
    # Finished runs of the same workload (same target) a study-aware forecast may read, and
    # their indices among the workload's runs (``run_index``).
    references: list[ReferenceRun] = field(default_factory=list)
    reference_ids: tuple[int, ...] = ()
    run_index: int = -1


# Raw forecasts are the slow part; the corpus grows while it is being recorded, so they are kept
# between runs, keyed by the curve, the cut, and the source of convtune.curves.
_CACHE: dict[tuple[str, str, float, str], tuple[RawForecast, float]] = {}
CACHE_DIR = Path.home() / ".cache" / "convtune-forecast-bench"


def _code_digest() -> str:
    """What the raw stage depends on: the curve models, the raw forecast's own code, and the
    numerical libraries under them (a new numpy or scipy moves a few fits in the last digits)."""
    import inspect

    import scipy

    import convtune.curves._forecast as fc

    h = hashlib.sha1(f"numpy {np.__version__} scipy {scipy.__version__}".encode())
    folder = Path(fc.__file__).parent
    for name in ("_models.py", "_schedule.py", "_measure.py", "_prior.py"):
        h.update((folder / name).read_bytes())
    for fn in (
        fc.raw_forecast,
        fc._local_trend_crossings,
        fc._family_weights,
        fc._defensive,
        fc._crossings,
        fc._first_noisy_crossings,
        fc._future_evals,
        fc._blew_up,
        fc._warmup_end,
        fc._two_point_crossing,
    ):
        h.update(inspect.getsource(fn).encode())
    calibrated_stage = ("_N_KNOTS",)
    consts = {k: v for k, v in vars(fc).items() if k[1:].isupper() and k not in calibrated_stage}
    h.update(repr(sorted((k, repr(v)) for k, v in consts.items())).encode())
    return h.hexdigest()[:12]


def _run_digest(run: Run) -> str:
    h = hashlib.sha1(run.samples.tobytes())
    h.update(run.metric.tobytes())
    h.update(str(run.horizon).encode())
    if run.schedule is not None:
        h.update(run.schedule.costs.tobytes())
        h.update(run.schedule.lrs.tobytes())
    return h.hexdigest()[:16]


def load_cache() -> Path:
    path = CACHE_DIR / f"raw-{_code_digest()}.pkl"
    if path.exists():
        try:
            _CACHE.update(pickle.loads(path.read_bytes()))
        except (pickle.UnpicklingError, EOFError, AttributeError):
            pass
    return path


def save_cache(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # One temporary file per process: two benchmarks may save the same cache at once.
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(pickle.dumps(_CACHE))
    tmp.replace(path)


def build_cases(w: Workload, cuts: tuple[float, ...], progress: bool = False) -> list[Case]:
    cases: list[Case] = []
    for ti, target in enumerate(targets_for(w)):
        truths = [math.inf if r.diverged else time_to_target(r.samples, r.metric, target) for r in w.runs]
        finite = np.array([t for t in truths if math.isfinite(t)])
        refs = [ReferenceRun.of(r.samples, r.metric, target) for r in w.runs]
        for ri, (run, truth) in enumerate(zip(w.runs, truths, strict=True)):
            rng = np.random.default_rng(ri)
            others = finite[finite != truth]
            others = rng.choice(others, size=min(5, others.size), replace=False) if others.size else others
            pool = [j for j in range(len(w.runs)) if j != ri]
            drawn = np.random.default_rng([ri, ti, 16]).permutation(pool)[:N_REFERENCES]
            references = [refs[int(j)] for j in drawn]
            for cut in cuts:
                seen = run.samples <= cut * run.horizon + 1e-9
                c, v = run.samples[seen], run.metric[seen]
                if math.isfinite(time_to_target(c, v, target)):
                    continue  # already reached: nothing to forecast
                case = Case(w.name, ti, cut, float(c[-1]) if c.size else 0.0, run.horizon, truth, others)
                case.schedule_name = run.schedule_name
                case.references = references
                case.reference_ids = tuple(int(j) for j in drawn)
                case.run_index = ri
                for name, fn in BASELINES.items():
                    case.estimates[name] = fn(c, v, target)
                for name in CALIBRATED:
                    key = (_run_digest(run), str(target), cut, name)
                    if key not in _CACHE:
                        sched = run.schedule if name == "convtune" else None
                        t0 = time.process_time()
                        raw = raw_forecast(c, v, target, schedule=sched, horizon=run.horizon)
                        _CACHE[key] = (raw, 1e3 * (time.process_time() - t0))
                    raw, case.raw_ms[name] = _CACHE[key]
                    if raw.final is None:
                        sched = run.schedule if name == "convtune" else None
                        raw = replace(raw, summary=CurveSummary.of(c, v, target, sched, raw.horizon))
                    case.raw[name] = raw
                cases.append(case)
        if progress:
            print(f"  {w.name} target {target}: {len(cases)} cases", file=sys.stderr, flush=True)
    return cases


def calibration_costs(case: Case) -> np.ndarray:
    """Costs at which a forecast's crossing probability is checked (all within the planned run)."""
    ts = [case.horizon] + [m * case.c_last for m in (1.25, 1.5, 2.0, 3.0, 5.0)] + list(case.others)
    ts = np.array([t for t in ts if case.c_last < t <= case.horizon])
    return np.unique(ts)


def fit_calibration(
    cases: list[Case], method: str, fitted_on: list[str], with_reach: bool = True, with_within: bool = False
) -> CrossingCalibration:
    keys, raw, outcome, names = [], [], [], []
    for case in cases:
        r = case.raw[method]
        if r.final is not None:
            continue
        ts = calibration_costs(case)
        if ts.size == 0:
            continue
        keys += [ahead(r.key, t, case.horizon) for t in ts]
        raw += list(r.cdf(ts))
        outcome += list((case.truth <= ts).astype(float))
        names += [case.workload] * ts.size
    weight = equal_workloads(names)
    cal = CrossingCalibration.fit(keys, raw, outcome, weight, fitted_on=sorted(fitted_on))
    # Each stage reads the forecasts of the ones before it: reach models, then blends, then thresholds.
    cal = replace(cal, reach=fit_reach_models(cases, method) if with_reach else {})
    blown = [math.isfinite(c.truth) for c in cases if c.raw[method].blew_up]
    cal = replace(cal, blow_up=fit_blow_up(blown))
    cal = replace(cal, within=fit_within_models(cases, method) if with_within else {})
    cal = replace(cal, blends=fit_blends(cases, method, cal))
    return replace(cal, thresholds=fit_thresholds(cases, method, cal))


def equal_workloads(names: Sequence[str]) -> np.ndarray:
    """A weight per record, ``1 / (records of its workload)``: each workload counts the same."""
    count = Counter(names)
    return np.array([1.0 / count[n] for n in names])


def fit_per_situation(rows: Mapping[str, list[tuple[str, np.ndarray, float]]]) -> dict[str, ReachModel]:
    """A :class:`ReachModel` per situation from its (workload, features, outcome) records, each
    workload weighing the same; none where fewer than 50 records or one outcome only."""
    models: dict[str, ReachModel] = {}
    for key, recs in rows.items():
        y = np.array([rec[2] for rec in recs])
        if len(recs) < 50 or y.min() == y.max():
            continue
        weight = equal_workloads([rec[0] for rec in recs])
        models[key] = ReachModel.fit(np.array([rec[1] for rec in recs]), y, weight)
    return models


def fit_reach_models(cases: list[Case], method: str) -> dict[str, ReachModel]:
    """Per situation, the "crossed by t" model of :mod:`convtune.curves._reach`, on the same
    (forecast, cost) records as the maps, each workload weighing the same."""
    rows: dict[str, list[tuple[str, np.ndarray, float]]] = defaultdict(list)
    for case in cases:
        r = case.raw[method]
        if r.final is not None or r.summary is None:
            continue
        for t in calibration_costs(case):
            x = reach_features(r.summary, float(r.cdf(t)), float(t))
            rows[r.key].append((case.workload, x, float(case.truth <= t)))
    return fit_per_situation(rows)


def fitting_references(case: Case) -> list[ReferenceRun]:
    """A random number (0 to all) of the case's references, drawn once per case: a study's
    forecasts are made with anywhere from none to many finished runs, so the within-the-run model
    is fitted (and its blends and thresholds chosen) on forecasts told that many."""
    seed = [
        zlib.crc32(case.workload.encode()),
        case.target_index,
        int(round(case.cut * 1000)),
        int(case.c_last),
    ]
    rng = np.random.default_rng(seed)
    k = int(rng.integers(0, len(case.references) + 1))
    return [case.references[int(i)] for i in rng.permutation(len(case.references))[:k]]


def fit_within_models(cases: list[Case], method: str) -> dict[str, ReachModel]:
    """Per situation, the within-the-run model (check R, docs/benchmarks.md): "crossed by the
    planned end" from :func:`convtune.curves._reach.within_features`, each case told
    :func:`fitting_references`, each workload weighing the same."""
    rows: dict[str, list[tuple[str, np.ndarray, float]]] = defaultdict(list)
    for case in cases:
        r = case.raw[method]
        if r.final is not None or r.summary is None or not case.horizon > case.c_last:
            continue
        x = within_features(r.summary, float(r.cdf(case.horizon)), case.horizon, fitting_references(case))
        rows[r.key].append((case.workload, x, float(case.truth <= case.horizon)))
    return fit_per_situation(rows)


def fit_blends(cases: list[Case], method: str, cal: CrossingCalibration) -> dict[str, tuple[float, float]]:
    """Per situation (and pooled per head), the blend of :func:`fit_blend`, on the fitting cases
    that reach later in their planned run."""
    groups: dict[str, list[tuple[str, np.ndarray, float]]] = defaultdict(list)
    for case in cases:
        r = case.raw[method]
        if r.final is not None or not math.isfinite(case.truth):
            continue
        f = r.calibrated(cal, references=fitting_references(case) if cal.within else ())
        rec = (
            case.workload,
            r.estimates_given_reach(np.asarray(f.cdf_costs), np.asarray(f.cdf_probs), f.probability),
            case.truth,
        )
        groups[r.key].append(rec)
        groups[r.key.split(":")[0] + ":all"].append(rec)
    return {
        key: fit_blend(np.array([r[1] for r in recs]), [r[2] for r in recs], [r[0] for r in recs])
        for key, recs in groups.items()
        if len(recs) >= 30
    }


def given_reach_estimate(r: RawForecast, f: Forecast, cal: CrossingCalibration) -> float:
    """Where ``f`` (``r`` calibrated with ``cal``) says the curve crosses if it is called
    reaching: the estimate a reach threshold weighs against "not within the run" (see
    ``point_estimate``, which makes that call)."""
    costs, probs = np.asarray(f.cdf_costs), np.asarray(f.cdf_probs)
    return float(blend_estimates(r.estimates_given_reach(costs, probs, f.probability), cal.blend(r.key))[0])


def called_at(f: Forecast, threshold: float, given_reach: float) -> float:
    """``f``'s point estimate had its situation's reach threshold been ``threshold``."""
    return point_estimate(
        np.asarray(f.cdf_costs), np.asarray(f.cdf_probs), f.probability, threshold, given_reach
    )


def study_line(
    threshold: float, reached: Sequence[float], missed: Sequence[float], rise: bool = True
) -> float:
    """The reach threshold ``threshold`` moved by a study's finished runs (check L): ``reached``
    and ``missed`` are the probabilities the same forecaster gave, at the same share of their
    own planned runs, to those that went on to reach within their run and to those that did not.

    "Never" is not said below a probability at which one of the study's runs still reached
    (under exchangeable runs a run that reaches then falls under the line with chance at most
    ``1 / (len(reached) + 1)``); where the study's runs separate (every run that missed stood
    lower than every run that reached), the line may rise to halfway between. With no run that
    reached there is no evidence against the line, and it stays. ``rise=False``: the line is only
    ever lowered.

    >>> study_line(0.27, [0.05, 0.6], [0.01])
    0.05
    >>> study_line(0.27, [0.6, 0.8], [0.4, 0.1])
    0.5
    >>> study_line(0.27, [], [0.4])
    0.27
    """
    if not reached:
        return threshold
    lowest_reached = min(reached)
    line = min(threshold, lowest_reached)
    if rise and missed and max(missed) < lowest_reached:
        line = max(line, 0.5 * (max(missed) + lowest_reached))
    return line


def cases_by_run(cases: list[Case]) -> dict[tuple[str, int, float, int], Case]:
    return {(c.workload, c.target_index, c.cut, c.run_index): c for c in cases}


def reference_outcomes(
    case: Case, by_run: Mapping[tuple[str, int, float, int], Case], method: str
) -> tuple[list[float], list[float]]:
    """What ``method`` gave ``case``'s references at the same cut, split by how they ended: the
    probabilities of those that went on to reach within their run, and of those that did not.
    References already at the target at that cut have no forecast there and are left out."""
    refs = [by_run.get((case.workload, case.target_index, case.cut, j)) for j in case.reference_ids]
    known = [r for r in refs if r is not None]
    return (
        [r.forecasts[method].probability for r in known if r.truth <= r.horizon],
        [r.forecasts[method].probability for r in known if not r.truth <= r.horizon],
    )


def apply_study_line(cases: list[Case], method: str, cal: CrossingCalibration) -> None:
    """Each case's ``STUDY_LINE`` forecast: its base forecast called at :func:`study_line` drawn
    from its references' base forecasts at the same cut (those already at the target there say
    nothing of a line and are left out)."""
    base = STUDY_LINE[method]
    by_run = cases_by_run(cases)
    for c in cases:
        f, raw = c.forecasts[base], c.raw[base]
        given_reach = c.given_reach.get(base)
        if given_reach is None:  # already reached or blew up: no threshold applies
            c.forecasts[method], c.given_reach[method] = f, None
            continue
        line = study_line(
            cal.threshold(raw.key), *reference_outcomes(c, by_run, base), rise=method != "convtune-lower"
        )
        estimate = called_at(f, line, given_reach)
        c.forecasts[method] = replace(
            f, estimate=estimate, low=min(f.low, estimate), high=max(f.high, estimate)
        )
        c.given_reach[method] = given_reach


def study_shift(probability: float, reached: Sequence[float], missed: Sequence[float]) -> float:
    """``probability`` moved by a study's finished runs (check M): on the logit scale, by the one
    offset (:func:`convtune.curves.study_offset`, a normal prior of sd 1) that best fits how the
    same forecaster's probabilities for those runs (``reached``: those that went on to reach
    within their run, ``missed``: those that did not) came out. The calibration was fitted
    pooling workloads; the offset is this workload's own bias.

    >>> study_shift(0.2, [0.1, 0.2, 0.3], []) > 0.2  # its runs reached more often than forecast
    True
    >>> study_shift(0.2, [], [])
    0.2
    """
    offset = study_offset([*reached, *missed], [True] * len(reached) + [False] * len(missed))
    return shift_probability(probability, offset)


def apply_study_shift(cases: list[Case], method: str, cal: CrossingCalibration) -> None:
    """Each case's ``STUDY_SHIFT`` forecast: its base forecast's crossing distribution scaled so
    its probability of reaching within the run is :func:`study_shift`'s, from its references'
    base forecasts at the same cut (those already at the target there are left out), and called
    at its situation's shipped reach threshold."""
    base = STUDY_SHIFT[method]
    by_run = cases_by_run(cases)
    for c in cases:
        f, raw = c.forecasts[base], c.raw[base]
        given_reach = c.given_reach.get(base)
        if given_reach is None or not f.probability > 0:  # no threshold applies, or nothing to scale
            c.forecasts[method], c.given_reach[method] = f, given_reach
            continue
        shifted = study_shift(f.probability, *reference_outcomes(c, by_run, base))
        costs = np.asarray(f.cdf_costs)
        probs = np.minimum(np.asarray(f.cdf_probs) * (shifted / f.probability), 1.0)
        estimate = point_estimate(costs, probs, shifted, cal.threshold(raw.key), given_reach)
        c.forecasts[method] = replace(
            f,
            estimate=estimate,
            low=min(f.low, estimate),
            high=max(f.high, estimate),
            probability=shifted,
            cdf_probs=tuple(float(q) for q in probs),
        )
        c.given_reach[method] = given_reach


def fit_thresholds(cases: list[Case], method: str, cal: CrossingCalibration) -> dict[str, float]:
    """Per situation (and pooled per head), the reach threshold of :func:`fit_threshold`: the
    largest under which at most 5% of the fitting cases that reach later (each workload weighing
    the same) are called "never"."""
    records: list[tuple[str, str, float, bool, bool]] = []
    for case in cases:
        r = case.raw[method]
        if r.final is not None or not math.isfinite(case.truth):
            continue
        f = r.calibrated(cal, references=fitting_references(case) if cal.within else ())
        given_reach = given_reach_estimate(r, f, cal)
        records.append(
            (
                case.workload,
                r.key,
                f.probability,
                not called_at(f, math.inf, given_reach) <= 2 * case.truth,
                not called_at(f, 0.0, given_reach) <= 2 * case.truth,
            )
        )
    out: dict[str, float] = {}
    groups: dict[str, list[tuple[str, str, float, bool, bool]]] = defaultdict(list)
    for rec in records:
        groups[rec[1]].append(rec)
        groups[rec[1].split(":")[0] + ":all"].append(rec)
    for key, recs in groups.items():
        if len(recs) < 30:
            continue
        out[key] = fit_threshold(
            [rec[2] for rec in recs],
            [rec[3] for rec in recs],
            [rec[4] for rec in recs],
            equal_workloads([rec[0] for rec in recs]),
        )
    return out


# ---- scoring ----------------------------------------------------------------------------------


def _rank_accuracy(pairs: list[tuple[float, float]]) -> float:
    if len(pairs) < 2:
        return math.nan
    est = np.array([1e300 if not math.isfinite(e) else e for e, _ in pairs])
    tru = np.array([t for _, t in pairs])
    de = np.sign(est[:, None] - est[None, :])
    dt = np.sign(tru[:, None] - tru[None, :])
    mask = np.triu(dt != 0, 1)
    if not mask.any():
        return math.nan
    score = np.where(de == dt, 1.0, np.where(de == 0, 0.5, 0.0))
    return float(score[mask].mean())


def reliability(pred: list[float], obs: list[float], bins: int = 10) -> list[tuple[str, int, float, float]]:
    p, o = np.asarray(pred, dtype=float), np.asarray(obs, dtype=float)
    rows = []
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        sel = (p >= lo) & ((p < hi) if b < bins - 1 else (p <= hi))
        if sel.any():
            rows.append((f"{lo:.1f}-{hi:.1f}", int(sel.sum()), float(p[sel].mean()), float(o[sel].mean())))
    return rows


LOW_TAIL = (0.002, 0.01)


def low_tail(pred: list[float], obs: list[float]) -> list[tuple[float, int, int, float]]:
    """Per bound: how many forecasts fell below it, how many of those crossed all the same, and
    what share of the cases that did not cross fell below it (what a pruner could stop)."""
    p, o = np.asarray(pred), np.asarray(obs)
    negatives = max(int(np.sum(o == 0)), 1)
    return [
        (b, int(np.sum(p < b)), int(np.sum(o[p < b])), float(np.sum((p < b) & (o == 0))) / negatives)
        for b in LOW_TAIL
    ]


def max_gap(pred: list[float], obs: list[float]) -> float:
    gaps = [abs(m - r) for _, n, m, r in reliability(pred, obs) if n >= MIN_DECILE]
    return max(gaps) if gaps else math.nan


def _error(estimate: float, truth: float) -> float:
    """Relative error; an estimate beyond twice the crossing (or infinite) is "never", error 1."""
    return 1.0 if not estimate <= 2.0 * truth else min(1.0, abs(estimate / truth - 1.0))


def score(cases: list[Case], method: str) -> dict[str, float]:
    later = [c for c in cases if math.isfinite(c.truth)]
    never_cases = [c for c in cases if not math.isfinite(c.truth)]
    est = {
        id(c): (c.forecasts[method].estimate if method in c.forecasts else c.estimates[method]) for c in cases
    }
    errs, nev, within = [], [], []
    for c in later:
        e = est[id(c)]
        nev.append(not e <= 2.0 * c.truth)
        err = _error(e, c.truth)
        errs.append(err)
        within.append(err <= 0.2)
    called = [not est[id(c)] <= c.horizon for c in never_cases]
    groups: dict[tuple[int, float], list[tuple[float, float]]] = defaultdict(list)
    for c in later:
        groups[(c.target_index, c.cut)].append((est[id(c)], c.truth))
    ranks = [_rank_accuracy(g) for g in groups.values()]
    ranks = [r for r in ranks if math.isfinite(r)]
    out = {
        "n": float(len(later)),
        "n_never": float(len(never_cases)),
        "median_err": statistics.median(errs) if errs else math.nan,
        "within_20": float(np.mean(within)) if within else math.nan,
        "never": float(np.mean(nev)) if nev else math.nan,
        "not_within_called": float(np.mean(called)) if called else math.nan,
        "rank_acc": float(np.mean(ranks)) if ranks else math.nan,
    }
    if method in CALIBRATED or method in WITH_REFERENCES or method in STUDY_LINE or method in STUDY_SHIFT:
        base = {**WITH_REFERENCES, **STUDY_LINE, **STUDY_SHIFT}.get(method, method)
        fc = [c.forecasts[method] for c in cases]
        cov = [f.low <= c.truth <= f.high for f, c in zip(fc, cases, strict=True) if math.isfinite(c.truth)]
        out["coverage"] = float(np.mean(cov)) if cov else math.nan
        bound = [
            coverage_bound(f.probability, f.level)
            for f, c in zip(fc, cases, strict=True)
            if c.truth <= c.horizon
        ]
        out["coverage_bound"] = float(np.mean(bound)) if bound else math.nan
        probability = [f.probability for f in fc]
        reached = [float(c.truth <= c.horizon) for c in cases]
        out["prob_gap"] = max_gap(probability, reached)
        out["brier"] = float(np.mean((np.array(probability) - np.array(reached)) ** 2)) if cases else math.nan
        bp, bo = before_pairs(cases, method)
        out["before_gap"] = max_gap(bp, bo)
        if 0 < sum(reached) < len(reached):
            from sklearn.metrics import roc_auc_score

            out["auc"] = float(roc_auc_score(reached, probability))
        # Both stages: the raw one (kept in the cache with its time) and the calibrated one.
        ms = [c.raw_ms[base] + c.calibrated_ms.get(method, 0.0) for c in cases]
        out["ms"] = statistics.median(ms) if cases else math.nan
    return out


def coverage_bound(probability: float, level: float = 0.8) -> float:
    """The chance that a forecast's central ``level`` interval covers the crossing of a curve
    that reached within its planned run, were the forecast's distribution the true one.

    Coverage is scored on the runs that reach only. For a forecast that gives reaching by the
    planned end the chance ``probability``, such a crossing lies where its distribution is
    uniform on ``[0, probability]``, while the interval spans ``[tail, 1 - tail]`` of the whole
    distribution: the lower the chance, the less of the crossings it can cover (none below
    ``tail``). The mean over a workload's reaching runs is what the forecaster would cover were
    its distributions right: issue 16's 70–90% is out of reach of a right forecast whose
    probabilities are low for many runs that reach (docs/benchmarks.md, "What the 80% interval
    can cover").

    Example:
        >>> [round(coverage_bound(p), 3) for p in (1.0, 0.5, 0.3, 0.1)]
        [0.8, 0.8, 0.667, 0.0]
    """
    tail = 0.5 * (1.0 - level)
    if not probability > 0:
        return 0.0
    return max(0.0, min(probability, 1.0 - tail) - tail) / probability


def before_pairs(cases: list[Case], method: str) -> tuple[list[float], list[float]]:
    """``probability_before(t)`` against the outcome, at the horizon and other runs' crossings."""
    pred, obs = [], []
    for c in cases:
        f = c.forecasts[method]
        ts = [c.horizon] + [t for t in c.others if c.c_last < t < c.horizon]
        for t in ts:
            pred.append(f.probability_before(t))
            obs.append(float(c.truth <= t))
    return pred, obs


# ---- driver -----------------------------------------------------------------------------------


def run_benchmark(
    workloads: list[Workload],
    cuts: tuple[float, ...],
    reported: list[str],
    with_reach: bool = True,
    *,
    calibration: CrossingCalibration | None = None,
    fold_of: Mapping[str, str] | None = None,
    with_within: bool = False,
) -> tuple[dict[str, Any], list[Case]]:
    """Score ``reported`` workloads, each with a calibration fitted on the loaded workloads outside
    its fold (by default the fold is the workload itself: leave-one-workload-out; ``fold_of`` maps
    a workload to a wider fold, e.g. its batch). With ``calibration`` nothing is fitted: every
    workload is scored with that one table (the shipped one, as a user gets it)."""
    cases_by: dict[str, list[Case]] = {}
    cache = load_cache()
    for w in workloads:
        cases_by[w.name] = build_cases(w, cuts, progress=True)
        save_cache(cache)
    fold = fold_of if fold_of is not None else {name: name for name in cases_by}
    fitted: dict[str, dict[str, CrossingCalibration]] = {}
    results: dict[str, Any] = {}
    for held in reported:
        if calibration is not None:
            cals = {method: calibration for method in CALIBRATED}
        elif fold[held] in fitted:
            cals = fitted[fold[held]]
        else:
            fitted_on = [name for name in cases_by if fold[name] != fold[held]]
            train = [c for name in fitted_on for c in cases_by[name]]
            cals = {
                method: fit_calibration(train, method, fitted_on, with_reach, with_within)
                for method in CALIBRATED
            }
            fitted[fold[held]] = cals
        for method in (*CALIBRATED, *WITH_REFERENCES):
            base = WITH_REFERENCES.get(method, method)
            cal = cals[base]
            for c in cases_by[held]:
                references = c.references if method in WITH_REFERENCES else ()
                t0 = time.process_time()
                c.forecasts[method] = c.raw[base].calibrated(cal, references=references)
                c.calibrated_ms[method] = 1e3 * (time.process_time() - t0)
                raw, f = c.raw[base], c.forecasts[method]
                c.given_reach[method] = given_reach_estimate(raw, f, cal) if raw.final is None else None
        for method, base in STUDY_LINE.items():
            apply_study_line(cases_by[held], method, cals[base])
        for method, base in STUDY_SHIFT.items():
            apply_study_shift(cases_by[held], method, cals[base])
        for cut in cuts:
            at = [c for c in cases_by[held] if c.cut == cut]
            for method in METHODS:
                results[(held, cut, method)] = score(at, method)
    held_cases = [c for name in reported for c in cases_by[name]]
    return results, held_cases


def fmt(x: float, pct: bool = False) -> str:
    if isinstance(x, float) and math.isnan(x):
        return "–"
    if pct:
        return f"{100 * x:.0f}%"
    if isinstance(x, float) and not x.is_integer():
        return f"{x:.2f}"
    return f"{int(x)}"


def by_schedule(held: list[Case], cuts: tuple[float, ...]) -> list[str]:
    """Median error per LR schedule, all held-out runs that reach later pooled: where knowing
    the schedule helps (convtune against convtune-blind) and where it does not."""
    names = sorted({c.schedule_name for c in held if c.schedule_name != "?"})
    if not names:
        return []
    shown = ("convtune", "convtune-blind", "line2")
    out = ["\nMedian error by LR schedule (held-out runs that reach later, all workloads pooled):\n"]
    out.append(
        "| schedule | "
        + " | ".join(f"{m} @{int(cut * 100)}%" for cut in cuts for m in shown)
        + " | cases that reach (all cuts) |"
    )
    out.append("|---|" + "---|" * (len(cuts) * len(shown) + 1))
    for name in names:
        vals = []
        for cut in cuts:
            at = [c for c in held if c.schedule_name == name and c.cut == cut and math.isfinite(c.truth)]
            for m in shown:
                errs = [
                    _error(c.forecasts[m].estimate if m in c.forecasts else c.estimates[m], c.truth)
                    for c in at
                ]
                vals.append(fmt(statistics.median(errs)) if errs else "–")
        n = sum(1 for c in held if c.schedule_name == name and math.isfinite(c.truth))
        out.append(f"| {name} | " + " | ".join(vals) + f" | {n} |")
    return out


# Buckets of how far a prefix has moved from its first value toward the better, in units of its
# own evaluation noise: a curve on a plateau (stuck, or waiting for a drop) against one that moves.
MOVED_EDGES = (PLATEAU_NOISE, 10.0)


def moved(case: Case, method: str = "convtune") -> float:
    """How far the prefix moved from its first value, in noise units (``nan``: no prefix kept)."""
    base = WITH_REFERENCES.get(method, method)
    summary = case.raw[base].summary if base in case.raw else None
    return math.nan if summary is None else moved_noise_units(summary.y)


def by_moved(held: list[Case], names: list[str], cuts: tuple[float, ...], method: str) -> list[str]:
    """``probability`` against how often the run reached, by how far its prefix had moved: a
    plateau says nothing of whether a drop is coming, so this is where a workload's own habits
    (stuck curves, or late drops) show against a calibration fitted on others."""
    labels = ("< 3σ (plateau)", "3–10σ", "≥ 10σ")
    out = [
        f"\n`probability` by how far the prefix moved from its start ({method}; mean forecast → observed"
        " share that reached within the run, cases):\n"
    ]
    out.append("| workload | moved | " + " | ".join(f"{int(cut * 100)}%" for cut in cuts) + " |")
    out.append("|---|---|" + "---|" * len(cuts))
    bucket = {}
    for c in held:
        m = moved(c, method)
        if method in c.forecasts and not math.isnan(m):
            bucket[id(c)] = int(np.searchsorted(MOVED_EDGES, m, side="right"))
    for name in [*names, "all"]:
        for k, label in enumerate(labels):
            cells, shown = [], False
            for cut in cuts:
                at = [
                    c
                    for c in held
                    if (name == "all" or c.workload == name) and c.cut == cut and bucket.get(id(c)) == k
                ]
                if len(at) < 20:
                    cells.append("–")
                    continue
                shown = True
                p = statistics.fmean(c.forecasts[method].probability for c in at)
                o = statistics.fmean(float(c.truth <= c.horizon) for c in at)
                cells.append(f"{p:.2f} → {o:.2f} ({len(at)})")
            if shown:
                out.append(f"| {name} | {label} | " + " | ".join(cells) + " |")
    return out


def brier_by_moved(held: list[Case], names: list[str]) -> list[str]:
    """Brier score of ``probability`` (reach within the planned run), convtune against
    convtune-refs, on plateau prefixes (moved under 3 noise units) and on all cases, every cut
    pooled: where the study's own runs should help, and whether they cost anything elsewhere."""
    out = [
        "\nBrier score of `probability`, convtune → convtune-refs (all cuts pooled; plateau: the"
        " prefix moved < 3σ; cases in brackets):\n"
    ]
    out.append("| workload | plateau prefixes | all prefixes |")
    out.append("|---|---|---|")

    def brier(cases: list[Case], method: str) -> float:
        return statistics.fmean(
            (c.forecasts[method].probability - float(c.truth <= c.horizon)) ** 2 for c in cases
        )

    for name in [*names, "all"]:
        mine = [c for c in held if (name == "all" or c.workload == name) and "convtune-refs" in c.forecasts]
        plateau = [c for c in mine if moved(c) < MOVED_EDGES[0]]
        cells = []
        for group in (plateau, mine):
            if len(group) < 20:
                cells.append(f"– ({len(group)})")
            else:
                cells.append(
                    f"{brier(group, 'convtune'):.3f} → {brier(group, 'convtune-refs'):.3f} ({len(group)})"
                )
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return out


TRADEOFF_THRESHOLDS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)


def threshold_tradeoff(held: list[Case], names: list[str], cuts: tuple[float, ...], method: str) -> list[str]:
    """What one reach threshold for every situation would trade, per cut: the share of runs
    that reach later called "never" against the share of non-reaching runs called "not within
    the run" (median over held-out workloads), and how well ``probability`` separates the two
    kinds of run at all (ROC AUC of reaching within the run, median over workloads). A measured
    limit of the calibrated probability, not a method: no threshold is chosen here."""
    from sklearn.metrics import roc_auc_score

    def estimate(c: Case, tau: float) -> float:
        f, given_reach = c.forecasts[method], c.given_reach.get(method)
        return f.estimate if given_reach is None else called_at(f, tau, given_reach)

    out = [
        f"\nOne reach threshold for all situations ({method}; median over held-out workloads of "
        '"never" among runs that reach / non-reaching runs called "not within the run"; '
        "the shipped thresholds are fitted per situation):\n"
    ]
    out.append("| threshold | " + " | ".join(f"{int(cut * 100)}%" for cut in cuts) + " |")
    out.append("|---|" + "---|" * len(cuts))
    for tau in TRADEOFF_THRESHOLDS:
        cells = []
        for cut in cuts:
            never, called = [], []
            for n in names:
                at = [c for c in held if c.workload == n and c.cut == cut]
                reach = [c for c in at if math.isfinite(c.truth)]
                miss = [c for c in at if not math.isfinite(c.truth)]
                if reach:
                    never.append(float(np.mean([not estimate(c, tau) <= 2 * c.truth for c in reach])))
                if miss:
                    called.append(float(np.mean([not estimate(c, tau) <= c.horizon for c in miss])))
            cells.append(f"{fmt(statistics.median(never), True)} / {fmt(statistics.median(called), True)}")
        out.append(f"| {tau:.2f} | " + " | ".join(cells) + " |")
    aucs = []
    for cut in cuts:
        per = []
        for n in names:
            at = [c for c in held if c.workload == n and c.cut == cut]
            y = [c.truth <= c.horizon for c in at]
            if 0 < sum(y) < len(y):
                per.append(roc_auc_score(y, [c.forecasts[method].probability for c in at]))
        aucs.append(f"{statistics.median(per):.2f} ({min(per):.2f}–{max(per):.2f})" if per else "–")
    out.append("| ROC AUC of `probability` (worst–best workload) | " + " | ".join(aucs) + " |")
    return out


def goals_table(
    results: dict[str, Any], names: list[str], cuts: tuple[float, ...], method: str = "convtune"
) -> list[str]:
    """Issue 16's goals for convtune's forecaster, counted per held-out workload at each cut:
    a goal met at the median workload can still fail on several (the README quotes these)."""

    def beats(n: str, cut: float) -> bool:
        mine = results[(n, cut, method)]["median_err"]
        return all(mine < results[(n, cut, b)]["median_err"] for b in ("line2", "2x"))

    goals: list[tuple[str, Callable[[str, float], bool]]] = [
        ('"never" ≤ 5% of the runs that reach', lambda n, c: results[(n, c, method)]["never"] <= 0.05),
        (
            "≥ 80% of non-reaching runs called so",
            lambda n, c: results[(n, c, method)]["not_within_called"] >= 0.8,
        ),
        (
            "both of the two above",
            lambda n, c: (
                results[(n, c, method)]["never"] <= 0.05
                and results[(n, c, method)]["not_within_called"] >= 0.8
            ),
        ),
        ("80% interval covers 70–90%", lambda n, c: 0.7 <= results[(n, c, method)]["coverage"] <= 0.9),
        (
            # Not a goal: where even a right forecast with these probabilities would cover < 70%,
            # the goal above waits on the probabilities, not the interval (`coverage_bound`).
            "(a right forecast with these probabilities would cover ≥ 70%)",
            lambda n, c: results[(n, c, method)]["coverage_bound"] >= 0.7,
        ),
        (
            "`probability` within ±0.1 in every decile (≥ 30 cases)",
            # No decile with 30 cases (nan, tiny test slices only): met, as the goal is worded.
            lambda n, c: not results[(n, c, method)]["prob_gap"] > 0.1,
        ),
        ("median error below the two-point line and 2 × cost so far", beats),
        (
            "with the schedule better than without",
            lambda n, c: (
                results[(n, c, method)]["median_err"] < results[(n, c, "convtune-blind")]["median_err"]
            ),
        ),
    ]
    out = [f"\nIssue 16's goals, held-out workloads meeting each ({method}, schedule-aware):\n"]
    out.append("| goal | " + " | ".join(f"{int(cut * 100)}%" for cut in cuts) + " |")
    out.append("|---|" + "---|" * len(cuts))
    for label, test in goals:
        cells = [f"{sum(1 for n in names if test(n, cut))} of {len(names)}" for cut in cuts]
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    medians = [fmt(statistics.median(results[(n, cut, method)]["median_err"] for n in names)) for cut in cuts]
    out.append(
        "| median error, median over workloads (goal ≤ 0.25 at 25%, ≤ 0.15 at 50%) | "
        + " | ".join(medians)
        + " |"
    )
    return out


def tables(results: dict[str, Any], held: list[Case], names: list[str], cuts: tuple[float, ...]) -> str:
    out: list[str] = []
    cols = [
        ("n", "reach later", False),
        ("n_never", "never reach", False),
        ("median_err", "median err", False),
        ("within_20", "within 20%", True),
        ("never", '"never" (reach)', True),
        ("not_within_called", "non-reaching called", True),
        ("coverage", "80% cover", True),
        ("coverage_bound", "cover if calibrated", True),
        ("prob_gap", "prob. gap", False),
        ("before_gap", "before(t) gap", False),
        ("rank_acc", "rank acc.", True),
        ("ms", "ms/call", False),
    ]
    out.append("Median over held-out workloads (" + ", ".join(names) + "):\n")
    out.append("| forecaster | cut | " + " | ".join(h for _, h, _ in cols[2:]) + " |")
    out.append("|---|---|" + "---|" * (len(cols) - 2))
    for method in METHODS:
        for cut in cuts:
            vals = []
            for key, _, pct in cols[2:]:
                xs = [results[(n, cut, method)].get(key, math.nan) for n in names]
                xs = [x for x in xs if not math.isnan(x)]
                vals.append(fmt(statistics.median(xs), pct) if xs else "–")
            out.append(f"| {method} | {int(cut * 100)}% | " + " | ".join(vals) + " |")
    for cut in cuts:
        out.append(f"\nPer held-out workload, cut at {int(cut * 100)}% of the planned run:\n")
        out.append("| workload | forecaster | " + " | ".join(h for _, h, _ in cols) + " |")
        out.append("|---|---|" + "---|" * len(cols))
        for n in names:
            for method in METHODS:
                r = results[(n, cut, method)]
                vals = [fmt(r.get(key, math.nan), pct) for key, _, pct in cols]
                out.append(f"| {n} | {method} | " + " | ".join(vals) + " |")
    out += by_schedule(held, cuts)
    out += goals_table(results, names, cuts)
    out += goals_table(results, names, cuts, "convtune-refs")
    out += goals_table(results, names, cuts, "convtune-line")
    out += goals_table(results, names, cuts, "convtune-shift")
    out += threshold_tradeoff(held, names, cuts, "convtune")
    out += by_moved(held, names, cuts, "convtune")
    out += by_moved(held, names, cuts, "convtune-refs")
    out += brier_by_moved(held, names)
    for method in (*CALIBRATED, *WITH_REFERENCES):
        pred = [c.forecasts[method].probability for c in held]
        obs = [float(c.truth <= c.horizon) for c in held]
        out.append(f"\nReliability of `probability` ({method}, all held-out cases, all cuts):\n")
        out.append("| decile | cases | mean forecast | observed |")
        out.append("|---|---|---|---|")
        out += [f"| {b} | {n} | {m:.2f} | {o:.2f} |" for b, n, m, o in reliability(pred, obs)]
        bp, bo = before_pairs(held, method)
        out.append(
            f"\nReliability of `probability_before(t)` ({method}; t = the horizon and other runs' crossings):\n"
        )
        out.append("| decile | cases | mean forecast | observed |")
        out.append("|---|---|---|---|")
        out += [f"| {b} | {n} | {m:.2f} | {o:.2f} |" for b, n, m, o in reliability(bp, bo)]
        out.append(f"\nLow tail of `probability_before(t)` ({method}; what a pruner stops on):\n")
        out.append("| below | cases | crossed by t all the same | share of the cases that did not cross |")
        out.append("|---|---|---|---|")
        out += [f"| {b} | {n} | {k} | {100 * s:.0f}% |" for b, n, k, s in low_tail(bp, bo)]
    return "\n".join(out)


def write_calibration(cases: list[Case], fitted_on: list[str], path: Path, with_within: bool = False) -> None:
    """Fit the shipped calibration's two heads (schedule-aware, blind) on ``cases`` and write it."""
    cal = fit_calibration(cases, "convtune", fitted_on, with_within=with_within)
    blind = fit_calibration(cases, "convtune-blind", [], with_within=with_within)
    maps = dict(cal.maps)
    maps.update({k: v for k, v in blind.maps.items() if k.startswith("blind")})
    thresholds = {k: v for k, v in cal.thresholds.items() if k.startswith("sched")}
    thresholds.update({k: v for k, v in blind.thresholds.items() if k.startswith("blind")})
    blends = {k: v for k, v in cal.blends.items() if k.startswith("sched")}
    blends.update({k: v for k, v in blind.blends.items() if k.startswith("blind")})
    reach = {k: v for k, v in cal.reach.items() if k.startswith("sched")}
    reach.update({k: v for k, v in blind.reach.items() if k.startswith("blind")})
    within = {k: v for k, v in cal.within.items() if k.startswith("sched")}
    within.update({k: v for k, v in blind.within.items() if k.startswith("blind")})
    # A blow-up is called from the values alone, so both fits see the same ones.
    CrossingCalibration(maps, cal.fitted_on, thresholds, blends, reach, cal.blow_up, within).save(path)
    print(f"wrote {path}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, nargs="*", default=None, help="grid files or folders")
    parser.add_argument("--no-home", action="store_true", help="leave out the home workloads entirely")
    parser.add_argument("--cuts", type=float, nargs="*", default=list(CUTS))
    parser.add_argument("--max-runs", type=int, default=None, help="only the first N runs of each workload")
    parser.add_argument("--markdown", type=Path, default=None, help="also write the tables here")
    parser.add_argument(
        "--write-calibration",
        type=Path,
        default=None,
        help="fit the shipped calibration on every loaded workload and write it here",
    )
    parser.add_argument(
        "--write-heldout-calibrations",
        type=Path,
        default=None,
        metavar="DIR",
        help="for each loaded corpus workload W, fit the calibration on all the others and write "
        "DIR/W.json (what a replay that holds W out calibrates with)",
    )
    parser.add_argument(
        "--heldout-for",
        nargs="+",
        default=None,
        metavar="W",
        help="with --write-heldout-calibrations: write only these workloads' files (the others stay "
        "as they were, e.g. those older replays ran with)",
    )
    parser.add_argument(
        "--dev-home",
        action="store_true",
        help="also score the home workloads (for development only: the forecaster was tuned on them)",
    )
    parser.add_argument(
        "--tables-per-data",
        action="store_true",
        help="print the tables for each --data entry's workloads apart (one leave-one-workload-out "
        "run: every workload's calibration is still fitted on all the others)",
    )
    parser.add_argument(
        "--calibration",
        type=Path,
        default=None,
        metavar="FILE",
        help="score every loaded workload with this calibration table instead of fitting one per "
        "held-out workload (e.g. convtune/curves/calibration.json: what a user's study gets); "
        "only workloads it was not fitted on are held out",
    )
    parser.add_argument(
        "--fold-by-data",
        action="store_true",
        help="hold out each --data entry's workloads together (e.g. a whole batch): a workload is "
        "scored with a calibration fitted on the other entries' workloads and the home ones",
    )
    parser.add_argument(
        "--report",
        type=Path,
        nargs="+",
        default=None,
        metavar="DATA",
        help="report only the workloads of these --data entries (the others are fitted on only); "
        "splits one leave-out run over several processes",
    )
    parser.add_argument(
        "--no-reach-model",
        action="store_true",
        help="calibrate with the isotonic maps alone (to see what the reach model adds)",
    )
    parser.add_argument(
        "--json",
        type=Path,
        default=None,
        metavar="FILE",
        help="also write every held-out workload's scores (per cut and forecaster, with the ROC AUC "
        "of `probability` for the calibrated ones) here, one record per line",
    )
    parser.add_argument(
        "--within",
        action="store_true",
        help="also fit within-the-run models (check R: 'crossed by the planned end' from the curve "
        "and the study's finished runs) into every calibration fitted or written",
    )
    args = parser.parse_args(argv)
    data = args.data if args.data is not None else DEFAULT_DATA
    workloads = load_all(data, home=not args.no_home, max_runs=args.max_runs)
    cuts = tuple(args.cuts)
    print("workloads: " + ", ".join(f"{w.name} ({len(w.runs)})" for w in workloads), file=sys.stderr)
    if args.write_calibration is not None or args.write_heldout_calibrations is not None:
        cache = load_cache()
        cases = [c for w in workloads for c in build_cases(w, cuts, progress=True)]
        save_cache(cache)
        if args.write_calibration is not None:
            write_calibration(cases, [w.name for w in workloads], args.write_calibration, args.within)
        if args.write_heldout_calibrations is not None:
            args.write_heldout_calibrations.mkdir(parents=True, exist_ok=True)
            for held in (w.name for w in workloads if not w.home):
                if args.heldout_for is not None and held not in args.heldout_for:
                    continue
                fit_on = [w.name for w in workloads if w.name != held]
                kept = [c for c in cases if c.workload != held]
                write_calibration(kept, fit_on, args.write_heldout_calibrations / f"{held}.json", args.within)
        return 0
    names = [w.name for w in workloads if not w.home or args.dev_home]
    if args.report is not None:
        chosen = {str(r) for r in args.report}
        names = [w.name for w in workloads if w.source in chosen]
    fixed = CrossingCalibration.load(args.calibration) if args.calibration is not None else None
    if fixed is not None:
        seen = sorted(n for n in names if n in fixed.fitted_on)
        if seen:
            print(f"{args.calibration} was fitted on {', '.join(seen)}: not reported", file=sys.stderr)
        names = [n for n in names if n not in fixed.fitted_on]
    fold_of = {w.name: w.source or w.name for w in workloads} if args.fold_by_data else None
    results, held = run_benchmark(
        workloads,
        cuts,
        names,
        not args.no_reach_model,
        calibration=fixed,
        fold_of=fold_of,
        with_within=args.within,
    )
    if not names:
        print("no held-out workloads (only home data): nothing to report", file=sys.stderr)
        return 1
    if args.tables_per_data:
        by_source = {w.name: w.source for w in workloads}
        parts = []
        for source in dict.fromkeys(by_source[n] for n in names):
            mine = [n for n in names if by_source[n] == source]
            parts.append(
                f"## {source}\n\n" + tables(results, [c for c in held if c.workload in mine], mine, cuts)
            )
        text = "\n".join(parts)
    else:
        text = tables(results, held, names, cuts)
    print(text)
    if args.markdown is not None:
        args.markdown.write_text(text + "\n")
    if args.json is not None:
        records = [{"workload": w, "cut": cut, "method": m, **v} for (w, cut, m), v in results.items()]
        args.json.write_text("".join(json.dumps(r) + "\n" for r in records))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
