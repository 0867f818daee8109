"""A prior-data-fitted network (PFN) for when a curve first reaches its target.

A small transformer reads a curve's prefix (the log distance to the target at each evaluation,
relative to the first) and the trial's LR over its whole planned run, and gives the probability
that the curve first reaches the target in each of ``BINS`` equal shares of the run (the rest:
"not within the run"). It was trained on synthetic curves only (``benchmarks/pfn.py``: a power
law in the LR area with an LR "temperature" term, the corpus's schedule families, noise,
blow-ups), never on a recorded curve, and ships as ``pfn.pt`` beside this file (LC-PFN,
Adriaensen et al. 2023, is the model of the idea; its weights are not used).

It needs the schedule (the planned run defines its time axis) and torch, imported on first use,
so ``convtune.curves`` itself stays importable without torch. :func:`combine_with_pfn` merges its
answer into a calibrated :class:`~convtune.curves.Forecast`: the mean of the two probabilities'
logits at every cost within the run, which, held out on three workloads recorded after every
choice was made, ranked runs better than the calibrated forecast alone (docs/benchmarks.md,
"Three workloads recorded after every choice").

Example:
    >>> import numpy as np
    >>> from convtune.curves import LRSchedule
    >>> s = LRSchedule.from_steps(np.linspace(1.0, 0.0, 100), cost_per_step=10)
    >>> c = np.arange(1, 9) * 40.0
    >>> falling = pfn_crossing_cdf(c, 2.0 - 0.002 * c, "val_loss<=1.0", s)
    >>> flat = pfn_crossing_cdf(c, 2.0 + 0.0 * c, "val_loss<=1.0", s)
    >>> bool(falling[-1] > flat[-1])
    True
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from convtune.config.target import Target
from convtune.curves._measure import as_target

if TYPE_CHECKING:
    from convtune.curves._forecast import Forecast
    from convtune.curves._schedule import LRSchedule

GRID = 256  # the LR schedule's resolution over the planned run
SCHEDULE_TOKENS = 8
MAX_PREFIX = 32
BINS = 50  # crossing-time bins over (0, 1] of the planned run; index BINS: not within the run
FEATURES = 5  # share of the run, log-distance, LR / peak, LR area so far, token kind
WEIGHTS = Path(__file__).with_name("pfn.pt")
# Probabilities are clipped to this before their logits are averaged: the network's smallest
# outputs are not calibrated, and one forecaster's certainty must not veto the other's.
CLIP = 1e-4


def encode(x: np.ndarray, gap: np.ndarray, lr: np.ndarray) -> np.ndarray:
    """Tokens: prefix points (kind 1) then the schedule ahead (kind -1), ``FEATURES`` each.

    ``x`` is each evaluation's share of the planned run, ``gap`` its distance to the target
    (positive: not reached), ``lr`` the LR / peak on ``GRID`` points of the run.
    """
    x, gap = x[-MAX_PREFIX:], gap[-MAX_PREFIX:]
    s1 = np.cumsum(lr) / GRID
    s1 = s1 / max(float(s1[-1]), 1e-12)
    idx = np.clip((x * GRID).astype(int) - 1, 0, GRID - 1)
    ref = max(float(gap[0]), 1e-12)
    dist = np.clip(np.log(np.maximum(gap, 1e-12) / ref), -8.0, 4.0)
    prefix = np.stack([x, dist, lr[idx], s1[idx], np.ones_like(x)], axis=1)
    xs = np.arange(1, SCHEDULE_TOKENS + 1) / SCHEDULE_TOKENS
    sidx = np.minimum((xs * GRID).astype(int) - 1, GRID - 1)
    sched = np.stack([xs, np.zeros_like(xs), lr[sidx], s1[sidx], -np.ones_like(xs)], axis=1)
    tokens = np.zeros((MAX_PREFIX + SCHEDULE_TOKENS, FEATURES), dtype=np.float32)
    tokens[: len(x)] = prefix
    tokens[MAX_PREFIX:] = sched
    return tokens


def mask_for(n_prefix: int) -> np.ndarray:
    """True where a token is padding."""
    m = np.ones(MAX_PREFIX + SCHEDULE_TOKENS, dtype=bool)
    m[: min(n_prefix, MAX_PREFIX)] = False
    m[MAX_PREFIX:] = False
    return m


def schedule_grid(schedule: LRSchedule) -> np.ndarray:
    """The schedule's LR / peak at the middle of ``GRID`` equal shares of its run."""
    xs = (np.arange(GRID) + 0.5) / GRID * schedule.horizon
    lr = np.abs(np.asarray(schedule.lr_at(xs), dtype=float))
    peak = float(np.max(lr)) if lr.size else 1.0
    return np.clip(lr / max(peak, 1e-300), 1e-4, None)


