"""Scaling across trials: points from what trials recorded (points), the parametric fits and residual GP (fits), the combined model and its candidate search (model), seeds, confirmations and the baseline (confirm), the recommender (recommend)."""

from convtune.scaling.confirm import (
    baseline_time,
    baseline_trial,
    best_confirmed,
    confirm_id,
    confirmations,
    enqueue_baseline,
    enqueue_confirmations,
    enqueue_measured_confirmations,
    speedup,
)
from convtune.scaling.fits import (
    CriticalBatchFit,
    Encoder,
    ResidualGP,
    StepsFit,
    StepTimeFit,
)
from convtune.scaling.model import (
    Prediction,
    ScalingModel,
    sample_params,
)
from convtune.scaling.points import (
    LEVEL,
    TrialPoint,
    params_key,
    seed_spread,
    step_cost_of,
    trial_points,
)
from convtune.scaling.recommend import (
    Recommendation,
    fits_summary,
    recommend,
    scaling_report,
)

__all__ = [
    "CriticalBatchFit",
    "Encoder",
    "LEVEL",
    "Prediction",
    "Recommendation",
    "ResidualGP",
    "ScalingModel",
    "StepTimeFit",
    "StepsFit",
    "TrialPoint",
    "baseline_time",
    "baseline_trial",
    "best_confirmed",
    "confirm_id",
    "confirmations",
    "enqueue_baseline",
    "enqueue_confirmations",
    "enqueue_measured_confirmations",
    "fits_summary",
    "params_key",
    "recommend",
    "sample_params",
    "scaling_report",
    "seed_spread",
    "speedup",
    "step_cost_of",
    "trial_points",
]

# The study attribute holding confirm's plans; its home is the record (kept importable here).
from convtune.config.record import CONFIRMATIONS_ATTR  # noqa: E402

__all__ += ["CONFIRMATIONS_ATTR"]
