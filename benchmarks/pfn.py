"""A prior-data-fitted network (PFN) for time-to-target, trained here on synthetic curves only.

Issue 16 names LC-PFN (Adriaensen et al. 2023) among the forecasters to choose between by
measurement; its pretrained weights are not reachable here, so this trains a small one on CPU.
What it is: a transformer that reads a curve prefix (normalised distance to the target at each
evaluation), the run's whole LR schedule and the cut, and outputs a distribution over *when* the
curve first reaches the target (50 bins over the planned run, plus "not within the run"). It is
trained only on curves drawn from a prior (below), never on the corpus, so every corpus figure it
earns is held out on every workload.

The prior, fixed before any corpus evaluation (docs/benchmarks.md, "A prior-data-fitted network
(session 22)"): a schedule from the corpus's families with random warm-up; a loss that falls as
a power law in the LR area and carries an LR "temperature" term (the loss drops as the LR is
annealed, rises as a cycle climbs, with a short memory); evaluation noise (correlated, of random
size), some unstable runs, some that blow up; a target placed between the curve's level at the
cut and somewhat below its final level, so that about half of the prefixes reach it later.

Usage::

    python benchmarks/pfn.py train --out ~/.cache/convtune-pfn/pfn.pt --steps 8000 --data 300000   # 17 min
    python benchmarks/pfn.py evaluate --markdown pfn.md   # the committed network, benchmarks/data/pfn/pfn.pt
"""

from __future__ import annotations

import argparse
import math
import pickle
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from scipy.signal import lfilter
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ROOT = Path(__file__).resolve().parents[1]
# The network scored in docs/benchmarks.md (session 22: seed 0, 8,000 steps, 300,000 prefixes).
MODEL = ROOT / "benchmarks" / "data" / "pfn" / "pfn.pt"
GRID = 256  # the LR schedule's resolution over the planned run
SCHEDULE_TOKENS = 8
MAX_PREFIX = 32
BINS = 50  # crossing-time bins over (0, 1] of the planned run; index BINS: not within the run
FEATURES = 5  # x, log-distance, lr, LR area so far, token kind
MEMORY = 0.05  # the temperature term's memory, as a share of the run (convtune's ANNEAL_MEMORY)


# ---- the prior --------------------------------------------------------------------------------


def _schedule(rng: np.random.Generator) -> np.ndarray:
    """LR / peak on GRID points over the run, from one of the corpus's schedule families."""
    x = (np.arange(GRID) + 0.5) / GRID
    kind = rng.choice(["constant", "cosine", "linear", "wsd", "step", "inverse_sqrt", "onecycle", "cyclic"])
    floor = rng.choice([0.0, 0.01, 0.1])
    warm = rng.uniform(0.0, 0.1) if rng.random() < 0.7 else 0.0
    if kind == "constant":
        lr = np.ones_like(x)
    elif kind == "cosine":
        lr = floor + (1 - floor) * 0.5 * (1 + np.cos(np.pi * x))
    elif kind == "linear":
        lr = floor + (1 - floor) * (1 - x)
    elif kind == "wsd":
        start = 1 - rng.uniform(0.1, 0.3)
        lr = np.where(x < start, 1.0, floor + (1 - floor) * (1 - (x - start) / (1 - start)))
    elif kind == "step":
        marks = [(0.5, 0.75), (0.33, 0.66), (0.3, 0.6, 0.9)][int(rng.integers(3))]
        gamma = rng.uniform(0.1, 0.5)
        lr = gamma ** np.sum([x >= m for m in marks], axis=0)
    elif kind == "inverse_sqrt":
        lr = 1 / np.sqrt(1 + np.maximum(x - warm, 0) / rng.uniform(0.02, 0.3))
    elif kind == "onecycle":
        top = rng.uniform(0.2, 0.4)
        lr = np.where(x < top, 0.04 + 0.96 * x / top, 0.5 * (1 + np.cos(np.pi * (x - top) / (1 - top))))
        warm = 0.0
    else:  # cyclic, triangular
        period, low = rng.uniform(0.1, 0.5), rng.uniform(0.01, 0.3)
        phase = (x / period) % 1.0
        lr = low + (1 - low) * (1 - np.abs(2 * phase - 1))
    if warm > 0:
        lr = lr * np.minimum(1.0, x / warm)
    return np.clip(lr, 1e-4, None)


