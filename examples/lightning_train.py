"""A PyTorch Lightning script, tuned by convtune with five changed lines (marked ``# convtune``).

A small MLP classifies scikit-learn's bundled digits (nothing is downloaded). On its own::

    python examples/lightning_train.py

Under convtune (``studies/lightning.yaml``) every trial runs it with its own recipe::

    convtune study create digits-pl --config studies/lightning.yaml
    convtune study run digits-pl --n-trials 10

and the best recipe trains it again outside convtune, step for step::

    convtune study export digits-pl -o best.yaml
    CONVTUNE_RECIPE=best.yaml python examples/lightning_train.py
"""

from __future__ import annotations

import os

import lightning.pytorch as L
import torch
from sklearn.datasets import load_digits
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

from convtune.integrations import lightning as ct  # convtune


class DigitsMLP(L.LightningModule):
    def __init__(self, hidden: int = 64) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(64, hidden), nn.ReLU(), nn.Linear(hidden, 10))

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        x, y = batch
        return F.cross_entropy(self.net(x), y)

    def validation_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> None:
        x, y = batch
        logits = self.net(x)
        self.log("val_loss", F.cross_entropy(logits, y))
        self.log("val_accuracy", (logits.argmax(-1) == y).float().mean())

    def configure_optimizers(self):  # type: ignore[no-untyped-def]
        return ct.configure_optimizers(self, torch.optim.Adam(self.parameters(), lr=1e-3))  # convtune


def digits() -> tuple[TensorDataset, TensorDataset]:
    x, y = load_digits(return_X_y=True)
    x = torch.tensor(x / 16.0, dtype=torch.float32)
    y = torch.tensor(y, dtype=torch.long)
    order = torch.randperm(len(x), generator=torch.Generator().manual_seed(0))
    x, y = x[order], y[order]
    return TensorDataset(x[:1400], y[:1400]), TensorDataset(x[1400:], y[1400:])


def main() -> None:
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    L.seed_everything(0, verbose=False)
    train_set, val_set = digits()
    train = DataLoader(train_set, batch_size=ct.batch_size(32), shuffle=True)  # convtune
    val = DataLoader(val_set, batch_size=512)
    trainer = L.Trainer(**ct.trainer_kwargs(max_epochs=5, logger=False))  # convtune
    trainer.fit(DigitsMLP(), train, val, **ct.fit_kwargs())  # convtune
    print({k: round(float(v), 4) for k, v in trainer.callback_metrics.items()})


if __name__ == "__main__":
    main()