def build_network(width: int = 64, layers: int = 3, heads: int = 4) -> Any:
    """The untrained network (a ``torch.nn.Module``): prefix and schedule tokens in, ``BINS + 1``
    logits out (the crossing's bin, or "not within the run")."""
    import torch
    from torch import nn

    class CurvePFN(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Sequential(nn.Linear(FEATURES, width), nn.GELU(), nn.Linear(width, width))
            layer = nn.TransformerEncoderLayer(
                width, heads, 2 * width, dropout=0.0, batch_first=True, norm_first=True
            )
            self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
            self.head = nn.Sequential(
                nn.LayerNorm(width), nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, BINS + 1)
            )

        def forward(self, tokens: torch.Tensor, pad: torch.Tensor) -> torch.Tensor:
            h = self.encoder(self.embed(tokens), src_key_padding_mask=pad)
            keep = (~pad).unsqueeze(-1).float()
            return self.head((h * keep).sum(1) / keep.sum(1))

    return CurvePFN()


@lru_cache(maxsize=1)
def _shipped() -> Any:
    import torch

    network = build_network()
    network.load_state_dict(torch.load(WEIGHTS, map_location="cpu", weights_only=True)["state"])
    network.eval()
    return network


def crossing_cdfs(network: Any, tokens: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Per row, the probability of having reached by the end of each of the ``BINS`` bins."""
    import torch

    with torch.no_grad():
        logits = network(torch.from_numpy(np.ascontiguousarray(tokens)), torch.from_numpy(masks))
        p = torch.softmax(logits.float(), dim=-1).numpy()
    return np.cumsum(p[:, :BINS], axis=1)


def reach_by(cdf: np.ndarray, share: float) -> float:
    """P(reached by ``share`` of the run) from :func:`crossing_cdfs`' row, linear within a bin."""
    if share >= 1.0:
        return float(cdf[-1])
    if share <= 0.0:
        return 0.0
    pos = share * BINS
    k = int(pos)
    lo = float(cdf[k - 1]) if k > 0 else 0.0
    return lo + (float(cdf[k]) - lo) * (pos - k)


def pfn_crossing_cdf(
    costs: np.ndarray | Any, values: np.ndarray | Any, target: Target | str, schedule: LRSchedule
) -> np.ndarray | None:
    """The shipped network's crossing distribution for a prefix not yet at ``target``.

    ``None`` where it has nothing to say: no usable point, a non-finite value, a prefix that
    already reached, or a run with no length. Costs are in the schedule's unit.
    """
    target = as_target(target)
    c = np.asarray(costs, dtype=float).reshape(-1)
    v = np.asarray(values, dtype=float).reshape(-1)
    n = min(c.size, v.size)
    c, v = c[:n], v[:n]
    horizon = float(schedule.horizon)
    if n == 0 or not horizon > 0 or not np.all(np.isfinite(v)) or not np.all(np.isfinite(c)):
        return None
    gap = (v - target.value) * (1.0 if target.lower_is_better else -1.0)
    if np.any(gap <= 0):
        return None
    tokens = encode(c / horizon, gap, schedule_grid(schedule))
    return crossing_cdfs(_shipped(), tokens[None], mask_for(n)[None])[0]


def mean_logit(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The probability whose logit is the mean of ``p``'s and ``q``'s (each clipped to ``CLIP``)."""
    a, b = (np.clip(np.asarray(x, dtype=float), CLIP, 1.0 - CLIP) for x in (p, q))
    return 1.0 / (1.0 + np.exp(-0.5 * (np.log(a / (1.0 - a)) + np.log(b / (1.0 - b)))))


def combine_with_pfn(forecast: Forecast, cdf: np.ndarray, horizon: float, c_last: float) -> Forecast:
    """``forecast`` with its crossing distribution, within the run, the mean logit of its own and
    the network's (``cdf`` from :func:`pfn_crossing_cdf`); beyond the run its own, raised where
    needed to stay non-decreasing. ``estimate``, ``low`` and ``high`` are kept: they are
    calibrated separately (docs/benchmarks.md)."""
    if forecast.reached or forecast.diverged or not horizon > 0:
        return forecast
    own_costs = [c for c in forecast.cdf_costs if c > c_last]
    grid = np.unique(
        np.concatenate(
            [
                [c for c in own_costs if c <= horizon],
                [horizon * (k + 1) / BINS for k in range(BINS) if horizon * (k + 1) / BINS > c_last],
            ]
        )
    )
    if grid.size == 0:
        return forecast
    own = np.array([forecast.probability_before(c) for c in grid])
    theirs = np.array([reach_by(cdf, c / horizon) for c in grid])
    mixed = np.maximum.accumulate(mean_logit(own, theirs))
    later = [(c, forecast.probability_before(c)) for c in own_costs if c > grid[-1]]
    costs = [c_last, *grid.tolist(), *(c for c, _ in later)]
    probs = [0.0, *mixed.tolist(), *(p for _, p in later)]
    probs = np.maximum.accumulate(np.array(probs)).tolist()
    return replace(
        forecast,
        probability=float(mixed[-1]) if math.isclose(grid[-1], horizon) else forecast.probability,
        cdf_costs=tuple(float(c) for c in costs),
        cdf_probs=tuple(float(p) for p in probs),
    )