def _areas(lr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The LR area so far (share of the run's) and the LR the loss 'feels' (an EMA of it)."""
    s1 = np.cumsum(lr) / GRID
    lam = math.exp(-1.0 / (MEMORY * GRID))
    felt, _ = lfilter([1 - lam], [1.0, -lam], lr, zi=[lam * lr[0]])  # starts from the first LR
    return s1, felt


def sample_curve(rng: np.random.Generator) -> dict[str, Any] | None:
    """One synthetic run, cut and targeted; None when the draw is rejected (already reached)."""
    lr = _schedule(rng)
    s1, felt = _areas(lr)
    speed = math.exp(rng.uniform(math.log(0.3), math.log(30)))
    alpha = math.exp(rng.uniform(math.log(0.15), math.log(2.0)))
    start = math.exp(rng.uniform(math.log(0.01), math.log(0.3)))
    descent = (start**-alpha) - ((speed * s1[-1] + start) ** -alpha)
    power = (speed * s1 + start) ** -alpha / max(descent, 1e-12)  # 1 = the whole descent
    temperature = math.exp(rng.uniform(math.log(0.01), math.log(1.0))) * felt
    clean = power + temperature
    if rng.random() < 0.1:  # too high an LR: slower and noisier
        clean = clean + 0.3 * rng.uniform() * felt
    n_eval = int(rng.integers(8, MAX_PREFIX + 1))
    x = np.arange(1, n_eval + 1) / n_eval
    idx = np.minimum((x * GRID).astype(int) - 1, GRID - 1)
    level = clean[idx]
    span = float(level[0] - level.min()) + 1e-6
    sigma = span * math.exp(rng.uniform(math.log(0.002), math.log(0.1)))
    rho = rng.uniform(0.0, 0.8)
    start, steps = rng.normal(), rng.normal(size=n_eval)
    # AR(1) with unit variance, from a stationary first draw.
    noise, _ = lfilter([math.sqrt(1 - rho * rho)], [1.0, -rho], steps, zi=[rho * start])
    values = level + sigma * noise
    if rng.random() < 0.05:  # blows up after some point
        at = int(rng.integers(1, n_eval))
        values[at:] = level[0] * rng.uniform(1.0, 3.0) + sigma * rng.normal(size=n_eval - at)
    cut = rng.uniform(0.05, 0.6)
    seen = int(np.sum(x <= cut + 1e-9))
    if seen < 2:
        return None
    final = float(level[-1])
    at_cut = float(level[seen - 1])
    target = final + rng.uniform(-0.5, 0.95) * (at_cut - final)
    if np.any(values[:seen] <= target):
        return None
    reached = np.flatnonzero(values <= target)
    if reached.size:
        j = int(reached[0])
        # Interpolated as time_to_target does, between the last miss and the first hit.
        x0, x1, v0, v1 = x[j - 1], x[j], values[j - 1], values[j]
        crossing = x0 + (x1 - x0) * (v0 - target) / max(v0 - v1, 1e-12)
        label = min(BINS - 1, int(crossing * BINS))
    else:
        label = BINS
    return {"x": x[:seen], "gap": values[:seen] - target, "lr": lr, "label": label}


# ---- the model's input ------------------------------------------------------------------------


def encode(x: np.ndarray, gap: np.ndarray, lr: np.ndarray) -> np.ndarray:
    """Tokens: prefix points (kind 1) then the schedule ahead (kind -1), FEATURES each.

    ``x`` is each evaluation's share of the planned run, ``gap`` its distance to the target
    (positive: not reached), ``lr`` the LR / peak on GRID points of the run.
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


def synthetic_batch(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    tokens, masks, labels = [], [], []
    while len(labels) < n:
        c = sample_curve(rng)
        if c is None:
            continue
        tokens.append(encode(c["x"], c["gap"], c["lr"]))
        masks.append(mask_for(len(c["x"])))
        labels.append(c["label"])
    return np.stack(tokens), np.stack(masks), np.array(labels)


class CurvePFN(nn.Module):
    """Prefix and schedule tokens → a distribution over the crossing's bin (or none)."""

    def __init__(self, width: int = 64, layers: int = 3, heads: int = 4) -> None:
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
        pooled = (h * keep).sum(1) / keep.sum(1)
        return self.head(pooled)


def train(out: Path, steps: int, batch: int, seed: int, n_data: int) -> None:
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    t0 = time.time()
    tokens, masks, labels = synthetic_batch(n_data, rng)
    val = synthetic_batch(4096, np.random.default_rng(seed + 1))
    print(
        f"{n_data} synthetic prefixes in {time.time() - t0:.0f} s; not within the run: {np.mean(labels == BINS):.0%}",
        flush=True,
    )
    model = CurvePFN()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=1e-3, total_steps=steps, pct_start=max(0.05, 2.0 / steps)
    )
    tt, tm, tl = torch.from_numpy(tokens), torch.from_numpy(masks), torch.from_numpy(labels)
    vt, vm, vl = (torch.from_numpy(a) for a in val)
    loss_fn = nn.CrossEntropyLoss()
    t0 = time.time()
    for step in range(1, steps + 1):
        idx = torch.randint(0, n_data, (batch,))
        loss = loss_fn(model(tt[idx], tm[idx]), tl[idx])
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 500 == 0 or step == steps:
            with torch.no_grad():
                val_loss = float(loss_fn(model(vt, vm), vl))
            print(
                f"step {step}: train {loss.item():.3f} synthetic held-out {val_loss:.3f} ({time.time() - t0:.0f} s)",
                flush=True,
            )
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"state": model.state_dict(), "seed": seed, "steps": steps}, out)


