"""An MLP on scikit-learn's bundled 8×8 digits (1,797 images; nothing is downloaded).

Metrics: ``accuracy`` and ``val_loss`` on a fixed 20% held-out split.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import torch
from torch import nn
from torch.nn import functional as F


class Digits:
    """Classify sklearn digits with a small MLP (``hidden`` units per layer, ``depth`` layers)."""

    metric = "accuracy"
    # What evaluate() returns and the range each lies in: a target outside it is refused at create.
    metrics = {"accuracy": (0.0, 1.0), "val_loss": (0.0, math.inf)}

    def __init__(self, hidden: int = 64, depth: int = 2, val_fraction: float = 0.2, split_seed: int = 0):
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split

        x, y = load_digits(return_X_y=True)
        x_train, x_val, y_train, y_val = train_test_split(
            x / 16.0, y, test_size=val_fraction, random_state=split_seed, stratify=y
        )
        self.x_train = torch.tensor(x_train, dtype=torch.float32)
        self.y_train = torch.tensor(y_train, dtype=torch.long)
        self.x_val = torch.tensor(x_val, dtype=torch.float32)
        self.y_val = torch.tensor(y_val, dtype=torch.long)
        self.hidden, self.depth = hidden, depth

    def build_model(self) -> nn.Module:
        layers: list[nn.Module] = []
        width = 64
        for _ in range(self.depth):
            layers += [nn.Linear(width, self.hidden), nn.ReLU()]
            width = self.hidden
        layers.append(nn.Linear(width, 10))
        return nn.Sequential(*layers)

    def train_batches(
        self, micro_batch_size: int, rank: int, world_size: int, seed: int
    ) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        count = len(self.x_train)
        while True:
            index = torch.randint(0, count, (micro_batch_size,), generator=generator)
            yield self.x_train[index], self.y_train[index]

    def loss(self, model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        inputs, labels = batch
        device = next(model.parameters()).device
        return F.cross_entropy(model(inputs.to(device)).float(), labels.to(device))

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        device = next(model.parameters()).device
        logits = model(self.x_val.to(device)).float()
        labels = self.y_val.to(device)
        return {
            "accuracy": (logits.argmax(-1) == labels).float().mean().item(),
            "val_loss": F.cross_entropy(logits, labels).item(),
        }
