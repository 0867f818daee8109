"""Learning-curve models: measured and forecast time-to-target, schedule-aware.

numpy/scipy at run time (no optuna, no torch; scikit-learn only to fit a calibration), so the engine, the pruner and the recommender can all
use it.
"""

from convtune.curves._calibration import CrossingCalibration
from convtune.curves._forecast import Forecast, ForecastOptions, forecast_time_to_target
from convtune.curves._measure import time_to_target
from convtune.curves._models import ANNEAL_MEMORY, annealing_areas, noise_scale
from convtune.curves._prior import CurveFit, CurvePrior, fit_curve, fit_prior
from convtune.curves._reach import ReachModel
from convtune.curves._references import ReferenceRun, shift_probability, study_offset
from convtune.curves._schedule import LRSchedule
from convtune.curves._trees import ReachTrees

__all__ = [
    "ANNEAL_MEMORY",
    "CrossingCalibration",
    "CurveFit",
    "CurvePrior",
    "Forecast",
    "ForecastOptions",
    "LRSchedule",
    "ReachModel",
    "ReachTrees",
    "ReferenceRun",
    "annealing_areas",
    "fit_curve",
    "fit_prior",
    "forecast_time_to_target",
    "noise_scale",
    "shift_probability",
    "study_offset",
    "time_to_target",
]
