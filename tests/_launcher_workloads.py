"""Tiny workloads for launcher/DDP tests (resolved in rank processes as ``this_file.py:Name``).

``Linear``: every rank draws micro-batches from one seeded global stream, rank r taking micro-batches
r, r + world_size, … — so 2 ranks × accumulation 1 see exactly the global batches that 1 rank ×
accumulation 2 sees. ``evaluate`` returns the parameters themselves (``p0``, ``p1``, …) so a test
can compare runs. Fault knobs act once per ``marker`` file, so the next trial runs clean.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn
from torch.nn import functional as F


class Linear:
    def __init__(
        self,
        log: str | None = None,
        fault: str | None = None,  # "kill" | "hang" | "raise"
        fault_rank: int = 1,
        fault_step: int = 3,
        marker: str | None = None,
    ):
        g = torch.Generator().manual_seed(123)
        self.x = torch.randn(512, 8, generator=g)
        self.w_true = torch.randn(8, 3, generator=g)
        self.y = self.x @ self.w_true + 0.1 * torch.randn(512, 3, generator=g)
        self.log, self.fault, self.fault_rank, self.fault_step, self.marker = (
            log,
            fault,
            fault_rank,
            fault_step,
            marker,
        )
        self.calls = 0

    def build_model(self) -> nn.Module:
        self.calls = 0
        return nn.Linear(8, 3)

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[tuple]:
        g = torch.Generator().manual_seed(seed)
        index = 0
        while True:
            batch = torch.randint(0, len(self.x), (micro_batch_size,), generator=g)
            if index % world_size == rank:
                yield self.x[batch], self.y[batch]
            index += 1

    def loss(self, model: nn.Module, batch: tuple) -> torch.Tensor:
        rank = dist.get_rank() if dist.is_initialized() else 0
        self.calls += 1
        if self.log:
            with open(self.log, "a") as f:
                f.write(f"{rank} {os.getpid()} {self.calls}\n")
        if self.fault and rank == self.fault_rank and self.calls == self.fault_step:
            marker = Path(self.marker) if self.marker else None
            if marker is None or not marker.exists():
                if marker is not None:
                    marker.write_text("done")
                if self.fault == "kill":
                    os.kill(os.getpid(), signal.SIGKILL)
                elif self.fault == "hang":
                    time.sleep(3600)
                else:
                    raise RuntimeError(f"deliberate failure in rank {rank}")
        x, y = batch
        return F.mse_loss(model(x), y)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        flat = torch.cat([p.detach().flatten() for p in model.parameters()])
        metrics = {f"p{i}": float(v) for i, v in enumerate(flat.double())}
        metrics["val_loss"] = float(F.mse_loss(model(self.x), self.y))
        return metrics