# ---- the corpus, scored as the forecast benchmark cuts it -------------------------------------


@dataclass
class Judged:
    workload: str
    cut: float
    truth: float  # share of the run at the crossing; inf: not within the run
    ts: np.ndarray  # shares of the run at which "reached by t" is judged
    shipped: np.ndarray  # shipped calibrated probability_before(t), held out
    pfn: np.ndarray  # this network's probability of reaching by t


def schedule_grid(run: Any) -> np.ndarray:
    if run.schedule is None:
        return np.ones(GRID)
    xs = (np.arange(GRID) + 0.5) / GRID * run.horizon
    lr = np.asarray(run.schedule.lr_at(xs), dtype=float)
    peak = float(np.max(np.abs(lr))) if lr.size else 1.0
    return np.clip(lr / max(peak, 1e-300), 1e-4, None)


def pfn_cdf(model: CurvePFN, tokens: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Cumulative probability of having reached by each bin's end (BINS columns)."""
    with torch.no_grad():
        p = torch.softmax(model(torch.from_numpy(tokens), torch.from_numpy(masks)), dim=-1).numpy()
    return np.cumsum(p[:, :BINS], axis=1)


def reach_by(cdf: np.ndarray, share: float) -> float:
    """P(reached by ``share`` of the run), linear within a bin."""
    if share >= 1.0:
        return float(cdf[-1])
    pos = share * BINS
    k = int(pos)
    lo = float(cdf[k - 1]) if k > 0 else 0.0
    return lo + (float(cdf[k]) - lo) * (pos - k)


def judge(
    model: CurvePFN,
    data: list[Path],
    cuts: tuple[float, ...],
    only: list[str] | None = None,
    max_runs: int | None = None,
    home: bool = True,
) -> list[Judged]:
    import forecast as F

    from convtune.curves import time_to_target

    # The shipped forecaster's calibration for each reported workload is fitted on all the others,
    # the home workloads included, as the forecast benchmark's README figures are.
    everything = F.load_all(data, home=home, max_runs=max_runs)
    if only:
        everything = [w for w in everything if w.name in only or w.home]
    workloads = [w for w in everything if not w.home]
    _, held = F.run_benchmark(everything, cuts, [w.name for w in workloads])
    by_w: dict[str, list[Any]] = defaultdict(list)
    for c in held:
        by_w[c.workload].append(c)
    out: list[Judged] = []
    for w in workloads:
        mine = iter(by_w[w.name])
        rows: list[tuple[Any, np.ndarray, np.ndarray]] = []
        for target in F.targets_for(w):
            for run in w.runs:
                for cut in cuts:
                    seen = run.samples <= cut * run.horizon + 1e-9
                    c, v = run.samples[seen], run.metric[seen]
                    if math.isfinite(time_to_target(c, v, target)):
                        continue
                    case = next(mine)
                    assert case.cut == cut and case.horizon == run.horizon
                    sign = 1.0 if target.lower_is_better else -1.0
                    gap = sign * (v - target.value)
                    if not gap.size or not np.all(np.isfinite(gap)):
                        continue  # diverged already: both forecasters say so without a model
                    rows.append((case, encode(c / run.horizon, gap, schedule_grid(run)), mask_for(gap.size)))
        if not rows:
            continue
        cdfs = pfn_cdf(model, np.stack([r[1] for r in rows]), np.stack([r[2] for r in rows]))
        for (case, _, _), cdf in zip(rows, cdfs, strict=True):
            ts = np.array([case.horizon] + [t for t in case.others if case.c_last < t < case.horizon])
            f = case.forecasts["convtune"]
            shipped = np.array([f.probability_before(t) for t in ts])
            pfn = np.array([reach_by(cdf, t / case.horizon) for t in ts])
            out.append(Judged(w.name, case.cut, case.truth / case.horizon, ts / case.horizon, shipped, pfn))
    return out


def auc(scores: list[float], labels: list[bool]) -> float:
    from sklearn.metrics import roc_auc_score

    if len(set(labels)) < 2:
        return math.nan
    return float(roc_auc_score(labels, scores))


def combined(shipped: np.ndarray, pfn: np.ndarray) -> np.ndarray:
    """The two probabilities' mean logit: no weight fitted, so nothing learns from the corpus."""
    a, b = (np.clip(p, 1e-4, 1 - 1e-4) for p in (shipped, pfn))
    z = 0.5 * (np.log(a / (1 - a)) + np.log(b / (1 - b)))
    return 1.0 / (1.0 + np.exp(-z))


METHODS = ("shipped", "pfn", "combined")


def scores_of(j: Judged, method: str) -> np.ndarray:
    if method == "combined":
        return combined(j.shipped, j.pfn)
    return j.shipped if method == "shipped" else j.pfn


def called_at_never(judged: list[Judged], held: str, cut: float, method: str) -> tuple[float, float]:
    """Non-reaching runs of ``held`` called "not within the run" (P(reach) below a threshold),
    and the "never" share among its reaching runs, at the largest threshold that keeps "never"
    at ≤ 5% of the *other* workloads' reaching runs (each workload weighing the same)."""
    rest = [j for j in judged if j.workload != held and j.cut == cut]
    mine = [j for j in judged if j.workload == held and j.cut == cut]
    best = 0.0
    for tau in np.linspace(0.0, 0.5, 101):
        shares = []
        for name in sorted({j.workload for j in rest}):
            reach = [scores_of(j, method)[0] < tau for j in rest if j.workload == name and j.truth <= 1.0]
            if reach:
                shares.append(float(np.mean(reach)))
        if shares and float(np.mean(shares)) <= 0.05:
            best = float(tau)
    never = [scores_of(j, method)[0] < best for j in mine if j.truth <= 1.0]
    called = [scores_of(j, method)[0] < best for j in mine if not j.truth <= 1.0]
    return (float(np.mean(called)) if called else math.nan, float(np.mean(never)) if never else math.nan)


def losers_at_winners_tail(
    judged: list[Judged], held: str, cut: float, method: str, share: float = 0.01
) -> float:
    """The pruner's regime: of ``held``'s (run, t) checks not reached by t, the share scored below
    the threshold under which at most ``share`` of the *other* workloads' reached checks fall
    (each workload weighing the same)."""
    rest = [j for j in judged if j.workload != held and j.cut == cut]
    tails = []
    for name in sorted({j.workload for j in rest}):
        pos = [
            p
            for j in rest
            if j.workload == name
            for p, t in zip(scores_of(j, method), j.ts, strict=True)
            if j.truth <= t
        ]
        if pos:
            tails.append(np.sort(pos))
    best = 0.0
    for tau in np.geomspace(1e-4, 0.5, 80):
        if tails and float(np.mean([np.searchsorted(t, tau) / t.size for t in tails])) <= share:
            best = float(tau)
    neg = [
        p < best
        for j in judged
        if j.workload == held and j.cut == cut
        for p, t in zip(scores_of(j, method), j.ts, strict=True)
        if not j.truth <= t
    ]
    return float(np.mean(neg)) if neg else math.nan


def tables(judged: list[Judged], cuts: tuple[float, ...]) -> str:
    lines = [
        "| workload | cut | AUC reach within the run: shipped / PFN / combined "
        "| AUC reached by t: shipped / PFN / combined "
        '| non-reaching called at "never" ≤ 5% (threshold from the others): shipped / PFN / combined '
        '| "never" among runs that reach: shipped / PFN / combined '
        "| checks not reached by t, below the others' 1% tail of reached ones: shipped / PFN / combined |",
        "|---|---|---|---|---|---|---|",
    ]
    summary: dict[float, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for name in sorted({j.workload for j in judged}):
        for cut in cuts:
            at = [j for j in judged if j.workload == name and j.cut == cut]
            within = [j.truth <= 1.0 for j in at]
            lab = [bool(j.truth <= t) for j in at for t in j.ts]
            cells: dict[str, list[str]] = defaultdict(list)
            for m in METHODS:
                a = auc([scores_of(j, m)[0] for j in at], within)
                b = auc([p for j in at for p in scores_of(j, m)], lab)
                called, never = called_at_never(judged, name, cut, m)
                tail = losers_at_winners_tail(judged, name, cut, m)
                for key, val in (("a", a), ("b", b), ("c", called), ("t", tail)):
                    summary[cut][f"{key}_{m}"].append(val)
                cells["a"].append(f"{a:.3f}")
                cells["b"].append(f"{b:.3f}")
                cells["c"].append(f"{called:.0%}")
                cells["n"].append(f"{never:.0%}")
                cells["t"].append(f"{tail:.0%}")
            lines.append(
                f"| {name} | {cut:.0%} | " + " | ".join(" / ".join(cells[k]) for k in "abcnt") + " |"
            )
    lines.append("")
    for cut in cuts:
        s = summary[cut]
        for m in ("pfn", "combined"):
            wins_b = sum(p > q for p, q in zip(s[f"b_{m}"], s["b_shipped"], strict=True))
            wins_a = sum(p > q for p, q in zip(s[f"a_{m}"], s["a_shipped"], strict=True))
            eighty = sum(c >= 0.8 for c in s[f"c_{m}"])
            lines.append(
                f"- at {cut:.0%}, {m}: median AUC reached by t {statistics.median(s[f'b_{m}']):.3f} against "
                f"shipped {statistics.median(s['b_shipped']):.3f} (higher on {wins_b} of {len(s['b_shipped'])}); "
                f"reach within the run {statistics.median(s[f'a_{m}']):.3f} against "
                f"{statistics.median(s['a_shipped']):.3f} (higher on {wins_a}); non-reaching called ≥ 80% on "
                f"{eighty} of {len(s[f'c_{m}'])} workloads; checks not reached caught at the 1% tail, median "
                f"{statistics.median(s[f't_{m}']):.0%} (shipped {statistics.median(s['t_shipped']):.0%})"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="train the network on synthetic curves only")
    t.add_argument("--out", type=Path, required=True)
    t.add_argument("--steps", type=int, default=6000)
    t.add_argument("--batch", type=int, default=256)
    t.add_argument("--data", type=int, default=200_000, help="synthetic prefixes drawn before training")
    t.add_argument("--seed", type=int, default=0)
    e = sub.add_parser("evaluate", help="score it against the shipped forecaster on the corpus")
    e.add_argument(
        "--model", type=Path, default=MODEL, help=f"the trained network (default: {MODEL.relative_to(ROOT)})"
    )
    e.add_argument("--data", type=Path, nargs="+", default=[Path("benchmarks/data/corpus")])
    e.add_argument("--markdown", type=Path)
    e.add_argument("--judged", type=Path, help="keep the scored cases here and reuse them (a pickle)")
    e.add_argument("--only", nargs="+", help="these corpus workloads only (tests)")
    e.add_argument("--max-runs", type=int, help="the first N runs of each workload only (tests)")
    e.add_argument("--no-home", action="store_true", help="fit the shipped calibration without charlm/digits")
    args = parser.parse_args(argv)
    torch.set_num_threads(2)
    if args.command == "train":
        train(args.out, args.steps, args.batch, args.seed, args.data)
        return 0
    model = CurvePFN()
    model.load_state_dict(torch.load(args.model)["state"])
    model.eval()
    cuts = (0.1, 0.25, 0.5)
    if args.judged is not None and args.judged.exists():
        with args.judged.open("rb") as fh:
            judged = pickle.load(fh)
    else:
        judged = judge(model, args.data, cuts, args.only, args.max_runs, not args.no_home)
        if args.judged is not None:
            with args.judged.open("wb") as fh:
                pickle.dump(judged, fh)
    text = tables(judged, cuts)
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
