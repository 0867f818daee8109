"""The corpus workloads: convtune ``Workload``s that differ in kind, all on local data.

Data come only from scikit-learn's bundled datasets (``load_*``, never ``fetch_*``), its
generators (``make_*``) with fixed seeds, or the Python standard library's own source text, so
nothing is downloaded and every machine with the same library versions builds the same data.
Each ``evaluate`` returns the workload's metric under ``metric`` (see ``CORPUS_WORKLOADS`` in
``grid.py`` for its direction and bounds).

Example:
    >>> wl = MoonsAccuracy()
    >>> model = wl.build_model()
    >>> 0.0 <= wl.evaluate(model)["accuracy"] <= 1.0
    True
"""

from __future__ import annotations

import math
import sysconfig
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.func import functional_call, grad_and_value, vmap
from torch.nn import functional as F

Batch = tuple[torch.Tensor, torch.Tensor]


def _split(x: np.ndarray, y: np.ndarray, val_fraction: float, stratify: bool) -> tuple[Any, ...]:
    from sklearn.model_selection import train_test_split

    x_train, x_val, y_train, y_val = train_test_split(
        x, y, test_size=val_fraction, random_state=0, stratify=y if stratify else None
    )
    return x_train, y_train, x_val, y_val


def _standardise(train: np.ndarray, val: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(train)
    return scaler.transform(train), scaler.transform(val)


def _standardised_classification(**options: Any) -> tuple[np.ndarray, ...]:
    """``make_classification(**options)``, split 70 / 30 by class and standardised on the train part."""
    from sklearn.datasets import make_classification

    x, y = make_classification(**options)
    x_train, y_train, x_val, y_val = _split(x, y, 0.3, True)
    x_train, x_val = _standardise(x_train, x_val)
    return x_train, y_train, x_val, y_val


def _digits_split() -> tuple[np.ndarray, ...]:
    """sklearn's 8 × 8 digits, pixels scaled to [0, 1], split 70 / 30 by class."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    return _split(digits.data.astype(np.float32) / 16.0, digits.target, 0.3, True)


def _mlp(inputs: int, widths: list[int], outputs: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    for width in widths:
        layers += [nn.Linear(inputs, width), nn.ReLU()]
        inputs = width
    layers.append(nn.Linear(inputs, outputs))
    return nn.Sequential(*layers)


class _Tabular:
    """Shared plumbing: tensors, sampling with replacement, and the model's device."""

    metric = ""

    def __init__(self, x_train: np.ndarray, y_train: np.ndarray, x_val: np.ndarray, y_val: np.ndarray):
        label_dtype = torch.long if np.issubdtype(y_train.dtype, np.integer) else torch.float32
        self.x_train = torch.tensor(x_train, dtype=torch.float32)
        self.y_train = torch.tensor(y_train, dtype=label_dtype)
        self.x_val = torch.tensor(x_val, dtype=torch.float32)
        self.y_val = torch.tensor(y_val, dtype=label_dtype)

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        count = len(self.x_train)
        while True:
            index = torch.randint(0, count, (micro_batch_size,), generator=generator)
            yield self.x_train[index], self.y_train[index]


class _Classifier(_Tabular):
    """Cross-entropy training; ``evaluate`` gives val_error, accuracy and val_loss."""

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, labels = batch
        return F.cross_entropy(model(inputs), labels)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float()
        accuracy = (logits.argmax(-1) == self.y_val).float().mean().item()
        return {
            "accuracy": accuracy,
            "val_error": 1.0 - accuracy,
            "val_loss": F.cross_entropy(logits, self.y_val).item(),
        }


class _Regressor(_Tabular):
    """MSE training; ``evaluate`` gives val_mse and val_r2 (1 − MSE / variance of the targets)."""

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, targets = batch
        return F.mse_loss(model(inputs).squeeze(-1), targets)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        mse = F.mse_loss(model(self.x_val).squeeze(-1).float(), self.y_val).item()
        return {"val_mse": mse, "val_r2": 1.0 - mse / self.y_val.var(unbiased=False).item()}


class LogRegDigits(_Classifier):
    """Multinomial logistic regression (one linear layer) on sklearn's 8×8 digits."""

    metric = "val_error"

    def __init__(self) -> None:
        from sklearn.datasets import load_digits

        x, y = load_digits(return_X_y=True)
        super().__init__(*_split(x / 16.0, y, 0.2, True))

    def build_model(self) -> nn.Module:
        return nn.Linear(64, 10)


class MLPWineNarrow(_Classifier):
    """A narrow MLP (2 × 16) on sklearn's wine (178 samples, 13 standardised features)."""

    metric = "val_loss"

    def __init__(self) -> None:
        from sklearn.datasets import load_wine

        x, y = load_wine(return_X_y=True)
        x_train, y_train, x_val, y_val = _split(x, y, 0.3, True)
        x_train, x_val = _standardise(x_train, x_val)
        super().__init__(x_train, y_train, x_val, y_val)

    def build_model(self) -> nn.Module:
        return _mlp(13, [16, 16], 3)


class MLPSyntheticWide(_Classifier):
    """A wide MLP (3 × 256) on a 4-class generated problem small enough to overfit."""

    metric = "val_loss"

    def __init__(self) -> None:
        from sklearn.datasets import make_classification

        x, y = make_classification(
            n_samples=1500, n_features=30, n_informative=12, n_redundant=6, n_classes=4,
            n_clusters_per_class=2, class_sep=1.0, random_state=1,
        )  # fmt: skip
        super().__init__(*_split(x.astype(np.float32), y, 0.3, True))

    def build_model(self) -> nn.Module:
        return _mlp(30, [256, 256, 256], 4)


class NoisyLabels(_Classifier):
    """An MLP (2 × 64) on a binary problem where 30% of labels (train and val) are random."""

    metric = "val_error"

    def __init__(self) -> None:
        from sklearn.datasets import make_classification

        x, y = make_classification(
            n_samples=3000, n_features=20, n_informative=8, n_redundant=4, flip_y=0.3,
            class_sep=1.5, random_state=2,
        )  # fmt: skip
        super().__init__(*_split(x.astype(np.float32), y, 0.3, False))

    def build_model(self) -> nn.Module:
        return _mlp(20, [64, 64], 2)


class MoonsAccuracy(_Classifier):
    """A small MLP (2 × 32) on two noisy interleaved half-moons; accuracy saturates near 0.95."""

    metric = "accuracy"

    def __init__(self) -> None:
        from sklearn.datasets import make_moons

        x, y = make_moons(n_samples=2000, noise=0.25, random_state=3)
        super().__init__(*_split(x.astype(np.float32), y, 0.3, False))

    def build_model(self) -> nn.Module:
        return _mlp(2, [32, 32], 2)


class CNNDigits(_Classifier):
    """A small CNN (two 3×3 convolutions, max-pool, linear) on 8×8 digits."""

    metric = "accuracy"

    def __init__(self) -> None:
        from sklearn.datasets import load_digits

        x, y = load_digits(return_X_y=True)
        x_train, y_train, x_val, y_val = _split((x / 16.0).reshape(-1, 1, 8, 8), y, 0.2, True)
        super().__init__(x_train, y_train, x_val, y_val)

    def build_model(self) -> nn.Module:
        return nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(32 * 4 * 4, 10),
        )


class FriedmanMSE(_Regressor):
    """An MLP (2 × 64) regressing Friedman #1 (10 features, 5 used, noise σ=1); metric val MSE."""

    metric = "val_mse"

    def __init__(self) -> None:
        from sklearn.datasets import make_friedman1

        x, y = make_friedman1(n_samples=2000, n_features=10, noise=1.0, random_state=4)
        x_train, y_train, x_val, y_val = _split(x, y.astype(np.float32), 0.3, False)
        x_train, x_val = _standardise(x_train, x_val)
        super().__init__(x_train, y_train, x_val, y_val)

    def build_model(self) -> nn.Module:
        return _mlp(10, [64, 64], 1)


class RegressionR2(_Regressor):
    """An MLP (1 × 32) on a near-linear generated regression; R² saturates just below 1."""

    metric = "val_r2"

    def __init__(self) -> None:
        from sklearn.datasets import make_regression

        x, y = make_regression(n_samples=2000, n_features=15, n_informative=10, noise=10.0, random_state=5)
        x_train, y_train, x_val, y_val = _split(x, (y / y.std()).astype(np.float32), 0.3, False)
        super().__init__(x_train, y_train, x_val, y_val)

    def build_model(self) -> nn.Module:
        return _mlp(15, [32], 1)


class AutoencoderDigits(_Tabular):
    """A 64→32→8→32→64 autoencoder on 8×8 digits; metric val reconstruction MSE (pixels in [0,1])."""

    metric = "val_mse"

    def __init__(self) -> None:
        from sklearn.datasets import load_digits

        x, y = load_digits(return_X_y=True)
        x_train, _, x_val, _ = _split(x / 16.0, y, 0.2, True)
        super().__init__(x_train, x_train, x_val, x_val)

    def build_model(self) -> nn.Module:
        return nn.Sequential(_mlp(64, [32], 8), nn.ReLU(), _mlp(8, [32], 64), nn.Sigmoid())

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, _ = batch
        return F.mse_loss(model(inputs), inputs)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        return {"val_mse": F.mse_loss(model(self.x_val).float(), self.x_val).item()}


class _Residual(nn.Module):
    def __init__(self, width: int, activation: type[nn.Module] = nn.GELU) -> None:
        super().__init__()
        self.block = nn.Sequential(
            nn.LayerNorm(width), nn.Linear(width, width), activation(), nn.Linear(width, width)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.block(x)


class ResMLPDigits(_Classifier):
    """A residual MLP (4 pre-norm blocks of width 64, GELU) on 8×8 digits; metric val cross-entropy.

    Recorded after session 21 as a *fresh* workload: no forecaster, calibration or pruner setting
    was chosen with it in view.
    """

    metric = "val_loss"

    def __init__(self) -> None:
        from sklearn.datasets import load_digits

        x, y = load_digits(return_X_y=True)
        super().__init__(*_split(x / 16.0, y, 0.2, True))

    def build_model(self) -> nn.Module:
        return nn.Sequential(
            nn.Linear(64, 64), *[_Residual(64) for _ in range(4)], nn.LayerNorm(64), nn.Linear(64, 10)
        )


class DiabetesMSE(_Regressor):
    """An MLP (2 × 32) on sklearn's diabetes (442 patients, 10 features), targets standardised.

    Tiny, noisy real data: validation MSE falls, then rises as the model overfits. A fresh
    workload (see ``ResMLPDigits``).
    """

    metric = "val_mse"

    def __init__(self) -> None:
        from sklearn.datasets import load_diabetes

        x, y = load_diabetes(return_X_y=True)
        y = ((y - y.mean()) / y.std()).astype(np.float32)
        x_train, y_train, x_val, y_val = _split(x, y, 0.3, False)
        x_train, x_val = _standardise(x_train, x_val)
        super().__init__(x_train, y_train, x_val, y_val)

    def build_model(self) -> nn.Module:
        return _mlp(10, [32, 32], 1)


def waveforms(n: int, length: int = 64, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """Noisy sine, square, sawtooth and triangle waves of random frequency and phase (4 classes)."""
    rng = np.random.default_rng(seed)
    t = np.arange(length) / length
    labels = rng.integers(0, 4, size=n)
    freq = rng.uniform(1.5, 6.0, size=(n, 1))
    phase = rng.uniform(0.0, 1.0, size=(n, 1))
    cycle = (freq * t + phase) % 1.0
    waves = np.stack(
        [
            np.sin(2 * np.pi * cycle),
            np.sign(np.sin(2 * np.pi * cycle)),
            2 * cycle - 1,
            1 - 4 * np.abs(cycle - 0.5),
        ]
    )
    x = waves[labels, np.arange(n)] * rng.uniform(0.5, 1.5, size=(n, 1)) + rng.normal(
        0, 0.8, size=(n, length)
    )
    return x.astype(np.float32)[:, None, :], labels


class Conv1dWaves(_Classifier):
    """A 1-D CNN (two convolutions of width 5, global average pool) telling four noisy waveforms
    apart; metric accuracy. A fresh workload (see ``ResMLPDigits``)."""

    metric = "accuracy"

    def __init__(self) -> None:
        x, y = waveforms(2400)
        super().__init__(*_split(x, y, 0.25, True))

    def build_model(self) -> nn.Module:
        return nn.Sequential(
            nn.Conv1d(1, 16, 5, padding=2),
            nn.ReLU(),
            nn.Conv1d(16, 32, 5, padding=2, stride=2),
            nn.ReLU(),
            nn.AdaptiveAvgPool1d(1),
            nn.Flatten(),
            nn.Linear(32, 4),
        )


class HastieDropout(_Classifier):
    """An MLP (2 × 128, dropout 0.2) on ``make_hastie_10_2`` (the label is whether a sum of ten
    squared Gaussians passes its median: a spherical boundary); metric val_error.

    Recorded in session 23 as the second batch of *fresh* workloads: defined after every
    forecaster, calibration and pruner setting had been chosen, and nothing scored on them before
    the checks in docs/benchmarks.md were committed.
    """

    metric = "val_error"

    def __init__(self) -> None:
        from sklearn.datasets import make_hastie_10_2

        x, y = make_hastie_10_2(n_samples=3000, random_state=11)
        super().__init__(*_split(x, (y > 0).astype(np.int64), 0.3, True))

    def build_model(self) -> nn.Module:
        return nn.Sequential(
            nn.Linear(10, 128), nn.ReLU(), nn.Dropout(0.2), nn.Linear(128, 128), nn.ReLU(), nn.Dropout(0.2),
            nn.Linear(128, 2),
        )  # fmt: skip


class BreastCancerBN(_Classifier):
    """An MLP with BatchNorm (30-64-64-2) on sklearn's breast cancer data, standardised; metric
    val cross-entropy, which turns back up as the small training set is overfitted. A fresh
    workload of the second batch (see ``HastieDropout``)."""

    metric = "val_loss"

    def __init__(self) -> None:
        from sklearn.datasets import load_breast_cancer

        x, y = load_breast_cancer(return_X_y=True)
        x_train, y_train, x_val, y_val = _split(x, y, 0.3, True)
        x_train, x_val = _standardise(x_train, x_val)
        super().__init__(x_train, y_train, x_val, y_val)

    def build_model(self) -> nn.Module:
        return nn.Sequential(
            nn.Linear(30, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 64), nn.BatchNorm1d(64), nn.ReLU(),
            nn.Linear(64, 2),
        )  # fmt: skip


class Friedman2MAE(_Regressor):
    """An MLP (4-64-64-1) trained with the Huber loss on ``make_friedman2`` (targets standardised);
    metric val_mae, a metric that is not the loss. A fresh workload of the second batch (see
    ``HastieDropout``)."""

    metric = "val_mae"

    def __init__(self) -> None:
        from sklearn.datasets import make_friedman2

        x, y = make_friedman2(n_samples=2000, noise=30.0, random_state=5)
        y = ((y - y.mean()) / y.std()).astype(np.float32)
        x_train, y_train, x_val, y_val = _split(x, y, 0.3, False)
        x_train, x_val = _standardise(x_train, x_val)
        super().__init__(x_train, y_train, x_val, y_val)

    def build_model(self) -> nn.Module:
        return _mlp(4, [64, 64], 1)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, targets = batch
        return F.huber_loss(model(inputs).squeeze(-1), targets, delta=0.5)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        error = model(self.x_val).squeeze(-1).float() - self.y_val
        return {"val_mae": error.abs().mean().item(), "val_mse": error.square().mean().item()}


class _SortModel(nn.Module):
    def __init__(self, length: int, width: int, depth: int, heads: int):
        super().__init__()
        self.token = nn.Embedding(SORT_VOCAB, width)
        self.position = nn.Embedding(length, width)
        layer = nn.TransformerEncoderLayer(
            width, heads, dim_feedforward=2 * width, dropout=0.0, batch_first=True, norm_first=True
        )
        self.blocks = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, SORT_VOCAB)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.token(tokens) + self.position(torch.arange(tokens.shape[1]))
        return self.head(self.norm(self.blocks(x)))


SORT_VOCAB = 10


class SortTransformer:
    """A 2-layer bidirectional transformer (width 32, 4 heads) that outputs the sorted version of
    a sequence of 8 digits, position by position; metric val_error, the share of wrong output
    tokens. An algorithmic task whose curves can sit on a plateau and then drop. Generated data
    (4,000 train / 1,000 val sequences, fixed seed). A fresh workload of the second batch (see
    ``HastieDropout``)."""

    metric = "val_error"
    length = 8

    def __init__(self) -> None:
        generator = torch.Generator().manual_seed(13)
        data = torch.randint(0, SORT_VOCAB, (5000, self.length), generator=generator)
        self.train_data, self.val_data = data[:4000], data[4000:]

    def build_model(self) -> nn.Module:
        return _SortModel(self.length, 32, 2, 4)

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        while True:
            index = torch.randint(0, len(self.train_data), (micro_batch_size,), generator=generator)
            x = self.train_data[index]
            yield x, x.sort(dim=1).values

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, targets = batch
        return F.cross_entropy(model(inputs).reshape(-1, SORT_VOCAB).float(), targets.reshape(-1))

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.val_data).float()
        targets = self.val_data.sort(dim=1).values
        error = (logits.argmax(-1) != targets).float().mean().item()
        loss = F.cross_entropy(logits.reshape(-1, SORT_VOCAB), targets.reshape(-1)).item()
        return {"val_error": error, "val_loss": loss}


class IrisTiny(_Classifier):
    """An MLP (4-16-3) on sklearn's iris, standardised: 105 training rows, so each validation
    evaluation of its 45 rows is coarse and noisy; metric val cross-entropy.

    Recorded in session 23 as the third batch of *fresh* workloads: defined after the second
    batch's check had been read and the rule it prompted had been written down, and nothing
    scored on them before that rule's check was committed.
    """

    metric = "val_loss"

    def __init__(self) -> None:
        from sklearn.datasets import load_iris

        x, y = load_iris(return_X_y=True)
        x_train, y_train, x_val, y_val = _split(x, y, 0.3, True)
        x_train, x_val = _standardise(x_train, x_val)
        super().__init__(x_train, y_train, x_val, y_val)

    def build_model(self) -> nn.Module:
        return _mlp(4, [16], 3)


class BlobsAccuracy(_Classifier):
    """An MLP (2 × 64) on ten overlapping Gaussian blobs in 8 dimensions (``make_blobs``);
    metric accuracy, which saturates below 1. A fresh workload of the third batch (see
    ``IrisTiny``)."""

    metric = "accuracy"

    def __init__(self) -> None:
        from sklearn.datasets import make_blobs

        x, y = make_blobs(n_samples=3000, centers=10, n_features=8, cluster_std=6.0, random_state=17)
        super().__init__(*_split(x / 10.0, y, 0.3, True))

    def build_model(self) -> nn.Module:
        return _mlp(8, [64, 64], 10)


class SCurveMSE(_Regressor):
    """An MLP (3-64-64-1) that reads a point of the 3-D S-curve (``make_s_curve``, noise 0.1) and
    predicts its position along the curve (standardised); metric val MSE. A fresh workload of the
    third batch (see ``IrisTiny``)."""

    metric = "val_mse"

    def __init__(self) -> None:
        from sklearn.datasets import make_s_curve

        x, t = make_s_curve(n_samples=2000, noise=0.1, random_state=19)
        t = ((t - t.mean()) / t.std()).astype(np.float32)
        super().__init__(*_split(x, t, 0.3, False))

    def build_model(self) -> nn.Module:
        return _mlp(3, [64, 64], 1)


class CirclesLoss(_Classifier):
    """An MLP (2-32-32-2) on two noisy concentric circles (``make_circles``); metric val
    cross-entropy. Recorded in session 23 as the fourth batch of *fresh* workloads: defined after
    the third batch's check had been read and a relative rule for the bounded reach model had
    been written down, and nothing scored on them before that rule was committed."""

    metric = "val_loss"

    def __init__(self) -> None:
        from sklearn.datasets import make_circles

        x, y = make_circles(n_samples=2000, factor=0.5, noise=0.15, random_state=23)
        super().__init__(*_split(x, y, 0.3, True))

    def build_model(self) -> nn.Module:
        return _mlp(2, [32, 32], 2)


class QuantilesAccuracy(_Classifier):
    """An MLP (6-64-64-3) telling apart three shells of a 6-D Gaussian
    (``make_gaussian_quantiles``); metric accuracy. A fresh workload of the fourth batch (see
    ``CirclesLoss``)."""

    metric = "accuracy"

    def __init__(self) -> None:
        from sklearn.datasets import make_gaussian_quantiles

        x, y = make_gaussian_quantiles(n_samples=3000, n_features=6, n_classes=3, random_state=29)
        super().__init__(*_split(x, y, 0.3, True))

    def build_model(self) -> nn.Module:
        return _mlp(6, [64, 64], 3)


class Friedman3MSE(_Regressor):
    """An MLP (4-64-1) on ``make_friedman3`` (an arctangent of a ratio), inputs and targets
    standardised; metric val MSE. A fresh workload of the fourth batch (see ``CirclesLoss``)."""

    metric = "val_mse"

    def __init__(self) -> None:
        from sklearn.datasets import make_friedman3

        x, y = make_friedman3(n_samples=2000, noise=0.1, random_state=31)
        y = ((y - y.mean()) / y.std()).astype(np.float32)
        x_train, y_train, x_val, y_val = _split(x, y, 0.3, False)
        x_train, x_val = _standardise(x_train, x_val)
        super().__init__(x_train, y_train, x_val, y_val)

    def build_model(self) -> nn.Module:
        return _mlp(4, [64], 1)


class DigitsPCA(_Classifier):
    """An MLP (16-32-10) on sklearn's digits reduced to 16 principal components (fitted on the
    training rows); metric val_error. A fresh workload of the fourth batch (see ``CirclesLoss``)."""

    metric = "val_error"

    def __init__(self) -> None:
        from sklearn.datasets import load_digits
        from sklearn.decomposition import PCA

        x, y = load_digits(return_X_y=True)
        x_train, y_train, x_val, y_val = _split(x / 16.0, y, 0.2, True)
        pca = PCA(n_components=16, random_state=0).fit(x_train)
        x_train, x_val = _standardise(pca.transform(x_train), pca.transform(x_val))
        super().__init__(x_train, y_train, x_val, y_val)

    def build_model(self) -> nn.Module:
        return _mlp(16, [32], 10)


class MultilabelHamming(_Tabular):
    """An MLP (20-64-5) predicting five labels at once (``make_multilabel_classification``),
    trained with binary cross-entropy per label; metric val_hamming, the share of wrong label
    bits. Recorded in session 24 as the fifth batch of *fresh* workloads: defined after the rule
    it checks had been committed, and nothing scored on them before."""

    metric = "val_hamming"

    def __init__(self) -> None:
        from sklearn.datasets import make_multilabel_classification

        x, y = make_multilabel_classification(
            n_samples=3000, n_features=20, n_classes=5, n_labels=2, random_state=37
        )
        x_train, y_train, x_val, y_val = _split(x, y.astype(np.float32), 0.3, False)
        x_train, x_val = _standardise(x_train, x_val)
        super().__init__(x_train, y_train, x_val, y_val)

    def build_model(self) -> nn.Module:
        return _mlp(20, [64], 5)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, labels = batch
        return F.binary_cross_entropy_with_logits(model(inputs), labels)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float()
        wrong = ((logits > 0).float() != self.y_val).float().mean().item()
        return {
            "val_hamming": wrong,
            "val_loss": F.binary_cross_entropy_with_logits(logits, self.y_val).item(),
        }


class SparseParity(_Classifier):
    """An MLP (16-128-2) on the parity of 3 fixed bits among 16 random ±1 bits: the classic
    curve that sits at chance for a while and then drops (a feature must be found first);
    metric val_error. 4,000 training strings, 1,000 held out. A fresh workload of the fifth batch
    (see ``MultilabelHamming``)."""

    metric = "val_error"

    def __init__(self) -> None:
        rng = np.random.default_rng(41)
        bits = rng.integers(0, 2, size=(5000, 16))
        y = (bits[:, [2, 7, 11]].sum(axis=1) % 2).astype(np.int64)
        super().__init__(*_split(2.0 * bits - 1.0, y, 0.2, True))

    def build_model(self) -> nn.Module:
        return _mlp(16, [128], 2)


class IllConditionedLinear(_Regressor):
    """Linear regression (one linear layer) on 40 features whose scales fall from 1 to 0.01 along
    a random rotation (condition number about 100): the loss surface is a long narrow valley, so
    gradient steps crawl along its floor and the tail is slow; each direction carries a share of
    the target's variance proportional to its scale; targets standardised; metric val MSE (least
    squares reaches 0.010). A fresh workload of the fifth batch (see ``MultilabelHamming``)."""

    metric = "val_mse"

    def __init__(self) -> None:
        rng = np.random.default_rng(43)
        latent = rng.normal(size=(2000, 40))
        scales = np.logspace(0, -2, 40)
        rotation, _ = np.linalg.qr(rng.normal(size=(40, 40)))
        x = (latent * scales) @ rotation
        y = (latent * np.sqrt(scales)) @ rng.choice([-1.0, 1.0], 40) + rng.normal(0.0, 0.3, 2000)
        y = ((y - y.mean()) / y.std()).astype(np.float32)
        super().__init__(*_split(x, y, 0.3, False))

    def build_model(self) -> nn.Module:
        return nn.Linear(40, 1)


class _BagOfBigrams(nn.Module):
    def __init__(self, buckets: int, width: int, classes: int):
        super().__init__()
        self.buckets = buckets
        self.bag = nn.EmbeddingBag(buckets, width, mode="mean")
        self.head = nn.Linear(width, classes)

    def forward(self, windows: torch.Tensor) -> torch.Tensor:
        bigrams = (windows[:, :-1] * 257 + windows[:, 1:]) % self.buckets
        return self.head(torch.tanh(self.bag(bigrams)))


class SourceFileTopic(_Classifier):
    """Which of four stdlib modules a 48-byte window of source comes from: a bag of hashed byte
    bigrams (2,048 buckets, width 32) and a linear head, text classification; metric val_error.
    Windows from each file's last fifth are held out. A fresh workload of the fifth batch (see
    ``MultilabelHamming``)."""

    metric = "val_error"
    sources = ("csv.py", "difflib.py", "heapq.py", "ftplib.py")
    window = 48

    def __init__(self) -> None:
        rng = np.random.default_rng(47)
        parts: dict[str, list[np.ndarray]] = {"train": [], "val": []}
        labels: dict[str, list[np.ndarray]] = {"train": [], "val": []}
        for label, name in enumerate(self.sources):
            data = stdlib_bytes((name,), 60_000).numpy()
            split = int(0.8 * len(data))
            for part, chunk, count in (("train", data[:split], 600), ("val", data[split:], 150)):
                starts = rng.integers(0, len(chunk) - self.window, size=count)
                parts[part].append(np.stack([chunk[s : s + self.window] for s in starts]))
                labels[part].append(np.full(count, label, dtype=np.int64))
        super().__init__(
            np.concatenate(parts["train"]),
            np.concatenate(labels["train"]),
            np.concatenate(parts["val"]),
            np.concatenate(labels["val"]),
        )
        self.x_train, self.x_val = self.x_train.long(), self.x_val.long()

    def build_model(self) -> nn.Module:
        return _BagOfBigrams(2048, 32, len(self.sources))


class _Factorisation(nn.Module):
    def __init__(self, users: int, items: int, width: int):
        super().__init__()
        self.user, self.item = nn.Embedding(users, width), nn.Embedding(items, width)
        self.user_bias, self.item_bias = nn.Embedding(users, 1), nn.Embedding(items, 1)
        for table in (self.user, self.item):
            nn.init.normal_(table.weight, std=0.1)
        for table in (self.user_bias, self.item_bias):
            nn.init.zeros_(table.weight)

    def forward(self, pairs: torch.Tensor) -> torch.Tensor:
        user, item = pairs[:, 0], pairs[:, 1]
        dot = (self.user(user) * self.item(item)).sum(-1, keepdim=True)
        return dot + self.user_bias(user) + self.item_bias(item)


class RatingsFactorisation(_Regressor):
    """Matrix factorisation of generated ratings: 400 users × 300 items, rank-4 preferences plus
    user and item offsets and noise, 9,000 observed pairs for training and 3,000 held out;
    embeddings of width 16 and biases, trained with MSE on standardised ratings; metric val MSE.
    Recorded in session 27 as the sixth batch of *fresh* workloads: defined after the check it
    serves had been committed, and nothing scored on them before."""

    metric = "val_mse"

    def __init__(self) -> None:
        rng = np.random.default_rng(53)
        users, items = rng.normal(size=(400, 4)), rng.normal(size=(300, 4))
        offsets_user, offsets_item = rng.normal(0, 0.5, 400), rng.normal(0, 0.5, 300)
        pairs = np.stack([rng.integers(0, 400, 12_000), rng.integers(0, 300, 12_000)], axis=1)
        y = (
            (users[pairs[:, 0]] * items[pairs[:, 1]]).sum(1) / 2
            + offsets_user[pairs[:, 0]]
            + offsets_item[pairs[:, 1]]
            + rng.normal(0, 0.5, len(pairs))
        )
        y = ((y - y.mean()) / y.std()).astype(np.float32)
        super().__init__(*_split(pairs, y, 0.25, False))
        self.x_train, self.x_val = self.x_train.long(), self.x_val.long()

    def build_model(self) -> nn.Module:
        return _Factorisation(400, 300, 16)


class ImbalancedLoss(_Classifier):
    """An MLP (20-64-2) on a two-class problem where one class is 8% of the rows
    (``make_classification`` with label noise); metric val cross-entropy, which a model that
    always answers the majority class already brings to about 0.28. A fresh workload of the
    sixth batch (see ``RatingsFactorisation``)."""

    metric = "val_loss"

    def __init__(self) -> None:
        super().__init__(*_standardised_classification(
            n_samples=4000, n_features=20, n_informative=6, n_redundant=4, weights=[0.92, 0.08],
            flip_y=0.02, class_sep=0.8, random_state=59,
        ))  # fmt: skip

    def build_model(self) -> nn.Module:
        return _mlp(20, [64], 2)


class _CountingGRU(nn.Module):
    def __init__(self, vocab: int, width: int, classes: int):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.gru = nn.GRU(width, width, batch_first=True)
        self.head = nn.Linear(width, classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        _, last = self.gru(self.embed(tokens))
        return self.head(last[-1])


class GRUCounting(_Classifier):
    """A GRU (width 32) reading 16 tokens of a 4-token vocabulary and answering how many of them
    are token 0 (0 to 7, 7 meaning seven or more): a recurrent network that must count; metric
    val error. 4,000 generated sequences for training, 1,000 held out. A fresh workload of the
    sixth batch (see ``RatingsFactorisation``)."""

    metric = "val_error"

    def __init__(self) -> None:
        rng = np.random.default_rng(61)
        tokens = rng.integers(0, 4, size=(5000, 16))
        y = np.minimum((tokens == 0).sum(axis=1), 7).astype(np.int64)
        super().__init__(*_split(tokens, y, 0.2, False))
        self.x_train, self.x_val = self.x_train.long(), self.x_val.long()

    def build_model(self) -> nn.Module:
        return _CountingGRU(4, 32, 8)


class _Denoiser(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv1d(1, 16, 5, padding=2),
            nn.ReLU(),
            nn.Conv1d(16, 16, 5, padding=2),
            nn.ReLU(),
            nn.Conv1d(16, 1, 5, padding=2),
        )

    def forward(self, noisy: torch.Tensor) -> torch.Tensor:
        return self.net(noisy).squeeze(1)


class DenoiseConv1d(_Regressor):
    """A three-layer 1-D convolutional denoiser: sums of two sines of random frequency, phase and
    amplitude (length 64) under Gaussian noise of standard deviation 0.5, the clean signal as
    target; trained and scored with MSE per sample point; metric val MSE (the noisy input itself
    scores 0.25). 2,400 signals for training, 600 held out. A fresh workload of the sixth batch
    (see ``RatingsFactorisation``)."""

    metric = "val_mse"

    def __init__(self) -> None:
        rng = np.random.default_rng(67)
        t = np.arange(64) / 64
        freq = rng.uniform(1.0, 8.0, size=(3000, 2, 1))
        phase = rng.uniform(0.0, 2 * np.pi, size=(3000, 2, 1))
        amplitude = rng.uniform(0.3, 1.0, size=(3000, 2, 1))
        clean = (amplitude * np.sin(2 * np.pi * freq * t + phase)).sum(axis=1).astype(np.float32)
        noisy = (clean + rng.normal(0.0, 0.5, size=clean.shape)).astype(np.float32)[:, None, :]
        super().__init__(*_split(noisy, clean, 0.2, False))

    def build_model(self) -> nn.Module:
        return _Denoiser()


class _GCN(nn.Module):
    """Two graph convolutions over a fixed normalised adjacency; called with node indices, it
    runs the whole graph and returns those nodes' logits."""

    def __init__(self, adjacency: torch.Tensor, features: torch.Tensor, width: int, classes: int):
        super().__init__()
        self.register_buffer("adjacency", adjacency)
        self.register_buffer("features", features)
        self.first = nn.Linear(features.shape[1], width)
        self.second = nn.Linear(width, classes)

    def forward(self, nodes: torch.Tensor) -> torch.Tensor:
        hidden = F.relu(self.adjacency @ self.first(self.features))
        return (self.adjacency @ self.second(hidden))[nodes.long()]


class GCNBlocks(_Classifier):
    """Node classification on a generated graph: 600 nodes in 4 blocks (edge probability 0.03
    within a block, 0.006 across), features 16 noisy dimensions of which only some carry the
    block; a two-layer graph convolution (width 32) over the symmetric-normalised adjacency with
    self-loops; 420 labelled nodes to train on, 180 held out; metric accuracy. Recorded in
    session 29 as the seventh batch of *fresh* workloads, defined before any check was written
    for it."""

    metric = "accuracy"

    def __init__(self) -> None:
        rng = np.random.default_rng(71)
        blocks = np.repeat(np.arange(4), 150)
        same = blocks[:, None] == blocks[None, :]
        upper = np.triu(rng.random((600, 600)) < np.where(same, 0.03, 0.006), k=1)
        adjacency = (upper | upper.T).astype(np.float32) + np.eye(600, dtype=np.float32)
        scale = 1.0 / np.sqrt(adjacency.sum(axis=1))
        self.adjacency = torch.tensor(adjacency * scale[:, None] * scale[None, :])
        centres = rng.normal(0.0, 0.6, size=(4, 16)) * (rng.random(16) < 0.5)
        self.features = torch.tensor(
            centres[blocks] + rng.normal(0.0, 1.0, size=(600, 16)), dtype=torch.float32
        )
        nodes = np.arange(600)
        super().__init__(*_split(nodes, blocks.astype(np.int64), 0.3, True))

    def build_model(self) -> nn.Module:
        return _GCN(self.adjacency, self.features, 32, 4)


class ARForecast(_Regressor):
    """One-step-ahead forecasting of a generated time series (an AR(2) process plus two seasonal
    cycles and noise, standardised): an MLP 24-32-1 reads the last 24 values and predicts the
    next; windows from the first 80% of the series train it, the rest are held out (no
    shuffling across time); metric val MSE. A fresh workload of the seventh batch (see
    ``GCNBlocks``)."""

    metric = "val_mse"

    def __init__(self) -> None:
        rng = np.random.default_rng(73)
        length = 4024
        series = np.zeros(length)
        for t in range(2, length):
            series[t] = 1.2 * series[t - 1] - 0.5 * series[t - 2] + rng.normal(0.0, 0.5)
        time_index = np.arange(length)
        series += np.sin(2 * np.pi * time_index / 50) + 0.5 * np.sin(2 * np.pi * time_index / 13)
        series = (series - series.mean()) / series.std()
        windows = np.lib.stride_tricks.sliding_window_view(series[:-1], 24).astype(np.float32)
        targets = series[24:].astype(np.float32)
        cut = int(0.8 * len(windows))
        super().__init__(windows[:cut], targets[:cut], windows[cut:], targets[cut:])

    def build_model(self) -> nn.Module:
        return _mlp(24, [32], 1)


class PoissonCounts(_Tabular):
    """Count regression with a log link: counts drawn from a Poisson distribution whose log-rate
    is a smooth non-linear function of 10 features; an MLP 10-32-1 outputs the log-rate and is
    trained and scored with the Poisson negative log-likelihood (``poisson_nll_loss``, without
    the constant log(y!) term, so the metric may be negative); 3,000 rows to train on, 1,000 held
    out; metric val NLL. A fresh workload of the seventh batch (see ``GCNBlocks``)."""

    metric = "val_nll"

    def __init__(self) -> None:
        rng = np.random.default_rng(79)
        x = rng.normal(size=(4000, 10)).astype(np.float32)
        log_rate = 0.8 + 0.6 * np.tanh(x[:, 0] + x[:, 1]) + 0.4 * x[:, 2] * x[:, 3] - 0.3 * x[:, 4] ** 2
        counts = rng.poisson(np.exp(log_rate)).astype(np.float32)
        super().__init__(*_split(x, counts, 0.25, False))

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, counts = batch
        return F.poisson_nll_loss(model(inputs).squeeze(-1), counts, log_input=True)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        log_rate = model(self.x_val).squeeze(-1).float()
        return {"val_nll": F.poisson_nll_loss(log_rate, self.y_val, log_input=True).item()}

    def build_model(self) -> nn.Module:
        return _mlp(10, [32], 1)


class AUCScores(_Classifier):
    """A binary classifier scored by ranking: an MLP 16-32-2 on ``make_classification`` (30%
    positives, 5% flipped labels), metric val ROC AUC, a score that saturates below 1 (the flipped
    labels cap it); 2,800 rows to train on, 1,200 held out. A fresh workload of the seventh batch
    (see ``GCNBlocks``)."""

    metric = "val_auc"

    def __init__(self) -> None:
        super().__init__(*_standardised_classification(
            n_samples=4000, n_features=16, n_informative=5, n_redundant=3, weights=[0.7, 0.3],
            flip_y=0.05, class_sep=0.7, random_state=83,
        ))  # fmt: skip

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        from sklearn.metrics import roc_auc_score

        metrics = super().evaluate(model)
        scores = torch.softmax(model(self.x_val).float(), dim=-1)[:, 1]
        finite = bool(torch.isfinite(scores).all())
        metrics["val_auc"] = (
            float(roc_auc_score(self.y_val.numpy(), scores.numpy())) if finite else float("nan")
        )
        return metrics

    def build_model(self) -> nn.Module:
        return _mlp(16, [32], 2)


class SetMax(_Regressor):
    """A permutation-invariant network (Deep Sets: an MLP 2-32-32 per element, mean-pooled, then
    32-32-1) reading a set of 12 points in the square and predicting the largest product of a
    point's coordinates, standardised; 3,000 sets to train on, 1,000 held out; metric val MSE.
    Recorded in session 31 as the eighth batch of *fresh* workloads: defined after the check it
    serves had been committed, and nothing scored on them before."""

    metric = "val_mse"

    def __init__(self) -> None:
        rng = np.random.default_rng(103)
        points = rng.uniform(-1.0, 1.0, size=(4000, 12, 2)).astype(np.float32)
        y = (points[..., 0] * points[..., 1]).max(axis=1)
        y = ((y - y.mean()) / y.std()).astype(np.float32)
        super().__init__(*_split(points, y, 0.25, False))

    def build_model(self) -> nn.Module:
        return _DeepSets(2, 32)


class _DeepSets(nn.Module):
    def __init__(self, features: int, width: int) -> None:
        super().__init__()
        self.element = _mlp(features, [width], width)
        self.head = _mlp(width, [width], 1)

    def forward(self, sets: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self.element(sets)).mean(dim=1))


class DeepTanhCheckerboard(_Classifier):
    """A deep narrow tanh network (four hidden layers of width 24) on a 2-D checkerboard of 2 × 2
    squares (an XOR): depth and saturating units make the start slow; 3,000 points to train on, 1,000 held
    out; metric accuracy. A fresh workload of the eighth batch (see ``SetMax``)."""

    metric = "accuracy"

    def __init__(self) -> None:
        rng = np.random.default_rng(89)
        x = rng.uniform(-1.0, 1.0, size=(4000, 2)).astype(np.float32)
        cells = (x > 0.0).astype(np.int64)
        y = ((cells[:, 0] + cells[:, 1]) % 2).astype(np.int64)
        super().__init__(*_split(x, y, 0.25, True))

    def build_model(self) -> nn.Module:
        layers: list[nn.Module] = []
        inputs = 2
        for _ in range(4):
            layers += [nn.Linear(inputs, 24), nn.Tanh()]
            inputs = 24
        layers.append(nn.Linear(inputs, 2))
        return nn.Sequential(*layers)


class HuberOutliers(_Regressor):
    """Robust regression: an MLP 8-32-1 trained with the Huber loss on targets whose noise is
    heavy-tailed (Student t with 1.5 degrees of freedom), scored by the validation mean absolute
    error, a metric that differs from the loss; 2,400 rows to train on, 800 held out. A fresh
    workload of the eighth batch (see ``SetMax``)."""

    metric = "val_mae"

    def __init__(self) -> None:
        rng = np.random.default_rng(97)
        x = rng.normal(size=(3200, 8)).astype(np.float32)
        clean = np.sin(x[:, 0]) + 0.5 * x[:, 1] * x[:, 2] + 0.3 * x[:, 3]
        y = (clean + 0.3 * rng.standard_t(1.5, size=3200)).astype(np.float32)
        super().__init__(*_split(x, y, 0.25, False))

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, targets = batch
        return F.huber_loss(model(inputs).squeeze(-1), targets, delta=0.5)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        predictions = model(self.x_val).squeeze(-1).float()
        return {"val_mae": (predictions - self.y_val).abs().mean().item()}

    def build_model(self) -> nn.Module:
        return _mlp(8, [32], 1)


class PinballQuantile(_Regressor):
    """Quantile regression: an MLP 6-32-1 predicting the 0.9 quantile of a target whose noise
    grows with the first feature, trained and scored with the pinball loss; 2,400 rows to train
    on, 800 held out; metric val pinball loss. A fresh workload of the eighth batch (see
    ``SetMax``)."""

    metric = "val_pinball"
    quantile = 0.9

    def __init__(self) -> None:
        rng = np.random.default_rng(101)
        x = rng.uniform(-1.0, 1.0, size=(3200, 6)).astype(np.float32)
        scale = 0.2 + 0.8 * (x[:, 0] + 1.0) / 2.0
        y = (x[:, 1] - x[:, 2] ** 2 + scale * rng.normal(size=3200)).astype(np.float32)
        super().__init__(*_split(x, y, 0.25, False))

    def _pinball(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        residual = targets - predictions
        return torch.maximum(self.quantile * residual, (self.quantile - 1.0) * residual).mean()

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, targets = batch
        return self._pinball(model(inputs).squeeze(-1), targets)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        return {"val_pinball": self._pinball(model(self.x_val).squeeze(-1).float(), self.y_val).item()}

    def build_model(self) -> nn.Module:
        return _mlp(6, [32], 1)


class VAEDigits(_Tabular):
    """A variational autoencoder (64-32-(4 + 4)-32-64, Bernoulli decoder) on sklearn's 8 × 8 digits
    with pixels in [0, 1]: trained on the negative ELBO with one reparameterised draw, scored by
    the val negative ELBO in nats per image with a fixed set of draws (the same at every
    evaluation); 1,437 images to train on, 360 held out. Recorded in session 32 as the ninth
    batch of *fresh* workloads: defined after the check it serves had been committed, and
    nothing scored on them before."""

    metric = "val_nelbo"

    def __init__(self) -> None:
        from sklearn.datasets import load_digits

        digits = load_digits()
        x = (digits.data / 16.0).astype(np.float32)
        x_train, _, x_val, _ = _split(x, digits.target, 0.2, True)
        super().__init__(x_train, x_train, x_val, x_val)
        self.val_noise = torch.randn(len(x_val), _VAE.LATENT, generator=torch.Generator().manual_seed(5))

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, _ = batch
        return model.nelbo(inputs, torch.randn(len(inputs), _VAE.LATENT))

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        return {"val_nelbo": model.nelbo(self.x_val, self.val_noise).float().item()}

    def build_model(self) -> nn.Module:
        return _VAE()


class _VAE(nn.Module):
    LATENT = 4

    def __init__(self) -> None:
        super().__init__()
        self.encoder = _mlp(64, [32], 2 * self.LATENT)
        self.decoder = _mlp(self.LATENT, [32], 64)

    def nelbo(self, x: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
        mean, log_var = self.encoder(x).chunk(2, dim=-1)
        z = mean + torch.exp(0.5 * log_var) * noise.to(mean.dtype)
        logits = self.decoder(z)
        reconstruction = F.binary_cross_entropy_with_logits(logits, x, reduction="none").sum(-1)
        kl = 0.5 * (mean**2 + log_var.exp() - 1.0 - log_var).sum(-1)
        return (reconstruction + kl).mean()


class ListwiseRanking(_Tabular):
    """Learning to rank: 600 queries of 10 items with 8 features each and graded relevance 0-3
    (a non-linear function of the features plus noise); an MLP 8-32-1 scores each item and is
    trained with the listwise softmax cross-entropy (ListNet); metric val NDCG@5, a score that
    saturates below 1 (the noise caps it); 450 queries to train on, 150 held out. A fresh
    workload of the ninth batch (see ``VAEDigits``)."""

    metric = "val_ndcg5"
    items = 10

    def __init__(self) -> None:
        rng = np.random.default_rng(107)
        x = rng.normal(size=(600, self.items, 8)).astype(np.float32)
        score = np.tanh(x[..., 0] + 0.5 * x[..., 1]) + 0.5 * x[..., 2] * x[..., 3] - 0.3 * x[..., 4] ** 2
        score = score + 0.4 * rng.normal(size=score.shape)
        relevance = np.digitize(score, np.quantile(score, [0.5, 0.8, 0.95])).astype(np.float32)
        super().__init__(*_split(x, relevance, 0.25, False))
        self.ideal = self._dcg(self.y_val, self.y_val)

    @staticmethod
    def _dcg(order_by: torch.Tensor, relevance: torch.Tensor, k: int = 5) -> torch.Tensor:
        top = torch.argsort(order_by, dim=-1, descending=True, stable=True)[:, :k]
        gains = (2.0 ** torch.gather(relevance, 1, top)) - 1.0
        return (gains / torch.log2(torch.arange(2, k + 2, dtype=torch.float32))).sum(-1)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, relevance = batch
        scores = model(inputs).squeeze(-1)
        return -(torch.softmax(relevance, -1) * torch.log_softmax(scores, -1)).sum(-1).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        scores = model(self.x_val).squeeze(-1).float()
        if not bool(torch.isfinite(scores).all()):
            return {"val_ndcg5": float("nan")}
        ndcg = self._dcg(scores, self.y_val) / self.ideal.clamp_min(1e-9)
        return {"val_ndcg5": ndcg.mean().item()}

    def build_model(self) -> nn.Module:
        return _mlp(8, [32], 1)


STRING_SOURCES = ("textwrap.py", "shlex.py", "pprint.py", "configparser.py")


class StringTagger(_Classifier):
    """Sequence labelling on Python source: a byte-level convolutional tagger (embedding 16, two
    convolutions of width 5 and 32 channels, a per-byte head) marks each byte of a 64-byte window
    of stdlib source as inside a string literal or not (labels from the standard ``tokenize``
    module); 2,400 windows to train on, 600 held out (from files of their own); metric the share
    of wrongly tagged bytes. A fresh workload of the ninth batch (see ``VAEDigits``)."""

    metric = "val_error"
    window = 64

    def __init__(self) -> None:
        rng = np.random.default_rng(109)
        train = self._windows(STRING_SOURCES[:3], 2400, rng)
        val = self._windows(STRING_SOURCES[3:], 600, rng)
        super().__init__(train[0], train[1], val[0], val[1])
        self.x_train, self.x_val = self.x_train.long(), self.x_val.long()

    @classmethod
    def _windows(
        cls, sources: tuple[str, ...], count: int, rng: np.random.Generator
    ) -> tuple[np.ndarray, ...]:
        import io
        import tokenize

        stdlib = Path(sysconfig.get_paths()["stdlib"])
        texts, tags = [], []
        for name in sources:
            text = (stdlib / name).read_text(encoding="utf-8")
            lines = text.splitlines(keepends=True)
            starts = np.cumsum([0] + [len(line) for line in lines])
            inside = np.zeros(len(text), dtype=np.int64)
            for token in tokenize.generate_tokens(io.StringIO(text).readline):
                if token.type == tokenize.STRING:
                    (r0, c0), (r1, c1) = token.start, token.end
                    inside[starts[r0 - 1] + c0 : starts[r1 - 1] + c1] = 1
            codes = np.frombuffer(text.encode("latin-1", errors="replace"), dtype=np.uint8)
            texts.append(codes[: len(inside)].astype(np.int64))
            tags.append(inside[: len(codes)])
        text, tag = np.concatenate(texts), np.concatenate(tags)
        at = rng.integers(0, len(text) - cls.window, size=count)
        span = at[:, None] + np.arange(cls.window)[None, :]
        return text[span], tag[span]

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, labels = batch
        return F.cross_entropy(model(inputs).transpose(1, 2), labels)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float()
        wrong = (logits.argmax(-1) != self.y_val).float().mean().item()
        return {"val_error": wrong, "accuracy": 1.0 - wrong}

    def build_model(self) -> nn.Module:
        return _ConvTagger()


class _ConvTagger(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(256, 16)
        self.conv1 = nn.Conv1d(16, 32, 5, padding=2)
        self.conv2 = nn.Conv1d(32, 32, 5, padding=2)
        self.head = nn.Linear(32, 2)

    def forward(self, codes: torch.Tensor) -> torch.Tensor:
        h = self.embed(codes).transpose(1, 2)
        h = torch.relu(self.conv2(torch.relu(self.conv1(h))))
        return self.head(h.transpose(1, 2))


class MixtureDensity(_Tabular):
    """Conditional density estimation: a mixture density network (an MLP 1-32-32 with a head of
    three Gaussian components: weights, means, log scales) models y given x where y lies on one
    of two branches of a noisy curve; trained and scored by the negative log-likelihood (which
    goes below 0 as the density sharpens); 2,400 points to train on, 800 held out; metric val NLL.
    A fresh workload of the ninth batch (see ``VAEDigits``)."""

    metric = "val_nll"

    def __init__(self) -> None:
        rng = np.random.default_rng(113)
        x = rng.uniform(-1.0, 1.0, size=(3200, 1)).astype(np.float32)
        branch = rng.choice([-1.0, 1.0], size=3200)
        y = (branch * np.sqrt(1.2 + x[:, 0]) + 0.3 * x[:, 0] + 0.1 * rng.normal(size=3200)).astype(np.float32)
        super().__init__(*_split(x, y, 0.25, False))

    @staticmethod
    def _nll(out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        logits, means, log_scales = out.chunk(3, dim=-1)
        log_scales = log_scales.clamp(-7.0, 7.0)
        per = -0.5 * ((y[:, None] - means) / log_scales.exp()) ** 2 - log_scales - 0.5 * math.log(2 * math.pi)
        return -torch.logsumexp(torch.log_softmax(logits, -1) + per, dim=-1).mean()

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, targets = batch
        return self._nll(model(inputs), targets)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        return {"val_nll": self._nll(model(self.x_val).float(), self.y_val).item()}

    def build_model(self) -> nn.Module:
        return _mlp(1, [32, 32], 9)


class ContrastiveRetrieval(_Tabular):
    """Metric learning: an MLP 20-64-16 embeds points of a 4-class, 8-cluster
    ``make_classification`` problem (5 informative of 20 features) and is trained with the
    supervised contrastive loss (same-label points of a batch pulled together on the unit
    sphere, temperature 0.2); metric val recall@1: the share of held-out points whose nearest
    training point by cosine similarity of the embeddings has their label (the raw features
    give 0.49). 1,400 points to train on, 600 held out. Recorded in session 33 as the tenth
    batch of *fresh* workloads: defined after the checks it serves had been committed, and
    nothing scored on them before."""

    metric = "val_recall1"

    def __init__(self) -> None:
        super().__init__(
            *_standardised_classification(
                n_samples=2000, n_features=20, n_informative=5, n_redundant=0, n_classes=4,
                n_clusters_per_class=2, class_sep=1.0, random_state=211,
            )
        )  # fmt: skip

    @staticmethod
    def _embed(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
        return F.normalize(model(x).float(), dim=-1)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, labels = batch
        z = F.normalize(model(inputs), dim=-1)
        eye = torch.eye(len(labels), dtype=torch.bool)
        logits = (z @ z.T / 0.2).masked_fill(eye, -1e9)
        log_prob = logits - torch.logsumexp(logits, dim=-1, keepdim=True)
        positive = (labels[:, None] == labels[None, :]) & ~eye
        count = positive.sum(-1)
        per_anchor = -(log_prob * positive).sum(-1) / count.clamp_min(1)
        return per_anchor[count > 0].mean() if bool((count > 0).any()) else logits.sum() * 0.0

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        z_val, z_train = self._embed(model, self.x_val), self._embed(model, self.x_train)
        if not bool(torch.isfinite(z_val).all() and torch.isfinite(z_train).all()):
            return {"val_recall1": float("nan")}
        nearest = (z_val @ z_train.T).argmax(-1)
        return {"val_recall1": (self.y_train[nearest] == self.y_val).float().mean().item()}

    def build_model(self) -> nn.Module:
        return _mlp(20, [64], 16)


class CoxSurvival(_Tabular):
    """Survival analysis with censoring: an MLP 10-32-1 gives each subject a log-risk and is
    trained on the Cox partial likelihood of its batch (Breslow ties); event times are
    exponential with a log-rate non-linear in the features, about 35% censored at random;
    metric val concordance index (Harrell's C: of the comparable held-out pairs, the share
    ordered right by the predicted risk), a score that saturates well below 1. 1,800 subjects
    to train on, 600 held out. A fresh workload of the tenth batch (see
    ``ContrastiveRetrieval``)."""

    metric = "val_cindex"

    def __init__(self) -> None:
        rng = np.random.default_rng(223)
        x = rng.normal(size=(2400, 10)).astype(np.float32)
        log_rate = 0.8 * x[:, 0] - 0.6 * x[:, 1] ** 2 + 0.5 * np.sin(2.0 * x[:, 2]) + 0.4 * x[:, 3] * x[:, 4]
        event_time = rng.exponential(1.0 / np.exp(log_rate))
        censor_time = rng.exponential(1.6, size=2400)
        time = np.minimum(event_time, censor_time)
        event = (event_time <= censor_time).astype(np.float64)
        y = np.stack([time, event], axis=1).astype(np.float32)
        super().__init__(*_split(x, y, 0.25, False))
        self._comparable = self._pairs(self.y_val)

    @staticmethod
    def _pairs(y: torch.Tensor) -> torch.Tensor:
        time, event = y[:, 0], y[:, 1]
        return (event[:, None] > 0) & (time[:, None] < time[None, :])

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, y = batch
        order = torch.argsort(y[:, 0], descending=True)
        risk, event = model(inputs).squeeze(-1)[order], y[order, 1]
        at_risk = torch.logcumsumexp(risk, dim=0)  # everyone still at risk at each time, latest first
        return -((risk - at_risk) * event).sum() / event.sum().clamp_min(1.0)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        risk = model(self.x_val).squeeze(-1).float()
        if not bool(torch.isfinite(risk).all()):
            return {"val_cindex": float("nan")}
        diff = risk[:, None] - risk[None, :]
        score = (diff > 0).float() + 0.5 * (diff == 0).float()
        return {"val_cindex": (score[self._comparable].mean()).item()}

    def build_model(self) -> nn.Module:
        return _mlp(10, [32], 1)


class FourierImageFit(_Regressor):
    """An implicit neural representation: an MLP on random Fourier features of the pixel
    coordinates (32 frequencies, scale 1.5, fixed) fits a 48 × 48 grey image drawn from
    overlapping discs, bars and a smooth shading; half the pixels (a random half) to train on,
    the others held out; metric val PSNR in dB (higher is better, no fixed ceiling). A fresh
    workload of the tenth batch (see ``ContrastiveRetrieval``)."""

    metric = "val_psnr"
    size = 48
    scale = 1.5

    def __init__(self) -> None:
        rng = np.random.default_rng(227)
        u = np.linspace(-1.0, 1.0, self.size, dtype=np.float32)
        gx, gy = np.meshgrid(u, u, indexing="xy")
        image = 0.3 + 0.2 * np.sin(2.0 * gx + gy)
        for _ in range(6):
            cx, cy, r, level = (
                rng.uniform(-0.8, 0.8),
                rng.uniform(-0.8, 0.8),
                rng.uniform(0.1, 0.4),
                rng.uniform(0.3, 1.0),
            )
            image = np.where((gx - cx) ** 2 + (gy - cy) ** 2 < r**2, level, image)
        for _ in range(3):
            at, width = rng.uniform(-0.9, 0.9), rng.uniform(0.03, 0.1)
            image = np.where(np.abs(gx + 0.5 * gy - at) < width, 0.05, image)
        coords = np.stack([gx.ravel(), gy.ravel()], axis=1).astype(np.float32)
        values = image.ravel().astype(np.float32)
        order = rng.permutation(len(values))
        half = len(values) // 2
        train, val = order[:half], order[half:]
        super().__init__(coords[train], values[train], coords[val], values[val])
        self.frequencies = torch.tensor(rng.normal(scale=self.scale, size=(2, 32)), dtype=torch.float32)

    def build_model(self) -> nn.Module:
        return _FourierMLP(self.frequencies)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        mse = F.mse_loss(model(self.x_val).squeeze(-1).float(), self.y_val).item()
        if not math.isfinite(mse):
            return {"val_psnr": float("nan"), "val_mse": mse}
        return {"val_psnr": -10.0 * math.log10(max(mse, 1e-12)), "val_mse": mse}


class _FourierMLP(nn.Module):
    def __init__(self, frequencies: torch.Tensor) -> None:
        super().__init__()
        self.register_buffer("frequencies", frequencies)
        self.body = _mlp(2 * frequencies.shape[1], [64, 64], 1)

    def forward(self, coords: torch.Tensor) -> torch.Tensor:
        phase = 2.0 * math.pi * coords @ self.frequencies
        return self.body(torch.cat([torch.sin(phase), torch.cos(phase)], dim=-1))


class ShapesSegmentation(_Tabular):
    """Semantic segmentation: a small fully convolutional net (3 × 3 convolutions 1-16-16 and a
    1 × 1 head) marks the pixels of 16 × 16 noisy images that belong to a filled ellipse or
    rectangle, against thin distractor lines of the same brightness; trained with per-pixel
    binary cross-entropy; metric val IoU of the foreground (thresholded at 0.5, pooled over the
    held-out images). 2,000 images to train on, 500 held out. A fresh workload of the tenth batch
    (see ``ContrastiveRetrieval``)."""

    metric = "val_iou"
    size = 16

    def __init__(self) -> None:
        rng = np.random.default_rng(229)
        n = 2500
        u = np.arange(self.size, dtype=np.float32)
        gy, gx = np.meshgrid(u, u, indexing="ij")
        images = np.zeros((n, 1, self.size, self.size), dtype=np.float32)
        masks = np.zeros((n, self.size, self.size), dtype=np.float32)
        for i in range(n):
            cx, cy = rng.uniform(4, 12, size=2)
            a, b = rng.uniform(2, 5, size=2)
            if rng.random() < 0.5:
                mask = ((gx - cx) / a) ** 2 + ((gy - cy) / b) ** 2 <= 1.0
            else:
                mask = (np.abs(gx - cx) <= a) & (np.abs(gy - cy) <= b)
            lines = np.zeros_like(mask)
            for _ in range(2):
                if rng.random() < 0.5:
                    lines[int(rng.integers(0, self.size)), :] = True
                else:
                    lines[:, int(rng.integers(0, self.size))] = True
            images[i, 0] = 0.8 * (mask | lines) + 0.35 * rng.normal(size=mask.shape)
            masks[i] = mask
        super().__init__(images[:2000], masks[:2000], images[2000:], masks[2000:])

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, masks = batch
        return F.binary_cross_entropy_with_logits(model(inputs).squeeze(1), masks)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).squeeze(1).float()
        if not bool(torch.isfinite(logits).all()):
            return {"val_iou": float("nan")}
        predicted, truth = logits > 0, self.y_val > 0.5
        union = (predicted | truth).sum().item()
        return {"val_iou": (predicted & truth).sum().item() / max(union, 1)}

    def build_model(self) -> nn.Module:
        return nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(16, 16, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(16, 1, 1),
        )


class FlowDensity(_Tabular):
    """Density estimation with a normalizing flow: four affine coupling layers (RealNVP; each a
    tanh-bounded scale and a shift from an MLP 1-32-32-2 of the other coordinate, the two
    coordinates taking turns) map two-moons points (noise 0.06, standardised) to a standard
    normal; trained on the exact negative log-likelihood; metric val negative log-likelihood in
    nats per point (no fixed floor; a Gaussian fitted to the training points gives 2.70 on the
    held-out ones). 2,000 points to train on, 1,000 held out. Recorded in session 34 as the eleventh batch of *fresh* workloads: defined
    after the check it serves had been committed, and nothing scored on them before."""

    metric = "val_nll"

    def __init__(self) -> None:
        from sklearn.datasets import make_moons

        x, _ = make_moons(n_samples=3000, noise=0.06, random_state=233)
        x_train, x_val = _standardise(x[:2000], x[2000:])
        super().__init__(x_train, np.zeros(2000, np.float32), x_val, np.zeros(1000, np.float32))

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        return model(batch[0]).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        return {"val_nll": model(self.x_val).float().mean().item()}

    def build_model(self) -> nn.Module:
        return _RealNVP(layers=4)


class _RealNVP(nn.Module):
    """Returns each point's negative log-likelihood under the flow."""

    def __init__(self, layers: int) -> None:
        super().__init__()
        self.nets = nn.ModuleList(_mlp(1, [32, 32], 2) for _ in range(layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        log_det = torch.zeros(len(x), dtype=x.dtype)
        for i, net in enumerate(self.nets):
            keep, move = (0, 1) if i % 2 == 0 else (1, 0)
            scale, shift = net(x[:, keep : keep + 1]).unbind(-1)
            scale = torch.tanh(scale)
            moved = x[:, move] * torch.exp(scale) + shift
            x = torch.stack([x[:, 0], moved] if move == 1 else [moved, x[:, 1]], dim=-1)
            log_det = log_det + scale
        return 0.5 * (x**2).sum(-1) + math.log(2.0 * math.pi) - log_det


class PINNOscillator(_Tabular):
    """A physics-informed network: an MLP 1-32-32-1 with tanh units solves the damped
    oscillator u'' + 2ζω u' + ω² u = 0 (ω = 4, ζ = 0.1) on t in [0, 2] with u(0) = 1,
    u'(0) = 0, trained only on the equation's residual at sampled collocation times plus the
    initial conditions (derivatives by autograd); metric val relative L2 error against the
    exact solution on 400 evenly spaced times (1 for u = 0; PINNs often sit near a wrong smooth
    solution before they find the oscillation). 2,000 collocation times. A fresh workload of the
    eleventh batch (see ``FlowDensity``)."""

    metric = "val_rel_l2"
    omega, zeta, span = 4.0, 0.1, 2.0

    def __init__(self) -> None:
        rng = np.random.default_rng(239)
        t_train = rng.uniform(0.0, self.span, size=(2000, 1)).astype(np.float32)
        t_val = np.linspace(0.0, self.span, 400, dtype=np.float32)[:, None]
        super().__init__(t_train, np.zeros(2000, np.float32), t_val, self._exact(t_val[:, 0]))

    def _exact(self, t: np.ndarray) -> np.ndarray:
        decay, damped = self.zeta * self.omega, self.omega * math.sqrt(1.0 - self.zeta**2)
        return (np.exp(-decay * t) * (np.cos(damped * t) + decay / damped * np.sin(damped * t))).astype(
            np.float32
        )

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        t = torch.cat([torch.zeros(1, 1), batch[0]]).requires_grad_(True)
        u = model(t)
        (du,) = torch.autograd.grad(u.sum(), t, create_graph=True)
        (d2u,) = torch.autograd.grad(du.sum(), t, create_graph=True)
        residual = (d2u + 2.0 * self.zeta * self.omega * du + self.omega**2 * u) / self.omega**2
        initial = (u[0, 0] - 1.0) ** 2 + (du[0, 0] / self.omega) ** 2
        return (residual[1:] ** 2).mean() + 10.0 * initial

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        u = model(self.x_val).squeeze(-1).float()
        error = torch.linalg.vector_norm(u - self.y_val) / torch.linalg.vector_norm(self.y_val)
        return {"val_rel_l2": error.item()}

    def build_model(self) -> nn.Module:
        return _TanhMLP(self.span)


class _TanhMLP(nn.Module):
    def __init__(self, span: float) -> None:
        super().__init__()
        self.span = span
        self.body = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))

    def forward(self, t: torch.Tensor) -> torch.Tensor:
        return self.body(2.0 * t / self.span - 1.0)


class AttentionMIL(_Classifier):
    """Multiple-instance learning: a bag of 6 sklearn 8 × 8 digits is positive when it holds a
    7 and a 1 (a bag with only one of them is not); an instance encoder 64-32 and attention
    pooling without the gate (Ilse et al. 2018: a softmax over the bag of w·tanh(V h)) give the
    bag's two logits; only bag labels are seen; metric bag accuracy. Bags drawn with fixed seeds,
    half positive (the others a 7 alone, a 1 alone or neither, a sixth each), from disjoint digit
    images: 1,500 bags to train on, 500 held out. A fresh workload of the eleventh batch (see
    ``FlowDensity``)."""

    metric = "accuracy"
    bag = 6

    def __init__(self) -> None:
        from sklearn.datasets import load_digits

        digits = load_digits()
        x, y = digits.data.astype(np.float32) / 16.0, digits.target
        rng = np.random.default_rng(241)
        order = rng.permutation(len(x))
        train, val = order[:1300], order[1300:]
        super().__init__(*self._bags(x, y, train, 1500, rng), *self._bags(x, y, val, 500, rng))

    def _bags(self, x: np.ndarray, y: np.ndarray, pool: np.ndarray, count: int, rng: Any) -> tuple[Any, Any]:
        sevens, ones = pool[y[pool] == 7], pool[y[pool] == 1]
        others = pool[(y[pool] != 7) & (y[pool] != 1)]
        kinds = np.arange(count) % 6
        labels = (kinds < 3).astype(np.int64)
        bags = np.empty((count, self.bag, x.shape[1]), dtype=np.float32)
        for i, kind in enumerate(kinds):
            members = rng.choice(others, size=self.bag, replace=False)
            slots = rng.choice(self.bag, size=2, replace=False)
            if kind <= 3:
                members[slots[0]] = rng.choice(sevens)
            if kind < 3 or kind == 4:
                members[slots[1]] = rng.choice(ones)
            bags[i] = x[members]
        return bags, labels

    def build_model(self) -> nn.Module:
        return _AttentionPool()


class _AttentionPool(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encode = nn.Sequential(nn.Linear(64, 32), nn.ReLU())
        self.attend = nn.Sequential(nn.Linear(32, 16), nn.Tanh(), nn.Linear(16, 1))
        self.head = nn.Linear(32, 2)

    def forward(self, bags: torch.Tensor) -> torch.Tensor:
        h = self.encode(bags)
        weights = torch.softmax(self.attend(h), dim=1)
        return self.head((weights * h).sum(1))


class TeacherDistillation(_Tabular):
    """Knowledge distillation: a student MLP 12-24-6 learns the soft predictions of a fixed,
    randomly drawn teacher MLP 12-64-64-6 on Gaussian inputs (the softmax of its logits scaled to
    a standard deviation of 3, so the targets are neither one-hot nor uniform), trained on the KL
    divergence from the teacher's distribution; metric val KL in nats (the student's capacity
    leaves a floor above 0). 2,400 inputs to train on, 800 held out. A fresh workload of the
    eleventh batch (see ``FlowDensity``)."""

    metric = "val_kl"

    def __init__(self) -> None:
        rng = np.random.default_rng(251)
        x = rng.normal(size=(3200, 12)).astype(np.float32)
        generator = torch.Generator().manual_seed(251)
        teacher = _mlp(12, [64, 64], 6)
        with torch.no_grad():
            for parameter in teacher.parameters():
                parameter.copy_(
                    torch.randn(parameter.shape, generator=generator) / math.sqrt(parameter.shape[-1])
                )
            logits = teacher(torch.from_numpy(x))
            probabilities = torch.softmax(3.0 * logits / logits.std(), dim=-1).numpy()
        super().__init__(x[:2400], probabilities[:2400], x[2400:], probabilities[2400:])

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, teacher = batch
        return F.kl_div(F.log_softmax(model(inputs).float(), -1), teacher, reduction="batchmean")

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        return {"val_kl": self.loss(model, (self.x_val, self.y_val)).item()}

    def build_model(self) -> nn.Module:
        return _mlp(12, [24], 6)


class MADEDigits(_Tabular):
    """Autoregressive density estimation: a MADE (Germain et al. 2015; one masked hidden layer of
    128, input order fixed) models sklearn's 8 × 8 digits binarised at half intensity as a product
    of 64 Bernoulli conditionals; trained on the exact negative log-likelihood; metric val
    negative log-likelihood in nats per image (independent pixels fitted to the training images
    give 25.1 on the held-out ones). 1,300 images to train on, 497 held out. Recorded in
    session 35 as the twelfth batch of *fresh* workloads: defined after the check it serves had
    been committed, and nothing scored on them before."""

    metric = "val_nll"

    def __init__(self) -> None:
        from sklearn.datasets import load_digits

        x = (load_digits().data >= 8).astype(np.float32)
        order = np.random.default_rng(263).permutation(len(x))
        x = x[order]
        super().__init__(x[:1300], np.zeros(1300, np.float32), x[1300:], np.zeros(len(x) - 1300, np.float32))

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        return model(batch[0]).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        return {"val_nll": model(self.x_val).float().mean().item()}

    def build_model(self) -> nn.Module:
        return _MADE(64, 128)


class _MADE(nn.Module):
    """Returns each image's negative log-likelihood (nats) under the autoregressive model."""

    def __init__(self, inputs: int, hidden: int) -> None:
        super().__init__()
        self.hidden = nn.Linear(inputs, hidden)
        self.out = nn.Linear(hidden, inputs)
        degrees_in = torch.arange(1, inputs + 1)
        degrees_hidden = torch.arange(hidden) % (inputs - 1) + 1
        # A hidden unit of degree d sees inputs 1..d; output i sees hidden units of degree < i.
        self.register_buffer("mask_hidden", (degrees_hidden[:, None] >= degrees_in[None, :]).float())
        self.register_buffer("mask_out", (degrees_in[:, None] > degrees_hidden[None, :]).float())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.relu(F.linear(x, self.hidden.weight * self.mask_hidden, self.hidden.bias))
        logits = F.linear(h, self.out.weight * self.mask_out, self.out.bias)
        return F.binary_cross_entropy_with_logits(logits, x, reduction="none").sum(-1)


class MixtureOfExperts(_Regressor):
    """A mixture of experts: four expert MLPs 3-16-1 mixed by a softmax gate (a linear layer of
    the input) regress a target that follows a different smooth function in each of four regions
    of the input space (by the signs of the first two coordinates) plus noise of std 0.1; metric
    val MSE (the noise gives a floor of 0.01). 2,400 points to train on, 800 held out. A fresh
    workload of the twelfth batch (see ``MADEDigits``)."""

    metric = "val_mse"

    def __init__(self) -> None:
        rng = np.random.default_rng(271)
        x = rng.uniform(-1.0, 1.0, size=(3200, 3)).astype(np.float32)
        region = (x[:, 0] > 0).astype(int) * 2 + (x[:, 1] > 0).astype(int)
        pieces = np.stack(
            [
                np.sin(3.0 * x[:, 2]) + x[:, 0],
                x[:, 2] ** 2 * 2.0 - x[:, 1],
                np.cos(2.0 * x[:, 0] * x[:, 2]),
                -x[:, 2] + 0.5 * x[:, 1],
            ],
            axis=-1,
        )
        y = pieces[np.arange(len(x)), region] + rng.normal(0.0, 0.1, size=len(x))
        y = y.astype(np.float32)
        super().__init__(x[:2400], y[:2400], x[2400:], y[2400:])

    def build_model(self) -> nn.Module:
        return _Experts(3, 4)


class _Experts(nn.Module):
    def __init__(self, inputs: int, experts: int) -> None:
        super().__init__()
        self.gate = nn.Linear(inputs, experts)
        self.experts = nn.ModuleList(_mlp(inputs, [16], 1) for _ in range(experts))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weights = torch.softmax(self.gate(x), dim=-1)
        outputs = torch.cat([expert(x) for expert in self.experts], dim=-1)
        return (weights * outputs).sum(-1, keepdim=True)


class ScoreMatching(_Tabular):
    """Denoising score matching (Vincent 2011): an MLP 2-64-64-2 learns the score of a mixture of
    eight Gaussians on a ring (radius 2, std 0.15) blurred by Gaussian noise of std 0.3, from
    pairs of a data point and a noisy copy; metric the val denoising score-matching loss on
    fixed held-out pairs (its minimum, the blurred density's Fisher divergence term, is above 0).
    4,000 points to train on (fresh noise each batch), 1,000 held-out pairs. A fresh workload of
    the twelfth batch (see ``MADEDigits``)."""

    metric = "val_dsm"
    sigma = 0.3

    def __init__(self) -> None:
        rng = np.random.default_rng(277)
        centres = 2.0 * np.stack([np.cos(np.arange(8) * np.pi / 4), np.sin(np.arange(8) * np.pi / 4)], -1)
        points = centres[rng.integers(0, 8, 5000)] + rng.normal(0.0, 0.15, size=(5000, 2))
        noise = rng.normal(0.0, 1.0, size=(1000, 2))
        x = points.astype(np.float32)
        super().__init__(x[:4000], np.zeros((4000, 2), np.float32), x[4000:], noise.astype(np.float32))

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        for points, _ in super().train_batches(micro_batch_size, rank, world_size, seed):
            yield points, torch.randn(points.shape, generator=generator)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        points, noise = batch
        noisy = points + self.sigma * noise
        # The score of the noising kernel at the noisy point is -noise / sigma; weighted by sigma².
        return ((self.sigma * model(noisy).float() + noise) ** 2).sum(-1).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        return {"val_dsm": self.loss(model, (self.x_val, self.y_val)).item()}

    def build_model(self) -> nn.Module:
        return _mlp(2, [64, 64], 2)


class BinaryWeightDigits(_Classifier):
    """Training with binary weights (BinaryConnect, Courbariaux et al. 2015, with XNOR-Net's
    per-layer scale): an MLP 64-128-10 on sklearn's 8 × 8 digits whose forward pass uses the sign
    of each latent weight times the layer's mean absolute weight, the gradient passing straight
    through to the latent weights; metric val accuracy. 1,257 images to train on, 540 held out.
    A fresh workload of the twelfth batch (see ``MADEDigits``)."""

    metric = "accuracy"

    def __init__(self) -> None:
        super().__init__(*_digits_split())

    def build_model(self) -> nn.Module:
        return nn.Sequential(_BinaryLinear(64, 128), nn.ReLU(), _BinaryLinear(128, 10))


class _BinaryLinear(nn.Linear):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        binary = torch.sign(self.weight) * self.weight.abs().mean()
        # Straight-through: the forward sees the binary weights, the gradient the latent ones.
        return F.linear(x, self.weight + (binary - self.weight).detach(), self.bias)


class MixupDigits(_Classifier):
    """Mixup (Zhang et al. 2018): an MLP 64-64-10 on sklearn's 8 × 8 digits trained on convex
    mixtures of two images and of their one-hot labels (mixing weight drawn from Beta(0.4, 0.4)
    per image), so the training loss never reaches 0 and the val curve rises slower than plain
    training's; metric val accuracy on the unmixed held-out images. 1,257 images to train on, 540
    held out. Recorded in session 36 as the thirteenth batch of *fresh* workloads: written while
    the check it serves was drafted, recorded after it had been committed, and nothing scored on
    them before."""

    metric = "accuracy"
    alpha = 0.4

    def __init__(self) -> None:
        super().__init__(*_digits_split())

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        rng = np.random.default_rng(seed * 1_000_003 + rank)
        count = len(self.x_train)
        onehot = F.one_hot(self.y_train, 10).float()
        while True:
            first = torch.from_numpy(rng.integers(0, count, micro_batch_size))
            second = torch.from_numpy(rng.integers(0, count, micro_batch_size))
            weight = torch.from_numpy(
                rng.beta(self.alpha, self.alpha, (micro_batch_size, 1)).astype(np.float32)
            )
            inputs = weight * self.x_train[first] + (1 - weight) * self.x_train[second]
            yield inputs, weight * onehot[first] + (1 - weight) * onehot[second]

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, soft_labels = batch
        return -(soft_labels * F.log_softmax(model(inputs).float(), -1)).sum(-1).mean()

    def build_model(self) -> nn.Module:
        return _mlp(64, [64], 10)


class AdversarialDigits(_Classifier):
    """Adversarial training (Goodfellow et al. 2015; FGSM): an MLP 64-128-10 on sklearn's 8 × 8
    digits (pixels in [0, 1]) trained on images moved by 0.1 in the sign of the loss gradient,
    which the model computes afresh each step; metric val accuracy on the held-out images moved
    the same way against the current model (robust accuracy, well below clean accuracy).
    1,257 images to train on, 540 held out. A fresh workload of the thirteenth batch (see
    ``MixupDigits``)."""

    metric = "val_robust_accuracy"
    radius = 0.1

    def __init__(self) -> None:
        super().__init__(*_digits_split())

    def _attack(self, model: nn.Module, inputs: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        with torch.enable_grad():
            probe = inputs.detach().clone().requires_grad_(True)
            (grad,) = torch.autograd.grad(F.cross_entropy(model(probe).float(), labels), probe)
        return (inputs + self.radius * grad.sign()).clamp(0.0, 1.0).detach()

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, labels = batch
        return F.cross_entropy(model(self._attack(model, inputs, labels)).float(), labels)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self._attack(model, self.x_val, self.y_val)).float()
        return {"val_robust_accuracy": (logits.argmax(-1) == self.y_val).float().mean().item()}

    def build_model(self) -> nn.Module:
        return _mlp(64, [128], 10)


class OrdinalLevels(_Tabular):
    """Ordinal regression with a cumulative-link model (CORAL, Cao et al. 2020): an MLP 8-32-1
    gives one score, five learned thresholds split it into six ordered levels, each threshold
    trained as a binary "level > k" with its own logit; the levels are quantiles of a noisy
    non-linear function of 8 Gaussian inputs; metric val mean absolute error in levels (the
    predicted level counts the thresholds passed). 2,400 points to train on, 800 held out.
    A fresh workload of the thirteenth batch (see ``MixupDigits``)."""

    metric = "val_mae"
    levels = 6

    def __init__(self) -> None:
        rng = np.random.default_rng(281)
        x = rng.normal(size=(3200, 8)).astype(np.float32)
        latent = (
            np.tanh(x[:, 0] + x[:, 1] * x[:, 2])
            + 0.5 * x[:, 3] ** 2
            - 0.7 * x[:, 4]
            + rng.normal(0, 0.3, 3200)
        )
        edges = np.quantile(latent[:2400], np.linspace(0, 1, self.levels + 1)[1:-1])
        y = np.searchsorted(edges, latent).astype(np.int64)
        super().__init__(x[:2400], y[:2400], x[2400:], y[2400:])

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, levels = batch
        above = (levels[:, None] > torch.arange(self.levels - 1)[None, :]).float()
        return F.binary_cross_entropy_with_logits(model(inputs).float(), above)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        predicted = (model(self.x_val) > 0).sum(-1)
        return {"val_mae": (predicted - self.y_val).abs().float().mean().item()}

    def build_model(self) -> nn.Module:
        return _CumulativeLink(8, self.levels - 1)


class _CumulativeLink(nn.Module):
    """One score per input minus ordered thresholds: the logits of "level > k" for each k."""

    def __init__(self, inputs: int, thresholds: int) -> None:
        super().__init__()
        self.score = _mlp(inputs, [32], 1)
        self.first = nn.Parameter(torch.tensor(-1.0))
        self.steps = nn.Parameter(torch.zeros(thresholds - 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # Thresholds stay ordered: the first plus cumulative positive steps.
        thresholds = torch.cat([self.first[None], self.first + torch.cumsum(F.softplus(self.steps) + 0.1, 0)])
        return self.score(x) - thresholds[None, :]


class SkipGramText(_Tabular):
    """Word embeddings by skip-gram with negative sampling (Mikolov et al. 2013): 32-dimensional
    input and output embeddings of the 600 commonest words in stdlib source text, trained to tell
    (word, word within 2 positions) pairs from 5 negatives drawn from the unigram distribution to
    the power 0.75; metric the val negative-sampling loss on pairs from held-out files with fixed
    negatives. A fresh workload of the thirteenth batch (see ``MixupDigits``)."""

    metric = "val_nsloss"
    vocabulary = 600
    window = 2
    negatives = 5
    train_sources = ("argparse.py", "logging/__init__.py", "subprocess.py", "typing.py")
    val_sources = ("pathlib.py", "tarfile.py")

    def __init__(self) -> None:
        import collections
        import re

        stdlib = Path(sysconfig.get_paths()["stdlib"])

        def words(sources: tuple[str, ...]) -> list[str]:
            text = "\n".join((stdlib / name).read_text(encoding="utf-8") for name in sources)
            return re.findall(r"[A-Za-z_]+", text.lower())

        train_words, val_words = words(self.train_sources), words(self.val_sources)
        counts = collections.Counter(train_words).most_common(self.vocabulary)
        index = {word: i for i, (word, _) in enumerate(counts)}
        frequency = np.array([c for _, c in counts], dtype=np.float64) ** 0.75
        self.noise = torch.tensor(frequency / frequency.sum(), dtype=torch.float32)
        train_pairs, val_pairs = self._pairs(train_words, index), self._pairs(val_words, index)
        rng = np.random.default_rng(283)
        val_pairs = val_pairs[rng.permutation(len(val_pairs))[:4000]]
        val_negatives = rng.choice(
            self.vocabulary, size=(len(val_pairs), self.negatives), p=frequency / frequency.sum()
        )
        super().__init__(train_pairs[:, :1], train_pairs[:, 1], val_pairs[:, :1], val_pairs[:, 1])
        self.x_train, self.x_val = self.x_train.long(), self.x_val.long()
        self.val_negatives = torch.tensor(val_negatives, dtype=torch.long)

    def _pairs(self, words: list[str], index: dict[str, int]) -> np.ndarray:
        ids = [index[w] for w in words if w in index]
        pairs = [
            (ids[i], ids[i + d])
            for d in range(-self.window, self.window + 1)
            if d
            for i in range(max(0, -d), len(ids) - max(0, d))
        ]
        return np.array(pairs, dtype=np.int64)

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        for centres, contexts in super().train_batches(micro_batch_size, rank, world_size, seed):
            negatives = torch.multinomial(
                self.noise, micro_batch_size * self.negatives, True, generator=generator
            )
            yield centres, torch.cat([contexts[:, None], negatives.view(micro_batch_size, -1)], 1)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        centres, candidates = batch
        scores = model(centres[:, 0], candidates).float()
        signs = torch.full_like(scores, -1.0)
        signs[:, 0] = 1.0
        return -F.logsigmoid(signs * scores).sum(-1).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        candidates = torch.cat([self.y_val[:, None], self.val_negatives], 1)
        return {"val_nsloss": self.loss(model, (self.x_val, candidates)).item()}

    def build_model(self) -> nn.Module:
        return _SkipGram(self.vocabulary, 32)


class _SkipGram(nn.Module):
    def __init__(self, vocabulary: int, width: int) -> None:
        super().__init__()
        self.centre = nn.Embedding(vocabulary, width)
        self.context = nn.Embedding(vocabulary, width)
        nn.init.normal_(self.centre.weight, std=0.1)
        nn.init.zeros_(self.context.weight)

    def forward(self, centres: torch.Tensor, candidates: torch.Tensor) -> torch.Tensor:
        return (self.centre(centres)[:, None, :] * self.context(candidates)).sum(-1)


class AddingProblem(_Tabular):
    """The adding problem (Hochreiter & Schmidhuber 1997): a GRU of 32 reads 20 steps of (a
    uniform value, a marker) with exactly two markers and regresses the sum of the two marked
    values; metric val MSE. Predicting the mean sum gives about 0.167, and runs sit there until
    the recurrence learns to hold a marked value, then drop: a plateau before a late drop.
    4,000 sequences to train on, 500 held out. Recorded in session 36 as the fourteenth batch
    of *fresh* workloads, with nothing scored on them until check T (session 38) was written."""

    metric = "val_mse"
    length = 20

    def __init__(self) -> None:
        rng = np.random.default_rng(293)
        values = rng.uniform(0.0, 1.0, size=(4500, self.length)).astype(np.float32)
        markers = np.zeros_like(values)
        for row in range(len(values)):
            first = rng.integers(0, self.length // 2)
            second = rng.integers(self.length // 2, self.length)
            markers[row, [first, second]] = 1.0
        x = np.stack([values, markers], -1)
        y = (values * markers).sum(-1).astype(np.float32)
        super().__init__(x[:4000], y[:4000], x[4000:], y[4000:])

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, targets = batch
        return F.mse_loss(model(inputs).float(), targets)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        return {"val_mse": self.loss(model, (self.x_val, self.y_val)).item()}

    def build_model(self) -> nn.Module:
        return _LastStepGRU(2, 32)


class _LastStepGRU(nn.Module):
    def __init__(self, inputs: int, width: int) -> None:
        super().__init__()
        self.gru = nn.GRU(inputs, width, batch_first=True)
        self.head = nn.Linear(width, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.gru(x)[0][:, -1]).squeeze(-1)


class CTCAlignment(_Tabular):
    """Sequence labelling without an alignment (CTC, Graves et al. 2006): a bidirectional GRU of
    24 reads 20 noisy frames in which each of 3-4 symbols (of 6) is held for a random number of
    frames, and is trained with the CTC loss to emit the symbol sequence; metric the val CTC
    loss per sequence. CTC runs first learn to emit only blanks, sit there, then learn the
    symbols. 3,000 sequences to train on, 500 held out. A fresh workload of the fourteenth batch
    (see ``AddingProblem``)."""

    metric = "val_ctc"
    frames = 20
    symbols = 6
    longest = 4

    def __init__(self) -> None:
        rng = np.random.default_rng(307)
        count = 3500
        x = rng.normal(0.0, 0.6, size=(count, self.frames, self.symbols + 1)).astype(np.float32)
        labels = np.zeros((count, self.longest + 1), dtype=np.int64)  # the length, then the symbols
        for row in range(count):
            length = int(rng.integers(3, self.longest + 1))
            sequence = rng.integers(1, self.symbols + 1, size=length)
            while np.any(sequence[1:] == sequence[:-1]):  # repeats need a blank between them
                sequence = rng.integers(1, self.symbols + 1, size=length)
            cuts = np.sort(rng.choice(np.arange(1, self.frames), size=length - 1, replace=False))
            for symbol, (start, end) in zip(
                sequence, zip([0, *cuts], [*cuts, self.frames], strict=True), strict=True
            ):
                x[row, start:end, symbol] += 1.0
            labels[row, 0] = length
            labels[row, 1 : 1 + length] = sequence
        super().__init__(x[:3000], labels[:3000], x[3000:], labels[3000:])

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, labels = batch
        log_probs = model(inputs).float().log_softmax(-1).transpose(0, 1)  # (frames, batch, classes)
        frames = torch.full((len(inputs),), self.frames, dtype=torch.long)
        # Padded targets: ctc_loss reads each row's first ``length`` symbols only.
        return F.ctc_loss(log_probs, labels[:, 1:], frames, labels[:, 0], blank=0, zero_infinity=True)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        return {"val_ctc": self.loss(model, (self.x_val, self.y_val)).item()}

    def build_model(self) -> nn.Module:
        return _BiGRUTagger(self.symbols + 1, 24, self.symbols + 1)


class HingeMargin(_Tabular):
    """A large-margin classifier: an MLP 20-32-1 trained with the squared hinge loss on labels
    +/-1 (an L2-SVM with a learned feature layer) on a generated binary problem with 10%
    flipped labels; metric val accuracy. 2,100 points to train on, 900 held out. A fresh
    workload of the fourteenth batch (see ``AddingProblem``)."""

    metric = "accuracy"

    def __init__(self) -> None:
        x_train, y_train, x_val, y_val = _standardised_classification(
            n_samples=3000, n_features=20, n_informative=6, n_redundant=4, flip_y=0.1,
            class_sep=0.8, random_state=311,
        )  # fmt: skip
        super().__init__(x_train, 2.0 * y_train - 1.0, x_val, 2.0 * y_val - 1.0)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, signs = batch
        return F.relu(1.0 - signs * model(inputs).float().squeeze(-1)).pow(2).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        scores = model(self.x_val).float().squeeze(-1)
        return {"accuracy": ((scores > 0).float() * 2 - 1 == self.y_val).float().mean().item()}

    def build_model(self) -> nn.Module:
        return _mlp(20, [32], 1)


class GANRing(_Tabular):
    """A generative adversarial network (Goodfellow et al. 2014) on a ring of eight Gaussians,
    trained by simultaneous gradient steps in one backward pass: the discriminator's gradient
    reaches the generator reversed (a gradient-reversal layer), so one optimizer plays both
    sides. Generator MLP 4-32-32-2, discriminator MLP 2-32-32-1; metric the val energy distance
    between 1,000 generated points (fixed noise) and 1,000 held-out ring points (0 when the
    distributions match; GAN curves oscillate). A fresh workload of the fourteenth batch (see
    ``AddingProblem``)."""

    metric = "val_energy"

    def __init__(self) -> None:
        rng = np.random.default_rng(313)
        centres = 2.0 * np.stack([np.cos(np.arange(8) * np.pi / 4), np.sin(np.arange(8) * np.pi / 4)], -1)
        points = (centres[rng.integers(0, 8, 5000)] + rng.normal(0.0, 0.1, size=(5000, 2))).astype(np.float32)
        noise = rng.normal(size=(1000, 4)).astype(np.float32)
        super().__init__(points[:4000], np.zeros(4000, np.float32), points[4000:], np.zeros(1000, np.float32))
        self.val_noise = torch.tensor(noise)

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        for points, _ in super().train_batches(micro_batch_size, rank, world_size, seed):
            yield points, torch.randn((micro_batch_size, 4), generator=generator)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        real, noise = batch
        fake = _reverse_gradient(model.generator(noise))
        logits = model.discriminator(torch.cat([real, fake])).float().squeeze(-1)
        labels = torch.cat([torch.ones(len(real)), torch.zeros(len(fake))])
        return F.binary_cross_entropy_with_logits(logits, labels)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        fake = model.generator(self.val_noise).float()
        real = self.x_val
        between = torch.cdist(fake, real).mean()
        within = 0.5 * (torch.cdist(fake, fake).mean() + torch.cdist(real, real).mean())
        return {"val_energy": float(2.0 * (between - within))}

    def build_model(self) -> nn.Module:
        model = nn.Module()
        model.generator = _mlp(4, [32, 32], 2)
        model.discriminator = _mlp(2, [32, 32], 1)
        return model


class _ReverseGradient(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        return x.view_as(x)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        return -grad


def _reverse_gradient(x: torch.Tensor) -> torch.Tensor:
    return _ReverseGradient.apply(x)


# Text sources differ from convtune.workloads.charlm's, so the corpus holds unseen text.
GRU_SOURCES = ("email/message.py", "email/feedparser.py", "email/utils.py", "json/decoder.py")
TRANSFORMER_SOURCES = ("http/client.py", "urllib/parse.py", "unittest/case.py")


@lru_cache(maxsize=4)
class MultiTaskHeads(_Tabular):
    """Two tasks through one trunk (hard parameter sharing, Caruana 1997): an MLP trunk 10-32-32
    feeds a 3-class head (cross-entropy) and a regression head (MSE on a standardised target
    that shares some of the features with the classes); the loss is their sum, and so is the
    metric, the val loss of both tasks. 2,100 points to train on, 900 held out. Recorded in
    session 38 as the fifteenth batch of *fresh* workloads, with nothing scored on them until
    check S (session 39) was written."""

    metric = "val_loss"

    def __init__(self) -> None:
        x_train, y_train, x_val, y_val = _standardised_classification(
            n_samples=3000, n_features=10, n_informative=6, n_redundant=2, n_classes=3,
            n_clusters_per_class=2, class_sep=0.9, flip_y=0.05, random_state=331,
        )  # fmt: skip
        weights = np.random.default_rng(331).normal(size=10) * (np.arange(10) < 6)
        targets = []
        for x in (x_train, x_val):
            raw = np.tanh(x @ weights / 2.0) + 0.5 * x[:, 0] * x[:, 1]
            targets.append(raw + np.random.default_rng(len(x)).normal(0.0, 0.3, size=len(x)))
        mean, std = targets[0].mean(), targets[0].std()
        both = [np.stack([y, (t - mean) / std], 1) for y, t in zip((y_train, y_val), targets, strict=True)]
        super().__init__(x_train, both[0].astype(np.float32), x_val, both[1].astype(np.float32))

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, targets = batch
        out = model(inputs).float()
        return F.cross_entropy(out[:, :3], targets[:, 0].long()) + F.mse_loss(out[:, 3], targets[:, 1])

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        return {"val_loss": self.loss(model, (self.x_val, self.y_val)).item()}

    def build_model(self) -> nn.Module:
        return _mlp(10, [32, 32], 4)


class ReinforceBandit(_Tabular):
    """A contextual bandit learned by policy gradient (REINFORCE with a batch-mean baseline,
    Williams 1992): a softmax policy MLP 10-32-5 picks one of five arms per context; the arm
    matching the context's class pays 1 with probability 0.8, any other with 0.2, so the
    gradient sees only sampled rewards. Metric the val expected reward of the stochastic policy
    (0.2 at a uniform 0.32 rising to 0.8). Contexts from make_classification, 5 classes
    (2,100 / 900). A fresh workload of the fifteenth batch (see ``MultiTaskHeads``)."""

    metric = "val_reward"
    arms = 5

    def __init__(self) -> None:
        super().__init__(
            *_standardised_classification(
                n_samples=3000, n_features=10, n_informative=6, n_redundant=2, n_classes=self.arms,
                n_clusters_per_class=1, class_sep=1.0, random_state=337,
            )
        )  # fmt: skip

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank + 7)
        for contexts, labels in super().train_batches(micro_batch_size, rank, world_size, seed):
            # The policy's sampling noise and the reward's coin, drawn here so a run is reproducible.
            yield contexts, labels, torch.rand((micro_batch_size, self.arms + 1), generator=generator)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        contexts, labels, noise = batch
        logits = model(contexts).float()
        gumbel = -torch.log(-torch.log(noise[:, : self.arms].clamp(1e-6, 1 - 1e-6)))
        action = (logits.detach() + gumbel).argmax(-1)  # a sample from the softmax policy
        pays = torch.where(action == labels, 0.8, 0.2)
        reward = (noise[:, self.arms] < pays).float()
        log_prob = F.log_softmax(logits, -1).gather(1, action[:, None]).squeeze(1)
        return -((reward - reward.mean()) * log_prob).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        right = F.softmax(model(self.x_val).float(), -1).gather(1, self.y_val[:, None]).mean().item()
        return {"val_reward": 0.2 + 0.6 * right}

    def build_model(self) -> nn.Module:
        return _mlp(10, [32], self.arms)


class FeatureTokens(_Classifier):
    """A transformer over tabular features (FT-Transformer, Gorishniy et al. 2021): each of 12
    standardised features becomes a 16-wide token (its value times a learned vector, plus a
    learned feature embedding), a class token is prepended, and one encoder layer (2 heads,
    feed-forward 32) feeds a linear head from the class token; metric val loss on a 3-class
    make_classification problem (2,100 / 900). A fresh workload of the fifteenth batch (see
    ``MultiTaskHeads``)."""

    metric = "val_loss"

    def __init__(self) -> None:
        super().__init__(
            *_standardised_classification(
                n_samples=3000, n_features=12, n_informative=8, n_redundant=2, n_classes=3,
                n_clusters_per_class=2, class_sep=0.9, flip_y=0.03, random_state=347,
            )
        )  # fmt: skip

    def build_model(self) -> nn.Module:
        return _FeatureTokenTransformer(12, 16, 3)


class _FeatureTokenTransformer(nn.Module):
    def __init__(self, features: int, width: int, classes: int) -> None:
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features, width) * 0.5)
        self.offset = nn.Parameter(torch.zeros(features, width))
        self.cls = nn.Parameter(torch.zeros(1, 1, width))
        layer = nn.TransformerEncoderLayer(width, 2, 32, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
        self.head = nn.Linear(width, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        tokens = x[:, :, None] * self.scale + self.offset
        tokens = torch.cat([self.cls.expand(len(x), -1, -1), tokens], 1)
        return self.head(self.encoder(tokens)[:, 0])


class SiameseDigits(_Tabular):
    """Verification with a shared encoder (a siamese network, Bromley et al. 1993): two 8×8
    digits go through one MLP 64-32-16, and a logistic unit on the absolute difference of their
    codes says whether they show the same digit (binary cross-entropy); metric val accuracy on
    2,000 fixed pairs of held-out digits, half of them matching. 12,000 training pairs, half
    matching. A fresh workload of the fifteenth batch (see ``MultiTaskHeads``)."""

    metric = "accuracy"

    def __init__(self) -> None:
        x_train, y_train, x_val, y_val = _digits_split()
        rng = np.random.default_rng(353)
        super().__init__(*_pairs(x_train, y_train, 12000, rng), *_pairs(x_val, y_val, 2000, rng))

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        pairs, same = batch
        return F.binary_cross_entropy_with_logits(model(pairs).float(), same)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float()
        return {
            "accuracy": ((logits > 0).float() == self.y_val).float().mean().item(),
            "val_loss": F.binary_cross_entropy_with_logits(logits, self.y_val).item(),
        }

    def build_model(self) -> nn.Module:
        return _Siamese(64, 32, 16)


def _pairs(
    x: np.ndarray, y: np.ndarray, count: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``count`` pairs of rows of ``x`` (concatenated), half of them of the same class."""
    first = rng.integers(0, len(x), count)
    same = np.arange(count) % 2 == 0
    second = np.empty(count, dtype=np.int64)
    for i, (row, match) in enumerate(zip(first, same, strict=True)):
        pool = np.flatnonzero((y == y[row]) if match else (y != y[row]))
        second[i] = pool[rng.integers(0, len(pool))]
    return np.concatenate([x[first], x[second]], 1), same.astype(np.float32)


class TDValues:
    """Policy evaluation by temporal differences (semi-gradient TD(0), Sutton 1988): an MLP
    16-32-1 learns the values of a fixed policy on a random 64-state Markov chain (4 successors a
    state, discount 0.9) from sampled transitions, each target bootstrapped from the network's
    own value of the next state, so the regression target moves as it learns. Metric the squared
    error of the values over every state against the exact ones (solved from the chain), over
    their variance. 20,000 recorded transitions. Recorded in session 39 as the sixteenth batch of
    *fresh* workloads, with nothing scored on them until check U (session 39) was written."""

    metric = "val_value_error"
    states, successors, discount = 64, 4, 0.9

    def __init__(self) -> None:
        rng = np.random.default_rng(359)
        self.features = torch.tensor(rng.normal(size=(self.states, 16)) / 4.0, dtype=torch.float32)
        chain = np.zeros((self.states, self.states))
        for s in range(self.states):
            chain[s, rng.choice(self.states, self.successors, replace=False)] = rng.dirichlet(
                np.ones(self.successors)
            )
        rewards = rng.normal(size=self.states)
        values = np.linalg.solve(np.eye(self.states) - self.discount * chain, rewards)
        self.values = torch.tensor(values, dtype=torch.float32)
        here = rng.integers(0, self.states, 20000)
        there = np.array([rng.choice(self.states, p=chain[s]) for s in here])
        self.here, self.there = torch.tensor(here), torch.tensor(there)
        self.rewards = torch.tensor(rewards[here], dtype=torch.float32)

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        while True:
            index = torch.randint(0, len(self.here), (micro_batch_size,), generator=generator)
            yield self.features[self.here[index]], self.rewards[index], self.features[self.there[index]]

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        here, reward, there = batch
        target = reward + self.discount * model(there).float().squeeze(-1).detach()
        return 0.5 * F.mse_loss(model(here).float().squeeze(-1), target)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        error = F.mse_loss(model(self.features).float().squeeze(-1), self.values).item()
        return {"val_value_error": error / self.values.var(unbiased=False).item()}

    def build_model(self) -> nn.Module:
        return _mlp(16, [32], 1)


class TransETriples:
    """Knowledge-graph embedding by translation (TransE, Bordes et al. 2013): 120 entities and 6
    relations as 16-wide embeddings, trained with a margin ranking loss (margin 1) against one
    corrupted tail a triple, drawn afresh each step. The graph is generated: each relation maps
    every entity to the entity nearest its latent point plus the relation's offset, so held-out
    triples follow from the others. Metric the mean reciprocal rank of the true tail among all
    entities on 120 held-out triples (600 to train on). A fresh workload of the sixteenth batch
    (see ``TDValues``)."""

    metric = "val_mrr"
    entities, relations = 120, 6

    def __init__(self) -> None:
        rng = np.random.default_rng(367)
        latent = rng.normal(size=(self.entities, 4))
        offsets = rng.normal(size=(self.relations, 4))
        triples = []
        for r in range(self.relations):
            moved = latent + offsets[r]
            distance = ((moved[:, None, :] - latent[None, :, :]) ** 2).sum(-1)
            np.fill_diagonal(distance, np.inf)
            triples += [(h, r, int(t)) for h, t in enumerate(distance.argmin(1))]
        order = rng.permutation(len(triples))
        every = torch.tensor(np.array(triples)[order])
        self.train, self.val = every[120:], every[:120]

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        while True:
            index = torch.randint(0, len(self.train), (micro_batch_size,), generator=generator)
            wrong = torch.randint(0, self.entities, (micro_batch_size,), generator=generator)
            yield self.train[index], wrong

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        triples, wrong = batch
        right = model(triples[:, 0], triples[:, 1], triples[:, 2])
        return F.relu(1.0 + right - model(triples[:, 0], triples[:, 1], wrong)).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        heads, relations, tails = self.val[:, 0], self.val[:, 1], self.val[:, 2]
        every = torch.arange(self.entities)
        distance = model(
            heads[:, None].expand(-1, self.entities), relations[:, None].expand(-1, self.entities),
            every[None, :].expand(len(self.val), -1),
        )  # fmt: skip
        true = distance.gather(1, tails[:, None])
        rank = 1 + (distance < true).sum(1).float()
        return {"val_mrr": (1.0 / rank).mean().item()}

    def build_model(self) -> nn.Module:
        return _Translations(self.entities, self.relations, 16)


class _Translations(nn.Module):
    def __init__(self, entities: int, relations: int, width: int) -> None:
        super().__init__()
        self.entity = nn.Embedding(entities, width)
        self.relation = nn.Embedding(relations, width)
        nn.init.uniform_(self.entity.weight, -6 / width**0.5, 6 / width**0.5)
        nn.init.uniform_(self.relation.weight, -6 / width**0.5, 6 / width**0.5)

    def forward(self, head: torch.Tensor, relation: torch.Tensor, tail: torch.Tensor) -> torch.Tensor:
        return (self.entity(head) + self.relation(relation) - self.entity(tail)).norm(dim=-1)


class _MultiOutputMSE(_Tabular):
    """MSE training on any target shape; ``evaluate`` gives val_mse over the targets' variance."""

    metric = "val_mse"

    def __init__(self, x_train: np.ndarray, y_train: np.ndarray, x_val: np.ndarray, y_val: np.ndarray):
        super().__init__(x_train, y_train, x_val, y_val)
        self.variance = self.y_val.var(unbiased=False).item()

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, targets = batch
        return F.mse_loss(model(inputs).float(), targets)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        return {"val_mse": F.mse_loss(model(self.x_val).float(), self.y_val).item() / self.variance}


class HypernetSines(_MultiOutputMSE):
    """A hypernetwork (Ha et al. 2016): an MLP 3-32 reads a task's description (the amplitude, and
    the sine and cosine of the phase, of ``a sin(x + phase)``) and writes all 97 weights of a
    1-32-1 tanh network, which then maps x to the task's value; each sample is a task of its own.
    Metric the val MSE over the targets' variance on 2,000 (task, x) pairs of tasks never trained
    on; 8,000 to train on. A fresh workload of the sixteenth batch (see ``TDValues``)."""

    hidden = 32

    def __init__(self) -> None:
        rng = np.random.default_rng(373)
        amplitude, phase = rng.uniform(0.5, 2.0, 10000), rng.uniform(0.0, math.pi, 10000)
        x = rng.uniform(-math.pi, math.pi, 10000)
        inputs = np.stack([amplitude, np.sin(phase), np.cos(phase), x], 1)
        targets = amplitude * np.sin(x + phase) + rng.normal(0.0, 0.05, 10000)
        super().__init__(
            inputs[:8000], targets[:8000].astype(np.float32), inputs[8000:], targets[8000:].astype(np.float32)
        )

    def build_model(self) -> nn.Module:
        return _Hypernet(self.hidden)


class _Hypernet(nn.Module):
    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.hidden = hidden
        self.writer = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Linear(32, 3 * hidden + 1))

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        h = self.hidden
        weights = self.writer(inputs[:, :3])
        w1, b1, w2, b2 = weights[:, :h], weights[:, h : 2 * h], weights[:, 2 * h : 3 * h], weights[:, 3 * h]
        return (torch.tanh(inputs[:, 3:] * w1 + b1) * w2).sum(-1) / h**0.5 + b2


class DeepLinearStairs(_MultiOutputMSE):
    """A deep linear network from a small start (Saxe et al. 2014): three linear layers of width
    32, initialised at 5% of the usual scale, learn a 16 → 16 map of rank 4 whose singular values
    are 4, 2, 1 and 0.5, from Gaussian inputs with noise 0.1 on the targets. From a small start
    it learns one direction at a time, strongest first: the loss falls in steps with plateaus
    between them (saddle to saddle). Metric the val MSE over the targets' variance. 4,096 points
    to train on, 1,024 held out. A fresh workload of the sixteenth batch (see ``TDValues``)."""

    def __init__(self) -> None:
        rng = np.random.default_rng(379)
        left = np.linalg.qr(rng.normal(size=(16, 4)))[0]
        right = np.linalg.qr(rng.normal(size=(16, 4)))[0]
        mapping = left @ np.diag([4.0, 2.0, 1.0, 0.5]) @ right.T
        x = rng.normal(size=(5120, 16))
        y = x @ mapping.T + rng.normal(0.0, 0.1, size=(5120, 16))
        super().__init__(x[:4096], y[:4096].astype(np.float32), x[4096:], y[4096:].astype(np.float32))

    def build_model(self) -> nn.Module:
        model = nn.Sequential(
            nn.Linear(16, 32, bias=False), nn.Linear(32, 32, bias=False), nn.Linear(32, 16, bias=False)
        )
        with torch.no_grad():
            for layer in model:
                layer.weight.mul_(0.05)
        return model


class FactorisationClicks:
    """Click-through prediction with a factorisation machine (Rendle 2010): six categorical
    fields (95 values in all) each get a bias and an 8-wide embedding, and a click's logit is the
    global bias, the biases and every pairwise dot product of the fields' embeddings, trained
    with binary cross-entropy. Clicks are generated by a rank-3 machine of the same form (about
    one in five clicked). Metric the val log loss on 4,000 held-out impressions; 20,000 to train
    on. Recorded in session 40 as the seventeenth batch of *fresh* workloads, with nothing scored
    on them until check V (session 40) was written."""

    metric = "val_logloss"
    cardinalities = (20, 15, 10, 30, 8, 12)

    def __init__(self) -> None:
        rng = np.random.default_rng(383)
        offsets = np.cumsum((0,) + self.cardinalities[:-1])
        values = np.stack([rng.integers(0, c, 24000) for c in self.cardinalities], 1) + offsets
        total = sum(self.cardinalities)
        bias, factors = rng.normal(0.0, 0.7, total), rng.normal(0.0, 0.6, (total, 3))
        rows = factors[values]
        pairwise = 0.5 * ((rows.sum(1) ** 2).sum(-1) - (rows**2).sum((1, 2)))
        logit = -1.8 + bias[values].sum(1) + pairwise
        clicked = (rng.random(24000) < 1.0 / (1.0 + np.exp(-logit))).astype(np.float32)
        self.values, self.clicked = torch.tensor(values), torch.tensor(clicked)
        self.total = total

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        while True:
            index = torch.randint(0, 20000, (micro_batch_size,), generator=generator)
            yield self.values[index], self.clicked[index]

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        values, clicked = batch
        return F.binary_cross_entropy_with_logits(model(values).float(), clicked)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.values[20000:]).float()
        return {"val_logloss": F.binary_cross_entropy_with_logits(logits, self.clicked[20000:]).item()}

    def build_model(self) -> nn.Module:
        return _FactorisationMachine(self.total, 8)


class _FactorisationMachine(nn.Module):
    def __init__(self, values: int, width: int) -> None:
        super().__init__()
        self.bias = nn.Embedding(values, 1)
        self.factors = nn.Embedding(values, width)
        self.offset = nn.Parameter(torch.zeros(()))
        nn.init.zeros_(self.bias.weight)
        nn.init.normal_(self.factors.weight, 0.0, 0.1)

    def forward(self, values: torch.Tensor) -> torch.Tensor:
        rows = self.factors(values)
        pairwise = 0.5 * (rows.sum(1).pow(2).sum(-1) - rows.pow(2).sum((1, 2)))
        return self.offset + self.bias(values).sum((1, 2)) + pairwise


class PositiveUnlabelled(_Tabular):
    """Learning from positive and unlabelled data with the non-negative risk estimator (nnPU,
    Kiryo et al. 2017): an MLP 20-32-1 sees 1,000 labelled positives and 8,000 unlabelled points
    (40% of them positive, a prior it is told), and minimises the sigmoid-loss PU risk with its
    negative part clipped at zero, so it never learns a true negative. Metric the val error
    against the true labels of 2,000 held-out points. A fresh workload of the seventeenth batch
    (see ``FactorisationClicks``)."""

    metric = "val_error"
    prior = 0.4

    def __init__(self) -> None:
        from sklearn.datasets import make_classification

        x, y = make_classification(
            n_samples=13000, n_features=20, n_informative=8, weights=[0.6], flip_y=0.02, class_sep=0.8, random_state=389
        )  # fmt: skip
        x = (x - x.mean(0)) / x.std(0)
        positives = np.flatnonzero(y[:11000] == 1)[:1000]
        unlabelled = np.setdiff1d(np.arange(11000), positives)[:8000]
        train = np.concatenate([positives, unlabelled])
        labelled = np.concatenate([np.ones(1000), np.zeros(8000)]).astype(np.float32)
        super().__init__(x[train], labelled, x[11000:], y[11000:].astype(np.float32))

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, labelled = batch
        score = model(inputs).float().squeeze(-1)
        positive, unlabelled = labelled == 1, labelled == 0
        # The sigmoid loss of calling a point positive (+) or negative (−).
        as_positive, as_negative = torch.sigmoid(-score), torch.sigmoid(score)
        risk_positive = as_positive[positive].mean() if positive.any() else score.sum() * 0
        risk_negative_p = as_negative[positive].mean() if positive.any() else score.sum() * 0
        risk_negative_u = as_negative[unlabelled].mean() if unlabelled.any() else score.sum() * 0
        negative = risk_negative_u - self.prior * risk_negative_p
        return self.prior * risk_positive + torch.clamp(negative, min=0.0)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        predicted = (model(self.x_val).float().squeeze(-1) > 0).float()
        return {"val_error": (predicted != self.y_val).float().mean().item()}

    def build_model(self) -> nn.Module:
        return _mlp(20, [32], 1)


class NeuralODESpiral(_MultiOutputMSE):
    """A continuous-depth network (a neural ODE, Chen et al. 2018): an MLP 2-32-2 is the vector
    field, integrated by 8 unrolled steps of the classic Runge-Kutta method from a starting point
    to time 1, and trained on where the true system (a cubic spiral, dz/dt = z³A / 4) carries the
    point. Metric the val MSE of the end points over their variance on 1,000 held-out starts;
    4,000 to train on. A fresh workload of the seventeenth batch (see ``FactorisationClicks``)."""

    def __init__(self) -> None:
        rng = np.random.default_rng(397)
        start = rng.uniform(-2.0, 2.0, size=(5000, 2))
        end = _integrate(torch.tensor(start), _spiral, 200).numpy()
        super().__init__(
            start[:4000], end[:4000].astype(np.float32), start[4000:], end[4000:].astype(np.float32)
        )

    def build_model(self) -> nn.Module:
        return _ODENet(_mlp(2, [32], 2), 8)


_SPIRAL = torch.tensor([[-0.1, 2.0], [-2.0, -0.1]], dtype=torch.float64)


def _spiral(z: torch.Tensor) -> torch.Tensor:
    return (z**3) @ _SPIRAL.to(z.dtype) / 4.0


def _integrate(z: torch.Tensor, field: Any, steps: int) -> torch.Tensor:
    """Classic fourth-order Runge-Kutta from time 0 to 1 in ``steps`` equal steps."""
    h = 1.0 / steps
    for _ in range(steps):
        k1 = field(z)
        k2 = field(z + 0.5 * h * k1)
        k3 = field(z + 0.5 * h * k2)
        k4 = field(z + h * k3)
        z = z + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    return z


class _ODENet(nn.Module):
    def __init__(self, field: nn.Module, steps: int) -> None:
        super().__init__()
        self.field, self.steps = field, steps

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return _integrate(z, self.field, self.steps)


class ModularSums(_Classifier):
    """Modular arithmetic from part of its table (the task of grokking, Power et al. 2022): a and
    b in 0..22 share one learned 32-wide embedding, the two are added, and an MLP 32-128-23 names
    (a + b) mod 23, trained with cross-entropy on 70% of the 529 sums. Generalising to the
    held-out sums needs the embedding to take the group's circular structure; metric the val error
    on the other 30%. A fresh workload of the seventeenth batch (see ``FactorisationClicks``)."""

    metric = "val_error"
    modulus = 23

    def __init__(self) -> None:
        rng = np.random.default_rng(401)
        a, b = np.divmod(np.arange(self.modulus**2), self.modulus)
        order = rng.permutation(len(a))
        pairs, sums = np.stack([a, b], 1)[order], ((a + b) % self.modulus)[order]
        cut = round(0.7 * len(a))
        super().__init__(pairs[:cut], sums[:cut], pairs[cut:], sums[cut:])

    def build_model(self) -> nn.Module:
        return _SummedEmbedding(self.modulus, 32, 128)


class _SummedEmbedding(nn.Module):
    def __init__(self, modulus: int, width: int, hidden: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(modulus, width)
        self.mlp = _mlp(width, [hidden], modulus)

    def forward(self, pairs: torch.Tensor) -> torch.Tensor:
        return self.mlp(self.embed(pairs.long()).sum(1))


class MaskedBytes:
    """Masked byte modelling (the objective of BERT, Devlin et al. 2019) on stdlib source: a
    one-layer transformer encoder (width 32, 2 heads) reads 32-byte windows in which 15% of the
    bytes are replaced by a mask token and names the hidden bytes from both sides (cross-entropy
    on the masked places alone). Metric the val loss in nats per masked byte on 256 fixed windows
    of a held-out file with fixed masks. Recorded in session 40 as the eighteenth batch of *fresh*
    workloads, with nothing scored on them: kept for a check written before it runs."""

    metric = "val_masked_loss"
    train_sources = ("shutil.py", "tempfile.py", "pprint.py")
    val_sources = ("inspect.py",)
    context, mask_token, share = 32, 256, 0.15

    def __init__(self) -> None:
        self.train_data = stdlib_bytes(self.train_sources, 150_000)
        val = stdlib_bytes(self.val_sources, 40_000)
        generator = torch.Generator().manual_seed(409)
        starts = torch.randint(0, len(val) - self.context, (256,), generator=generator)
        windows = torch.stack([val[s : s + self.context] for s in starts])
        self.val_batch = (windows, torch.rand(windows.shape, generator=generator) < self.share)

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        offsets = torch.arange(self.context)
        while True:
            starts = torch.randint(
                0, len(self.train_data) - self.context, (micro_batch_size,), generator=generator
            )
            windows = self.train_data[starts[:, None] + offsets]
            yield windows, torch.rand(windows.shape, generator=generator) < self.share

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        windows, masked = batch
        logits = model(torch.where(masked, torch.full_like(windows, self.mask_token), windows))
        return F.cross_entropy(logits[masked].float(), windows[masked])

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        return {"val_masked_loss": self.loss(model, self.val_batch).item()}

    def build_model(self) -> nn.Module:
        return _ByteEncoder(257, 256, self.context, 32)


class _ByteEncoder(nn.Module):
    def __init__(self, tokens: int, outputs: int, context: int, width: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(tokens, width)
        self.position = nn.Parameter(torch.randn(context, width) * 0.02)
        layer = nn.TransformerEncoderLayer(width, 2, 2 * width, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
        self.head = nn.Linear(width, outputs)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(self.embed(tokens) + self.position))


class LinearRecurrentDigits(_Classifier):
    """A linear recurrent unit (after Orvieto et al. 2023) reading a digit pixel by pixel: sklearn's
    8×8 digits as sequences of 64 pixels, two layers of a diagonal linear recurrence (width 32,
    each channel's decay a learned number in (0, 1), started between 0.8 and 0.99) with a GELU MLP
    on each step's state between them; the last step's state names the digit. Metric the val error
    on 540 held-out digits. A fresh workload of the eighteenth batch (see ``MaskedBytes``)."""

    metric = "val_error"

    def __init__(self) -> None:
        super().__init__(*_digits_split())

    def build_model(self) -> nn.Module:
        return _LinearRecurrent(32, 10)


class _LinearRecurrentLayer(nn.Module):
    def __init__(self, inputs: int, width: int) -> None:
        super().__init__()
        self.inputs = nn.Linear(inputs, width)
        decay = torch.linspace(0.8, 0.99, width)
        self.logit_decay = nn.Parameter(torch.log(decay / (1 - decay)))
        self.mix = nn.Sequential(nn.LayerNorm(width), nn.Linear(width, width), nn.GELU())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        decay, pushed = torch.sigmoid(self.logit_decay), self.inputs(x)
        state = torch.zeros_like(pushed[:, 0])
        states = []
        for t in range(pushed.shape[1]):
            state = decay * state + (1 - decay) * pushed[:, t]
            states.append(state)
        return self.mix(torch.stack(states, 1))


class _LinearRecurrent(nn.Module):
    def __init__(self, width: int, classes: int) -> None:
        super().__init__()
        self.layers = nn.Sequential(_LinearRecurrentLayer(1, width), _LinearRecurrentLayer(width, width))
        self.head = nn.Linear(width, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.layers(x[:, :, None])[:, -1])


class GumbelVAEDigits(_Tabular):
    """A variational autoencoder with a discrete latent (the Gumbel-softmax relaxation, Jang et al.
    2017): an MLP 64-64-(8 × 8) encodes a binarised 8×8 digit as 8 categorical variables of 8
    values each, a relaxed one-hot draw at temperature 0.7 goes through an MLP 64-64-64 to
    Bernoulli pixel logits, and the loss is the reconstruction's cross-entropy plus the KL to a
    uniform prior. Metric the val negative ELBO in nats per image with a fixed set of draws (the
    same at every evaluation); 1,437 images to train on, 360 held out. A fresh workload of the
    eighteenth batch (see ``MaskedBytes``)."""

    metric = "val_nelbo"
    variables, values, temperature = 8, 8, 0.7

    def __init__(self) -> None:
        from sklearn.datasets import load_digits

        digits = load_digits()
        x = (digits.data > 7).astype(np.float32)
        x_train, _, x_val, _ = _split(x, digits.target, 0.2, True)
        super().__init__(x_train, x_train, x_val, x_val)
        self.val_uniform = torch.rand(
            len(x_val), self.variables, self.values, generator=torch.Generator().manual_seed(419)
        )

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, _ = batch
        return self._nelbo(model, inputs, torch.rand(len(inputs), self.variables, self.values))

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        return {"val_nelbo": self._nelbo(model, self.x_val, self.val_uniform).item()}

    def _nelbo(self, model: nn.Module, x: torch.Tensor, uniform: torch.Tensor) -> torch.Tensor:
        encoder, decoder = model
        logits = encoder(x).float().view(len(x), self.variables, self.values)
        gumbel = -torch.log(-torch.log(uniform.clamp(1e-9, 1 - 1e-9)))
        draw = torch.softmax((logits + gumbel) / self.temperature, -1)
        reconstruction = F.binary_cross_entropy_with_logits(
            decoder(draw.flatten(1)).float(), x, reduction="none"
        ).sum(-1)
        log_q = torch.log_softmax(logits, -1)
        kl = (log_q.exp() * (log_q + math.log(self.values))).sum((1, 2))
        return (reconstruction + kl).mean()

    def build_model(self) -> nn.Module:
        return nn.ModuleList(
            [_mlp(64, [64], self.variables * self.values), _mlp(self.variables * self.values, [64], 64)]
        )


class HamiltonianPendulum(_MultiOutputMSE):
    """A Hamiltonian neural network (Greydanus et al. 2019): an MLP 2-64-64-1 gives a scalar energy
    H(q, p), and the model's velocities are its symplectic gradient (∂H/∂p, −∂H/∂q), taken by
    autograd inside the loss (a second-order gradient in training); fitted by MSE to a nonlinear
    pendulum's noisy time derivatives (H = p²/2 + 3(1 − cos q)). Metric the val MSE of the
    derivatives over their variance on 1,000 held-out states; 4,000 to train on. A fresh
    workload of the eighteenth batch (see ``MaskedBytes``)."""

    def __init__(self) -> None:
        rng = np.random.default_rng(421)
        state = np.stack([rng.uniform(-2.5, 2.5, 5000), rng.uniform(-3.0, 3.0, 5000)], 1)
        velocity = np.stack([state[:, 1], -3.0 * np.sin(state[:, 0])], 1) + rng.normal(0.0, 0.1, (5000, 2))
        super().__init__(
            state[:4000], velocity[:4000].astype(np.float32), state[4000:], velocity[4000:].astype(np.float32)
        )

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        states, velocities = batch
        return F.mse_loss(_symplectic_gradient(model, states, create_graph=True), velocities)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        predicted = _symplectic_gradient(model, self.x_val, create_graph=False)
        return {"val_mse": F.mse_loss(predicted, self.y_val).item() / self.variance}

    def build_model(self) -> nn.Module:
        return nn.Sequential(nn.Linear(2, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 1))


def _symplectic_gradient(model: nn.Module, states: torch.Tensor, create_graph: bool) -> torch.Tensor:
    """(∂H/∂p, −∂H/∂q) of the model's energy H at ``states`` (q, p), by autograd."""
    with torch.enable_grad():
        states = states.detach().requires_grad_(True)
        energy = model(states).float().sum()
        (gradient,) = torch.autograd.grad(energy, states, create_graph=create_graph)
    return torch.stack([gradient[:, 1], -gradient[:, 0]], 1)


class InductionHeads:
    """In-context copying by induction heads (Olsson et al. 2022): sequences of 40 tokens (vocabulary
    32) hold a random block of 12 tokens twice in a row, at a random offset in random filler; a
    two-layer attention-only transformer (width 32, 2 heads, causal, learned positions, no MLP)
    is trained on next-token prediction over the whole sequence. Only content-based attention to
    the token after the current token's earlier occurrence predicts the repeat, which such models
    are known to learn abruptly. Metric the val loss in nats per token on the repeat's tokens
    after its first (ln 32 ≈ 3.47 at chance), over 512 fixed sequences. Recorded in session 41
    as the nineteenth batch of *fresh* workloads, with nothing scored on them."""

    metric = "val_copy_loss"
    vocab, block, slack = 32, 12, 16

    def __init__(self) -> None:
        self.val_batch = self._sequences(512, torch.Generator().manual_seed(431))

    @property
    def length(self) -> int:
        return 2 * self.block + self.slack

    def _sequences(self, count: int, generator: torch.Generator) -> Batch:
        block = torch.randint(0, self.vocab, (count, self.block), generator=generator)
        filler = torch.randint(0, self.vocab, (count, self.length), generator=generator)
        start = torch.randint(0, self.slack + 1, (count, 1), generator=generator)
        place = torch.arange(self.length)[None] - start  # each token's place in the two blocks
        inside = (place >= 0) & (place < 2 * self.block)
        tokens = torch.where(inside, block.gather(1, place.clamp(0, 2 * self.block - 1) % self.block), filler)
        return tokens, (place > self.block) & (place < 2 * self.block)

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        while True:
            yield self._sequences(micro_batch_size, generator)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        tokens, _ = batch
        logits = model(tokens[:, :-1]).float()
        return F.cross_entropy(logits.reshape(-1, self.vocab), tokens[:, 1:].reshape(-1))

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        tokens, repeat = self.val_batch
        logits = model(tokens[:, :-1]).float()
        chosen = repeat[:, 1:]
        return {"val_copy_loss": F.cross_entropy(logits[chosen], tokens[:, 1:][chosen]).item()}

    def build_model(self) -> nn.Module:
        return _AttentionOnly(self.vocab, self.length - 1, 32, 2)


class _AttentionOnly(nn.Module):
    def __init__(self, vocab: int, context: int, width: int, layers: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.position = nn.Parameter(torch.randn(context, width) * 0.1)
        self.norms = nn.ModuleList(nn.LayerNorm(width) for _ in range(layers))
        self.attention = nn.ModuleList(
            nn.MultiheadAttention(width, 2, batch_first=True) for _ in range(layers)
        )
        self.head = nn.Linear(width, vocab)
        self.register_buffer("causal", torch.triu(torch.ones(context, context, dtype=torch.bool), 1))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens) + self.position[: tokens.shape[1]]
        mask = self.causal[: tokens.shape[1], : tokens.shape[1]]
        for norm, attention in zip(self.norms, self.attention, strict=True):
            h = norm(x)
            x = x + attention(h, h, h, attn_mask=mask, need_weights=False)[0]
        return self.head(x)


class LinkPrediction:
    """Link prediction with a graph convolutional encoder (graph autoencoder, Kipf & Welling 2016):
    a random geometric graph of 600 nodes on the unit sphere in 3-D (edge chance 0.25 ×
    exp(−d² / (2 · 0.25²)) for nodes at distance d) whose 16-dimensional features are a random
    projection of each node's place plus unit noise; 15% of the edges are held out. A two-layer
    GCN over the training edges embeds the nodes (width 32) and a pair's score is the dot product;
    each sample is a training edge, trained by logistic loss against as many random pairs. Metric
    the val ROC AUC of held-out edges against 4 fixed non-edges each (maximised; saturates near
    0.93, where the graph's randomness leaves nothing to learn). A fresh workload of the nineteenth
    batch (see ``InductionHeads``). Its first form, a stochastic block model, sat at its community
    ceiling from the first evaluation and was replaced while sizing."""

    metric = "val_auc"
    nodes, reach = 600, 0.25

    def __init__(self) -> None:
        rng = np.random.default_rng(433)
        place = rng.normal(0.0, 1.0, (self.nodes, 3))
        place /= np.linalg.norm(place, axis=1, keepdims=True)
        distance = ((place[:, None] - place[None]) ** 2).sum(-1)
        chance = 0.25 * np.exp(-distance / (2 * self.reach**2))
        upper = np.triu(rng.random((self.nodes, self.nodes)) < chance, 1)
        edges = np.argwhere(upper)
        rng.shuffle(edges)
        cut = round(0.85 * len(edges))
        train, val = edges[:cut], edges[cut:]
        features = place @ rng.normal(0.0, 1.0, (3, 16)) + rng.normal(0.0, 1.0, (self.nodes, 16))
        adjacency = np.eye(self.nodes)
        adjacency[train[:, 0], train[:, 1]] = adjacency[train[:, 1], train[:, 0]] = 1.0
        degree = adjacency.sum(1) ** -0.5
        self.propagate = torch.tensor(degree[:, None] * adjacency * degree[None, :], dtype=torch.float32)
        self.features = torch.tensor(features, dtype=torch.float32)
        self.train_edges = torch.tensor(train)
        linked = upper | upper.T
        negatives = rng.integers(0, self.nodes, (8 * len(val), 2))
        negatives = negatives[
            (negatives[:, 0] != negatives[:, 1]) & ~linked[negatives[:, 0], negatives[:, 1]]
        ]
        self.val_pairs = torch.tensor(np.concatenate([val, negatives[: 4 * len(val)]]))
        self.val_labels = np.concatenate([np.ones(len(val)), np.zeros(4 * len(val))])

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        while True:
            index = torch.randint(0, len(self.train_edges), (micro_batch_size,), generator=generator)
            yield (
                self.train_edges[index],
                torch.randint(0, self.nodes, (micro_batch_size, 2), generator=generator),
            )

    def _scores(self, model: nn.Module, pairs: torch.Tensor) -> torch.Tensor:
        embedding = model(self.features, self.propagate).float()
        return (embedding[pairs[:, 0]] * embedding[pairs[:, 1]]).sum(-1)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        positive, negative = batch
        scores = self._scores(model, torch.cat([positive, negative]))
        labels = torch.cat([torch.ones(len(positive)), torch.zeros(len(negative))])
        return F.binary_cross_entropy_with_logits(scores, labels)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        from sklearn.metrics import roc_auc_score

        scores = self._scores(model, self.val_pairs).numpy()
        if not np.all(np.isfinite(scores)):
            return {"val_auc": math.nan}
        return {"val_auc": float(roc_auc_score(self.val_labels, scores))}

    def build_model(self) -> nn.Module:
        return _GraphEncoder(16, 32)


class _GraphEncoder(nn.Module):
    def __init__(self, inputs: int, width: int) -> None:
        super().__init__()
        self.first, self.second = nn.Linear(inputs, width), nn.Linear(width, width)

    def forward(self, features: torch.Tensor, propagate: torch.Tensor) -> torch.Tensor:
        return propagate @ self.second(F.relu(propagate @ self.first(features)))


class BayesByBackprop(_Tabular):
    """A Bayesian neural network by variational inference (Bayes by Backprop, Blundell et al. 2015):
    an MLP 4-32-1 whose every weight (not the biases) is a Gaussian (a mean and a softplus scale, started at 0.01),
    one weight draw per step by the reparameterisation trick, a learned observation noise, and
    the loss the Gaussian negative log-likelihood plus the KL to a N(0, 1) prior over the 2,000
    training points. The gradients are noisy by construction. Metric the val negative
    log-likelihood per point of the mean network's predictions under the learned noise (1,000
    held-out points of a smooth function of 4 inputs with noise 0.3; can fall below zero). A
    fresh workload of the nineteenth batch (see ``InductionHeads``)."""

    metric = "val_nll"

    def __init__(self) -> None:
        rng = np.random.default_rng(439)
        x = rng.uniform(-2.0, 2.0, (3000, 4))
        y = np.sin(2.0 * x[:, 0]) + 0.5 * x[:, 1] ** 2 - x[:, 2] * x[:, 3] / 2 + rng.normal(0.0, 0.3, 3000)
        super().__init__(x[:2000], y[:2000].astype(np.float32), x[2000:], y[2000:].astype(np.float32))

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, targets = batch
        # The forward pass returns the noise and the KL too, so a DDP wrapper is called, not bypassed.
        mean, variance, kl = model(inputs, sample=True)
        nll = F.gaussian_nll_loss(mean.float(), targets, variance.float().expand_as(mean), full=True)
        return nll + kl / len(self.x_train)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        mean, variance, _ = model(self.x_val, sample=False)
        nll = F.gaussian_nll_loss(mean.float(), self.y_val, variance.float().expand_as(mean), full=True)
        return {"val_nll": nll.item()}

    def build_model(self) -> nn.Module:
        return _BayesianMLP(4, 32)


class _BayesianLinear(nn.Module):
    def __init__(self, inputs: int, outputs: int) -> None:
        super().__init__()
        self.mean = nn.Parameter(torch.randn(outputs, inputs) / math.sqrt(inputs))
        self.bias = nn.Parameter(torch.zeros(outputs))
        # softplus(-4.6) ≈ 0.01: start near the deterministic network
        self.raw_scale = nn.Parameter(torch.full((outputs, inputs), -4.6))

    def forward(self, x: torch.Tensor, sample: bool) -> torch.Tensor:
        weight = self.mean
        if sample:
            weight = weight + F.softplus(self.raw_scale) * torch.randn_like(weight)
        return F.linear(x, weight, self.bias)

    def kl(self) -> torch.Tensor:
        scale = F.softplus(self.raw_scale)
        return 0.5 * (scale**2 + self.mean**2 - 1.0 - 2.0 * torch.log(scale)).sum()


class _BayesianMLP(nn.Module):
    def __init__(self, inputs: int, width: int) -> None:
        super().__init__()
        self.first, self.second = _BayesianLinear(inputs, width), _BayesianLinear(width, 1)
        self.log_noise = nn.Parameter(torch.zeros(1))

    def forward(self, x: torch.Tensor, sample: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The prediction, the observation noise's variance and the weights' KL to the prior."""
        prediction = self.second(torch.tanh(self.first(x, sample)), sample).squeeze(-1)
        return prediction, torch.exp(2.0 * self.log_noise), self.first.kl() + self.second.kl()


class DilatedTCNForecast(_MultiOutputMSE):
    """A temporal convolutional network (dilated causal convolutions, Bai et al. 2018) forecasting
    the chaotic Mackey-Glass series (τ = 17) 40 steps ahead from its last 64 values, read with
    noise (0.1 of the series' scale; the target is the clean value): four causal
    convolutions of width 16, kernel 3, dilations 1, 2, 4, 8, residual, then a linear read-out of
    the last step. Metric the val MSE over the targets' variance, on windows from the series'
    last fifth (4,000 windows to train on). A fresh workload of the nineteenth batch (see
    ``InductionHeads``)."""

    window, ahead = 64, 40

    def __init__(self) -> None:
        rng = np.random.default_rng(443)
        series = _mackey_glass(6600, rng)
        observed = series + rng.normal(0.0, 0.1, len(series))  # the model reads a noisy record
        starts = np.arange(0, len(series) - self.window - self.ahead)
        x = np.stack([observed[s : s + self.window] for s in starts]).astype(np.float32)
        y = series[starts + self.window + self.ahead - 1].astype(np.float32)
        cut = round(0.8 * len(starts))
        super().__init__(
            x[: min(cut, 4000)], y[: min(cut, 4000)], x[cut + self.window :], y[cut + self.window :]
        )

    def build_model(self) -> nn.Module:
        return _TCN(16, (1, 2, 4, 8))


def _mackey_glass(length: int, rng: np.random.Generator, tau: int = 17) -> np.ndarray:
    """The Mackey-Glass delay equation by Euler steps of 1 (β 0.2, γ 0.1, power 10), centred."""
    x = list(1.2 + 0.1 * rng.random(tau + 1))
    for _ in range(length + 500):
        delayed = x[-tau - 1]
        x.append(x[-1] + 0.2 * delayed / (1.0 + delayed**10) - 0.1 * x[-1])
    series = np.asarray(x[-length:])
    return (series - series.mean()) / series.std()


class _TCN(nn.Module):
    def __init__(self, width: int, dilations: tuple[int, ...]) -> None:
        super().__init__()
        self.lift = nn.Conv1d(1, width, 1)
        self.convolutions = nn.ModuleList(nn.Conv1d(width, width, 3, dilation=d) for d in dilations)
        self.read = nn.Linear(width, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.lift(x[:, None, :])
        for convolution in self.convolutions:
            pad = 2 * convolution.dilation[0]
            h = h + F.relu(convolution(F.pad(h, (pad, 0))))
        return self.read(h[:, :, -1]).squeeze(-1)


class LongAddition(_Tabular):
    """Long addition of two 8-digit numbers, read most significant digit first: each of 9 places
    holds one digit of each number (a leading 0 pair leaves room for the last carry), one-hot;
    a bidirectional GRU (width 32 each way) writes the sum's digit at every place. A carry runs
    from the right, so only the backward direction can learn it, and a sum is right only when
    all 9 digits are. Metric the val exact-match accuracy over 2,000 fixed pairs (maximised;
    20,000 to train on). Recorded in session 42 as the twentieth batch of *fresh* workloads,
    with nothing scored on them."""

    metric = "val_exact"
    digits = 5

    def __init__(self) -> None:
        rng = np.random.default_rng(441)
        a, b = (rng.integers(0, 10**self.digits, 22000) for _ in range(2))
        places = 10 ** np.arange(self.digits, -1, -1)
        pairs = np.stack([(a[:, None] // places) % 10, (b[:, None] // places) % 10], axis=-1)
        inputs = np.concatenate([np.eye(10)[pairs[..., 0]], np.eye(10)[pairs[..., 1]]], axis=-1)
        total = ((a + b)[:, None] // places) % 10
        super().__init__(inputs[:20000], total[:20000], inputs[20000:], total[20000:])

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, digits = batch
        return F.cross_entropy(model(inputs).float().reshape(-1, 10), digits.reshape(-1))

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float()
        right = logits.argmax(-1) == self.y_val
        return {
            "val_exact": right.all(-1).float().mean().item(),
            "val_digit_error": 1.0 - right.float().mean().item(),
            "val_loss": F.cross_entropy(logits.reshape(-1, 10), self.y_val.reshape(-1)).item(),
        }

    def build_model(self) -> nn.Module:
        return _BiGRUTagger(20, 32, 10)


class _BiGRUTagger(nn.Module):
    def __init__(self, inputs: int, width: int, classes: int) -> None:
        super().__init__()
        self.gru = nn.GRU(inputs, width, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * width, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.gru(x)[0])


class LISTASparseCoding(_Tabular):
    """Sparse coding by a learned, unrolled ISTA (LISTA, Gregor & LeCun 2010): codes of 64 atoms
    with 4 non-zero entries (±0.5 to 1.5) are observed through a fixed random 32 × 64 dictionary
    with unit-norm atoms and noise of 0.05; six soft-threshold layers sharing one encoder and
    one mutual-inhibition matrix, started at ISTA's own (step 1/L, threshold 0.1/L, each layer's
    threshold learned), recover the code. Metric the val normalised MSE of the code,
    ``Σ(x̂ − x)² / Σx²``, over 2,000 fixed observations (20,000 to train on). A fresh workload of
    the twentieth batch (see ``LongAddition``)."""

    metric = "val_nmse"
    observed, atoms, active, layers = 32, 64, 4, 6

    def __init__(self) -> None:
        rng = np.random.default_rng(443)
        dictionary = rng.normal(0.0, 1.0, (self.observed, self.atoms))
        self.dictionary = dictionary / np.linalg.norm(dictionary, axis=0, keepdims=True)
        codes = np.zeros((22000, self.atoms))
        support = np.argsort(rng.random((22000, self.atoms)), axis=1)[:, : self.active]
        values = rng.uniform(0.5, 1.5, (22000, self.active)) * rng.choice([-1.0, 1.0], (22000, self.active))
        np.put_along_axis(codes, support, values, axis=1)
        seen = codes @ self.dictionary.T + rng.normal(0.0, 0.05, (22000, self.observed))
        super().__init__(seen[:20000], codes[:20000], seen[20000:], codes[20000:])

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        seen, codes = batch
        return F.mse_loss(model(seen).float(), codes)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        error = ((model(self.x_val).float() - self.y_val) ** 2).sum()
        return {"val_nmse": (error / (self.y_val**2).sum()).item()}

    def build_model(self) -> nn.Module:
        return _LISTA(torch.tensor(self.dictionary, dtype=torch.float32), self.layers)


class _LISTA(nn.Module):
    def __init__(self, dictionary: torch.Tensor, layers: int, penalty: float = 0.1) -> None:
        super().__init__()
        lipschitz = torch.linalg.matrix_norm(dictionary, ord=2).item() ** 2
        observed, atoms = dictionary.shape
        self.encode = nn.Linear(observed, atoms, bias=False)
        self.mutual = nn.Linear(atoms, atoms, bias=False)
        with torch.no_grad():
            self.encode.weight.copy_(dictionary.T / lipschitz)
            self.mutual.weight.copy_(torch.eye(atoms) - dictionary.T @ dictionary / lipschitz)
        self.threshold = nn.Parameter(torch.full((layers,), penalty / lipschitz))

    def forward(self, seen: torch.Tensor) -> torch.Tensor:
        drive = self.encode(seen)
        code = torch.zeros_like(drive)
        for threshold in self.threshold:
            z = drive + self.mutual(code)
            code = torch.sign(z) * F.relu(z.abs() - threshold)
        return code


class PointCloudShapes(_Classifier):
    """Point-cloud classification with a PointNet (Qi et al. 2017): 32 points sampled from the
    surface of one of five shapes (sphere, cube, cylinder, cone, torus), each stretched by 0.7 to
    1.3 along its axes, turned by a random rotation and read with noise of 0.1; a shared MLP
    3-32-64 per point, max-pooled over the points, then 64-32-5. Metric the val error over 1,000
    fixed clouds (6,000 to train on). A fresh workload of the twentieth batch (see
    ``LongAddition``)."""

    metric = "val_error"
    points = 32

    def __init__(self) -> None:
        rng = np.random.default_rng(447)
        labels = rng.integers(0, 5, 7000)
        clouds = np.stack([self._cloud(int(k), rng) for k in labels])
        super().__init__(clouds[:6000], labels[:6000], clouds[6000:], labels[6000:])

    def _cloud(self, shape: int, rng: np.random.Generator) -> np.ndarray:
        n = self.points
        u, v = rng.uniform(0.0, 2 * math.pi, n), rng.uniform(-1.0, 1.0, n)
        if shape == 0:  # sphere
            p = rng.normal(0.0, 1.0, (n, 3))
            p /= np.linalg.norm(p, axis=1, keepdims=True)
        elif shape == 1:  # cube surface
            p = rng.uniform(-1.0, 1.0, (n, 3))
            face = rng.integers(0, 3, n)
            p[np.arange(n), face] = rng.choice([-1.0, 1.0], n)
        elif shape == 2:  # cylinder
            p = np.stack([np.cos(u), np.sin(u), v], axis=1)
        elif shape == 3:  # cone
            r = (1.0 - v) / 2.0
            p = np.stack([r * np.cos(u), r * np.sin(u), v], axis=1)
        else:  # torus
            w = rng.uniform(0.0, 2 * math.pi, n)
            p = np.stack(
                [(1 + 0.4 * np.cos(w)) * np.cos(u), (1 + 0.4 * np.cos(w)) * np.sin(u), 0.4 * np.sin(w)], 1
            )
        rotation, _ = np.linalg.qr(rng.normal(0.0, 1.0, (3, 3)))
        return (p * rng.uniform(0.7, 1.3, 3)) @ rotation.T + rng.normal(0.0, 0.1, (n, 3))

    def build_model(self) -> nn.Module:
        return _PointNet(5)


class _PointNet(nn.Module):
    def __init__(self, classes: int) -> None:
        super().__init__()
        self.point = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Linear(32, 64), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, classes))

    def forward(self, clouds: torch.Tensor) -> torch.Tensor:
        return self.head(self.point(clouds).amax(dim=1))


class InpaintingDigits(_Tabular):
    """Image inpainting on scikit-learn's 8×8 digits (scaled to [0, 1]): a random 4 × 4 square of
    each image is blanked, and a three-layer convolutional network (3 × 3, width 32) reads the
    blanked image and the mask and fills the square. Trained on the masked pixels' MSE, a new
    square for each sample; metric the val PSNR of the filled squares,
    ``10 log10(1 / MSE)`` in dB, over 360 held-out images with fixed squares (maximised, no
    bound; 1,437 to train on). A fresh workload of the twentieth batch (see ``LongAddition``)."""

    metric = "val_psnr"
    side, hole = 8, 4

    def __init__(self) -> None:
        from sklearn.datasets import load_digits

        x, y = load_digits(return_X_y=True)
        x_train, _, x_val, _ = _split(x / 16.0, y, 0.2, True)
        super().__init__(x_train, x_train, x_val, x_val)
        self.val_mask = self._masks(len(self.x_val), torch.Generator().manual_seed(449))

    def _masks(self, count: int, generator: torch.Generator) -> torch.Tensor:
        corner = torch.randint(0, self.side - self.hole + 1, (count, 2), generator=generator)
        place = torch.arange(self.side)
        rows = (place[None] >= corner[:, :1]) & (place[None] < corner[:, :1] + self.hole)
        cols = (place[None] >= corner[:, 1:]) & (place[None] < corner[:, 1:] + self.hole)
        return (rows[:, :, None] & cols[:, None, :]).reshape(count, -1).float()

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        while True:
            index = torch.randint(0, len(self.x_train), (micro_batch_size,), generator=generator)
            yield self.x_train[index], self._masks(micro_batch_size, generator)

    def _filled_error(self, model: nn.Module, images: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        filled = model(torch.stack([images * (1 - mask), mask], dim=1).reshape(-1, 2, self.side, self.side))
        return ((filled.float().reshape(len(images), -1) - images) ** 2 * mask).sum() / mask.sum()

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        images, mask = batch
        return self._filled_error(model, images, mask)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        mse = self._filled_error(model, self.x_val, self.val_mask).item()
        return {"val_psnr": 10.0 * math.log10(1.0 / mse) if mse > 0 else math.inf, "val_mse": mse}

    def build_model(self) -> nn.Module:
        return nn.Sequential(
            nn.Conv2d(2, 32, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(32, 32, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(32, 1, 3, padding=1),
            nn.Sigmoid(),
        )


class DeepONetAntiderivative(_Tabular):
    """Operator learning with a DeepONet (Lu et al. 2021): a branch MLP reads a function
    ``u(x) = Σ_k (a_k sin kπx + b_k cos kπx) / k`` (k = 1…4, a and b standard normal) at 32 sensor
    points, a trunk MLP reads 16 fixed query points ``y``, and their dot product is the
    antiderivative ``∫_0^y u``. Metric the val relative L2 error ``‖Gu − ĝ‖ / ‖Gu‖`` over 1,000
    fixed functions (8,000 to train on). A fresh workload of the twenty-first batch (defined after
    check R‴ was written)."""

    metric = "val_rel_l2"
    sensors, queries, modes = 32, 16, 4

    def __init__(self) -> None:
        rng = np.random.default_rng(461)
        k = np.arange(1, self.modes + 1)
        a = rng.normal(0.0, 1.0, (9000, self.modes)) / k
        b = rng.normal(0.0, 1.0, (9000, self.modes)) / k
        x = np.linspace(0.0, 1.0, self.sensors)
        y = np.linspace(1.0 / self.queries, 1.0, self.queries)
        u = a @ np.sin(np.pi * np.outer(k, x)) + b @ np.cos(np.pi * np.outer(k, x))
        # ∫_0^y sin(kπt) dt = (1 − cos kπy) / kπ, ∫_0^y cos(kπt) dt = sin(kπy) / kπ
        g = a @ ((1.0 - np.cos(np.pi * np.outer(k, y))) / (np.pi * k[:, None]))
        g += b @ (np.sin(np.pi * np.outer(k, y)) / (np.pi * k[:, None]))
        self.y_points = torch.tensor(y, dtype=torch.float32)[:, None]
        super().__init__(u[:8000], g[:8000], u[8000:], g[8000:])

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        u, g = batch
        return F.mse_loss(model(u).float(), g)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        error = torch.linalg.vector_norm(model(self.x_val).float() - self.y_val, dim=1)
        return {"val_rel_l2": (error / torch.linalg.vector_norm(self.y_val, dim=1)).mean().item()}

    def build_model(self) -> nn.Module:
        return _DeepONet(self.sensors, self.y_points)


class _DeepONet(nn.Module):
    def __init__(self, sensors: int, y_points: torch.Tensor, width: int = 32) -> None:
        super().__init__()
        self.branch = nn.Sequential(nn.Linear(sensors, width), nn.Tanh(), nn.Linear(width, width))
        self.trunk = nn.Sequential(nn.Linear(1, width), nn.Tanh(), nn.Linear(width, width), nn.Tanh())
        self.register_buffer("y_points", y_points)
        self.bias = nn.Parameter(torch.zeros(()))

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        return self.branch(u) @ self.trunk(self.y_points).T + self.bias


class LifeNextStep(_Tabular):
    """One step of Conway's Game of Life on 10 × 10 toroidal boards (cells alive with
    probability 0.35), learned by a convolutional network: a circular 3 × 3 convolution to 8
    channels, then two 1 × 1 convolutions. The rule is a threshold of the neighbour count, which
    such nets find late or not at all; the curves sit near the share of cells that change, then
    drop. Metric the val cell error (share of the 100 cells predicted wrong) over 500 fixed boards
    (5,000 to train on). A fresh workload of the twenty-first batch (see
    ``DeepONetAntiderivative``)."""

    metric = "val_cell_error"
    side = 10

    def __init__(self) -> None:
        rng = np.random.default_rng(463)
        boards = (rng.random((5500, self.side, self.side)) < 0.35).astype(np.float32)
        neighbours = sum(
            np.roll(np.roll(boards, dy, axis=1), dx, axis=2)
            for dy in (-1, 0, 1)
            for dx in (-1, 0, 1)
            if (dy, dx) != (0, 0)
        )
        after = ((neighbours == 3) | ((boards == 1) & (neighbours == 2))).astype(np.float32)
        super().__init__(boards[:5000, None], after[:5000], boards[5000:, None], after[5000:])

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        boards, after = batch
        return F.binary_cross_entropy_with_logits(model(boards).float(), after)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        predicted = (model(self.x_val).float() > 0).float()
        return {"val_cell_error": (predicted != self.y_val).float().mean().item()}

    def build_model(self) -> nn.Module:
        return _LifeNet()


class _LifeNet(nn.Module):
    def __init__(self, width: int = 8) -> None:
        super().__init__()
        self.neighbourhood = nn.Conv2d(1, width, 3, padding=1, padding_mode="circular")
        self.mix = nn.Conv2d(width, width, 1)
        self.out = nn.Conv2d(width, 1, 1)

    def forward(self, boards: torch.Tensor) -> torch.Tensor:
        h = F.relu(self.mix(F.relu(self.neighbourhood(boards))))
        return self.out(h).squeeze(1)


class BrierMulticlass(_Classifier):
    """Probabilistic classification scored by the Brier score: five classes of scikit-learn's
    ``make_classification`` (20 features, 8 informative, two clusters a class, 5% of the labels
    flipped), an MLP 20-64-64-5 trained on cross-entropy. Metric the val Brier score
    ``mean Σ_c (p_c − 1[y = c])²`` (0 perfect, 0.8 for uniform guesses) over 1,000 fixed points
    (5,000 to train on). A fresh workload of the twenty-first batch (see
    ``DeepONetAntiderivative``)."""

    metric = "val_brier"

    def __init__(self) -> None:
        from sklearn.datasets import make_classification

        x, y = make_classification(
            n_samples=6000, n_features=20, n_informative=8, n_redundant=4, n_classes=5,
            n_clusters_per_class=2, flip_y=0.05, class_sep=1.0, random_state=467,
        )  # fmt: skip
        x = (x - x[:5000].mean(axis=0)) / x[:5000].std(axis=0)
        super().__init__(x[:5000], y[:5000], x[5000:], y[5000:])

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        out = super().evaluate(model)
        p = torch.softmax(model(self.x_val).float(), dim=-1)
        out["val_brier"] = ((p - F.one_hot(self.y_val, 5).float()) ** 2).sum(-1).mean().item()
        return out

    def build_model(self) -> nn.Module:
        return nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 5))


class ChirpKeywords(_Classifier):
    """Keyword spotting on synthetic sounds: 256 samples of one of six patterns (rising chirp,
    falling chirp, two tones, an amplitude-modulated tone, a tone that jumps, a rising-then-falling
    sweep) at random pitch, onset and loudness in noise of 0.6, read as a log-magnitude
    spectrogram (frames of 32, hop 16, a Hann window: 15 × 17) by a small 2D CNN (8 then 16
    channels, 3 × 3, averaged, linear). Metric the val error over 1,000 fixed sounds (6,000 to
    train on). A fresh workload of the twenty-first batch (see ``DeepONetAntiderivative``)."""

    metric = "val_error"
    length, frame, hop = 256, 32, 16

    def __init__(self) -> None:
        rng = np.random.default_rng(479)
        labels = rng.integers(0, 6, 7000)
        sounds = np.stack([self._sound(int(k), rng) for k in labels])
        window = np.hanning(self.frame)
        starts = range(0, self.length - self.frame + 1, self.hop)
        frames = np.stack([sounds[:, i : i + self.frame] * window for i in starts], axis=1)
        spectra = np.log1p(np.abs(np.fft.rfft(frames, axis=-1)))
        spectra = (spectra - spectra[:6000].mean()) / spectra[:6000].std()
        super().__init__(spectra[:6000, None], labels[:6000], spectra[6000:, None], labels[6000:])

    def _sound(self, kind: int, rng: np.random.Generator) -> np.ndarray:
        t = np.arange(self.length, dtype=float)
        f0, f1 = rng.uniform(0.05, 0.15), rng.uniform(0.3, 0.42)
        onset, span = rng.integers(0, 64), rng.integers(128, 192)
        s = np.clip((t - onset) / span, 0.0, 1.0)
        if kind == 0:
            freq = f0 + (f1 - f0) * s
        elif kind == 1:
            freq = f1 - (f1 - f0) * s
        elif kind == 2:
            freq = np.where(np.arange(self.length) % 2 == 0, f0, f1)
        elif kind == 3:
            freq = np.full(self.length, f0 + 0.1)
        elif kind == 4:
            freq = np.where(s < 0.5, f0, f1)
        else:
            freq = f0 + (f1 - f0) * (1.0 - np.abs(2.0 * s - 1.0))
        phase = 2 * np.pi * np.cumsum(freq)
        tone = np.sin(phase) if kind != 2 else 0.5 * (np.sin(2 * np.pi * f0 * t) + np.sin(2 * np.pi * f1 * t))
        if kind == 3:
            tone *= 0.5 * (1.0 + np.sin(2 * np.pi * rng.uniform(0.01, 0.03) * t))
        envelope = ((t >= onset) & (t < onset + span)).astype(float)
        return rng.uniform(0.5, 1.5) * tone * envelope + rng.normal(0.0, 0.6, self.length)

    def build_model(self) -> nn.Module:
        return nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 6),
        )  # fmt: skip


def _balanced_brackets(length: int, rng: np.random.Generator) -> tuple[list[int], list[int]]:
    """A random balanced string of ``length`` symbols (0 ``(``, 1 ``)``, 2 ``[``, 3 ``]``) and,
    after each symbol, the kind of the innermost open bracket (0 none, 1 round, 2 square)."""
    symbols: list[int] = []
    tops: list[int] = []
    stack: list[int] = []
    for position in range(length):
        left = length - position
        if stack and (len(stack) == left or rng.random() < 0.5):
            symbols.append(stack.pop() + 1)
        else:
            kind = 2 * int(rng.integers(0, 2))
            stack.append(kind)
            symbols.append(kind)
        tops.append(stack[-1] // 2 + 1 if stack else 0)
    return symbols, tops


class DyckBrackets(_Tabular):
    """The stack of a bracket language (Dyck-2) kept by a plain Elman RNN: random balanced
    strings of 24 symbols over ``( ) [ ]`` (each step opens a random kind or closes, half and half
    while both are allowed), and after every symbol the RNN names the innermost bracket still
    open (none, round or square), the closing bracket the language allows next. After an opening
    bracket that is the symbol just read; after a closing one it is a bracket read earlier, so the
    net must keep a stack in its state. A one-layer tanh RNN (width 32) on one-hot symbols and a
    linear head at each step, trained on the cross-entropy per step. Metric the val share of
    strings with every step right, over 1,000 fixed strings (8,000 to train on). A fresh workload
    of the twenty-second batch."""

    metric = "val_exact"
    length, width = 24, 32

    def __init__(self) -> None:
        rng = np.random.default_rng(487)
        strings, tops = zip(*(_balanced_brackets(self.length, rng) for _ in range(9000)), strict=True)
        x, y = np.eye(4, dtype=np.float32)[np.array(strings)], np.array(tops)
        super().__init__(x[:8000], y[:8000], x[8000:], y[8000:])

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        symbols, tops = batch
        return F.cross_entropy(model(symbols).float().reshape(-1, 3), tops.reshape(-1))

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        right = model(self.x_val).float().argmax(-1) == self.y_val
        return {
            "val_exact": right.all(-1).float().mean().item(),
            "val_step_error": 1.0 - right.float().mean().item(),
        }

    def build_model(self) -> nn.Module:
        return _ElmanTagger(4, self.width, 3)


class _ElmanTagger(nn.Module):
    def __init__(self, inputs: int, width: int, classes: int) -> None:
        super().__init__()
        self.rnn = nn.RNN(inputs, width, batch_first=True)
        self.head = nn.Linear(width, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.rnn(x)[0])


class PrototypicalFewShot(_Tabular):
    """Few-shot classification with a prototypical network (Snell et al. 2017): 300 classes, each
    a point in an 8-dimensional latent space (standard normal), drawn 20 times with latent noise
    of 0.45 and seen as 64 features ``tanh(A [latent; nuisance])`` (A a fixed random 64 × 16
    matrix, the 8 nuisance values of std 2 drawn anew each time) plus noise of 0.1, so raw
    distances mostly measure the nuisance (the nearest prototype by raw features is right for 38%
    of the val queries, chance 20%). Each training micro-batch is an episode of
    ``micro_batch_size / 4`` of the first 240 classes, two drawings each as support (their mean
    embedding the class prototype) and two as queries, classified by a softmax over negative
    squared distances; the encoder is an MLP 64-64-32. Metric the val accuracy on 500 fixed
    5-way 1-shot episodes (3 queries a class) of the 60 held-out classes. A fresh workload of the
    twenty-second batch (see ``DyckBrackets``)."""

    metric = "val_fewshot_accuracy"
    classes, train_classes, drawings, latent, features = 300, 240, 20, 8, 64
    spread, nuisance = 0.45, 2.0

    def __init__(self) -> None:
        rng = np.random.default_rng(491)
        shape = (self.classes, self.drawings, self.latent)
        centres = rng.normal(0.0, 1.0, (self.classes, 1, self.latent))
        hidden = np.concatenate(
            [centres + rng.normal(0.0, self.spread, shape), rng.normal(0.0, self.nuisance, shape)], axis=-1
        )
        mixing = rng.normal(0.0, 1.0, (2 * self.latent, self.features)) / math.sqrt(2 * self.latent)
        seen = np.tanh(hidden @ mixing) + rng.normal(0.0, 0.1, (self.classes, self.drawings, self.features))
        train, val = seen[: self.train_classes], seen[self.train_classes :]
        super().__init__(train, np.zeros(1), val, np.zeros(1))
        generator = torch.Generator().manual_seed(493)
        ways, queries, held_out = 5, 3, self.classes - self.train_classes
        picked = torch.rand(500, held_out, generator=generator).argsort(-1)[:, :ways]
        drawn = torch.rand(500, ways, self.drawings, generator=generator).argsort(-1)[..., : 1 + queries]
        self.val_episodes = picked[..., None] * self.drawings + drawn  # (500, ways, 1 + queries)

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        ways = max(2, micro_batch_size // 4)
        while True:
            picked = torch.randperm(self.train_classes, generator=generator)[:ways]
            drawn = torch.rand(ways, self.drawings, generator=generator).argsort(-1)[:, :4]
            yield self.x_train[picked[:, None], drawn], picked

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        drawings, _ = batch
        ways = len(drawings)
        z = model(drawings).float()
        prototypes, queries = z[:, :2].mean(1), z[:, 2:].flatten(0, 1)
        logits = -(torch.cdist(queries, prototypes) ** 2)
        return F.cross_entropy(logits, torch.arange(ways).repeat_interleave(2))

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        z = model(self.x_val.flatten(0, 1)).float()
        if not bool(torch.isfinite(z).all()):
            return {"val_fewshot_accuracy": float("nan")}
        episodes = z[self.val_episodes]  # (500, ways, 1 + queries, width)
        prototypes, queries = episodes[:, :, 0], episodes[:, :, 1:].flatten(1, 2)
        nearest = torch.cdist(queries, prototypes).argmin(-1)
        truth = torch.arange(episodes.shape[1]).repeat_interleave(episodes.shape[2] - 1)
        return {"val_fewshot_accuracy": (nearest == truth).float().mean().item()}

    def build_model(self) -> nn.Module:
        return _mlp(self.features, [64], 32)


class CRFTagger(_Tabular):
    """Structured prediction with a linear-chain conditional random field: sequences of 24
    hidden states of a sticky six-state cycle (stay 0.75, move on 0.2, jump elsewhere 0.05) seen
    through 8-dimensional Gaussian observations (state means standard normal, noise 1.2, so one
    token alone is often ambiguous); per-token emission scores from an MLP 8-32-6, a learned
    6 × 6 transition matrix and start scores, trained on the CRF's negative log-likelihood (the
    forward algorithm) per token. Metric the val token error of the Viterbi decoding over 1,000
    fixed sequences (8,000 to train on). A fresh workload of the twenty-second batch (see
    ``DyckBrackets``)."""

    metric = "val_error"
    states, features, length = 6, 8, 24

    def __init__(self) -> None:
        rng = np.random.default_rng(499)
        move = np.full((self.states, self.states), 0.05 / (self.states - 2))
        for s in range(self.states):
            move[s, s], move[s, (s + 1) % self.states] = 0.75, 0.2
        cumulative = move.cumsum(1)
        paths = np.zeros((9000, self.length), dtype=np.int64)
        paths[:, 0] = rng.integers(0, self.states, 9000)
        for t in range(1, self.length):
            draw = rng.random((9000, 1))
            paths[:, t] = np.minimum((draw > cumulative[paths[:, t - 1]]).sum(1), self.states - 1)
        means = rng.normal(0.0, 1.0, (self.states, self.features))
        seen = means[paths] + rng.normal(0.0, 1.2, (9000, self.length, self.features))
        super().__init__(seen[:8000], paths[:8000], seen[8000:], paths[8000:])

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        seen, paths = batch
        return model.nll(seen, paths).mean() / self.length

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        best = model.decode(self.x_val)
        return {
            "val_error": (best != self.y_val).float().mean().item(),
            "val_nll": (model.nll(self.x_val, self.y_val).mean() / self.length).item(),
        }

    def build_model(self) -> nn.Module:
        return _LinearChainCRF(_mlp(self.features, [32], self.states), self.states)


class _LinearChainCRF(nn.Module):
    def __init__(self, emissions: nn.Module, states: int) -> None:
        super().__init__()
        self.emissions = emissions
        self.transitions = nn.Parameter(torch.zeros(states, states))
        self.start = nn.Parameter(torch.zeros(states))

    def forward(self, seen: torch.Tensor) -> torch.Tensor:
        return self.emissions(seen).float()

    def nll(self, seen: torch.Tensor, paths: torch.Tensor) -> torch.Tensor:
        e = self(seen)
        alpha = self.start + e[:, 0]
        for t in range(1, e.shape[1]):
            alpha = torch.logsumexp(alpha[:, :, None] + self.transitions, dim=1) + e[:, t]
        score = self.start[paths[:, 0]] + e.gather(2, paths[..., None]).squeeze(-1).sum(1)
        score = score + self.transitions[paths[:, :-1], paths[:, 1:]].sum(1)
        return torch.logsumexp(alpha, dim=1) - score

    def decode(self, seen: torch.Tensor) -> torch.Tensor:
        e = self(seen)
        best, back = self.start + e[:, 0], []
        for t in range(1, e.shape[1]):
            best, came = (best[:, :, None] + self.transitions).max(dim=1)
            best = best + e[:, t]
            back.append(came)
        path = [best.argmax(-1)]
        for came in reversed(back):
            path.append(came.gather(1, path[-1][:, None]).squeeze(1))
        return torch.stack(path[::-1], dim=1)


class RBMDigits(_Tabular):
    """An energy-based model trained by contrastive divergence: a restricted Boltzmann machine
    with 64 binary visible units (sklearn's 8×8 digits binarised at half intensity) and 32 binary
    hidden units, trained by CD-1 (the free energy of the data minus that of one block-Gibbs step
    from it, the step drawn with uniforms that come with the batch). The gradient is a noisy
    estimate of the likelihood's. Metric the val pseudo-negative-log-likelihood in nats per image,
    ``−Σ_i log p(v_i | v_−i)`` over all 64 pixels (exact, no sampling), over 360 held-out images
    (1,437 to train on). A fresh workload of the twenty-second batch (see ``DyckBrackets``)."""

    metric = "val_pseudo_nll"
    visible, hidden = 64, 32

    def __init__(self) -> None:
        from sklearn.datasets import load_digits

        digits = load_digits()
        x = (digits.data > 7).astype(np.float32)
        x_train, _, x_val, _ = _split(x, digits.target, 0.2, True)
        super().__init__(x_train, x_train, x_val, x_val)
        flip = torch.eye(self.visible)
        self.flipped = (self.x_val[:, None, :] + flip - 2 * self.x_val[:, None, :] * flip).reshape(
            -1, self.visible
        )

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        while True:
            index = torch.randint(0, len(self.x_train), (micro_batch_size,), generator=generator)
            uniforms = torch.rand(micro_batch_size, self.hidden + self.visible, generator=generator)
            yield self.x_train[index], uniforms

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        v, uniforms = batch
        with torch.no_grad():
            h = (torch.sigmoid(model.hidden_drive(v)) > uniforms[:, : self.hidden]).float()
            after = (torch.sigmoid(model.visible_drive(h)) > uniforms[:, self.hidden :]).float()
        return model(v).mean() - model(after).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        energy = model(self.x_val)
        flipped = model(self.flipped).view(len(self.x_val), self.visible)
        return {"val_pseudo_nll": -F.logsigmoid(flipped - energy[:, None]).sum(-1).mean().item()}

    def build_model(self) -> nn.Module:
        return _RBM(self.visible, self.hidden)


class _RBM(nn.Module):
    """Called with visible states, gives their free energy ``−v·b − Σ_j softplus((vW + c)_j)``."""

    def __init__(self, visible: int, hidden: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(visible, hidden) * 0.01)
        self.visible_bias = nn.Parameter(torch.zeros(visible))
        self.hidden_bias = nn.Parameter(torch.zeros(hidden))

    def hidden_drive(self, v: torch.Tensor) -> torch.Tensor:
        return v @ self.weight + self.hidden_bias

    def visible_drive(self, h: torch.Tensor) -> torch.Tensor:
        return h @ self.weight.T + self.visible_bias

    def forward(self, v: torch.Tensor) -> torch.Tensor:
        return -(v @ self.visible_bias) - F.softplus(self.hidden_drive(v)).sum(-1)


class ViTDigits(_Classifier):
    """A vision transformer (Dosovitskiy et al. 2021) on sklearn's 8×8 digits: the image cut into
    16 patches of 2 × 2 pixels, each embedded linearly to width 32 with a learned position, a
    class token in front, two pre-norm encoder layers (4 heads, feed-forward 64, no dropout) and a
    linear head on the class token. No convolution, so where strokes lie must be learned from
    1,437 images. Metric the val cross-entropy over 360 held-out images. A fresh workload of the
    twenty-third batch."""

    metric = "val_loss"
    patch = 2

    def __init__(self) -> None:
        from sklearn.datasets import load_digits

        x, y = load_digits(return_X_y=True)
        p, n = self.patch, 8 // self.patch
        patches = (x / 16.0).reshape(-1, n, p, n, p).transpose(0, 1, 3, 2, 4).reshape(-1, n * n, p * p)
        super().__init__(*_split(patches, y, 0.2, True))

    def build_model(self) -> nn.Module:
        return _ViT(self.patch**2, (8 // self.patch) ** 2, 32, 10)


class _ViT(nn.Module):
    def __init__(self, patch_size: int, patches: int, width: int, classes: int) -> None:
        super().__init__()
        self.embed = nn.Linear(patch_size, width)
        self.cls = nn.Parameter(torch.zeros(1, 1, width))
        self.position = nn.Parameter(torch.randn(1, patches + 1, width) * 0.02)
        layer = nn.TransformerEncoderLayer(
            width, 4, dim_feedforward=2 * width, dropout=0.0, batch_first=True, norm_first=True
        )
        self.blocks = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, classes)

    def forward(self, patches: torch.Tensor) -> torch.Tensor:
        x = torch.cat([self.cls.expand(len(patches), -1, -1), self.embed(patches)], dim=1) + self.position
        return self.head(self.norm(self.blocks(x)[:, 0]))


class KANRegression(_Regressor):
    """A Kolmogorov-Arnold network (Liu et al. 2024), in the radial-basis form of FastKAN: each
    layer sums, over its inputs, learned combinations of 8 Gaussian bumps on a grid over [−2, 2]
    of that input, plus a linear map of its SiLU; layers 4-8-1. The target,
    ``exp(sin(π x₁) + x₂²) + sin(π x₃ x₄)`` on uniform inputs in [−1, 1] with noise of 0.05,
    standardised, is a sum of compositions of one-variable functions, the form such a network
    writes. Metric the val MSE over 1,000 fixed points (4,000 to train on; the noise floor is
    about 0.003). A fresh workload of the twenty-third batch (see ``ViTDigits``)."""

    metric = "val_mse"

    def __init__(self) -> None:
        rng = np.random.default_rng(509)
        x = rng.uniform(-1.0, 1.0, (5000, 4))
        y = np.exp(np.sin(np.pi * x[:, 0]) + x[:, 1] ** 2) + np.sin(np.pi * x[:, 2] * x[:, 3])
        y = y + rng.normal(0.0, 0.05, len(y))
        y = (y - y[:4000].mean()) / y[:4000].std()
        super().__init__(x[:4000], y[:4000], x[4000:], y[4000:])

    def build_model(self) -> nn.Module:
        return nn.Sequential(_KANLayer(4, 8), _KANLayer(8, 1))


class _KANLayer(nn.Module):
    def __init__(
        self, inputs: int, outputs: int, grid: int = 8, low: float = -2.0, high: float = 2.0
    ) -> None:
        super().__init__()
        self.register_buffer("centres", torch.linspace(low, high, grid))
        self.spacing = (high - low) / (grid - 1)
        self.spline = nn.Linear(inputs * grid, outputs)
        self.base = nn.Linear(inputs, outputs, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        bumps = torch.exp(-(((x[..., None] - self.centres) / self.spacing) ** 2))
        return self.spline(bumps.flatten(-2)) + self.base(F.silu(x))


class SpotLocalisation(_Tabular):
    """Object localisation by coordinate regression through a soft-argmax: 16 × 16 images hold one
    plus sign (a pixel and its four neighbours) among three distractors (a plus with one arm
    missing) at random places, all of brightness 1, in noise of 0.4. Three 3 × 3 convolutions (16,
    16, 1 channels) give a heat map, its softmax over the 256 pixels weights the pixel
    coordinates, and the expected position is fitted to the plus's centre by MSE. Metric the val
    mean distance in pixels between predicted and true centres over 1,000 fixed images (6,000 to
    train on). A fresh workload of the twenty-third batch (see ``ViTDigits``)."""

    metric = "val_distance"
    side, distractors = 16, 3

    def __init__(self) -> None:
        rng = np.random.default_rng(521)
        count = 7000
        images = rng.normal(0.0, 0.4, (count, self.side, self.side))
        centres = rng.integers(1, self.side - 1, (count, 1 + self.distractors, 2))
        arms = np.array([[0, 0], [-1, 0], [1, 0], [0, -1], [0, 1]])
        rows = np.arange(count)
        for k in range(1 + self.distractors):
            missing = rng.integers(1, 5, count) if k else np.full(count, -1)
            for a, (dy, dx) in enumerate(arms):
                on = missing != a
                images[rows[on], centres[on, k, 0] + dy, centres[on, k, 1] + dx] = 1.0
        target = centres[:, 0].astype(np.float32)
        super().__init__(images[:6000, None], target[:6000], images[6000:, None], target[6000:])

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        images, centres = batch
        return F.mse_loss(model(images).float(), centres)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        distance = torch.linalg.vector_norm(model(self.x_val).float() - self.y_val, dim=-1)
        return {"val_distance": distance.mean().item()}

    def build_model(self) -> nn.Module:
        return _SoftArgmax(self.side)


class _SoftArgmax(nn.Module):
    def __init__(self, side: int, width: int = 16) -> None:
        super().__init__()
        self.heat = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1), nn.ReLU(), nn.Conv2d(width, width, 3, padding=1), nn.ReLU(),
            nn.Conv2d(width, 1, 3, padding=1),
        )  # fmt: skip
        place = torch.arange(side, dtype=torch.float32)
        self.register_buffer(
            "coordinates", torch.stack(torch.meshgrid(place, place, indexing="ij"), -1).view(-1, 2)
        )

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        weights = torch.softmax(self.heat(images).flatten(1).float(), dim=-1)
        return weights @ self.coordinates


class GraphFamilies(_Classifier):
    """Graph classification with a graph isomorphism network (Xu et al. 2019): which of four
    random-graph families a 16-node graph comes from, all with about 30 edges (Erdős-Rényi
    p = 0.25; Barabási-Albert, two edges per new node; Watts-Strogatz ring of degree 4 with 20%
    of edges rewired; two blocks of 8 with p = 0.45 inside and 0.07 across). Every node starts
    with the same feature, so the structure is all there is; three GIN layers (linear, LayerNorm,
    ReLU, linear, ReLU, width 32, on ``(1 + ε) h + Σ neighbours``), the mean over the nodes of
    each layer's output concatenated, and a linear head. Degrees alone do not tell Erdős-Rényi
    from two blocks, so the accuracy saturates well below 1. Metric the val accuracy over 1,000
    fixed graphs (6,000 to train on). A fresh workload of the twenty-third batch (see
    ``ViTDigits``)."""

    metric = "accuracy"
    nodes = 16

    def __init__(self) -> None:
        rng = np.random.default_rng(523)
        labels = rng.integers(0, 4, 7000)
        graphs = np.stack([self._graph(int(k), rng) for k in labels]).astype(np.float32)
        super().__init__(graphs[:6000], labels[:6000], graphs[6000:], labels[6000:])

    def _graph(self, family: int, rng: np.random.Generator) -> np.ndarray:
        n = self.nodes
        if family == 0:  # Erdős-Rényi
            upper = np.triu(rng.random((n, n)) < 0.25, k=1)
        elif family == 1:  # Barabási-Albert from a triangle, two edges a node
            upper = np.zeros((n, n), dtype=bool)
            upper[0, 1] = upper[0, 2] = upper[1, 2] = True
            for new in range(3, n):
                degree = (upper | upper.T)[:new].sum(1)
                for old in rng.choice(new, 2, replace=False, p=degree / degree.sum()):
                    upper[old, new] = True
        elif family == 2:  # Watts-Strogatz
            upper = np.zeros((n, n), dtype=bool)
            for i in range(n):
                for step in (1, 2):
                    j = (i + step) % n
                    if rng.random() < 0.2:
                        free = [k for k in range(n) if k != i and not (upper[min(i, k), max(i, k)])]
                        j = int(rng.choice(free))
                    upper[min(i, j), max(i, j)] = True
        else:  # two blocks
            block = np.arange(n) < n // 2
            same = block[:, None] == block[None, :]
            upper = np.triu(rng.random((n, n)) < np.where(same, 0.45, 0.07), k=1)
        order = rng.permutation(n)
        return (upper | upper.T)[order][:, order]

    def build_model(self) -> nn.Module:
        return _GIN(32, 3, 4)


class _GIN(nn.Module):
    def __init__(self, width: int, layers: int, classes: int) -> None:
        super().__init__()
        self.eps = nn.Parameter(torch.zeros(layers))
        self.layers = nn.ModuleList(
            nn.Sequential(
                nn.Linear(1 if i == 0 else width, width),
                nn.LayerNorm(width),
                nn.ReLU(),
                nn.Linear(width, width),
                nn.ReLU(),
            )
            for i in range(layers)
        )
        self.head = nn.Linear(width * layers, classes)

    def forward(self, adjacency: torch.Tensor) -> torch.Tensor:
        h = torch.ones(*adjacency.shape[:2], 1, dtype=adjacency.dtype)
        pooled = []
        for eps, layer in zip(self.eps, self.layers, strict=True):
            h = layer((1 + eps) * h + adjacency @ h)
            pooled.append(h.mean(1))
        return self.head(torch.cat(pooled, dim=-1))


_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen"
).split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
NUMBER_WORDS = ("<pad>", "<bos>", "<eos>", *_ONES, *_TENS, "hundred", "thousand")


def _number_words(n: int) -> list[str]:
    """``n`` (0 ≤ n < 10⁶) in English words without "and" or hyphens: 40,512 is "forty thousand
    five hundred twelve"."""

    def below_thousand(k: int) -> list[str]:
        words = [_ONES[k // 100], "hundred"] if k >= 100 else []
        k %= 100
        if k >= 20:
            words.append(_TENS[k // 10 - 2])
            k %= 10
        return words + ([_ONES[k]] if k else [])

    if n == 0:
        return ["zero"]
    return (below_thousand(n // 1000) + ["thousand"] if n >= 1000 else []) + below_thousand(n % 1000)


class NumberWords(_Tabular):
    """Sequence-to-sequence translation of numbers into words with a GRU encoder-decoder (Cho et
    al. 2014, no attention): the six digits of a number below a million (zero-padded) are read
    by a GRU (width 64) whose last state starts a decoder GRU (width 64) that writes the number
    in English words ("forty thousand five hundred twelve", up to 9 words of a vocabulary of 30,
    then an end token), trained by teacher forcing on the cross-entropy per word. The decoder
    must count places it cannot see and drop what is zero. Metric the val exact-match accuracy of
    greedy decoding over 1,000 fixed numbers (8,000 others to train on). A fresh workload of the
    twenty-fourth batch."""

    metric = "val_exact"
    places, steps = 6, 11  # the target holds <bos>, up to 9 words and <eos>, padded

    def __init__(self) -> None:
        rng = np.random.default_rng(547)
        numbers = rng.choice(10**self.places, 9000, replace=False)
        digits = (numbers[:, None] // 10 ** np.arange(self.places - 1, -1, -1)) % 10
        index = {word: i for i, word in enumerate(NUMBER_WORDS)}
        targets = np.zeros((len(numbers), self.steps), dtype=np.int64)
        for row, n in enumerate(numbers):
            words = [1, *(index[w] for w in _number_words(int(n))), 2]
            targets[row, : len(words)] = words
        super().__init__(digits[:8000], targets[:8000], digits[8000:], targets[8000:])

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        digits, targets = batch
        logits = model(digits, targets[:, :-1]).float()
        return F.cross_entropy(
            logits.reshape(-1, len(NUMBER_WORDS)), targets[:, 1:].reshape(-1), ignore_index=0
        )

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        written = model.greedy(self.x_val, self.steps - 1)
        truth = self.y_val[:, 1:]
        right = (written == truth) | (truth == 0)  # after <eos> nothing is scored
        return {
            "val_exact": right.all(-1).float().mean().item(),
            "val_word_error": 1.0
            - ((written == truth) & (truth != 0)).sum().item() / (truth != 0).sum().item(),
        }

    def build_model(self) -> nn.Module:
        return _Seq2Seq(10, len(NUMBER_WORDS), 64)


class _Seq2Seq(nn.Module):
    def __init__(self, sources: int, targets: int, width: int) -> None:
        super().__init__()
        self.source = nn.Embedding(sources, 16)
        self.target = nn.Embedding(targets, 32)
        self.encoder = nn.GRU(16, width, batch_first=True)
        self.decoder = nn.GRU(32, width, batch_first=True)
        self.head = nn.Linear(width, targets)

    def forward(self, source: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        _, state = self.encoder(self.source(source.long()))
        return self.head(self.decoder(self.target(target), state)[0])

    def greedy(self, source: torch.Tensor, steps: int) -> torch.Tensor:
        _, state = self.encoder(self.source(source.long()))
        token = torch.ones(len(source), 1, dtype=torch.long)  # <bos>
        written = []
        for _ in range(steps):
            out, state = self.decoder(self.target(token), state)
            token = self.head(out).argmax(-1)
            written.append(token)
        return torch.cat(written, dim=1)


class StaircaseBoolean(_Regressor):
    """A staircase function of Boolean inputs (Abbe et al. 2022), learned by an MLP 24-128-128-1:
    ``x₁ + x₁x₂ + x₁x₂x₃ + x₁x₂x₃x₄ + x₁x₂x₃x₄x₅`` on 24 random ±1 bits. Each monomial is one bit
    away from the one before, so gradient descent picks them up one after the other, each a
    plateau then a drop of the loss by 1 (the terms are orthogonal, the target's variance 5).
    Metric the val MSE over 1,000 fixed points (8,000 to train on). A fresh workload of the
    twenty-fourth batch (see ``NumberWords``)."""

    metric = "val_mse"
    bits, degree = 24, 5

    def __init__(self) -> None:
        rng = np.random.default_rng(557)
        x = rng.choice([-1.0, 1.0], (9000, self.bits))
        y = np.cumprod(x[:, : self.degree], axis=1).sum(1)
        super().__init__(x[:8000], y[:8000], x[8000:], y[8000:])

    def build_model(self) -> nn.Module:
        return _mlp(self.bits, [128, 128], 1)


class FocalLongTail(_Classifier):
    """Long-tailed classification trained with the focal loss (Lin et al. 2017, γ = 2) and scored
    on every class alike: six classes of scikit-learn's ``make_classification`` (20 features, 6
    informative, one cluster a class, 2% flipped labels) with shares 50, 25, 12, 7, 4 and 2%, an
    MLP 20-64-64-6. Metric the val balanced accuracy (the mean of the per-class recalls, 1/6 for
    any constant guess) over 2,400 points (5,600 to train on, about 110 of the rarest class).
    A fresh workload of the twenty-fourth batch (see ``NumberWords``)."""

    metric = "val_balanced_accuracy"
    classes, gamma = 6, 2.0

    def __init__(self) -> None:
        super().__init__(
            *_standardised_classification(
                n_samples=8000, n_features=20, n_informative=6, n_redundant=2, n_classes=self.classes,
                n_clusters_per_class=1, weights=[0.5, 0.25, 0.12, 0.07, 0.04, 0.02], flip_y=0.02,
                class_sep=1.0, random_state=563,
            )
        )  # fmt: skip

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, labels = batch
        log_p = F.log_softmax(model(inputs).float(), dim=-1).gather(1, labels[:, None]).squeeze(1)
        return (-((1.0 - log_p.exp()) ** self.gamma) * log_p).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        out = super().evaluate(model)
        predicted = model(self.x_val).float().argmax(-1)
        recalls = [(predicted[self.y_val == c] == c).float().mean().item() for c in range(self.classes)]
        out["val_balanced_accuracy"] = sum(recalls) / self.classes
        return out

    def build_model(self) -> nn.Module:
        return _mlp(20, [64, 64], self.classes)


class SparseGPRegression(_Tabular):
    """A sparse variational Gaussian process (SVGP, Hensman et al. 2013) trained on minibatches:
    32 inducing points (started at training inputs) in the 3 input dimensions, an RBF kernel with
    one lengthscale per dimension and an output scale, a Gaussian likelihood with learned noise,
    and a whitened Gaussian posterior over the inducing values (mean and Cholesky factor); the
    loss is the negative ELBO per point (expected log-likelihood of the batch, KL over the training
    set's size). The target ``sin(2 x₁) cos(x₂) + 0.3 x₃²`` on uniform inputs in [−2, 2], with
    noise of 0.1, standardised. Metric the val Gaussian negative log-likelihood of the predictive
    distribution per point over 1,000 fixed points (4,000 to train on). A fresh workload of the
    twenty-fourth batch (see ``NumberWords``)."""

    metric = "val_nll"
    inducing = 32

    def __init__(self) -> None:
        rng = np.random.default_rng(569)
        x = rng.uniform(-2.0, 2.0, (5000, 3))
        y = np.sin(2 * x[:, 0]) * np.cos(x[:, 1]) + 0.3 * x[:, 2] ** 2 + rng.normal(0.0, 0.1, len(x))
        y = (y - y[:4000].mean()) / y[:4000].std()
        super().__init__(x[:4000], y[:4000], x[4000:], y[4000:])

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, targets = batch
        mean, variance = model(inputs)
        noise = model.log_noise.exp()
        expected = 0.5 * (math.log(2 * math.pi) + model.log_noise) + ((targets - mean) ** 2 + variance) / (
            2 * noise
        )
        return expected.mean() + model.kl() / len(self.x_train)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        mean, variance = model(self.x_val)
        predictive = variance + model.log_noise.exp()
        nll = 0.5 * (torch.log(2 * math.pi * predictive) + (self.y_val - mean) ** 2 / predictive)
        return {"val_nll": nll.mean().item(), "val_mse": F.mse_loss(mean, self.y_val).item()}

    def build_model(self) -> nn.Module:
        return _SVGP(self.x_train[: self.inducing].clone())


class _SVGP(nn.Module):
    jitter = 1e-3

    def __init__(self, inducing: torch.Tensor) -> None:
        super().__init__()
        count, dims = inducing.shape
        self.inducing = nn.Parameter(inducing)
        self.log_lengthscale = nn.Parameter(torch.zeros(dims))
        self.log_scale = nn.Parameter(torch.zeros(()))
        self.log_noise = nn.Parameter(torch.tensor(math.log(0.5)))
        self.mean = nn.Parameter(torch.zeros(count))
        self.factor = nn.Parameter(torch.eye(count))  # its lower triangle is the posterior's Cholesky factor

    def kernel(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        scale = self.log_lengthscale.exp()
        return self.log_scale.exp() * torch.exp(-0.5 * torch.cdist(a / scale, b / scale) ** 2)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        count = len(self.inducing)
        k_uu = self.kernel(self.inducing, self.inducing) + self.jitter * torch.eye(count)
        chol, _ = torch.linalg.cholesky_ex(k_uu)
        a = torch.linalg.solve_triangular(chol, self.kernel(self.inducing, x), upper=False)
        factor = torch.tril(self.factor)
        mean = a.T @ self.mean
        variance = self.log_scale.exp() - (a**2).sum(0) + ((factor.T @ a) ** 2).sum(0)
        return mean, variance.clamp_min(1e-6)

    def kl(self) -> torch.Tensor:
        factor = torch.tril(self.factor)
        diagonal = torch.diagonal(factor)
        trace = (factor**2).sum()
        return 0.5 * (trace + (self.mean**2).sum() - len(self.mean) - torch.log(diagonal**2 + 1e-12).sum())


class ConsistencyDigits(_Classifier):
    """Semi-supervised classification with a Π-model (Laine & Aila 2017): sklearn's 8×8 digits
    with the labels of only 10 images a class kept (100 of 1,257); each micro-batch is half
    labelled images and half images of the whole training split without their labels. An MLP
    64-128-128-10 with dropout 0.2 sees every image twice, each time with pixel noise of 0.15 and
    its own dropout; the loss is the cross-entropy on the labelled half plus 5 × the squared
    difference of the two views' softmax outputs on the unlabelled half. Metric the val accuracy
    over 540 held-out images. A fresh workload of the twenty-fifth batch."""

    metric = "accuracy"
    per_class, noise, weight = 10, 0.15, 5.0

    def __init__(self) -> None:
        x_train, y_train, x_val, y_val = _digits_split()
        rng = np.random.default_rng(571)
        self.labelled = torch.tensor(
            np.concatenate(
                [rng.choice(np.flatnonzero(y_train == c), self.per_class, replace=False) for c in range(10)]
            )
        )
        super().__init__(x_train, y_train, x_val, y_val)

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        half = max(1, micro_batch_size // 2)
        while True:
            labelled = self.labelled[torch.randint(0, len(self.labelled), (half,), generator=generator)]
            unlabelled = torch.randint(0, len(self.x_train), (micro_batch_size - half,), generator=generator)
            labels = torch.cat([self.y_train[labelled], torch.full((len(unlabelled),), -1)])
            yield self.x_train[torch.cat([labelled, unlabelled])], labels

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        images, labels = batch
        views = [model(images + self.noise * torch.randn_like(images)).float() for _ in range(2)]
        known = labels >= 0
        supervised = F.cross_entropy(views[0][known], labels[known])
        p, q = (torch.softmax(v[~known], dim=-1) for v in views)
        return supervised + self.weight * ((p - q) ** 2).sum(-1).mean()

    def build_model(self) -> nn.Module:
        return nn.Sequential(
            nn.Linear(64, 128), nn.ReLU(), nn.Dropout(0.2), nn.Linear(128, 128), nn.ReLU(), nn.Dropout(0.2),
            nn.Linear(128, 10),
        )  # fmt: skip


class SuperResolutionDigits(_Tabular):
    """Single-image super-resolution by a sub-pixel convolution (Shi et al. 2016): sklearn's 8×8
    digits (pixels in [0, 1]) averaged down to 4 × 4 and restored; three 3 × 3 convolutions (32,
    32, 4 channels) on the small image, the 4 output channels rearranged into 2 × 2 blocks
    (PixelShuffle) and added to the small image enlarged by repetition, trained by MSE. Metric the
    val PSNR in dB of the restored 8 × 8 images over 360 held-out digits (1,437 to train on;
    the enlarged small images alone score about 13 dB). A fresh workload of the twenty-fifth
    batch (see ``ConsistencyDigits``)."""

    metric = "val_psnr"

    def __init__(self) -> None:
        from sklearn.datasets import load_digits

        x, y = load_digits(return_X_y=True)
        images = (x / 16.0).reshape(-1, 1, 8, 8)
        small = images.reshape(-1, 1, 4, 2, 4, 2).mean(axis=(3, 5))
        small_train, _, small_val, _ = _split(small, y, 0.2, True)
        images_train, _, images_val, _ = _split(images, y, 0.2, True)
        super().__init__(small_train, images_train, small_val, images_val)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        small, images = batch
        return F.mse_loss(model(small).float(), images)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        mse = F.mse_loss(model(self.x_val).float(), self.y_val).item()
        return {"val_psnr": 10.0 * math.log10(1.0 / max(mse, 1e-12)), "val_mse": mse}

    def build_model(self) -> nn.Module:
        return _SubPixel(32)


class _SubPixel(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1), nn.ReLU(), nn.Conv2d(width, width, 3, padding=1), nn.ReLU(),
            nn.Conv2d(width, 4, 3, padding=1), nn.PixelShuffle(2),
        )  # fmt: skip

    def forward(self, small: torch.Tensor) -> torch.Tensor:
        return self.body(small) + F.interpolate(small, scale_factor=2, mode="nearest")


LISTOPS_TOKENS = ("<pad>", *"0123456789", "[MAX", "[MIN", "[SM", "]")


def _listops(depth: int, rng: np.random.Generator) -> tuple[list[int], int]:
    """A random ListOps expression (Nangia & Bowman 2018) as token ids and its value: an operator
    (MAX, MIN, or SM the sum mod 10) over 2-4 arguments, each a digit or, ``depth`` allowing, with
    probability 0.35 an expression itself."""
    op = int(rng.integers(0, 3))
    tokens, values = [11 + op], []
    for _ in range(int(rng.integers(2, 5))):
        if depth > 1 and rng.random() < 0.35:
            inner, value = _listops(depth - 1, rng)
            tokens += inner
        else:
            value = int(rng.integers(0, 10))
            tokens.append(1 + value)
        values.append(value)
    tokens.append(14)
    return tokens, (max(values), min(values), sum(values) % 10)[op]


class ListOpsLSTM(_Classifier):
    """Nested list operations (ListOps, Nangia & Bowman 2018) read by an LSTM: expressions such as
    ``[MAX 3 [SM 4 9 ] [MIN 7 2 5 ] ]`` of up to three levels (MAX, MIN and SM, the sum mod 10, over
    2-4 arguments), at most 40 tokens (13 on average), left-padded; an embedding of 32, an LSTM
    of width 64 and a linear head on its last state name the value (10 classes, the commonest
    14%). The answer needs the inner values kept while the outer operator runs. Metric the val
    error over 1,000 fixed expressions (8,000 to train on). A fresh workload of the twenty-fifth
    batch (see ``ConsistencyDigits``)."""

    metric = "val_error"
    length = 40

    def __init__(self) -> None:
        rng = np.random.default_rng(577)
        rows, values = [], []
        while len(rows) < 9000:
            tokens, value = _listops(3, rng)
            if len(tokens) <= self.length:
                rows.append([0] * (self.length - len(tokens)) + tokens)
                values.append(value)
        x, y = np.array(rows), np.array(values)
        super().__init__(x[:8000], y[:8000], x[8000:], y[8000:])

    def build_model(self) -> nn.Module:
        return _LastStateLSTM(len(LISTOPS_TOKENS), 32, 64, 10)


class _LastStateLSTM(nn.Module):
    def __init__(self, tokens: int, embedding: int, width: int, classes: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(tokens, embedding)
        self.lstm = nn.LSTM(embedding, width, batch_first=True)
        self.head = nn.Linear(width, classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.lstm(self.embed(tokens.long()))[0][:, -1])


class SpikingDigits(_Classifier):
    """A spiking neural network trained through surrogate gradients (Neftci et al. 2019): sklearn's
    8×8 digits fed as a constant input current for 12 time steps to 128 leaky integrate-and-fire
    neurons (leak 0.85, threshold 1, reset by subtraction), whose spikes drive 10 leaky output
    neurons that do not spike; the logits are the output potentials averaged over time. The
    spike's step function is differentiated as a fast sigmoid (slope 5), so gradients reach the
    weights only near the threshold. Metric the val accuracy over 540 held-out images (1,257 to
    train on). A fresh workload of the twenty-fifth batch (see ``ConsistencyDigits``)."""

    metric = "accuracy"

    def __init__(self) -> None:
        super().__init__(*_digits_split())

    def build_model(self) -> nn.Module:
        return _SpikingMLP(64, 128, 10)


class _Spike(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, potential: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(potential)
        return (potential > 0).to(potential.dtype)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        (potential,) = ctx.saved_tensors
        return grad / (1.0 + 5.0 * potential.abs()) ** 2


class _SpikingMLP(nn.Module):
    steps, leak = 12, 0.85

    def __init__(self, inputs: int, width: int, classes: int) -> None:
        super().__init__()
        self.hidden = nn.Linear(inputs, width)
        self.out = nn.Linear(width, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        current = self.hidden(x)
        potential = torch.zeros_like(current)
        output = torch.zeros(len(x), self.out.out_features, dtype=current.dtype)
        total = torch.zeros_like(output)
        for _ in range(self.steps):
            potential = self.leak * potential + current
            spikes = _Spike.apply(potential - 1.0)
            potential = potential - spikes
            output = self.leak * output + self.out(spikes)
            total = total + output
        return total / self.steps


class CapsuleDigits(_Tabular):
    """A capsule network with dynamic routing by agreement (Sabour et al. 2017) on sklearn's 8×8
    digits: a 3 × 3 convolution (32 channels) and a 3 × 3 convolution to 8 types of 6-wide
    primary capsules (128 on the 4 × 4 grid, squashed), each predicting every one of 10 class
    capsules (8 wide) through its own 8 × 6 matrix; three rounds of routing by agreement weight
    the predictions, and a class capsule's length is its score. Trained by the margin loss
    (present class above 0.9, absent ones below 0.1, weight 0.5), no reconstruction decoder.
    Metric the val margin loss over 540 held-out images (1,257 to train on). A fresh workload of
    the twenty-sixth batch."""

    metric = "val_margin"

    def __init__(self) -> None:
        super().__init__(*_digits_split())

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        images, labels = batch
        return _margin_loss(model(images).float(), labels)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        lengths = model(self.x_val).float()
        accuracy = (lengths.argmax(-1) == self.y_val).float().mean().item()
        return {"val_margin": _margin_loss(lengths, self.y_val).item(), "accuracy": accuracy}

    def build_model(self) -> nn.Module:
        return _CapsNet()


def _margin_loss(lengths: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    present = F.one_hot(labels, lengths.shape[-1]).to(lengths.dtype)
    loss = present * F.relu(0.9 - lengths) ** 2 + 0.5 * (1.0 - present) * F.relu(lengths - 0.1) ** 2
    return loss.sum(-1).mean()


def _squash(s: torch.Tensor) -> torch.Tensor:
    norm2 = (s**2).sum(-1, keepdim=True)
    return norm2 / (1.0 + norm2) * s / torch.sqrt(norm2 + 1e-8)


class _CapsNet(nn.Module):
    types, primary, classes, width, rounds = 8, 6, 10, 8, 3

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 32, 3)
        self.caps = nn.Conv2d(32, self.types * self.primary, 3)
        count = self.types * 16
        self.weight = nn.Parameter(0.1 * torch.randn(count, self.classes, self.width, self.primary))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.caps(F.relu(self.conv(x.view(-1, 1, 8, 8))))  # (B, types × primary, 4, 4)
        h = h.view(len(x), self.types, self.primary, 16).transpose(2, 3)  # a capsule per type and place
        u = _squash(h.reshape(len(x), -1, self.primary))
        votes = torch.einsum("ncwp,bnp->bncw", self.weight, u)  # each primary's vote for each class
        logits = torch.zeros(votes.shape[:3], dtype=votes.dtype)
        for round_ in range(self.rounds):
            last = round_ == self.rounds - 1
            coupling = (logits - logits.amax(2, keepdim=True)).exp()  # softmax over the classes, by hand:
            coupling = coupling / coupling.sum(2, keepdim=True)  # torch's is slow over 10 at a time
            v = _squash(torch.einsum("bnc,bncw->bcw", coupling, votes if last else votes.detach()))
            if not last:
                logits = logits + torch.einsum("bncw,bcw->bnc", votes.detach(), v)
        return torch.sqrt((v**2).sum(-1) + 1e-8)


class HopfieldRecall(_Tabular):
    """Associative memory with a modern Hopfield layer (Ramsauer et al. 2021): 100 random ±1
    patterns of 128 bits, never shown clean as inputs, are to be recalled from cues with 25% of
    their bits flipped. The layer's only weights are 128 stored patterns and a learned inverse
    temperature β: the state (first the cue) is replaced by the stored patterns mixed by the
    softmax of β × their dot products with it over √128, twice in a row; trained by the MSE of the
    state to the clean pattern. The state only ever mixes stored patterns, so the cue cannot be
    passed through: the patterns must be learned into the memory. Metric the val overlap, the
    mean of sign(state) × pattern over bits (0 for a random guess, 0.5 for the cue itself, 1 for
    perfect recall), over 1,000 fixed cues (8,000 to train on). A fresh workload of the
    twenty-sixth batch (see ``CapsuleDigits``)."""

    metric = "val_overlap"
    patterns, bits, flip, slots = 100, 128, 0.25, 128

    def __init__(self) -> None:
        rng = np.random.default_rng(587)
        memories = rng.choice([-1.0, 1.0], size=(self.patterns, self.bits)).astype(np.float32)
        which = rng.integers(0, self.patterns, 9000)
        cues = np.where(rng.random((9000, self.bits)) < self.flip, -memories[which], memories[which])
        super().__init__(cues[:8000], memories[which[:8000]], cues[8000:], memories[which[8000:]])

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        cues, patterns = batch
        return F.mse_loss(model(cues).float(), patterns)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        state = model(self.x_val).float()
        return {
            "val_overlap": (torch.sign(state) * self.y_val).mean().item(),
            "val_mse": F.mse_loss(state, self.y_val).item(),
        }

    def build_model(self) -> nn.Module:
        return _HopfieldMemory(self.bits, self.slots)


class _HopfieldMemory(nn.Module):
    updates = 2

    def __init__(self, bits: int, slots: int) -> None:
        super().__init__()
        self.stored = nn.Parameter(torch.randn(slots, bits))
        self.log_beta = nn.Parameter(torch.tensor(0.0))
        self.scale = 1.0 / math.sqrt(bits)

    def forward(self, state: torch.Tensor) -> torch.Tensor:
        for _ in range(self.updates):
            scores = self.log_beta.exp() * self.scale * state @ self.stored.T
            state = torch.softmax(scores, dim=-1) @ self.stored
        return state


class KoopmanDuffing(_Tabular):
    """A Koopman autoencoder (Lusch et al. 2018): an encoder MLP 2-32-32-8 lifts a damped Duffing
    oscillator's state (x'' = x − x³ − 0.2 x', two wells) to 8 latent coordinates that one learned
    8 × 8 matrix advances linearly by each step of 0.25; a decoder MLP 8-32-32-2 reads the states
    back. Trained by the MSE of the 16 states ahead decoded from powers of the matrix, plus the
    reconstruction of the start. Metric the val MSE of the 16-step forecasts over the targets'
    variance on 1,000 held-out starts (4,000 to train on, uniform in [−2, 2]²). A fresh workload
    of the twenty-sixth batch (see ``CapsuleDigits``)."""

    metric = "val_mse"
    steps, dt, latent = 16, 0.25, 8

    def __init__(self) -> None:
        start = np.random.default_rng(593).uniform(-2.0, 2.0, (5000, 2))
        state, path = torch.tensor(start), []
        for _ in range(self.steps):
            for _ in range(4):
                state = _rk4(_duffing, state, self.dt / 4)
            path.append(state)
        y = torch.stack(path, 1).numpy().astype(np.float32)
        super().__init__(start[:4000], y[:4000], start[4000:], y[4000:])
        self.variance = self.y_val.var(unbiased=False).item()

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        start, path = batch
        reconstruction = model.decoder(model.encoder(start)).float()
        return F.mse_loss(model(start).float(), path) + F.mse_loss(reconstruction, start)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        return {"val_mse": F.mse_loss(model(self.x_val).float(), self.y_val).item() / self.variance}

    def build_model(self) -> nn.Module:
        return _Koopman(2, 32, self.latent, self.steps)


def _duffing(z: torch.Tensor) -> torch.Tensor:
    x, v = z[:, 0], z[:, 1]
    return torch.stack([v, x - x**3 - 0.2 * v], 1)


def _rk4(field: Any, z: torch.Tensor, h: float) -> torch.Tensor:
    k1 = field(z)
    k2 = field(z + 0.5 * h * k1)
    k3 = field(z + 0.5 * h * k2)
    k4 = field(z + h * k3)
    return z + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)


class _Koopman(nn.Module):
    def __init__(self, dims: int, width: int, latent: int, steps: int) -> None:
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Linear(dims, width), nn.Tanh(), nn.Linear(width, width), nn.Tanh(), nn.Linear(width, latent)
        )
        self.decoder = nn.Sequential(
            nn.Linear(latent, width), nn.Tanh(), nn.Linear(width, width), nn.Tanh(), nn.Linear(width, dims)
        )
        self.advance = nn.Linear(latent, latent, bias=False)
        nn.init.eye_(self.advance.weight)
        self.steps = steps

    def forward(self, start: torch.Tensor) -> torch.Tensor:
        z, states = self.encoder(start), []
        for _ in range(self.steps):
            z = self.advance(z)
            states.append(z)
        return self.decoder(torch.stack(states, 1))


class SpatialTransformerDigits(_Classifier):
    """A spatial transformer network (Jaderberg et al. 2015) on sklearn's 8×8 digits placed at a
    random offset, rotation (±40°) and scale (0.8-1.2) on a 16 × 16 canvas with pixel noise 0.05,
    a fresh placement each time a training image is drawn: a localisation MLP 256-32-6 gives an
    affine map (started at the identity of a centred half-size crop), the canvas is resampled
    through it into an 8 × 8 glimpse (bilinear grid sampling) and an MLP 64-64-10 names the digit;
    both are trained end to end by the cross-entropy. Metric the val accuracy over 540 held-out
    images placed once (1,257 to train on). A fresh workload of the twenty-sixth batch (see
    ``CapsuleDigits``)."""

    metric = "accuracy"

    def __init__(self) -> None:
        x_train, y_train, x_val, y_val = _digits_split()
        super().__init__(x_train, y_train, x_val, y_val)
        self.x_val = _scatter_digits(self.x_val, torch.Generator().manual_seed(599))

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank + 7)
        for digits, labels in super().train_batches(micro_batch_size, rank, world_size, seed):
            yield _scatter_digits(digits, generator), labels

    def build_model(self) -> nn.Module:
        return _SpatialTransformer()


def _scatter_digits(x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """8×8 digits placed on 16 × 16 canvases, each randomly moved, turned and scaled, plus noise."""
    count = len(x)
    angle = (torch.rand(count, generator=generator) * 80.0 - 40.0) * math.pi / 180
    scale = 0.8 + 0.4 * torch.rand(count, generator=generator)
    shift = torch.rand(count, 2, generator=generator) * 0.9 - 0.45
    # grid_sample maps canvas coordinates to digit coordinates, the inverse of the placement;
    # the digit covers half the canvas at scale 1.
    cos, sin = 2.0 * torch.cos(angle) / scale, 2.0 * torch.sin(angle) / scale
    rotation = torch.stack([torch.stack([cos, -sin], 1), torch.stack([sin, cos], 1)], 1)
    offset = -torch.einsum("nij,nj->ni", rotation, shift)
    theta = torch.cat([rotation, offset[:, :, None]], 2)
    grid = F.affine_grid(theta, [count, 1, 16, 16], align_corners=False)
    canvas = F.grid_sample(x.view(-1, 1, 8, 8), grid, align_corners=False)
    canvas = canvas + 0.05 * torch.randn(canvas.shape, generator=generator)
    return canvas.view(count, 256)


class _SpatialTransformer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.locate = _mlp(256, [32], 6)
        nn.init.zeros_(self.locate[-1].weight)
        with torch.no_grad():
            self.locate[-1].bias.copy_(torch.tensor([0.5, 0.0, 0.0, 0.0, 0.5, 0.0]))
        self.classify = _mlp(64, [64], 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        theta = self.locate(x).view(-1, 2, 3)
        grid = F.affine_grid(theta, [len(x), 1, 8, 8], align_corners=False)
        glimpse = F.grid_sample(x.view(-1, 1, 16, 16), grid, align_corners=False)
        return self.classify(glimpse.view(len(x), 64))


class JigsawSinkhorn(_Tabular):
    """Permutation learning with Sinkhorn normalisation (Mena et al. 2018, Gumbel-Sinkhorn without
    the noise): sklearn's 8×8 digits are cut into 16 pieces of 2 × 2 pixels, shuffled, and the
    network is to put them back. Each piece is embedded by an MLP 4-32-32, the mean of the
    embeddings is joined to each as context, and an MLP 64-32-16 scores the piece against the 16
    places; 10 rounds of Sinkhorn normalisation in log space make the scores a doubly stochastic
    matrix, trained by the negative log of each piece's true place. Evaluation assigns the pieces
    by the Hungarian method; a place counts as right when it gets a piece equal to its own (blank
    pieces are interchangeable). Metric the val placement accuracy over 540 held-out digits
    shuffled once (1,257 to train on, reshuffled at every draw). A fresh workload of the
    twenty-seventh batch."""

    metric = "val_placement"
    pieces = 16

    def __init__(self) -> None:
        x_train, y_train, x_val, y_val = _digits_split()
        super().__init__(_cut_pieces(x_train), y_train, _cut_pieces(x_val), y_val)
        generator = torch.Generator().manual_seed(601)
        self.val_order = torch.argsort(torch.rand(len(self.x_val), self.pieces, generator=generator), 1)

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank + 11)
        for pieces, _ in super().train_batches(micro_batch_size, rank, world_size, seed):
            order = torch.argsort(torch.rand(len(pieces), self.pieces, generator=generator), 1)
            yield torch.gather(pieces, 1, order[:, :, None].expand_as(pieces)), order

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        shuffled, order = batch  # piece i of a shuffled puzzle belongs at place order[i]
        log_assign = model(shuffled).float()
        return -torch.gather(log_assign, 2, order[:, :, None]).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        from scipy.optimize import linear_sum_assignment

        order = self.val_order
        shuffled = torch.gather(self.x_val, 1, order[:, :, None].expand_as(self.x_val))
        log_assign = model(shuffled).float()
        if not torch.isfinite(log_assign).all():
            return {"val_placement": math.nan}
        placed = torch.empty_like(order)
        for n, scores in enumerate(log_assign.numpy()):
            rows, cols = linear_sum_assignment(-scores)
            placed[n, torch.as_tensor(rows)] = torch.as_tensor(cols, dtype=placed.dtype)
        # The puzzle as rebuilt: the piece put at each place, against the piece that belongs there.
        rebuilt = torch.zeros_like(self.x_val).scatter_(1, placed[:, :, None].expand_as(shuffled), shuffled)
        right = (rebuilt - self.x_val).abs().amax(-1) < 1e-6
        exact = (placed == order).float().mean().item()
        return {"val_placement": right.float().mean().item(), "val_exact_place": exact}

    def build_model(self) -> nn.Module:
        return _SinkhornJigsaw(4, 32, self.pieces)


def _cut_pieces(x: np.ndarray) -> np.ndarray:
    """8×8 images (flattened) cut into 16 pieces of 2 × 2 pixels, in row-major place order."""
    return x.reshape(-1, 4, 2, 4, 2).transpose(0, 1, 3, 2, 4).reshape(-1, 16, 4)


class _SinkhornJigsaw(nn.Module):
    rounds = 10

    def __init__(self, inputs: int, width: int, places: int) -> None:
        super().__init__()
        self.embed = nn.Sequential(nn.Linear(inputs, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())
        self.score = _mlp(2 * width, [width], places)

    def forward(self, pieces: torch.Tensor) -> torch.Tensor:
        h = self.embed(pieces)
        context = h.mean(1, keepdim=True).expand_as(h)
        log_assign = self.score(torch.cat([h, context], -1))
        for _ in range(self.rounds):
            log_assign = log_assign - torch.logsumexp(log_assign, 2, keepdim=True)  # rows: pieces
            log_assign = log_assign - torch.logsumexp(log_assign, 1, keepdim=True)  # columns: places
        return log_assign


class EquilibriumClassifier(_Classifier):
    """A deep equilibrium model (Bai et al. 2019): one tanh layer ``z = tanh(W z + U x + b)``
    applied until it settles, its fixed point read by a linear head. W is a free matrix scaled to
    Frobenius norm 0.9, so the map contracts and the fixed point exists; the forward pass runs 24
    iterations from zero without gradients and 2 more with them (Jacobian-free, "phantom"
    gradients, Fung et al. 2022) instead of solving the implicit backward system. Width 48, on a
    4-class ``make_classification`` problem (16 features, 10 informative, two clusters a class,
    2% flipped labels; 2,800 / 1,200). Metric the val cross-entropy. A fresh workload of the
    twenty-seventh batch (see ``JigsawSinkhorn``)."""

    metric = "val_loss"

    def __init__(self) -> None:
        super().__init__(
            *_standardised_classification(
                n_samples=4000, n_features=16, n_informative=10, n_redundant=2, n_classes=4,
                n_clusters_per_class=2, flip_y=0.02, class_sep=1.0, random_state=607,
            )
        )  # fmt: skip

    def build_model(self) -> nn.Module:
        return _Equilibrium(16, 48, 4)


class _Equilibrium(nn.Module):
    settle, backprop, norm = 24, 2, 0.9

    def __init__(self, inputs: int, width: int, classes: int) -> None:
        super().__init__()
        self.inject = nn.Linear(inputs, width)
        self.weight = nn.Parameter(torch.randn(width, width) / math.sqrt(width))
        self.head = nn.Linear(width, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight = self.norm * self.weight / self.weight.norm()
        injected = self.inject(x)
        z = torch.zeros_like(injected)
        with torch.no_grad():
            for _ in range(self.settle):
                z = torch.tanh(z @ weight.T + injected)
        for _ in range(self.backprop):
            z = torch.tanh(z @ weight.T + injected)
        return self.head(z)


class HermiteSingleIndex(_Regressor):
    """A single-index model of information exponent 3 (Ben Arous et al. 2021): the target is
    He₃(w·x) / √6 = ((w·x)³ − 3 w·x) / √6 of a hidden unit direction w in 32 Gaussian dimensions,
    plus noise of std 0.1, learned by an MLP 32-64-1. The target has no linear or quadratic part
    along w, so the gradient at a random start barely points to it: the loss sits at the target's
    variance (0.89 on the val points) until the first layer finds w, then drops; the smaller the
    LR, the longer the plateau. Metric the val MSE over 1,000 fixed points (8,000 to train on;
    noise floor 0.01). A fresh workload of the twenty-seventh batch (see ``JigsawSinkhorn``)."""

    metric = "val_mse"
    dims = 32

    def __init__(self) -> None:
        rng = np.random.default_rng(613)
        direction = rng.normal(size=self.dims)
        direction /= np.linalg.norm(direction)
        x = rng.normal(size=(9000, self.dims))
        z = x @ direction
        y = (z**3 - 3 * z) / math.sqrt(6) + 0.1 * rng.normal(size=9000)
        super().__init__(x[:8000], y[:8000], x[8000:], y[8000:])

    def build_model(self) -> nn.Module:
        return _mlp(self.dims, [64], 1)


class DeepCCAViews(_Tabular):
    """Deep canonical correlation analysis (Andrew et al. 2013): two views of 16 features each,
    made by different random tanh networks from a shared 4-dim latent plus 4 nuisance latents of
    their own and noise of std 0.1; an MLP 16-32-32-4 per view, trained to maximise the sum of
    squared canonical correlations of the two codes within each micro-batch (covariances with a
    ridge of 1e-3, whitened by Cholesky factors). Metric the mean of the 4 canonical correlations
    of the codes over 1,000 held-out pairs (4,000 to train on): 0.2-0.5 for a random start's
    codes, about 0.9 once the shared latent is found and the nuisances are left out (the noise
    and the saturating views keep it below 1). A fresh workload of the twenty-seventh batch (see
    ``JigsawSinkhorn``)."""

    metric = "val_cca"
    features, shared, nuisance = 16, 4, 4

    def __init__(self) -> None:
        rng = np.random.default_rng(617)
        latent = rng.uniform(-1.5, 1.5, (5000, self.shared))
        views, latents = [], self.shared + self.nuisance
        for _ in range(2):
            own = rng.uniform(-1.5, 1.5, (5000, self.nuisance))
            inner = rng.normal(size=(latents, 32)) / math.sqrt(latents)
            outer = rng.normal(size=(32, self.features)) / math.sqrt(32)
            view = np.tanh(2.0 * np.concatenate([latent, own], 1) @ inner) @ outer
            views.append(view + 0.1 * rng.normal(size=view.shape))
        x = np.concatenate(views, 1)
        x = (x - x[:4000].mean(0)) / x[:4000].std(0)
        super().__init__(x[:4000], np.zeros(4000, np.float32), x[4000:], np.zeros(1000, np.float32))

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        left, right = model(batch[0])
        return -(_whitened_cross(left.float(), right.float(), 1e-3) ** 2).sum()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        left, right = model(self.x_val)
        cross = _whitened_cross(left.double(), right.double(), 1e-6)
        if not torch.isfinite(cross).all():
            return {"val_cca": math.nan}
        return {"val_cca": torch.linalg.svdvals(cross).clamp(0.0, 1.0).mean().item()}

    def build_model(self) -> nn.Module:
        return _TwoViews(self.features, 32, self.shared)


def _whitened_cross(left: torch.Tensor, right: torch.Tensor, ridge: float) -> torch.Tensor:
    """The cross-covariance of two codes whitened on both sides; its singular values are the
    canonical correlations."""
    left, right = left - left.mean(0), right - right.mean(0)
    count, eye = len(left) - 1, torch.eye(left.shape[1], dtype=left.dtype)
    chol_left = torch.linalg.cholesky_ex(left.T @ left / count + ridge * eye).L
    chol_right = torch.linalg.cholesky_ex(right.T @ right / count + ridge * eye).L
    cross = torch.linalg.solve_triangular(chol_left, left.T @ right / count, upper=False)
    return torch.linalg.solve_triangular(chol_right, cross.T, upper=False).T


class _TwoViews(nn.Module):
    def __init__(self, features: int, width: int, code: int) -> None:
        super().__init__()
        self.features = features
        self.left = _mlp(features, [width, width], code)
        self.right = _mlp(features, [width, width], code)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.left(x[:, : self.features]), self.right(x[:, self.features :])


class EchoStateReadout(_Regressor):
    """Reservoir computing (an echo state network, Jaeger 2001) on the NARMA-10 system
    identification task (Atiya and Parlos 2000): a fixed random tanh reservoir of 200 units (10%
    of the recurrent weights set, scaled to spectral radius 0.9) is driven by an i.i.d. input u(t)
    uniform in [0, 0.5] (fed in as 0.1 (4 u - 1)), and only a linear readout of its standardised
    states is trained, by the MSE, to give the system's output y(t + 1) = 0.3 y(t) + 0.05 y(t)
    (y(t) + ... + y(t - 9)) + 1.5 u(t - 9) u(t) + 0.1 (standardised). The problem is convex, but
    the states are so correlated that gradient descent flattens early, near 0.39, well above the
    ridge-regression readout's 0.149: the curve falls fast, then barely moves. Metric the val normalised RMSE (RMSE over the targets' std; 1 for the mean) on
    the 1,000 steps after the 4,000 trained on. Defined in session 46 as the twenty-eighth batch
    of fresh workloads, by a helper told of no check."""

    metric = "val_nrmse"
    units, washout = 200, 200

    def __init__(self) -> None:
        rng = np.random.default_rng(631)
        steps = self.washout + 5000
        u = rng.uniform(0.0, 0.5, steps)
        y = np.zeros(steps)
        for t in range(10, steps):
            y[t] = 0.3 * y[t - 1] + 0.05 * y[t - 1] * y[t - 10 : t].sum() + 1.5 * u[t - 10] * u[t - 1] + 0.1
        weights = rng.normal(size=(self.units, self.units)) * (rng.random((self.units, self.units)) < 0.1)
        weights *= 0.9 / np.abs(np.linalg.eigvals(weights)).max()
        inject, bias = rng.uniform(-1.0, 1.0, self.units), rng.uniform(-0.2, 0.2, self.units)
        state, states = np.zeros(self.units), []
        for value in 0.1 * (4.0 * u - 1.0):
            state = np.tanh(weights @ state + inject * value + bias)
            states.append(state)
        # y[t] depends on the inputs up to u[t - 1]: it is read from the state after u[t - 1].
        x = np.array(states[self.washout - 1 : -1])
        x_train, x_val = _standardise(x[:4000], x[4000:])
        y = y[self.washout :]
        y = ((y - y[:4000].mean()) / y[:4000].std()).astype(np.float32)
        super().__init__(x_train, y[:4000], x_val, y[4000:])

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        metrics = super().evaluate(model)
        return {"val_nrmse": math.sqrt(max(0.0, 1.0 - metrics["val_r2"])), **metrics}

    def build_model(self) -> nn.Module:
        return nn.Linear(self.units, 1)


class RidgeMetaSines(_Tabular):
    """Meta-learning with a differentiable closed-form solver (Bertinetto et al. 2019, R2-D2, on
    the sine tasks of Finn et al. 2017's MAML): each sample is a task ``a sin(x + phase)``
    (a in [0.1, 5], phase in [0, pi], x in [-5, 5]) with 10 support and 10 query points; an MLP
    1-40-40-40 maps x to features, a ridge regression (learned penalty) fitted to the support
    points in closed form gives the task's head, and the MSE on the query points trains the
    features and the penalty through the solve. Metric the val query MSE on 1,000 tasks never
    trained on (8,000 to train on; 4.14 for predicting 0, below 0.01 for the best runs). Defined
    in session 46 as the twenty-eighth batch of fresh workloads, by a helper told of no check."""

    metric = "val_mse"
    shots = 10

    def __init__(self) -> None:
        rng = np.random.default_rng(641)
        amplitude, phase = rng.uniform(0.1, 5.0, (9000, 1)), rng.uniform(0.0, math.pi, (9000, 1))
        x = rng.uniform(-5.0, 5.0, (9000, 2 * self.shots))
        y = (amplitude * np.sin(x + phase)).astype(np.float32)
        super().__init__(x[:8000], y[:8000], x[8000:], y[8000:])

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        x, y = batch
        return F.mse_loss(model(x, y[:, : self.shots]).float(), y[:, self.shots :])

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        prediction = model(self.x_val, self.y_val[:, : self.shots]).float()
        return {"val_mse": F.mse_loss(prediction, self.y_val[:, self.shots :]).item()}

    def build_model(self) -> nn.Module:
        return _RidgeMeta(40, self.shots)


class _RidgeMeta(nn.Module):
    def __init__(self, width: int, shots: int) -> None:
        super().__init__()
        self.features = _mlp(1, [width, width], width)
        self.log_penalty = nn.Parameter(torch.tensor(0.0))
        self.shots = shots

    def forward(self, x: torch.Tensor, support: torch.Tensor) -> torch.Tensor:
        phi = self.features(x[..., None])
        phi = torch.cat([phi, torch.ones_like(phi[..., :1])], -1)
        known, asked = phi[:, : self.shots], phi[:, self.shots :]
        # The ridge head w = S^T (S S^T + lambda I)^-1 y, solved in the 10 x 10 dual of each task.
        gram = known @ known.transpose(1, 2) + self.log_penalty.exp() * torch.eye(self.shots)
        solved, failed = torch.linalg.solve_ex(gram, support[..., None])
        if bool(failed.any()):
            # The features collapsed and the penalty went to 0: a numerical blow-up, which the
            # engine records as diverged through the NaN loss (torch.linalg.solve would raise).
            return asked[..., 0] * math.nan  # still on the graph, so backward runs
        return (asked @ (known.transpose(1, 2) @ solved)).squeeze(-1)


class PrivateDigits(_Classifier):
    """Differentially private SGD (Abadi et al. 2016): an MLP 64-64-10 on sklearn's 8×8 digits
    whose every update is the mean of per-example gradients each clipped to norm 1, plus Gaussian
    noise of std 1 (the noise multiplier times the clip) over the micro-batch size, so the
    smaller the batch the noisier the step, and the LR trades progress against the noise: too
    high an LR lets the noise grow the weights and the val loss climbs again. The per-example
    gradients come from ``torch.func`` (vmap of grad); ``loss`` returns the batch's cross-entropy
    with the private gradient attached. Metric the val cross-entropy over 540 held-out images
    (1,257 to train on). Defined in session 46 as the twenty-eighth batch of fresh
    workloads, by a helper told of no check."""

    metric = "val_loss"
    hidden, clip, noise_multiplier = 64, 1.0, 1.0

    def __init__(self) -> None:
        super().__init__(*_digits_split())
        self.parameter_count = 64 * self.hidden + self.hidden + self.hidden * 10 + 10

    def train_batches(
        self, micro_batch_size: int, rank: int, world_size: int, seed: int
    ) -> Iterator[tuple[torch.Tensor, ...]]:
        """Each batch with its own draw of the Gaussian noise (one value per parameter)."""
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank + 13)
        for images, labels in super().train_batches(micro_batch_size, rank, world_size, seed):
            yield images, labels, torch.randn(self.parameter_count, generator=generator)

    def loss(self, model: nn.Module, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
        images, labels, noise = batch
        params = dict(model.named_parameters())

        def one(weights: dict[str, torch.Tensor], image: torch.Tensor, label: torch.Tensor) -> torch.Tensor:
            return F.cross_entropy(functional_call(model, weights, (image[None],)), label[None])

        detached = {name: p.detach() for name, p in params.items()}
        grads, losses = vmap(grad_and_value(one), in_dims=(None, 0, 0))(detached, images, labels)
        flat = torch.cat([g.reshape(len(images), -1) for g in grads.values()], 1)
        flat = flat * (self.clip / flat.norm(dim=1, keepdim=True).clamp_min(1e-12)).clamp(max=1.0)
        private = (flat.sum(0) + self.noise_multiplier * self.clip * noise) / len(images)
        surrogate = torch.cat([p.reshape(-1) for p in params.values()]) @ private
        return losses.mean() + surrogate - surrogate.detach()

    def build_model(self) -> nn.Module:
        return _mlp(64, [self.hidden], 10)


class HMMSequences(_Tabular):
    """A hidden Markov model fitted by gradient descent on its exact likelihood (the scaled
    forward algorithm, differentiated through): sequences of 24 symbols out of 8 drawn from a
    hidden 6-state HMM that steps round a cycle with probability 0.8 (else as a Dirichlet(1)
    row says) and emits by sparse Dirichlet(0.2) rows; the model has 8 states, softmax-
    parametrised start, transition and emission tables started near uniform, so it first
    matches the symbols' frequencies (a plateau near the unigram entropy, 1.86) and must break
    the symmetry of its states before it finds the hidden dynamics (some runs settle in local
    optima). Metric the val negative log-likelihood per symbol in nats on 1,000 held-out
    sequences (4,000 to train on; 2.08 at the start, 1.44 for the true HMM).
    Defined in session 46 as the twenty-eighth batch of fresh workloads, by a helper told of no
    check."""

    metric = "val_nll"
    states, symbols, length, hidden_states = 8, 8, 24, 6

    def __init__(self) -> None:
        rng = np.random.default_rng(643)
        k = self.hidden_states
        start = rng.dirichlet(np.ones(k))
        transition = 0.2 * rng.dirichlet(np.ones(k), k)
        transition[np.arange(k), np.roll(np.arange(k), -1)] += 0.8  # round a cycle, mostly
        emission = rng.dirichlet(np.full(self.symbols, 0.2), k)
        sequences = np.empty((5000, self.length), np.int64)
        state = rng.choice(k, 5000, p=start)
        for t in range(self.length):
            sequences[:, t] = (rng.random((5000, 1)) > emission[state].cumsum(1)).sum(1)
            state = (rng.random((5000, 1)) > transition[state].cumsum(1)).sum(1)
        sequences = sequences.clip(0, self.symbols - 1).astype(np.float32)
        zeros = np.zeros(5000, np.float32)
        super().__init__(sequences[:4000], zeros[:4000], sequences[4000:], zeros[4000:])

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        return -model(batch[0].long()).mean() / self.length

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        return {"val_nll": -model(self.x_val.long()).mean().item() / self.length}

    def build_model(self) -> nn.Module:
        return _HMM(self.states, self.symbols)


class _HMM(nn.Module):
    def __init__(self, states: int, symbols: int) -> None:
        super().__init__()
        self.start = nn.Parameter(0.1 * torch.randn(states))
        self.transition = nn.Parameter(0.1 * torch.randn(states, states))
        self.emission = nn.Parameter(0.1 * torch.randn(states, symbols))

    def forward(self, sequences: torch.Tensor) -> torch.Tensor:
        """Each sequence's log-likelihood, by the forward algorithm with per-step normalisation."""
        transition = torch.softmax(self.transition, 1)
        emitted = torch.softmax(self.emission, 1).T[sequences]  # (batch, time, state)
        alpha = torch.softmax(self.start, 0) * emitted[:, 0]
        total = alpha.sum(1, keepdim=True)
        log_likelihood = total.log()
        alpha = alpha / total
        for t in range(1, sequences.shape[1]):
            alpha = (alpha @ transition) * emitted[:, t]
            total = alpha.sum(1, keepdim=True)
            log_likelihood = log_likelihood + total.log()
            alpha = alpha / total
        return log_likelihood.squeeze(1)


class ICASources(_Tabular):
    """Independent component analysis by maximum likelihood (Bell and Sejnowski 1995; the
    infomax / maximum-likelihood form of Pham and Garat 1997): 8 independent super-Gaussian
    sources (4 Laplace, 4 sparse: Gaussian bursts present 30% of the time, all of unit variance)
    are mixed by a fixed random 8 × 8 matrix whose singular values run from 3 down to 0.2, and a
    free unmixing matrix W (one linear layer without bias) is trained by the negative
    log-likelihood of the unmixed signals under the density 1 / (pi cosh s), that is
    mean log cosh(W x) − log |det W| / 8 (log |det W| from the singular values, so a singular W
    gives an infinite loss, not an error). Plain gradients are slowed by the ill-conditioned
    mixing (the natural gradient would not be), so the curve falls fast at first and then
    refines slowly; too high an LR jitters, or stalls at a poor separation. Metric the Amari index of
    W A (0 for a perfect separation up to order and scale, about 0.36 for the random start;
    sampling error keeps the best fits near 0.007), with 4,000 mixed samples to train on;
    val_nll on 1,000 more is reported beside it. Defined in session 47 as the twenty-ninth batch
    of fresh workloads, by a helper told of no check."""

    metric = "amari_index"
    sources = 8

    def __init__(self) -> None:
        rng = np.random.default_rng(701)
        half = self.sources // 2
        laplace = rng.laplace(0.0, 1.0 / math.sqrt(2.0), (5000, half))
        sparse = rng.normal(size=(5000, half)) * (rng.random((5000, half)) < 0.3) / math.sqrt(0.3)
        s = np.concatenate([laplace, sparse], 1)
        left, _ = np.linalg.qr(rng.normal(size=(self.sources, self.sources)))
        right, _ = np.linalg.qr(rng.normal(size=(self.sources, self.sources)))
        self.mixing = torch.tensor(left @ np.diag(np.geomspace(3.0, 0.2, self.sources)) @ right.T)
        x = s @ self.mixing.numpy().T
        zeros = np.zeros(5000, np.float32)
        super().__init__(x[:4000], zeros[:4000], x[4000:], zeros[4000:])

    def _nll(self, model: nn.Module, x: torch.Tensor) -> torch.Tensor:
        y = model(x).float()
        log_cosh = y.abs() + F.softplus(-2.0 * y.abs()) - math.log(2.0)
        weight = model.weight.float()
        if not bool(torch.isfinite(weight).all()):
            # A step that blew up: the engine records a NaN loss as diverged (svdvals would raise).
            return log_cosh.mean() * math.nan
        log_det = torch.linalg.svdvals(weight).log().sum()
        return log_cosh.mean() - log_det / self.sources + math.log(math.pi)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        return self._nll(model, batch[0])

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        product = (model.weight.double() @ self.mixing).abs()
        # A blown-up W, or a zero row or column of W A (W singular): no Amari index.
        if not torch.isfinite(product).all() or min(product.amax(0).min(), product.amax(1).min()) == 0:
            return {"amari_index": math.nan}
        n = self.sources
        rows = (product.sum(1) / product.amax(1) - 1.0).sum()
        cols = (product.sum(0) / product.amax(0) - 1.0).sum()
        amari = ((rows + cols) / (2 * n * (n - 1))).item()
        return {"amari_index": amari, "val_nll": self._nll(model, self.x_val).item()}

    def build_model(self) -> nn.Module:
        return nn.Linear(self.sources, self.sources, bias=False)


class GaussianMixtureFit(_Tabular):
    """A Gaussian mixture model fitted by gradient descent on its log-likelihood (no EM): points in
    2-D from 6 Gaussians (random means, elongated and turned covariances, unequal weights),
    standardised, fitted by 8 components with free mixing logits, means and Cholesky factors
    (log-diagonal and off-diagonal part). The components start all alike (means within 0.1 of
    the centre, unit covariances), so they must break their symmetry and split off one by one:
    the curve falls past a single Gaussian's fit, then in shoulders as clusters are found, and
    runs often settle in a local optimum above the best fit (too small an LR stays near one
    Gaussian; too large a one blows up, a NaN or infinite likelihood, recorded as diverged).
    Metric the val negative log-likelihood per point in nats over 1,000 held-out points (4,000
    to train on; 2.71 at the start, 2.50 for one Gaussian, 1.50 for the mixture scikit-learn's
    EM finds). Defined in session 47 as the twenty-ninth batch of fresh workloads, by a helper
    told of no check."""

    metric = "val_nll"
    clusters, components = 6, 8

    def __init__(self) -> None:
        rng = np.random.default_rng(709)
        weights = rng.dirichlet(np.full(self.clusters, 4.0))
        means = rng.uniform(-4.0, 4.0, (self.clusters, 2))
        label = rng.choice(self.clusters, 5000, p=weights)
        angle = rng.uniform(0.0, math.pi, self.clusters)
        turn = np.stack([np.cos(angle), -np.sin(angle), np.sin(angle), np.cos(angle)], 1).reshape(-1, 2, 2)
        spread = turn * rng.uniform(0.15, 1.0, (self.clusters, 1, 2))  # columns scaled
        x = means[label] + np.einsum("nij,nj->ni", spread[label], rng.normal(size=(5000, 2)))
        x = (x - x[:4000].mean(0)) / x[:4000].std()
        zeros = np.zeros(5000, np.float32)
        super().__init__(x[:4000], zeros[:4000], x[4000:], zeros[4000:])

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        return -model(batch[0]).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        return {"val_nll": -model(self.x_val).mean().item()}

    def build_model(self) -> nn.Module:
        return _GaussianMixture(self.components, 2)


class _GaussianMixture(nn.Module):
    def __init__(self, components: int, dims: int) -> None:
        super().__init__()
        self.logits = nn.Parameter(torch.zeros(components))
        self.means = nn.Parameter(0.1 * torch.randn(components, dims))
        self.log_diagonal = nn.Parameter(torch.zeros(components, dims))
        self.off_diagonal = nn.Parameter(torch.zeros(components, dims, dims))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Each point's log-density under the mixture."""
        dims = x.shape[1]
        chol = torch.tril(self.off_diagonal, -1) + torch.diag_embed(self.log_diagonal.exp())
        centred = (x[None] - self.means[:, None]).transpose(1, 2)  # (component, dims, point)
        # A collapsed component (a zero on the diagonal) gives inf, not an error.
        z = torch.linalg.solve_triangular(chol, centred, upper=False)
        log_normal = (
            -0.5 * (z**2).sum(1) - self.log_diagonal.sum(1, keepdim=True) - 0.5 * dims * math.log(2 * math.pi)
        )
        return torch.logsumexp(torch.log_softmax(self.logits, 0)[:, None] + log_normal, 0)


class PendulumControl(_Tabular):
    """Policy optimisation through a differentiable simulator (backpropagation through time over
    the dynamics, as in differentiable-physics control): a torque-limited pendulum (gravity 10,
    unit mass and length, damping 0.1, torque at most 8 so a swing is needed from low starts) is
    simulated for 20 semi-implicit Euler steps of 0.1 s from a start angle uniform over the
    circle and a start speed in [-1, 1]; an MLP 3-32-1 (input cos, sin of the angle from
    upright and the speed; tanh output times the limit) gives the torque, and the mean over the
    steps of 1 − cos(angle) + 0.01 speed² + 0.001 torque² is minimised by gradients through the
    whole rollout. Gradients through the unstable upright position grow fast: too high an LR
    saturates the policy at full torque one way (the pendulum spins, a cost of 1.72-1.76 that
    never moves again) or is noisy, and a good LR falls smoothly as the policy learns to swing up and
    hold. Metric the val cost over 500 held-out starts (1.50 for no torque, about 0.52 for the
    best runs; 4,000 starts to train on). Defined in session 47 as the twenty-ninth batch of
    fresh workloads, by a helper told of no check."""

    metric = "val_cost"
    steps, dt, gravity, damping, max_torque = 20, 0.1, 10.0, 0.1, 8.0

    def __init__(self) -> None:
        rng = np.random.default_rng(719)
        starts = np.stack([rng.uniform(-math.pi, math.pi, 4500), rng.uniform(-1.0, 1.0, 4500)], 1)
        zeros = np.zeros(4500, np.float32)
        super().__init__(starts[:4000], zeros[:4000], starts[4000:], zeros[4000:])

    def _cost(self, model: nn.Module, starts: torch.Tensor) -> torch.Tensor:
        angle, speed = starts[:, 0], starts[:, 1]
        keep, push, pull = 1.0 - self.dt * self.damping, self.dt * self.max_torque, self.dt * self.gravity
        cos, sin = torch.cos(angle), torch.sin(angle)
        path: list[torch.Tensor] = []
        for _ in range(self.steps):
            action = torch.tanh(model(torch.stack([cos, sin, speed], 1)).squeeze(1).float())
            speed = keep * speed + pull * sin + push * action  # semi-implicit Euler: speed first
            angle = angle + self.dt * speed
            cos, sin = torch.cos(angle), torch.sin(angle)
            path += [cos, speed, action]
        cos, speed, action = torch.stack(path, 1).view(len(starts), self.steps, 3).unbind(2)
        cost = 1.0 - cos + 0.01 * speed**2 + 0.001 * self.max_torque**2 * action**2
        return cost.mean(1)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        return self._cost(model, batch[0]).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        return {"val_cost": self._cost(model, self.x_val).mean().item()}

    def build_model(self) -> nn.Module:
        return _mlp(3, [32], 1)


class PoincareTree(_Tabular):
    """Hyperbolic embeddings of a hierarchy (Nickel and Kiela 2017, Poincaré embeddings): the
    nodes of a random tree of 400 nodes (built breadth first, each node given 1 to 5 children;
    depth 7, 258 leaves) are embedded in the 4-D Poincaré ball, each point the exponential map
    at the origin of a free tangent vector (so every optimizer stays inside the ball without a
    Riemannian step), and each sample, a pair of a node and one of its ancestors (the tree's
    transitive closure, 2,549 pairs), is trained by the softmax over −distance of the ancestor
    against 16 random nodes unrelated to the node. Embeddings start within 0.001 of the origin,
    so the curve starts slowly, then climbs in an S as the hierarchy spreads out towards the
    boundary; too high an LR throws points to the edge of the ball, where they stall (the
    distances' denominators are floored there, so the loss stays finite). Metric the mean
    average precision of reconstructing each node's ancestors and descendants from its distances
    to all other nodes (0.045 for the start's random layout, about 0.8 for the best runs).
    Defined in session 47 as the twenty-ninth batch of fresh workloads, by a helper told of no
    check."""

    metric = "map"
    nodes, dims, negatives = 400, 4, 16

    def __init__(self) -> None:
        rng = np.random.default_rng(727)
        parent, node = [-1], 0
        while len(parent) < self.nodes:  # breadth first: each node 1 to 5 children, until 400 nodes
            parent += [node] * min(int(rng.integers(1, 6)), self.nodes - len(parent))
            node += 1
        parent = np.array(parent)
        related = np.zeros((self.nodes, self.nodes), bool)
        for node in range(1, self.nodes):
            ancestor = parent[node]
            while ancestor >= 0:
                related[node, ancestor] = related[ancestor, node] = True
                ancestor = parent[ancestor]
        pairs = np.argwhere(np.tril(related))  # (node, ancestor): a node's ancestors come before it
        self.related = torch.tensor(related)
        zeros = np.zeros(len(pairs), np.float32)
        super().__init__(pairs, zeros, pairs[:1], zeros[:1])
        self.x_train = self.x_train.long()

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank + 17)
        for pairs, _ in super().train_batches(micro_batch_size, rank, world_size, seed):
            negatives = torch.randint(0, self.nodes, (len(pairs), self.negatives), generator=generator)
            yield torch.cat([pairs, negatives], 1), pairs[:, 0]

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        nodes, node = batch
        points = model()
        distance = _poincare_distance(points[node][:, None], points[nodes[:, 1:]]).float()
        # Negatives related to the node (or the node itself) are left out of the softmax.
        unrelated = ~self.related[node[:, None], nodes[:, 2:]] & (nodes[:, 2:] != node[:, None])
        keep = torch.cat([torch.ones_like(unrelated[:, :1]), unrelated], 1)
        logits = torch.where(keep, -distance, torch.full_like(distance, -math.inf))
        return -torch.log_softmax(logits, 1)[:, 0].mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        points = model().double()
        distance = _poincare_distance(points[:, None], points[None])
        if not torch.isfinite(distance).all():
            return {"map": math.nan}
        distance.fill_diagonal_(math.inf)  # a node is not ranked against itself
        order = distance.argsort(1)[:, :-1]
        relevant = torch.gather(self.related, 1, order).double()
        hits = relevant.cumsum(1)
        precision = hits / torch.arange(1, order.shape[1] + 1, dtype=torch.float64)
        average = (precision * relevant).sum(1) / relevant.sum(1)
        return {"map": average.mean().item()}

    def build_model(self) -> nn.Module:
        return _PoincareEmbedding(self.nodes, self.dims)


def _poincare_distance(u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """arcosh(1 + 2 |u − v|² / ((1 − |u|²)(1 − |v|²))), kept finite near the boundary and at u = v."""
    squared = ((u - v) ** 2).sum(-1)
    room = (1.0 - (u**2).sum(-1)).clamp_min(1e-5) * (1.0 - (v**2).sum(-1)).clamp_min(1e-5)
    z = (2.0 * squared / room).clamp_min(1e-10)
    return torch.log1p(z + torch.sqrt(z * (z + 2.0)))


class _PoincareEmbedding(nn.Module):
    def __init__(self, nodes: int, dims: int) -> None:
        super().__init__()
        self.tangent = nn.Parameter(torch.empty(nodes, dims).uniform_(-1e-3, 1e-3))

    def forward(self) -> torch.Tensor:
        """The points in the ball: the exponential map at the origin, tanh(|v|) v / |v|."""
        norm = self.tangent.norm(dim=1, keepdim=True).clamp_min(1e-12)
        return torch.tanh(norm) * self.tangent / norm


class HawkesEventTimes(_Tabular):
    """A neural temporal point process (the intensity-free model of Shchur, Biloš and Günnemann
    2020): sequences of 24 event times from a self-exciting Hawkes process with an exponential
    kernel, each sequence in one of two hidden regimes with the same mean rate of 1 event per
    unit time (calm: background rate 0.9, branching ratio 0.1, decay 1; bursty: background 0.2,
    branching ratio 0.8, decay 3), are modelled by a GRU of width 32 reading each gap (its log
    and its value) and giving the density of the next gap as a mixture of 4 log-normals. Trained
    by the exact negative log-likelihood of the gaps; the curve drops fast past an exponential
    fit's level, then slowly as the network learns the excitation and its decay and tells the
    regimes apart from the history (too high an LR for SGD leaves it far above). Metric the val
    negative log-likelihood per event in nats on 500 held-out sequences (4,000 to train on; 3.4
    at the start, 1.21 for the best exponential gaps, 0.79 for the true process with the regime
    unknown). Defined in session 48 as the thirtieth batch of fresh workloads, by a helper told
    of no check."""

    metric = "val_nll"
    events, components = 24, 4
    # Per regime: background rate, branching ratio (total excitation of one event), decay rate.
    regimes = ((0.9, 0.1, 1.0), (0.2, 0.8, 3.0))

    def __init__(self) -> None:
        rng = np.random.default_rng(733)
        count = 4500
        regime = rng.integers(0, len(self.regimes), count)
        base, branching, decay = (np.array(column)[regime] for column in zip(*self.regimes, strict=True))
        gaps = np.zeros((count, self.events))
        excess = np.zeros(count)  # the excitation part of the intensity, just after the last step
        waited = np.zeros(count)  # time since the last event
        found = np.zeros(count, np.int64)
        while (found < self.events).any():  # Ogata's thinning, all sequences at once
            live = found < self.events
            bound = base + excess  # the intensity only decays until the next event
            step = rng.exponential(1.0 / bound)
            excess = excess * np.exp(-decay * step)
            waited = waited + step
            accept = live & (rng.random(count) * bound < base + excess)
            rows = np.flatnonzero(accept)
            gaps[rows, found[rows]] = waited[rows]
            found[rows] += 1
            waited[rows] = 0.0
            excess[rows] += branching[rows] * decay[rows]
        self.true_nll = self._hawkes_nll(gaps[4000:])
        self.exponential_nll = float(1.0 + np.log(gaps[:4000].mean()))  # the best exponential gaps
        zeros = np.zeros(count, np.float32)
        super().__init__(gaps[:4000], zeros[:4000], gaps[4000:], zeros[4000:])

    def _hawkes_nll(self, gaps: np.ndarray) -> float:
        """The true process's negative log-likelihood per event, the regime marginalised out."""
        log_likelihood = []
        for base, branching, decay in self.regimes:
            excess = np.zeros(len(gaps))
            total = np.zeros(len(gaps))
            for i in range(self.events):
                gap = gaps[:, i]
                compensator = base * gap + excess * (1.0 - np.exp(-decay * gap)) / decay
                excess = excess * np.exp(-decay * gap)
                total += np.log(base + excess) - compensator
                excess = excess + branching * decay
            log_likelihood.append(total + math.log(1.0 / len(self.regimes)))
        return float(-np.logaddexp(*log_likelihood).mean() / self.events)

    def _nll(self, model: nn.Module, gaps: torch.Tensor) -> torch.Tensor:
        logits, means, scales = model(gaps)
        log_gaps = gaps.log()[..., None]
        log_normal = -0.5 * ((log_gaps - means) / scales) ** 2 - scales.log() - 0.5 * math.log(2 * math.pi)
        log_density = torch.logsumexp(torch.log_softmax(logits, -1) + log_normal, -1) - log_gaps.squeeze(-1)
        return -log_density.mean()

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        return self._nll(model, batch[0])

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        return {"val_nll": self._nll(model, self.x_val).item()}

    def build_model(self) -> nn.Module:
        return _GapMixtureGRU(self.components)


class _GapMixtureGRU(nn.Module):
    def __init__(self, components: int, width: int = 32) -> None:
        super().__init__()
        self.gru = nn.GRU(3, width, batch_first=True)
        self.head = nn.Linear(width, 3 * components)

    def forward(self, gaps: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Per gap, the mixture's logits, means and scales of log(gap) given the gaps before it."""
        previous = F.pad(gaps[:, :-1], (1, 0))
        first = torch.zeros_like(gaps)
        first[:, 0] = 1.0
        inputs = torch.stack([previous.clamp_min(1e-6).log() * (1.0 - first), previous, first], -1)
        hidden, _ = self.gru(inputs)
        logits, means, scales = self.head(hidden).float().chunk(3, -1)
        return logits, means, F.softplus(scales) + 0.01


class MajorityRingCA(_Tabular):
    """A neural cellular automaton for the density (majority) classification task on a ring, the
    classic test of what local rules can compute (Packard 1988; Mitchell, Crutchfield and Das
    1996): 33 cells, each starting from one bit (+1 or -1; a ring's share of ones drawn uniform
    in [0.3, 0.7]), must all end up saying whether ones are the majority. Every cell holds 6
    channels (its bit, fixed, 4 hidden and a logit) and for 6 synchronous steps adds a residual
    update from a shared MLP 42-24-5 of the channels of the 7 cells around it (radius 3, so news
    crosses more than half the ring in the 6 steps; the last layer started at zero, so the
    automaton starts still). Trained by every cell's binary cross-entropy against the majority,
    averaged over the last 3 steps; the curve drops fast as cells learn to read their
    neighbourhood, then slowly and noisily as the rings near half ones are resolved, and too high
    an LR makes the iterated map blow up (a NaN loss, recorded as diverged) or jump about. Metric
    the val error: the share of 500 held-out rings on which not every cell is right after the
    last step (4,000 to train on; 0.50 at the start, when every cell says no; the per-cell error
    is reported beside it). Defined in session 48 as the thirtieth batch of fresh workloads, by a
    helper told of no check."""

    metric = "val_error"
    cells = 33

    def __init__(self) -> None:
        rng = np.random.default_rng(739)
        share = rng.uniform(0.3, 0.7, (4500, 1))
        bits = (rng.random((4500, self.cells)) < share).astype(np.float32)
        majority = (bits.sum(1) > self.cells / 2).astype(np.float32)
        super().__init__(2.0 * bits[:4000] - 1.0, majority[:4000], 2.0 * bits[4000:] - 1.0, majority[4000:])

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        rings, majority = batch
        logits = model(rings).float()
        half = logits.shape[1] // 2
        return F.binary_cross_entropy_with_logits(
            logits[:, half:], majority[:, None, None].expand_as(logits[:, half:])
        )

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val)[:, -1].float()
        if not torch.isfinite(logits).all():
            return {"val_error": math.nan}
        right = (logits > 0).float() == self.y_val[:, None]
        return {
            "val_error": 1.0 - right.all(1).float().mean().item(),
            "val_cell_error": 1.0 - right.float().mean().item(),
        }

    def build_model(self) -> nn.Module:
        return _RingAutomaton()


class _RingAutomaton(nn.Module):
    def __init__(self, channels: int = 6, width: int = 24, radius: int = 3, steps: int = 6) -> None:
        super().__init__()
        self.channels, self.radius, self.steps = channels, radius, steps
        self.perceive = nn.Linear(channels * (2 * radius + 1), width)
        self.update = nn.Linear(width, channels - 1)
        nn.init.zeros_(self.update.weight)
        nn.init.zeros_(self.update.bias)

    def forward(self, rings: torch.Tensor) -> torch.Tensor:
        """Every cell's logit after each step: (ring, step, cell)."""
        count, cells = rings.shape
        state = torch.cat([rings[..., None], rings.new_zeros(count, cells, self.channels - 1)], 2)
        r, logits = self.radius, []
        for _ in range(self.steps):
            wrapped = torch.cat([state[:, -r:], state, state[:, :r]], 1)
            around = wrapped.unfold(1, 2 * r + 1, 1).reshape(count, cells, -1)
            change = self.update(F.relu(self.perceive(around)))
            state = torch.cat([state[..., :1], state[..., 1:] + change], 2)
            logits.append(state[..., -1])
        return torch.stack(logits, 1)


class GroundStateVMC(_Tabular):
    """The ground state of a 2-D quantum system found variationally by a neural wavefunction
    (variational Monte Carlo in the spirit of Carleo and Troyer 2017, with importance sampling in
    place of a Markov chain): psi = exp(f(x, y)) with f an MLP 2-32-32-1 (tanh) minimises the
    energy <psi|H|psi> / <psi|psi> of H = -Laplacian / 2 + V, V a tilted, coupled double well
    0.15 (x² - 3)² + y² / 2 + 0.4 x y + 0.1 x, estimated on each micro-batch of fresh points
    (half from a Gaussian of std 2 across the wells and 1.5 along, half uniform over [-5, 5]²)
    by self-normalised weights psi² / q times the local energy |grad f|² / 2 + V (first
    derivatives only, through autograd). The start is nearly flat; the curve climbs as the
    wavefunction settles in the wells, and the few points that carry most of the weight make the
    gradient noisy: too high an LR jitters, or collapses psi onto a spike and stalls with an
    overlap near 0. Metric the overlap |<psi|phi0>|² of psi on a 64 × 64 grid over [-5, 5]²
    with the exact ground state phi0 of the finite-difference Hamiltonian there (0.12 for a flat
    psi, 1 for the exact one, about 0.97 for the best runs); the grid energy above phi0's
    (0.996) is reported beside it. Defined in session 48 as the thirtieth batch of fresh
    workloads, by a helper told of no check."""

    metric = "overlap"
    grid, half_width = 64, 5.0
    spread = (2.0, 1.5)

    @staticmethod
    def potential(x: Any, y: Any) -> Any:
        return 0.15 * (x**2 - 3.0) ** 2 + 0.5 * y**2 + 0.4 * x * y + 0.1 * x

    def __init__(self) -> None:
        import scipy.sparse as sparse
        from scipy.sparse.linalg import eigsh

        axis = np.linspace(-self.half_width, self.half_width, self.grid)
        h = axis[1] - axis[0]
        xx, yy = np.meshgrid(axis, axis, indexing="ij")
        second = sparse.diags([-1.0, 2.0, -1.0], [-1, 0, 1], (self.grid, self.grid)) / h**2
        identity = sparse.identity(self.grid)
        potential = self.potential(xx, yy).ravel()
        hamiltonian = 0.5 * (sparse.kron(second, identity) + sparse.kron(identity, second))
        hamiltonian = (hamiltonian + sparse.diags(potential)).tocsr()
        energies, states = eigsh(hamiltonian, k=1, which="SA")
        self.ground_energy = float(energies[0])
        ground = np.abs(states[:, 0])
        self.ground = torch.tensor(ground / np.linalg.norm(ground))
        self.hamiltonian = hamiltonian
        self.grid_points = torch.tensor(np.stack([xx.ravel(), yy.ravel()], 1), dtype=torch.float32)
        zeros = np.zeros((1, 2), np.float32)  # no data: the points are drawn afresh (train_batches)
        super().__init__(zeros, zeros[:, 0], zeros, zeros[:, 0])

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        # Fresh points every micro-batch: on a fixed pool, psi could spike on one point and fool the estimate.
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank + 29)
        spread, box = torch.tensor(self.spread), self.half_width
        log_normal = -math.log(2.0 * math.pi * spread.prod().item())
        while True:
            # Half from a Gaussian over the wells, half uniform over the grid's square, so that no
            # part of the square goes unseen (psi could grow there unpenalised).
            normal = torch.randn(micro_batch_size, 2, generator=generator) * spread
            uniform = (2.0 * torch.rand(micro_batch_size, 2, generator=generator) - 1.0) * box
            pick = torch.rand(micro_batch_size, 1, generator=generator) < 0.5
            points = torch.where(pick, normal, uniform)
            log_q = torch.logaddexp(
                log_normal - 0.5 * ((points / spread) ** 2).sum(1),
                torch.full((len(points),), -math.log(4 * box**2)),
            )
            yield points, log_q

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        points, log_q = batch
        points = points.detach().requires_grad_(True)
        f = model(points).squeeze(-1).float()
        (gradient,) = torch.autograd.grad(f.sum(), points, create_graph=True)
        local = 0.5 * (gradient.float() ** 2).sum(1) + self.potential(points[:, 0], points[:, 1])
        weights = torch.softmax(2.0 * f - log_q, 0)
        return (weights * local).sum()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        f = model(self.grid_points).squeeze(-1).double()
        if not torch.isfinite(f).all():
            return {"overlap": math.nan}
        psi = torch.exp(f - f.max())
        psi = psi / psi.norm()
        energy = float(psi.numpy() @ (self.hamiltonian @ psi.numpy()))
        overlap = min(1.0, (psi @ self.ground).item() ** 2)
        return {"overlap": overlap, "energy_gap": energy - self.ground_energy}

    def build_model(self) -> nn.Module:
        return nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))


class LearnedIndexCDF(_Tabular):
    """A learned index (Kraska et al. 2018): a monotone model of the keys' cumulative
    distribution that predicts where each of 10,000 sorted keys sits, so a lookup searches only
    near the prediction. The keys are skewed, as real ones are: 40% in 12 tight clusters of
    widths 0.0005 to 0.02, 40% from an exponential decay from 0, 20% uniform over [0, 1], scaled
    to [-1, 1]. The model is a mixture of 64 sigmoid steps (softmax weights, exp-parametrised
    slopes started at 4, centres spread evenly), monotone and in [0, 1] by construction,
    trained by the MSE of the predicted CDF against each key's rank / (N - 1) on keys drawn at
    random. The broad shape comes fast, the tight clusters need steep steps and come slowly (a
    long tail of small gains); too high an LR throws the steps about and stalls, and a slope
    that overflows gives a NaN loss (recorded as diverged). Metric the mean number of
    binary-search steps log2(1 + |predicted - true position|) over all keys (0 for an exact
    index, 10.4 at the start, at most log2 10,000 = 13.3; the mean position error is reported
    beside it). Defined in session 48 as the thirtieth batch of fresh workloads, by a helper
    told of no check."""

    metric = "search_steps"
    keys, steps = 10_000, 64

    def __init__(self) -> None:
        rng = np.random.default_rng(751)
        clustered = 4000
        centres = rng.uniform(0.0, 1.0, 12)
        widths = np.geomspace(0.0005, 0.02, 12)
        cluster = rng.integers(0, 12, clustered)
        keys = np.concatenate(
            [
                centres[cluster] + widths[cluster] * rng.normal(size=clustered),
                rng.exponential(0.05, 4000),
                rng.uniform(0.0, 1.0, 2000),
            ]
        )
        keys = np.sort(keys)
        keys = 2.0 * (keys - keys[0]) / (keys[-1] - keys[0]) - 1.0
        position = np.arange(self.keys) / (self.keys - 1)
        super().__init__(
            keys[:, None], position.astype(np.float32), keys[:, None], position.astype(np.float32)
        )

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        keys, position = batch
        return F.mse_loss(model(keys).float(), position)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        predicted = model(self.x_val).double()
        error = (predicted - self.y_val.double()).abs() * (self.keys - 1)
        return {
            "search_steps": torch.log2(1.0 + error).mean().item(),
            "val_position_error": error.mean().item(),
        }

    def build_model(self) -> nn.Module:
        return _SigmoidSteps(self.steps)


class _SigmoidSteps(nn.Module):
    def __init__(self, steps: int) -> None:
        super().__init__()
        self.logits = nn.Parameter(torch.zeros(steps))
        self.log_slope = nn.Parameter(torch.full((steps,), math.log(4.0)))
        self.centre = nn.Parameter(torch.linspace(-1.0, 1.0, steps))

    def forward(self, keys: torch.Tensor) -> torch.Tensor:
        """The predicted CDF at each key, a softmax-weighted sum of sigmoid steps."""
        rise = torch.sigmoid(self.log_slope.exp() * (keys - self.centre))
        return rise @ torch.softmax(self.logits, 0)


class QAMEqualiser(_Classifier):
    """A neural equaliser for a digital link (in the spirit of Chen, Gibson and Cowan's
    nonlinear equalisers, 1990): 16-QAM symbols pass through a dispersive channel with 6
    complex taps (intersymbol interference from the two symbols after and the three before),
    a saturating power amplifier (Saleh's model: amplitude 2r / (1 + r²) and a phase turn of
    0.5 r² / (1 + r²), driven at an RMS input of 0.85, so the outer points are compressed and
    turned) and white noise at 24 dB SNR; an MLP 22-64-64-16 reads the 11 received complex
    samples around a symbol (real and imaginary parts, standardised) and is trained by
    cross-entropy over the 16 symbols. The curve drops fast as the network undoes the
    interference, then slowly as it bends its decision regions round the distorted outer
    points. Metric the symbol error rate on 4,000 held-out symbols of the same stream (16,000 to
    train on; 0.94 at chance, 0.12 to 0.16 after the planned run at a good LR, lower with longer
    training; cross-entropy reported beside it). Defined in session 48 as the thirty-first batch
    of fresh workloads, by a helper told of no check."""

    metric = "val_ser"
    window, delay = 11, 2
    taps = (0.08 + 0.05j, 0.2 - 0.1j, 1.0, 0.3 + 0.18j, -0.12 + 0.08j, 0.05 - 0.06j)

    def __init__(self) -> None:
        rng = np.random.default_rng(761)
        count = 20_000
        levels = np.array([-3.0, -1.0, 1.0, 3.0]) / math.sqrt(10.0)
        label = rng.integers(0, 16, count + self.window + self.delay)
        symbols = levels[label // 4] + 1j * levels[label % 4]
        channel = np.convolve(symbols, np.array(self.taps))[: len(symbols)]
        channel = 0.85 * channel / np.sqrt(np.mean(np.abs(channel) ** 2))  # back-off before the amplifier
        r = np.abs(channel)
        amplified = 2.0 * r / (1.0 + r**2) * np.exp(1j * (np.angle(channel) + 0.5 * r**2 / (1.0 + r**2)))
        power = np.mean(np.abs(amplified) ** 2)
        noise = np.sqrt(power / 10 ** (24 / 10) / 2) * (
            rng.normal(size=len(r)) + 1j * rng.normal(size=len(r))
        )
        received = amplified + noise
        # Symbol t reaches the receiver mostly at t + delay (the channel's main tap); the window is centred there.
        half = self.window // 2
        centre = np.arange(half, half + count) + self.delay
        rows = received[centre[:, None] + np.arange(-half, half + 1)]
        features = np.concatenate([rows.real, rows.imag], 1)
        labels = label[half : half + count]
        x_train, x_val = _standardise(features[:16_000], features[16_000:])
        super().__init__(x_train, labels[:16_000], x_val, labels[16_000:])

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float()
        if not torch.isfinite(logits).all():
            return {"val_ser": math.nan}
        return {
            "val_ser": (logits.argmax(-1) != self.y_val).float().mean().item(),
            "val_loss": F.cross_entropy(logits, self.y_val).item(),
        }

    def build_model(self) -> nn.Module:
        return _mlp(2 * self.window, [64, 64], 16)


class SPOShortestPath(_Tabular):
    """Decision-focused learning (predict, then optimise) with the SPO+ loss of Elmachtoub and
    Grigas (2022), on the shortest-path benchmark of PyEPO (Tang and Khalil 2022): 5 features
    predict the 40 edge costs of a 5 × 5 grid (moves right or down, corner to corner), and the
    prediction is judged by the path it makes a solver choose. True costs are [(Bx / √5 + 3)⁶ /
    3.5⁶ + 1] times uniform noise in [0.8, 1.2], B a fixed 0/1 matrix, so they are a
    polynomial of degree 6 of the features. An MLP 5-64-40 is trained by the SPO+ surrogate
    -min_w (2ĉ - c)·w + 2ĉ·w*(c) - z*(c), its subgradient 2(w*(c) - w*(2ĉ - c)) taken from
    exact dynamic-programming solves on each micro-batch. The regret drops fast once the
    predicted costs rank the edges roughly right, then creeps towards the oracle's, since the
    subgradient changes only when a chosen path does; too high an LR makes it jump between
    paths. Metric the normalised regret sum(c·w(ĉ) - z*) / sum(z*) on 1,000 held-out instances
    (2,000 to train on; 0.25 at the start, 0.29 for equal costs, 0.019 for the true expected
    costs; the MSE of the predicted costs, which SPO+ leaves far off, reported beside it).
    Defined in session 48 as the thirty-first batch of fresh workloads, by a helper told of no
    check."""

    metric = "val_regret"
    side, features = 5, 5
    edges = 2 * side * (side - 1)

    def __init__(self) -> None:
        rng = np.random.default_rng(769)
        count = 3000
        basis = rng.binomial(1, 0.5, (self.edges, self.features))
        x = rng.normal(size=(count, self.features))
        costs = ((x @ basis.T) / math.sqrt(self.features) + 3.0) ** 6 / 3.5**6 + 1.0
        costs = costs * rng.uniform(0.8, 1.2, costs.shape)
        costs_t = torch.tensor(costs, dtype=torch.float32)
        paths = self.solve(costs_t)
        optimum = (costs_t * paths).sum(1, keepdim=True)
        target = torch.cat([costs_t, paths, optimum], 1).numpy()
        super().__init__(x[:2000], target[:2000], x[2000:], target[2000:])

    def solve(self, costs: torch.Tensor) -> torch.Tensor:
        """The shortest corner-to-corner path of each row of edge costs, as a 0/1 edge vector.

        Edges are ordered right moves (row, column) 5 × 4 first, then down moves 4 × 5. NaN costs give
        some path (comparisons with NaN are false); the loss then carries the NaN.
        """
        n, count = self.side, len(costs)
        right = costs[:, : n * (n - 1)].reshape(count, n, n - 1)
        down = costs[:, n * (n - 1) :].reshape(count, n - 1, n)
        distance = [[costs.new_zeros(count)] * n for _ in range(n)]
        device = costs.device
        from_above = torch.zeros(count, n, n, dtype=torch.bool, device=device)
        for i in range(n):
            for j in range(n):
                if i == 0 and j == 0:
                    continue
                if i == 0:
                    distance[i][j] = distance[i][j - 1] + right[:, i, j - 1]
                elif j == 0:
                    distance[i][j] = distance[i - 1][j] + down[:, i - 1, j]
                    from_above[:, i, j] = True
                else:
                    left = distance[i][j - 1] + right[:, i, j - 1]
                    above = distance[i - 1][j] + down[:, i - 1, j]
                    from_above[:, i, j] = above < left
                    distance[i][j] = torch.minimum(left, above)
        path = torch.zeros(count, self.edges, device=device)
        rows = torch.arange(count, device=device)
        i = torch.full((count,), n - 1, device=device)
        j = torch.full((count,), n - 1, device=device)
        for _ in range(2 * (n - 1)):
            up = from_above[rows, i, j]
            edge = torch.where(up, n * (n - 1) + (i - 1) * n + j, i * (n - 1) + j - 1)
            path[rows, edge] = 1.0
            i, j = i - up.long(), j - (~up).long()
        return path

    def _split_target(self, target: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return target[:, : self.edges], target[:, self.edges : 2 * self.edges], target[:, -1]

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        x, target = batch
        costs, best, optimum = self._split_target(target)
        predicted = model(x).float()
        chosen = self.solve((2.0 * predicted - costs).detach())
        spo_plus = -((2.0 * predicted - costs) * chosen).sum(1) + 2.0 * (predicted * best).sum(1) - optimum
        return spo_plus.mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        predicted = model(self.x_val).float()
        if not torch.isfinite(predicted).all():
            return {"val_regret": math.nan}
        costs, _, optimum = self._split_target(self.y_val)
        regret = (costs * self.solve(predicted)).sum(1) - optimum
        return {
            "val_regret": max(0.0, (regret.sum() / optimum.sum()).item()),
            "val_cost_mse": F.mse_loss(predicted, costs).item(),
        }

    def build_model(self) -> nn.Module:
        return _mlp(self.features, [64], self.edges)


class ClusterPotential(_Tabular):
    """A machine-learned interatomic potential (Behler and Parrinello 2007) fitted by energy and
    force matching: clusters of 8 atoms in 3-D (grown atom by atom at distances 0.9 to 1.35
    from a random earlier atom, none closer than 0.85 to another) take their energies from a
    many-body Gupta (second-moment tight-binding) potential, sum over atoms of 0.1 Σ
    exp(-10 (r - 1)) - (Σ exp(-4 (r - 1)))^½, and their forces from its exact gradient. Each
    atom's environment is described by 12 radial symmetry functions (Gaussians of width 0.2 at
    0.8 to 2.8, cosine cutoff at 3), an atomic MLP 12-32-32-1 (SiLU) gives its energy, and the
    forces are minus the gradient of the summed energy by autograd (a second-order gradient in
    training). Trained by the MSE of the per-atom energy (scaled by its spread) plus that of
    the force components (scaled by their RMS); the force error falls fast, then slowly as the
    steep repulsion at short range is learned, and too high an LR leaves it far above (a
    network gone flat predicts no force: 0.89) or blows the second-order gradient up (a NaN
    loss, recorded as diverged). Metric the mean absolute error of the force components on 500
    held-out clusters, in the potential's units (3,000 to train on; 0.91 at the start, the
    forces' own mean absolute value 0.89, about 0.13 after the planned run at a good LR; the
    per-atom energy error reported beside it). Defined in session 48 as the thirty-first batch
    of fresh workloads, by a helper told of no check."""

    metric = "val_force_mae"
    atoms = 8

    def __init__(self) -> None:
        rng = np.random.default_rng(773)
        count = 3500
        clusters = np.zeros((count, self.atoms, 3))
        for c in range(count):
            placed = 1
            while placed < self.atoms:
                direction = rng.normal(size=3)
                anchor = clusters[c, rng.integers(0, placed)]
                candidate = anchor + rng.uniform(0.9, 1.35) * direction / np.linalg.norm(direction)
                if np.linalg.norm(clusters[c, :placed] - candidate, axis=1).min() >= 0.85:
                    clusters[c, placed] = candidate
                    placed += 1
        clusters -= clusters.mean(1, keepdims=True)
        positions = torch.tensor(clusters, dtype=torch.float64, requires_grad=True)
        energy = self._gupta(positions)
        (gradient,) = torch.autograd.grad(energy.sum(), positions)
        per_atom = energy.detach().numpy() / self.atoms
        self.offset, self.scale = float(per_atom[:3000].mean()), float(per_atom[:3000].std())
        forces = -gradient.numpy().reshape(count, -1)
        self.force_scale = float(np.sqrt((forces[:3000] ** 2).mean()))
        target = np.concatenate([per_atom[:, None], forces], 1).astype(np.float32)
        flat = clusters.reshape(count, -1)
        super().__init__(flat[:3000], target[:3000], flat[3000:], target[3000:])

    @staticmethod
    def _gupta(positions: torch.Tensor) -> torch.Tensor:
        """The Gupta energy of each cluster (float64), by its exact formula."""
        apart = positions[:, :, None] - positions[:, None]
        eye = torch.eye(positions.shape[1], dtype=torch.bool)
        r = ((apart**2).sum(-1) + eye).sqrt()
        repulsion = torch.where(eye, 0.0, 0.1 * torch.exp(-10.0 * (r - 1.0))).sum(-1)
        band = torch.where(eye, 0.0, torch.exp(-4.0 * (r - 1.0))).sum(-1).sqrt()
        return (repulsion - band).sum(-1)

    def _predict(self, model: nn.Module, flat: torch.Tensor, create_graph: bool) -> tuple[torch.Tensor, ...]:
        """Scaled per-atom energy and scaled forces of each cluster."""
        with torch.enable_grad():
            positions = flat.detach().reshape(len(flat), self.atoms, 3).requires_grad_(True)
            energy = model(positions).float()
            (gradient,) = torch.autograd.grad(energy.sum(), positions, create_graph=create_graph)
        return energy / self.atoms, -gradient.reshape(len(flat), -1).float()

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        flat, target = batch
        energy, forces = self._predict(model, flat, create_graph=True)
        energy_target = (target[:, 0] - self.offset) / self.scale
        force_error = F.mse_loss(forces * self.scale / self.force_scale, target[:, 1:] / self.force_scale)
        return F.mse_loss(energy, energy_target) + force_error

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        energy, forces = self._predict(model, self.x_val, create_graph=False)
        if not (torch.isfinite(energy).all() and torch.isfinite(forces).all()):
            return {"val_force_mae": math.nan}
        energy = energy * self.scale + self.offset
        return {
            "val_force_mae": (forces * self.scale - self.y_val[:, 1:]).abs().mean().item(),
            "val_energy_mae": (energy - self.y_val[:, 0]).abs().mean().item(),
        }

    def build_model(self) -> nn.Module:
        return _AtomicEnergies()


class _AtomicEnergies(nn.Module):
    def __init__(self, functions: int = 12, width: int = 32, cutoff: float = 3.0) -> None:
        super().__init__()
        self.register_buffer("centres", torch.linspace(0.8, 2.8, functions))
        self.cutoff = cutoff
        self.atomic = nn.Sequential(
            nn.Linear(functions, width), nn.SiLU(), nn.Linear(width, width), nn.SiLU(), nn.Linear(width, 1)
        )

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        """Each cluster's energy (in the scaled units), a sum of atomic energies of radial descriptors."""
        apart = positions[:, :, None] - positions[:, None]
        eye = torch.eye(positions.shape[1], dtype=torch.bool, device=positions.device)
        r = ((apart**2).sum(-1) + eye).sqrt()
        smooth = 0.5 * (torch.cos(math.pi * r.clamp(max=self.cutoff) / self.cutoff) + 1.0)
        smooth = torch.where(eye, 0.0, smooth)
        gaussians = torch.exp(-((r[..., None] - self.centres) ** 2) / (2 * 0.2**2)) * smooth[..., None]
        return self.atomic(gaussians.sum(2)).squeeze(-1).sum(1)


class MissingNotAtRandom(_Regressor):
    """Regression from tabular features with values missing not at random: 12 correlated
    Gaussian features (correlation 0.7^|i - j|) of which each value goes missing with
    probability 0.05 + 0.35 sigmoid(3 (x - 1)) — the larger a value, the likelier it is lost
    (self-masking, as with incomes or lab readings above a range; 12% of values missing in
    all) — and a target built from 7 of them with interactions, bends and a kink plus noise
    (R² 0.978 at best), standardised. The model sees each feature's value or a learned
    per-feature fill-in where it is missing, beside the 12 missingness indicators (a mask-aware
    MLP 24-64-64-1, in the way of "missing incorporated in attributes"), and is trained by MSE.
    Zero-filling is biased here, since a missing value is likely a large one; the curve rises
    fast as the visible features are used, then slowly as the network learns what each gap
    says about the value hidden there and reads it off the correlated neighbours, and it
    overfits a little late on. Metric the val R² on 1,000 held-out rows (6,000 to train on;
    about 0 at the start, 0.80 to 0.82 after the planned run at a good LR, where the same network
    on the fully observed table reaches 0.94). Defined in session 48 as the thirty-first batch
    of fresh workloads, by a helper told of no check."""

    metric = "val_r2"
    features = 12

    def __init__(self) -> None:
        rng = np.random.default_rng(787)
        count = 7000
        lag = np.abs(np.arange(self.features)[:, None] - np.arange(self.features))
        x = rng.multivariate_normal(np.zeros(self.features), 0.7**lag, count)
        y = (
            x[:, 0]
            + 2.0 * np.tanh(x[:, 2] * x[:, 4])
            + np.sin(2.0 * x[:, 6])
            + 0.5 * x[:, 8] ** 2
            + np.abs(x[:, 10])
        )
        y = y - 0.8 * x[:, 5] * (x[:, 5] > 0)
        y = y + rng.normal(0.0, 0.15 * y.std(), count)
        y = (y - y[:6000].mean()) / y[:6000].std()
        missing = rng.random(x.shape) < 0.05 + 0.35 / (1.0 + np.exp(-3.0 * (x - 1.0)))
        inputs = np.concatenate([np.where(missing, 0.0, x), missing], 1)
        super().__init__(
            inputs[:6000], y[:6000].astype(np.float32), inputs[6000:], y[6000:].astype(np.float32)
        )

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        predicted = model(self.x_val).squeeze(-1).float()
        if not torch.isfinite(predicted).all():
            return {"val_r2": math.nan}
        mse = F.mse_loss(predicted, self.y_val).item()
        return {"val_r2": 1.0 - mse / self.y_val.var(unbiased=False).item(), "val_mse": mse}

    def build_model(self) -> nn.Module:
        return _MaskAwareMLP(self.features)


class _MaskAwareMLP(nn.Module):
    def __init__(self, features: int, width: int = 64) -> None:
        super().__init__()
        self.features = features
        self.fill = nn.Parameter(torch.zeros(features))
        self.body = _mlp(2 * features, [width, width], 1)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        values, missing = inputs[:, : self.features], inputs[:, self.features :]
        filled = torch.where(missing > 0.5, self.fill, values)
        return self.body(torch.cat([filled, missing], 1))


class LabelProportions(_Tabular):
    """Learning from label proportions (Quadrianto et al. 2009; the bag-level loss of Ardehaly
    and Culotta 2017): an instance classifier is trained without a single instance label, only
    from the class shares of bags of 16 instances. The instances are 20-feature points of 5
    classes from ``make_classification`` (10 informative features, 2 clusters a class, class
    separation 1.2); each of 500 fixed training bags draws its class shares from a flat
    Dirichlet and its 16 members from those classes (6,000 instances to draw on, so bags share
    members). An MLP 20-64-64-5 scores each member, the softmax probabilities are averaged over
    the bag, and the loss is the cross-entropy of the bag's true shares against that average.
    The curve falls slowly at first, while the network only matches the shares, then faster
    once members are told apart, and overfits the 500 bags late on. Metric the instance error
    rate on 1,500 held-out labelled points (0.80 at chance). Defined in session 48 as the
    thirty-second batch of fresh workloads, by a helper told of no check."""

    metric = "val_error"
    bags, bag_size, classes = 500, 16, 5

    def __init__(self) -> None:
        from sklearn.datasets import make_classification

        x, y = make_classification(
            n_samples=7500, n_features=20, n_informative=10, n_redundant=4, n_classes=self.classes,
            n_clusters_per_class=2, class_sep=1.2, random_state=797,
        )  # fmt: skip
        x_train, x_val = _standardise(x[:6000], x[6000:])
        y_train = y[:6000]
        rng = np.random.default_rng(797)
        members = [np.flatnonzero(y_train == c) for c in range(self.classes)]
        bag_x = np.zeros((self.bags, self.bag_size, x.shape[1]))
        shares = np.zeros((self.bags, self.classes))
        for b in range(self.bags):
            labels = rng.choice(self.classes, self.bag_size, p=rng.dirichlet(np.ones(self.classes)))
            bag_x[b] = x_train[[rng.choice(members[c]) for c in labels]]
            shares[b] = np.bincount(labels, minlength=self.classes) / self.bag_size
        super().__init__(bag_x, shares.astype(np.float32), x_val, y[6000:])
        self.y_val = self.y_val.long()  # instance labels, kept for evaluation only

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        bags, shares = batch
        probabilities = model(bags).float().softmax(-1).mean(1)
        return -(shares * probabilities.clamp_min(1e-8).log()).sum(1).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float()
        if not torch.isfinite(logits).all():
            return {"val_error": math.nan}
        return {
            "val_error": (logits.argmax(-1) != self.y_val).float().mean().item(),
            "val_instance_loss": F.cross_entropy(logits, self.y_val).item(),
        }

    def build_model(self) -> nn.Module:
        return _mlp(20, [64, 64], self.classes)


class TreatmentEffectTARNet(_Tabular):
    """Estimating individual treatment effects from observational data with TARNet (Shalit,
    Johansson and Sontag 2017): a shared representation MLP and one outcome head per arm, each
    head trained only on the units that took its arm (factual MSE). The data are synthetic, so
    the effects are known: 10 Gaussian covariates, treatment taken with probability
    sigmoid(1.5 x0 - x1 + 0.5 x2 x3) (so the arms differ in their covariates, and the treated
    are scarce where x0 is low), untreated outcome sin(2 x0) + x1 x2 + 0.5 x3² - 0.5 x4, effect
    1 + tanh(2 x0) + 0.5 x5 x6 - 0.5 |x7|, noise of SD 0.5. The effect estimate is the
    difference of the two heads; the error of that difference falls as the heads fit, then
    rises again as they overfit the noise on different units (the error of a difference of two
    separately overfitted fits). Metric √PEHE, the root mean square error of the estimated
    individual effects on 1,000 held-out units against the true ones (4,000 to train on; 1.3
    at the start; the factual MSE reported beside it). Defined in session 48 as the
    thirty-second batch of fresh workloads, by a helper told of no check."""

    metric = "val_pehe"
    covariates = 10

    def __init__(self) -> None:
        rng = np.random.default_rng(809)
        count = 5000
        x = rng.normal(size=(count, self.covariates))
        propensity = 1.0 / (1.0 + np.exp(-(1.5 * x[:, 0] - x[:, 1] + 0.5 * x[:, 2] * x[:, 3])))
        treated = (rng.random(count) < propensity).astype(np.float64)
        untreated = np.sin(2.0 * x[:, 0]) + x[:, 1] * x[:, 2] + 0.5 * x[:, 3] ** 2 - 0.5 * x[:, 4]
        effect = 1.0 + np.tanh(2.0 * x[:, 0]) + 0.5 * x[:, 5] * x[:, 6] - 0.5 * np.abs(x[:, 7])
        outcome = untreated + treated * effect + rng.normal(0.0, 0.5, count)
        inputs = np.concatenate([x, treated[:, None]], 1)
        self.effect_val = torch.tensor(effect[4000:], dtype=torch.float32)
        super().__init__(
            inputs[:4000], outcome[:4000].astype(np.float32), inputs[4000:], outcome[4000:].astype(np.float32)
        )

    def _factual(self, model: nn.Module, inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        both = model(inputs[:, : self.covariates]).float()
        treated = inputs[:, self.covariates].long()
        return both, both.gather(1, treated[:, None]).squeeze(1)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, outcome = batch
        return F.mse_loss(self._factual(model, inputs)[1], outcome)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        both, factual = self._factual(model, self.x_val)
        if not torch.isfinite(both).all():
            return {"val_pehe": math.nan}
        estimated = both[:, 1] - both[:, 0]
        return {
            "val_pehe": (estimated - self.effect_val).pow(2).mean().sqrt().item(),
            "val_factual_mse": F.mse_loss(factual, self.y_val).item(),
        }

    def build_model(self) -> nn.Module:
        return _TARNet(self.covariates)


class _TARNet(nn.Module):
    def __init__(self, covariates: int, width: int = 64) -> None:
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(covariates, width), nn.ELU(), nn.Linear(width, width), nn.ELU())
        self.heads = nn.ModuleList(_mlp(width, [width // 2], 1) for _ in range(2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shared = self.trunk(x)
        return torch.cat([head(shared) for head in self.heads], 1)


class NeuralSDFEikonal(_Tabular):
    """A neural signed distance field fitted from an oriented point cloud with an eikonal term
    (implicit geometric regularisation, Gropp et al. 2020): the shape is the union of a disk
    and a rectangle in the square [-1, 1]², seen only as 2,000 points on its outline with their
    outward normals. An MLP 2-64-64-64-1 (softplus, β = 10) is trained so the field is zero on
    the outline (weight 30), its gradient there is the normal, and its gradient has unit length
    at points drawn uniformly over the square (weight 0.1), which makes the field a distance
    away from the data; the gradients are taken by autograd inside the loss, so each step
    differentiates twice. The inside/outside split settles fast, then the sharp corners and
    the concave notch where the two parts meet come in slowly; too high an LR lets the field
    fold into spurious zero sets. Metric the intersection over union of the field's negative
    region with the true shape on a 96 × 96 grid (the mean absolute error of the field against
    the true signed distance reported beside it). Defined in session 48 as the thirty-second
    batch of fresh workloads, by a helper told of no check."""

    metric = "val_iou"
    centre, radius = (-0.35, -0.05), 0.45
    box_centre, box_half = (0.3, 0.15), (0.4, 0.25)

    def __init__(self) -> None:
        rng = np.random.default_rng(811)
        angle = rng.uniform(0.0, 2 * math.pi, 6000)
        circle = np.stack([np.cos(angle), np.sin(angle)], 1) * self.radius + self.centre
        side = rng.integers(0, 4, 6000)
        t = rng.uniform(-1.0, 1.0, 6000)
        hx, hy = self.box_half
        edge = np.where(
            (side % 2 == 0)[:, None],
            np.stack([t * hx, np.where(side == 0, hy, -hy)], 1),
            np.stack([np.where(side == 1, hx, -hx), t * hy], 1),
        )
        points = np.concatenate([circle, edge + self.box_centre])
        points_t = torch.tensor(points, dtype=torch.float64, requires_grad=True)
        distance = self.signed_distance(points_t)
        (normal,) = torch.autograd.grad(distance.sum(), points_t)
        on_outline = np.flatnonzero(np.abs(distance.detach().numpy()) < 1e-9)
        chosen = rng.choice(on_outline, 2000, replace=False)
        rows = np.concatenate([points[chosen], normal.numpy()[chosen]], 1).astype(np.float32)
        axis = (np.arange(96) + 0.5) / 48.0 - 1.0
        grid = np.stack(np.meshgrid(axis, axis, indexing="ij"), -1).reshape(-1, 2)
        truth = self.signed_distance(torch.tensor(grid, dtype=torch.float64)).numpy().astype(np.float32)
        super().__init__(rows, np.zeros(len(rows), np.float32), grid, truth)

    def signed_distance(self, p: torch.Tensor) -> torch.Tensor:
        """Exact outside and on the outline; the union's minimum (a bound) inside."""
        disk = (p - p.new_tensor(self.centre)).norm(dim=-1) - self.radius
        q = (p - p.new_tensor(self.box_centre)).abs() - p.new_tensor(self.box_half)
        box = q.clamp_min(0.0).norm(dim=-1) + q.max(-1).values.clamp_max(0.0)
        return torch.minimum(disk, box)

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        count = len(self.x_train)
        while True:
            index = torch.randint(0, count, (micro_batch_size,), generator=generator)
            free = torch.rand(micro_batch_size, 2, generator=generator) * 2.0 - 1.0
            yield torch.cat([self.x_train[index], free], 1), self.y_train[index]

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        rows, _ = batch
        with torch.enable_grad():
            points = torch.cat([rows[:, :2], rows[:, 4:]]).detach().requires_grad_(True)
            field = model(points).squeeze(-1).float()
            (gradient,) = torch.autograd.grad(field.sum(), points, create_graph=True)
        n = len(rows)
        surface = field[:n].pow(2).mean()
        normals = (gradient[:n] - rows[:, 2:4]).pow(2).sum(1).mean()
        eikonal = (gradient[n:].norm(dim=1) - 1.0).pow(2).mean()
        return 30.0 * surface + normals + 0.1 * eikonal

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        field = model(self.x_val).squeeze(-1).float()
        if not torch.isfinite(field).all():
            return {"val_iou": math.nan}
        inside, truth = field < 0, self.y_val < 0
        union = (inside | truth).sum().item()
        return {
            "val_iou": (inside & truth).sum().item() / max(union, 1),
            "val_sdf_mae": (field - self.y_val).abs().mean().item(),
        }

    def build_model(self) -> nn.Module:
        width = 64
        return nn.Sequential(
            nn.Linear(2, width), nn.Softplus(beta=10.0), nn.Linear(width, width), nn.Softplus(beta=10.0),
            nn.Linear(width, width), nn.Softplus(beta=10.0), nn.Linear(width, 1),
        )  # fmt: skip


class SoftDecisionTree(_Classifier):
    """A soft (differentiable) decision tree in the manner of Frosst and Hinton (2017): a
    complete binary tree of depth 6 whose 63 inner nodes each route a point right with
    probability sigmoid(w·x + b) and whose 64 leaves each hold a learned class distribution;
    the prediction is the leaves' distributions mixed by the probability of reaching them, and
    the loss the cross-entropy of that mixture. The data are 4 classes of 16 features from
    ``make_classification`` (8 informative, 4 redundant, 3 clusters a class, class separation
    1.0, 2% of labels flipped; 4,000 / 1,500). The routing is all oblique splits, so the curve
    drops fast while the top splits settle, then slowly as the deep ones sharpen; the sigmoids
    saturate at too high an LR and leave whole subtrees without gradient. Metric the val
    cross-entropy (1.39 at the start; the error rate reported beside it). Defined in session 48
    as the thirty-second batch of fresh workloads, by a helper told of no check."""

    metric = "val_loss"

    def __init__(self) -> None:
        x_train, y_train, x_val, y_val = _standardised_classification(
            n_samples=5500, n_features=16, n_informative=8, n_redundant=4, n_classes=4, n_clusters_per_class=3,
            class_sep=1.0, flip_y=0.02, random_state=821,
        )  # fmt: skip
        super().__init__(x_train, y_train, x_val, y_val)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, labels = batch
        return F.nll_loss(model(inputs).float(), labels)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        log_probabilities = model(self.x_val).float()
        if not torch.isfinite(log_probabilities).all():
            return {"val_loss": math.nan}
        return {
            "val_loss": F.nll_loss(log_probabilities, self.y_val).item(),
            "val_error": (log_probabilities.argmax(-1) != self.y_val).float().mean().item(),
        }

    def build_model(self) -> nn.Module:
        return _SoftTree(16, 6, 4)


class _SoftTree(nn.Module):
    def __init__(self, inputs: int, depth: int, classes: int) -> None:
        super().__init__()
        self.depth = depth
        self.splits = nn.Linear(inputs, 2**depth - 1)
        self.leaves = nn.Parameter(torch.zeros(2**depth, classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Log-probabilities of the classes: the leaves' distributions mixed by their path probabilities."""
        logits = self.splits(x)
        right, left = F.logsigmoid(logits), F.logsigmoid(-logits)
        path = x.new_zeros(len(x), 1)
        first = 0
        for level in range(self.depth):
            width = 2**level
            nodes = slice(first, first + width)
            path = torch.stack([path + left[:, nodes], path + right[:, nodes]], 2).reshape(len(x), 2 * width)
            first += width
        return torch.logsumexp(path[:, :, None] + self.leaves.log_softmax(-1), 1)


class _Siamese(nn.Module):
    def __init__(self, inputs: int, hidden: int, code: int) -> None:
        super().__init__()
        self.inputs = inputs
        self.encoder = _mlp(inputs, [hidden], code)
        self.judge = nn.Linear(code, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        left, right = self.encoder(x[:, : self.inputs]), self.encoder(x[:, self.inputs :])
        return self.judge((left - right).abs()).squeeze(-1)


def stdlib_bytes(sources: tuple[str, ...], max_bytes: int) -> torch.Tensor:
    """The named stdlib files' bytes, concatenated and cut at ``max_bytes``, as a long tensor."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    data = b"\n".join((stdlib / name).read_bytes() for name in sources)[:max_bytes]
    return torch.frombuffer(bytearray(data), dtype=torch.uint8).long()


class _CharLM:
    """Next-byte prediction on stdlib source: a contiguous held-out tail, random training windows.

    Metric ``val_loss`` in nats per byte over fixed held-out windows (ln 256 ≈ 5.55 at chance).
    """

    metric = "val_loss"
    sources: tuple[str, ...] = ()
    max_bytes = 120_000
    val_windows = 48

    def __init__(self, context: int = 32) -> None:
        data = stdlib_bytes(self.sources, self.max_bytes)
        split = int(0.9 * len(data))
        self.train_data, self.context = data[:split], context
        val = data[split:]
        starts = torch.linspace(0, len(val) - context - 2, self.val_windows).long()
        self.val_batch = torch.stack([val[s : s + context + 1] for s in starts])

    def train_batches(
        self, micro_batch_size: int, rank: int, world_size: int, seed: int
    ) -> Iterator[torch.Tensor]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        offsets = torch.arange(self.context + 1)
        while True:
            starts = torch.randint(
                0, len(self.train_data) - self.context - 1, (micro_batch_size,), generator=generator
            )
            yield self.train_data[starts[:, None] + offsets]

    def loss(self, model: nn.Module, batch: torch.Tensor) -> torch.Tensor:
        logits = model(batch[:, :-1])
        return F.cross_entropy(logits.reshape(-1, 256).float(), batch[:, 1:].reshape(-1))

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        return {"val_loss": self.loss(model, self.val_batch).item()}


class _GRUModel(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.embed = nn.Embedding(256, width)
        self.gru = nn.GRU(width, width, batch_first=True)
        self.head = nn.Linear(width, 256)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        hidden, _ = self.gru(self.embed(tokens))
        return self.head(hidden)


class _LSTMModel(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.embed = nn.Embedding(256, width)
        self.lstm = nn.LSTM(width, width, batch_first=True)
        self.head = nn.Linear(width, 256)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        hidden, _ = self.lstm(self.embed(tokens))
        return self.head(hidden)


class LSTMCharLM(_CharLM):
    """A one-layer LSTM (width 48) byte-level language model on stdlib argparse/textwrap source.
    A fresh workload of the third batch (see ``IrisTiny``)."""

    sources = ("argparse.py", "textwrap.py")
    max_bytes = 100_000

    def build_model(self) -> nn.Module:
        return _LSTMModel(48)


class GRUCharLM(_CharLM):
    """A one-layer GRU (width 64) byte-level language model on stdlib email/json source."""

    sources = GRU_SOURCES

    def build_model(self) -> nn.Module:
        return _GRUModel(64)


class _TransformerModel(nn.Module):
    def __init__(self, context: int, width: int, depth: int, heads: int):
        super().__init__()
        self.token = nn.Embedding(256, width)
        self.position = nn.Embedding(context, width)
        layer = nn.TransformerEncoderLayer(
            width, heads, dim_feedforward=2 * width, dropout=0.0, batch_first=True, norm_first=True
        )
        self.blocks = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, 256)
        self.register_buffer(
            "mask", nn.Transformer.generate_square_subsequent_mask(context), persistent=False
        )

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        length = tokens.shape[1]
        x = self.token(tokens) + self.position(torch.arange(length))
        x = self.blocks(x, mask=self.mask[:length, :length], is_causal=True)
        return self.head(self.norm(x))


class TransformerCharLM(_CharLM):
    """A 2-layer pre-norm causal transformer (width 48, 4 heads) on stdlib http/urllib/unittest source."""

    sources = TRANSFORMER_SOURCES

    def build_model(self) -> nn.Module:
        return _TransformerModel(self.context, 48, 2, 4)


class DomainAdversarialMoons(_Tabular):
    """Unsupervised domain adaptation by domain-adversarial training (DANN; Ganin et al. 2016):
    labels come only from a source domain, two interleaved half-moons (``make_moons``, noise
    0.1, standardised; 3,000 points), and the classifier is judged on a target domain it sees
    only unlabelled, the same moons rotated by 30° about their centre (3,000 unlabelled points
    to train on), where a classifier fitted to the source alone errs on 8 to 23% of the points,
    swinging as its boundary moves. A feature extractor 2-64-64 (ReLU) feeds a label head
    64-2, trained by cross-entropy on source points, and, through a gradient reversal layer, a
    domain head 64-32-1 that tells source from target points by logistic loss; the extractor is
    thus pushed to make the two domains look alike while keeping the classes apart. Each batch
    pairs labelled source points with as many target points. The target error first follows
    the source fit, then drops to 2 to 6% once the domains are aligned at a good LR, and stays
    noisy, since the domain head and the extractor keep chasing each other: a well-aligned map
    can come apart again late on, too low an LR never aligns (about 0.26), and too high an LR
    lets the game oscillate. Metric the error rate on 1,000 held-out labelled target points
    (the source error reported beside it). Defined as the thirty-third batch of fresh
    workloads, by a helper told of no check."""

    metric = "val_target_error"
    angle = 30.0

    def __init__(self) -> None:
        from sklearn.datasets import make_moons

        source, y_source = make_moons(n_samples=3000, noise=0.1, random_state=823)
        target, y_target = make_moons(n_samples=4000, noise=0.1, random_state=827)
        centre = source.mean(0)
        theta = math.radians(self.angle)
        rotation = np.array([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]])
        target = (target - centre) @ rotation.T + centre
        mean, scale = source.mean(0), source.std(0)
        source, target = (source - mean) / scale, (target - mean) / scale
        rng = np.random.default_rng(823)
        paired = np.concatenate([source, target[rng.permutation(3000)]], 1)  # target rows 0-2,999 unlabelled
        super().__init__(paired, y_source, target[3000:], y_target[3000:])
        self.x_source_val = torch.tensor(source[:1000], dtype=torch.float32)
        self.y_source_val = torch.tensor(y_source[:1000], dtype=torch.long)

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        count = len(self.x_train)
        while True:  # a source point with its label beside an independently drawn target point
            index = torch.randint(0, count, (micro_batch_size,), generator=generator)
            other = torch.randint(0, count, (micro_batch_size,), generator=generator)
            yield torch.cat([self.x_train[index, :2], self.x_train[other, 2:]], 1), self.y_train[index]

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        rows, labels = batch
        features = model.features(torch.cat([rows[:, :2], rows[:, 2:]]))
        n = len(rows)
        classify = F.cross_entropy(model.label(features[:n]).float(), labels)
        reversed_features = 2.0 * features.detach() - features  # identity forward, -1 × gradient back
        domain = model.domain(reversed_features).squeeze(-1).float()
        is_target = torch.cat([domain.new_zeros(n), domain.new_ones(n)])
        return classify + F.binary_cross_entropy_with_logits(domain, is_target)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float()
        if not torch.isfinite(logits).all():
            return {"val_target_error": math.nan}
        source = model(self.x_source_val).float()
        return {
            "val_target_error": (logits.argmax(-1) != self.y_val).float().mean().item(),
            "val_source_error": (source.argmax(-1) != self.y_source_val).float().mean().item(),
        }

    def build_model(self) -> nn.Module:
        return _DomainAdversarial()


class _DomainAdversarial(nn.Module):
    def __init__(self, width: int = 64) -> None:
        super().__init__()
        self.features = nn.Sequential(nn.Linear(2, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())
        self.label = nn.Linear(width, 2)
        self.domain = _mlp(width, [width // 2], 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.label(self.features(x))


class ParametricTSNE(_Tabular):
    """Nonlinear dimensionality reduction by parametric t-SNE (van der Maaten 2009): a network
    maps 8 × 8 digits (sklearn's ``load_digits``, pixels in [0, 1]; 1,257 / 540) to the plane,
    trained so that the Student-t neighbour probabilities of a mini-batch's images in the plane
    match their Gaussian neighbour probabilities among the pixels (perplexity 10, or a third of
    the batch if less, each point's bandwidth found by bisection within the batch), by the KL
    divergence of the first from the second. The MLP 64-128-128-2 never sees a label. The curve
    rises fast as the map pulls the easy digits into clusters, then slowly as the confusable
    ones are pried apart; the map's scale keeps growing, and too high an LR tears the clusters
    up and leaves the map near where it started. Metric the 5-nearest-neighbour accuracy of the
    held-out images' 2-D embeddings among those of the training images (0.34 at the start,
    0.86 to 0.89 after the planned run at a good LR). Defined as the thirty-third batch of
    fresh workloads, by a helper told of no check."""

    metric = "val_knn_accuracy"
    perplexity, neighbours = 10.0, 5

    def __init__(self) -> None:
        super().__init__(*_digits_split())

    def _affinities(self, x: torch.Tensor) -> torch.Tensor:
        """Symmetric joint probabilities of the batch's points (Gaussian, per-point bandwidth)."""
        squared = torch.cdist(x, x).pow(2)
        eye = torch.eye(len(x), dtype=torch.bool)
        low = torch.full((len(x), 1), 1e-4)
        high = torch.full((len(x), 1), 1e3)
        target = math.log(min(self.perplexity, (len(x) - 1) / 3))
        for _ in range(40):  # bisection on the precision, in log space
            beta = (low * high).sqrt()
            p = torch.softmax((-beta * squared).masked_fill(eye, -math.inf), 1)
            entropy = -(p * p.clamp_min(1e-12).log()).sum(1, keepdim=True)
            too_flat = entropy > target
            low = torch.where(too_flat, beta, low)
            high = torch.where(too_flat, high, beta)
        joint = (p + p.T) / (2 * len(x))
        return joint

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        images, _ = batch
        with torch.no_grad():
            p = self._affinities(images)
        y = model(images).float()
        eye = torch.eye(len(images), dtype=torch.bool)
        kernel = (1.0 + torch.cdist(y, y).pow(2)).reciprocal().masked_fill(eye, 0.0)
        q = kernel / kernel.sum()
        return (p * (p.clamp_min(1e-12).log() - q.clamp_min(1e-12).log())).sum()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        reference, embedded = model(self.x_train).float(), model(self.x_val).float()
        if not (torch.isfinite(reference).all() and torch.isfinite(embedded).all()):
            return {"val_knn_accuracy": math.nan}
        nearest = torch.cdist(embedded, reference).topk(self.neighbours, largest=False).indices
        votes = F.one_hot(self.y_train[nearest], 10).sum(1)
        return {"val_knn_accuracy": (votes.argmax(-1) == self.y_val).float().mean().item()}

    def build_model(self) -> nn.Module:
        return _mlp(64, [128, 128], 2)


class RateDistortionDigits(_Tabular):
    """Learned lossy compression, trained end to end for rate and distortion together (in the
    manner of Ballé, Laparra and Simoncelli 2017) on 8 × 8 digits from sklearn's
    ``load_digits`` (pixels in [0, 1]; 1,257 / 540): an encoder MLP 64-128-16 maps an image to
    16 latents, which are rounded to integers to be stored; in training the rounding is
    replaced by uniform noise of width 1, so the loss has gradients. Each latent's integers are
    coded with a learned discretised logistic distribution (a location and a scale per latent),
    whose negative log-probability in bits is the rate; a decoder MLP 16-128-64 (sigmoid)
    rebuilds the image, whose summed squared error is the distortion. The loss is bits + 40 ×
    squared error, per image. The curve drops fast as the decoder learns the typical digit and
    the encoder starts to spend bits, then slowly as the code and its entropy model share them
    out; the gap between noisy training and rounded evaluation makes too high an LR costly, and
    there the code collapses to a plateau near 190 where the latents carry little. Metric the
    rate-distortion cost per image with true rounding on the held-out images (480 at the start,
    about 64 after the planned run at a good LR, then some 25 bits at 18 dB PSNR; bits and PSNR
    reported beside it). Defined as the thirty-third batch of fresh workloads, by a helper
    told of no check."""

    metric = "val_rd_cost"
    latents, trade_off = 16, 40.0

    def __init__(self) -> None:
        super().__init__(*_digits_split())

    def _cost(self, model: nn.Module, images: torch.Tensor, rounded: bool) -> tuple[torch.Tensor, ...]:
        code = model.encoder(images).float()
        if rounded:
            code = code.round()
        else:
            code = code + torch.rand_like(code) - 0.5
        scale = F.softplus(model.log_scale) + 1e-3
        upper = torch.sigmoid((code + 0.5 - model.location) / scale)
        lower = torch.sigmoid((code - 0.5 - model.location) / scale)
        bits = -(upper - lower).clamp_min(1e-9).log2().sum(1)
        distortion = (torch.sigmoid(model.decoder(code)) - images).pow(2).sum(1)
        return bits, distortion

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        images, _ = batch
        bits, distortion = self._cost(model, images, rounded=False)
        return (bits + self.trade_off * distortion).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        bits, distortion = self._cost(model, self.x_val, rounded=True)
        cost = (bits + self.trade_off * distortion).mean().item()
        if not math.isfinite(cost):
            return {"val_rd_cost": math.nan}
        mse = distortion.mean().item() / 64
        return {"val_rd_cost": cost, "val_bits": bits.mean().item(), "val_psnr": -10.0 * math.log10(mse)}

    def build_model(self) -> nn.Module:
        return _Codec(64, 128, self.latents)


class _Codec(nn.Module):
    def __init__(self, pixels: int, hidden: int, latents: int) -> None:
        super().__init__()
        self.encoder = _mlp(pixels, [hidden], latents)
        self.decoder = _mlp(latents, [hidden], pixels)
        self.location = nn.Parameter(torch.zeros(latents))
        self.log_scale = nn.Parameter(torch.zeros(latents))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.decoder(self.encoder(x).round()))


class GroupDROSpurious(_Tabular):
    """Group distributionally robust optimisation under a spurious correlation (group DRO;
    Sagawa et al. 2020): the label is whether a point lies outside a circle in two core
    Gaussian features (half of them do), but a third feature, a noisy ±1 attribute, agrees with
    the label on 95% of the 4,000 training points (9 more features are noise), so the four
    (label, attribute) groups hold about 1,900, 1,900, 100 and 100 points. The attribute is
    linear and nearly noiseless while the circle needs a bend, so a network fitted by the
    average loss leans on the shortcut and fails the two minority groups. Group DRO keeps a
    weight per group, multiplied by exp(0.05 × the group's mean loss in the batch) each step
    and renormalised, and minimises the weighted sum of the groups' cross-entropies, so the
    minority groups are pulled up as they lag. An MLP 12-64-64-2. The curve first drops towards
    0 as the shortcut is learned, then climbs to about 0.8 as the core rule takes over, while
    too low an LR stays on the shortcut all run long and a high constant LR wobbles as the
    group weights swing. Metric the worst-group accuracy on 2,000 held-out points, 500 per
    group (about 0.3 at the start; the average accuracy reported beside it). Defined as the
    thirty-third batch of fresh workloads, by a helper told of no check."""

    metric = "val_worst_group_accuracy"
    agreement, step_size = 0.95, 0.05

    def __init__(self) -> None:
        rng = np.random.default_rng(829)
        radius = math.sqrt(2 * math.log(2))  # half of a standard 2-D Gaussian lies outside

        def draw(labels: np.ndarray, attributes: np.ndarray) -> np.ndarray:
            core = np.zeros((len(labels), 2))
            for i, label in enumerate(labels):
                while True:
                    point = rng.normal(size=2)
                    if (np.hypot(*point) > radius) == bool(label):
                        core[i] = point
                        break
            spurious = (2 * attributes - 1) + rng.normal(0.0, 0.2, len(labels))
            noise = rng.normal(size=(len(labels), 9))
            return np.concatenate([core, spurious[:, None], noise], 1)

        labels = rng.integers(0, 2, 4000)
        attributes = np.where(rng.random(4000) < self.agreement, labels, 1 - labels)
        val_labels = np.repeat([0, 1, 0, 1], 500)
        val_attributes = np.repeat([0, 1, 1, 0], 500)
        x_train, x_val = draw(labels, attributes), draw(val_labels, val_attributes)
        super().__init__(x_train, labels + 2 * attributes, x_val, val_labels + 2 * val_attributes)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, groups = batch
        losses = F.cross_entropy(model(inputs).float(), groups % 2, reduction="none")
        counts = torch.bincount(groups, minlength=4)
        group_loss = torch.zeros(4).index_add(0, groups, losses) / counts.clamp_min(1)
        with torch.no_grad():
            weights = model.group_weights * torch.exp(self.step_size * group_loss.detach())
            model.group_weights.copy_(weights / weights.sum())
        return (model.group_weights * group_loss).sum()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float()
        if not torch.isfinite(logits).all():
            return {"val_worst_group_accuracy": math.nan}
        correct = (logits.argmax(-1) == self.y_val % 2).float()
        per_group = torch.zeros(4).index_add(0, self.y_val, correct) / torch.bincount(self.y_val, minlength=4)
        return {"val_worst_group_accuracy": per_group.min().item(), "val_accuracy": correct.mean().item()}

    def build_model(self) -> nn.Module:
        model = _mlp(12, [64, 64], 2)
        model.register_buffer("group_weights", torch.full((4,), 0.25))
        return model


class MutualInformationMINE(_Tabular):
    """Mutual information estimation with a neural critic (MINE; Belghazi et al. 2018): pairs
    (x, y) of 5-vectors, y = 0.8 x + 0.6 ε coordinate by coordinate with x and ε standard
    Gaussian, then each coordinate of y bent by y + y³ / 3, an invertible map that leaves the
    mutual information at its Gaussian value, -5/2 · ln(1 - 0.8²) = 2.55 nats (20,000 training
    pairs, standardised). A critic MLP 10-128-128-1 scores a pair and is trained to raise the
    Donsker-Varadhan lower bound, mean T over joint pairs minus log mean exp T over pairs from
    the product of the marginals (the batch's y shifted by one row), with MINE's bias
    correction: the gradient of the log term is divided by a moving average (rate 0.01) of the
    batch's mean exp T rather than by the batch's own. No label is involved; the critic must
    learn the log density ratio, quadratic in x and in the unbent y. The estimate climbs from
    0 fast, then slowly, and stops short of the true value; the exponential inside the bound
    makes it noisy throughout, a high constant LR keeps it swinging by half a nat or more and
    can drop it back to nothing late in the run, too low an LR barely starts, and SGD at its
    centre LR and above overflows within the first hundred steps. Metric the absolute gap
    between the true mutual information and the bound on 5,000 held-out pairs, their product
    pairs again by a shift of one row (2.55 at the start, about 0.3 after the planned run at a
    good LR; the estimate reported beside it). Defined as the thirty-fourth batch of fresh
    workloads, by a helper told of no check."""

    metric = "val_mi_error"
    dims, correlation, average = 5, 0.8, 0.01

    def __init__(self) -> None:
        rng = np.random.default_rng(841)
        noise = math.sqrt(1.0 - self.correlation**2)

        def draw(count: int) -> np.ndarray:
            x = rng.normal(size=(count, self.dims))
            y = self.correlation * x + noise * rng.normal(size=(count, self.dims))
            return np.concatenate([x, y + y**3 / 3.0], 1)  # an invertible bend of y leaves the MI as it was

        train, val = draw(20000), draw(5000)
        scale = train.std(0)
        train, val = train / scale, val / scale
        super().__init__(train, np.zeros(len(train), np.float32), val, np.zeros(len(val), np.float32))
        self.true_mi = -0.5 * self.dims * math.log(1.0 - self.correlation**2)
        d = self.dims
        self.x_val_marginal = torch.cat([self.x_val[:, :d], self.x_val[:, d:].roll(1, 0)], 1)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        pairs, _ = batch
        d = self.dims
        joint = model(pairs).squeeze(-1).float()
        marginal = model(torch.cat([pairs[:, :d], pairs[:, d:].roll(1, 0)], 1)).squeeze(-1).float()
        log_mean_exp = torch.logsumexp(marginal, 0) - math.log(len(pairs))
        with torch.no_grad():  # the moving average of the batch's mean exp(T), kept in log space
            kept = model.log_average + math.log(1.0 - self.average)
            model.log_average.copy_(torch.logaddexp(kept, log_mean_exp + math.log(self.average)))
        # Gradient of mean T(joint) - log E exp T(marginal), its denominator the moving average (MINE).
        return -(joint.mean() - torch.exp(log_mean_exp - model.log_average))

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        joint = model(self.x_val).squeeze(-1).float()
        marginal = model(self.x_val_marginal).squeeze(-1).float()
        estimate = (joint.mean() - (torch.logsumexp(marginal, 0) - math.log(len(marginal)))).item()
        if not math.isfinite(estimate):
            return {"val_mi_error": math.nan}
        return {"val_mi_error": abs(estimate - self.true_mi), "val_mi_estimate": estimate}

    def build_model(self) -> nn.Module:
        model = _mlp(2 * self.dims, [128, 128], 1)
        model.register_buffer("log_average", torch.zeros(()))
        return model


class SparseAutoencoderFeatures(_Tabular):
    """Dictionary learning with a sparse autoencoder, recovering features stored in superposition
    (Sharkey, Braun and Millidge 2022; Bricken et al. 2023): 64 ground-truth feature
    directions, random unit vectors in 32 dimensions, each present in a point with probability
    0.04 at a magnitude uniform in [0, 1], summed, with noise of SD 0.01 (20,000 training /
    2,000 held-out points; about 2.6 features a point, twice as many features as dimensions).
    An overcomplete autoencoder of 128 latents (encoder 32-128 with ReLU, applied after
    subtracting the decoder's bias; linear decoder 128-32) is trained on the squared
    reconstruction error plus 0.2 × the L1 norm of the latents, each weighted by the norm of
    its decoder column. The feature directions are never shown. Recovery rises steadily as
    decoder columns turn towards the features and the surplus latents die, up to 0.99 at a good
    LR (then about 64 latents alive, 3 active a point); too low an LR keeps a dense code of
    blurred directions (0.48 to 0.73), one LR level too high kills nearly every latent early
    on, after which the curve lies flat at 0.5 to 0.6 for the rest of the run, and SGD diverges
    at once from 3 × its centre LR. Metric the mean, over the 64 true features, of the largest
    cosine similarity between a feature and any decoder column (the mean max cosine similarity;
    0.44 at the start; the fraction of variance unexplained, the mean number of active latents
    and the dead latents reported beside it). Defined as the thirty-fourth batch of fresh
    workloads, by a helper told of no check."""

    metric = "val_feature_recovery"
    features, width, latents, density, penalty = 64, 32, 128, 0.04, 0.2

    def __init__(self) -> None:
        rng = np.random.default_rng(853)
        directions = rng.normal(size=(self.features, self.width))
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)

        def draw(count: int) -> np.ndarray:
            active = rng.random((count, self.features)) < self.density
            codes = active * rng.uniform(0.0, 1.0, (count, self.features))
            return codes @ directions + rng.normal(0.0, 0.01, (count, self.width))

        train, val = draw(20000), draw(2000)
        super().__init__(train, np.zeros(len(train), np.float32), val, np.zeros(len(val), np.float32))
        self.directions = torch.tensor(directions, dtype=torch.float32)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        x, _ = batch
        codes = model.encode(x)
        error = (model.decoder(codes).float() - x).pow(2).sum(1).mean()
        sparsity = (codes.float() * model.decoder.weight.norm(dim=0)).sum(1).mean()
        return error + self.penalty * sparsity

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        codes = model.encode(self.x_val).float()
        rebuilt, atoms = model.decoder(codes).float(), model.decoder.weight.float()
        if not (torch.isfinite(atoms).all() and torch.isfinite(rebuilt).all()):
            return {"val_feature_recovery": math.nan}
        cosines = self.directions @ F.normalize(atoms, dim=0)
        unexplained = (rebuilt - self.x_val).pow(2).sum() / (self.x_val - self.x_val.mean(0)).pow(2).sum()
        return {
            "val_feature_recovery": cosines.max(1).values.mean().item(),
            "val_fvu": unexplained.item(),
            "val_l0": (codes > 0).float().sum(1).mean().item(),
            "val_dead_latents": float((codes.amax(0) <= 0).sum().item()),
        }

    def build_model(self) -> nn.Module:
        return _SparseAutoencoder(self.width, self.latents)


class _SparseAutoencoder(nn.Module):
    def __init__(self, width: int, latents: int) -> None:
        super().__init__()
        self.encoder = nn.Linear(width, latents)
        self.decoder = nn.Linear(latents, width)

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.encoder(x - self.decoder.bias))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.encode(x))


class PolynomialRootSets(_Tabular):
    """Set prediction with a permutation-invariant matched loss (as DETR trains its detections,
    Carion et al. 2020): from the 4 complex coefficients of a monic quartic (8 real numbers,
    standardised) predict its 4 complex roots, drawn uniformly in the unit disk, as an
    unordered set (20,000 / 2,000 polynomials). An MLP 8-256-256-8 outputs four points in the
    plane, and the loss is their summed squared distance to the true roots under the best of
    the 24 matchings, so the network may label the roots as it likes; but the roots follow the
    coefficients continuously only as a set: any labelling has seams where two roots trade
    places, which a continuous network can only blur, so the error never reaches zero. The
    error falls fast to about 0.3, then slowly, still falling at the end of the planned run;
    too low an LR ends at 0.25 to 0.3, the highest levels end worse and noisier (0.18), and SGD
    at 10 × its centre LR diverges at once. Metric the mean distance between predicted and true
    roots under the best matching, on the held-out polynomials (0.61 at the start, 0.66 for
    predicting the origin, about 0.15 after the planned run at a good LR; the matched squared
    error reported beside it). Defined as the thirty-fourth batch of fresh workloads, by a
    helper told of no check."""

    metric = "val_root_distance"
    degree = 4

    def __init__(self) -> None:
        import itertools

        rng = np.random.default_rng(859)

        def draw(count: int) -> tuple[np.ndarray, np.ndarray]:
            radius = np.sqrt(rng.random((count, self.degree)))
            roots = radius * np.exp(1j * rng.uniform(0.0, 2 * math.pi, (count, self.degree)))
            coefficients = np.zeros((count, self.degree + 1), complex)
            coefficients[:, 0] = 1.0
            for k in range(self.degree):  # multiply by (z - r_k)
                product = coefficients.copy()
                product[:, 1:] -= roots[:, k : k + 1] * coefficients[:, :-1]
                coefficients = product
            inputs = np.concatenate([coefficients[:, 1:].real, coefficients[:, 1:].imag], 1)
            return inputs, np.stack([roots.real, roots.imag], -1).reshape(count, -1)

        x_train, y_train = draw(20000)
        x_val, y_val = draw(2000)
        x_train, x_val = _standardise(x_train, x_val)
        super().__init__(x_train, y_train.astype(np.float32), x_val, y_val.astype(np.float32))
        self.permutations = torch.tensor(list(itertools.permutations(range(self.degree))))

    def _squared(self, model: nn.Module, inputs: torch.Tensor, roots: torch.Tensor) -> torch.Tensor:
        """Per polynomial and matching, the squared distance of each predicted root to its true one."""
        predicted = model(inputs).float().view(len(inputs), self.degree, 2)[:, self.permutations]
        return (predicted - roots.view(len(inputs), 1, self.degree, 2)).pow(2).sum(-1)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, roots = batch
        return self._squared(model, inputs, roots).sum(-1).min(1).values.mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        squared = self._squared(model, self.x_val, self.y_val)
        if not torch.isfinite(squared).all():
            return {"val_root_distance": math.nan}
        return {
            "val_root_distance": squared.sqrt().mean(-1).min(1).values.mean().item(),
            "val_matched_mse": squared.sum(-1).min(1).values.mean().item(),
        }

    def build_model(self) -> nn.Module:
        return _mlp(2 * self.degree, [256, 256], 2 * self.degree)


class DigitRegistration(_Tabular):
    """Unsupervised deformable image registration (in the manner of VoxelMorph, Balakrishnan et
    al. 2019): a network looks at two images of the same digit class (sklearn's
    ``load_digits``, upsampled to 16 × 16; 1,257 training / 540 held-out images), the first
    rotated (up to ±29°), zoomed (±15%) and shifted (up to 2 pixels) at random, and outputs a
    dense displacement field along which the first is resampled (bilinear) to look like the
    second. No correspondence is given: the loss is the mean squared difference between the
    warped and the fixed image plus 0.05 × the squared differences of neighbouring
    displacements (a smoothness penalty). The network is a small convolutional encoder-decoder
    with skip connections (8, 16, 16 channels down to 4 × 4 and back up), its last layer
    started near zero so that it begins at the identity. The similarity climbs fast once the
    field starts to move and slowly as finer detail is matched; too low an LR rises late and
    ends far lower, and too high an LR stalls between 0.5 and 0.85 or throws the image out of
    the frame, so the warped image goes blank and the similarity drops to 0 for good (LAMB).
    Metric the mean normalised cross-correlation between the warped and the fixed image over
    500 held-out pairs, their distortions fixed (0.55 unregistered, about 0.93 after the
    planned run at a good LR; the MSE reported beside it). Defined as the thirty-fourth batch
    of fresh workloads, by a helper told of no check."""

    metric = "val_ncc"
    size, smoothness, val_pairs = 16, 0.05, 500
    rotation, shift, zoom = 0.5, 0.25, 0.15  # radians, a fraction of the half-width, relative

    def __init__(self) -> None:
        x_train, y_train, x_val, y_val = _digits_split()

        def upsample(images: np.ndarray) -> np.ndarray:
            pixels = torch.tensor(images, dtype=torch.float32).view(-1, 1, 8, 8)
            return F.interpolate(pixels, size=self.size, mode="bilinear", align_corners=False).numpy()

        super().__init__(upsample(x_train), y_train, upsample(x_val), y_val)
        self.order = torch.argsort(self.y_train, stable=True)
        counts = torch.bincount(self.y_train, minlength=10)
        self.counts, self.starts = counts, torch.cumsum(counts, 0) - counts
        shape = [1, 1, self.size, self.size]
        self.identity = F.affine_grid(torch.eye(2, 3)[None], shape, align_corners=False)
        rng = np.random.default_rng(863)
        moving = rng.integers(0, len(y_val), self.val_pairs)
        others = [np.flatnonzero((y_val == y_val[i]) & (np.arange(len(y_val)) != i)) for i in moving]
        fixed = np.array([rng.choice(candidates) for candidates in others])
        self.val_moving = self._distort(self.x_val[moving], torch.Generator().manual_seed(863))
        self.val_fixed = self.x_val[fixed]

    def _distort(self, images: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """Each image rotated, zoomed and shifted at random (a smooth warp for the network to undo)."""
        count = len(images)
        angle = (torch.rand(count, generator=generator) * 2 - 1) * self.rotation
        zoom = 1 + (torch.rand(count, generator=generator) * 2 - 1) * self.zoom
        shift = (torch.rand(count, 2, generator=generator) * 2 - 1) * self.shift
        cos, sin = torch.cos(angle) / zoom, torch.sin(angle) / zoom
        rows = [torch.stack([cos, -sin, shift[:, 0]], 1), torch.stack([sin, cos, shift[:, 1]], 1)]
        grid = F.affine_grid(torch.stack(rows, 1), [count, 1, self.size, self.size], align_corners=False)
        return F.grid_sample(images, grid, padding_mode="zeros", align_corners=False)

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        count = len(self.x_train)
        while True:  # a distorted image beside another of the same digit class, drawn at random
            index = torch.randint(0, count, (micro_batch_size,), generator=generator)
            labels = self.y_train[index]
            offset = (torch.rand(micro_batch_size, generator=generator) * self.counts[labels]).long()
            partner = self.order[self.starts[labels] + offset]
            moving = self._distort(self.x_train[index], generator)
            yield torch.cat([moving, self.x_train[partner]], 1), labels

    def _warp(self, model: nn.Module, pairs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        flow = model(pairs).float()
        grid = self.identity + flow.permute(0, 2, 3, 1)
        return F.grid_sample(pairs[:, :1], grid, padding_mode="zeros", align_corners=False), flow

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        pairs, _ = batch
        warped, flow = self._warp(model, pairs)
        down = (flow[:, :, 1:] - flow[:, :, :-1]).pow(2).mean()
        across = (flow[..., 1:] - flow[..., :-1]).pow(2).mean()
        return F.mse_loss(warped, pairs[:, 1:]) + self.smoothness * (down + across)

    @staticmethod
    def _ncc(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a, b = a.flatten(1), b.flatten(1)
        a, b = a - a.mean(1, keepdim=True), b - b.mean(1, keepdim=True)
        return (a * b).sum(1) / (a.norm(dim=1) * b.norm(dim=1)).clamp_min(1e-8)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        warped, _ = self._warp(model, torch.cat([self.val_moving, self.val_fixed], 1))
        if not torch.isfinite(warped).all():
            return {"val_ncc": math.nan}
        return {
            "val_ncc": self._ncc(warped, self.val_fixed).mean().item(),
            "val_identity_ncc": self._ncc(self.val_moving, self.val_fixed).mean().item(),
            "val_mse": F.mse_loss(warped, self.val_fixed).item(),
        }

    def build_model(self) -> nn.Module:
        return _RegistrationNet()


class _RegistrationNet(nn.Module):
    def __init__(self, channels: int = 8) -> None:
        super().__init__()
        c = channels
        self.down1 = nn.Conv2d(2, c, 3, padding=1)
        self.down2 = nn.Conv2d(c, 2 * c, 3, stride=2, padding=1)
        self.down3 = nn.Conv2d(2 * c, 2 * c, 3, stride=2, padding=1)
        self.up2 = nn.Conv2d(4 * c, 2 * c, 3, padding=1)
        self.up1 = nn.Conv2d(3 * c, c, 3, padding=1)
        self.flow = nn.Conv2d(c, 2, 3, padding=1)
        nn.init.normal_(self.flow.weight, 0.0, 1e-3)  # a field near zero: the identity warp
        nn.init.zeros_(self.flow.bias)

    def forward(self, pairs: torch.Tensor) -> torch.Tensor:
        first = F.relu(self.down1(pairs))
        second = F.relu(self.down2(first))
        third = F.relu(self.down3(second))
        up = F.relu(self.up2(torch.cat([F.interpolate(third, scale_factor=2.0), second], 1)))
        up = F.relu(self.up1(torch.cat([F.interpolate(up, scale_factor=2.0), first], 1)))
        return self.flow(up)


class PreferenceRewardModel(_Tabular):
    """Reward modelling from pairwise preferences (the Bradley-Terry model, as reward models
    for RLHF are trained; Christiano et al. 2017): items are 16-dimensional Gaussian feature
    vectors whose hidden reward is a fixed nonlinear function of four projections of them
    (a sine, a square, an absolute value and a linear term, scaled to SD 2). 20,000 training
    comparisons between two of 4,000 items each carry only which item a simulated annotator
    preferred, drawn with probability sigmoid(reward difference), so many of them disagree
    with the true order. An MLP 16-64-64-1 scores each item, trained by the logistic
    loss on the score difference of each pair. The rank correlation climbs fast (about 0.6
    after the first 1,024 comparisons) as the linear and square terms are found, then slowly to
    about 0.9 at a good LR; too low an LR ends near 0.55, and the label noise makes a high
    constant LR swing between 0.55 and 0.85 (SGD diverges at its highest levels). Metric the
    Spearman rank correlation of the predicted scores with the true rewards of 1,000 held-out
    items (-0.05 to 0.2 at the start; the
    preference accuracy on 5,000 held-out noisy comparisons reported beside it). Defined as
    the thirty-fifth batch of fresh workloads, by a helper told of no check."""

    metric = "val_reward_spearman"
    features, items, pairs = 16, 4000, 20000

    def __init__(self) -> None:
        rng = np.random.default_rng(877)
        projections = rng.normal(size=(4, self.features)) / math.sqrt(self.features) * 1.5

        def reward(x: np.ndarray) -> np.ndarray:
            h = x @ projections.T
            return 1.5 * np.sin(2.0 * h[:, 0]) + h[:, 1] ** 2 - 1.5 * np.abs(h[:, 2]) + h[:, 3]

        items, val_items = (
            rng.normal(size=(self.items, self.features)),
            rng.normal(size=(1000, self.features)),
        )
        scale = 2.0 / reward(items).std()

        def compare(pool: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
            first, second = rng.integers(0, len(pool), count), rng.integers(0, len(pool), count)
            margin = scale * (reward(pool[first]) - reward(pool[second]))
            preferred = rng.random(count) < 1.0 / (1.0 + np.exp(-margin))
            return np.concatenate([pool[first], pool[second]], 1), preferred.astype(np.float32)

        x_train, y_train = compare(items, self.pairs)
        x_pairs, y_pairs = compare(val_items, 5000)
        super().__init__(x_train, y_train, val_items, (scale * reward(val_items)).astype(np.float32))
        self.x_val_pairs = torch.tensor(x_pairs, dtype=torch.float32)
        self.y_val_pairs = torch.tensor(y_pairs, dtype=torch.float32)

    def _margin(self, model: nn.Module, pairs: torch.Tensor) -> torch.Tensor:
        scores = model(torch.cat([pairs[:, : self.features], pairs[:, self.features :]])).squeeze(-1).float()
        return scores[: len(pairs)] - scores[len(pairs) :]

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        pairs, preferred = batch
        return F.binary_cross_entropy_with_logits(self._margin(model, pairs), preferred)

    @staticmethod
    def _ranks(values: torch.Tensor) -> torch.Tensor:
        return torch.argsort(torch.argsort(values)).float()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        scores = model(self.x_val).squeeze(-1).float()
        margin = self._margin(model, self.x_val_pairs)
        if not (torch.isfinite(scores).all() and torch.isfinite(margin).all()):
            return {"val_reward_spearman": math.nan}
        a, b = self._ranks(scores), self._ranks(self.y_val)
        a, b = a - a.mean(), b - b.mean()
        spearman = (a * b).sum() / (a.norm() * b.norm()).clamp_min(1e-8)
        return {
            "val_reward_spearman": spearman.item(),
            "val_preference_accuracy": ((margin > 0).float() == self.y_val_pairs).float().mean().item(),
        }

    def build_model(self) -> nn.Module:
        return _mlp(self.features, [64, 64], 1)


class DatasetDistillation(_Tabular):
    """Dataset distillation (Wang et al. 2018): learn a tiny synthetic training set, two 8 × 8
    images per digit class (20 images, their labels fixed), such that a linear softmax
    classifier trained on it alone, from zero weights by 10 steps of full-batch gradient
    descent at a learned step size, classifies real digits well. The outer loss is the
    cross-entropy of that inner classifier on a mini-batch of real training digits (sklearn's
    ``load_digits``, pixels in [0, 1]; 1,257 / 540), backpropagated through the 10 unrolled
    inner steps into the synthetic pixels and the inner step size. The synthetic images start
    as Gaussian noise, so the first classifier is no better than chance; the accuracy climbs
    fast as the images take on their class's mean shape, then slowly as they become
    discriminative templates, to 0.91 to 0.96 at a good LR (AdamW tolerates high LRs here);
    too low an LR ends near 0.3, and SGD at its highest LR blows up the inner step and stays at
    chance. Metric the accuracy on the 540 held-out digits of the classifier trained on the
    synthetic set (0.10 to 0.15 at the start; the cross-entropy reported beside it).
    Defined as the thirty-fifth batch of fresh workloads, by a helper told of no check."""

    metric = "val_accuracy"
    per_class, inner_steps = 2, 10

    def __init__(self) -> None:
        super().__init__(*_digits_split())
        self.synthetic_labels = torch.arange(10).repeat_interleave(self.per_class)

    def _inner(self, model: nn.Module) -> tuple[torch.Tensor, torch.Tensor]:
        images = model.images.float()
        targets = F.one_hot(self.synthetic_labels, 10).float()
        step = model.log_step.float().exp()
        weight = images.new_zeros(images.shape[1], 10)
        bias = images.new_zeros(10)
        for _ in range(self.inner_steps):  # gradient descent on the mean cross-entropy, unrolled
            error = (torch.softmax(images @ weight + bias, 1) - targets) / len(images)
            weight = weight - step * images.T @ error
            bias = bias - step * error.sum(0)
        return weight, bias

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        images, labels = batch
        weight, bias = self._inner(model)
        return F.cross_entropy(images @ weight + bias, labels)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        weight, bias = self._inner(model)
        logits = self.x_val @ weight + bias
        if not torch.isfinite(logits).all():
            return {"val_accuracy": math.nan}
        return {
            "val_accuracy": (logits.argmax(-1) == self.y_val).float().mean().item(),
            "val_loss": F.cross_entropy(logits, self.y_val).item(),
        }

    def build_model(self) -> nn.Module:
        return _DistilledSet(10 * self.per_class, 64)


class _DistilledSet(nn.Module):
    def __init__(self, count: int, pixels: int) -> None:
        super().__init__()
        self.images = nn.Parameter(0.3 * torch.randn(count, pixels))
        self.log_step = nn.Parameter(torch.tensor(math.log(0.3)))


class GraphColouringGNN(_Tabular):
    """Unsupervised neural combinatorial optimisation (in the manner of Schuetz, Brubaker and
    Katzgraber 2022, here one network for many graphs): a graph neural network colours the
    nodes of random 3-colourable graphs (24 nodes, a hidden colouring planted, edges only
    between differently coloured nodes, mean degree 4.5; 3,000 training / 500 held-out graphs)
    with 3 colours. No colouring is ever shown: the loss is the expected fraction of
    monochromatic edges when each node draws its colour from the network's softmax (the Potts
    relaxation), sum over edges of p_i · p_j. Each node starts from 8 random features (breaking
    the symmetry between colours) and its degree; 5 rounds of mean-aggregation message passing
    (width 64, residual) precede a linear head to 3 logits. The untrained network gives most
    nodes one colour; the conflict rate falls fast below a third (random colours) as the
    network learns to split neighbours, then slowly to about 0.06 at a good LR as it settles
    the odd cycles; too low an LR ends at 0.13 to 0.25, and one level too high (3 x AdamW's
    centre, SGD at its centre) collapses every node onto one colour, the rate 1.0 for the rest
    of the run. Metric the fraction of edges whose two ends get the same colour under the
    argmax colouring, over the held-out graphs (0.76 to 1.0 at the start; the relaxed expected
    rate reported beside it). Defined as the thirty-fifth batch of fresh workloads, by a helper
    told of no check."""

    metric = "val_conflict_rate"
    nodes, colours, features, degree = 24, 3, 8, 4.5

    def __init__(self) -> None:
        rng = np.random.default_rng(881)
        n = self.nodes

        def draw(count: int) -> np.ndarray:
            planted = rng.integers(0, self.colours, (count, n))
            allowed = planted[:, :, None] != planted[:, None, :]
            chance = self.degree / (n * (1 - 1 / self.colours))
            upper = np.triu(rng.random((count, n, n)) < chance, 1) & allowed
            adjacency = (upper | upper.transpose(0, 2, 1)).astype(np.float32)
            features = rng.normal(size=(count, n * self.features))
            return np.concatenate([adjacency.reshape(count, -1), features], 1)

        train, val = draw(3000), draw(500)
        super().__init__(train, np.zeros(len(train), np.float32), val, np.zeros(len(val), np.float32))

    def _split_graphs(self, rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        n = self.nodes
        return rows[:, : n * n].view(-1, n, n), rows[:, n * n :].view(-1, n, self.features)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        adjacency, features = self._split_graphs(batch[0])
        p = torch.softmax(model(adjacency, features).float(), -1)
        conflicts = ((p @ p.transpose(1, 2)) * adjacency).sum((1, 2))
        return (conflicts / adjacency.sum((1, 2)).clamp_min(1.0)).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        adjacency, features = self._split_graphs(self.x_val)
        logits = model(adjacency, features).float()
        if not torch.isfinite(logits).all():
            return {"val_conflict_rate": math.nan}
        colour = logits.argmax(-1)
        same = (colour[:, :, None] == colour[:, None, :]).float()
        p = torch.softmax(logits, -1)
        edges = adjacency.sum()
        return {
            "val_conflict_rate": ((same * adjacency).sum() / edges).item(),
            "val_expected_conflicts": (((p @ p.transpose(1, 2)) * adjacency).sum() / edges).item(),
        }

    def build_model(self) -> nn.Module:
        return _ColouringGNN(self.features, 64, self.colours, 5)


class _ColouringGNN(nn.Module):
    def __init__(self, features: int, width: int, colours: int, rounds: int) -> None:
        super().__init__()
        self.embed = nn.Linear(features + 1, width)
        self.own = nn.ModuleList(nn.Linear(width, width) for _ in range(rounds))
        self.neighbours = nn.ModuleList(nn.Linear(width, width, bias=False) for _ in range(rounds))
        self.head = nn.Linear(width, colours)

    def forward(self, adjacency: torch.Tensor, features: torch.Tensor) -> torch.Tensor:
        degree = adjacency.sum(-1, keepdim=True)
        h = F.relu(self.embed(torch.cat([features, degree / 4.0], -1)))
        for own, neighbours in zip(self.own, self.neighbours, strict=True):
            h = h + F.relu(own(h) + neighbours(adjacency @ h / degree.clamp_min(1.0)))
        return self.head(h)


class BurgersLearnedStepper(_Tabular):
    """A learned coarse-grid PDE solver (in the manner of Bar-Sinai et al. 2019 and Kochkov et
    al. 2021): viscous Burgers' equation u_t + u u_x = 0.04 u_xx on a periodic interval of
    length 2π, solved accurately (pseudo-spectral, 128 points, RK4 with step 0.005) from
    random smooth initial states (three sine modes of decaying amplitude), is sampled every
    0.1 time units on a grid 4 times coarser (32 cell averages), where the steepening fronts
    are under-resolved and a plain finite-difference step would smear or ring. A periodic
    convolutional network (kernels of 5, 32 channels, three layers, GELU) predicts the change
    over one coarse step divided by the step, trained by MSE on 20 consecutive steps of 300
    trajectories (6,000 pairs). The network starts near the identity map. The rollout error
    falls fast as advection and diffusion are learned, then slowly as the fronts are fitted,
    to 0.01 to 0.05 at a good LR; too low an LR ends near 0.15, errors compound over the
    rollout, so too high an LR can leave a model whose rollouts drift (the state is clipped to
    ±5; LAMB at its highest LR stalls at 0.56), and SGD diverges from 3 x its centre. Metric
    the relative L2 error after rolling the network out 10 coarse steps (1 time unit) from the
    initial states of 60 held-out trajectories, mean over them (0.56 at the start, the
    identity map; the one-step error reported beside it). Defined as the thirty-fifth batch of fresh workloads, by a helper told of no check."""

    metric = "val_rollout_error"
    fine, coarse, viscosity, dt, substeps, steps, rollout = 128, 32, 0.04, 0.1, 20, 20, 10

    def __init__(self) -> None:
        rng = np.random.default_rng(883)
        train, val = self._simulate(rng, 300), self._simulate(rng, 60)
        x_train = train[:, :-1].reshape(-1, self.coarse)
        y_train = train[:, 1:].reshape(-1, self.coarse)
        super().__init__(
            x_train, y_train.astype(np.float32), val[:, 0], val[:, self.rollout].astype(np.float32)
        )
        self.val_first = torch.tensor(val[:, 1], dtype=torch.float32)

    def _simulate(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """Trajectories (count, steps + 1, coarse): cell averages every dt."""
        x = np.linspace(0.0, 2 * math.pi, self.fine, endpoint=False)
        u = np.zeros((count, self.fine))
        for k in (1, 2, 3):
            amplitude = rng.uniform(0.3, 1.0, (count, 1)) / k
            u += amplitude * np.sin(k * x + rng.uniform(0.0, 2 * math.pi, (count, 1)))
        wavenumber = np.fft.rfftfreq(self.fine, 1.0 / self.fine)
        keep = wavenumber < self.fine / 3  # 2/3 dealiasing

        def rate(v: np.ndarray) -> np.ndarray:
            spectrum = np.fft.rfft(v)
            flux = np.fft.rfft(0.5 * v * v) * keep
            return np.fft.irfft(
                -1j * wavenumber * flux - self.viscosity * wavenumber**2 * spectrum, self.fine
            )

        h = self.dt / self.substeps
        frames = [u]
        for _ in range(self.steps):
            for _ in range(self.substeps):
                k1 = rate(u)
                k2 = rate(u + 0.5 * h * k1)
                k3 = rate(u + 0.5 * h * k2)
                k4 = rate(u + h * k3)
                u = u + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            frames.append(u)
        fine = np.stack(frames, 1)
        return fine.reshape(count, self.steps + 1, self.coarse, -1).mean(-1)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        state, following = batch
        return F.mse_loss(model(state).float(), (following - state) / self.dt)

    def _step(self, model: nn.Module, state: torch.Tensor) -> torch.Tensor:
        return (state + self.dt * model(state).float()).clamp(-5.0, 5.0)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        state = self.x_val
        one_step = self._step(model, state)
        for _ in range(self.rollout):
            state = self._step(model, state)
        if not torch.isfinite(state).all():
            return {"val_rollout_error": math.nan}

        def relative(a: torch.Tensor, b: torch.Tensor) -> float:
            return ((a - b).norm(dim=1) / b.norm(dim=1)).mean().item()

        return {
            "val_rollout_error": relative(state, self.y_val),
            "val_one_step_error": relative(one_step, self.val_first),
        }

    def build_model(self) -> nn.Module:
        return _PeriodicConvStepper(32)


class _PeriodicConvStepper(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            [
                nn.Conv1d(1, channels, 5, padding=2, padding_mode="circular"),
                nn.Conv1d(channels, channels, 5, padding=2, padding_mode="circular"),
                nn.Conv1d(channels, 1, 5, padding=2, padding_mode="circular"),
            ]
        )
        nn.init.normal_(self.layers[-1].weight, 0.0, 1e-3)  # near the identity step
        nn.init.zeros_(self.layers[-1].bias)

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        h = u.unsqueeze(1)
        for layer in self.layers[:-1]:
            h = F.gelu(layer(h))
        return self.layers[-1](h).squeeze(1)


class TomographyNeuralField(_Tabular):
    """Computed tomography by a neural field (in the manner of NeRP, Shen et al. 2022): the
    modified Shepp-Logan head phantom (ten ellipses, its skull thickened to be resolved on a
    64 x 64 grid) on [-1, 1]^2 is seen only through its
    parallel-beam projections, 45 angles over 180 degrees by 64 detector offsets (2,880 line
    integrals, computed by fine quadrature, with Gaussian noise of 1% of the largest). A
    coordinate network, fixed random Fourier features (32 frequencies, scale 6) and an MLP
    64-64-64-1, is trained so that its own line integrals, estimated from 32 stratified random
    points along each ray, match the measured ones by MSE; the image itself is never shown.
    The error falls fast as the skull and the bulk of the brain appear, then slowly as the
    small ellipses are carved out, to about 0.3 at a good LR, still falling at the end; with
    so few angles the field keeps streaks, and too low an LR leaves a blur near 0.8. Metric the
    relative L2 error of the field on a 64 x 64 pixel grid against the true phantom (1.0 for
    an empty image, 0.9 to 1.2 at the start; the PSNR reported beside it). Defined as the thirty-sixth batch of fresh workloads, by a
    helper told of no check."""

    metric = "val_relative_error"
    angles, detectors, ray_points, grid = 45, 64, 32, 64
    # modified Shepp-Logan (Toft): density, semi-axes a and b, centre x and y, angle in degrees
    ellipses = (
        (1.0, 0.69, 0.92, 0.0, 0.0, 0.0),
        (-0.8, 0.6, 0.82, 0.0, -0.0184, 0.0),
        (-0.2, 0.11, 0.31, 0.22, 0.0, -18.0),
        (-0.2, 0.16, 0.41, -0.22, 0.0, 18.0),
        (0.1, 0.21, 0.25, 0.0, 0.35, 0.0),
        (0.1, 0.046, 0.046, 0.0, 0.1, 0.0),
        (0.1, 0.046, 0.046, 0.0, -0.1, 0.0),
        (0.1, 0.046, 0.023, -0.08, -0.605, 0.0),
        (0.1, 0.023, 0.023, 0.0, -0.606, 0.0),
        (0.1, 0.023, 0.046, 0.06, -0.605, 0.0),
    )

    def __init__(self) -> None:
        rng = np.random.default_rng(887)
        theta = np.repeat(np.linspace(0.0, math.pi, self.angles, endpoint=False), self.detectors)
        offset = np.tile(np.linspace(-1.0, 1.0, self.detectors + 2)[1:-1], self.angles)
        rays = np.stack([np.cos(theta), np.sin(theta), offset], 1)
        t = np.linspace(-1.0, 1.0, 1025)[:-1] + 1.0 / 1024
        along = np.stack([-rays[:, 1:2] * t, rays[:, 0:1] * t], -1)  # (rays, points, 2)
        points = rays[:, None, :2] * rays[:, None, 2:] + along
        integrals = self._phantom(points).mean(1) * 2.0
        integrals += rng.normal(0.0, 0.01 * integrals.max(), integrals.shape)
        centres = (np.arange(self.grid) + 0.5) / self.grid * 2 - 1
        y, x = np.meshgrid(centres[::-1], centres, indexing="ij")
        pixels = np.stack([x, y], -1).reshape(-1, 2)
        super().__init__(rays, integrals.astype(np.float32), pixels, self._phantom(pixels).astype(np.float32))

    def _phantom(self, points: np.ndarray) -> np.ndarray:
        image = np.zeros(points.shape[:-1])
        for density, a, b, cx, cy, degrees in self.ellipses:
            phi = math.radians(degrees)
            dx, dy = points[..., 0] - cx, points[..., 1] - cy
            u = dx * math.cos(phi) + dy * math.sin(phi)
            v = -dx * math.sin(phi) + dy * math.cos(phi)
            image += density * ((u / a) ** 2 + (v / b) ** 2 <= 1.0)
        return image

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        rays, integrals = batch
        count = self.ray_points
        t = -1.0 + 2.0 * (torch.arange(count) + torch.rand(len(rays), count)) / count  # stratified
        direction = torch.stack([-rays[:, 1], rays[:, 0]], -1)
        points = rays[:, None, :2] * rays[:, None, 2:] + t[..., None] * direction[:, None]
        estimate = model(points.reshape(-1, 2)).float().view(len(rays), count).mean(1) * 2.0
        return F.mse_loss(estimate, integrals)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        image = model(self.x_val).float().squeeze(-1)
        if not torch.isfinite(image).all():
            return {"val_relative_error": math.nan}
        mse = (image - self.y_val).pow(2).mean()
        return {
            "val_relative_error": ((image - self.y_val).norm() / self.y_val.norm()).item(),
            "val_psnr": (10.0 * torch.log10(self.y_val.max() ** 2 / mse.clamp_min(1e-12))).item(),
        }

    def build_model(self) -> nn.Module:
        return _FourierField(32, 6.0, 64)


class _FourierField(nn.Module):
    def __init__(self, frequencies: int, scale: float, width: int) -> None:
        super().__init__()
        generator = torch.Generator().manual_seed(887)  # the same features for every seed
        self.register_buffer("basis", scale * torch.randn(2, frequencies, generator=generator))
        self.mlp = _mlp(2 * frequencies, [width, width], 1)

    def forward(self, points: torch.Tensor) -> torch.Tensor:
        projected = points @ self.basis
        return self.mlp(torch.cat([torch.sin(projected), torch.cos(projected)], -1))


class DensityMapCounting(_Tabular):
    """Object counting by density-map regression (Lempitsky and Zisserman 2010, as crowd and
    cell counters are trained): 16 x 16 grey images hold between 0 and 20 small bright
    "cells" (Gaussian spots of width 0.7 to 1.1 pixels, brightness 0.5 to 1, often touching)
    among 0 to 3 large dim blobs (width 2.5, distractors), on a noisy background (SD 0.05). A
    fully convolutional network (1-16-16-16-1 channels, 3 x 3 kernels, ReLU) outputs a density
    map, trained by squared error against the map of unit Gaussians (width 1) at the cells'
    centres; the count is the map's sum (3,000 / 500 images; loss scaled by 10). No count is given
    to the loss directly. The count error falls fast as the network learns to fire on spots,
    then slowly, to 0.7 to 1.4 at a good LR, as it learns to split touching cells and to ignore
    the blobs; too low an LR ends near 2, and too high an LR kills the network into a constant
    map (5.1, the error of always guessing the mean count) or, under SGD, diverges. Metric the
    mean absolute error of the counts on the held-out images (12 to 30 at the start; the
    relative count error reported beside it). Defined as the thirty-sixth batch of fresh workloads, by a
    helper told of no check."""

    metric = "val_count_mae"
    size, most = 16, 20

    def __init__(self) -> None:
        rng = np.random.default_rng(889)
        grid = np.arange(self.size) + 0.5

        def spots(centres: np.ndarray, widths: np.ndarray, heights: np.ndarray) -> np.ndarray:
            dy = grid[:, None, None] - centres[None, None, :, 0]
            dx = grid[None, :, None] - centres[None, None, :, 1]
            return (heights * np.exp(-(dx**2 + dy**2) / (2 * widths**2))).sum(-1)

        def draw(count: int) -> tuple[np.ndarray, np.ndarray]:
            images = np.zeros((count, 1, self.size, self.size), np.float32)
            maps = np.zeros_like(images)
            for i in range(count):
                cells = rng.integers(0, self.most + 1)
                centres = rng.uniform(1.0, self.size - 1.0, (cells, 2))
                image = spots(centres, rng.uniform(0.7, 1.1, cells), rng.uniform(0.5, 1.0, cells))
                blobs = rng.integers(0, 4)
                image += spots(
                    rng.uniform(2.0, self.size - 2.0, (blobs, 2)), np.full(blobs, 2.5), np.full(blobs, 0.3)
                )
                images[i, 0] = image + rng.normal(0.0, 0.05, image.shape)
                maps[i, 0] = spots(centres, np.ones(cells), np.full(cells, 1 / (2 * math.pi)))
            return images, maps

        x_train, y_train = draw(3000)
        x_val, y_val = draw(500)
        super().__init__(x_train, y_train, x_val, y_val)
        self.val_counts = torch.tensor(y_val.sum((1, 2, 3)).round(), dtype=torch.float32)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        images, maps = batch
        return 10.0 * F.mse_loss(model(images).float(), maps)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        counts = model(self.x_val).float().sum((1, 2, 3))
        if not torch.isfinite(counts).all():
            return {"val_count_mae": math.nan}
        error = (counts - self.val_counts).abs()
        return {
            "val_count_mae": error.mean().item(),
            "val_relative_count_error": (error.sum() / self.val_counts.sum()).item(),
        }

    def build_model(self) -> nn.Module:
        c = 16
        return nn.Sequential(
            nn.Conv2d(1, c, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(c, c, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(c, c, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(c, 1, 3, padding=1),
        )


class SelectiveClassification(_Tabular):
    """Selective classification with a learned reject option (Deep Gamblers; Liu et al. 2019):
    a 4-class problem (``make_classification``, 12 features, 6 informative, 2 clusters a class;
    4,200 / 1,800 standardised) in which, wherever the first informative feature exceeds 1.0
    (27% of the points), 80% of the labels are redrawn at random, so that region
    can never be classified well. An MLP 12-64-64-5 outputs the 4 classes and an abstention
    option; trained by the gambler's loss -log(p_label + p_abstain / 2.2) plus the
    cross-entropy of the 4 class logits alone (without it the abstention option swallows every
    point early on and the class scores die), it learns to put its abstention mass where its
    bets would lose. The selective risk falls fast as the classes are learned and more slowly
    as the abstention score learns to pick out the noisy region, to 0.09 to 0.13 at a good LR;
    too low an LR ends near 0.53, and too high an LR (Lion) stalls near 0.34. Metric the
    selective risk at 70% coverage: the error rate on the 70% of held-out points with the
    lowest abstention probability (0.79 to 0.84 at the start; the error over all points
    reported beside it). Defined as the thirty-sixth batch of fresh workloads, by
    a helper told of no check."""

    metric = "val_selective_risk"
    classes, payoff, coverage = 4, 2.2, 0.7

    def __init__(self) -> None:
        from sklearn.datasets import make_classification

        x, y = make_classification(
            n_samples=6000, n_features=12, n_informative=6, n_redundant=0, n_classes=self.classes,
            n_clusters_per_class=2, class_sep=1.5, shuffle=False, random_state=907,
        )  # fmt: skip
        rng = np.random.default_rng(907)
        noisy = (x[:, 0] > 1.0) & (rng.random(len(y)) < 0.8)
        y = np.where(noisy, rng.integers(0, self.classes, len(y)), y)
        x_train, y_train, x_val, y_val = _split(x, y, 0.3, True)
        x_train, x_val = _standardise(x_train, x_val)
        super().__init__(x_train, y_train, x_val, y_val)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, labels = batch
        logits = model(inputs).float()
        p = torch.softmax(logits, -1)
        bet = p.gather(1, labels[:, None]).squeeze(1) + p[:, -1] / self.payoff
        classify = F.cross_entropy(logits[:, :-1], labels)  # keeps the class scores alive under abstention
        return classify - bet.clamp_min(1e-12).log().mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        p = torch.softmax(model(self.x_val).float(), -1)
        if not torch.isfinite(p).all():
            return {"val_selective_risk": math.nan}
        wrong = (p[:, :-1].argmax(-1) != self.y_val).float()
        kept = torch.argsort(p[:, -1], stable=True)[: round(self.coverage * len(p))]
        return {"val_selective_risk": wrong[kept].mean().item(), "val_error": wrong.mean().item()}

    def build_model(self) -> nn.Module:
        return _mlp(12, [64, 64], self.classes + 1)


class ContrastivePredictiveCoding(_Tabular):
    """Self-supervised representation learning of sequences by contrastive predictive coding
    (CPC; van den Oord, Li and Vinyals 2018): 1-D signals of 64 samples, each a sum of two
    sinusoids of random frequency, amplitude and phase with a slow random-walk drift and white
    noise (SD 0.3; 4,000 training / 512 held-out signals). A strided convolutional encoder
    (kernel 8, stride 4, 32 channels, then 1 x 1 to 16) turns each signal into 16 latent
    vectors, a GRU (width 32) summarises those seen so far into a context, and one linear map
    per lookahead k = 1, 2, 3 predicts the latent k steps on; trained by InfoNCE, each
    prediction scored against the latents at the same position of the other signals in the
    batch. Nothing but the signals is used. The accuracy climbs steadily as the encoder learns
    a phase and frequency code and the GRU learns to advance it, to 0.2 to 0.3 at a good LR and
    still rising at the end; too low an LR stays below 0.01, and too high an LR can keep it
    below 0.05 (AdamW at 0.1 constant, LAMB at 0.09 one-cycle). Metric the accuracy of picking the true future latent among
    those of all 512 held-out signals at the same position, over positions from the fourth on
    and the three lookaheads (1/512 by chance; the InfoNCE loss reported beside it). Defined as
    the thirty-sixth batch of fresh workloads, by a helper told of no check."""

    metric = "val_cpc_accuracy"
    length, stride, ahead, first = 64, 4, 3, 3

    def __init__(self) -> None:
        rng = np.random.default_rng(911)

        def draw(count: int) -> np.ndarray:
            signal = np.zeros((count, self.length))
            for _ in range(2):
                frequency = rng.uniform(0.02, 0.2, (count, 1))
                drift = np.cumsum(rng.normal(0.0, 0.002, (count, self.length)), 1)
                phase = rng.uniform(0.0, 2 * math.pi, (count, 1)) + 2 * math.pi * np.cumsum(
                    frequency + drift, 1
                )
                signal += rng.uniform(0.5, 1.5, (count, 1)) * np.sin(phase)
            return signal + rng.normal(0.0, 0.3, signal.shape)

        train, val = draw(4000), draw(512)
        super().__init__(train, np.zeros(len(train), np.float32), val, np.zeros(len(val), np.float32))

    def _scores(self, model: nn.Module, signals: torch.Tensor) -> list[torch.Tensor]:
        """Per lookahead, logits (positions, signals, signals): prediction of one against latent of another."""
        latents, contexts = model(signals)
        scores = []
        for k, predict in enumerate(model.predictors, start=1):
            guess = predict(contexts[:, self.first : latents.shape[1] - k])
            target = latents[:, self.first + k :]
            scores.append(torch.einsum("btd,ctd->tbc", guess, target).float())
        return scores

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        signals, _ = batch
        total = signals.new_zeros(())
        for logits in self._scores(model, signals):
            labels = torch.arange(logits.shape[1]).expand(logits.shape[0], -1)
            total = total + F.cross_entropy(logits.reshape(-1, logits.shape[2]), labels.reshape(-1))
        return total / self.ahead

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        right, seen, loss = 0.0, 0, 0.0
        for logits in self._scores(model, self.x_val):
            if not torch.isfinite(logits).all():
                return {"val_cpc_accuracy": math.nan}
            labels = torch.arange(logits.shape[1]).expand(logits.shape[0], -1)
            right += (logits.argmax(-1) == labels).float().sum().item()
            seen += labels.numel()
            loss += (
                F.cross_entropy(logits.reshape(-1, logits.shape[2]), labels.reshape(-1)).item() / self.ahead
            )
        return {"val_cpc_accuracy": right / seen, "val_infonce": loss}

    def build_model(self) -> nn.Module:
        return _CPCModel(self.ahead)


class _CPCModel(nn.Module):
    def __init__(self, ahead: int, latent: int = 16, context: int = 32) -> None:
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv1d(1, 32, 8, stride=4, padding=2), nn.ReLU(), nn.Conv1d(32, latent, 1)
        )
        self.gru = nn.GRU(latent, context, batch_first=True)
        self.predictors = nn.ModuleList(nn.Linear(context, latent) for _ in range(ahead))

    def forward(self, signals: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        latents = self.encoder(signals.unsqueeze(1)).transpose(1, 2)  # (batch, 16, latent)
        contexts, _ = self.gru(latents)
        return latents, contexts


class DeepSVDDDigits(_Tabular):
    """One-class anomaly detection by Deep SVDD (Ruff et al. 2018): a network without biases
    maps only "normal" digits (classes 1, 4 and 7 of sklearn's ``load_digits``, pixels in
    [0, 1]; 377 training images) into a feature space and is trained to pull them all
    towards a fixed centre, the mean of its initial features over them (set when the model is
    built); the anomaly score of an image is its squared distance from the centre. The
    held-out set mixes the held-out normal digits (163) with every held-out digit of the other
    seven classes (377). The AUC rises fast to about 0.95, then slowly; too high an
    LR first drops it below the start (0.7 at AdamW 1e-2). Metric the ROC AUC of the anomaly score for telling the other digits from
    the normal ones (0.6 to 0.8 at the start, from the initial random features; the mean distance of
    the normal ones reported beside it). Defined as
    the thirty-seventh batch of fresh workloads, by a helper told of no check."""

    metric = "val_auroc"
    normal = (1, 4, 7)

    def __init__(self) -> None:
        x_train, y_train, x_val, y_val = _digits_split()
        keep = np.isin(y_train, self.normal)
        val_normal = np.isin(y_val, self.normal)
        super().__init__(x_train[keep], y_train[keep], x_val, (~val_normal).astype(np.float32))

    def build_model(self) -> nn.Module:
        model = nn.Sequential(
            nn.Linear(64, 128, bias=False), nn.LeakyReLU(0.1), nn.Linear(128, 64, bias=False),
            nn.LeakyReLU(0.1), nn.Linear(64, 16, bias=False),
        )  # fmt: skip
        with torch.no_grad():
            model.register_buffer("centre", model(self.x_train).mean(0))
        return model

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, _ = batch
        return (model(inputs).float() - model.centre).pow(2).sum(-1).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        score = (model(self.x_val).float() - model.centre).pow(2).sum(-1)
        if not torch.isfinite(score).all():
            return {"val_auroc": math.nan}
        ranks = torch.argsort(torch.argsort(score)).double() + 1.0
        anomalous = self.y_val > 0.5
        positives, negatives = anomalous.sum().item(), (~anomalous).sum().item()
        auroc = (ranks[anomalous].sum().item() - positives * (positives + 1) / 2) / (positives * negatives)
        normal_score = score[~anomalous].mean().item()
        return {"val_auroc": auroc, "val_normal_distance": normal_score}


class BinaryHashingDigits(_Tabular):
    """Learning to hash (deep pairwise-supervised hashing, DPSH; Li et al. 2016): an MLP
    64-128-32 with tanh outputs turns each ``load_digits`` image (pixels in [0, 1]; 1,257 /
    540) into a 32-bit code, trained on every pair in the batch by the pairwise logistic
    loss of the codes' inner product (times 4 / 32) against whether the two share a class, the
    similar and the dissimilar pairs weighted equally, plus 0.1 x the mean squared distance of
    the relaxed codes from their signs. Retrieval ranks the training
    images by the Hamming distance of their sign codes from a held-out query's. Metric the mean
    average precision of that ranking over the 540 held-out queries (a same-class training image
    counts as relevant; 0.3 to 0.4 at the start, 0.105 for codes collapsed to one; the precision of the
    10 nearest reported beside it). The mAP climbs fast, to 0.9 to 0.95 at a good LR; too low an
    LR ends near 0.5, and too high an LR saturates the tanh units into fewer distinct codes. Defined as the
    thirty-seventh batch of fresh workloads, by a helper told of no check."""

    metric = "val_map"
    bits, quantisation = 32, 0.1

    def __init__(self) -> None:
        super().__init__(*_digits_split())

    def build_model(self) -> nn.Module:
        return nn.Sequential(_mlp(64, [128], self.bits), nn.Tanh())

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, labels = batch
        codes = model(inputs).float()
        similar = (labels[:, None] == labels[None, :]).float()
        theta = codes @ codes.T * (4.0 / self.bits)
        per_pair = F.softplus(theta) - similar * theta
        pairwise = (per_pair * similar).sum() / similar.sum() + (per_pair * (1 - similar)).sum() / (
            1 - similar
        ).sum().clamp_min(1.0)
        return pairwise + self.quantisation * (codes - codes.detach().sign()).pow(2).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        database, queries = model(self.x_train).float(), model(self.x_val).float()
        if not (torch.isfinite(database).all() and torch.isfinite(queries).all()):
            return {"val_map": math.nan}
        database, queries = database.sign(), queries.sign()
        hamming = 0.5 * (self.bits - queries @ database.T)
        ties = torch.arange(len(database)).float() * 1e-6  # a fixed order among equal distances
        order = torch.argsort(hamming + ties, dim=1)
        relevant = (self.y_train[order] == self.y_val[:, None]).float()
        hits = relevant.cumsum(1)
        precision = hits / torch.arange(1, len(database) + 1).float()
        average_precision = (precision * relevant).sum(1) / relevant.sum(1).clamp_min(1.0)
        return {
            "val_map": average_precision.mean().item(),
            "val_precision_at_10": relevant[:, :10].mean().item(),
        }


class LogicGateNetworkDigits(_Tabular):
    """A differentiable logic gate network (Petersen et al. 2022): ``load_digits`` images
    binarised at half intensity (64 bits; 1,257 / 540) feed four layers of 256 two-input
    gates, each wired to two fixed random outputs of the layer below and holding a softmax
    over the 16 Boolean functions of two inputs, computed in training by their real-valued
    (probabilistic) relaxations; the class scores are the sums of 10 groups of 25 gates of the
    last layer, divided by a temperature of 3, trained by cross-entropy. In evaluation each gate is
    discretised to its most probable function and run on bits. The accuracy climbs to 0.8 to
    0.87 at a good LR; the softmax logits need large steps, so too low an LR stays near chance
    (0.11 at AdamW 1e-3), SGD crawls at all but its highest LRs, and high LRs hurt little. Metric the accuracy of the
    discretised network on the held-out digits (the relaxed network's accuracy reported
    beside it; 0.1 by chance). Defined as the thirty-seventh batch of fresh workloads, by a
    helper told of no check."""

    metric = "val_accuracy"
    width, layers, group, temperature = 256, 4, 25, 3.0

    def __init__(self) -> None:
        x_train, y_train, x_val, y_val = _digits_split()
        super().__init__((x_train > 0.5).astype(np.float32), y_train, (x_val > 0.5).astype(np.float32), y_val)

    def build_model(self) -> nn.Module:
        return _LogicGateNetwork(64, self.width, self.layers, 10, self.group, self.temperature)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, labels = batch
        return F.cross_entropy(model(inputs).float(), labels)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        relaxed = model(self.x_val).float()
        hard = model(self.x_val, discrete=True).float()
        if not torch.isfinite(relaxed).all():
            return {"val_accuracy": math.nan}
        return {
            "val_accuracy": (hard.argmax(-1) == self.y_val).float().mean().item(),
            "val_relaxed_accuracy": (relaxed.argmax(-1) == self.y_val).float().mean().item(),
        }


class _LogicGateNetwork(nn.Module):
    def __init__(self, inputs: int, width: int, layers: int, classes: int, group: int, temperature: float):
        super().__init__()
        generator = torch.Generator().manual_seed(919)  # the same wiring for every seed
        self.wires = []
        for index in range(layers):
            left = torch.randperm(width, generator=generator) % inputs
            right = torch.randperm(width, generator=generator) % inputs
            self.register_buffer(f"left{index}", left)
            self.register_buffer(f"right{index}", right)
            inputs = width
        self.logits = nn.Parameter(torch.randn(layers, width, 16) * 1.0)
        self.classes, self.group, self.temperature = classes, group, temperature

    @staticmethod
    def _gates(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        """The 16 two-input Boolean functions, relaxed (inputs in [0, 1]): (..., 16)."""
        ab = a * b
        return torch.stack(
            [
                torch.zeros_like(a), ab, a - ab, a, b - ab, b, a + b - 2 * ab, a + b - ab,
                1 - (a + b - ab), 1 - (a + b - 2 * ab), 1 - b, 1 - b + ab, 1 - a, 1 - a + ab, 1 - ab,
                torch.ones_like(a),
            ],
            -1,
        )  # fmt: skip

    def forward(self, x: torch.Tensor, discrete: bool = False) -> torch.Tensor:
        for index in range(self.logits.shape[0]):
            a, b = x[:, getattr(self, f"left{index}")], x[:, getattr(self, f"right{index}")]
            if discrete:
                weights = F.one_hot(self.logits[index].argmax(-1), 16).float()
            else:
                weights = torch.softmax(self.logits[index], -1)
            x = (self._gates(a, b) * weights).sum(-1)
        used = self.classes * self.group
        return x[:, :used].reshape(len(x), self.classes, self.group).sum(-1) / self.temperature


class IntervalBoundCertified(_Tabular):
    """Certified adversarial robustness by interval bound propagation (IBP; Gowal et al.
    2018): an MLP 64-128-128-10 on ``load_digits`` (pixels in [0, 1]; 1,257 / 540) is trained
    on half the clean cross-entropy plus half the cross-entropy of its worst-case logits over
    the L-infinity ball of radius 0.1 around each image, bounded by pushing the box through
    the network layer by layer (centre and radius through each linear map, bounds through
    each ReLU); the radius is ramped up linearly over the first 8,192 training samples (without
    the ramp the network collapses to a constant class). The verified accuracy climbs once the
    ramp ends, to 0.65 to 0.75 at a good LR (clean accuracy about 0.96); too low an LR stays
    near 0, and too high an LR (AdamW 0.1) stalls near 0.3. Metric the verified accuracy on the held-out digits: the share whose bounds
    prove the true class beats every other for every image in the ball (0 at the start; the
    clean accuracy reported beside it). Defined as the thirty-seventh batch of fresh workloads,
    by a helper told of no check."""

    metric = "val_verified_accuracy"
    radius, ramp = 0.1, 8192

    def __init__(self) -> None:
        super().__init__(*_digits_split())

    def build_model(self) -> nn.Module:
        model = _mlp(64, [128, 128], 10)
        model.register_buffer("seen", torch.zeros((), dtype=torch.long))  # training samples so far
        return model

    def _bounds(
        self, model: nn.Module, x: torch.Tensor, labels: torch.Tensor, radius: float
    ) -> tuple[torch.Tensor, ...]:
        """Clean logits and the worst-case logits (the true class at its lower bound, others at upper)."""
        clean = model(x)
        lower, upper = (x - radius).clamp(0.0, 1.0), (x + radius).clamp(0.0, 1.0)
        for layer in model:
            if isinstance(layer, nn.Linear):
                centre, spread = (upper + lower) / 2, (upper - lower) / 2
                centre, spread = layer(centre), spread @ layer.weight.abs().T
                lower, upper = centre - spread, centre + spread
            else:
                lower, upper = layer(lower), layer(upper)
        true = F.one_hot(labels, 10).bool()
        return clean.float(), torch.where(true, lower, upper).float()

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, labels = batch
        seen = model.seen.item()
        model.seen += len(inputs)
        radius = self.radius * min(1.0, seen / self.ramp)
        clean, worst = self._bounds(model, inputs, labels, radius)
        return 0.5 * F.cross_entropy(clean, labels) + 0.5 * F.cross_entropy(worst, labels)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        clean, worst = self._bounds(model, self.x_val, self.y_val, self.radius)
        if not torch.isfinite(worst).all():
            return {"val_verified_accuracy": math.nan}
        return {
            "val_verified_accuracy": (worst.argmax(-1) == self.y_val).float().mean().item(),
            "val_clean_accuracy": (clean.argmax(-1) == self.y_val).float().mean().item(),
        }


class NeuralAdditiveModel(_Tabular):
    """An interpretable generalised additive model of per-feature networks (neural additive
    model, NAM; Agarwal et al. 2021): the target is a sum of eight fixed one-dimensional shape
    functions of eight uniform features (a sine, a step, a parabola, an exponential decay, a
    sawtooth, an absolute value, a bump and a zero) plus Gaussian noise of SD 0.3 (4,000 /
    1,000). One MLP 1-32-32-1 per feature (run side by side as grouped 1 x 1 convolutions) gives
    each feature's contribution, summed with a bias, trained by MSE. The error falls fast as
    the smooth shapes are fitted, then slowly as the step and the sawtooth's jumps are carved,
    to 0.09 to 0.12 at a good LR; too low an LR ends near 0.7, too high an LR near 0.3 to 0.7. Metric the MSE of the
    held-out predictions against the noiseless targets (the noise floor is excluded; the
    variance of the noiseless targets is 1.43, 1.7 to 3 at the start; the MSE against the noisy targets reported
    beside it). Defined as the thirty-eighth batch of fresh workloads, by a helper told of no
    check."""

    metric = "val_mse"
    features, noise = 8, 0.3

    def __init__(self) -> None:
        rng = np.random.default_rng(929)

        def shapes(x: np.ndarray) -> np.ndarray:
            parts = [
                np.sin(3.0 * x[:, 0]), (x[:, 1] > 0.2).astype(float) - 0.5, x[:, 2] ** 2 - 1 / 3,
                np.exp(-2.0 * (x[:, 3] + 1.0)) * 2.0, (2.0 * x[:, 4]) % 1.0 - 0.5, np.abs(x[:, 5]) - 0.5,
                np.exp(-10.0 * x[:, 6] ** 2), 0.0 * x[:, 7],
            ]  # fmt: skip
            return np.sum(parts, 0)

        x = rng.uniform(-1.0, 1.0, (5000, self.features))
        clean = shapes(x)
        noisy = clean + rng.normal(0.0, self.noise, len(x))
        super().__init__(x[:4000], noisy[:4000].astype(np.float32), x[4000:], clean[4000:].astype(np.float32))
        self.y_val_noisy = torch.tensor(noisy[4000:], dtype=torch.float32)

    def build_model(self) -> nn.Module:
        return _AdditiveNetwork(self.features, 32)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, targets = batch
        return F.mse_loss(model(inputs).float(), targets)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        prediction = model(self.x_val).float()
        if not torch.isfinite(prediction).all():
            return {"val_mse": math.nan}
        return {
            "val_mse": F.mse_loss(prediction, self.y_val).item(),
            "val_noisy_mse": F.mse_loss(prediction, self.y_val_noisy).item(),
        }


class _AdditiveNetwork(nn.Module):
    def __init__(self, features: int, width: int) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv1d(features, features * width, 1, groups=features), nn.ReLU(),
            nn.Conv1d(features * width, features * width, 1, groups=features), nn.ReLU(),
            nn.Conv1d(features * width, features, 1, groups=features),
        )  # fmt: skip
        self.bias = nn.Parameter(torch.zeros(()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x.unsqueeze(-1)).squeeze(-1).sum(-1) + self.bias


class BellmanFordReasoner(_Tabular):
    """Neural algorithmic reasoning (in the manner of Veličković et al. 2020): a message
    passing network learns to compute single-source shortest-path distances on random
    weighted graphs (10 nodes, each edge present with probability 0.3 and weighted uniformly
    in [0.1, 1], graphs kept only if connected; 3,000 / 500). Each node starts from whether it is
    the source; 5 rounds of message passing with a shared MLP message from each neighbour's
    state and the edge weight, min aggregation (aligned with the Bellman-Ford relaxation) and a residual
    update of width 16, then a linear read-out of each node's distance, trained by MSE
    against the true distances. The error falls fast below the 0.44 of always predicting the
    mean distance, then slowly, to about 0.06 at a good LR; too low an LR ends near 0.4, and too
    high an LR diverges. Metric the mean absolute error of the predicted distances of
    the non-source nodes of the held-out graphs (mean true distance 1.03; 1.5 to 1.9 at the start;
    the error of always predicting the mean distance is reported as a baseline beside it). Defined as the
    thirty-eighth batch of fresh workloads, by a helper told of no check."""

    metric = "val_distance_mae"
    nodes, edge_probability, rounds, width = 10, 0.3, 5, 16

    def __init__(self) -> None:
        rng = np.random.default_rng(937)

        def draw(count: int) -> tuple[np.ndarray, np.ndarray]:
            graphs, distances = [], []
            n = self.nodes
            while len(graphs) < count:
                present = np.triu(rng.random((n, n)) < self.edge_probability, 1)
                weights = np.where(present, rng.uniform(0.1, 1.0, (n, n)), 0.0)
                weights = weights + weights.T
                distance = np.full(n, np.inf)
                distance[0] = 0.0
                for _ in range(n):
                    through = np.where(weights > 0, distance[:, None] + weights, np.inf).min(0)
                    distance = np.minimum(distance, through)
                if np.isinf(distance).any():
                    continue
                order = rng.permutation(n)  # the source lands anywhere
                graphs.append(weights[order][:, order].reshape(-1))
                distances.append(distance[order])
            return np.array(graphs), np.array(distances, np.float32)

        x_train, y_train = draw(3000)
        x_val, y_val = draw(500)
        super().__init__(x_train, y_train, x_val, y_val)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        graphs, distances = batch
        return F.mse_loss(model(graphs.view(-1, self.nodes, self.nodes), distances == 0).float(), distances)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        source = self.y_val == 0
        prediction = model(self.x_val.view(-1, self.nodes, self.nodes), source).float()
        if not torch.isfinite(prediction).all():
            return {"val_distance_mae": math.nan}
        others = ~source
        mean = self.y_train[self.y_train > 0].mean()
        return {
            "val_distance_mae": (prediction - self.y_val)[others].abs().mean().item(),
            "val_mean_baseline_mae": (self.y_val[others] - mean).abs().mean().item(),
        }

    def build_model(self) -> nn.Module:
        return _MinMessagePassing(self.width, self.rounds)


class _MinMessagePassing(nn.Module):
    def __init__(self, width: int, rounds: int) -> None:
        super().__init__()
        self.embed = nn.Linear(1, width)
        self.sender = nn.Linear(width, width)
        self.weight = nn.Parameter(torch.randn(width))
        self.message = nn.Linear(width, width)
        self.update = nn.Sequential(nn.Linear(2 * width, width), nn.ReLU(), nn.Linear(width, width))
        self.readout = nn.Linear(width, 1)
        self.rounds = rounds

    def forward(self, weights: torch.Tensor, source: torch.Tensor) -> torch.Tensor:
        h = self.embed(source.float().unsqueeze(-1))
        absent = (weights <= 0).unsqueeze(-1)
        for _ in range(self.rounds):
            # message from sender i to receiver j: an MLP of (h_i, w_ij); minimum over the neighbours i
            hidden = F.relu(self.sender(h).unsqueeze(2) + weights.unsqueeze(-1) * self.weight)
            messages = self.message(hidden).masked_fill(absent, math.inf)
            incoming = messages.min(1).values
            incoming = torch.where(torch.isinf(incoming), torch.zeros_like(incoming), incoming)
            h = h + self.update(torch.cat([h, incoming], -1))
        return self.readout(h).squeeze(-1)


class CrowdAnnotatorsDigits(_Tabular):
    """Learning from crowds (a crowd layer of per-annotator confusion matrices; Rodrigues and
    Pereira 2018, trace-regularised as by Tanno et al. 2019): each ``load_digits`` training
    image (pixels in [0, 1]; 1,257 / 540) carries one label from one of 8 simulated annotators,
    drawn at random: two reliable (90% right), three sloppy (45% right, otherwise uniform),
    two who systematically swap pairs of classes 70% of the time, and one who answers at random.
    An MLP 64-64-10 gives the true-class probabilities, each annotator's learned confusion
    matrix (rows softmax, started near the identity) maps them to that annotator's label
    probabilities, trained by the cross-entropy against the given label plus 0.01 x the mean
    trace of the confusion matrices. The accuracy climbs fast, to 0.85 to 0.88 at a good LR;
    too low an LR ends near 0.5, and too high an LR near 0.73. Only the annotator's index travels with each image.
    Metric the accuracy of the classifier against the true labels of the held-out digits (0.1
    at the start; the annotations themselves are 46% right; the held-out cross-entropy reported
    beside it). Defined
    as the thirty-eighth batch of fresh workloads, by a helper told of no check."""

    metric = "val_accuracy"
    annotators, trace_weight = 8, 0.01

    def __init__(self) -> None:
        x_train, y_train, x_val, y_val = _digits_split()
        rng = np.random.default_rng(941)
        confusion = np.zeros((self.annotators, 10, 10))
        swap = np.arange(10).reshape(5, 2)[:, ::-1].reshape(-1)  # 0<->1, 2<->3, ...
        for a, right in enumerate((0.9, 0.9, 0.45, 0.45, 0.45)):
            confusion[a] = (1 - right) / 9 * (1 - np.eye(10)) + right * np.eye(10)
        for a in (5, 6):
            shift = swap if a == 5 else np.roll(np.arange(10), 1)
            confusion[a] = 0.3 * np.eye(10) + 0.7 * np.eye(10)[shift]
        confusion[7] = 0.1
        annotator = rng.integers(0, self.annotators, len(y_train))
        given = np.array([rng.choice(10, p=confusion[a, y]) for a, y in zip(annotator, y_train, strict=True)])
        self.annotation_accuracy = float((given == y_train).mean())
        x_train = np.concatenate([x_train, annotator[:, None].astype(np.float32)], 1)
        super().__init__(x_train, given, x_val, y_val)

    def build_model(self) -> nn.Module:
        model = _mlp(64, [64], 10)
        model.confusion = nn.Parameter(torch.eye(10).repeat(self.annotators, 1, 1) * 4.0)  # rows: true class
        return model

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, given = batch
        clean = torch.softmax(model(inputs[:, :-1]).float(), -1)
        confusion = torch.softmax(model.confusion.float(), -1)
        noisy = torch.einsum("bk,bkl->bl", clean, confusion[inputs[:, -1].long()])
        trace = confusion.diagonal(dim1=1, dim2=2).sum(-1).mean()
        return F.nll_loss(noisy.clamp_min(1e-8).log(), given) + self.trace_weight * trace

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float()
        if not torch.isfinite(logits).all():
            return {"val_accuracy": math.nan}
        return {
            "val_accuracy": (logits.argmax(-1) == self.y_val).float().mean().item(),
            "val_loss": F.cross_entropy(logits, self.y_val).item(),
        }


class ConvexTransportMap(_Tabular):
    """Optimal transport by an input-convex neural network (ICNN; Amos et al. 2017, Makkuva et
    al. 2020): by Brenier's theorem the optimal map between two distributions under squared
    cost is the gradient of a convex potential. Source samples are standard normal in the plane;
    target samples are the images under the known map A x + 0.8 sum_k tanh(2 u_k . x) u_k (the
    gradient of a convex potential; A symmetric positive definite, three unit u_k) of
    independent normal draws, so the samples are unpaired (6,000 of each). An ICNN (widths 64, 64;
    softplus; non-negative weights between hidden layers by a softplus of their raw values) plus
    ||x||^2 / 2 is the potential f, and its input gradient, the map, is trained by the squared
    maximum mean discrepancy (Gaussian kernels of widths 0.2, 0.5, 1 and 2) between the mapped
    source batch and an independent target batch. Metric the root mean squared distance between
    the learned and the true map on 2,000 held-out source points (2.1 at the start, near the
    identity map). The error falls fast to about 0.6, then slowly and noisily, to 0.25 to 0.45
    at a good LR; too low an LR ends near 1.5, and too high an LR diverges. Defined as the thirty-eighth batch of fresh workloads, by a helper told of
    no check."""

    metric = "val_map_rmse"
    bandwidths = (0.2, 0.5, 1.0, 2.0)

    def __init__(self) -> None:
        rng = np.random.default_rng(947)
        self.matrix = np.array([[2.0, 0.9], [0.9, 1.0]])
        angles = np.array([0.3, 1.4, 2.4])
        self.directions = np.stack([np.cos(angles), np.sin(angles)], 1)
        source = rng.normal(size=(6000, 2))
        target = self._true_map(rng.normal(size=(6000, 2)))
        val = rng.normal(size=(2000, 2))
        super().__init__(source, target.astype(np.float32), val, self._true_map(val).astype(np.float32))

    def _true_map(self, x: np.ndarray) -> np.ndarray:
        return x @ self.matrix + 0.8 * np.tanh(2.0 * x @ self.directions.T) @ self.directions

    def _mapped(self, model: nn.Module, x: torch.Tensor, create_graph: bool) -> torch.Tensor:
        with torch.enable_grad():
            x = x.detach().requires_grad_(True)
            potential = model(x).float().sum()
            (gradient,) = torch.autograd.grad(potential, x, create_graph=create_graph)
        return gradient

    def _mmd(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        both = torch.cat([a, b])
        distance = torch.cdist(both, both).pow(2)
        kernel = sum(torch.exp(-distance / (2 * h * h)) for h in self.bandwidths)
        n = len(a)
        return kernel[:n, :n].mean() + kernel[n:, n:].mean() - 2 * kernel[:n, n:].mean()

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        count = len(self.x_train)
        while True:  # source and target drawn independently: the samples are unpaired
            first = torch.randint(0, count, (micro_batch_size,), generator=generator)
            second = torch.randint(0, count, (micro_batch_size,), generator=generator)
            yield self.x_train[first], self.y_train[second]

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        source, target = batch
        return self._mmd(self._mapped(model, source, True), target)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        mapped = self._mapped(model, self.x_val, False)
        if not torch.isfinite(mapped).all():
            return {"val_map_rmse": math.nan}
        return {"val_map_rmse": (mapped - self.y_val).pow(2).sum(-1).mean().sqrt().item()}

    def build_model(self) -> nn.Module:
        return _InputConvexNetwork(2, 64)


class _InputConvexNetwork(nn.Module):
    def __init__(self, inputs: int, width: int) -> None:
        super().__init__()
        self.first = nn.Linear(inputs, width)
        self.skip = nn.Linear(inputs, width)
        self.hidden = nn.Parameter(torch.randn(width, width) * 0.1 - 3.0)  # softplus: small, non-negative
        self.out = nn.Parameter(torch.randn(width) * 0.1 - 3.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = F.softplus(self.first(x))
        z = F.softplus(z @ F.softplus(self.hidden).T + self.skip(x))
        return z @ F.softplus(self.out) + 0.5 * x.pow(2).sum(-1)


class BPRImplicitFeedback(_Tabular):
    """Recommendation from implicit feedback by Bayesian personalised ranking (BPR; Rendle et
    al. 2009): 1,000 simulated users each chose 25 of 500 items, drawn without replacement with
    probabilities from a softmax of a hidden 6-factor preference plus an item popularity; one
    choice per user is held out (leave one out) and the other 24,000 (user, item) pairs are the
    training data. User and item embeddings of 32 plus an item bias score each pair, trained by
    the BPR loss, the logistic loss of the score of the chosen item over that of a uniformly
    drawn item (negatives drawn afresh in every batch, accidental positives kept). Metric the
    hit rate at 10: the share of users whose held-out item ranks among the top 10 of the items
    they have not yet chosen (0.01 to 0.03 at the start; ranking by popularity scores 0.07 and
    the simulator's true preferences 0.41, both reported beside it). The hit rate climbs to
    about 0.25 at a good LR; too low an LR ends near 0.06, too high an LR near 0.14 to 0.2.
    Defined as the thirty-ninth batch of fresh workloads, by a helper session."""

    metric = "val_hit_rate10"
    users, items, factors, chosen, width = 1000, 500, 6, 25, 32

    def __init__(self) -> None:
        rng = np.random.default_rng(953)
        taste = rng.normal(size=(self.users, self.factors))
        traits = rng.normal(size=(self.items, self.factors))
        scores = 2.5 * taste @ traits.T / math.sqrt(self.factors) + rng.normal(0.0, 1.0, self.items)
        probabilities = np.exp(scores - scores.max(1, keepdims=True))
        probabilities /= probabilities.sum(1, keepdims=True)
        pairs, held_out = [], []
        for user in range(self.users):
            picks = rng.choice(self.items, self.chosen, replace=False, p=probabilities[user])
            pairs += [(user, item) for item in picks[:-1]]
            held_out.append(picks[-1])
        pairs_array = np.array(pairs)
        super().__init__(
            pairs_array.astype(np.float32), np.zeros(len(pairs_array), np.float32),
            np.arange(self.users, dtype=np.float32)[:, None], np.array(held_out),
        )  # fmt: skip
        self.y_val = self.y_val.long()
        seen = torch.zeros(self.users, self.items, dtype=torch.bool)
        seen[pairs_array[:, 0], pairs_array[:, 1]] = True
        self.seen = seen
        counts = seen.sum(0).float()
        self.popular_hits = self._hit_rate(counts.expand(self.users, -1).clone())
        self.oracle_hits = self._hit_rate(torch.tensor(scores, dtype=torch.float32))

    def _hit_rate(self, scores: torch.Tensor) -> float:
        scores = scores.masked_fill(self.seen, -math.inf)
        top = scores.topk(10, dim=1).indices
        return (top == self.y_val[:, None]).any(1).float().mean().item()

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        count = len(self.x_train)
        while True:
            index = torch.randint(0, count, (micro_batch_size,), generator=generator)
            negatives = torch.randint(0, self.items, (micro_batch_size,), generator=generator)
            yield self.x_train[index].long(), negatives

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        pairs, negatives = batch
        users = model.users(pairs[:, 0])
        positive = (users * model.items(pairs[:, 1])).sum(-1) + model.bias(pairs[:, 1]).squeeze(-1)
        negative = (users * model.items(negatives)).sum(-1) + model.bias(negatives).squeeze(-1)
        return -F.logsigmoid((positive - negative).float()).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        scores = (model.users.weight @ model.items.weight.T + model.bias.weight.T).float()
        if not torch.isfinite(scores).all():
            return {"val_hit_rate10": math.nan}
        return {
            "val_hit_rate10": self._hit_rate(scores),
            "val_popularity_hit_rate10": self.popular_hits,
            "val_oracle_hit_rate10": self.oracle_hits,
        }

    def build_model(self) -> nn.Module:
        model = nn.Module()
        model.users = nn.Embedding(self.users, self.width)
        model.items = nn.Embedding(self.items, self.width)
        model.bias = nn.Embedding(self.items, 1)
        with torch.no_grad():
            model.users.weight.mul_(0.1)
            model.items.weight.mul_(0.1)
            model.bias.weight.zero_()
        return model


class DeepKnowledgeTracing(_Tabular):
    """Knowledge tracing (deep knowledge tracing, DKT; Piech et al. 2015): simulated students
    answer 40 exercises each on 8 skills, the skill practised next repeating the last with
    probability 0.4. A student answers right with probability sigmoid(ability + mastery of the
    skill + half the mastery of the skill before it - difficulty), ability N(0, 1) per student,
    and each practice adds to the skill's mastery (0.15 to 0.45 per practice, the student's own
    learning rate, twice as much after a right answer). A GRU of width 48 reads each step's
    (skill, right or wrong) one-hot of 16 and predicts for every skill the probability of a
    right answer at the next step, trained by the binary cross-entropy of the prediction for
    the skill actually practised next (3,000 / 500 students). Metric the ROC AUC of those
    predictions over all next answers of the held-out students (0.5 at the start; the AUC of the
    simulator's true probabilities, 0.87, is reported beside it). The AUC rises fast and
    saturates at 0.84 to 0.85 at a good LR; too low an LR ends near 0.7 to 0.79, and too high
    an LR for LAMB near 0.69. Defined as the thirty-ninth batch of fresh workloads, by a helper
    session."""

    metric = "val_auc"
    skills, steps, width = 8, 40, 48

    def __init__(self) -> None:
        rng = np.random.default_rng(967)
        difficulty = rng.normal(0.5, 0.8, self.skills)

        def students(count: int) -> tuple[np.ndarray, np.ndarray]:
            ability = rng.normal(0.0, 1.0, count)
            learning = rng.uniform(0.15, 0.45, count)
            mastery = np.zeros((count, self.skills))
            skill = rng.integers(0, self.skills, count)
            skills, right, truth = [], [], []
            rows = np.arange(count)
            for _ in range(self.steps):
                before = mastery[rows, (skill - 1) % self.skills]
                p = 1.0 / (1.0 + np.exp(-(ability + mastery[rows, skill] + 0.5 * before - difficulty[skill])))
                answer = rng.random(count) < p
                skills.append(skill)
                right.append(answer)
                truth.append(p)
                mastery[rows, skill] += learning * (1.0 + answer)
                repeat = rng.random(count) < 0.4
                skill = np.where(repeat, skill, rng.integers(0, self.skills, count))
            sequence = np.stack([np.stack(skills, 1), np.stack(right, 1)], -1).astype(np.float32)
            return sequence, np.stack(truth, 1).astype(np.float32)

        x_train, p_train = students(3000)
        x_val, p_val = students(500)
        super().__init__(x_train, p_train, x_val, p_val)
        from sklearn.metrics import roc_auc_score

        self.oracle_auc = float(roc_auc_score(x_val[:, 1:, 1].reshape(-1), p_val[:, 1:].reshape(-1)))

    def _predict(self, model: nn.Module, sequence: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        skill, right = sequence[..., 0].long(), sequence[..., 1]
        step = F.one_hot(skill + self.skills * right.long(), 2 * self.skills).float()
        hidden, _ = model.gru(step[:, :-1])
        logits = model.head(hidden).float().gather(-1, skill[:, 1:, None]).squeeze(-1)
        return logits, right[:, 1:]

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        logits, right = self._predict(model, batch[0])
        return F.binary_cross_entropy_with_logits(logits, right)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        from sklearn.metrics import roc_auc_score

        logits, right = self._predict(model, self.x_val)
        if not torch.isfinite(logits).all():
            return {"val_auc": math.nan}
        return {
            "val_auc": float(roc_auc_score(right.reshape(-1).numpy(), logits.reshape(-1).numpy())),
            "val_loss": F.binary_cross_entropy_with_logits(logits, right).item(),
            "val_oracle_auc": self.oracle_auc,
        }

    def build_model(self) -> nn.Module:
        model = nn.Module()
        model.gru = nn.GRU(2 * self.skills, self.width, batch_first=True)
        model.head = nn.Linear(self.width, self.skills)
        return model


class PitchEstimationConv1d(_Tabular):
    """Monophonic pitch estimation from raw audio (in the manner of CREPE; Kim et al. 2018):
    32 ms frames (256 samples at 8 kHz) of synthetic harmonic tones, the fundamental
    log-uniform from 110 to 880 Hz, 8 harmonics of random amplitudes (the fundamental itself
    missing in a fifth of the frames), random phases and gain, and white noise at 0 to 20 dB
    SNR (8,000 / 1,000 frames). A 1-D CNN (kernels 16, 8, 8 with 16, 32, 32 channels, max
    pooling) outputs 145 pitch bins of 25 cents over the three octaves, trained by the
    cross-entropy against targets blurred by a Gaussian of 25 cents (normalised); the estimate is the
    weighted mean of the bins around the most active one. Metric the raw pitch accuracy, the
    share of held-out frames whose estimate is within 50 cents of the true pitch (0.02 to 0.04
    at the start; the share of octave errors reported beside it). The accuracy climbs to about
    0.85 at a good LR; too low an LR ends near 0.2, and too high an LR never leaves 0.03.
    Defined as the thirty-ninth batch of fresh workloads, by a helper session."""

    metric = "val_raw_pitch_accuracy"
    rate, length, bins, harmonics = 8000, 256, 145, 8

    def __init__(self) -> None:
        rng = np.random.default_rng(971)

        def frames(count: int) -> tuple[np.ndarray, np.ndarray]:
            cents = rng.uniform(0.0, 3600.0, count)
            f0 = 110.0 * 2.0 ** (cents / 1200.0)
            t = np.arange(self.length) / self.rate
            falloff = np.arange(1, self.harmonics + 1) ** 0.5
            amplitude = rng.uniform(0.0, 1.0, (count, self.harmonics)) / falloff
            amplitude[rng.random(count) < 0.2, 0] = 0.0
            signal = np.zeros((count, self.length))
            for h in range(1, self.harmonics + 1):
                frequency = h * f0
                audible = frequency < self.rate / 2
                phase = rng.uniform(0.0, 2 * np.pi, count)
                signal += (audible * amplitude[:, h - 1])[:, None] * np.sin(
                    2 * np.pi * frequency[:, None] * t + phase[:, None]
                )
            signal /= signal.std(1, keepdims=True) + 1e-8
            snr = 10.0 ** (rng.uniform(0.0, 20.0, count) / 20.0)
            signal += rng.normal(size=signal.shape) / snr[:, None]
            signal *= rng.uniform(0.3, 1.0, count)[:, None]
            return signal.astype(np.float32), cents.astype(np.float32)

        x_train, y_train = frames(8000)
        x_val, y_val = frames(1000)
        super().__init__(x_train, y_train, x_val, y_val)
        self.centres = torch.arange(self.bins, dtype=torch.float32) * 25.0

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        frames, cents = batch
        targets = torch.softmax(-0.5 * ((self.centres - cents[:, None]) / 25.0) ** 2, -1)
        return F.cross_entropy(model(frames.unsqueeze(1)).float(), targets)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        activation = torch.softmax(model(self.x_val.unsqueeze(1)).float(), -1)
        if not torch.isfinite(activation).all():
            return {"val_raw_pitch_accuracy": math.nan}
        peak = activation.argmax(-1, keepdim=True)
        window = (peak + torch.arange(-4, 5)).clamp(0, self.bins - 1)
        weights = activation.gather(-1, window)
        estimate = (weights * self.centres[window]).sum(-1) / weights.sum(-1).clamp_min(1e-8)
        error = (estimate - self.y_val).abs()
        octave = ((error - 1200.0).abs() < 50.0).float().mean().item()
        return {"val_raw_pitch_accuracy": (error < 50.0).float().mean().item(), "val_octave_errors": octave}

    def build_model(self) -> nn.Module:
        return nn.Sequential(
            nn.Conv1d(1, 16, 16, stride=2), nn.ReLU(), nn.MaxPool1d(2),
            nn.Conv1d(16, 32, 8), nn.ReLU(), nn.MaxPool1d(2),
            nn.Conv1d(32, 32, 8), nn.ReLU(), nn.MaxPool1d(2),
            nn.Flatten(), nn.Linear(32 * 9, self.bins),
        )  # fmt: skip


class InformationMaxClustering(_Tabular):
    """Deep clustering by invariant information clustering (IIC; Ji et al. 2019): an MLP
    64-256-256-10 with a softmax output assigns ``load_digits`` images (pixels in [0, 1];
    1,257 / 540; labels never used in training) to 10 clusters, trained to maximise the mutual
    information between the cluster assignments of two augmented views of each image (each
    view shifted by up to a pixel in each direction, intensities scaled by 0.8 to 1.2 and
    Gaussian noise of SD 0.1 added), estimated from the batch's joint assignment matrix,
    symmetrised. Metric the normalised mutual information between the held-out digits' most
    probable clusters and their true classes (0.03 to 0.2 at the start). The NMI climbs slowly,
    to about 0.5 at a good LR; too low an LR ends near 0.25, and too high an LR collapses every
    image into one cluster (0). Defined as the thirty-ninth batch of fresh workloads, by a
    helper session."""

    metric = "val_nmi"
    clusters = 10

    def __init__(self) -> None:
        x_train, y_train, x_val, y_val = _digits_split()
        super().__init__(x_train, y_train, x_val, y_val)
        padded = F.pad(self.x_train.view(-1, 8, 8), (1, 1, 1, 1))
        moves = [(dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1)]
        self.shifted = torch.stack(
            [padded[:, 1 + y : 9 + y, 1 + x : 9 + x].reshape(-1, 64) for y, x in moves]
        )

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        count = len(self.x_train)

        def view(index: torch.Tensor) -> torch.Tensor:
            shift = torch.randint(0, 9, (len(index),), generator=generator)
            scale = 0.8 + 0.4 * torch.rand(len(index), 1, generator=generator)
            noise = 0.1 * torch.randn(len(index), 64, generator=generator)
            return self.shifted[shift, index] * scale + noise

        while True:
            index = torch.randint(0, count, (micro_batch_size,), generator=generator)
            yield view(index), view(index)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        first, second = batch
        p = torch.softmax(model(first).float(), -1)
        q = torch.softmax(model(second).float(), -1)
        joint = p.T @ q / len(p)
        joint = ((joint + joint.T) / 2).clamp_min(1e-8)
        marginal_a, marginal_b = joint.sum(1, keepdim=True), joint.sum(0, keepdim=True)
        return -(joint * (joint.log() - marginal_a.log() - marginal_b.log())).sum()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        from sklearn.metrics import normalized_mutual_info_score

        logits = model(self.x_val).float()
        if not torch.isfinite(logits).all():
            return {"val_nmi": math.nan}
        assigned = logits.argmax(-1)
        return {
            "val_nmi": float(normalized_mutual_info_score(self.y_val.numpy(), assigned.numpy())),
            "val_clusters_used": float(assigned.unique().numel()),
        }

    def build_model(self) -> nn.Module:
        return _mlp(64, [256, 256], self.clusters)


class NextFramePrediction(_Tabular):
    """Video prediction: the next 16 x 16 frame of clips of one or two bouncing squares (3 x 3
    pixels, integer velocities of up to 2 pixels a frame in each direction, reflected at the
    walls, the squares passing over each other) from the three frames before it (4,000 / 500
    clips). A fully convolutional network (3 x 3 kernels, 16 channels, dilations 1, 2 and 4,
    then a 1 x 1 output) maps the three frames, as channels, to the logits of the next frame's
    pixels, trained by the binary cross-entropy. Metric the mean squared error of the
    predicted pixel probabilities on the held-out clips (0.21 to 0.23 at the start; copying the
    last frame scores 0.074, reported beside it). The error falls fast below the copy, then
    slowly, to about 0.022 at a good LR; too low an LR ends near 0.03, and too high an LR
    sticks at 0.049, a constant frame. Defined as the fortieth batch of fresh workloads, by a
    helper session."""

    metric = "val_mse"
    size, square, context = 16, 3, 3

    def __init__(self) -> None:
        rng = np.random.default_rng(983)

        def clips(count: int) -> np.ndarray:
            frames = np.zeros((count, self.context + 1, self.size, self.size), np.float32)
            limit = self.size - self.square
            for c in range(count):
                for _ in range(rng.integers(1, 3)):
                    position = rng.integers(0, limit + 1, 2)
                    velocity = rng.choice([-2, -1, 1, 2], 2)
                    for t in range(self.context + 1):
                        y, x = position
                        frames[c, t, y : y + self.square, x : x + self.square] = 1.0
                        position = position + velocity
                        for axis in range(2):
                            if position[axis] < 0 or position[axis] > limit:
                                velocity[axis] = -velocity[axis]
                                low = position[axis] < 0
                                position[axis] = -position[axis] if low else 2 * limit - position[axis]
            return frames

        train, val = clips(4000), clips(500)
        super().__init__(train[:, :-1], train[:, -1], val[:, :-1], val[:, -1])
        self.copy_mse = F.mse_loss(self.x_val[:, -1], self.y_val).item()

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        frames, following = batch
        return F.binary_cross_entropy_with_logits(model(frames).squeeze(1).float(), following)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        prediction = torch.sigmoid(model(self.x_val).squeeze(1).float())
        if not torch.isfinite(prediction).all():
            return {"val_mse": math.nan}
        return {"val_mse": F.mse_loss(prediction, self.y_val).item(), "val_copy_last_mse": self.copy_mse}

    def build_model(self) -> nn.Module:
        return nn.Sequential(
            nn.Conv2d(self.context, 16, 3, padding=1), nn.ReLU(),
            nn.Conv2d(16, 16, 3, padding=2, dilation=2), nn.ReLU(),
            nn.Conv2d(16, 16, 3, padding=4, dilation=4), nn.ReLU(),
            nn.Conv2d(16, 1, 1),
        )  # fmt: skip


class NoiseContrastiveDensity(_Tabular):
    """Unnormalised density estimation by noise-contrastive estimation (NCE; Gutmann and
    Hyvärinen 2010): an MLP 2-64-64-1 gives the log of an unnormalised density of points in the
    plane and a learned scalar its log normaliser, trained by the logistic loss of telling the
    data from as many samples of a Gaussian noise distribution (mean 0, SD 2) by the difference
    of the two log densities. The data are a five-armed pinwheel (8,000 / 2,000). Metric the
    negative log-likelihood in nats of the held-out points under the model normalised
    numerically on a 160 x 160 grid over [-5, 5]^2 (4.5 to 4.8 at the start, 4.61 for the
    uniform density on the square; the gap between the learned and the numerical log
    normaliser is reported beside it). The NLL falls steadily, to about 2.4 at a good LR; too
    low an LR ends near 3.4, and too high an LR sticks at the uniform 4.61. Defined as the
    fortieth batch of fresh workloads, by a helper session."""

    metric = "val_nll"
    noise_sd, extent, cells = 2.0, 5.0, 160

    def __init__(self) -> None:
        rng = np.random.default_rng(991)

        def pinwheel(count: int) -> np.ndarray:
            arms = rng.integers(0, 5, count)
            features = rng.normal(size=(count, 2)) * [0.3, 0.08] + [1.0, 0.0]
            angles = arms * 2 * np.pi / 5 + 0.25 * np.exp(features[:, 0])
            cos, sin = np.cos(angles), np.sin(angles)
            radial, tangential = features[:, 0], features[:, 1]
            return 2.0 * np.stack([radial * cos - tangential * sin, radial * sin + tangential * cos], 1)

        train, val = pinwheel(8000), pinwheel(2000)
        super().__init__(train, np.zeros(len(train), np.float32), val, np.zeros(len(val), np.float32))
        centres = (torch.arange(self.cells, dtype=torch.float32) + 0.5) / self.cells
        axis = centres * 2 * self.extent - self.extent
        self.grid = torch.cartesian_prod(axis, axis)
        self.cell_area = (2 * self.extent / self.cells) ** 2

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        count = len(self.x_train)
        while True:
            index = torch.randint(0, count, (micro_batch_size,), generator=generator)
            yield self.x_train[index], self.noise_sd * torch.randn(micro_batch_size, 2, generator=generator)

    def _log_noise(self, x: torch.Tensor) -> torch.Tensor:
        return -0.5 * x.pow(2).sum(-1) / self.noise_sd**2 - math.log(2 * math.pi * self.noise_sd**2)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        data, noise = batch
        log_ratio_data = model(data).squeeze(-1).float() + model.log_normaliser - self._log_noise(data)
        log_ratio_noise = model(noise).squeeze(-1).float() + model.log_normaliser - self._log_noise(noise)
        return -(F.logsigmoid(log_ratio_data).mean() + F.logsigmoid(-log_ratio_noise).mean())

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        energy = model(self.grid).squeeze(-1).float()
        held_out = model(self.x_val).squeeze(-1).float()
        if not (torch.isfinite(energy).all() and torch.isfinite(held_out).all()):
            return {"val_nll": math.nan}
        log_z = torch.logsumexp(energy, 0).item() + math.log(self.cell_area)
        return {
            "val_nll": log_z - held_out.mean().item(),
            "val_normaliser_gap": abs(model.log_normaliser.item() + log_z),
        }

    def build_model(self) -> nn.Module:
        model = _mlp(2, [64, 64], 1)
        model.log_normaliser = nn.Parameter(torch.zeros(()))
        return model


class PartialLabelDigits(_Tabular):
    """Partial-label learning (the classifier-consistent loss of Feng et al. 2020): each
    ``load_digits`` training image (pixels in [0, 1]; 1,257 / 540) comes with a set of candidate
    labels holding its true class, a look-alike class (1 and 7, 3 and 8, 4 and 9, 5 and 6, 0
    and 2) with probability 0.9, and every other class with probability 0.5 (5.9 candidates on
    average), never told which is right. An MLP 64-256-256-10 is trained by the negative log of
    the probability it puts on the candidate set. Metric the error rate against the true labels
    of the held-out digits (0.9 at the start). The error falls to about 0.07 at a good LR; too
    low an LR ends near 0.1, and too high an LR settles on one class (0.9). Defined as the
    fortieth batch of fresh workloads, by a helper session."""

    metric = "val_error"
    look_alike = (2, 7, 0, 8, 9, 6, 5, 1, 3, 4)

    def __init__(self) -> None:
        x_train, y_train, x_val, y_val = _digits_split()
        rng = np.random.default_rng(997)
        candidates = rng.random((len(y_train), 10)) < 0.5
        partner = np.array(self.look_alike)[y_train]
        candidates[np.arange(len(y_train)), partner] = rng.random(len(y_train)) < 0.9
        candidates[np.arange(len(y_train)), y_train] = True
        self.mean_candidates = float(candidates.sum(1).mean())
        super().__init__(x_train, candidates.astype(np.float32), x_val, y_val)
        self.y_val = self.y_val.long()

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, candidates = batch
        log_p = F.log_softmax(model(inputs).float(), -1)
        return -torch.logsumexp(log_p.masked_fill(candidates == 0, -math.inf), -1).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float()
        if not torch.isfinite(logits).all():
            return {"val_error": math.nan}
        return {
            "val_error": (logits.argmax(-1) != self.y_val).float().mean().item(),
            "val_loss": F.cross_entropy(logits, self.y_val).item(),
        }

    def build_model(self) -> nn.Module:
        return _mlp(64, [256, 256], 10)


class LowRankAdapterFineTuning(_Tabular):
    """Parameter-efficient fine-tuning with low-rank adapters (LoRA; Hu et al. 2021): an MLP
    64-256-256-256-5 is pretrained once, with a fixed seed, on the ``load_digits`` classes 0 to 4;
    it is then frozen and adapted to a new task, the classes 5 to 9 with every image transposed
    (a quarter turn and a flip; 629 / 270 images, pixels in [0, 1]). Only a rank-4 adapter
    B A (scaled by 2; A random, B zero at the start) beside each of the three hidden layers'
    frozen weights and a new output layer of 5 are trained, by cross-entropy. Metric the
    held-out cross-entropy of the new task (3.3 to 4.1 at the start; the accuracy is reported
    beside it). The loss falls to about 0.1 at a good LR; too low an LR ends near 0.18, and too
    high an LR near 0.7 to 1.6, or diverges. Defined as the fortieth batch of fresh workloads,
    by a helper session."""

    metric = "val_loss"
    rank, width = 4, 256

    def __init__(self) -> None:
        x_train, y_train, x_val, y_val = _digits_split()
        old, new = y_train < 5, y_val >= 5
        with torch.random.fork_rng():
            torch.manual_seed(1009)
            base = _mlp(64, [self.width] * 3, 5)
            optimizer = torch.optim.Adam(base.parameters(), lr=3e-3)
            inputs, labels = torch.tensor(x_train[old]), torch.tensor(y_train[old])
            for _ in range(150):
                optimizer.zero_grad()
                F.cross_entropy(base(inputs), labels).backward()
                optimizer.step()
        hidden = (base[0], base[2], base[4])
        self.frozen = [(layer.weight.detach().clone(), layer.bias.detach().clone()) for layer in hidden]

        def transposed(x: np.ndarray) -> np.ndarray:
            return x.reshape(-1, 8, 8).transpose(0, 2, 1).reshape(-1, 64)

        keep = y_train >= 5
        super().__init__(transposed(x_train[keep]), y_train[keep] - 5, transposed(x_val[new]), y_val[new] - 5)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, labels = batch
        return F.cross_entropy(model(inputs).float(), labels)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float()
        if not torch.isfinite(logits).all():
            return {"val_loss": math.nan}
        return {
            "val_loss": F.cross_entropy(logits, self.y_val).item(),
            "val_accuracy": (logits.argmax(-1) == self.y_val).float().mean().item(),
        }

    def build_model(self) -> nn.Module:
        return _LowRankAdapted(self.frozen, self.rank, 5)


class _LowRankAdapted(nn.Module):
    def __init__(self, frozen: list[tuple[torch.Tensor, torch.Tensor]], rank: int, outputs: int) -> None:
        super().__init__()
        for i, (weight, bias) in enumerate(frozen):
            self.register_buffer(f"weight{i}", weight.clone())
            self.register_buffer(f"bias{i}", bias.clone())
        self.down = nn.ParameterList(
            [nn.Parameter(torch.randn(rank, w.shape[1]) / math.sqrt(w.shape[1])) for w, _ in frozen]
        )
        self.up = nn.ParameterList([nn.Parameter(torch.zeros(w.shape[0], rank)) for w, _ in frozen])
        self.head = nn.Linear(frozen[-1][0].shape[0], outputs)
        self.layers, self.scale = len(frozen), 2.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i in range(self.layers):
            weight, bias = getattr(self, f"weight{i}"), getattr(self, f"bias{i}")
            x = F.relu(F.linear(x, weight, bias) + self.scale * (x @ self.down[i].T) @ self.up[i].T)
        return self.head(x)


class TicTacToeMinimax(_Tabular):
    """Game-position move prediction from exact game-tree search: every position of
    noughts and crosses reachable in play with the game not over (4,520), seen from the player
    to move (one 3 x 3 plane of their marks, one of the opponent's, one of the empty cells), is
    labelled by full minimax search with the moves that score best (a win sooner, a loss later,
    being better). The positions are split 70 / 30 by their class under the 8 symmetries of the
    board, so no held-out position is a rotation or reflection of a training one. A small CNN
    (3 x 3 convolutions of 64 channels, twice, then an MLP of 128 over the 9 cells) gives a
    logit per cell, trained by cross-entropy over the free cells against the uniform
    distribution on the best moves. Metric the share of held-out positions whose highest
    free-cell logit is a best move (0.55 to 0.6 at the start; 0.47 for a uniformly random free
    cell, reported beside it). The rate climbs to about 0.89 at a good LR; too low or too high
    an LR ends near 0.78. Defined as the forty-first batch of fresh workloads, by a helper session."""

    metric = "val_best_move_rate"
    lines = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))

    def __init__(self) -> None:
        values: dict[tuple[int, ...], int] = {}

        def winner(board: tuple[int, ...]) -> int:
            for a, b, c in self.lines:
                if board[a] != 0 and board[a] == board[b] == board[c]:
                    return board[a]
            return 0

        def search(board: tuple[int, ...], player: int) -> int:
            # The value for ``player`` (to move): 10 - depth for a win, depth - 10 for a loss.
            if board in values:
                return values[board]
            scores = []
            for cell in range(9):
                if board[cell] == 0:
                    after = board[:cell] + (player,) + board[cell + 1 :]
                    if winner(after):
                        scores.append(10)
                    elif 0 not in after:
                        scores.append(0)
                    else:
                        inner = search(after, -player)
                        scores.append(-inner - (1 if inner > 0 else -1 if inner < 0 else 0))
            values[board] = max(scores)
            return values[board]

        def children(board: tuple[int, ...], player: int) -> list[float]:
            scores = []
            for cell in range(9):
                if board[cell] != 0:
                    scores.append(-math.inf)
                    continue
                after = board[:cell] + (player,) + board[cell + 1 :]
                if winner(after):
                    scores.append(10)
                elif 0 not in after:
                    scores.append(0)
                else:
                    inner = values[after]
                    scores.append(-inner - (1 if inner > 0 else -1 if inner < 0 else 0))
            return scores

        positions: list[tuple[tuple[int, ...], int]] = []
        seen: set[tuple[int, ...]] = set()

        def walk(board: tuple[int, ...], player: int) -> None:
            if board in seen or winner(board) or 0 not in board:
                return
            seen.add(board)
            positions.append((board, player))
            search(board, player)
            for cell in range(9):
                if board[cell] == 0:
                    walk(board[:cell] + (player,) + board[cell + 1 :], -player)

        walk((0,) * 9, 1)
        grid = np.arange(9).reshape(3, 3)
        symmetries = [np.rot90(g, k).ravel() for g in (grid, grid.T) for k in range(4)]
        features, targets, best, groups = [], [], [], []
        for board, player in positions:
            mine = np.array(board) * player
            features.append(np.stack([mine == 1, mine == -1, mine == 0]).astype(np.float32).ravel())
            scores = np.array(children(board, player))
            optimal = scores == scores.max()
            best.append(optimal)
            targets.append(optimal / optimal.sum())
            groups.append(min(tuple(mine[s]) for s in symmetries))
        classes = sorted(set(groups))
        rng = np.random.default_rng(1013)
        held_out = {classes[i] for i in rng.permutation(len(classes))[: int(0.3 * len(classes))]}
        val = np.array([g in held_out for g in groups])
        x, y, best_moves = np.array(features), np.array(targets, np.float32), np.array(best)
        super().__init__(x[~val], y[~val], x[val], y[val])
        self.val_best = torch.tensor(best_moves[val])
        free = self.x_val[:, 18:]
        self.random_rate = ((self.val_best & (free > 0)).sum(1) / free.sum(1)).mean().item()

    @staticmethod
    def _masked(model: nn.Module, boards: torch.Tensor) -> torch.Tensor:
        logits = model(boards.view(-1, 3, 3, 3)).float()
        return logits.masked_fill(boards[:, 18:] == 0, -1e9)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        boards, targets = batch
        return F.cross_entropy(self._masked(model, boards), targets)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = self._masked(model, self.x_val)
        if not torch.isfinite(logits).all():
            return {"val_best_move_rate": math.nan}
        chosen = logits.argmax(-1, keepdim=True)
        return {
            "val_best_move_rate": self.val_best.gather(1, chosen).float().mean().item(),
            "val_loss": F.cross_entropy(logits, self.y_val).item(),
            "val_random_move_rate": self.random_rate,
        }

    def build_model(self) -> nn.Module:
        return nn.Sequential(
            nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(),
            nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(),
            nn.Flatten(), nn.Linear(64 * 9, 128), nn.ReLU(), nn.Linear(128, 9),
        )  # fmt: skip


class DeepHedgingCall(_Tabular):
    """Deep hedging (Buehler et al. 2019): hedging a short at-the-money European call (strike
    100, three months) on simulated Heston paths (spot 100, variance mean-reverting to 0.04 at
    rate 2 with vol-of-vol 0.5, correlation -0.7, 20 rebalancing dates; 20,000 / 4,000 paths)
    with proportional transaction costs of 1%, the premium fixed at the Black-Scholes price.
    One MLP 4-32-32-1 (linear output), shared by every date, maps the log-moneyness, the time left,
    the current variance and the previous holding to the new holding in the stock; the hedged
    profit and loss (premium + trading gains - costs - payoff) is trained by its mean square
    (of the P&L / 50). Metric the root mean square of the held-out hedged P&L (2.7 to 3.2 at the
    start; the Black-Scholes delta hedge at the long-run volatility is reported beside it). The
    error falls to about 2.0 at a good LR; too low an LR ends near 2.2, and too high an LR is
    noisy or diverges. Defined as the forty-first batch of fresh workloads, by a helper session."""

    metric = "val_hedge_rmse"
    spot, strike, maturity, dates, cost = 100.0, 100.0, 0.25, 20, 0.01

    def __init__(self) -> None:
        rng = np.random.default_rng(1019)
        dt = self.maturity / self.dates

        def paths(count: int) -> np.ndarray:
            log_s = np.full(count, math.log(self.spot))
            v = np.full(count, 0.04)
            out = np.zeros((count, self.dates + 1, 2), np.float32)
            out[:, 0] = np.stack([np.exp(log_s), v], 1)
            sub = dt / 5
            for t in range(self.dates):
                for _ in range(5):  # five Euler steps per rebalancing date, variance floored at 0
                    z1 = rng.normal(size=count)
                    z2 = -0.7 * z1 + math.sqrt(1 - 0.49) * rng.normal(size=count)
                    vp = np.maximum(v, 0.0)
                    log_s += -0.5 * vp * sub + np.sqrt(vp * sub) * z1
                    v = v + 2.0 * (0.04 - vp) * sub + 0.5 * np.sqrt(vp * sub) * z2
                out[:, t + 1] = np.stack([np.exp(log_s), np.maximum(v, 0.0)], 1)
            return out

        train, val = paths(20000), paths(4000)
        zeros = np.zeros(len(train), np.float32)
        super().__init__(train, zeros, val, np.zeros(len(val), np.float32))
        sigma = 0.2
        d1 = (math.log(self.spot / self.strike) + 0.5 * sigma**2 * self.maturity) / (
            sigma * math.sqrt(self.maturity)
        )
        normal = torch.distributions.Normal(0.0, 1.0)
        self.premium = (
            self.spot * normal.cdf(torch.tensor(d1)).item()
            - self.strike * normal.cdf(torch.tensor(d1 - sigma * math.sqrt(self.maturity))).item()
        )
        self.delta_rmse = self._pnl(None, self.x_val).pow(2).mean().sqrt().item()

    def _pnl(self, model: nn.Module | None, paths: torch.Tensor) -> torch.Tensor:
        prices, variance = paths[..., 0], paths[..., 1]
        holding = torch.zeros(len(paths))
        pnl = torch.full((len(paths),), self.premium)
        normal = torch.distributions.Normal(0.0, 1.0)
        for t in range(self.dates):
            left = self.maturity * (1 - t / self.dates)
            moneyness = (prices[:, t] / self.strike).log()
            if model is None:  # Black-Scholes delta at the long-run volatility
                new = normal.cdf((moneyness + 0.02 * left) / (0.2 * math.sqrt(left)))
            else:
                inputs = torch.stack(
                    [moneyness * 10, torch.full_like(moneyness, left * 4), variance[:, t] * 25, holding], 1
                )
                new = model(inputs).squeeze(-1).float()
            pnl = (
                pnl
                - self.cost * prices[:, t] * (new - holding).abs()
                + new * (prices[:, t + 1] - prices[:, t])
            )
            holding = new
        pnl = pnl - self.cost * prices[:, -1] * holding
        return pnl - (prices[:, -1] - self.strike).clamp_min(0.0)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        paths, _ = batch
        return (self._pnl(model, paths) / 50.0).pow(2).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        pnl = self._pnl(model, self.x_val)
        if not torch.isfinite(pnl).all():
            return {"val_hedge_rmse": math.nan}
        worst = pnl.sort().values[: len(pnl) // 20]
        return {
            "val_hedge_rmse": pnl.pow(2).mean().sqrt().item(),
            "val_cvar95_loss": -worst.mean().item(),
            "val_delta_hedge_rmse": self.delta_rmse,
        }

    def build_model(self) -> nn.Module:
        return _mlp(4, [32, 32], 1)


class StoryQAMemoryNetwork(_Tabular):
    """Question answering over short stories (the two-supporting-facts task of bAbI; Weston et
    al. 2015) by an end-to-end memory network (Sukhbaatar et al. 2015): stories of 12 generated
    sentences about 4 people, 6 places and 4 objects ("Mary went to the kitchen", "John got the
    ball", "John dropped the ball"), each a bag of subject, verb and argument tokens, end with
    "where is the X?" about a person (a third) or an object (two thirds: where its holder is
    now, or where it was dropped), the answer one of the 6 places (10,000 / 1,000 stories).
    The network embeds each sentence (32 dimensions, plus a learned embedding of its position
    in the story) and the question, reads the memory in 3 hops of softmax attention (adjacent
    weight tying) and answers by a linear layer, trained by cross-entropy. Metric the error
    rate on the held-out questions (0.8 at the start). The error falls, after a plateau, to
    about 0.03 at a good LR; too low an LR ends near 0.4, and too high an LR near 0.65.
    Defined as the forty-first batch of
    fresh workloads, by a helper session."""

    metric = "val_error"
    people, places, objects, sentences = 4, 6, 4, 12
    # Vocabulary: 0 padding, people, places, objects, then the verbs "went", "got",
    # "dropped" and the question word "where".
    vocab = 1 + 4 + 6 + 4 + 4

    def __init__(self) -> None:
        rng = np.random.default_rng(1021)
        person0, place0, object0 = 1, 1 + self.people, 1 + self.people + self.places
        went, got, dropped, where = (object0 + self.objects + i for i in range(4))

        def story() -> tuple[np.ndarray, int]:
            while True:
                tokens = np.zeros((self.sentences + 1, 3), np.int64)
                at: dict[int, int] = {}
                holder: dict[int, int] = {}
                dropped_at: dict[int, int] = {}
                for s in range(self.sentences):
                    person = int(rng.integers(self.people))
                    held = [o for o, p in holder.items() if p == person]
                    free = [o for o in range(self.objects) if o not in holder]
                    choice = rng.random()
                    if person not in at or choice < 0.5:
                        place = int(rng.integers(self.places))
                        at[person] = place
                        tokens[s] = (person0 + person, went, place0 + place)
                    elif held and choice < 0.75:
                        thing = held[int(rng.integers(len(held)))]
                        del holder[thing]
                        dropped_at[thing] = at[person]
                        tokens[s] = (person0 + person, dropped, object0 + thing)
                    elif free:
                        thing = free[int(rng.integers(len(free)))]
                        holder[thing] = person
                        tokens[s] = (person0 + person, got, object0 + thing)
                    else:
                        place = int(rng.integers(self.places))
                        at[person] = place
                        tokens[s] = (person0 + person, went, place0 + place)
                located = {o: at[p] for o, p in holder.items()} | {
                    o: q for o, q in dropped_at.items() if o not in holder
                }
                if rng.random() < 1 / 3 or not located:
                    person = list(at)[int(rng.integers(len(at)))]
                    tokens[-1] = (where, person0 + person, 0)
                    return tokens, at[person]
                thing = list(located)[int(rng.integers(len(located)))]
                tokens[-1] = (where, object0 + thing, 0)
                return tokens, located[thing]

        def stories(count: int) -> tuple[np.ndarray, np.ndarray]:
            made = [story() for _ in range(count)]
            return np.stack([t for t, _ in made]).reshape(count, -1), np.array([a for _, a in made])

        x_train, y_train = stories(10000)
        x_val, y_val = stories(1000)
        super().__init__(x_train, y_train, x_val, y_val)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        stories, answers = batch
        return F.cross_entropy(model(stories).float(), answers)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float()
        if not torch.isfinite(logits).all():
            return {"val_error": math.nan}
        return {
            "val_error": (logits.argmax(-1) != self.y_val).float().mean().item(),
            "val_loss": F.cross_entropy(logits, self.y_val).item(),
        }

    def build_model(self) -> nn.Module:
        return _MemoryNetwork(self.vocab, self.sentences, 32, 3, self.places)


class _MemoryNetwork(nn.Module):
    def __init__(self, vocab: int, sentences: int, width: int, hops: int, answers: int) -> None:
        super().__init__()
        self.embed = nn.ModuleList([nn.Embedding(vocab, width, padding_idx=0) for _ in range(hops + 1)])
        self.time = nn.ParameterList(
            [nn.Parameter(0.1 * torch.randn(sentences, width)) for _ in range(hops + 1)]
        )
        for table in self.embed:
            nn.init.normal_(table.weight, std=0.1)
        self.sentences, self.hops = sentences, hops
        self.answer = nn.Linear(width, answers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        tokens = x.long().view(len(x), self.sentences + 1, 3)
        story, question = tokens[:, :-1], tokens[:, -1]
        u = self.embed[0](question).sum(1)
        for k in range(self.hops):
            keys = self.embed[k](story).sum(2) + self.time[k]
            values = self.embed[k + 1](story).sum(2) + self.time[k + 1]
            attention = torch.softmax((keys @ u.unsqueeze(-1)).squeeze(-1), -1)
            u = u + (attention.unsqueeze(-1) * values).sum(1)
        return self.answer(u)


class RotationPointCloud(_Tabular):
    """3-D orientation estimation: the rotation that carries a fixed, asymmetric reference
    object (64 points drawn once around five blobs of different sizes) to a noisy observation
    of it (a uniformly random rotation, Gaussian noise of SD 0.03 on every point, the points
    in random order; 10,000 / 1,000 clouds). A PointNet (a shared MLP 3-64-128 per point, max
    pooling, then an MLP 128-128-6) outputs two 3-vectors mapped to a rotation matrix by
    Gram-Schmidt (the continuous 6-D representation of Zhou et al. 2019), trained by the
    squared Frobenius distance to the true matrix. Metric the mean geodesic angle in degrees
    between the estimated and the true held-out rotations (about 125 at the start, 126.5 for a
    random guess). The error falls slowly, to about 45 at a good LR; too low an LR ends near
    100. Defined as the forty-first batch of fresh workloads, by a helper session."""

    metric = "val_angle_deg"
    points = 64

    def __init__(self) -> None:
        rng = np.random.default_rng(1031)
        centres = np.array(
            [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.6, 0.0], [0.0, 0.0, 0.35], [0.5, 0.4, -0.2]]
        )
        scales = np.array([0.15, 0.08, 0.1, 0.05, 0.06])
        blob = rng.integers(0, 5, self.points)
        reference = centres[blob] + scales[blob, None] * rng.normal(size=(self.points, 3))
        reference -= reference.mean(0)

        def clouds(count: int) -> tuple[np.ndarray, np.ndarray]:
            q = rng.normal(size=(count, 4))
            q /= np.linalg.norm(q, axis=1, keepdims=True)
            w, x, y, z = q.T
            rotations = np.stack(
                [
                    1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
                    2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
                    2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y),
                ],
                1,
            ).reshape(count, 3, 3)  # fmt: skip
            observed = reference @ rotations.transpose(0, 2, 1) + 0.03 * rng.normal(
                size=(count, self.points, 3)
            )
            order = rng.permuted(np.tile(np.arange(self.points), (count, 1)), axis=1)
            observed = np.take_along_axis(observed, order[..., None], 1)
            return observed.astype(np.float32), rotations.reshape(count, 9).astype(np.float32)

        x_train, y_train = clouds(10000)
        x_val, y_val = clouds(1000)
        super().__init__(x_train, y_train, x_val, y_val)

    @staticmethod
    def _rotation(six: torch.Tensor) -> torch.Tensor:
        a, b = six[:, :3], six[:, 3:]
        first = F.normalize(a, dim=-1)
        second = F.normalize(b - (first * b).sum(-1, keepdim=True) * first, dim=-1)
        return torch.stack([first, second, torch.cross(first, second, dim=-1)], -1)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        clouds, rotations = batch
        estimate = self._rotation(model(clouds).float())
        return (estimate - rotations.view(-1, 3, 3)).pow(2).sum((1, 2)).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        six = model(self.x_val).float()
        if not torch.isfinite(six).all():
            return {"val_angle_deg": math.nan}
        estimate = self._rotation(six)
        trace = (estimate * self.y_val.view(-1, 3, 3)).sum((1, 2))
        angles = torch.rad2deg(torch.arccos(((trace - 1) / 2).clamp(-1.0, 1.0)))
        if not torch.isfinite(angles).all():
            return {"val_angle_deg": math.nan}
        return {
            "val_angle_deg": angles.mean().item(),
            "val_within_10deg": (angles < 10).float().mean().item(),
        }

    def build_model(self) -> nn.Module:
        return _PointNetRegressor(6)


class _PointNetRegressor(nn.Module):
    def __init__(self, outputs: int) -> None:
        super().__init__()
        self.point = nn.Sequential(nn.Linear(3, 64), nn.ReLU(), nn.Linear(64, 128), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, outputs))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.point(x).amax(1))


class RelationalSceneQA(_Tabular):
    """Relational visual question answering on scene descriptions (the state-description
    Sort-of-CLEVR task of Santoro et al. 2017): scenes of 6 objects, each of its own colour
    (one-hot of 6), a shape (circle or square) and a position in the unit square, listed in
    random order, with a question (a colour and one of 6 types): three non-relational (the
    shape of that object; is it in the left half; is it in the top half) and three relational
    (the shape of the object nearest to it; the shape of the one farthest from it; how many
    objects share its shape), answered among 10 classes (20,000 / 1,000 questions). A relation
    network sums an MLP g (32-64-64-64) over all 36 ordered object pairs with the question,
    then an MLP f (64-64-10), trained by cross-entropy. Metric the error rate on held-out
    questions (about 0.8 at the start; the relational questions' error reported beside it).
    The error falls quickly to about 0.45, then slowly, to about 0.33 at a good LR. Defined as the forty-second batch of fresh workloads, by a helper session."""

    metric = "val_error"
    count, colours = 6, 6

    def __init__(self) -> None:
        rng = np.random.default_rng(1033)

        def questions(n: int) -> tuple[np.ndarray, np.ndarray]:
            # Answers: 0 circle, 1 square, 2 yes, 3 no, 4 + k for a count of k + 1.
            inputs = np.zeros((n, self.count * 10 + 12), np.float32)
            answers = np.zeros(n, np.int64)
            for i in range(n):
                while True:
                    position = rng.uniform(0.0, 1.0, (self.count, 2))
                    gaps = np.linalg.norm(position[:, None] - position[None], axis=-1)
                    if gaps[np.triu_indices(self.count, 1)].min() > 0.12:
                        break
                shape = rng.integers(0, 2, self.count)
                colour = rng.permutation(self.colours)
                asked, kind = int(rng.integers(self.count)), int(rng.integers(6))
                others = gaps[asked].copy()
                if kind == 0:
                    answers[i] = shape[asked]
                elif kind in (1, 2):
                    answers[i] = 2 if position[asked, kind - 1] < 0.5 else 3
                elif kind == 3:
                    others[asked] = np.inf
                    answers[i] = shape[others.argmin()]
                elif kind == 4:
                    answers[i] = shape[others.argmax()]
                else:
                    answers[i] = 3 + (shape == shape[asked]).sum()
                objects = np.concatenate([np.eye(self.colours)[colour], np.eye(2)[shape], position], 1)
                inputs[i, : self.count * 10] = objects.ravel()
                inputs[i, self.count * 10 + colour[asked]] = 1.0
                inputs[i, self.count * 10 + 6 + kind] = 1.0
            return inputs, answers

        x_train, y_train = questions(20000)
        x_val, y_val = questions(1000)
        super().__init__(x_train, y_train, x_val, y_val)
        self.relational = self.x_val[:, -3:].sum(1) > 0

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, answers = batch
        return F.cross_entropy(model(inputs).float(), answers)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float()
        if not torch.isfinite(logits).all():
            return {"val_error": math.nan}
        wrong = (logits.argmax(-1) != self.y_val).float()
        return {
            "val_error": wrong.mean().item(),
            "val_relational_error": wrong[self.relational].mean().item(),
            "val_loss": F.cross_entropy(logits, self.y_val).item(),
        }

    def build_model(self) -> nn.Module:
        return _RelationNetwork(self.count, 10, 12, 64, 10)


class _RelationNetwork(nn.Module):
    def __init__(self, count: int, features: int, question: int, width: int, answers: int) -> None:
        super().__init__()
        self.count, self.features = count, features
        self.g = _mlp(2 * features + question, [width, width], width)
        self.f = nn.Sequential(nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, answers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = self.count
        objects = x[:, : n * self.features].view(-1, n, self.features)
        question = x[:, n * self.features :]
        pairs = torch.cat(
            [
                objects.unsqueeze(2).expand(-1, n, n, -1),
                objects.unsqueeze(1).expand(-1, n, n, -1),
                question[:, None, None].expand(-1, n, n, -1),
            ],
            -1,
        )
        return self.f(self.g(pairs).sum((1, 2)))


class BoxDetection(_Tabular):
    """Single-stage object detection with bounding boxes (in the manner of YOLO; Redmon et al.
    2016): 24 x 24 images of 1 to 4 bright rectangles (sides 3 to 10 pixels, possibly
    overlapping, their centres in different cells of a 6 x 6 grid) over a textured
    background with Gaussian noise (6,000 / 400 images). A CNN (3 x 3 convolutions of 8, 16
    and 32 channels with two 2 x 2 poolings, then a 3 x 3 of 32 and a 1 x 1 convolution) gives
    per cell of the 6 x 6 grid an objectness logit and a box (the centre's offset in the cell and
    the log width and height), trained by binary cross-entropy on objectness plus the squared
    error of the box of cells holding a centre. Boxes of objectness above 0.5 are kept after
    non-maximum suppression (IoU 0.5). Metric the F1 score of the held-out detections, a
    detection matching a true box at IoU at least 0.5 (0 at the start). The score stays at 0
    for a while, then climbs to about 0.85 at a good LR; too low an LR never leaves 0.
    Defined as the
    forty-second batch of fresh workloads, by a helper session."""

    metric = "val_f1"
    size, cells = 24, 6

    def __init__(self) -> None:
        rng = np.random.default_rng(1039)
        stride = self.size // self.cells
        yy, xx = np.mgrid[0 : self.size, 0 : self.size]

        def images(count: int) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
            pictures = np.zeros((count, 1, self.size, self.size), np.float32)
            targets = np.zeros((count, 5, self.cells, self.cells), np.float32)
            boxes = []
            for i in range(count):
                phase = rng.uniform(0, 2 * np.pi, 2)
                frequency = rng.uniform(0.2, 0.8, 2)
                picture = 0.15 * np.sin(frequency[0] * xx + phase[0]) * np.sin(frequency[1] * yy + phase[1])
                drawn: list[tuple[float, float, float, float]] = []
                for _ in range(rng.integers(1, 5)):
                    w, h = rng.integers(3, 11, 2)
                    x0, y0 = rng.integers(0, self.size - w + 1), rng.integers(0, self.size - h + 1)
                    cx, cy = x0 + w / 2, y0 + h / 2
                    col, row = int(cx // stride), int(cy // stride)
                    if col >= self.cells or row >= self.cells or targets[i, 0, row, col]:
                        continue
                    picture[y0 : y0 + h, x0 : x0 + w] = rng.uniform(0.6, 1.0)
                    targets[i, :, row, col] = (
                        1.0,
                        cx / stride - col,
                        cy / stride - row,
                        math.log(w),
                        math.log(h),
                    )
                    drawn.append((x0, y0, x0 + w, y0 + h))
                pictures[i, 0] = picture + 0.1 * rng.normal(size=picture.shape)
                boxes.append(np.array(drawn, np.float32))
            return pictures, targets, boxes

        x_train, y_train, _ = images(6000)
        x_val, y_val, self.val_boxes = images(400)
        super().__init__(x_train, y_train, x_val, y_val)
        self.stride = stride

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        pictures, targets = batch
        out = model(pictures).float()
        present = targets[:, 0]
        objectness = F.binary_cross_entropy_with_logits(out[:, 0], present)
        box = ((out[:, 1:] - targets[:, 1:]).pow(2).sum(1) * present).sum() / present.sum().clamp_min(1.0)
        return objectness + box

    @staticmethod
    def _iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        low = np.maximum(a[:, None, :2], b[None, :, :2])
        high = np.minimum(a[:, None, 2:], b[None, :, 2:])
        inter = np.clip(high - low, 0, None).prod(-1)
        area_a, area_b = (a[:, 2:] - a[:, :2]).prod(-1), (b[:, 2:] - b[:, :2]).prod(-1)
        return inter / (area_a[:, None] + area_b[None] - inter)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        out = model(self.x_val).float()
        if not torch.isfinite(out).all():
            return {"val_f1": math.nan}
        rows, cols = torch.meshgrid(torch.arange(self.cells), torch.arange(self.cells), indexing="ij")
        cx, cy = (cols + out[:, 1]) * self.stride, (rows + out[:, 2]) * self.stride
        w, h = out[:, 3].clamp(-3, 5).exp(), out[:, 4].clamp(-3, 5).exp()
        boxes = torch.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], -1).flatten(1, 2).numpy()
        scores = torch.sigmoid(out[:, 0]).flatten(1).numpy()
        found = correct = truths = 0
        for i, true in enumerate(self.val_boxes):
            order = np.argsort(-scores[i])[:20]
            candidates = boxes[i][order[scores[i][order] > 0.5]]
            overlap = self._iou(candidates, candidates)
            chosen: list[int] = []
            for j in range(len(candidates)):  # non-maximum suppression, best first
                if all(overlap[j, c] < 0.5 for c in chosen):
                    chosen.append(j)
            found, truths = found + len(chosen), truths + len(true)
            if chosen and len(true):
                matches = self._iou(candidates[chosen], true) >= 0.5
                taken: set[int] = set()
                for row in matches:
                    free = [t for t in np.flatnonzero(row) if t not in taken]
                    if free:
                        taken.add(int(free[0]))
                correct += len(taken)
        precision, recall = correct / max(found, 1), correct / max(truths, 1)
        f1 = 2 * precision * recall / (precision + recall) if correct else 0.0
        return {"val_f1": f1, "val_precision": precision, "val_recall": recall}

    def build_model(self) -> nn.Module:
        return nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
            nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(),
            nn.Conv2d(32, 5, 1),
        )  # fmt: skip


class BearingRangeTracking(_Tabular):
    """Learned nonlinear filtering (target tracking): a manoeuvring target in the plane (start
    5 to 15 units from a sensor at the origin, speed up to 0.5 a step, random accelerations of
    SD 0.05 a step) is observed for 30 steps by the sensor's bearing (noise SD 0.02 rad) and
    range (noise SD 1), and missed on a tenth of the steps. A GRU of width 48 reads the measurements (sine and cosine of
    the bearing, the range / 10, a detection flag) and a linear layer estimates the target's current position at every step,
    trained by the mean squared error (20,000 / 500 tracks). Metric the root mean square
    position error of the held-out estimates over steps 10 to 30 (about 10 at the start; the
    raw measurements, where there are any, score about 1, reported beside it). The error falls
    below the raw measurements' at a good LR; too low an LR stays far above them. Defined as the forty-second batch of fresh
    workloads, by a helper session."""

    metric = "val_position_rmse"
    steps = 30

    def __init__(self) -> None:
        rng = np.random.default_rng(1049)

        def tracks(count: int) -> tuple[np.ndarray, np.ndarray]:
            radius, angle = rng.uniform(5, 15, count), rng.uniform(0, 2 * np.pi, count)
            position = np.stack([radius * np.cos(angle), radius * np.sin(angle)], 1)
            heading, speed = rng.uniform(0, 2 * np.pi, count), rng.uniform(0, 0.5, count)
            velocity = np.stack([speed * np.cos(heading), speed * np.sin(heading)], 1)
            truth = np.zeros((count, self.steps, 2), np.float32)
            seen = np.zeros((count, self.steps, 4), np.float32)
            for t in range(self.steps):
                velocity = velocity + 0.05 * rng.normal(size=velocity.shape)
                position = position + velocity
                truth[:, t] = position
                bearing = np.arctan2(position[:, 1], position[:, 0]) + 0.02 * rng.normal(size=count)
                distance = np.linalg.norm(position, axis=1) + rng.normal(size=count)
                hit = rng.random(count) > 0.1
                seen[:, t] = hit[:, None] * np.stack(
                    [np.sin(bearing), np.cos(bearing), distance / 10, np.ones(count)], 1
                )
            return seen, truth

        x_train, y_train = tracks(20000)
        x_val, y_val = tracks(500)
        super().__init__(x_train, y_train, x_val, y_val)
        hit = self.x_val[:, 10:, 3] > 0
        raw = self.x_val[:, 10:, 2:3] * 10 * torch.stack([self.x_val[:, 10:, 1], self.x_val[:, 10:, 0]], -1)
        self.raw_rmse = (raw - self.y_val[:, 10:]).pow(2).sum(-1)[hit].mean().sqrt().item()

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        measurements, truth = batch
        return F.mse_loss(model(measurements).float(), truth / 10)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        estimate = model(self.x_val).float() * 10
        if not torch.isfinite(estimate).all():
            return {"val_position_rmse": math.nan}
        error = (estimate - self.y_val)[:, 10:].pow(2).sum(-1)
        return {"val_position_rmse": error.mean().sqrt().item(), "val_raw_measurement_rmse": self.raw_rmse}

    def build_model(self) -> nn.Module:
        return _SequenceGRU(4, 48, 2)


class _SequenceGRU(nn.Module):
    def __init__(self, inputs: int, width: int, outputs: int) -> None:
        super().__init__()
        self.gru = nn.GRU(inputs, width, batch_first=True)
        self.out = nn.Linear(width, outputs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.gru(x)[0])


class BehaviourCloningNavigation(_Tabular):
    """Imitation learning by behaviour cloning, judged in closed loop: a unicycle robot (speed
    up to 1, turn rate up to 3 rad/s, steps of 0.1 s) must reach a goal in the square [-1, 1]^2
    without touching a round obstacle (radius 0.2 to 0.35) lying across the way. An expert (a
    steering law towards the goal, deflected around the obstacle) is run with noise on its
    actions (600 episodes of 60 steps; 36,000 states, each labelled with the expert's
    noiseless action, as in DART). An MLP 6-128-128-2 (tanh) maps the goal and the obstacle in
    the robot's frame to the action, trained by the squared error to the expert's. Metric the
    success rate of the cloned policy driving 500 held-out episodes for 60 steps (0 to 0.5 at
    the start; the expert's, 0.95, is reported beside it). The rate rises to 0.7 to 0.8, noisy
    from one evaluation to the next, as small errors compound in closed loop. Defined as the forty-second batch of fresh
    workloads, by a helper session."""

    metric = "val_success_rate"
    horizon, dt = 60, 0.1

    def __init__(self) -> None:
        rng = np.random.default_rng(1051)
        self.train_scenes, self.val_scenes = self._scenes(rng, 600), self._scenes(rng, 500)
        states, actions = [], []
        state = self.train_scenes[:, :3].clone()
        for _ in range(self.horizon):
            features = self._features(state, self.train_scenes)
            action = self._expert(features)
            states.append(features)
            actions.append(action)
            noisy = (action + 0.3 * torch.tensor(rng.normal(size=action.shape), dtype=torch.float32)).clamp(
                -1, 1
            )
            state = self._step(state, noisy)
        x, y = torch.cat(states).numpy(), torch.cat(actions).numpy()
        super().__init__(x, y, x[:1], y[:1])
        self.expert_success = self._rollout(self._expert, self.val_scenes)[0]

    @staticmethod
    def _scenes(rng: np.random.Generator, count: int) -> torch.Tensor:
        # Per scene: start x, y, heading; goal x, y; obstacle x, y, radius.
        start = rng.uniform(-1, 1, (count, 2))
        goal = rng.uniform(-1, 1, (count, 2))
        far = np.linalg.norm(goal - start, axis=1) < 1.0
        goal[far] = -start[far]
        heading = rng.uniform(-np.pi, np.pi, count)
        middle = (start + goal) / 2 + rng.normal(0, 0.08, (count, 2))
        radius = rng.uniform(0.2, 0.35, count)
        return torch.tensor(np.column_stack([start, heading, goal, middle, radius]), dtype=torch.float32)

    @staticmethod
    def _features(state: torch.Tensor, scenes: torch.Tensor) -> torch.Tensor:
        cos, sin = state[:, 2].cos(), state[:, 2].sin()

        def local(point: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            d = point - state[:, :2]
            return cos * d[:, 0] + sin * d[:, 1], -sin * d[:, 0] + cos * d[:, 1]

        gx, gy = local(scenes[:, 3:5])
        ox, oy = local(scenes[:, 5:7])
        return torch.stack([gx, gy, ox, oy, scenes[:, 7], torch.hypot(ox, oy) - scenes[:, 7]], 1)

    @staticmethod
    def _expert(features: torch.Tensor) -> torch.Tensor:
        # Head for the goal or, while the obstacle lies across the straight way to it, along
        # the tangent to a circle a margin wider than the obstacle, on the side away from it.
        gx, gy, ox, oy, radius, _ = features.unbind(1)
        distance = torch.hypot(gx, gy).clamp_min(1e-6)
        across = (ox * -gy + oy * gx) / distance
        along = (ox * gx + oy * gy) / distance
        blocked = (along > 0) & (along < distance) & (across.abs() < radius + 0.15)
        reach = ((radius + 0.18) / torch.hypot(ox, oy).clamp_min(1e-6)).clamp(max=1.0).asin()
        around = torch.atan2(oy, ox) - torch.where(across > 0, 1.0, -1.0) * reach
        angle = torch.where(blocked, torch.atan2(around.sin(), around.cos()), torch.atan2(gy, gx))
        turn = (2.0 * angle).clamp(-3, 3) / 3
        speed = ((2 * distance).clamp(max=1.0) * angle.cos().clamp_min(0)).clamp(0, 1)
        return torch.stack([speed, turn], 1)

    def _step(self, state: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        speed, turn = action[:, 0].clamp(0, 1), action[:, 1].clamp(-1, 1) * 3
        heading = state[:, 2] + turn * self.dt
        return torch.stack(
            [
                state[:, 0] + speed * heading.cos() * self.dt,
                state[:, 1] + speed * heading.sin() * self.dt,
                heading,
            ],
            1,
        )

    def _rollout(self, policy: Any, scenes: torch.Tensor) -> tuple[float, float]:
        state, crashed = scenes[:, :3].clone(), torch.zeros(len(scenes), dtype=torch.bool)
        reached = torch.zeros(len(scenes), dtype=torch.bool)
        for _ in range(self.horizon):
            features = self._features(state, scenes)
            crashed |= (features[:, 5] < 0) & ~reached
            reached |= (torch.hypot(features[:, 0], features[:, 1]) < 0.1) & ~crashed
            state = self._step(state, policy(features))
        final = torch.hypot(*self._features(state, scenes)[:, :2].unbind(1))
        return (reached & ~crashed).float().mean().item(), final.mean().item()

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        features, actions = batch
        return F.mse_loss(torch.tanh(model(features).float()), actions)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        success, distance = self._rollout(lambda f: torch.tanh(model(f).float()), self.val_scenes)
        if not math.isfinite(distance):
            return {"val_success_rate": math.nan}
        return {
            "val_success_rate": success,
            "val_final_distance": distance,
            "val_expert_success_rate": self.expert_success,
        }

    def build_model(self) -> nn.Module:
        return _mlp(6, [128, 128], 2)


class MotifBindingDNA(_Tabular):
    """Regulatory genomics: transcription-factor binding predicted from DNA sequence by a
    convolutional motif scanner (in the manner of DeepBind; Alipanahi et al. 2015). Sequences
    of 100 bases (one-hot, 4 channels) are background with a GC bias; a quarter, the bound
    ones, carry one instance of a 10-base motif drawn from a position weight matrix, while
    a third of the unbound ones carry a decoy motif sharing half its positions or the true motif
    with 3 bases mutated; 4% of labels are flipped (12,000 / 2,000 sequences). A 1-D CNN (32
    filters of width 12, global max pooling, MLP 32-32-1) is trained by binary cross-entropy.
    Metric the average precision (area under the precision-recall curve) of the held-out
    scores (about the positive share, 0.25 to 0.35, at the start). Defined as the forty-third
    batch of fresh workloads, by a helper session."""

    metric = "val_auprc"
    length, width = 100, 10

    def __init__(self) -> None:
        rng = np.random.default_rng(1061)
        pwm = rng.dirichlet(np.full(4, 0.25), self.width)
        decoy = pwm.copy()
        swapped = rng.permutation(self.width)[: self.width // 2]
        decoy[swapped] = rng.dirichlet(np.full(4, 0.25), len(swapped))

        def sequences(count: int) -> tuple[np.ndarray, np.ndarray]:
            bases = rng.choice(4, (count, self.length), p=[0.3, 0.2, 0.2, 0.3])
            label = rng.random(count) < 0.25
            kind = np.where(label, 0, np.where(rng.random(count) < 1 / 3, rng.integers(1, 3, count), 3))
            for i in range(count):
                if kind[i] == 3:
                    continue
                matrix = decoy if kind[i] == 1 else pwm
                motif = np.array([rng.choice(4, p=row) for row in matrix])
                if kind[i] == 2:
                    where = rng.permutation(self.width)[:3]
                    motif[where] = (motif[where] + rng.integers(1, 4, 3)) % 4
                start = rng.integers(0, self.length - self.width + 1)
                bases[i, start : start + self.width] = motif
            flip = rng.random(count) < 0.04
            onehot = np.eye(4, dtype=np.float32)[bases].transpose(0, 2, 1)
            return onehot, (label ^ flip).astype(np.float32)

        x_train, y_train = sequences(12000)
        x_val, y_val = sequences(2000)
        super().__init__(x_train, y_train, x_val, y_val)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        sequences, labels = batch
        return F.binary_cross_entropy_with_logits(model(sequences).squeeze(-1).float(), labels)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        from sklearn.metrics import average_precision_score, roc_auc_score

        scores = model(self.x_val).squeeze(-1).float()
        if not torch.isfinite(scores).all():
            return {"val_auprc": math.nan}
        labels = self.y_val.numpy()
        return {
            "val_auprc": float(average_precision_score(labels, scores.numpy())),
            "val_auc": float(roc_auc_score(labels, scores.numpy())),
            "val_loss": F.binary_cross_entropy_with_logits(scores, self.y_val).item(),
        }

    def build_model(self) -> nn.Module:
        return nn.Sequential(
            nn.Conv1d(4, 32, 12), nn.ReLU(), nn.AdaptiveMaxPool1d(1), nn.Flatten(),
            nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 1),
        )  # fmt: skip


class CardinalityEstimation(_Tabular):
    """Learned cardinality estimation for a database query optimiser (in the manner of MSCN;
    Kipf et al. 2019): a table of 100,000 rows and 4 correlated ordinal columns of 16 values
    each (a Gaussian copula with correlations up to 0.8, skewed marginals) is queried by
    conjunctions of range predicates on 1 to 4 of its columns; the true row counts come from
    the table's 4-D cumulative histogram. An MLP 12-128-128-1 maps each column's bounds and a
    flag for a constrained column to the log selectivity, trained by its squared error (8,000
    / 1,000 queries). Metric the geometric mean q-error of the held-out estimates, max(estimate,
    true) / min(estimate, true) with counts floored at 1 (about 33 at the start; the
    estimate that assumes independent columns is reported beside it). Defined as the forty-third
    batch of fresh workloads, by a helper session."""

    metric = "val_qerror"
    rows, columns, values = 100_000, 4, 16

    def __init__(self) -> None:
        import itertools

        rng = np.random.default_rng(1063)
        correlation = np.array(
            [[1.0, 0.8, 0.4, 0.0], [0.8, 1.0, 0.5, -0.3], [0.4, 0.5, 1.0, 0.2], [0.0, -0.3, 0.2, 1.0]]
        )
        latent = rng.multivariate_normal(np.zeros(self.columns), correlation, self.rows)
        skew = np.array([0.5, 1.0, 2.0, 0.8])
        uniform = 0.5 * (1 + np.vectorize(math.erf)(latent / math.sqrt(2)))
        table = np.minimum((uniform**skew * self.values).astype(int), self.values - 1)
        histogram = np.zeros((self.values,) * self.columns)
        np.add.at(histogram, tuple(table.T), 1)
        cumulative = np.pad(histogram, [(1, 0)] * self.columns)
        for axis in range(self.columns):
            cumulative = cumulative.cumsum(axis)
        marginals = [np.bincount(table[:, c], minlength=self.values).cumsum() for c in range(self.columns)]

        def queries(count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            features = np.zeros((count, 3 * self.columns), np.float32)
            counts = np.zeros(count)
            independent = np.zeros(count)
            for i in range(count):
                used = rng.permutation(self.columns)[: rng.integers(1, self.columns + 1)]
                low, high = np.zeros(self.columns, int), np.full(self.columns, self.values - 1)
                for c in used:
                    a, b = sorted(rng.integers(0, self.values, 2))
                    low[c], high[c] = a, b
                    features[i, 3 * c + 2] = 1.0
                features[i, 0::3], features[i, 1::3] = low / 15, high / 15
                total = 0.0
                for corner in itertools.product((0, 1), repeat=self.columns):
                    index = tuple(high[c] + 1 if k else low[c] for c, k in enumerate(corner))
                    total += (-1) ** (self.columns - sum(corner)) * cumulative[index]
                counts[i] = total
                share = [
                    (marginals[c][high[c]] - (marginals[c][low[c] - 1] if low[c] else 0)) / self.rows
                    for c in range(self.columns)
                ]
                independent[i] = self.rows * np.prod(share)
            return features, counts, independent

        x_train, c_train, _ = queries(8000)
        x_val, c_val, independent = queries(1000)
        log_sel = lambda c: np.log(np.maximum(c, 1) / self.rows).astype(np.float32)  # noqa: E731
        super().__init__(x_train, log_sel(c_train), x_val, log_sel(c_val))
        self.independent_qerror = self._qerror(torch.tensor(log_sel(independent)))

    def _qerror(self, log_estimate: torch.Tensor) -> float:
        floor = math.log(1 / self.rows)
        gap = (log_estimate.clamp(floor, 0.0) - self.y_val).abs()
        return gap.mean().exp().item()

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        queries, log_selectivity = batch
        return F.mse_loss(model(queries).squeeze(-1).float(), log_selectivity)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        estimate = model(self.x_val).squeeze(-1).float()
        if not torch.isfinite(estimate).all():
            return {"val_qerror": math.nan}
        return {"val_qerror": self._qerror(estimate), "val_independence_qerror": self.independent_qerror}

    def build_model(self) -> nn.Module:
        return _mlp(3 * self.columns, [128, 128], 1)


class IlluminantEstimation(_Tabular):
    """Computational colour constancy: estimating the colour of the light of a scene from its
    surfaces. Each scene is 32 patches whose RGB is a surface reflectance (drawn around one of
    a few scene palettes, so the average surface is not grey) times the illuminant (along a
    warm-to-cool daylight locus with a random tint), with a specular highlight reflecting the
    light itself on some patches, an exposure factor and noise (20,000 / 2,000 scenes). A
    Deep Sets network (a shared MLP 6-64-64 on each patch's RGB and log-chromaticity, mean and
    max pooling, MLP 128-64-3) estimates the illuminant's RGB, trained by the angle to the true
    one. Metric the mean recovery angular error in degrees of the held-out estimates (60 to
    130 at the start, 11.6 for the mean illuminant; the grey-world estimate is reported beside it). Defined as the
    forty-third batch of fresh workloads, by a helper session."""

    metric = "val_angular_error"
    patches = 32

    def __init__(self) -> None:
        rng = np.random.default_rng(1069)
        palettes = rng.dirichlet(np.full(3, 2.0), 6) * 1.5

        def scenes(count: int) -> tuple[np.ndarray, np.ndarray]:
            warmth = rng.uniform(0, 1, count)[:, None]
            light = (1 - warmth) * np.array([1.0, 0.85, 0.55]) + warmth * np.array([0.6, 0.8, 1.0])
            light = light * np.exp(rng.normal(0, 0.25, (count, 3)))
            light /= np.linalg.norm(light, axis=1, keepdims=True)
            palette = palettes[rng.integers(0, len(palettes), count)]
            surface = palette[:, None] * np.exp(rng.normal(0, 0.45, (count, self.patches, 3)))
            surface *= rng.uniform(0.2, 1.0, (count, self.patches, 1))
            specular = (rng.random((count, self.patches, 1)) < 0.08) * rng.uniform(
                0.2, 1.0, (count, self.patches, 1)
            )
            rgb = (surface + specular) * light[:, None] * rng.uniform(0.5, 2.0, (count, 1, 1))
            rgb = np.clip(rgb + rng.normal(0, 0.01, rgb.shape), 1e-3, None)
            chroma = np.log(rgb) - np.log(rgb).mean(-1, keepdims=True)
            return np.concatenate([rgb, chroma], -1).astype(np.float32), light.astype(np.float32)

        x_train, y_train = scenes(20000)
        x_val, y_val = scenes(2000)
        super().__init__(x_train, y_train, x_val, y_val)
        self.grey_world = self._angles(self.x_val[..., :3].mean(1)).mean().item()

    def _angles(self, estimate: torch.Tensor) -> torch.Tensor:
        cosine = F.cosine_similarity(estimate, self.y_val, dim=-1).clamp(-1.0, 1.0)
        return torch.rad2deg(torch.acos(cosine))

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        patches, light = batch
        cosine = F.cosine_similarity(model(patches).float(), light, dim=-1)
        return torch.acos(cosine.clamp(-1 + 1e-6, 1 - 1e-6)).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        estimate = model(self.x_val).float()
        if not torch.isfinite(estimate).all():
            return {"val_angular_error": math.nan}
        angles = self._angles(estimate)
        return {
            "val_angular_error": angles.mean().item(),
            "val_median_angular_error": angles.median().item(),
            "val_grey_world_angular_error": self.grey_world,
        }

    def build_model(self) -> nn.Module:
        return _PooledSetNetwork(6, 64, 3)


class _PooledSetNetwork(nn.Module):
    def __init__(self, inputs: int, width: int, outputs: int) -> None:
        super().__init__()
        self.phi = nn.Sequential(nn.Linear(inputs, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())
        self.rho = _mlp(2 * width, [width], outputs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.phi(x)
        return self.rho(torch.cat([h.mean(-2), h.amax(-2)], -1))


class SharpePortfolio(_Tabular):
    """Portfolio allocation trained end to end on the Sharpe ratio: 8 assets whose period
    returns are a small linear function of 12 observed signals (two of them interacting
    nonlinearly) plus correlated noise with fat tails (Student t, 5 degrees of freedom) and a
    common market factor (30,000 / 5,000 periods). An MLP 12-64-64-8 maps the signals to
    portfolio weights (tanh, scaled to gross exposure 1, long and short), trained by the
    negative Sharpe ratio of the micro-batch's portfolio returns. Metric the annualised Sharpe
    ratio (x sqrt 252) of the held-out periods (-1 to 0.6 at the start; the equal-weight
    portfolio's is reported beside it). Defined as the forty-third batch of fresh workloads,
    by a helper session."""

    metric = "val_sharpe"
    assets, signals = 8, 12

    def __init__(self) -> None:
        rng = np.random.default_rng(1087)
        loading = rng.normal(0, 1, (self.signals, self.assets)) * (
            rng.random((self.signals, self.assets)) < 0.4
        )
        beta = rng.uniform(0.5, 1.5, self.assets)

        def periods(count: int) -> tuple[np.ndarray, np.ndarray]:
            signal = rng.normal(size=(count, self.signals))
            alpha = signal @ loading * 0.001 + 0.002 * np.tanh(signal[:, :1] * signal[:, 1:2])
            market = 0.01 * rng.standard_t(5, (count, 1)) * beta
            noise = 0.015 * rng.standard_t(5, (count, self.assets))
            return signal.astype(np.float32), (0.0003 + alpha + market + noise).astype(np.float32)

        x_train, y_train = periods(30000)
        x_val, y_val = periods(5000)
        super().__init__(x_train, y_train, x_val, y_val)
        self.equal_weight = self._sharpe(self.y_val.mean(1)).item()

    @staticmethod
    def _weights(model: nn.Module, signal: torch.Tensor) -> torch.Tensor:
        raw = torch.tanh(model(signal).float())
        return raw / raw.abs().sum(-1, keepdim=True).clamp_min(1e-6)

    @staticmethod
    def _sharpe(returns: torch.Tensor) -> torch.Tensor:
        return returns.mean() / returns.std().clamp_min(1e-8) * math.sqrt(252)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        signal, returns = batch
        return -self._sharpe((self._weights(model, signal) * returns).sum(-1)) / math.sqrt(252)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        weights = self._weights(model, self.x_val)
        if not torch.isfinite(weights).all():
            return {"val_sharpe": math.nan}
        returns = (weights * self.y_val).sum(-1)
        return {
            "val_sharpe": self._sharpe(returns).item(),
            "val_mean_return": returns.mean().item(),
            "val_equal_weight_sharpe": self.equal_weight,
        }

    def build_model(self) -> nn.Module:
        return _mlp(self.signals, [64, 64], self.assets)


class EpidemicPosterior(_Tabular):
    """Simulation-based inference: amortised neural posterior estimation of the parameters of a
    stochastic SIR epidemic (a town of 10,000, 10 infected at the start; infection rate beta
    0.15 to 0.6 and recovery rate gamma 0.05 to 0.25 a day, log-uniform) from 60 days of
    reported new cases (each case reported with probability 0.5, binomially). An MLP
    60-128-128-5 maps the log1p counts to a Gaussian posterior over the standardised
    (log beta, log gamma), its mean and Cholesky factor, trained by the negative log density of
    the simulated parameters (20,000 / 2,000 simulations). Metric the mean negative log
    posterior density of the held-out true parameters in nats (about 2.8 at the start; the
    prior's, 2.5, and the posterior mean's RMSE are reported beside it). Defined as the
    forty-fourth batch of fresh workloads, by a helper session."""

    metric = "val_posterior_nll"
    days, town = 60, 10_000

    def __init__(self) -> None:
        rng = np.random.default_rng(1091)

        def simulate(count: int) -> tuple[np.ndarray, np.ndarray]:
            log_beta = rng.uniform(math.log(0.15), math.log(0.6), count)
            log_gamma = rng.uniform(math.log(0.05), math.log(0.25), count)
            beta, gamma = np.exp(log_beta), np.exp(log_gamma)
            s, i = np.full(count, self.town - 10), np.full(count, 10)
            reported = np.zeros((count, self.days), np.float32)
            for day in range(self.days):
                new = rng.binomial(s, 1 - np.exp(-beta * i / self.town))
                recovered = rng.binomial(i, 1 - np.exp(-gamma))
                s, i = s - new, i + new - recovered
                reported[:, day] = rng.binomial(new, 0.5)
            theta = np.stack([log_beta, log_gamma], 1)
            return np.log1p(reported) / 5, theta

        x_train, theta_train = simulate(20000)
        x_val, theta_val = simulate(2000)
        # Standardise by the prior's moments (uniform: mean the middle, SD width / sqrt 12).
        low = np.array([math.log(0.15), math.log(0.05)])
        high = np.array([math.log(0.6), math.log(0.25)])
        centre, scale = (low + high) / 2, (high - low) / math.sqrt(12)
        standard = lambda t: ((t - centre) / scale).astype(np.float32)  # noqa: E731
        super().__init__(x_train, standard(theta_train), x_val, standard(theta_val))
        self.prior_nll = 2 * math.log(math.sqrt(12))

    @staticmethod
    def _nll(out: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
        mean, log_diag, off = out[:, :2], out[:, 2:4].clamp(-7, 5), out[:, 4]
        # theta - mean = L z with L lower triangular: z = L^-1 (theta - mean).
        r = theta - mean
        z0 = r[:, 0] / log_diag[:, 0].exp()
        z1 = (r[:, 1] - off * z0) / log_diag[:, 1].exp()
        return 0.5 * (z0**2 + z1**2) + log_diag.sum(1) + math.log(2 * math.pi)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        counts, theta = batch
        return self._nll(model(counts).float(), theta).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        out = model(self.x_val).float()
        if not torch.isfinite(out).all():
            return {"val_posterior_nll": math.nan}
        nll = self._nll(out, self.y_val).mean().item()
        return {
            "val_posterior_nll": nll if math.isfinite(nll) else math.nan,
            "val_posterior_mean_rmse": (out[:, :2] - self.y_val).pow(2).mean().sqrt().item(),
            "val_prior_nll": self.prior_nll,
        }

    def build_model(self) -> nn.Module:
        return _mlp(self.days, [128, 128], 5)


class KnapsackSolver(_Tabular):
    """Neural combinatorial optimisation trained on exact solutions: 0-1 knapsack instances of
    20 items (integer weights and values 1 to 30, capacity 10% to 40% of the total weight), each solved exactly by
    dynamic programming (10,000 / 1,000 instances). A Deep Sets network (a shared MLP 5-64-64
    on each item's weight, value, ratio and the capacity, mean pooling, MLP 128-64-1 per item)
    gives each item a logit, trained by binary cross-entropy against its membership of the
    optimal set. Items of positive logit are packed greedily in the order of their logits,
    skipping those that no longer fit. Metric the held-out packed value as a share of the
    optimum (0 to 0.8 at the start; greedy packing by value-to-weight ratio is reported beside it). Defined as the
    forty-fourth batch of fresh workloads, by a helper session."""

    metric = "val_optimality_ratio"
    items, heaviest = 20, 30

    def __init__(self) -> None:
        rng = np.random.default_rng(1093)

        def instances(count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            weight = rng.integers(1, self.heaviest + 1, (count, self.items))
            value = rng.integers(1, self.heaviest + 1, (count, self.items))
            capacity = (weight.sum(1) * rng.uniform(0.1, 0.4, count)).astype(int)
            top = capacity.max()
            best = np.zeros((count, top + 1))
            keep = np.zeros((count, self.items, top + 1), bool)
            rows = np.arange(count)[:, None]
            for k in range(self.items):
                room = np.arange(top + 1)[None] - weight[:, k : k + 1]
                taken = np.where(room >= 0, best[rows, np.maximum(room, 0)] + value[:, k : k + 1], -1)
                keep[:, k] = taken > best
                best = np.maximum(best, taken)
            chosen = np.zeros((count, self.items), np.float32)
            left = capacity.copy()
            for k in reversed(range(self.items)):
                take = keep[np.arange(count), k, left]
                chosen[take, k] = 1.0
                left = left - take * weight[:, k]
            features = np.stack(
                [
                    weight / self.heaviest,
                    value / self.heaviest,
                    value / weight / 2,
                    np.repeat(capacity[:, None] / self.heaviest / 10, self.items, 1),
                    np.repeat(capacity[:, None] / weight.sum(1, keepdims=True), self.items, 1),
                ],
                -1,
            ).astype(np.float32)
            return features, chosen, np.stack([weight, value], -1)

        x_train, y_train, _ = instances(10000)
        x_val, y_val, self.val_items = instances(1000)
        super().__init__(x_train, y_train, x_val, y_val)
        self.val_capacity = np.round(x_val[:, 0, 3] * self.heaviest * 10).astype(int)
        self.optimum = (self.val_items[..., 1] * y_val).sum(1)
        self.ratio_greedy = self._packed(self.val_items[..., 1] / self.val_items[..., 0] + 1.0)

    def _packed(self, scores: np.ndarray) -> float:
        weight, value = self.val_items[..., 0], self.val_items[..., 1]
        order = np.argsort(-scores, 1, kind="stable")
        left = self.val_capacity.copy()
        total = np.zeros(len(left))
        rows = np.arange(len(left))
        for k in range(self.items):
            item = order[:, k]
            fits = (weight[rows, item] <= left) & (scores[rows, item] > 0)
            left = left - fits * weight[rows, item]
            total += fits * value[rows, item]
        return float((total / self.optimum).mean())

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        items, chosen = batch
        return F.binary_cross_entropy_with_logits(model(items).float(), chosen)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float()
        if not torch.isfinite(logits).all():
            return {"val_optimality_ratio": math.nan}
        return {
            "val_optimality_ratio": self._packed(logits.numpy()),
            "val_loss": F.binary_cross_entropy_with_logits(logits, self.y_val).item(),
            "val_ratio_greedy_optimality_ratio": self.ratio_greedy,
        }

    def build_model(self) -> nn.Module:
        return _ItemScorer(5, 64)


class _ItemScorer(nn.Module):
    def __init__(self, inputs: int, width: int) -> None:
        super().__init__()
        self.phi = nn.Sequential(nn.Linear(inputs, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())
        self.head = _mlp(2 * width, [width], 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.phi(x)
        context = h.mean(-2, keepdim=True).expand_as(h)
        return self.head(torch.cat([h, context], -1)).squeeze(-1)


class DependencyParsing(_Tabular):
    """Syntactic dependency parsing with a biaffine scorer (Dozat and Manning 2017) on
    sentences of a generated English-like grammar: a subject noun phrase (determiner,
    adjectives, noun), a transitive or intransitive verb, an object noun phrase, up to two
    prepositional phrases and an adverb, over a vocabulary of 61 words. A prepositional
    phrase after an object attaches to the verb or to the object noun by hidden lexical
    affinities of the verb, the noun and the preposition, so the same word classes in the same
    order have different trees (10,000 / 500 sentences of 3 to 19 words). A bidirectional GRU
    of width 64 over word embeddings of 32 (with a root token) feeds head and dependent MLPs of
    64 and a biaffine score for every head of every word, trained by cross-entropy. Metric the
    unlabelled attachment score of the held-out words (about 0.1 at the start). Defined as the
    forty-fourth batch of fresh workloads, by a helper session."""

    metric = "val_uas"
    longest = 20

    def __init__(self) -> None:
        rng = np.random.default_rng(1097)
        # Word ids: 0 pad, 1 root, then determiners, adjectives, nouns, verbs, prepositions, adverbs.
        sizes = {"det": 4, "adj": 8, "noun": 20, "tverb": 10, "iverb": 5, "prep": 6, "adv": 6}
        first, start = {}, 2
        for kind, size in sizes.items():
            first[kind] = start
            start += size
        self.vocabulary = start
        noun_affinity = rng.normal(size=(sizes["noun"], sizes["prep"]))
        verb_affinity = rng.normal(size=(sizes["tverb"], sizes["prep"]))

        def word(kind: str) -> int:
            return first[kind] + int(rng.integers(sizes[kind]))

        def sentence() -> tuple[list[int], list[int]]:
            words, heads = [1], [0]

            def noun_phrase(head: int) -> int:
                det = len(words)
                words.append(word("det"))
                heads.append(-1)
                adjectives = []
                for _ in range(rng.integers(0, 3)):
                    adjectives.append(len(words))
                    words.append(word("adj"))
                    heads.append(-1)
                noun = len(words)
                words.append(word("noun"))
                heads.append(head)
                for d in [det, *adjectives]:
                    heads[d] = noun
                return noun

            subject = noun_phrase(-1)
            verb = len(words)
            transitive = rng.random() < 0.7
            words.append(word("tverb" if transitive else "iverb"))
            heads.append(0)
            heads[subject] = verb
            last_noun = noun_phrase(verb) if transitive else None
            for _ in range(rng.integers(0, 3)):
                prep = len(words)
                p = word("prep")
                words.append(p)
                attach = verb
                if last_noun is not None and transitive:
                    n, v = words[last_noun] - first["noun"], words[verb] - first["tverb"]
                    if noun_affinity[n, p - first["prep"]] > verb_affinity[v, p - first["prep"]]:
                        attach = last_noun
                heads.append(attach)
                last_noun = noun_phrase(prep)
            if rng.random() < 0.4:
                words.append(word("adv"))
                heads.append(verb)
            return words, heads

        def sentences(count: int) -> tuple[np.ndarray, np.ndarray]:
            tokens = np.zeros((count, self.longest), np.int64)
            targets = np.full((count, self.longest), -100, np.int64)
            filled = 0
            while filled < count:
                words, heads = sentence()
                if len(words) > self.longest:
                    continue
                tokens[filled, : len(words)] = words
                targets[filled, 1 : len(words)] = heads[1:]
                filled += 1
            return tokens, targets

        x_train, y_train = sentences(10000)
        x_val, y_val = sentences(500)
        super().__init__(x_train, y_train, x_val, y_val)
        self.x_train, self.x_val = self.x_train.long(), self.x_val.long()

    @staticmethod
    def _scores(model: nn.Module, tokens: torch.Tensor) -> torch.Tensor:
        scores = model(tokens).float()
        return scores.masked_fill((tokens == 0)[:, None, :], -1e9)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        tokens, heads = batch
        scores = self._scores(model, tokens)
        return F.cross_entropy(scores.flatten(0, 1), heads.flatten(), ignore_index=-100)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        scores = self._scores(model, self.x_val)
        if not torch.isfinite(scores).all():
            return {"val_uas": math.nan}
        real = self.y_val >= 0
        correct = (scores.argmax(-1) == self.y_val) & real
        return {
            "val_uas": (correct.sum() / real.sum()).item(),
            "val_loss": F.cross_entropy(scores.flatten(0, 1), self.y_val.flatten(), ignore_index=-100).item(),
        }

    def build_model(self) -> nn.Module:
        return _BiaffineParser(self.vocabulary, 32, 64)


class _BiaffineParser(nn.Module):
    def __init__(self, vocabulary: int, embedding: int, width: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocabulary, embedding, padding_idx=0)
        self.gru = nn.GRU(embedding, width, batch_first=True, bidirectional=True)
        self.head = nn.Sequential(nn.Linear(2 * width, width), nn.ReLU())
        self.dependent = nn.Sequential(nn.Linear(2 * width, width), nn.ReLU())
        self.bilinear = nn.Parameter(torch.zeros(width, width))
        self.prior = nn.Linear(width, 1)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        states = self.gru(self.embed(tokens))[0]
        heads, dependents = self.head(states), self.dependent(states)
        scores = dependents @ self.bilinear @ heads.transpose(1, 2)
        return scores + self.prior(heads).transpose(1, 2)


class HomographyEstimation(_Tabular):
    """Deep homography estimation (DeTone et al. 2016): a 24 x 24 patch of a 32 x 32 textured
    image (random sinusoids, rectangles and blobs, smoothed) and the same patch of the image
    warped by a random homography that moves the patch's four corners by up to 4 pixels each
    way. A CNN (3 x 3 convolutions of 8, 16 and 32 channels with 2 x 2 poolings, then MLP
    288-64-8) reads the two patches stacked and regresses the 8 corner displacements (/ 4),
    trained by their squared error (12,000 / 500 pairs). Metric the mean corner error in
    pixels of the held-out estimates (about 3 at the start, 3.06 for predicting no motion).
    Defined as the forty-fourth batch of fresh workloads, by a helper session."""

    metric = "val_corner_error"
    size, patch, shift = 32, 24, 4.0

    def __init__(self) -> None:
        rng = np.random.default_rng(1103)

        def pairs(count: int) -> tuple[np.ndarray, np.ndarray]:
            yy, xx = np.mgrid[0 : self.size, 0 : self.size].astype(np.float32)
            images = np.zeros((count, self.size, self.size), np.float32)
            for _ in range(3):
                f = rng.uniform(0.15, 0.7, (count, 2, 1, 1))
                phase = rng.uniform(0, 2 * np.pi, (count, 1, 1))
                images += rng.uniform(0.2, 0.5, (count, 1, 1)) * np.sin(f[:, 0] * xx + f[:, 1] * yy + phase)
            for _ in range(4):
                cx, cy = rng.uniform(0, self.size, (2, count, 1, 1))
                r = rng.uniform(1.5, 5, (count, 1, 1))
                images += rng.uniform(-1, 1, (count, 1, 1)) * np.exp(
                    -((xx - cx) ** 2 + (yy - cy) ** 2) / r**2
                )
            images = torch.tensor(images)[:, None]
            images = F.avg_pool2d(F.pad(images, (1, 1, 1, 1), mode="replicate"), 3, 1)
            low = (self.size - self.patch) / 2
            src = np.array(
                [
                    [low, low],
                    [low + self.patch, low],
                    [low + self.patch, low + self.patch],
                    [low, low + self.patch],
                ]
            )
            offsets = rng.uniform(-self.shift, self.shift, (count, 4, 2))
            dst = src[None] + offsets
            rows = []
            for k in range(4):
                x, y = src[k]
                u, v = dst[:, k, 0], dst[:, k, 1]
                one, zero = np.ones(count), np.zeros(count)
                rows.append(np.stack([one * x, one * y, one, zero, zero, zero, -u * x, -u * y], 1))
                rows.append(np.stack([zero, zero, zero, one * x, one * y, one, -v * x, -v * y], 1))
            system = np.stack(rows, 1)
            rhs = dst.reshape(count, 8)
            h = np.concatenate([np.linalg.solve(system, rhs[..., None])[..., 0], np.ones((count, 1))], 1)
            h = h.reshape(count, 3, 3)
            py, px = np.mgrid[0 : self.patch, 0 : self.patch].astype(np.float64) + low + 0.5
            points = np.stack([px.ravel(), py.ravel(), np.ones(px.size)], 0)
            mapped = h @ points
            mapped = mapped[:, :2] / mapped[:, 2:]
            grid = torch.tensor((mapped / self.size * 2 - 1).transpose(0, 2, 1), dtype=torch.float32)
            warped = F.grid_sample(images, grid[:, None], align_corners=False).view(
                count, 1, self.patch, self.patch
            )
            lo, hi = int(low), int(low) + self.patch
            stacked = torch.cat([images[:, :, lo:hi, lo:hi], warped], 1)
            return stacked.numpy(), (offsets.reshape(count, 8) / self.shift).astype(np.float32)

        x_train, y_train = pairs(12000)
        x_val, y_val = pairs(500)
        super().__init__(x_train, y_train, x_val, y_val)

    def _corner_error(self, estimate: torch.Tensor) -> float:
        gap = (estimate - self.y_val).view(-1, 4, 2) * self.shift
        return gap.norm(dim=-1).mean().item()

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        patches, offsets = batch
        return F.mse_loss(model(patches).float(), offsets)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        estimate = model(self.x_val).float()
        if not torch.isfinite(estimate).all():
            return {"val_corner_error": math.nan}
        return {
            "val_corner_error": self._corner_error(estimate),
            "val_no_motion_corner_error": self._corner_error(torch.zeros_like(estimate)),
        }

    def build_model(self) -> nn.Module:
        return nn.Sequential(
            nn.Conv2d(2, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(32 * 9, 64), nn.ReLU(), nn.Linear(64, 8),
        )  # fmt: skip


class WavefrontPhaseDiversity(_Tabular):
    """Image-based wavefront sensing for adaptive optics by phase diversity (in the manner of
    Paine and Fienup 2018): the aberration of a telescope's circular pupil is a sum of 8
    Zernike modes (defocus, two astigmatisms, two comas, two trefoils and spherical: Noll 4 to
    11; Gaussian coefficients with a total RMS of about 1 rad, less for the higher orders). A
    point source is imaged twice, in focus and through a known extra defocus of 1.5 rad, as
    24 x 24 point-spread functions (the squared modulus of the Fourier transform of the pupil
    field, sampled at Nyquist) with the photon noise of 20,000 photons and read noise
    (6,000 / 500 pairs); the defocused image resolves the sign ambiguity of the focused one.
    A CNN (3 x 3 convolutions of 8, 16 and 32 channels with 2 x 2 poolings on the square roots
    of the two images, then MLP 288-64-8) regresses the 8 coefficients, trained by their squared
    error. Metric the RMS over the pupil of the held-out residual wavefront (estimate minus
    truth) in radians (about 1.07 at the start, 1.05 for estimating no aberration). Defined as
    the forty-fifth batch of fresh workloads, by a helper session."""

    metric = "val_residual_rms"
    grid, pupil, crop, modes = 32, 16, 24, 8

    def __init__(self) -> None:
        rng = np.random.default_rng(1109)
        yy, xx = (np.mgrid[0 : self.grid, 0 : self.grid] - (self.grid - 1) / 2) / (self.pupil / 2)
        r, theta = np.hypot(xx, yy), np.arctan2(yy, xx)
        inside = r <= 1.0
        basis = inside * np.stack(
            [
                math.sqrt(3) * (2 * r**2 - 1),
                math.sqrt(6) * r**2 * np.sin(2 * theta),
                math.sqrt(6) * r**2 * np.cos(2 * theta),
                math.sqrt(8) * (3 * r**3 - 2 * r) * np.sin(theta),
                math.sqrt(8) * (3 * r**3 - 2 * r) * np.cos(theta),
                math.sqrt(8) * r**3 * np.sin(3 * theta),
                math.sqrt(8) * r**3 * np.cos(3 * theta),
                math.sqrt(5) * (6 * r**4 - 6 * r**2 + 1),
            ]
        )
        on_pupil = basis[:, inside]
        # The pupil mean of (sum_j e_j Z_j)^2 is e' G e: the RMS of a coefficient error e.
        self.gram = torch.tensor(on_pupil @ on_pupil.T / inside.sum(), dtype=torch.float32)
        scale = np.array([0.5, 0.45, 0.45, 0.35, 0.35, 0.25, 0.25, 0.3])
        low = (self.grid - self.crop) // 2

        def pairs(count: int) -> tuple[np.ndarray, np.ndarray]:
            coefficients = rng.normal(size=(count, self.modes)) * scale
            phase = np.einsum("nm,mxy->nxy", coefficients, basis)
            images = []
            for diversity in (0.0, 1.5):
                field = inside * np.exp(1j * (phase + diversity * basis[0]))
                psf = np.abs(np.fft.fftshift(np.fft.fft2(field), axes=(-2, -1))) ** 2
                psf = psf[:, low : low + self.crop, low : low + self.crop]
                psf = psf / psf.sum((-2, -1), keepdims=True)
                counts = rng.poisson(psf * 20000) + rng.normal(0, 2.0, psf.shape)
                images.append(np.sqrt(np.clip(counts, 0, None) / 20000) * 4)
            return np.stack(images, 1).astype(np.float32), coefficients.astype(np.float32)

        x_train, y_train = pairs(6000)
        x_val, y_val = pairs(500)
        super().__init__(x_train, y_train, x_val, y_val)

    def _rms(self, error: torch.Tensor) -> torch.Tensor:
        return torch.einsum("ni,ij,nj->n", error, self.gram, error).clamp_min(0).sqrt()

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        images, coefficients = batch
        return F.mse_loss(model(images).float(), coefficients)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        estimate = model(self.x_val).float()
        if not torch.isfinite(estimate).all():
            return {"val_residual_rms": math.nan}
        return {
            "val_residual_rms": self._rms(estimate - self.y_val).mean().item(),
            "val_uncorrected_rms": self._rms(self.y_val).mean().item(),
        }

    def build_model(self) -> nn.Module:
        return nn.Sequential(
            nn.Conv2d(2, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(32 * 9, 64), nn.ReLU(), nn.Linear(64, self.modes),
        )  # fmt: skip


class CausalDiscoveryNOTEARS(_Tabular):
    """Causal structure learning by continuous optimisation (NOTEARS; Zheng et al. 2018): a
    linear structural equation model over 16 variables whose graph is a random DAG of 28 edges
    (Erdos-Renyi over a hidden order, weights 0.5 to 1.5 in magnitude with random signs) and
    whose noise is Gaussian of equal variance (4,000 samples; 1,000 more for val_nll). The
    weighted adjacency matrix W (zero diagonal, started at zero) is fitted to the micro-batch by
    the least-squares residual of x on x W plus 0.02 x the L1 norm of W plus 5 x the
    acyclicity penalty tr(exp(W o W)) - 16. Metric the structural Hamming distance between the
    graph of the entries of W above 0.3 in magnitude and the true graph (missing, extra and
    reversed edges, one per pair of variables; 28 at the start). Defined as the forty-fifth
    batch of fresh workloads, by a helper session."""

    metric = "shd"
    nodes, edges = 16, 28

    def __init__(self) -> None:
        rng = np.random.default_rng(1117)
        order = rng.permutation(self.nodes)
        pairs = [(order[i], order[j]) for i in range(self.nodes) for j in range(i + 1, self.nodes)]
        weights = np.zeros((self.nodes, self.nodes))
        for k in rng.permutation(len(pairs))[: self.edges]:
            weights[pairs[k]] = rng.uniform(0.5, 1.5) * rng.choice([-1.0, 1.0])
        self.true_graph = torch.tensor(weights != 0)
        mixing = np.linalg.inv(np.eye(self.nodes) - weights)  # x = x W + e, so x = e (I - W)^-1

        def samples(count: int) -> np.ndarray:
            return (rng.normal(size=(count, self.nodes)) @ mixing).astype(np.float32)

        x_train, x_val = samples(4000), samples(1000)
        super().__init__(x_train, np.zeros(len(x_train), np.float32), x_val, np.zeros(len(x_val), np.float32))

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        x, _ = batch
        w = model.weights()
        fit = 0.5 * (x - x @ w).pow(2).sum(-1).mean()
        acyclicity = torch.linalg.matrix_exp(w * w).trace() - self.nodes
        return fit + 0.02 * w.abs().sum() + 5.0 * acyclicity

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        w = model.weights().float()
        if not torch.isfinite(w).all():
            return {"shd": math.nan}
        found, truth = w.abs() > 0.3, self.true_graph
        # Per unordered pair of variables: one error when its edge is missing, extra or reversed.
        wrong = torch.triu((found != truth) | (found.T != truth.T), 1)
        return {
            "shd": float(wrong.sum().item()),
            "true_positive_rate": (found & truth).sum().item() / truth.sum().item(),
            "predicted_edges": float(found.sum().item()),
            "val_nll": 0.5 * (self.x_val - self.x_val @ w).pow(2).sum(-1).mean().item(),
        }

    def build_model(self) -> nn.Module:
        return _AdjacencyMatrix(self.nodes)


class _AdjacencyMatrix(nn.Module):
    def __init__(self, nodes: int) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.zeros(nodes, nodes))
        self.register_buffer("off_diagonal", 1.0 - torch.eye(nodes))

    def weights(self) -> torch.Tensor:
        return self.w * self.off_diagonal

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.weights()


class SatisfiabilityNeuroSAT(_Tabular):
    """Deciding Boolean satisfiability with a message-passing network (NeuroSAT; Selsam et al.
    2019): random 3-SAT formulas of 10 variables and 50 clauses (about half of them
    satisfiable at this size), each labelled by trying all 1,024 assignments (12,000 / 300
    formulas). Literals and clauses exchange messages over the literal-clause incidence graph
    for 4 rounds (width 16: MLP messages and a GRU-cell update per node, each literal also
    reading its negation); the mean of the literals' votes is the logit of satisfiability,
    trained by binary cross-entropy. Metric the held-out accuracy (the majority class's share,
    0.53, or its complement at the start; often a plateau there before the network finds
    structure). Defined as the forty-fifth batch of fresh workloads, by a helper session."""

    metric = "val_accuracy"
    variables, clauses = 10, 50

    def __init__(self) -> None:
        rng = np.random.default_rng(1123)
        n = self.variables
        assignments = (np.arange(2**n)[:, None] >> np.arange(n)) & 1
        literal_true = np.concatenate([assignments, 1 - assignments], 1).astype(bool)  # x_i, then not x_i

        def formulas(count: int) -> tuple[np.ndarray, np.ndarray]:
            variables = np.argsort(rng.random((count, self.clauses, n)), -1)[..., :3]
            literals = variables + n * (rng.random((count, self.clauses, 3)) < 0.5)
            labels = np.zeros(count, np.float32)
            for start in range(0, count, 250):
                satisfied = literal_true[:, literals[start : start + 250]].any(-1).all(-1)  # (1024, chunk)
                labels[start : start + 250] = satisfied.any(0)
            incidence = np.zeros((count, 2 * n, self.clauses), np.float32)
            incidence[np.arange(count)[:, None, None], literals, np.arange(self.clauses)[None, :, None]] = 1.0
            return incidence, labels

        x_train, y_train = formulas(12000)
        x_val, y_val = formulas(300)
        super().__init__(x_train, y_train, x_val, y_val)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        incidence, labels = batch
        return F.binary_cross_entropy_with_logits(model(incidence).float(), labels)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float()
        if not torch.isfinite(logits).all():
            return {"val_accuracy": math.nan}
        return {
            "val_accuracy": ((logits > 0).float() == self.y_val).float().mean().item(),
            "val_loss": F.binary_cross_entropy_with_logits(logits, self.y_val).item(),
            "val_satisfiable_share": self.y_val.mean().item(),
        }

    def build_model(self) -> nn.Module:
        return _NeuroSAT(16, 4)


class _NeuroSAT(nn.Module):
    def __init__(self, width: int, rounds: int) -> None:
        super().__init__()
        self.rounds = rounds
        self.literal_init = nn.Parameter(torch.randn(width) / math.sqrt(width))
        self.clause_init = nn.Parameter(torch.randn(width) / math.sqrt(width))
        self.literal_message = _mlp(width, [width], width)
        self.clause_message = _mlp(width, [width], width)
        self.clause_update = nn.GRUCell(width, width)
        self.literal_update = nn.GRUCell(2 * width, width)
        self.vote = _mlp(width, [width], 1)

    def forward(self, incidence: torch.Tensor) -> torch.Tensor:
        batch, literals, clauses = incidence.shape
        width = self.literal_init.numel()
        lit = self.literal_init.expand(batch, literals, width).reshape(-1, width)
        cla = self.clause_init.expand(batch, clauses, width).reshape(-1, width)
        for _ in range(self.rounds):
            to_clauses = incidence.transpose(1, 2) @ self.literal_message(lit).view(batch, literals, width)
            cla = self.clause_update(to_clauses.reshape(-1, width), cla)
            to_literals = incidence @ self.clause_message(cla).view(batch, clauses, width)
            negation = lit.view(batch, 2, literals // 2, width).flip(1).reshape(-1, width)
            lit = self.literal_update(torch.cat([to_literals.reshape(-1, width), negation], -1), lit)
        return self.vote(lit).view(batch, literals).mean(-1)


class PhotometricRedshift(_Tabular):
    """Photometric redshift estimation for a galaxy survey: galaxies are spectral energy
    distributions (a power-law continuum with a 4000 A break, a Lyman break, dust reddening and
    emission lines, their strengths tied to a type running from quiescent to star-forming)
    redshifted to z in [0, 2.5] and observed through six broad bands (u, g, r, i, z, y) at an
    i magnitude of 19 to 25, with band noise from 5-sigma depths of 25 to 26.5 (30,000 / 3,000
    galaxies). An MLP 6-128-128-1 reads the five colours and the i magnitude (asinh magnitudes,
    so noisy fluxes below zero are kept) and regresses z, trained by the Huber loss of
    dz = (z_est - z) / (1 + z). Metric the normalised median absolute deviation sigma_NMAD =
    1.4826 x median |dz - median dz| over held-out galaxies (about 0.18 at the start; the outlier
    share, |dz| > 0.15, is reported beside it). Defined as the forty-fifth batch of fresh
    workloads, by a helper session."""

    metric = "val_sigma_nmad"
    centres = (3600.0, 4800.0, 6200.0, 7500.0, 8700.0, 10000.0)
    widths = (600.0, 1300.0, 1300.0, 1300.0, 1000.0, 900.0)
    depths = (25.0, 26.5, 26.4, 26.0, 25.5, 25.0)

    def __init__(self) -> None:
        rng = np.random.default_rng(1129)
        observed = np.linspace(3000, 11000, 321)
        centres, widths = np.array(self.centres)[:, None], np.array(self.widths)[:, None]
        response = np.exp(-0.5 * ((observed[None] - centres) / (widths / 2)) ** 2)
        response /= response.sum(1, keepdims=True)
        noise = 10 ** (-0.4 * np.array(self.depths)) / 5

        def galaxies(count: int) -> tuple[np.ndarray, np.ndarray]:
            z = np.clip(rng.gamma(2.0, 0.35, count), 0.0, 2.5)
            kind = rng.uniform(0, 1, count)[:, None]  # 0 quiescent .. 1 star-forming
            rest = observed[None] / (1 + z[:, None])
            slope = -2.2 * (1 - kind) + 0.3 * kind + rng.normal(0, 0.3, (count, 1))
            flux = (rest / 5000) ** slope
            flux *= np.where(rest < 4000, 1 - 0.5 * (1 - kind) + rng.normal(0, 0.05, (count, 1)), 1.0)
            flux *= np.where(rest < 1216, 0.3, 1.0) * np.where(rest < 912, 0.0, 1.0)
            dust = rng.exponential(0.3, (count, 1)) * kind
            flux *= np.exp(-dust * (rest / 5500) ** -1.0)
            for line, width, strength in ((3727, 15, 1.5), (5007, 12, 2.5), (6563, 15, 3.0)):
                peak = strength * kind**2 * rng.uniform(0.5, 1.5, (count, 1)) * (rest / 5000) ** slope
                flux += peak * np.exp(-0.5 * ((rest - line) / width) ** 2)
            bands = flux @ response.T
            magnitude_i = rng.uniform(19, 25, count)
            bands *= 10 ** (-0.4 * magnitude_i)[:, None] / bands[:, 3:4]
            bands += rng.normal(size=bands.shape) * noise
            asinh = -2.5 / math.log(10) * (np.arcsinh(bands / (2 * noise)) + np.log(noise))
            features = np.concatenate([asinh[:, :-1] - asinh[:, 1:], (asinh[:, 3:4] - 22) / 2], 1)
            return features.astype(np.float32), z.astype(np.float32)

        x_train, y_train = galaxies(30000)
        x_val, y_val = galaxies(3000)
        super().__init__(x_train, y_train, x_val, y_val)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        features, z = batch
        dz = (model(features).squeeze(-1).float() - z) / (1 + z)
        return F.huber_loss(dz, torch.zeros_like(dz), delta=0.1)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        estimate = model(self.x_val).squeeze(-1).float()
        if not torch.isfinite(estimate).all():
            return {"val_sigma_nmad": math.nan}
        dz = (estimate - self.y_val) / (1 + self.y_val)
        return {
            "val_sigma_nmad": 1.4826 * (dz - dz.median()).abs().median().item(),
            "val_outlier_share": (dz.abs() > 0.15).float().mean().item(),
            "val_median_bias": dz.median().item(),
        }

    def build_model(self) -> nn.Module:
        return _mlp(6, [128, 128], 1)


class ZeroShotAttributes(_Tabular):
    """Zero-shot classification from class attributes (in the manner of attribute label
    embedding; Akata et al. 2016): 300 classes, each described by 64 binary attributes (on with
    probability 0.25). An example's 64 features are a fixed random nonlinear map (a tanh layer
    of 128) of its class's attributes, each expressed with the example's own strength, plus an
    offset of the class that its attributes do not explain and noise. Training sees 250 classes
    (64 examples each); the other 50 are never seen. A compatibility model, the dot product of
    an MLP 64-128-64 of the features and an MLP 64-64-64 of the attributes, is trained by
    softmax cross-entropy over the seen classes' attribute vectors. Metric the per-class mean
    top-1 accuracy on the 50 unseen classes (40 held-out examples each), choosing among the
    unseen classes' attribute vectors only (chance 0.02, about 0.02 to 0.05 at the start; the
    accuracy on held-out examples of the seen classes is reported beside it). Defined as the
    forty-sixth batch of fresh workloads, by a helper session."""

    metric = "val_unseen_accuracy"
    classes, seen, attributes, features, hidden = 300, 250, 64, 64, 128
    train_each, val_each = 64, 40

    def __init__(self) -> None:
        rng = np.random.default_rng(1151)
        attributes = (rng.random((self.classes, self.attributes)) < 0.25).astype(np.float32)
        while len({tuple(a) for a in attributes}) < self.classes or (attributes.sum(1) == 0).any():
            attributes = (rng.random((self.classes, self.attributes)) < 0.25).astype(np.float32)
        first = rng.normal(0, 2.0, (self.attributes, self.hidden)) / math.sqrt(self.attributes * 0.25)
        second = rng.normal(0, 1, (self.hidden, self.features)) / math.sqrt(self.hidden)
        offset = rng.normal(0, 0.7, (self.classes, self.features))

        def examples(classes: np.ndarray, each: int) -> tuple[np.ndarray, np.ndarray]:
            label = np.repeat(classes, each)
            strength = attributes[label] * rng.uniform(0.5, 1.5, (len(label), self.attributes))
            hidden = np.tanh(strength @ first + rng.normal(0, 0.3, (len(label), self.hidden)))
            x = hidden @ second + offset[label] + rng.normal(0, 1.0, (len(label), self.features))
            return x.astype(np.float32), label

        seen, unseen = np.arange(self.seen), np.arange(self.seen, self.classes)
        x_train, y_train = examples(seen, self.train_each)
        x_seen, y_seen = examples(seen, 8)
        x_val, y_val = examples(unseen, self.val_each)
        mean, std = x_train.mean(0), x_train.std(0)
        norm = lambda x: ((x - mean) / std).astype(np.float32)  # noqa: E731
        super().__init__(norm(x_train), y_train, norm(x_val), y_val - self.seen)
        self.x_seen, self.y_seen = torch.tensor(norm(x_seen)), torch.tensor(y_seen)
        self.seen_attributes = torch.tensor(attributes[: self.seen])
        self.unseen_attributes = torch.tensor(attributes[self.seen :])

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        x, labels = batch
        return F.cross_entropy(model(x, self.seen_attributes).float(), labels)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        scores = model(self.x_val, self.unseen_attributes).float()
        if not torch.isfinite(scores).all():
            return {"val_unseen_accuracy": math.nan}
        hit = (scores.argmax(-1) == self.y_val).float()
        per_class = torch.zeros(self.classes - self.seen).index_add_(0, self.y_val, hit) / self.val_each
        seen_hit = (model(self.x_seen, self.seen_attributes).argmax(-1) == self.y_seen).float().mean()
        return {
            "val_unseen_accuracy": per_class.mean().item(),
            "val_seen_accuracy": seen_hit.item(),
            "val_unseen_loss": F.cross_entropy(scores, self.y_val).item(),
        }

    def build_model(self) -> nn.Module:
        return _AttributeCompatibility(self.features, self.attributes)


class _AttributeCompatibility(nn.Module):
    def __init__(self, features: int, attributes: int) -> None:
        super().__init__()
        self.image = _mlp(features, [128], 64)
        self.text = _mlp(attributes, [64], 64)

    def forward(self, x: torch.Tensor, attributes: torch.Tensor) -> torch.Tensor:
        return self.image(x) @ self.text(attributes).T / 8


class SourceSeparationMask(_Tabular):
    """Single-channel source separation by time-frequency masking: mixtures of two synthetic
    voices (harmonic tones of 12 partials with a gliding, vibrating pitch, two formant
    resonances and syllable-like envelopes), the low voice (pitch 90 to 180 Hz) to be
    recovered from under the high one (190 to 380 Hz) at level ratios of -6 to +6 dB, with
    white noise, 0.256 s at 8 kHz (3,000 / 200 mixtures). A convolutional network over the
    frames of the log-magnitude STFT (256 points, hop 64; its 129 frequency bins as channels:
    kernel-3 convolutions of 128 and 128, then 1 x 1 to 129 sigmoid outputs) estimates a mask,
    trained by the squared error of the masked mixture magnitude against the low voice's
    magnitude. Metric the held-out scale-invariant signal-to-distortion ratio improvement
    (SI-SDRi, dB) of the waveform resynthesised with the mixture's phase over the mixture itself
    (about 0 at the start, 11.5 for the ideal ratio mask). Defined as the forty-sixth batch of
    fresh workloads, by a helper session."""

    metric = "val_si_sdri"
    rate, length, n_fft, hop = 8000, 2048, 256, 64

    def __init__(self) -> None:
        rng = np.random.default_rng(1153)
        t = (np.arange(self.length) / self.rate).astype(np.float32)

        def voices(count: int, low: float, high: float) -> np.ndarray:
            def draw(a: float, b: float) -> np.ndarray:
                return rng.uniform(a, b, (count, 1)).astype(np.float32)

            f0 = np.exp(draw(math.log(low), math.log(high)))
            glide = np.exp(draw(-0.3, 0.3) * t / t[-1])
            vibrato = 1 + 0.02 * np.sin(2 * np.pi * draw(4, 7) * t + draw(0, 6.3))
            phase = 2 * np.pi * np.cumsum(f0 * glide * vibrato, 1) / self.rate
            formants = draw(300, 900), draw(900, 2600)
            rotor = np.cos(phase) + 1j * np.sin(phase)
            partial = np.ones_like(rotor)
            signal = np.zeros_like(rotor)
            for k in range(1, 13):
                partial *= rotor  # exp(i k phase)
                gain = sum(np.exp(-0.5 * ((k * f0 - formant) / 200) ** 2) for formant in formants)
                gain = (gain + 0.1) / k**0.5 * (k * f0 * 1.4 < self.rate / 2)
                signal += (gain * np.exp(1j * draw(0, 6.3))).astype(np.complex64) * partial
            onset, offset, steepness = draw(-0.1, 0.1), draw(0.15, 0.35), draw(80, 200)
            envelope = 1 / (1 + np.exp(-steepness * (t - onset))) / (1 + np.exp(steepness * (t - offset)))
            envelope *= 0.6 + 0.4 * np.sin(2 * np.pi * draw(3, 6) * t + draw(0, 6.3))
            voice = signal.imag * envelope
            return voice / np.sqrt((voice**2).mean(1, keepdims=True) + 1e-8)

        def mixtures(count: int) -> tuple[np.ndarray, np.ndarray]:
            target, other = voices(count, 90, 180), voices(count, 190, 380)
            ratio = 10 ** (rng.uniform(-6, 6, (count, 1)).astype(np.float32) / 20)
            mixture = target + other / ratio + rng.normal(0, 0.05, (count, self.length)).astype(np.float32)
            scale = 1 / np.abs(mixture).max(1, keepdims=True)
            return (mixture * scale).astype(np.float32), (target * scale).astype(np.float32)

        x_train, y_train = mixtures(3000)
        x_val, y_val = mixtures(200)
        super().__init__(x_train, y_train, x_val, y_val)
        self.window = torch.hann_window(self.n_fft)
        spectrum, target = self._stft(self.x_val), self._stft(self.y_val)
        ideal = (target.abs() / spectrum.abs().clamp_min(1e-8)).clamp(max=1.0)
        self.ideal_si_sdri = self._si_sdri(self._istft(spectrum * ideal))

    def _stft(self, wave: torch.Tensor) -> torch.Tensor:
        return torch.stft(wave, self.n_fft, self.hop, window=self.window, return_complex=True)

    def _istft(self, spectrum: torch.Tensor) -> torch.Tensor:
        return torch.istft(spectrum, self.n_fft, self.hop, window=self.window, length=self.length)

    def _si_sdri(self, estimate: torch.Tensor) -> float:
        source = self.y_val - self.y_val.mean(-1, keepdim=True)

        def si_sdr(e: torch.Tensor) -> torch.Tensor:
            e = e - e.mean(-1, keepdim=True)
            projection = (e * source).sum(-1, keepdim=True) / source.pow(2).sum(-1, keepdim=True) * source
            ratio = projection.pow(2).sum(-1) / (e - projection).pow(2).sum(-1).clamp_min(1e-10)
            return 10 * torch.log10(ratio)

        return (si_sdr(estimate) - si_sdr(self.x_val)).mean().item()

    def _mask(self, model: nn.Module, spectrum: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(model(torch.log(spectrum.abs() + 1e-3)).float())

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        mixture, target = batch
        spectrum = self._stft(mixture)
        estimate = self._mask(model, spectrum) * spectrum.abs()
        return (estimate - self._stft(target).abs()).pow(2).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        spectrum = self._stft(self.x_val)
        mask = self._mask(model, spectrum)
        if not torch.isfinite(mask).all():
            return {"val_si_sdri": math.nan}
        return {
            "val_si_sdri": self._si_sdri(self._istft(spectrum * mask)),
            "val_ideal_ratio_mask_si_sdri": self.ideal_si_sdri,
        }

    def build_model(self) -> nn.Module:
        bins = self.n_fft // 2 + 1
        return nn.Sequential(
            nn.Conv1d(bins, 128, 3, padding=1), nn.ReLU(),
            nn.Conv1d(128, 128, 3, padding=1), nn.ReLU(),
            nn.Conv1d(128, bins, 1),
        )  # fmt: skip


class PoseLifting3D(_Tabular):
    """3-D human pose estimation by lifting 2-D keypoints (Martinez et al. 2017): a skeleton
    of 16 joints (pelvis, spine, neck, head, shoulders, elbows, wrists, hips, knees, ankles) with
    bone lengths scaled by the subject's size, posed by joint rotations drawn around one of 8
    activity prototypes (elbows and knees bending one way only), turned to a random heading and
    seen by a pinhole camera 4 to 6 m away at an elevation of -10 to 30 degrees; the 2-D
    keypoints carry 2-pixel noise and are root-centred and scale-normalised (30,000 / 1,000
    poses). A residual MLP (32-256, two residual blocks of 256 with LayerNorm, 256-45) maps them
    to the root-centred 3-D joints in camera coordinates (in decimetres), trained by their
    squared error. Metric the mean per-joint position error (MPJPE) in millimetres over the
    held-out poses (about 430 at the start, 307 for the mean pose). Defined as the forty-sixth
    batch of fresh workloads, by a helper session."""

    metric = "val_mpjpe"
    # Per joint: its parent, the bone's direction in the rest pose (x right, y up, z forward)
    # and its length in millimetres.
    skeleton = (
        (-1, (0, 0, 0), 0), (0, (0, 1, 0), 240), (1, (0, 1, 0), 260), (2, (0, 1, 0), 180),
        (2, (1, -0.2, 0), 180), (4, (0, -1, 0), 290), (5, (0, -1, 0), 250),
        (2, (-1, -0.2, 0), 180), (7, (0, -1, 0), 290), (8, (0, -1, 0), 250),
        (0, (1, 0, 0), 130), (10, (0, -1, 0), 440), (11, (0, -1, 0), 430),
        (0, (-1, 0, 0), 130), (13, (0, -1, 0), 440), (14, (0, -1, 0), 430),
    )  # fmt: skip

    def __init__(self) -> None:
        rng = np.random.default_rng(1163)
        joints = len(self.skeleton)
        # Each prototype: per joint, mean rotations about x, y and z in radians.
        prototypes = rng.uniform(-1, 1, (8, joints, 3)) * np.array([1.2, 0.6, 0.8])
        prototypes[:, [0, 1, 2, 3]] *= 0.3  # the trunk bends less
        prototypes[:, [6, 9, 12, 15]] *= 0.2  # hands and feet follow their limbs
        prototypes[:, [5, 8], 0] = -np.abs(prototypes[:, [5, 8], 0])  # elbows bend one way
        prototypes[:, [12, 15], 0] = np.abs(prototypes[:, [12, 15], 0])  # knees the other

        def rotation(angles: np.ndarray) -> np.ndarray:
            a, b, c = angles[..., 0], angles[..., 1], angles[..., 2]
            ca, sa, cb, sb, cc, sc = np.cos(a), np.sin(a), np.cos(b), np.sin(b), np.cos(c), np.sin(c)
            one, zero = np.ones_like(a), np.zeros_like(a)
            rx = np.stack([one, zero, zero, zero, ca, -sa, zero, sa, ca], -1).reshape(*a.shape, 3, 3)
            ry = np.stack([cb, zero, sb, zero, one, zero, -sb, zero, cb], -1).reshape(*a.shape, 3, 3)
            rz = np.stack([cc, -sc, zero, sc, cc, zero, zero, zero, one], -1).reshape(*a.shape, 3, 3)
            return rz @ ry @ rx

        def poses(count: int) -> tuple[np.ndarray, np.ndarray]:
            kind = rng.integers(0, len(prototypes), count)
            local = rotation(prototypes[kind] + rng.normal(0, 0.25, (count, joints, 3)))
            size = rng.uniform(0.85, 1.15, (count, 1))
            world = [local[:, 0]] * joints
            position = np.zeros((count, joints, 3))
            for j, (parent, direction, length) in enumerate(self.skeleton[1:], 1):
                world[j] = world[parent] @ local[:, j]
                bone = np.array(direction, float) / np.linalg.norm(direction) * length
                position[:, j] = position[:, parent] + (world[parent] @ bone) * size
            heading = rng.uniform(0, 2 * np.pi, count)
            elevation = np.deg2rad(rng.uniform(-10, 30, count))
            turn = rotation(np.stack([elevation, heading, np.zeros(count)], -1))
            camera = position @ turn.transpose(0, 2, 1)
            camera[..., 2] += rng.uniform(4000, 6000, (count, 1))
            pixels = 1000 * camera[..., :2] / camera[..., 2:] + rng.normal(0, 2, (count, joints, 2))
            pixels -= pixels[:, :1]
            pixels /= np.linalg.norm(pixels, axis=-1).mean(-1)[:, None, None]
            target = (camera - camera[:, :1])[:, 1:] / 100  # decimetres, the root left out
            return pixels.reshape(count, -1).astype(np.float32), target.reshape(count, -1).astype(np.float32)

        x_train, y_train = poses(30000)
        x_val, y_val = poses(1000)
        super().__init__(x_train, y_train, x_val, y_val)
        self.mean_pose = self.y_train.mean(0)

    def _mpjpe(self, estimate: torch.Tensor) -> float:
        gap = (estimate - self.y_val).view(len(self.y_val), -1, 3)
        # The root (no error) counts as one of the 16 joints.
        return (gap.norm(dim=-1).sum(-1) / len(self.skeleton)).mean().item() * 100

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        keypoints, joints = batch
        return F.mse_loss(model(keypoints).float(), joints)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        estimate = model(self.x_val).float()
        if not torch.isfinite(estimate).all():
            return {"val_mpjpe": math.nan}
        return {
            "val_mpjpe": self._mpjpe(estimate),
            "val_mean_pose_mpjpe": self._mpjpe(self.mean_pose.expand_as(self.y_val)),
        }

    def build_model(self) -> nn.Module:
        width, joints = 256, len(self.skeleton)
        return nn.Sequential(
            nn.Linear(2 * joints, width),
            *[_Residual(width, nn.ReLU) for _ in range(2)],
            nn.ReLU(),
            nn.Linear(width, 3 * (joints - 1)),
        )


class XYModelTemperature(_Tabular):
    """Reading the temperature of a 2-D XY model (planar spins with the Berezinskii-Kosterlitz-
    Thouless transition near T = 0.89) from one spin configuration: 16 x 16 periodic lattices at
    temperatures uniform in [0.3, 2], each equilibrated by 80 sweeps of checkerboard Metropolis
    updates (angle steps growing with the temperature) from an aligned start at a random angle
    (2,000 / 500 configurations). A CNN on the spins' (cos, sin) (circular 3 x 3 convolutions
    of 16 and 16 channels, a 2 x 2 pooling, a third of 16, global mean pooling, MLP 16-16-1)
    regresses the standardised temperature, trained by its squared error; the energy, a sum of
    dot products of neighbouring spins, has to be built from products of its inputs. Metric the
    mean absolute error of the held-out temperatures (about 0.40 at the start, as for the mean
    temperature). Defined as the forty-sixth batch of fresh workloads, by a helper session."""

    metric = "val_temperature_mae"
    size, sweeps, low, high = 16, 80, 0.3, 2.0

    def __init__(self) -> None:
        rng = np.random.default_rng(1171)
        checker = (np.add.outer(np.arange(self.size), np.arange(self.size)) % 2).astype(bool)

        def neighbours(a: np.ndarray) -> np.ndarray:
            return np.roll(a, 1, 1) + np.roll(a, -1, 1) + np.roll(a, 1, 2) + np.roll(a, -1, 2)

        def lattices(count: int) -> tuple[np.ndarray, np.ndarray]:
            temperature = rng.uniform(self.low, self.high, count).astype(np.float32)
            beta = (1 / temperature)[:, None, None]
            step = np.minimum(np.pi, 0.5 + temperature)[:, None, None]
            start = rng.uniform(0, 2 * np.pi, (count, 1, 1)).astype(np.float32)
            shape = (count, self.size, self.size)
            c, s = np.cos(start) + np.zeros(shape, np.float32), np.sin(start) + np.zeros(shape, np.float32)
            for _ in range(self.sweeps):
                for colour in (checker, ~checker):
                    hx, hy = neighbours(c), neighbours(s)
                    turn = (rng.random(shape, dtype=np.float32) * 2 - 1) * step
                    c_new = c * np.cos(turn) - s * np.sin(turn)
                    s_new = s * np.cos(turn) + c * np.sin(turn)
                    rise = -((c_new - c) * hx + (s_new - s) * hy)
                    accept = (rng.random(shape, dtype=np.float32) < np.exp(-beta * rise)) & colour
                    c, s = np.where(accept, c_new, c), np.where(accept, s_new, s)
                norm = np.sqrt(c * c + s * s)  # against rounding drift
                c, s = c / norm, s / norm
            return np.stack([c, s], 1), temperature

        x_train, t_train = lattices(2000)
        x_val, t_val = lattices(500)
        self.centre, self.scale = (self.low + self.high) / 2, (self.high - self.low) / math.sqrt(12)
        standard = lambda t: (t - self.centre) / self.scale  # noqa: E731
        super().__init__(x_train, standard(t_train), x_val, standard(t_val))

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        spins, temperature = batch
        return F.mse_loss(model(spins).squeeze(-1).float(), temperature)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        estimate = model(self.x_val).squeeze(-1).float()
        if not torch.isfinite(estimate).all():
            return {"val_temperature_mae": math.nan}
        gap = (estimate - self.y_val).abs() * self.scale
        return {
            "val_temperature_mae": gap.mean().item(),
            "val_temperature_rmse": gap.pow(2).mean().sqrt().item(),
        }

    def build_model(self) -> nn.Module:
        return nn.Sequential(
            nn.Conv2d(2, 16, 3, padding=1, padding_mode="circular"), nn.ReLU(),
            nn.Conv2d(16, 16, 3, padding=1, padding_mode="circular"), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 16, 3, padding=1, padding_mode="circular"), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 1),
        )  # fmt: skip


class StereoDisparity(_Tabular):
    """Stereo matching (in the manner of GC-Net, Kendall et al. 2017): rectified pairs of 12 x 24
    images of a textured slanted background plane (disparity 1.3 to 3.5 pixels at its centre,
    tilting by up to 1.5 across and 1 down the image) and a textured fronto-parallel rectangle
    in front of it (1.5 to 3.5 pixels nearer, at most 6.8), textures of smoothed noise sampled
    at subpixel positions, the foreground occluding the background in each view, and image
    noise of 0.1 (6,000 / 256 pairs). A shared CNN (3 x 3 convolutions of 8 and 8 channels)
    describes each pixel of both views; their correlations at the 8 integer disparities 0 to 7
    form a cost volume, refined by two 3 x 3 convolutions over it (16 and 8 channels, added to
    it), bounded softly to +-10 and read out by a soft argmin (the softmax-weighted mean
    disparity), trained by the smooth L1 error of the disparity of every pixel. Metric the
    held-out bad-pixel rate, the share of pixels whose disparity is off by more than 1 pixel
    (about 0.6 at the start, 0.31 for the best constant disparity). Defined as the
    forty-seventh batch of fresh workloads, by a helper session."""

    metric = "val_bad_pixel_rate"
    height, width, disparities = 12, 24, 8

    def __init__(self) -> None:
        rng = np.random.default_rng(1181)
        span = self.width + self.disparities + 2
        rows = np.arange(self.height)[None, :, None]

        def textures(count: int) -> np.ndarray:
            noise = rng.normal(size=(count, self.height, span))
            smooth = noise + 0.5 * (np.roll(noise, 1, 2) + np.roll(noise, -1, 2))
            smooth = smooth + 0.5 * (np.roll(smooth, 1, 1) + np.roll(smooth, -1, 1))
            return smooth / smooth.std((1, 2), keepdims=True)

        def sample(texture: np.ndarray, u: np.ndarray) -> np.ndarray:
            # Each row of ``texture`` read at the fractional columns ``u``, linearly interpolated.
            u = np.clip(u, 0, span - 1.001)
            low = np.floor(u).astype(int)
            share = u - low
            items = np.arange(len(texture))[:, None, None]
            return (1 - share) * texture[items, rows, low] + share * texture[items, rows, low + 1]

        def pairs(count: int) -> tuple[np.ndarray, np.ndarray]:
            background, foreground = textures(count), textures(count)
            y = rows * np.ones((count, 1, self.width))
            x = np.arange(self.width)[None, None, :] * np.ones((count, self.height, 1))

            def draw(low: float, high: float) -> np.ndarray:
                return rng.uniform(low, high, (count, 1, 1))

            offset, tilt_x, tilt_y = draw(1.3, 3.5), draw(-1.5, 1.5), draw(-1.0, 1.0)
            rise = tilt_y * (y / self.height - 0.5)
            plane = offset + tilt_x * (x / self.width - 0.5) + rise
            nearest = offset + np.abs(tilt_x) / 2 + np.abs(tilt_y) / 2
            near = np.minimum(nearest + draw(1.5, 3.5), self.disparities - 1.2)
            x0, y0 = draw(0, self.width - 6), draw(-2, self.height - 5)
            x1, y1 = x0 + draw(5, 12), y0 + draw(4, 10)
            rows_in = (y >= y0) & (y <= y1)
            in_left = rows_in & (x >= x0) & (x <= x1)
            left = np.where(in_left, sample(foreground, x), sample(background, x))
            # The right view's pixel x shows the surface point at x + disparity in the left view;
            # on the plane that point u solves u - plane(u) = x.
            u_plane = (x + offset - tilt_x / 2 + rise) / (1 - tilt_x / self.width)
            in_right = rows_in & (x + near >= x0) & (x + near <= x1)
            right = np.where(in_right, sample(foreground, x + near), sample(background, u_plane))
            truth = np.where(in_left, near, plane)
            images = np.stack([left, right], 1) + rng.normal(0, 0.1, (count, 2, self.height, self.width))
            return images.astype(np.float32), truth.astype(np.float32)

        x_train, y_train = pairs(6000)
        x_val, y_val = pairs(256)
        super().__init__(x_train, y_train, x_val, y_val)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        images, disparity = batch
        return F.smooth_l1_loss(model(images).float(), disparity)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        estimate = model(self.x_val).float()
        if not torch.isfinite(estimate).all():
            return {"val_bad_pixel_rate": math.nan}
        gap = (estimate - self.y_val).abs()
        return {
            "val_bad_pixel_rate": (gap > 1).float().mean().item(),
            "val_endpoint_error": gap.mean().item(),
        }

    def build_model(self) -> nn.Module:
        return _CostVolumeStereo(self.disparities, 8)


class _CostVolumeStereo(nn.Module):
    def __init__(self, disparities: int, width: int) -> None:
        super().__init__()
        self.disparities = disparities
        self.features = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1), nn.ReLU(), nn.Conv2d(width, width, 3, padding=1)
        )
        self.refine = nn.Sequential(
            nn.Conv2d(disparities, 2 * disparities, 3, padding=1), nn.ReLU(),
            nn.Conv2d(2 * disparities, disparities, 3, padding=1),
        )  # fmt: skip

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        count, _, height, width = images.shape
        features = self.features(images.reshape(2 * count, 1, height, width)).view(
            count, 2, -1, height, width
        )
        left, right = features[:, 0], features[:, 1]
        # Left pixel x against right pixel x - d; columns with no partner get zero.
        volume = [(left * right).mean(1)]
        for d in range(1, self.disparities):
            volume.append(F.pad((left[..., d:] * right[..., :-d]).mean(1), (d, 0)))
        cost = torch.stack(volume, 1)
        # The matching scores bounded softly to +-10: no vanishing weights (slow subnormal floats).
        weights = torch.softmax(10 * torch.tanh((cost + self.refine(cost)) / 10), 1)
        return (weights * torch.arange(self.disparities, dtype=weights.dtype)[:, None, None]).sum(1)


class SessionRecommendation(_Tabular):
    """Session-based next-item recommendation with a self-attentive sequential model (SASRec;
    Kang and McAuley 2018): sessions of 12 clicks on a catalogue of 256 items in 16 topics
    (Zipf popularity within each topic). Each click follows one of the previous item's 3
    usual successors with probability 0.45 (as accessories follow a purchase), else an item of
    the session's main topic or, less often, of a second topic (the session's loyalty 0.5 to
    0.95) with probability 0.45, else an item of any topic (20,000 / 1,000 sessions). A causal
    transformer (one pre-norm block of width 32, 2 heads, learned positions) reads the first 11
    clicks and is trained by softmax cross-entropy over all items on the next click at every
    position. Metric the hit rate at 10 of the held-out sessions' last click, the share ranked
    among the model's top 10 of 256 (0.03 to 0.06 at the start; 0.13 for the 10 most popular
    items; NDCG@10 reported beside it). Defined as the forty-seventh batch of fresh workloads, by
    a helper session."""

    metric = "val_hit_rate10"
    items, topics, length = 256, 16, 12  # 256 items: the vocabulary of _TransformerModel

    def __init__(self) -> None:
        rng = np.random.default_rng(1187)
        per_topic = self.items // self.topics
        members = rng.permutation(self.items).reshape(self.topics, per_topic)
        popularity = np.cumsum(1.0 / np.arange(1, per_topic + 1) ** 0.8)
        popularity /= popularity[-1]
        successors = rng.integers(0, self.items, (self.items, 3))
        successor_share = np.cumsum(rng.dirichlet(np.ones(3), self.items), 1)

        def pick(topic: np.ndarray) -> np.ndarray:
            return members[topic, np.searchsorted(popularity, rng.random(len(topic)))]

        def sessions(count: int) -> np.ndarray:
            main, other = rng.integers(0, self.topics, count), rng.integers(0, self.topics, count)
            loyalty = rng.uniform(0.5, 0.95, count)
            clicks = np.zeros((count, self.length), np.int64)
            clicks[:, 0] = pick(main)
            for k in range(1, self.length):
                previous = clicks[:, k - 1]
                which = np.minimum((rng.random(count)[:, None] > successor_share[previous]).sum(1), 2)
                topic = np.where(rng.random(count) < loyalty, main, other)
                draw = rng.random(count)
                anywhere = pick(rng.integers(0, self.topics, count))
                clicks[:, k] = np.where(
                    draw < 0.45, successors[previous, which], np.where(draw < 0.9, pick(topic), anywhere)
                )
            return clicks

        train, val = sessions(20000), sessions(1000)
        super().__init__(train, train[:, -1], val, val[:, -1])
        self.x_train, self.x_val = self.x_train.long(), self.x_val.long()
        counts = np.bincount(train[:, 1:].ravel(), minlength=self.items)
        popular = torch.tensor(np.argsort(-counts, kind="stable")[:10])
        self.popular_hit_rate = torch.isin(self.y_val, popular).float().mean().item()

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        clicks, _ = batch
        logits = model(clicks[:, :-1]).float()
        return F.cross_entropy(logits.reshape(-1, self.items), clicks[:, 1:].reshape(-1))

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val[:, :-1])[:, -1].float()
        if not torch.isfinite(logits).all():
            return {"val_hit_rate10": math.nan}
        rank = (logits > logits.gather(1, self.y_val[:, None])).sum(1)
        hit = (rank < 10).float()
        return {
            "val_hit_rate10": hit.mean().item(),
            "val_ndcg10": (hit / torch.log2(rank.float() + 2)).mean().item(),
            "val_loss": F.cross_entropy(logits, self.y_val).item(),
            "val_popular_hit_rate10": self.popular_hit_rate,
        }

    def build_model(self) -> nn.Module:
        return _TransformerModel(self.length - 1, 32, 1, 2)


class QuantumStateTomography(_Tabular):
    """Neural quantum state tomography: a 3-qubit state (a Haar-random pure state mixed with
    up to 30% white noise) is measured in the 27 settings of Pauli bases X, Y, Z per qubit, 40
    shots each, and its 8 x 8 density matrix is to be recovered from the 216 outcome frequencies
    (20,000 / 1,000 states). An MLP 216-128-128-64 writes a lower-triangular matrix T (real
    diagonal, complex below), and T T^dagger / tr(T T^dagger), a valid density matrix whatever
    the weights, is trained by its squared Hilbert-Schmidt distance to the true state. Metric the
    mean Uhlmann fidelity with the held-out true states (about 0.3 at the start, 0.83 for linear
    inversion with the negative eigenvalues clipped; saturating below 1 through shot noise).
    Defined as the forty-seventh batch of fresh workloads, by a helper session."""

    metric = "val_fidelity"
    qubits, shots = 3, 40

    def __init__(self) -> None:
        rng = np.random.default_rng(1193)
        size = 2**self.qubits
        pauli = np.array([[[0, 1], [1, 0]], [[0, -1j], [1j, 0]], [[1, 0], [0, -1]]])
        # Per basis X, Y, Z: the projectors (I +- sigma) / 2 onto its two outcomes, and their
        # duals (3 P - I) / 3, whose products weighted by the frequencies invert the measurement.
        one = np.stack([(np.eye(2) + sign * pauli) / 2 for sign in (1, -1)], 1)
        projectors, duals = np.ones((1, 1, 1, 1)), np.ones((1, 1, 1, 1))
        for _ in range(self.qubits):
            shape = (len(projectors) * 3, projectors.shape[1] * 2, projectors.shape[2] * 2, -1)
            projectors = np.einsum("asij,btkl->abstikjl", projectors, one).reshape(shape)
            duals = np.einsum("asij,btkl->abstikjl", duals, (3 * one - np.eye(2)) / 3).reshape(shape)
        self.duals = duals

        def states(count: int) -> tuple[np.ndarray, np.ndarray]:
            psi = rng.normal(size=(count, size)) + 1j * rng.normal(size=(count, size))
            psi /= np.linalg.norm(psi, axis=1, keepdims=True)
            noise = rng.uniform(0, 0.3, (count, 1, 1))
            rho = (1 - noise) * np.einsum("ni,nj->nij", psi, psi.conj()) + noise * np.eye(size) / size
            probability = np.clip(np.einsum("nij,soji->nso", rho, projectors).real, 0, None)
            probability /= probability.sum(-1, keepdims=True)
            frequency = rng.multinomial(self.shots, probability) / self.shots
            return frequency.reshape(count, -1).astype(np.float32), rho

        x_train, rho_train = states(20000)
        x_val, rho_val = states(1000)
        parts = lambda rho: np.stack([rho.real, rho.imag], 1).astype(np.float32)  # noqa: E731
        super().__init__(x_train, parts(rho_train), x_val, parts(rho_val))
        self.rho_val = torch.tensor(rho_val, dtype=torch.complex128)
        self.inversion_fidelity = self._fidelity(self._linear_inversion(x_val)).mean().item()

    def _linear_inversion(self, frequency: np.ndarray) -> torch.Tensor:
        estimate = np.einsum(
            "nso,soij->nij", frequency.reshape(len(frequency), *self.duals.shape[:2]), self.duals
        )
        values, vectors = np.linalg.eigh(estimate)
        values = np.clip(values, 0, None)
        values /= values.sum(-1, keepdims=True)
        return torch.tensor(np.einsum("nij,nj,nkj->nik", vectors, values, vectors.conj()))

    def _fidelity(self, rho: torch.Tensor) -> torch.Tensor:
        values, vectors = torch.linalg.eigh(rho)
        root = vectors @ torch.diag_embed(values.clamp_min(0).sqrt().to(rho.dtype)) @ vectors.mH
        inner = torch.linalg.eigvalsh(root @ self.rho_val @ root).clamp_min(0)
        return inner.sqrt().sum(-1).pow(2).clamp(0, 1)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        frequency, rho = batch
        return (model(frequency).float() - rho).pow(2).sum((1, 2, 3)).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        estimate = model(self.x_val).double()
        if not torch.isfinite(estimate).all():
            return {"val_fidelity": math.nan}
        return {
            "val_fidelity": self._fidelity(torch.complex(estimate[:, 0], estimate[:, 1])).mean().item(),
            "val_hilbert_schmidt": (estimate - self.y_val.double()).pow(2).sum((1, 2, 3)).mean().item(),
            "val_linear_inversion_fidelity": self.inversion_fidelity,
        }

    def build_model(self) -> nn.Module:
        return _DensityMatrixNetwork(self.x_train.shape[1], 128, 2**self.qubits)


class _DensityMatrixNetwork(nn.Module):
    def __init__(self, inputs: int, width: int, size: int) -> None:
        super().__init__()
        self.size = size
        self.net = _mlp(inputs, [width, width], size * size)
        self.register_buffer("lower", torch.tril_indices(size, size, -1), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        size, below = self.size, self.lower.shape[1]
        out = self.net(x)
        rows, cols = self.lower
        real = torch.diag_embed(out[:, :size])
        real[:, rows, cols] = out[:, size : size + below]
        imag = torch.zeros_like(real)
        imag[:, rows, cols] = out[:, size + below :]
        # T T^dagger for T = real + i imag, over its trace.
        product = torch.stack([real @ real.mT + imag @ imag.mT, imag @ real.mT - real @ imag.mT], 1)
        trace = product[:, 0].diagonal(dim1=1, dim2=2).sum(-1)
        return product / (trace[:, None, None, None] + 1e-8)


class RemainingUsefulLife(_Tabular):
    """Prognostics, remaining useful life (RUL) of turbofan engines in the manner of the C-MAPSS
    data (Saxena et al. 2008): each engine wears from a small initial wear along an exponential
    to failure after 130 to 330 cycles; every cycle it runs in one of 6 operating regimes (3
    noisy settings) that shift its 14 sensors far more than the wear does, 11 of the sensors
    reading the wear (or its square) with noise. Windows of the last 30 cycles (3 settings and
    14 sensors, standardised) are read by a 1-D CNN (kernel-5 convolutions of 32, 32 and,
    after a pooling, 32 channels, then MLP 480-64-1), trained by the squared error of the RUL,
    capped at 125 cycles, over 125 (every window of 200 training engines; 500 held-out windows
    cut at random from 100 other engines). Metric the held-out RMSE of the capped RUL in cycles
    (80 to 107 at the start, 41 for the mean RUL, often a plateau there first; the PHM08
    challenge's asymmetric score reported beside it). Defined as the forty-seventh batch of fresh
    workloads, by a helper session."""

    metric = "val_rul_rmse"
    sensors, window, cap = 14, 30, 125.0

    def __init__(self) -> None:
        rng = np.random.default_rng(1201)
        regimes = rng.normal(0, 1, (6, 3))
        regime_shift = rng.normal(0, 10.0, (6, self.sensors))
        gain = rng.normal(0, 2.0, self.sensors) * (rng.random(self.sensors) < 0.75)
        power = rng.choice([1.0, 2.0], self.sensors)
        noise = rng.uniform(0.5, 1.5, self.sensors)

        def engines(count: int) -> tuple[list[np.ndarray], np.ndarray]:
            runs = []
            lives = rng.integers(130, 330, count)
            for life in lives:
                start, rate = rng.uniform(0, 0.15), rng.uniform(0.008, 0.025)
                wear = start + (1 - start) * np.expm1(rate * np.arange(life + 1)) / np.expm1(rate * life)
                regime = rng.integers(0, 6, life + 1)
                settings = regimes[regime] + rng.normal(0, 0.05, (life + 1, 3))
                readings = regime_shift[regime] + gain * wear[:, None] ** power
                readings += rng.normal(0, 1, (life + 1, self.sensors)) * noise
                runs.append(np.concatenate([settings, readings], 1).astype(np.float32))
            return runs, lives

        train_runs, train_lives = engines(200)
        val_runs, val_lives = engines(100)
        flat = np.concatenate(train_runs)
        mean, std = flat.mean(0), flat.std(0)
        self.series = torch.tensor((flat - mean) / std)
        # Every window of the training engines: its first row in ``series`` and its capped RUL.
        first, rul = [], []
        for start, life in zip(np.cumsum([0] + [len(r) for r in train_runs])[:-1], train_lives, strict=True):
            ends = np.arange(self.window - 1, life + 1)
            first.append(start + ends - self.window + 1)
            rul.append(np.minimum(life - ends, self.cap))
        self.first = torch.tensor(np.concatenate(first))
        self.rul = torch.tensor(np.concatenate(rul) / self.cap, dtype=torch.float32)
        x_val, y_val = [], []
        for run, life in zip(val_runs, val_lives, strict=True):
            for end in rng.integers(self.window - 1, life + 1, 5):
                x_val.append((run[end - self.window + 1 : end + 1] - mean) / std)
                y_val.append(min(life - end, self.cap))
        self.x_val = torch.tensor(np.stack(x_val), dtype=torch.float32)
        self.y_val = torch.tensor(y_val, dtype=torch.float32)

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        offsets = torch.arange(self.window)
        while True:
            index = torch.randint(0, len(self.first), (micro_batch_size,), generator=generator)
            yield self.series[self.first[index, None] + offsets], self.rul[index]

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        windows, rul = batch
        return F.mse_loss(model(windows).float(), rul)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        estimate = model(self.x_val).float() * self.cap
        if not torch.isfinite(estimate).all():
            return {"val_rul_rmse": math.nan}
        gap = estimate - self.y_val
        # The PHM08 challenge's score: a late estimate costs more than an early one.
        score = torch.where(gap < 0, torch.expm1(-gap / 13), torch.expm1(gap / 10)).clamp(max=1e6).sum()
        return {"val_rul_rmse": gap.pow(2).mean().sqrt().item(), "val_phm08_score": score.item()}

    def build_model(self) -> nn.Module:
        return _WindowCNN(3 + self.sensors, 32, self.window)


class _WindowCNN(nn.Module):
    def __init__(self, inputs: int, width: int, window: int) -> None:
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv1d(inputs, width, 5, padding=2), nn.ReLU(),
            nn.Conv1d(width, width, 5, padding=2), nn.ReLU(), nn.MaxPool1d(2),
            nn.Conv1d(width, width, 5, padding=2), nn.ReLU(),
        )  # fmt: skip
        self.head = _mlp(width * (window // 2), [64], 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.conv(x.transpose(1, 2)).flatten(1)).squeeze(-1)


class InverseKinematicsArm(_Tabular):
    """Robot arm inverse kinematics learned through differentiable forward kinematics, with no
    joint angles given: a 4-joint arm (base yaw within +-2.6 rad, shoulder -0.5 to 2.1 rad,
    elbow bending one way only, 0 to 2.6 rad, wrist +-1.6 rad; upper arm 300 mm, forearm 250 mm,
    hand 120 mm, shoulder 100 mm above the base) must put its fingertip at a 3-D target with
    the hand at a given pitch. Targets are the tips and pitches of random joint angles within the
    limits, at least 80 mm from the base's axis (30,000 / 1,000). An MLP 5-128-128-4 reads the
    target (x, y, z in m, cosine and sine of the pitch) and gives the joint angles (tanh scaled to
    the limits); the arm's forward kinematics turn them into a tip and a pitch, trained by the
    squared tip error (in dm^2) plus 1 - cos of the pitch error. Metric the mean held-out tip
    error in mm (about 650 at the start; the pitch error in degrees reported beside it). Defined
    as the forty-eighth batch of fresh workloads, by a helper session."""

    metric = "val_position_error_mm"
    links = (0.30, 0.25, 0.12)  # upper arm, forearm, hand (m)
    limits = ((-2.6, 2.6), (-0.5, 2.1), (0.0, 2.6), (-1.6, 1.6))  # yaw, shoulder, elbow, wrist (rad)

    def __init__(self) -> None:
        rng = np.random.default_rng(1213)
        low, high = np.array(self.limits).T
        self.centre = torch.tensor((low + high) / 2, dtype=torch.float32)
        self.half = torch.tensor((high - low) / 2, dtype=torch.float32)

        def targets(count: int) -> np.ndarray:
            kept: list[np.ndarray] = []
            while sum(len(k) for k in kept) < count:
                tip, pitch = self._forward(
                    torch.tensor(rng.uniform(low, high, (2 * count, 4)), dtype=torch.float32)
                )
                target = torch.cat([tip, pitch.cos()[:, None], pitch.sin()[:, None]], 1)
                kept.append(target[tip[:, :2].norm(dim=1) > 0.08].numpy())
            return np.concatenate(kept)[:count]

        x_train, x_val = targets(30000), targets(1000)
        super().__init__(x_train, x_train, x_val, x_val)

    def _forward(self, angles: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The tip's position and the hand's pitch for joint angles (N, 4)."""
        yaw, shoulder, elbow, wrist = angles.unbind(1)
        upper, fore, hand = self.links
        forearm = shoulder - elbow
        pitch = forearm + wrist
        reach = upper * shoulder.cos() + fore * forearm.cos() + hand * pitch.cos()
        height = 0.1 + upper * shoulder.sin() + fore * forearm.sin() + hand * pitch.sin()
        return torch.stack([reach * yaw.cos(), reach * yaw.sin(), height], 1), pitch

    def _reach(self, model: nn.Module, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self._forward(self.centre + self.half * torch.tanh(model(targets).float()))

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        targets, _ = batch
        tip, pitch = self._reach(model, targets)
        position = (tip - targets[:, :3]).pow(2).sum(1) * 100
        return (position + 1 - pitch.cos() * targets[:, 3] - pitch.sin() * targets[:, 4]).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        tip, pitch = self._reach(model, self.x_val)
        if not torch.isfinite(tip).all():
            return {"val_position_error_mm": math.nan}
        cos, sin = self.x_val[:, 3], self.x_val[:, 4]
        miss = torch.atan2(pitch.sin() * cos - pitch.cos() * sin, pitch.cos() * cos + pitch.sin() * sin)
        return {
            "val_position_error_mm": (tip - self.x_val[:, :3]).norm(dim=1).mean().item() * 1000,
            "val_pitch_error_deg": miss.abs().mean().item() * 180 / math.pi,
        }

    def build_model(self) -> nn.Module:
        return _mlp(5, [128, 128], 4)


class WordSegmentation(_Tabular):
    """Word segmentation of unspaced text (as for Chinese or Thai, here on English): the prose of
    stdlib docstrings (doctest lines left out), lower-cased, its words of letters joined with no
    spaces, 100,000 letters from typing, doctest, difflib, inspect and logging to train on and
    400 windows of the docstrings of statistics and ipaddress held out. A bidirectional GRU
    (width 48) reads 24 one-hot letters and tags each as the start of a word or not, trained by
    cross-entropy per letter (a fifth of the letters start a word). Metric the held-out word F1,
    a word counting when both its ends and no boundary between them are found (the window's
    edges bound the words cut there; 0 to 0.08 at the start, 0 on the plateau of tagging no
    boundary, where many runs stay a while). Defined as the forty-eighth batch of fresh
    workloads, by a helper session."""

    metric = "val_word_f1"
    context, windows = 24, 400
    train_sources = ("typing.py", "doctest.py", "difflib.py", "inspect.py", "logging/__init__.py")
    val_sources = ("statistics.py", "ipaddress.py")

    def __init__(self) -> None:
        import ast
        import re

        stdlib = Path(sysconfig.get_paths()["stdlib"])

        def letters(sources: tuple[str, ...]) -> tuple[torch.Tensor, torch.Tensor]:
            words = []
            for name in sources:
                for node in ast.walk(ast.parse((stdlib / name).read_text(encoding="utf-8"))):
                    if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                        for line in (ast.get_docstring(node) or "").splitlines():
                            if not line.strip().startswith((">>>", "...")):
                                words += re.findall(r"[a-z]+", line.lower())
            text = "".join(words)
            starts = np.zeros(len(text), np.int64)
            starts[np.cumsum([0] + [len(w) for w in words[:-1]])] = 1
            codes = np.frombuffer(text.encode(), np.uint8).astype(np.int64) - ord("a")
            return torch.tensor(codes), torch.tensor(starts)

        self.train_text, self.train_starts = letters(self.train_sources)
        text, starts = letters(self.val_sources)
        first = torch.linspace(0, len(text) - self.context - 1, self.windows).long()[:, None]
        self.x_val, self.y_val = (
            text[first + torch.arange(self.context)],
            starts[first + torch.arange(self.context)],
        )

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        offsets = torch.arange(self.context)
        while True:
            first = torch.randint(
                0, len(self.train_text) - self.context, (micro_batch_size, 1), generator=generator
            )
            yield self.train_text[first + offsets], self.train_starts[first + offsets]

    def _logits(self, model: nn.Module, text: torch.Tensor) -> torch.Tensor:
        return model(F.one_hot(text, 26).float()).float()

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        text, starts = batch
        return F.cross_entropy(self._logits(model, text).reshape(-1, 2), starts.reshape(-1))

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = self._logits(model, self.x_val)
        if not torch.isfinite(logits).all():
            return {"val_word_f1": math.nan}
        # Boundaries at positions 0 to context, the window's edges counted as found.
        edge = torch.ones(self.windows, 1, dtype=torch.bool)
        found = torch.cat([edge, logits.argmax(-1).bool()[:, 1:], edge], 1)
        truth = torch.cat([edge, self.y_val.bool()[:, 1:], edge], 1)
        # A true word [s, e) is found when s and e are found boundaries with none between them.
        position = torch.arange(self.context + 1).expand_as(truth)
        after = torch.where(truth, position, self.context).flip(1).cummin(1).values.flip(1)
        end = torch.cat([after[:, 1:], torch.full((self.windows, 1), self.context)], 1)
        count = found.long().cumsum(1)
        alone = count.gather(1, (end - 1).clamp(min=0)) == count
        correct = (truth & found & found.gather(1, end) & alone)[:, :-1].sum().item()
        precision = correct / found[:, :-1].sum().item()
        recall = correct / truth[:, :-1].sum().item()
        return {
            "val_word_f1": 2 * precision * recall / max(precision + recall, 1e-12),
            "val_boundary_error": (found != truth)[:, 1:-1].float().mean().item(),
        }

    def build_model(self) -> nn.Module:
        return _BiGRUTagger(26, 48, 2)


class RainfallRunoff(_Tabular):
    """Hydrology, daily rainfall-runoff modelling of several catchments by one recurrent network
    (in the manner of Kratzert et al. 2019): 8 catchments, each a conceptual bucket model of its
    own (a soil store of 100 to 300 mm whose recharge grows with its wetness and which loses
    seasonal evaporation, an upper store draining fast and faster above a threshold, a lower
    store fed by percolation and draining slowly, a 3-day routing) under its own rain (wet days
    clustered, more of them in winter, gamma amounts), with 5% noise on the measured flow; 13
    years to train on (the first for spin-up), the 3 after held out. A GRU of width 32 reads 60
    days of log rain and evaporation (standardised) with 8 static attributes of the catchment and
    gives the last day's flow standardised per catchment, trained by its squared error (so each
    catchment weighs as in its NSE). Metric the held-out Nash-Sutcliffe efficiency, averaged over
    the catchments, on every seventh day of the 3 years (-0.4 to 0.06 at the start; 1 for a perfect
    simulation, about 0 for the catchment's training mean). Defined as the forty-eighth batch of
    fresh workloads, by a helper session."""

    metric = "val_nse"
    catchments, window, years, val_years = 8, 60, 13, 3

    def __init__(self) -> None:
        rng = np.random.default_rng(1217)
        n, days = self.catchments, 365 * (self.years + self.val_years)

        def draw(low: float, high: float) -> np.ndarray:
            return rng.uniform(low, high, n)

        # Per catchment: field capacity (mm), recharge shape, the soil's share below which
        # evaporation slows, fast and slow recession (1/day), percolation (mm/day), the chance of
        # rain after a dry day and the mean wet-day rain (mm).
        capacity, shape, dry = draw(100, 300), draw(1, 4), draw(0.5, 0.9)
        fast, slow, percolation = draw(0.1, 0.4), draw(0.02, 0.08), draw(0.5, 3)
        wet, amount = draw(0.25, 0.5), draw(4, 10)
        season = np.sin(2 * np.pi * np.arange(days) / 365)
        evaporation = (2 + 1.5 * season)[None] * draw(0.8, 1.2)[:, None]
        raining = np.zeros((n, days), bool)
        chance = rng.random((n, days))
        for t in range(1, days):
            raining[:, t] = chance[:, t] < np.where(
                raining[:, t - 1], 0.65, 0.7 * wet * (1 - 0.4 * season[t])
            )
        rain = raining * rng.gamma(0.7, amount[:, None] / 0.7, (n, days))
        soil, upper, lower = capacity / 2, np.zeros(n), np.full(n, 20.0)
        runoff = np.zeros((n, days))
        for t in range(days):
            recharge = rain[:, t] * (soil / capacity) ** shape
            soil = soil + rain[:, t] - recharge
            spill = np.maximum(soil - capacity, 0)
            soil = np.maximum(soil - spill - evaporation[:, t] * np.minimum(1, soil / (dry * capacity)), 0)
            down = np.minimum(percolation, upper + recharge + spill)
            upper, lower = upper + recharge + spill - down, lower + down
            quick, base = fast * upper + 0.5 * np.maximum(upper - 20, 0), slow * lower
            upper, lower = upper - quick, lower - base
            runoff[:, t] = quick + base
        routed = 0.5 * runoff + 0.35 * np.roll(runoff, 1, 1) + 0.15 * np.roll(runoff, 2, 1)
        flow = routed * np.exp(rng.normal(0, 0.05, routed.shape))
        spin, split = 365, 365 * self.years
        forcing = np.stack([np.log1p(rain), evaporation], -1)
        forcing = (forcing - forcing[:, :split].mean((0, 1))) / forcing[:, :split].std((0, 1))
        attributes = np.stack(
            [capacity / 300, shape / 4, dry, fast * 3, slow * 15, percolation / 3, wet * 2, amount / 10], 1
        )
        inputs = np.concatenate([forcing, np.repeat(attributes[:, None], days, 1)], -1)
        self.inputs = torch.tensor(inputs, dtype=torch.float32)
        self.flow_mean = torch.tensor(flow[:, spin:split].mean(1, keepdims=True), dtype=torch.float32)
        self.flow_std = torch.tensor(flow[:, spin:split].std(1, keepdims=True), dtype=torch.float32)
        self.flow = (torch.tensor(flow, dtype=torch.float32) - self.flow_mean) / self.flow_std
        catchment, end = np.meshgrid(np.arange(n), np.arange(spin, split), indexing="ij")
        self.train_index = torch.tensor(np.stack([catchment.ravel(), end.ravel()], 1))
        ends = np.arange(split, days, 7)
        self.x_val = self.inputs[:, ends[:, None] + np.arange(1 - self.window, 1)].flatten(0, 1)
        self.y_val = torch.tensor(flow[:, ends], dtype=torch.float32)

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        offsets = torch.arange(1 - self.window, 1)
        while True:
            index = torch.randint(0, len(self.train_index), (micro_batch_size,), generator=generator)
            catchment, end = self.train_index[index].T
            yield self.inputs[catchment[:, None], end[:, None] + offsets], self.flow[catchment, end]

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, flow = batch
        return F.mse_loss(model(inputs).float(), flow)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        standard = model(self.x_val).float().view(self.catchments, -1)
        if not torch.isfinite(standard).all():
            return {"val_nse": math.nan}
        estimate = standard * self.flow_std + self.flow_mean
        error = (estimate - self.y_val).pow(2).sum(1)
        nse = 1 - error / (self.y_val - self.y_val.mean(1, keepdim=True)).pow(2).sum(1)
        return {"val_nse": nse.mean().item(), "val_median_nse": nse.median().item()}

    def build_model(self) -> nn.Module:
        return _LastStepGRU(self.inputs.shape[-1], 32)


class SeismicPhasePicking(_Tabular):
    """Seismology, picking the arrival times of P and S waves in 3-component seismograms with a
    1-D U-Net (in the manner of PhaseNet, Zhu and Beroza 2019): 5 s at 32 Hz of a vertical and
    two horizontal channels, the P wave (4 to 10 Hz, mostly vertical) arriving at 0.6 to 2.8 s
    and the S wave (1.5 to 5 Hz, 1.5 to 4 times stronger, mostly horizontal, polarised by a
    random azimuth) 0.4 to 1.8 s after, each a burst of band-limited noise with a sharp onset and
    an exponential coda, amplitude 0.7 to 20 times the white noise, under microseism swell (0.15
    to 0.5 Hz), each trace scaled to its largest value (10,000 / 500 traces). The U-Net (kernel-7
    convolutions of 8, 16 and 32 channels, two strided downsamplings by 4, transposed
    convolutions back with skip connections) gives per sample the probabilities of noise, P and
    S, trained by cross-entropy against Gaussian bumps (sd 5 samples) at the arrivals. A phase is
    picked at its probability's peak. Metric the mean absolute pick error over P and S in
    seconds on the held-out traces (1.0 to 1.25 at the start, about 2.3 on the plateau of
    predicting noise everywhere, where many runs stay a while; the shares within 0.1 s
    reported beside it). Defined as the forty-eighth batch of fresh workloads, by a helper
    session."""

    metric = "val_pick_mae"
    rate, length, spread = 32, 160, 5.0  # Hz, samples (5 s), the target bumps' sd in samples

    def __init__(self) -> None:
        rng = np.random.default_rng(1223)
        t = np.arange(self.length) / self.rate

        def burst(
            count: int, onset: np.ndarray, low: float, high: float, coda: tuple[float, float]
        ) -> np.ndarray:
            # Six sinusoids between low and high Hz, switched on at ``onset`` within about 0.05 s
            # and decaying over a coda of ``coda`` seconds.
            since = np.maximum(t[None] - onset[:, None], 0)
            envelope = -np.expm1(-since / 0.05) * np.exp(-since / rng.uniform(*coda, (count, 1)))
            frequency = rng.uniform(low, high, (count, 6, 1))
            phase = rng.uniform(0, 2 * np.pi, (count, 6, 1))
            return envelope * np.sin(2 * np.pi * frequency * t + phase).sum(1) / np.sqrt(3)

        def traces(count: int) -> tuple[np.ndarray, np.ndarray]:
            p = rng.uniform(0.6, 2.8, count)
            s = p + rng.uniform(0.4, 1.8, count)
            amplitude = np.exp(rng.uniform(math.log(0.7), math.log(20), (count, 1)))
            azimuth = rng.uniform(0, 2 * np.pi, (count, 1))
            p_wave = amplitude * burst(count, p, 4, 10, (0.3, 1.0))
            s_wave = amplitude * rng.uniform(1.5, 4, (count, 1)) * burst(count, s, 1.5, 5, (0.5, 1.5))
            vertical = p_wave + 0.3 * s_wave
            north = 0.3 * p_wave * np.cos(azimuth) + s_wave * np.sin(azimuth)
            east = 0.3 * p_wave * np.sin(azimuth) - s_wave * np.cos(azimuth)
            swell = rng.uniform(0, 3, (count, 3, 1)) * np.sin(
                2 * np.pi * rng.uniform(0.15, 0.5, (count, 3, 1)) * t
                + rng.uniform(0, 2 * np.pi, (count, 3, 1))
            )
            x = np.stack([vertical, north, east], 1) + swell + rng.normal(0, 1, (count, 3, self.length))
            x -= x.mean(-1, keepdims=True)
            x /= np.abs(x).max((1, 2), keepdims=True)
            return x.astype(np.float32), np.stack([p, s], 1).astype(np.float32)

        x_train, y_train = traces(10000)
        x_val, y_val = traces(500)
        super().__init__(x_train, y_train, x_val, y_val)
        self.samples = torch.arange(self.length, dtype=torch.float32)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        x, arrivals = batch
        bumps = torch.exp(-0.5 * ((self.samples - arrivals[..., None] * self.rate) / self.spread) ** 2)
        target = torch.cat([(1 - bumps.sum(1, keepdim=True)).clamp(min=0), bumps], 1)
        return -(target * torch.log_softmax(model(x).float(), 1)).sum(1).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float()
        if not torch.isfinite(logits).all():
            return {"val_pick_mae": math.nan}
        picked = torch.softmax(logits, 1)[:, 1:].argmax(-1).float() / self.rate
        error = (picked - self.y_val).abs()
        return {
            "val_pick_mae": error.mean().item(),
            "val_p_within_0.1s": (error[:, 0] <= 0.1).float().mean().item(),
            "val_s_within_0.1s": (error[:, 1] <= 0.1).float().mean().item(),
        }

    def build_model(self) -> nn.Module:
        return _UNet1d(3, 3, 8)


class _UNet1d(nn.Module):
    def __init__(self, inputs: int, outputs: int, width: int) -> None:
        super().__init__()
        self.enter = nn.Sequential(nn.Conv1d(inputs, width, 7, padding=3), nn.ReLU())
        self.down1 = nn.Sequential(nn.Conv1d(width, 2 * width, 7, stride=4, padding=3), nn.ReLU())
        self.down2 = nn.Sequential(nn.Conv1d(2 * width, 4 * width, 7, stride=4, padding=3), nn.ReLU())
        self.up2 = nn.ConvTranspose1d(4 * width, 2 * width, 4, stride=4)
        self.merge = nn.Sequential(nn.Conv1d(4 * width, 2 * width, 7, padding=3), nn.ReLU())
        self.up1 = nn.ConvTranspose1d(2 * width, width, 4, stride=4)
        self.out = nn.Conv1d(2 * width, outputs, 7, padding=3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        first = self.enter(x)
        second = self.down1(first)
        second = self.merge(torch.cat([self.up2(self.down2(second)), second], 1))
        return self.out(torch.cat([self.up1(second), first], 1))


class SleepStaging(_Tabular):
    """Sleep staging of polysomnography nights (in the manner of SeqSleepNet, Phan et al. 2019):
    46 simulated nights of 832 epochs of 30 s (36 to train on, 10 held out), each a hypnogram of
    wake, N1, N2, N3 and REM in sleep cycles of about 90 min (deep sleep early in the night, REM
    later, brief arousals and stage switches), every epoch given as the log-power spectra of 10
    windows of 3 s: 16 EEG bins of 2 Hz (delta, theta, alpha, sigma and beta shares that differ
    by stage; spindles and K-complexes in some windows of N2; an alpha rhythm waxing and waning
    in wake), the EOG's low band (blinks in wake, rapid eye movements in some windows of REM)
    and the chin EMG (highest in wake with movement bursts, lowest in REM), under a night's own
    offsets, 1/f slope and alpha frequency, a slow drift, and the chi-square noise of Welch
    estimates; a transitional epoch switches stage partway through. A convolution over each
    epoch's windows (18 to 32 channels, mean and max pooled, a layer of 32) feeds a
    bidirectional GRU of width 32 across 16 consecutive epochs, which stages every epoch, trained
    by cross-entropy. Metric Cohen's kappa of the held-out epochs' stages (0 at the start and for
    always scoring one stage; the accuracy reported beside it). Defined as the forty-ninth batch of
    fresh workloads, by a helper session."""

    metric = "val_kappa"
    stages, windows, features, context = 5, 10, 18, 16
    nights, val_nights, epochs_per_night = 36, 10, 832

    def __init__(self) -> None:
        rng = np.random.default_rng(1229)
        # Stage order: wake, N1, N2, N3, REM. Log-power added per stage to the EEG's delta (bins
        # 0-1), theta (2-3), alpha (4-5), sigma (6-7) and beta (8-15) bands, the EOG and the EMG.
        delta = np.array([0.0, 0.3, 0.8, 1.5, 0.3])
        theta = np.array([0.3, 0.7, 0.5, 0.4, 0.6])
        alpha = np.array([1.2, 0.4, 0.0, 0.0, 0.2])
        sigma = np.array([0.0, 0.0, 0.4, 0.2, 0.0])
        beta = np.array([0.8, 0.3, 0.0, -0.2, 0.4])
        eog = np.array([1.0, 0.8, 0.0, -0.2, 0.3])
        emg = np.array([1.5, 0.9, 0.6, 0.5, -0.2])
        frequency = np.arange(16) * 2.0 + 1.0

        def hypnogram() -> np.ndarray:
            stages = [0] * int(rng.integers(10, 40)) + [1] * int(rng.integers(2, 10))
            cycle = 0
            while len(stages) < self.epochs_per_night:
                deep = max(0, int(rng.normal(40 - 12 * cycle, 8)))
                rem = max(3, int(rng.normal(10 + 10 * cycle, 5)))
                for stage, length in (
                    (2, rng.integers(20, 40)),
                    (3, deep),
                    (2, rng.integers(10, 30)),
                    (4, rem),
                ):
                    for _ in range(int(length)):
                        s = stage
                        if stage in (2, 3) and rng.random() < 0.12:
                            s = 5 - stage
                        if stage == 4 and rng.random() < 0.05:
                            s = 1
                        if rng.random() < 0.02:
                            s = 0
                        stages.append(s)
                if rng.random() < 0.5:
                    stages += [0] * int(rng.integers(1, 4))
                stages += [1] * int(rng.integers(1, 6))
                cycle += 1
            return np.array(stages[: self.epochs_per_night])

        def night() -> tuple[np.ndarray, np.ndarray]:
            stage = hypnogram()
            n = len(stage)
            # A transitional epoch's windows switch from the previous stage at a random window.
            previous = np.roll(stage, 1)
            previous[0] = stage[0]
            switch = rng.integers(0, self.windows, n)
            s = np.where(np.arange(self.windows)[None] < switch[:, None], previous[:, None], stage[:, None])
            offset = rng.normal(0, 0.5)
            slope = rng.uniform(1.0, 1.6)
            alpha_bin = rng.choice([4, 5])
            emg_offset = rng.normal(0, 0.6)
            drift = np.cumsum(rng.normal(0, 0.03, n))[:, None]
            eeg = offset - slope * np.log(frequency)[None, None] + drift[..., None]
            eeg = eeg + np.zeros((n, self.windows, 16))
            eeg[..., 0:2] += delta[s][..., None]
            eeg[..., 2:4] += theta[s][..., None]
            eyes = rng.uniform(0.2, 1.3, (n, 1))  # alpha waxes and wanes with eye closure
            eeg[..., alpha_bin] += alpha[s] * eyes
            eeg[..., alpha_bin - 1] += 0.4 * alpha[s] * eyes
            eeg[..., 6:8] += sigma[s][..., None]
            eeg[..., 8:] += beta[s][..., None]
            spindle = (s == 2) & (rng.random((n, self.windows)) < 0.25)
            eeg[..., 6] += 1.5 * spindle
            kcomplex = (s == 2) & (rng.random((n, self.windows)) < 0.12)
            eeg[..., 0:2] += 1.5 * kcomplex[..., None]
            rapid = (s == 4) & (rng.random((n, self.windows)) < 0.35 * rng.uniform(0, 1.6, (n, 1)))
            blink = (s == 0) & (rng.random((n, self.windows)) < 0.3)
            eog_power = offset + eog[s] + 2.0 * rapid + 1.5 * blink
            movement = (s == 0) & (rng.random((n, self.windows)) < 0.15)
            emg_power = emg_offset + emg[s] + 1.5 * movement + drift
            power = np.concatenate([eeg, eog_power[..., None], emg_power[..., None]], -1)
            # Welch estimates from 2 segments: the log of a Gamma(2, 1/2) around the power.
            power = power + np.log(rng.gamma(2.0, 0.5, power.shape))
            return power.astype(np.float32), stage

        train = [night() for _ in range(self.nights)]
        val = [night() for _ in range(self.val_nights)]
        x_train = np.stack([x for x, _ in train])
        mean, std = x_train.mean((0, 1, 2)), x_train.std((0, 1, 2))
        self.x_train = torch.tensor((x_train - mean) / std)
        self.y_train = torch.tensor(np.stack([y for _, y in train]))
        x_val = (np.stack([x for x, _ in val]) - mean) / std
        y_val = np.stack([y for _, y in val])
        count = self.val_nights * self.epochs_per_night // self.context
        self.x_val = torch.tensor(x_val.reshape(count, self.context, self.windows, self.features))
        self.y_val = torch.tensor(y_val.reshape(count, self.context))

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        offsets = torch.arange(self.context)
        last = self.epochs_per_night - self.context + 1
        while True:
            night = torch.randint(0, self.nights, (micro_batch_size, 1), generator=generator)
            first = torch.randint(0, last, (micro_batch_size, 1), generator=generator)
            yield self.x_train[night, first + offsets], self.y_train[night, first + offsets]

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        x, stage = batch
        return F.cross_entropy(model(x).float().reshape(-1, self.stages), stage.reshape(-1))

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float()
        if not torch.isfinite(logits).all():
            return {"val_kappa": math.nan}
        predicted, truth = logits.argmax(-1).reshape(-1), self.y_val.reshape(-1)
        confusion = torch.zeros(self.stages, self.stages)
        confusion.index_put_((truth, predicted), torch.ones(len(truth)), accumulate=True)
        total = confusion.sum()
        observed = confusion.trace() / total
        expected = (confusion.sum(0) * confusion.sum(1)).sum() / total**2
        return {"val_kappa": ((observed - expected) / (1 - expected)).item(), "val_accuracy": observed.item()}

    def build_model(self) -> nn.Module:
        return _SleepStager(self.features, 32, self.stages)


class _SleepStager(nn.Module):
    def __init__(self, inputs: int, width: int, classes: int) -> None:
        super().__init__()
        self.conv = nn.Conv1d(inputs, width, 3, padding=1)
        self.epoch = nn.Linear(2 * width, width)
        self.gru = nn.GRU(width, width, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * width, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, epochs = x.shape[:2]
        h = F.relu(self.conv(x.flatten(0, 1).transpose(1, 2)))
        h = F.relu(self.epoch(torch.cat([h.mean(-1), h.amax(-1)], -1))).view(batch, epochs, -1)
        return self.head(self.gru(h)[0])


class SpeakerVerification(_Tabular):
    """Text-independent speaker verification with x-vector embeddings (Snyder et al. 2018):
    voices simulated by a source-filter model, each speaker with a vocal-tract length that scales
    the formants (0.82 to 1.18), a pitch (85 to 250 Hz), formant bandwidths, a spectral tilt, a
    breathiness and a nasal anti-resonance of their own; an utterance is 40 frames of vowels (6,
    held 3 to 8 frames, formants gliding between them) at a pitch that drifts, with a tenth of the
    frames silent, turned into 32 log mel energies (0 to 4 kHz) through a random smooth channel
    response (the microphone), a random gain and noise. 200 speakers with 30 utterances to train
    on, 40 other speakers with 10 each held out. A time-delay network (1-D convolutions of 64
    channels, kernel 5 and kernel 3 dilated 2, over random crops of 30 frames), statistics
    pooling (mean and std) and a segment layer of 64 give the embedding, trained by softmax
    cross-entropy over the training speakers. Metric the equal error rate of cosine scoring over
    every pair of held-out utterances (about 0.45 at the start and 0.42 for the cosine of the
    mean log spectra, reported beside it; 0.5 for a collapsed embedding). Defined as the
    forty-ninth batch of fresh workloads, by a helper session."""

    metric = "val_eer"
    bins, frames, crop = 32, 40, 30
    speakers, utterances, val_speakers, val_utterances = 200, 30, 40, 10

    def __init__(self) -> None:
        rng = np.random.default_rng(1231)
        grid = np.linspace(0, 4000, 257)[1:]
        mel = 2595 * np.log10(1 + grid / 700)
        edges = np.linspace(mel[0], mel[-1], self.bins + 2)
        rising = (mel[None] - edges[:-2, None]) / (edges[1:-1, None] - edges[:-2, None])
        falling = (edges[2:, None] - mel[None]) / (edges[2:, None] - edges[1:-1, None])
        filters = np.maximum(0, np.minimum(rising, falling))
        formants = np.array(
            [[730, 1090, 2440], [270, 2290, 3010], [300, 870, 2240], [530, 1840, 2480], [570, 840, 2410],
             [400, 1600, 2500]],
            float,
        )  # fmt: skip
        levels = np.array([1.0, 0.5, 0.25])
        ramp = np.cos(np.pi * np.arange(4)[:, None] * np.linspace(0, 1, self.bins)[None])

        def speaker() -> dict[str, float]:
            return {
                "tract": rng.uniform(0.82, 1.18),
                "f0": np.exp(rng.uniform(np.log(85), np.log(250))),
                "width": rng.uniform(60, 140),
                "tilt": rng.uniform(0.2, 0.8),
                "breath": rng.uniform(0.01, 0.08),
                "nasal": rng.uniform(800, 3200),
                "nasal_depth": rng.uniform(0.2, 0.7),
            }

        def utterance(s: dict[str, float]) -> np.ndarray:
            vowels: list[int] = []
            while len(vowels) < self.frames:
                vowels += [int(rng.integers(0, len(formants)))] * int(rng.integers(3, 9))
            target = formants[vowels[: self.frames]] * rng.normal(1, 0.05, (self.frames, 3))
            glide = target.copy()
            for t in range(1, self.frames):
                glide[t] = 0.5 * glide[t - 1] + 0.5 * target[t]
            centre = s["tract"] * glide[:, :, None]
            envelope = (levels[None, :, None] / (1 + ((grid[None, None] - centre) / s["width"]) ** 2)).sum(1)
            envelope *= 1 - s["nasal_depth"] * np.exp(-(((grid - s["nasal"]) / 150) ** 2))[None]
            phase = np.linspace(0, rng.uniform(1, 4), self.frames) + rng.uniform(0, 6)
            f0 = s["f0"] * rng.uniform(0.9, 1.1) * (1 + 0.08 * np.sin(phase))
            ratio = grid[None] / f0[:, None]
            harmonics = np.exp(-0.5 * ((ratio - np.round(ratio)) * f0[:, None] / 25) ** 2)
            spectrum = envelope * (harmonics + s["breath"]) * np.exp(-s["tilt"] * grid / 1000)[None]
            spectrum[rng.random(self.frames) < 0.1] = 0
            energy = spectrum @ filters.T + 1e-3
            channel = (rng.normal(0, 0.5, 4)[:, None] * ramp).sum(0)
            noise = rng.normal(0, 0.3, energy.shape) + rng.normal(0, 1)
            return (np.log(energy) + channel + noise).astype(np.float32)

        def recordings(count: int, each: int) -> np.ndarray:
            voices = [speaker() for _ in range(count)]
            return np.stack([np.stack([utterance(s) for _ in range(each)]) for s in voices])

        train = recordings(self.speakers, self.utterances)
        val = recordings(self.val_speakers, self.val_utterances)
        mean, std = train.mean((0, 1, 2)), train.std((0, 1, 2))
        x_train = ((train - mean) / std).reshape(-1, self.frames, self.bins).transpose(0, 2, 1)
        x_val = ((val - mean) / std).reshape(-1, self.frames, self.bins).transpose(0, 2, 1)
        y_train = np.repeat(np.arange(self.speakers), self.utterances)
        y_val = np.repeat(np.arange(self.val_speakers), self.val_utterances)
        super().__init__(np.ascontiguousarray(x_train), y_train, np.ascontiguousarray(x_val), y_val)
        self.same = (self.y_val[:, None] == self.y_val[None]).triu(1)
        self.pairs = torch.ones_like(self.same).triu(1)
        spectra = self.x_val.mean(-1)
        self.eer_mean_spectrum = self._eer(spectra - spectra.mean(0))

    def _eer(self, embeddings: torch.Tensor) -> float:
        unit = F.normalize(embeddings, dim=-1)
        scores = unit @ unit.T
        target, other = scores[self.same].sort().values, scores[self.pairs & ~self.same].sort().values
        threshold = torch.cat([target, other]).sort().values
        miss = torch.searchsorted(target, threshold).float() / len(target)
        false_alarm = 1 - torch.searchsorted(other, threshold).float() / len(other)
        i = (miss - false_alarm).abs().argmin()
        return ((miss[i] + false_alarm[i]) / 2).item()

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        offsets = torch.arange(self.crop)
        bins = torch.arange(self.bins)[:, None]
        while True:
            index = torch.randint(0, len(self.x_train), (micro_batch_size, 1, 1), generator=generator)
            first = torch.randint(
                0, self.frames - self.crop + 1, (micro_batch_size, 1, 1), generator=generator
            )
            yield self.x_train[index, bins, first + offsets], self.y_train[index.view(-1)]

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        x, speaker = batch
        return F.cross_entropy(model(x).float(), speaker)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        embeddings = model.embed(self.x_val).float()
        if not torch.isfinite(embeddings).all():
            return {"val_eer": math.nan}
        return {"val_eer": self._eer(embeddings), "val_mean_spectrum_eer": self.eer_mean_spectrum}

    def build_model(self) -> nn.Module:
        return _XVector(self.bins, 64, 64, self.speakers)


class _XVector(nn.Module):
    def __init__(self, inputs: int, width: int, embedding: int, classes: int) -> None:
        super().__init__()
        self.frames = nn.Sequential(
            nn.Conv1d(inputs, width, 5, padding=2),
            nn.ReLU(),
            nn.Conv1d(width, width, 3, padding=2, dilation=2),
            nn.ReLU(),
        )
        self.segment = nn.Linear(2 * width, embedding)
        self.head = nn.Linear(embedding, classes)

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        h = self.frames(x)
        return self.segment(torch.cat([h.mean(-1), h.std(-1)], -1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(F.relu(self.embed(x)))


class TweediePurePremium(_Tabular):
    """Insurance pricing, the pure premium of motor policies by a Tweedie GLM-like network (as in
    scikit-learn's example on French motor claims): 60,000 policies to train on, 40,000 held out,
    with a driver's age, a vehicle's age and power, diesel or not, the log population density, a
    bonus-malus level (mostly at its floor of 50, higher for young drivers), the log of the
    exposure (3% of a year to a year) and two categories, a region (40, of unequal size) and a
    brand (11). Claim counts are Poisson with a frequency of about 0.07 a year that rises for young
    drivers (more with powerful cars) and the old, with the bonus-malus, the density and the
    region, and varies by brand and vehicle age; claim sizes are Gamma (shape 0.7) with a mean
    that varies by brand, vehicle age, power, density, region and the driver's youth. An MLP
    (embeddings of 4 and 3 dimensions for the categories, two layers of 64) gives the log of the
    expected claim amount per year, trained by the exposure-weighted Tweedie deviance (power
    1.9) of the observed amount per year, scaled to a mean of 1. Metric the held-out Gini index of
    the ordered Lorenz curve (exposure against claim amount, policies ordered by the prediction;
    -0.15 to 0.15 at the start, 0.12 for ordering by the bonus-malus, 0.50 for the true expected
    premium, reported beside it). Defined as the forty-ninth batch of fresh workloads, by a helper
    session."""

    metric = "val_gini"
    power, regions, brands, numeric = 1.9, 40, 11, 7

    def __init__(self) -> None:
        rng = np.random.default_rng(1237)
        region_effect = rng.normal(0, 0.45, self.regions)
        region_severity = rng.normal(0, 0.3, self.regions)
        region_density = rng.normal(0, 1, self.regions)
        brand_effect = rng.normal(0, 0.3, self.brands)
        brand_severity = rng.normal(0, 0.3, self.brands)
        region_share = rng.dirichlet(np.ones(self.regions))

        def policies(count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
            region = rng.choice(self.regions, count, p=region_share)
            brand = rng.integers(0, self.brands, count)
            driver_age = np.clip(18 + rng.gamma(3.0, 9.0, count), 18, 95)
            vehicle_age = np.clip(rng.gamma(2.0, 3.5, count), 0, 30)
            power = rng.integers(4, 16, count)
            diesel = rng.random(count) < 0.5
            log_density = region_density[region] * 1.2 + rng.normal(5.5, 1.3, count)
            young = np.clip((30 - driver_age) / 12, 0, None)
            malus = np.clip(50 + rng.gamma(1.5, 18 + 25 * young, count), 50, 230)
            bonus = np.where(rng.random(count) < 0.6, 50, malus)
            exposure = np.where(rng.random(count) < 0.3, 1.0, rng.uniform(0.03, 1.0, count))
            frequency = np.exp(
                -2.7
                + 1.1 * young**1.5
                + 0.4 * np.clip((driver_age - 70) / 15, 0, None)
                + 0.012 * (bonus - 50)
                + 0.25 * np.tanh(log_density - 6)
                + region_effect[region]
                + brand_effect[brand] * (1 + 0.15 * (power - 8))
                + 0.1 * young * (power - 6)
                - 0.2 * diesel * (vehicle_age > 5)
                + 0.15 * np.cos(vehicle_age / 2)
                - 0.3 * np.sqrt(exposure)
            )
            claims = rng.poisson(exposure * frequency)
            severity = np.exp(
                0.3 * np.clip(vehicle_age, 0, 10) / 10 * (1 + brand_severity[brand])
                + 0.05 * (power - 6)
                + brand_severity[brand]
                + 0.3 * young
                - 0.2 * np.tanh(log_density - 6)
                + region_severity[region]
            )
            shape = 0.7
            amount = np.array(
                [rng.gamma(shape, m / shape, n).sum() for n, m in zip(claims, severity, strict=True)]
            )
            features = np.stack(
                [
                    driver_age / 50,
                    vehicle_age / 10,
                    power / 10,
                    diesel,
                    log_density / 5,
                    (bonus - 50) / 50,
                    np.log(exposure),
                    region,
                    brand,
                ],
                1,
            ).astype(np.float32)
            return features, amount / exposure, exposure, frequency * severity

        x_train, y_train, w_train, _ = policies(60000)
        x_val, y_val, w_val, expected = policies(40000)
        scale = (y_train * w_train).sum() / w_train.sum()
        k = self.numeric
        mean, std = x_train[:, :k].mean(0), x_train[:, :k].std(0)
        x_train[:, :k] = (x_train[:, :k] - mean) / std
        x_val[:, :k] = (x_val[:, :k] - mean) / std
        super().__init__(
            x_train, np.stack([y_train / scale, w_train], 1), x_val, np.stack([y_val / scale, w_val], 1)
        )
        self.gini_oracle = self._gini(torch.tensor(expected))
        self.gini_bonus = self._gini(self.x_val[:, 5] + 1e-3 * self.x_val[:, 0])

    def _gini(self, predicted: torch.Tensor) -> float:
        order = predicted.argsort()
        exposure = self.y_val[order, 1]
        amount = self.y_val[order, 0] * exposure
        lorenz = torch.cat([torch.zeros(1), amount.cumsum(0) / amount.sum()]).double()
        share = torch.cat([torch.zeros(1), exposure.cumsum(0) / exposure.sum()]).double()
        area = ((lorenz[1:] + lorenz[:-1]) / 2 * share.diff()).sum()
        return (1 - 2 * area).item()

    def _deviance(self, eta: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """The Tweedie deviance's terms that depend on the prediction (log mean ``eta``)."""
        p = self.power
        return -target * torch.exp((1 - p) * eta) / (1 - p) + torch.exp((2 - p) * eta) / (2 - p)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        x, target = batch
        weight = target[:, 1]
        return (self._deviance(model(x).float(), target[:, 0]) * weight).sum() / weight.sum()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        eta = model(self.x_val).float()
        if not torch.isfinite(eta).all():
            return {"val_gini": math.nan}
        p, y, w = self.power, self.y_val[:, 0], self.y_val[:, 1]
        deviance = 2 * (y ** (2 - p) / ((1 - p) * (2 - p)) + self._deviance(eta, y))
        return {
            "val_gini": self._gini(eta),
            "val_deviance": ((deviance * w).sum() / w.sum()).item(),
            "val_oracle_gini": self.gini_oracle,
            "val_bonus_malus_gini": self.gini_bonus,
        }

    def build_model(self) -> nn.Module:
        return _EntityEmbeddingMLP(self.numeric, (self.regions, self.brands), (4, 3), 64)


class _EntityEmbeddingMLP(nn.Module):
    def __init__(self, numeric: int, levels: tuple[int, ...], dims: tuple[int, ...], width: int) -> None:
        super().__init__()
        self.numeric = numeric
        self.embeddings = nn.ModuleList(nn.Embedding(n, d) for n, d in zip(levels, dims, strict=True))
        self.mlp = _mlp(numeric + sum(dims), [width, width], 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        codes = x[:, self.numeric :].long()
        parts = [x[:, : self.numeric]] + [e(codes[:, i]) for i, e in enumerate(self.embeddings)]
        return self.mlp(torch.cat(parts, 1)).squeeze(-1)


class UndersampledMRI(_Tabular):
    """Accelerated MRI, reconstructing an image from undersampled k-space with a network followed
    by a data-consistency step (in the manner of Schlemper et al. 2018, one cascade): 24 x 24
    head phantoms (a bright scalp ellipse, the brain inside it, 6 ellipses of tissue brighter or
    darker, a smooth texture and a coil's linear intensity bias, scaled to a maximum of 1; 8,000
    to train on, 256 held out), their 2-D Fourier transforms measured with complex noise (sd
    0.02) on the 4 central phase-encoding lines and a random 18% of the others (about a third of
    k-space; a fresh mask for every training example, fixed ones for the held-out images). A
    residual CNN (3 x 3 convolutions of 12, 12 and 2 channels) refines the zero-filled image's
    real and imaginary parts, the measured lines are put back into its k-space, and the inverse
    transform's magnitude is the reconstruction, trained by its L1 error. Metric the held-out
    mean SSIM (7 x 7 Gaussian window, sd 1.5; about 0.52 at the start, as for the zero-filled
    reconstruction, reported beside it). Defined as the forty-ninth batch of fresh workloads, by a
    helper session."""

    metric = "val_ssim"
    size, centre, keep = 24, 4, 0.18

    def __init__(self) -> None:
        rng = np.random.default_rng(1249)
        axis = np.linspace(-1, 1, self.size)
        grid = np.stack(np.meshgrid(axis, axis, indexing="ij"), -1)

        def ellipse(centre: np.ndarray, axes: np.ndarray, angle: np.ndarray) -> np.ndarray:
            c, s = np.cos(angle)[:, None, None], np.sin(angle)[:, None, None]
            dy = grid[None, ..., 0] - centre[:, None, None, 0]
            dx = grid[None, ..., 1] - centre[:, None, None, 1]
            u, v = (c * dx + s * dy) / axes[:, None, None, 0], (-s * dx + c * dy) / axes[:, None, None, 1]
            return (u**2 + v**2 <= 1).astype(np.float32)

        def phantoms(count: int) -> np.ndarray:
            axes = rng.uniform(0.7, 0.92, (count, 2))
            tilt = rng.uniform(-0.3, 0.3, count)
            middle = rng.uniform(-0.05, 0.05, (count, 2))
            head = ellipse(middle, axes, tilt)
            brain = ellipse(middle, axes - rng.uniform(0.08, 0.14, (count, 1)), tilt)
            image = 0.9 * head - rng.uniform(0.5, 0.7, (count, 1, 1)) * brain
            for _ in range(6):
                spot = ellipse(
                    middle + rng.uniform(-0.45, 0.45, (count, 2)),
                    rng.uniform(0.05, 0.3, (count, 2)),
                    rng.uniform(0, np.pi, count),
                )
                image += rng.uniform(-0.25, 0.35, (count, 1, 1)) * spot * brain
            # A smooth tissue texture and a coil's linear intensity bias.
            frequency = np.fft.fftfreq(self.size)
            lowpass = np.exp(-(frequency[:, None] ** 2 + frequency[None] ** 2) * 120)
            texture = np.fft.ifft2(
                np.fft.fft2(rng.normal(0, 1, (count, self.size, self.size))) * lowpass
            ).real
            bias = 1 + 0.25 * (
                grid[None, ..., 0] * rng.uniform(-1, 1, (count, 1, 1))
                + grid[None, ..., 1] * rng.uniform(-1, 1, (count, 1, 1))
            )
            image = np.clip((image + 0.6 * texture * brain) * bias, 0, None)
            return (image / image.max((1, 2), keepdims=True)).astype(np.float32)

        x_train, x_val = phantoms(8000), phantoms(256)
        super().__init__(x_train, x_train, x_val, x_val)
        self.val_mask = self._masks(len(x_val), torch.Generator().manual_seed(1249))
        self.val_kspace = self._measure(self.x_val, self.val_mask, torch.Generator().manual_seed(1250))
        window = torch.exp(-0.5 * ((torch.arange(7) - 3) / 1.5) ** 2)
        self.window = (window[:, None] * window[None] / window.sum() ** 2)[None, None]
        zero_filled = torch.fft.ifft2(self.val_kspace, norm="ortho").abs()
        self.ssim_zero_filled = self._ssim(zero_filled, self.x_val)

    def _masks(self, count: int, generator: torch.Generator) -> torch.Tensor:
        lines = torch.rand(count, self.size, generator=generator) < self.keep
        lines[:, : self.centre // 2] = True  # the lowest frequencies (at both ends, unshifted)
        lines[:, -self.centre // 2 :] = True
        return lines[:, :, None].expand(count, self.size, self.size)

    def _measure(self, image: torch.Tensor, mask: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        kspace = torch.fft.fft2(image.to(torch.complex64), norm="ortho")
        noise = torch.complex(*torch.randn(2, *image.shape, generator=generator)) * 0.02
        return (kspace + noise) * mask

    def _ssim(self, image: torch.Tensor, truth: torch.Tensor) -> float:
        x, y = image[:, None], truth[:, None]
        mx, my = F.conv2d(x, self.window), F.conv2d(y, self.window)
        vx, vy = F.conv2d(x * x, self.window) - mx**2, F.conv2d(y * y, self.window) - my**2
        cxy = F.conv2d(x * y, self.window) - mx * my
        c1, c2 = 0.01**2, 0.03**2
        ssim = ((2 * mx * my + c1) * (2 * cxy + c2)) / ((mx**2 + my**2 + c1) * (vx + vy + c2))
        return ssim.mean().item()

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Any]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        while True:
            index = torch.randint(0, len(self.x_train), (micro_batch_size,), generator=generator)
            mask = self._masks(micro_batch_size, generator)
            yield (self._measure(self.x_train[index], mask, generator), mask), self.x_train[index]

    def loss(self, model: nn.Module, batch: Any) -> torch.Tensor:
        (kspace, mask), truth = batch
        return F.l1_loss(model(kspace, mask).float(), truth)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        image = model(self.val_kspace, self.val_mask).float()
        if not torch.isfinite(image).all():
            return {"val_ssim": math.nan}
        return {
            "val_ssim": self._ssim(image, self.x_val),
            "val_nmse": ((image - self.x_val).pow(2).sum() / self.x_val.pow(2).sum()).item(),
            "val_zero_filled_ssim": self.ssim_zero_filled,
        }

    def build_model(self) -> nn.Module:
        return _DataConsistentCNN(12)


class _DataConsistentCNN(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(2, width, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(width, width, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(width, 2, 3, padding=1),
        )

    def forward(self, kspace: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        image = torch.fft.ifft2(kspace, norm="ortho")
        channels = torch.stack([image.real, image.imag], 1)
        refined = channels + self.net(channels)
        estimate = torch.fft.fft2(torch.complex(refined[:, 0], refined[:, 1]), norm="ortho")
        return torch.fft.ifft2(torch.where(mask, kspace, estimate), norm="ortho").abs()


class TempoEstimation(_Tabular):
    """Music tempo estimation (global tempo of an excerpt, scored as in the MIREX tempo task):
    6 s of onset-strength envelopes at 50 frames a second in three bands (kick, snare, hi-hat)
    of drum patterns at 60 to 180 beats a minute (log-uniform): one bar of sixteenth notes from 7
    styles (rock, four on the floor, half-time, breakbeat, sparse, sixteenth hi-hats, ballad) played
    with a fifth of the hits dropped, ghost notes, swing in a quarter of the excerpts, a tempo
    drift of up to 3%, timing jitter, leakage between the bands, onsets of other instruments and
    noise (20,000 / 500 excerpts). A learned onset detector (1-D convolutions of 16 and 8
    channels, kernel 5, softplus) feeds a differentiable autocorrelation (lags of 1 to 150
    frames, normalised by lag 0, per channel), read by an MLP 1200-128-96 over 96 log-spaced tempo
    classes from 50 to 200 BPM, trained by cross-entropy. Metric the held-out Accuracy1, the share
    of excerpts whose estimated tempo is within 4% of the true one (about 0.05 at the start, 0.40
    for the autocorrelation peak of the summed bands, reported beside it with the Accuracy2 that
    forgives errors of a factor 2 or 3). Defined as the fiftieth batch of fresh workloads, by a
    helper session."""

    metric = "val_accuracy1"
    rate, frames, lags, classes, slowest, fastest = 50, 300, 150, 96, 50.0, 200.0

    def __init__(self) -> None:
        rng = np.random.default_rng(1259)
        styles = (
            ("1000000010000000", "0000100000001000", "1010101010101010"),  # rock
            ("1000100010001000", "0000100000001000", "0010001000100010"),  # four on the floor
            ("1000000000100000", "0000000010000000", "1010101010101010"),  # half-time
            ("1000001000100100", "0000100100001000", "1010101010101010"),  # breakbeat
            ("1000000010000000", "0000100000001000", "0000000000000000"),  # sparse
            ("1000000010100000", "0000100000001000", "1111111111111111"),  # sixteenth hi-hats
            ("1000000000000000", "0000000000000000", "1000100010001000"),  # ballad
        )
        templates = np.array([[[int(c) for c in row] for row in style] for style in styles], float)

        def excerpts(count: int) -> tuple[np.ndarray, np.ndarray]:
            bpm = np.exp(rng.uniform(np.log(60), np.log(180), count))
            pattern = templates[rng.integers(len(templates), size=count)]
            swing = (rng.random(count) < 0.25) * 0.33
            step = 60 / bpm / 4 * self.rate  # frames per sixteenth note
            drift = rng.uniform(-0.03, 0.03, count) / 96
            position = -rng.uniform(0, 16 * step)
            x = np.zeros((count, 3, self.frames + 3))
            rows = np.arange(count)
            for k in range(100):
                time = position + step * (k + swing * (k % 2) + drift * k * k) + rng.normal(0, 0.6, count)
                inside = (time >= 0) & (time < self.frames)
                frame = np.clip(time, 0, self.frames - 1).astype(int)
                for band in range(3):
                    hit = (pattern[:, band, k % 16] > 0) & (rng.random(count) > 0.2)
                    ghost = rng.random(count) < 0.06
                    level = rng.uniform(0.5, 1.0, count) * np.where(hit, 1.0, 0.4 * ghost) * inside
                    for lag, decay in enumerate((1.0, 0.45, 0.2)):
                        x[rows, band, frame + lag] += decay * level
                    x[rows, :, frame] += 0.15 * level[:, None]
            x = x[..., : self.frames]
            others = rng.random(x.shape) < rng.uniform(0.0, 0.15, (count, 1, 1))
            x += others * rng.uniform(0.2, 0.8, x.shape) + np.abs(rng.normal(0, 0.15, x.shape))
            position = np.log(bpm / self.slowest) / np.log(self.fastest / self.slowest)
            return np.log1p(5 * x).astype(np.float32), np.stack(
                [np.round(position * (self.classes - 1)), bpm], 1
            )

        x_train, y_train = excerpts(20000)
        x_val, y_val = excerpts(500)
        super().__init__(x_train, y_train[:, 0].astype(np.int64), x_val, y_val[:, 1].astype(np.float32))
        ratio = self.fastest / self.slowest
        self.centres = self.slowest * ratio ** (torch.arange(self.classes) / (self.classes - 1))
        # Baseline: the strongest autocorrelation lag of the summed bands between 60 and 180 BPM.
        envelope = self.x_val.sum(1) - self.x_val.sum(1).mean(-1, keepdim=True)
        lags = torch.arange(60 * self.rate // 180, 60 * self.rate // 60 + 1)
        auto = torch.stack([(envelope[:, lag:] * envelope[:, :-lag]).mean(-1) for lag in lags], 1)
        self.accuracy_autocorrelation = self._accuracy(60 * self.rate / lags[auto.argmax(1)].float())

    def _accuracy(self, bpm: torch.Tensor, octaves: bool = False) -> float:
        ratio = bpm / self.y_val
        if octaves:
            ratio = torch.stack([ratio, 2 * ratio, ratio / 2, 3 * ratio, ratio / 3], 1)
            return ((ratio - 1).abs().amin(1) <= 0.04).float().mean().item()
        return ((ratio - 1).abs() <= 0.04).float().mean().item()

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        x, label = batch
        return F.cross_entropy(model(x).float(), label)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float()
        if not torch.isfinite(logits).all():
            return {"val_accuracy1": math.nan}
        bpm = self.centres[logits.argmax(1)]
        return {
            "val_accuracy1": self._accuracy(bpm),
            "val_accuracy2": self._accuracy(bpm, octaves=True),
            "val_autocorrelation_accuracy1": self.accuracy_autocorrelation,
        }

    def build_model(self) -> nn.Module:
        return _OnsetAutocorrelation(3, 16, 8, self.lags, self.classes)


class _OnsetAutocorrelation(nn.Module):
    def __init__(self, inputs: int, width: int, channels: int, lags: int, classes: int) -> None:
        super().__init__()
        self.lags = lags
        self.onsets = nn.Sequential(
            nn.Conv1d(inputs, width, 5, padding=2), nn.ReLU(), nn.Conv1d(width, channels, 5, padding=2)
        )
        self.head = _mlp(channels * lags, [128], classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.softplus(self.onsets(x))
        h = h - h.mean(-1, keepdim=True)
        n = h.shape[-1]
        auto = torch.fft.irfft(torch.fft.rfft(h, 2 * n).abs().pow(2), 2 * n)[..., : self.lags + 1]
        return self.head((auto[..., 1:] / (auto[..., :1] + 1e-6)).flatten(1))


class ProbabilisticLoadForecast(_Tabular):
    """Day-ahead probabilistic forecasting of electricity load (as in the GEFCom load track),
    scored by the continuous ranked probability score: hourly load of 24 substations over 3 years
    (2 to train on, the third held out, forecasts for every other day), each residential (morning
    and evening peaks, more at midday on days off), commercial (a working-hours plateau) or
    industrial (two shifts on working days), shifted by up to an hour, with heating and cooling
    loads of their own driven by a regional temperature (seasons, a daily cycle, weather that
    persists for days), weekends and 9 holidays, growth, and persistent multiplicative noise;
    each scaled to a mean of 1 over the training years. At midnight, an MLP 200-192-192-192-48
    reads the past week's 168 hourly loads, the temperature forecast for the next 24 hours (sd
    1.5 degrees off) and the day's weekday and holiday flags, and gives a Gaussian (mean and
    softplus scale) for each of the next 24 hours, trained by its closed-form CRPS. Metric the
    held-out mean CRPS in units of each substation's mean load (about 0.7 at the start; 0.13 for
    the same day last week as a point forecast, reported beside it). Defined as the fiftieth
    batch of fresh workloads, by a helper session."""

    metric = "val_crps"
    series, history, ahead, years = 24, 168, 24, 3

    def __init__(self) -> None:
        from scipy.signal import lfilter

        rng = np.random.default_rng(1277)
        days = 365 * self.years
        hours = 24 * days
        t = np.arange(hours)
        day, hour = t // 24, t % 24
        weekday = (day + 2) % 7
        holidays = np.zeros(days, bool)
        for year in range(self.years):
            holidays[year * 365 + np.array([0, 95, 120, 140, 186, 226, 304, 358, 359])] = True
        holiday = holidays[day]
        off = (weekday >= 5) | holiday
        # A regional temperature: seasons, weather that persists for days and a daily cycle.
        weather = lfilter([1.0], [1.0, -0.8], rng.normal(0, 2.5, days))
        temperature = (
            12
            - 10 * np.cos(2 * np.pi * day / 365)
            + np.repeat(weather, 24)
            + 4 * np.sin(2 * np.pi * (hour - 9) / 24)
            + rng.normal(0, 0.5, hours)
        )
        loads = []
        for kind in rng.integers(0, 3, self.series):
            local = hour - rng.uniform(-1, 1)
            if kind == 0:  # residential: morning and evening peaks, more at midday on days off
                profile = (
                    0.6
                    + 0.25 * np.exp(-0.5 * ((local - 7.5) / 1.5) ** 2)
                    + 0.5 * np.exp(-0.5 * ((local - 19) / 2.5) ** 2)
                    + 0.15 * off * np.exp(-0.5 * ((local - 13) / 3) ** 2)
                )
            elif kind == 1:  # commercial: a working-hours plateau
                profile = 0.5 + 0.7 * ~off / (1 + np.exp(-(local - 8) * 1.5)) / (
                    1 + np.exp((local - 18) * 1.5)
                )
            else:  # industrial: two shifts on working days, a half day on Saturdays
                profile = (
                    0.7 + 0.4 * ~off * ((local >= 6) & (local < 22)) + 0.1 * (weekday == 5) * (local < 14)
                )
            heating = rng.uniform(0.0, 0.04) * np.maximum(15 - temperature, 0)
            cooling = rng.uniform(0.0, 0.06) * np.maximum(temperature - 22, 0)
            growth = 1 + rng.uniform(-0.05, 0.1) * t / hours
            noise = lfilter([1.0], [1.0, -0.9], rng.normal(0, rng.uniform(0.02, 0.06), hours))
            loads.append(growth * (profile + heating + cooling) * np.exp(noise))
        load = np.stack(loads)
        split = 24 * 365 * (self.years - 1)
        self.load = torch.tensor(load / load[:, :split].mean(1, keepdims=True), dtype=torch.float32)
        forecast = (temperature + rng.normal(0, 1.5, hours) - 12) / 10
        self.temperature_forecast = torch.tensor(forecast, dtype=torch.float32)
        self.calendar = torch.tensor(
            np.stack([weekday == d for d in range(7)] + [holiday], 1), dtype=torch.float32
        )
        first = np.arange(8, days) * 24
        origins = np.stack(np.meshgrid(np.arange(self.series), first, indexing="ij"), -1).reshape(-1, 2)
        self.train_origins = torch.tensor(origins[origins[:, 1] + self.ahead <= split])
        val = origins[origins[:, 1] >= split]
        self.x_val, self.y_val = self._windows(torch.tensor(val[(val[:, 1] // 24) % 2 == 0]))
        last_week = self.x_val[:, : self.ahead]  # the history starts 168 hours before the origin
        self.crps_naive = (last_week - self.y_val).abs().mean().item()

    def _windows(self, origins: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        s, o = origins[:, 0:1], origins[:, 1:2]
        past = self.load[s, o + torch.arange(-self.history, 0)]
        future = o + torch.arange(self.ahead)
        inputs = torch.cat([past, self.temperature_forecast[future], self.calendar[o[:, 0]]], 1)
        return inputs, self.load[s, future]

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        while True:
            index = torch.randint(0, len(self.train_origins), (micro_batch_size,), generator=generator)
            yield self._windows(self.train_origins[index])

    @staticmethod
    def _crps(out: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """The CRPS of Gaussians (means and pre-softplus scales in ``out``) at ``target``."""
        mean, scale = out.chunk(2, -1)
        sigma = F.softplus(scale) + 1e-3
        z = (target - mean) / sigma
        cdf = 0.5 * (1 + torch.erf(z / math.sqrt(2)))
        pdf = torch.exp(-0.5 * z**2) / math.sqrt(2 * math.pi)
        return sigma * (z * (2 * cdf - 1) + 2 * pdf - 1 / math.sqrt(math.pi))

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        x, target = batch
        return self._crps(model(x).float(), target).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        out = model(self.x_val).float()
        if not torch.isfinite(out).all():
            return {"val_crps": math.nan}
        return {
            "val_crps": self._crps(out, self.y_val).mean().item(),
            "val_mae": (out[:, : self.ahead] - self.y_val).abs().mean().item(),
            "val_seasonal_naive_crps": self.crps_naive,
        }

    def build_model(self) -> nn.Module:
        return _mlp(self.history + self.ahead + 8, [192, 192, 192], 2 * self.ahead)


class SpellingCorrection(_Tabular):
    """Spelling correction of isolated words: the 1,000 most frequent words of 4 to 12 letters in
    the docstrings of 12 stdlib modules, misspelled by one edit (60%) or two (a deleted letter,
    an inserted one, often a doubled letter, a substitution, mostly by a neighbour on the
    keyboard, or two letters swapped), words drawn in proportion to the square root of their
    frequency (60,000 misspellings to train on, 1,000 others held out; a misspelling may be
    another vocabulary word). A character CNN (embeddings of 32, two convolutions of 96
    channels, kernel 3, max-pooled) reads the misspelling (up to 16 letters) and classifies it
    over the vocabulary, trained by cross-entropy. Metric the held-out top-1 correction accuracy
    (0 at the start; 0.84 for the nearest word by edit distance, the more frequent on ties,
    reported beside it with the top-5 accuracy). Defined as the fiftieth batch of fresh
    workloads, by a helper session."""

    metric = "val_accuracy"
    vocabulary, length = 1000, 16
    sources = (
        "typing.py",
        "doctest.py",
        "difflib.py",
        "inspect.py",
        "logging/__init__.py",
        "argparse.py",
        "statistics.py",
        "ipaddress.py",
        "subprocess.py",
        "threading.py",
        "pathlib.py",
        "tarfile.py",
    )

    def __init__(self) -> None:
        import ast
        import re
        from collections import Counter

        stdlib = Path(sysconfig.get_paths()["stdlib"])
        counts: Counter[str] = Counter()
        for name in self.sources:
            for node in ast.walk(ast.parse((stdlib / name).read_text(encoding="utf-8"))):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    text = (ast.get_docstring(node) or "").lower()
                    counts.update(w for w in re.findall(r"[a-z]+", text) if 4 <= len(w) <= 12)
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[: self.vocabulary]
        words = [w for w, _ in ranked]
        frequency = np.array([c for _, c in ranked], float)
        rng = np.random.default_rng(1283)
        keyboard = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
        near: dict[str, list[str]] = {}
        for r, row in enumerate(keyboard):
            for c, ch in enumerate(row):
                near[ch] = [
                    keyboard[rr][cc]
                    for rr in (r - 1, r, r + 1)
                    for cc in (c - 1, c, c + 1)
                    if 0 <= rr < 3 and 0 <= cc < len(keyboard[rr]) and (rr, cc) != (r, c)
                ]
        letters = "abcdefghijklmnopqrstuvwxyz"

        def misspell(word: str) -> str:
            while True:
                w = list(word)
                for _ in range(1 if rng.random() < 0.6 else 2):
                    kind, i = rng.integers(4), int(rng.integers(len(w)))
                    if kind == 0 and len(w) > 3:
                        del w[i]
                    elif kind == 1:
                        w.insert(i, w[i] if rng.random() < 0.3 else letters[rng.integers(26)])
                    elif kind == 2:
                        keys = near[w[i]]
                        w[i] = (
                            keys[rng.integers(len(keys))] if rng.random() < 0.7 else letters[rng.integers(26)]
                        )
                    elif i + 1 < len(w):
                        w[i], w[i + 1] = w[i + 1], w[i]
                typo = "".join(w)[: self.length]
                if typo != word:
                    return typo

        def encode(text: str) -> np.ndarray:
            codes = np.zeros(self.length, np.int64)
            codes[: len(text)] = np.frombuffer(text.encode(), np.uint8) - ord("a") + 1
            return codes

        weights = np.sqrt(frequency) / np.sqrt(frequency).sum()

        def pairs(count: int) -> tuple[np.ndarray, np.ndarray]:
            target = rng.choice(self.vocabulary, count, p=weights)
            return np.stack([encode(misspell(words[t])) for t in target]), target

        x_train, y_train = pairs(60000)
        x_val, y_val = pairs(1000)
        self.x_train, self.y_train = torch.tensor(x_train), torch.tensor(y_train)
        self.x_val, self.y_val = torch.tensor(x_val), torch.tensor(y_val)
        # Baseline: the vocabulary word nearest in edit distance (Levenshtein, by dynamic
        # programming over every pair at once), the more frequent on ties.
        vocab = np.stack([encode(w) for w in words])
        typo_length, word_length = (x_val > 0).sum(1), (vocab > 0).sum(1)
        longest = int(word_length.max())
        shape = (longest + 1, len(x_val), self.vocabulary)
        previous = np.broadcast_to(np.arange(longest + 1, dtype=np.int8)[:, None, None], shape).copy()
        for i in range(1, int(typo_length.max()) + 1):
            current = np.empty_like(previous)
            current[0] = i
            for j in range(1, longest + 1):
                differ = (x_val[:, None, i - 1] != vocab[None, :, j - 1]).astype(np.int8)
                current[j] = np.minimum(np.minimum(previous[j], current[j - 1]) + 1, previous[j - 1] + differ)
            previous = np.where((i <= typo_length)[None, :, None], current, previous)
        distance = np.take_along_axis(previous, word_length[None, None, :].repeat(len(x_val), 1), 0)[0]
        nearest = np.argmin(distance - 0.5 * frequency[None] / frequency.max(), 1)
        self.accuracy_edit_distance = float((nearest == y_val).mean())

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        typo, word = batch
        return F.cross_entropy(model(typo).float(), word)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float()
        if not torch.isfinite(logits).all():
            return {"val_accuracy": math.nan}
        top = logits.topk(5, 1).indices
        return {
            "val_accuracy": (top[:, 0] == self.y_val).float().mean().item(),
            "val_top5_accuracy": (top == self.y_val[:, None]).any(1).float().mean().item(),
            "val_edit_distance_accuracy": self.accuracy_edit_distance,
        }

    def build_model(self) -> nn.Module:
        return _CharCNNClassifier(27, 32, 96, self.vocabulary)


class _CharCNNClassifier(nn.Module):
    def __init__(self, symbols: int, embedding: int, width: int, classes: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(symbols, embedding, padding_idx=0)
        self.convs = nn.Sequential(
            nn.Conv1d(embedding, width, 3, padding=1),
            nn.ReLU(),
            nn.Conv1d(width, width, 3, padding=1),
            nn.ReLU(),
        )
        self.head = nn.Linear(width, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.convs(self.embed(x).transpose(1, 2)).amax(-1))


class TrafficSpeedForecast(_Tabular):
    """Traffic speed forecasting on a road sensor graph (in the manner of DCRNN on METR-LA, Li et
    al. 2018): 36 loop detectors every 5 minutes for 63 days (49 to train on, the last 14 held
    out, every sixth time), on a main line of 16 sensors and two feeders of 10 that merge into
    it. Queues grow behind two merges and a lane drop when the demand (morning and evening
    peaks on weekdays, a midday hump at weekends, a random daily level, noise) exceeds their
    capacity, and behind about 3 incidents a day anywhere (capacity cut to 30% to 70% for 20 to
    85 minutes), spreading upstream sensor by sensor, into both branches at a merge, and
    draining after; a queued sensor reads 30% of its free-flow speed (60 to 70 mph), plus noise
    of 1 mph. A diffusion graph network (each sensor's last hour of speeds, the time of day, the
    weekend and a learned 8-dimensional embedding of the sensor into a layer of 32, then two
    residual layers of 32 that mix each sensor with the mean of its upstream and of its
    downstream neighbours) gives the change of speed over the next 6 steps, trained by the
    smooth L1 error in units of 10 mph. Metric the held-out mean absolute error at 30 minutes
    ahead in mph (3.5 to 7 at the start, 3.3 for the last speed, reported beside it, a plateau
    where slow runs stay). Defined as the fiftieth batch of fresh workloads, by a helper
    session."""

    metric = "val_mae_30min"
    nodes, history, ahead, days, val_days, per_day = 36, 12, 6, 49, 14, 288

    def __init__(self) -> None:
        rng = np.random.default_rng(1289)
        # Traffic flows to higher indices: the main line 0-15, feeders 16-25 (into 6) and 26-35 (into 11).
        downstream = {n: n + 1 for n in range(self.nodes) if n not in (15, 25, 35)}
        downstream[25], downstream[35] = 6, 11
        upstream: dict[int, list[int]] = {n: [] for n in range(self.nodes)}
        for a, b in downstream.items():
            upstream[b].append(a)

        def behind(node: int) -> list[list[int]]:
            """Every path of sensors upstream from ``node`` (itself first) to a road's start."""
            paths, done = [[node]], []
            while paths:
                path = paths.pop()
                if not upstream[path[-1]]:
                    done.append(path)
                paths += [path + [u] for u in upstream[path[-1]]]
            return done

        steps = self.per_day * (self.days + self.val_days)
        t = np.arange(steps)
        hour, day = (t % self.per_day) / 12, t // self.per_day
        weekend = (day % 7) >= 5
        peaks = np.exp(-0.5 * ((hour - 8) / 1.2) ** 2) + 0.9 * np.exp(-0.5 * ((hour - 17.5) / 1.5) ** 2)
        profile = np.where(weekend, 0.35 + 0.4 * np.exp(-0.5 * ((hour - 14) / 3) ** 2), 0.3 + 0.8 * peaks)
        profile = profile * np.where(hour < 5, 0.3, 1.0)
        day_level = np.repeat(rng.normal(1, 0.08, self.days + self.val_days), self.per_day)
        # Capacities (in units of the demand's scale) at the bottlenecks and at incidents.
        capacities = [(6, np.full(steps, 0.8)), (11, np.full(steps, 0.75)), (13, np.full(steps, 0.85))]
        for _ in range(3 * (self.days + self.val_days)):
            node, start = int(rng.integers(0, self.nodes)), int(rng.integers(0, steps - 30))
            capacity = np.full(steps, 10.0)
            capacity[start : start + int(rng.integers(4, 18))] = rng.uniform(0.3, 0.7)
            capacities.append((node, capacity))
        congestion = np.zeros((steps, self.nodes))
        storage = 0.06  # the queue a sensor's stretch holds, in hours of demand
        for node, capacity in capacities:
            demand = profile * day_level * rng.uniform(0.9, 1.1) * np.exp(rng.normal(0, 0.05, steps))
            queue = np.zeros(steps)
            q = 0.0
            for i in range(steps):
                q = max(0.0, q + (demand[i] - capacity[i]) / 12)
                queue[i] = q
            active = np.nonzero(queue > 0)[0]
            for path in behind(node) if len(active) else []:
                level = np.clip(queue[active, None] / storage - np.arange(len(path))[None], 0, 1)
                cells = np.broadcast_to(np.array(path)[None], level.shape)
                np.maximum.at(congestion, (np.broadcast_to(active[:, None], level.shape), cells), level)
        free = rng.uniform(60, 70, self.nodes)
        speed = free * (1 - 0.7 * congestion) + rng.normal(0, 1.0, (steps, self.nodes))
        speed = speed - 4 * np.clip(profile - 0.8, 0, None)[:, None]
        self.speed = torch.tensor(speed.T, dtype=torch.float32)  # (nodes, steps)
        clock = np.stack([np.sin(2 * np.pi * hour / 24), np.cos(2 * np.pi * hour / 24), weekend], 0)
        self.clock = torch.tensor(clock, dtype=torch.float32)
        adjacency = np.zeros((self.nodes, self.nodes), np.float32)
        for a, b in downstream.items():
            adjacency[b, a] = 1.0  # row b gathers from its upstream neighbour a
        self.graphs = torch.tensor(
            np.stack([a / np.maximum(a.sum(1, keepdims=True), 1) for a in (adjacency, adjacency.T)])
        )
        split = self.per_day * self.days
        self.train_ends = torch.arange(self.history, split - self.ahead)
        self.x_val, self.y_val = self._windows(torch.arange(split + self.history, steps - self.ahead, 6))
        last = self.x_val[:, :, self.history - 1] * 15 + 50
        self.mae_persistence = (last - self.y_val[:, :, -1]).abs().mean().item()

    def _windows(self, ends: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Inputs (standardised speeds of the last hour, clock) and the next speeds, per sensor."""
        past = (self.speed[:, ends[:, None] + torch.arange(-self.history, 0)].transpose(0, 1) - 50) / 15
        clock = self.clock[:, ends].T[:, None].expand(-1, self.nodes, -1)
        future = self.speed[:, ends[:, None] + torch.arange(self.ahead)].transpose(0, 1)
        return torch.cat([past, clock], -1), future

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        while True:
            index = torch.randint(0, len(self.train_ends), (micro_batch_size,), generator=generator)
            yield self._windows(self.train_ends[index])

    def _predict(self, model: nn.Module, x: torch.Tensor) -> torch.Tensor:
        return x[..., self.history - 1 : self.history] * 15 + 50 + model(x).float() * 10

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        x, future = batch
        return F.smooth_l1_loss(self._predict(model, x) / 10, future / 10)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        predicted = self._predict(model, self.x_val)
        if not torch.isfinite(predicted).all():
            return {"val_mae_30min": math.nan}
        error = (predicted - self.y_val).abs()
        return {
            "val_mae_30min": error[..., -1].mean().item(),
            "val_mae_15min": error[..., 2].mean().item(),
            "val_persistence_mae_30min": self.mae_persistence,
        }

    def build_model(self) -> nn.Module:
        return _DiffusionGraphNet(self.history + 3, 32, self.ahead, self.graphs)


class _DiffusionGraphNet(nn.Module):
    def __init__(self, inputs: int, width: int, outputs: int, graphs: torch.Tensor) -> None:
        super().__init__()
        self.register_buffer("graphs", graphs, persistent=False)
        self.place = nn.Parameter(torch.randn(graphs.shape[1], 8))
        self.enter = nn.Linear(inputs + 8, width)
        self.layers = nn.ModuleList(nn.Linear(3 * width, width) for _ in range(2))
        self.head = nn.Linear(width, outputs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.relu(self.enter(torch.cat([x, self.place.expand(len(x), -1, -1)], -1)))
        for layer in self.layers:
            spread = torch.einsum("gij,bjc->bigc", self.graphs, h).flatten(2)
            h = h + F.relu(layer(torch.cat([h, spread], -1)))
        return self.head(h)


class JetTagging(_Tabular):
    """Boosted top-quark tagging with jet images (as in the top-tagging comparison of Kasieczka et
    al. 2019): jets of 400 to 500 GeV, half from hadronic top decays (a b quark and a W that
    splits into two quarks, at the opening angles that the top and W masses set) and half from
    light quarks and gluons (QCD: a soft-collinear splitting of share 0.06 to 0.5 and angle 0.1
    to 0.8, log-uniform, then an angularly ordered one inside it), most with a final-state gluon
    off one prong, each parton showered into up to 16 particles (Dirichlet momentum shares,
    softer ones wider), with an underlying event of about 25 soft particles; centred on the
    pT-weighted centroid, rotated to put the principal axis upright and flipped to put the more
    energetic side right, then deposited on a 16 x 16 calorimeter of cells 0.1 wide in (eta, phi)
    with a stochastic resolution of 50% / sqrt(E) and a 1 GeV threshold, intensities as shares
    of the jet's pT (20,000 jets / 2,000, a quarter of them tops). A small CNN (3 x 3
    convolutions of 8 and 16 channels, two poolings, a layer of 32) gives the top logit, trained
    by binary cross-entropy. Metric the held-out background rejection 1 / eps_B at a signal
    efficiency of 50%, as taggers are compared (about 2 to 3 at the start, at most 1,500; a
    top-mass window on the jet mass, about 16, is reported beside it). Defined as the
    fifty-first batch of fresh workloads, by a helper session."""

    metric = "val_rejection_at_50"
    pixels, cell, per_prong, underlying = 16, 0.1, 16, 48

    def __init__(self) -> None:
        rng = np.random.default_rng(1291)
        x_train, y_train, _ = self._jets(rng, 20000, 0.5)
        x_val, y_val, mass = self._jets(rng, 2000, 0.25)
        super().__init__(x_train, y_train, x_val, y_val)
        self.rejection_mass = self._rejection(-np.abs(mass - 173.0), y_val)

    def _jets(
        self, rng: np.random.Generator, count: int, tops: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        top = rng.permutation(np.arange(count) < tops * count).astype(np.int64)
        pt = rng.uniform(400, 500, count)
        turn1, turn2 = rng.uniform(0, 2 * np.pi, (2, count))
        # Top: b (share z) and W (1 - z) at the opening angle the masses set, then W -> q q'.
        m_top, m_w = rng.normal(173, 1.5, count), rng.normal(80.4, 1.0, count)
        z_b = rng.uniform(0.12, 0.7, count)
        theta_top = np.sqrt(np.maximum(m_top**2 - m_w**2 / (1 - z_b), 1.0) / (z_b * (1 - z_b))) / pt
        z_q = rng.uniform(0.15, 0.85, count)
        theta_w = m_w / ((1 - z_b) * pt * np.sqrt(z_q * (1 - z_q)))
        # QCD: a soft-collinear splitting (share and angle log-uniform), then one inside the harder prong.
        z_1, z_2 = 0.06 * (0.5 / 0.06) ** rng.random((2, count))
        theta_1 = 0.1 * 8 ** rng.random(count)
        theta_2 = theta_1 * 0.1 ** rng.random(count)
        z_a = np.where(top == 1, z_b, z_1)
        theta_a = np.where(top == 1, theta_top, theta_1)
        z_c = np.where(top == 1, z_q, z_2)
        theta_c = np.where(top == 1, theta_w, theta_2)
        share = np.stack([z_a, (1 - z_a) * z_c, (1 - z_a) * (1 - z_c), np.zeros(count)], 1)
        axis1 = np.stack([np.cos(turn1), np.sin(turn1)], 1)
        axis2 = np.stack([np.cos(turn2), np.sin(turn2)], 1)
        first = -(1 - z_a)[:, None] * theta_a[:, None] * axis1
        rest = (z_a * theta_a)[:, None] * axis1
        second = rest + ((1 - z_c) * theta_c)[:, None] * axis2
        centres = np.stack([first, second, rest - (z_c * theta_c)[:, None] * axis2, second], 1)
        # Final-state radiation: a gluon off one of the three prongs, in most jets.
        rows = np.arange(count)
        emitter = rng.integers(0, 3, count)
        emitted = 0.03 * 10 ** rng.random(count) * (rng.random(count) < 0.7)
        turn3 = rng.uniform(0, 2 * np.pi, count)
        angle = 0.05 * 12 ** rng.random(count)
        share[:, 3] = share[rows, emitter] * emitted
        share[rows, emitter] -= share[:, 3]
        centres[:, 3] = centres[rows, emitter] + angle[:, None] * np.stack([np.cos(turn3), np.sin(turn3)], 1)
        # Showers: up to 16 particles a prong, Dirichlet shares, softer particles spread wider.
        slots = np.arange(self.per_prong)
        numbers = np.minimum(self.per_prong, 1 + rng.poisson(3 + 10 * share))
        alive = slots[None, None] < numbers[..., None]
        draws = rng.gamma(0.6, 1.0, alive.shape) * alive
        fraction = draws / draws.sum(-1, keepdims=True)
        momenta = (pt[:, None] * share)[..., None] * fraction
        spread = np.minimum(0.2, 0.015 / np.sqrt(np.maximum(fraction, 1e-4)))
        where = centres[:, :, None] + rng.normal(0, 1, alive.shape + (2,)) * spread[..., None]
        momenta, where = momenta.reshape(count, -1), where.reshape(count, -1, 2)
        soft = rng.exponential(1.5, (count, self.underlying)) * (
            np.arange(self.underlying)[None] < rng.poisson(25, count)[:, None]
        )
        momenta = np.concatenate([momenta, soft], 1)
        where = np.concatenate([where, rng.uniform(-1, 1, (count, self.underlying, 2))], 1)
        # Preprocessing: centroid, principal axis upright, energetic side right.
        where = where - (momenta[..., None] * where).sum(1, keepdims=True) / momenta.sum(1)[:, None, None]
        moment = np.einsum("np,npi,npj->nij", momenta, where, where)
        _, vectors = np.linalg.eigh(moment)
        major = vectors[..., 1]
        angle = np.arctan2(major[:, 0], major[:, 1])
        c, s = np.cos(angle), np.sin(angle)
        rotated = np.stack(
            [
                c[:, None] * where[..., 0] - s[:, None] * where[..., 1],
                s[:, None] * where[..., 0] + c[:, None] * where[..., 1],
            ],
            -1,
        )
        flip = np.where((momenta * rotated[..., 0]).sum(1) < 0, -1.0, 1.0)
        rotated[..., 0] *= flip[:, None]
        # Calorimeter: 16 x 16 cells, stochastic resolution, threshold; intensities as pT shares.
        cells = np.floor(rotated / self.cell + self.pixels / 2).astype(np.int64)
        inside = ((cells >= 0) & (cells < self.pixels)).all(-1) & (momenta > 0)
        images = np.zeros((count, self.pixels * self.pixels))
        rows = np.broadcast_to(np.arange(count)[:, None], momenta.shape)
        np.add.at(
            images, (rows[inside], cells[inside][:, 0] * self.pixels + cells[inside][:, 1]), momenta[inside]
        )
        images = images * (
            1 + rng.normal(0, 1, images.shape) * (0.5 / np.sqrt(np.maximum(images, 1e-3)) + 0.03)
        )
        images = np.where(images > 1.0, images, 0.0)
        # The jet mass from the cells (massless deposits at the cell centres).
        centre = (np.arange(self.pixels) + 0.5 - self.pixels / 2) * self.cell
        eta, phi = np.repeat(centre, self.pixels), np.tile(centre, self.pixels)
        total = images @ np.stack([np.cosh(eta), np.cos(phi), np.sin(phi), np.sinh(eta)], -1)
        mass = np.sqrt(np.maximum(total[:, 0] ** 2 - (total[:, 1:] ** 2).sum(1), 0))
        images = images / pt[:, None]
        return images.reshape(count, 1, self.pixels, self.pixels).astype(np.float32), top, mass

    @staticmethod
    def _rejection(scores: np.ndarray, top: np.ndarray) -> float:
        """1 / eps_B at the score that keeps half the tops (at most the number of background jets)."""
        threshold = np.quantile(scores[top == 1], 0.5)
        background = scores[top == 0]
        return float(1.0 / max(float((background > threshold).mean()), 1.0 / len(background)))

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        images, top = batch
        return F.binary_cross_entropy_with_logits(model(images).float(), top.float())

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float()
        if not torch.isfinite(logits).all():
            return {"val_rejection_at_50": math.nan}
        return {
            "val_rejection_at_50": self._rejection(logits.numpy(), self.y_val.numpy()),
            "val_accuracy": ((logits > 0).long() == self.y_val).float().mean().item(),
            "val_mass_window_rejection_at_50": self.rejection_mass,
        }

    def build_model(self) -> nn.Module:
        return nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(16 * 16, 32),
            nn.ReLU(),
            nn.Linear(32, 1),
            nn.Flatten(0),
        )


class ProteinSecondaryStructure(_Tabular):
    """Protein secondary structure prediction from the amino-acid sequence alone (as in the
    single-sequence setting of PSIPRED-like predictors), on simulated chains: windows of 64
    residues alternating coil (2 to 8), helix (6 to 20) and strand (3 to 9) segments, residues
    drawn from background frequencies weighted by the Chou-Fasman propensities of their state,
    helices amphipathic (hydrophobic on one face of the 100-degree helical wheel) with N-caps
    (S, T, D, N), acidic first and basic last turns and a glycine after, strands alternating a
    buried and an exposed side (some buried throughout), and a third of the residues mutated to
    background (5,000 chains / 500). A 1-D CNN (one-hot residues, convolutions of 32 channels with
    kernel 7, then dilation 2, then a per-residue layer) gives helix, strand or coil per residue,
    trained by cross-entropy. Metric the held-out Q3, the share of residues in the right state
    (0.35 to 0.48 at the start, 0.48 on the plateau of coil everywhere, where slow runs stay; the
    most frequent state per amino acid, a one-residue baseline at 0.59, is reported beside it). Defined as the fifty-first batch of fresh workloads, by a
    helper session."""

    metric = "val_q3"
    length = 64
    amino = "ACDEFGHIKLMNPQRSTVWY"
    background = (8.3, 1.4, 5.5, 6.7, 3.9, 7.1, 2.3, 5.9, 5.8, 9.7, 2.4, 4.1, 4.7, 3.9, 5.5, 6.6, 5.3, 6.9, 1.1, 2.9)  # fmt: skip
    helix = (1.42, 0.7, 1.01, 1.51, 1.13, 0.57, 1.0, 1.08, 1.16, 1.21, 1.45, 0.67, 0.57, 1.11, 0.98, 0.77, 0.83, 1.06, 1.08, 0.69)  # fmt: skip
    strand = (0.83, 1.19, 0.54, 0.37, 1.38, 0.75, 0.87, 1.6, 0.74, 1.3, 1.05, 0.89, 0.55, 1.1, 0.93, 0.75, 1.19, 1.7, 1.37, 1.47)  # fmt: skip
    coil = (0.66, 1.19, 1.46, 0.74, 0.6, 1.56, 0.95, 0.47, 1.01, 0.59, 0.6, 1.56, 1.52, 0.98, 0.95, 1.43, 0.96, 0.5, 0.96, 1.14)  # fmt: skip
    hydropathy = (1.8, 2.5, -3.5, -3.5, 2.8, -0.4, -3.2, 4.5, -3.9, 3.8, 1.9, -3.5, -1.6, -3.5, -4.5, -0.8, -0.7, 4.2, -0.9, -1.3)  # fmt: skip

    def __init__(self) -> None:
        rng = np.random.default_rng(1297)
        bg = np.array(self.background) / sum(self.background)
        kd = np.array(self.hydropathy) / 4.5

        def table(
            propensity: tuple[float, ...], bias: np.ndarray | float = 0.0, boost: str = ""
        ) -> np.ndarray:
            p = bg * np.array(propensity) ** 2 * np.exp(bias)
            for letter in boost:
                p[self.amino.index(letter)] *= 4
            return p / p.sum()

        # Residue classes: 0 helix buried face, 1 helix exposed face, 2 N-cap, 3 first turn, 4 last
        # turn, 5 strand buried, 6 strand exposed, 7 coil, 8 glycine after a helix, 9 background.
        tables = np.stack(
            [
                table(self.helix, 1.2 * kd),
                table(self.helix, -1.2 * kd),
                table(self.coil, 0.0, "STDN"),
                table(self.helix, -1.2 * kd, "EDQ"),
                table(self.helix, -1.2 * kd, "KRH"),
                table(self.strand, 1.2 * kd),
                table(self.strand, -0.8 * kd),
                table(self.coil),
                table(self.coil, 0.0, "GGN"),
                bg,
            ]
        )

        def chains(count: int) -> tuple[np.ndarray, np.ndarray]:
            states = np.zeros((count, self.length), np.int64)
            kinds = np.zeros((count, self.length), np.int64)
            for n in range(count):
                state, kind = [], []
                segment = int(rng.integers(3))
                while len(state) < self.length + 20:
                    if segment == 2:  # coil
                        size = int(rng.integers(2, 9))
                        state += [2] * size
                        kind += [7] * size
                        segment = 0 if rng.random() < 0.55 else 1
                    elif segment == 0:  # helix, capped
                        size = int(rng.integers(6, 21))
                        face = rng.uniform(0, 360)
                        wheel = np.cos(np.radians(face + 100 * np.arange(size))) > 0.2
                        k = list(np.where(wheel, 0, 1))
                        k[:3] = [3 if not wheel[i] else 0 for i in range(3)]
                        k[-3:] = [4 if not wheel[size - 3 + i] else 0 for i in range(3)]
                        if kind:
                            kind[-1] = 2
                        state += [0] * size
                        kind += k + [8]
                        state += [2]
                        segment = 2
                    else:  # strand: alternating sides, or buried throughout
                        size = int(rng.integers(3, 10))
                        buried = rng.random() < 0.3
                        side = int(rng.integers(2))
                        state += [1] * size
                        kind += [5 if buried or (i + side) % 2 == 0 else 6 for i in range(size)]
                        segment = 2
                start = int(rng.integers(0, 20))
                states[n] = state[start : start + self.length]
                kinds[n] = kind[start : start + self.length]
            kinds = np.where(rng.random(kinds.shape) < 0.33, 9, kinds)
            cumulative = np.cumsum(tables, 1)[kinds]
            residues = (rng.random(kinds.shape)[..., None] > cumulative).sum(-1).clip(max=19)
            return residues, states

        r_train, y_train = chains(5000)
        r_val, y_val = chains(500)
        eye = np.eye(20, dtype=np.float32)
        super().__init__(eye[r_train].transpose(0, 2, 1), y_train, eye[r_val].transpose(0, 2, 1), y_val)
        counts = np.zeros((20, 3))
        np.add.at(counts, (r_train.ravel(), y_train.ravel()), 1)
        self.q3_one_residue = float((counts.argmax(1)[r_val] == y_val).mean())

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        residues, states = batch
        return F.cross_entropy(model(residues).float(), states)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float()
        if not torch.isfinite(logits).all():
            return {"val_q3": math.nan}
        return {
            "val_q3": (logits.argmax(1) == self.y_val).float().mean().item(),
            "val_loss": F.cross_entropy(logits, self.y_val).item(),
            "val_one_residue_q3": self.q3_one_residue,
        }

    def build_model(self) -> nn.Module:
        return nn.Sequential(
            nn.Conv1d(20, 32, 7, padding=3),
            nn.ReLU(),
            nn.Conv1d(32, 32, 7, padding=6, dilation=2),
            nn.ReLU(),
            nn.Conv1d(32, 3, 1),
        )


class ActivityRecognition(_Tabular):
    """Human activity recognition from a waist-worn inertial sensor (as in the UCI HAR dataset):
    2 s windows at 32 Hz of a 3-axis accelerometer and gyroscope of 30 simulated people walking,
    going upstairs, going downstairs, sitting, standing and lying. Walking gaits are sums of the
    first four harmonics of the stride (0.75 to 0.95 Hz, scaled per person) with templates per
    activity and axis, and per-person gains and phases; the trunk leans by an activity's angle
    (sitting 18 degrees and standing 3, each varying 6 and 3 by person); lying turns gravity to
    the chest's axis or a side; the device sits rotated by up to 15 degrees per person, plus
    sway, fidgeting and sensor noise. Training on 20 people (6,000 windows), validation on the
    other 10 (1,200), as subject-independent evaluation asks. A DeepConvLSTM-style network (two
    convolutions of 32 channels with kernel 5 and pooling by 2 and 4, then a GRU of 32 over the 8 steps)
    classifies the window, trained by cross-entropy. Metric the held-out macro F1 over the six
    activities (about 0.05 at the start, when one class is predicted everywhere). Defined as the
    fifty-first batch of fresh workloads, by a helper session."""

    metric = "val_macro_f1"
    rate, window, people, classes = 32, 64, 30, 6
    # Per gait (walking, upstairs, downstairs): amplitudes of the stride's harmonics 1-4 on acc
    # vertical, lateral, forward (g) and gyro yaw, pitch, roll (rad/s).
    gaits = (
        ((0.02, 0.3, 0.03, 0.1), (0.12, 0.03, 0.05, 0.01), (0.03, 0.2, 0.02, 0.06),
         (0.25, 0.05, 0.05, 0.0), (0.05, 0.3, 0.03, 0.08), (0.15, 0.03, 0.05, 0.01)),
        ((0.03, 0.25, 0.05, 0.06), (0.15, 0.04, 0.06, 0.02), (0.05, 0.12, 0.04, 0.04),
         (0.2, 0.05, 0.05, 0.0), (0.06, 0.4, 0.05, 0.06), (0.2, 0.04, 0.05, 0.02)),
        ((0.04, 0.4, 0.08, 0.2), (0.12, 0.05, 0.08, 0.03), (0.04, 0.15, 0.04, 0.1),
         (0.2, 0.06, 0.05, 0.02), (0.06, 0.35, 0.05, 0.15), (0.18, 0.04, 0.06, 0.03)),
    )  # fmt: skip

    def __init__(self) -> None:
        rng = np.random.default_rng(1301)
        n = self.people
        stride = rng.normal(1.0, 0.08, n)
        gain = np.exp(rng.normal(0, 0.3, (n, 6, 4)))
        phase = rng.normal(0, 0.5, (n, 6, 4))
        sit, stand = rng.normal(18, 6, n), rng.normal(3, 3, n)
        mount = np.stack([self._rotation(rng, rng.uniform(0, 15)) for _ in range(n)])
        template_phase = rng.uniform(0, 2 * np.pi, (3, 6, 4))

        def windows(people: np.ndarray, each: int) -> tuple[np.ndarray, np.ndarray]:
            person = np.repeat(people, self.classes * each)
            activity = np.tile(np.repeat(np.arange(self.classes), each), len(people))
            count = len(person)
            t = np.arange(self.window) / self.rate + rng.uniform(0, 10, count)[:, None]
            gait = np.minimum(activity, 2)
            frequency = np.array([0.9, 0.75, 0.95])[gait] * stride[person] * rng.normal(1, 0.04, count)
            h = np.arange(1, 5)
            waves = np.sin(
                2 * np.pi * h[None, None, :, None] * frequency[:, None, None, None] * t[:, None, None, :]
                + (template_phase[gait] + phase[person])[..., None]
            )
            motion = (np.array(self.gaits)[gait] * gain[person])[..., None] * waves
            signal = motion.sum(2) * (activity < 3)[:, None, None]  # (count, 6, time)
            lean = np.radians(
                np.select(
                    [activity == 0, activity == 1, activity == 2, activity == 3, activity == 4],
                    [
                        np.full(count, 2.0),
                        np.full(count, 8.0),
                        np.full(count, -2.0),
                        sit[person],
                        stand[person],
                    ],
                    90.0,
                )
                + rng.normal(0, 2, count)
            )
            side = (activity == 5) & (rng.random(count) < 0.3)
            gravity = np.stack([np.cos(lean), np.zeros(count), np.sin(lean)], 1)
            gravity[side] = [0.0, 1.0, 0.0]
            # Sway and fidgeting: slow random drifts; sensor noise.
            drift = np.cumsum(rng.normal(0, 0.004, (count, 6, self.window)), -1)
            signal = signal + drift
            signal[:, :3] += gravity[..., None]
            jitter = np.stack([self._rotation(rng, rng.uniform(0, 3)) for _ in range(count)])
            turn = mount[person] @ jitter
            signal = (
                np.concatenate([turn @ signal[:, :3], turn @ signal[:, 3:]], 1)
                + rng.normal(0, 1, signal.shape) * np.array([0.02] * 3 + [0.03] * 3)[:, None]
            )
            return signal.astype(np.float32), activity

        order = rng.permutation(n)
        x_train, y_train = windows(order[:20], 50)
        x_val, y_val = windows(order[20:], 20)
        super().__init__(x_train, y_train, x_val, y_val)

    @staticmethod
    def _rotation(rng: np.random.Generator, degrees: float) -> np.ndarray:
        """A rotation by ``degrees`` about a random axis (Rodrigues' formula)."""
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
        angle = np.radians(degrees)
        return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        signal, activity = batch
        return F.cross_entropy(model(signal).float(), activity)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float()
        if not torch.isfinite(logits).all():
            return {"val_macro_f1": math.nan}
        predicted = logits.argmax(1)
        f1 = []
        for c in range(self.classes):
            hits = ((predicted == c) & (self.y_val == c)).sum().item()
            f1.append(2 * hits / max((predicted == c).sum().item() + (self.y_val == c).sum().item(), 1))
        return {
            "val_macro_f1": float(np.mean(f1)),
            "val_accuracy": (predicted == self.y_val).float().mean().item(),
        }

    def build_model(self) -> nn.Module:
        return _ConvGRUClassifier(6, 32, self.classes)


class _ConvGRUClassifier(nn.Module):
    def __init__(self, channels: int, width: int, classes: int) -> None:
        super().__init__()
        self.convs = nn.Sequential(
            nn.Conv1d(channels, width, 5, padding=2),
            nn.ReLU(),
            nn.MaxPool1d(2),
            nn.Conv1d(width, width, 5, padding=2),
            nn.ReLU(),
            nn.MaxPool1d(4),
        )
        self.gru = nn.GRU(width, width, batch_first=True)
        self.head = nn.Linear(width, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _, last = self.gru(self.convs(x).transpose(1, 2))
        return self.head(last[0])


class PointNormalEstimation(_Tabular):
    """Unoriented normal estimation in point clouds from local patches (as in PCPNet, Guerrero et
    al. 2018): each patch is 32 points around a query point of a simulated surface, a smooth
    quadric with curvatures up to 1.2 and bumps, a crease between two planes of slopes up to
    1.5 with the query on one side, or a tight cylinder, sampled with anisotropic density in
    a unit disk, with Gaussian noise of 0 to 4% of the radius and a few outliers, centred on the
    query point and turned by a random rotation (30,000 patches / 2,000). A PointNet (a shared
    MLP 3-64-64 on each point, max pooling, an MLP 64-64-3) gives the normal, trained by the
    squared sine of its angle to the true one (so either sign is right). Metric the held-out RMS
    unoriented angle error in degrees, as PCPNet reports (about 60 at the start; the normal of
    a PCA plane fit is reported beside it). Defined as the fifty-first batch of fresh workloads,
    by a helper session."""

    metric = "val_rms_angle_deg"
    points = 32

    def __init__(self) -> None:
        rng = np.random.default_rng(1303)
        x_train, y_train = self._patches(rng, 30000)
        x_val, y_val = self._patches(rng, 2000)
        super().__init__(x_train, y_train, x_val, y_val)
        centred = x_val - x_val.mean(1, keepdims=True)
        _, vectors = np.linalg.eigh(np.einsum("npi,npj->nij", centred, centred))
        self.rms_pca = self._rms_angle(torch.tensor(vectors[..., 0], dtype=torch.float32), self.y_val)

    def _patches(self, rng: np.random.Generator, count: int) -> tuple[np.ndarray, np.ndarray]:
        kind = rng.integers(0, 3, count)
        radius = np.sqrt(rng.random((count, self.points)))
        angle = rng.uniform(0, 2 * np.pi, (count, self.points))
        stretch = rng.uniform(0.4, 1.0, count)[:, None]
        x, y = radius * np.cos(angle), radius * np.sin(angle) * stretch
        turn = rng.uniform(0, 2 * np.pi, count)[:, None]
        x, y = x * np.cos(turn) - y * np.sin(turn), x * np.sin(turn) + y * np.cos(turn)
        x[:, 0] = y[:, 0] = 0.0  # the query point itself
        a, b, c = rng.uniform(-0.6, 0.6, (3, count, 1)) * np.array([1.0, 0.5, 1.0])[:, None, None]
        a = np.where(kind[:, None] == 2, np.sign(a) * rng.uniform(0.6, 1.2, (count, 1)), a)
        c = np.where(kind[:, None] == 2, 0.0, c)
        # Creases: planes of slopes s1 (x < e) and s2 (x > e); the query at x = 0 is on the s2 side.
        edge = -rng.uniform(0.05, 0.5, (count, 1))
        s1, s2 = rng.uniform(-1.5, 1.5, (2, count, 1))
        crease = np.where(x < edge, s1 * (x - edge) + s2 * edge, s2 * x)
        bx, by = rng.uniform(-1, 1, (2, count, 1))
        size = rng.uniform(-0.08, 0.08, (count, 1))
        at_query = size * np.exp(-(bx**2 + by**2) / 0.1)
        bumps = size * np.exp(-((x - bx) ** 2 + (y - by) ** 2) / 0.1) - at_query
        smooth = a * x**2 + b * x * y + c * y**2 + bumps
        z = np.where(kind[:, None] == 1, crease + 0.2 * c * y**2, smooth)
        slope_x = np.where(kind == 1, s2[:, 0], (at_query * 2 * bx / 0.1)[:, 0])
        slope_y = np.where(kind == 1, 0.0, (at_query * 2 * by / 0.1)[:, 0])
        normal = np.stack([-slope_x, -slope_y, np.ones(count)], 1)
        normal /= np.linalg.norm(normal, axis=1, keepdims=True)
        cloud = np.stack([x, y, z], -1)
        cloud += rng.normal(0, 1, cloud.shape) * rng.choice([0.0, 0.01, 0.02, 0.04], count)[:, None, None]
        outlier = rng.random((count, self.points)) < 0.02
        cloud[outlier] = rng.uniform(-1, 1, (int(outlier.sum()), 3))
        q, r = np.linalg.qr(rng.normal(size=(count, 3, 3)))
        rotation = q * np.sign(np.diagonal(r, axis1=1, axis2=2))[:, None, :]
        return np.einsum("nij,npj->npi", rotation, cloud), np.einsum("nij,nj->ni", rotation, normal)

    @staticmethod
    def _rms_angle(predicted: torch.Tensor, normal: torch.Tensor) -> float:
        cosine = (F.normalize(predicted, dim=-1) * normal).sum(-1).abs().clamp(max=1.0)
        return math.degrees(torch.acos(cosine).pow(2).mean().sqrt().item())

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        cloud, normal = batch
        predicted = model(cloud).float()
        cosine = (predicted * normal).sum(-1) / (predicted.norm(dim=-1) + 1e-6)
        return (1 - cosine**2).mean()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        predicted = model(self.x_val).float()
        if not torch.isfinite(predicted).all():
            return {"val_rms_angle_deg": math.nan}
        return {
            "val_rms_angle_deg": self._rms_angle(predicted, self.y_val),
            "val_pca_rms_angle_deg": self.rms_pca,
        }

    def build_model(self) -> nn.Module:
        return _PointNormalNet(3, 64, 3)


class _PointNormalNet(nn.Module):
    def __init__(self, inputs: int, width: int, outputs: int) -> None:
        super().__init__()
        self.point = nn.Sequential(nn.Linear(inputs, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())
        self.head = _mlp(width, [width], outputs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.point(x).amax(-2))


class SoundSourceLocalisation(_Tabular):
    """Acoustic source localisation, the direction of arrival of a talker at a 4-microphone
    circular array (radius 4.6 cm, 16 kHz) in reverberant rooms, from the phase transform
    generalised cross-correlations (GCC-PHAT) of its 6 microphone pairs (as in learning-based
    DOA estimators): 32 ms frames of a voiced or unvoiced source (a harmonic comb of 90 to 250 Hz
    or noise, under 2 to 4 formants) arriving as a plane wave, plus 2 to 5 early reflections from
    random directions (delays 1 to 12 ms, gains 0.1 to 0.5), a weaker interfering pink-noise
    source elsewhere (10 to 25 dB down) and sensor noise (10 to 30 dB SNR). The GCC-PHAT of each pair is
    interpolated 4 times and kept within +-20 lags (246 features). An MLP 246-192-192-72 gives
    the azimuth's 5-degree sector, trained by cross-entropy (20,000 frames / 1,000). Metric the
    held-out mean absolute azimuth error in degrees, the sector's centre against the true angle
    (about 90 at the start; SRP-PHAT, the steered response power peak, is reported beside it).
    Defined as the fifty-second batch of fresh workloads, by a helper session."""

    metric = "val_azimuth_mae_deg"
    rate, frame, mics, radius, sectors, lags, upsample = 16000, 512, 4, 0.046, 72, 20, 4

    def __init__(self) -> None:
        rng = np.random.default_rng(1307)
        self.mic_angles = np.arange(self.mics) * 2 * np.pi / self.mics
        self.pairs = [(i, j) for i in range(self.mics) for j in range(i + 1, self.mics)]
        x_train, azimuth_train = self._frames(rng, 20000)
        x_val, azimuth_val = self._frames(rng, 1000)
        sector = np.floor(azimuth_train / (2 * np.pi) * self.sectors).astype(np.int64) % self.sectors
        super().__init__(
            x_train, sector, x_val, np.floor(azimuth_val / (2 * np.pi) * self.sectors).astype(np.int64)
        )
        self.azimuth_val = torch.tensor(azimuth_val, dtype=torch.float32)
        # SRP-PHAT: the summed GCC at each candidate azimuth's lags (linear interpolation).
        candidates = np.radians(np.arange(360.0))
        steered = np.zeros((len(x_val), len(candidates)))
        gcc = x_val.reshape(len(x_val), len(self.pairs), -1)
        for p, (i, j) in enumerate(self.pairs):
            lag = (
                (self._delays(candidates)[:, i] - self._delays(candidates)[:, j]) * self.rate * self.upsample
            )
            position = lag + self.lags
            low = np.clip(np.floor(position).astype(int), 0, 2 * self.lags - 1)
            frac = position - low
            steered += gcc[:, p, low] * (1 - frac) + gcc[:, p, low + 1] * frac
        self.mae_srp = self._mae(torch.tensor(candidates[steered.argmax(1)]), self.azimuth_val)

    def _delays(self, azimuth: np.ndarray) -> np.ndarray:
        """Arrival times (s) at each microphone of a far-field wave from ``azimuth``, relative to the centre."""
        return -self.radius / 343.0 * np.cos(azimuth[:, None] - self.mic_angles[None])

    def _frames(self, rng: np.random.Generator, count: int) -> tuple[np.ndarray, np.ndarray]:
        frequency = np.fft.rfftfreq(self.frame, 1 / self.rate)
        azimuth = rng.uniform(0, 2 * np.pi, count)
        features = []
        for start in range(0, count, 1000):
            n = min(1000, count - start)
            # Source spectrum: formant envelope over a harmonic comb (voiced) or noise.
            envelope = np.zeros((n, len(frequency)))
            for _ in range(3):
                centre = rng.uniform(300, 3500, (n, 1))
                envelope += rng.uniform(0.3, 1, (n, 1)) * np.exp(
                    -0.5 * ((frequency - centre) / rng.uniform(80, 300, (n, 1))) ** 2
                )
            pitch = rng.uniform(90, 250, (n, 1))
            comb = np.exp(-0.5 * (((frequency / pitch + 0.5) % 1 - 0.5) / 0.08) ** 2)
            voiced = rng.random((n, 1)) < 0.6
            source = (envelope + 0.02) * np.where(voiced, comb + 0.05, 1.0)
            source = (
                source * np.exp(1j * rng.uniform(0, 2 * np.pi, source.shape)) * rng.rayleigh(1, source.shape)
            )
            spectra = source[:, None] * np.exp(
                -2j * np.pi * frequency * self._delays(azimuth[start : start + n])[..., None]
            )
            for _ in range(int(rng.integers(2, 6))):
                direction = rng.uniform(0, 2 * np.pi, n)
                delay = rng.uniform(0.001, 0.012, n)[:, None, None] + self._delays(direction)[..., None]
                spectra += (
                    rng.uniform(0.1, 0.5, (n, 1, 1))
                    * source[:, None]
                    * np.exp(-2j * np.pi * frequency * delay)
                )
            other = rng.uniform(0, 2 * np.pi, n)
            noise = rng.normal(size=(n, len(frequency))) + 1j * rng.normal(size=(n, len(frequency)))
            noise = noise / np.sqrt(1 + frequency / 500)  # pinkish
            level = np.sqrt(
                (np.abs(source) ** 2).mean(1, keepdims=True) / (np.abs(noise) ** 2).mean(1, keepdims=True)
            )
            spectra += (
                (level * 10 ** (-rng.uniform(10, 25, (n, 1)) / 20))[:, None]
                * noise[:, None]
                * np.exp(-2j * np.pi * frequency * self._delays(other)[..., None])
            )
            snr = 10 ** (-rng.uniform(10, 30, (n, 1, 1)) / 20)
            sensor = (rng.normal(size=spectra.shape) + 1j * rng.normal(size=spectra.shape)) / np.sqrt(2)
            spectra += snr * level[:, None] * sensor
            # GCC-PHAT per pair, 4 times interpolated, +-20 lags.
            pairs = []
            for i, j in self.pairs:
                cross = spectra[:, i] * np.conj(spectra[:, j])
                gcc = np.fft.irfft(cross / (np.abs(cross) + 1e-12), self.frame * self.upsample)
                pairs.append(np.concatenate([gcc[:, -self.lags :], gcc[:, : self.lags + 1]], 1))
            features.append(np.stack(pairs, 1).reshape(n, -1) * self.upsample)
        return np.concatenate(features).astype(np.float32), azimuth

    @staticmethod
    def _mae(predicted: torch.Tensor, azimuth: torch.Tensor) -> float:
        error = (predicted - azimuth).abs() % (2 * math.pi)
        return math.degrees(torch.minimum(error, 2 * math.pi - error).mean().item())

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float()
        if not torch.isfinite(logits).all():
            return {"val_azimuth_mae_deg": math.nan}
        centre = (logits.argmax(1).float() + 0.5) * 2 * math.pi / self.sectors
        return {
            "val_azimuth_mae_deg": self._mae(centre, self.azimuth_val),
            "val_sector_accuracy": (logits.argmax(1) == self.y_val).float().mean().item(),
            "val_srp_phat_mae_deg": self.mae_srp,
        }

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        features, sector = batch
        return F.cross_entropy(model(features).float(), sector)

    def build_model(self) -> nn.Module:
        return _mlp(len(self.pairs) * (2 * self.lags + 1), [192, 192], self.sectors)


class BlindImageQuality(_Tabular):
    """No-reference (blind) image quality assessment (as on LIVE or TID2013): predicting the mean
    opinion score of a distorted image without its reference. References are 24 x 24 grey
    images of 1/f noise textures of random spectral slope under smooth shading, with 2 to 5
    rectangles and discs of random grey; each is distorted by one of Gaussian blur, white noise,
    8 x 8 block-DCT quantisation (JPEG-like), contrast loss or grey-level banding at a random
    strength, or left pristine. Its opinion score (0 to 100) comes from a simulated observer:
    the SSIM to the reference, put through a distortion-specific power (blockiness and banding
    annoy more, contrast less), averaged with rater noise of sd 4. Train on 600 references x 16
    versions, validate on 100 other references x 8. A CNN on the centred image and its MSCN
    coefficients (3 x 3 convolutions of 8 and 16 channels with a pooling between, mean and
    standard deviation pooled, a layer of 32) gives the score,
    trained by squared error on scores scaled by 1/100. Metric the held-out Spearman rank
    correlation (SROCC) with the opinion scores, as IQA methods are compared (around 0 at the
    start; the image's mean gradient magnitude, a sharpness statistic, is reported beside it).
    Defined as the fifty-second batch of fresh workloads, by a helper session."""

    metric = "val_srocc"
    size = 24

    def __init__(self) -> None:
        rng = np.random.default_rng(1319)
        x_train, y_train = self._rated(rng, 600, 16)
        x_val, y_val = self._rated(rng, 100, 8)
        super().__init__(self._channels(x_train), y_train / 100, self._channels(x_val), y_val / 100)
        gradient = np.abs(np.diff(x_val, axis=1)).mean((1, 2)) + np.abs(np.diff(x_val, axis=2)).mean((1, 2))
        self.srocc_sharpness = self._srocc(torch.tensor(gradient), self.y_val)

    def _references(self, rng: np.random.Generator, count: int) -> np.ndarray:
        k = np.fft.fftfreq(self.size)
        radius = np.sqrt(k[:, None] ** 2 + k[None] ** 2) + 1 / self.size
        slope = rng.uniform(1.0, 2.2, (count, 1, 1))
        phase = np.exp(2j * np.pi * rng.random((count, self.size, self.size)))
        texture = np.fft.ifft2(phase * radius[None] ** -slope).real
        texture = texture / texture.std((1, 2), keepdims=True) * rng.uniform(0.03, 0.15, (count, 1, 1))
        yy, xx = np.mgrid[0 : self.size, 0 : self.size] / self.size
        tilt_x, tilt_y = rng.uniform(-0.3, 0.3, (2, count, 1, 1))
        image = rng.uniform(0.3, 0.7, (count, 1, 1)) + tilt_x * (xx - 0.5) + tilt_y * (yy - 0.5) + texture
        for _ in range(int(rng.integers(2, 6))):
            cx, cy, w, h = (
                rng.uniform(0, 1, (4, count, 1, 1)) * np.array([1, 1, 0.4, 0.4])[:, None, None, None]
            )
            grey = rng.uniform(0.05, 0.95, (count, 1, 1))
            disc = rng.random((count, 1, 1)) < 0.5
            inside = np.where(
                disc,
                (xx - cx) ** 2 + (yy - cy) ** 2 < (w + 0.05) ** 2,
                (np.abs(xx - cx) < w + 0.03) & (np.abs(yy - cy) < h + 0.03),
            )
            image = np.where(inside, grey + 0.5 * texture, image)
        return np.clip(image, 0, 1)

    def _distort(self, rng: np.random.Generator, image: np.ndarray, kind: int, strength: float) -> np.ndarray:
        from scipy.fft import dctn, idctn
        from scipy.ndimage import gaussian_filter

        if kind == 0:
            return gaussian_filter(image, 0.4 + 1.6 * strength, mode="reflect")
        if kind == 1:
            return np.clip(image + rng.normal(0, 0.01 + 0.12 * strength, image.shape), 0, 1)
        if kind == 2:
            blocks = image.reshape(3, 8, 3, 8).transpose(0, 2, 1, 3)
            step = (0.02 + 0.3 * strength) * (1 + np.add.outer(np.arange(8), np.arange(8)) / 3)
            coefficients = np.round(dctn(blocks, axes=(2, 3), norm="ortho") / step) * step
            return np.clip(
                idctn(coefficients, axes=(2, 3), norm="ortho").transpose(0, 2, 1, 3).reshape(24, 24), 0, 1
            )
        if kind == 3:
            return image.mean() + (image - image.mean()) * (1 - 0.7 * strength)
        if kind == 4:
            levels = int(round(24 - 21 * strength))
            return np.round(image * levels) / levels
        return image

    @staticmethod
    def _channels(images: np.ndarray) -> np.ndarray:
        """The centred image and its mean-subtracted contrast-normalised (MSCN) coefficients."""
        from scipy.ndimage import gaussian_filter

        mean = gaussian_filter(images, (0, 7 / 6, 7 / 6))
        deviation = np.sqrt(np.abs(gaussian_filter(images**2, (0, 7 / 6, 7 / 6)) - mean**2))
        return np.stack([4 * (images - 0.5), (images - mean) / (deviation + 0.01)], 1).astype(np.float32)

    @staticmethod
    def _ssim(a: np.ndarray, b: np.ndarray) -> float:
        from scipy.ndimage import gaussian_filter

        mu_a, mu_b = gaussian_filter(a, 1.5), gaussian_filter(b, 1.5)
        var_a = gaussian_filter(a * a, 1.5) - mu_a**2
        var_b = gaussian_filter(b * b, 1.5) - mu_b**2
        cov = gaussian_filter(a * b, 1.5) - mu_a * mu_b
        c1, c2 = 0.01**2, 0.03**2
        return float(
            (
                ((2 * mu_a * mu_b + c1) * (2 * cov + c2)) / ((mu_a**2 + mu_b**2 + c1) * (var_a + var_b + c2))
            ).mean()
        )

    def _rated(
        self, rng: np.random.Generator, references: int, versions: int
    ) -> tuple[np.ndarray, np.ndarray]:
        power = (2.0, 1.5, 3.0, 1.0, 3.0, 1.0)  # blur, noise, blocks, contrast, banding, pristine
        images, scores = [], []
        for reference in self._references(rng, references):
            for _ in range(versions):
                kind = int(rng.integers(0, 6))
                strength = float(rng.random())
                distorted = self._distort(rng, reference, kind, strength)
                quality = max(self._ssim(reference, distorted), 0.0) ** power[kind]
                images.append(distorted)
                scores.append(np.clip(100 * quality + rng.normal(0, 4), 0, 100))
        return np.array(images, np.float32), np.array(scores, np.float32)

    @staticmethod
    def _srocc(predicted: torch.Tensor, score: torch.Tensor) -> float:
        """Spearman's rank correlation, ties given their mean rank (0 for a constant prediction)."""
        from scipy.stats import rankdata

        a = rankdata(predicted.double().numpy())
        b = rankdata(score.double().numpy())
        a, b = a - a.mean(), b - b.mean()
        return float((a * b).sum() / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-12))

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        image, score = batch
        return F.mse_loss(model(image).float(), score)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        predicted = model(self.x_val).float()
        if not torch.isfinite(predicted).all():
            return {"val_srocc": math.nan}
        return {
            "val_srocc": self._srocc(predicted, self.y_val),
            "val_rmse": 100 * (predicted - self.y_val).pow(2).mean().sqrt().item(),
            "val_sharpness_srocc": self.srocc_sharpness,
        }

    def build_model(self) -> nn.Module:
        return _QualityCNN()


class _QualityCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.convs = nn.Sequential(
            nn.Conv2d(2, 8, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1),
            nn.ReLU(),
        )
        self.head = _mlp(32, [32], 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.convs(x).flatten(2)
        return self.head(torch.cat([h.mean(-1), h.std(-1)], 1)).squeeze(-1)


class MolecularLipophilicity(_Tabular):
    """Molecular property prediction from the molecular graph (as on the Lipophilicity benchmark
    of MoleculeNet): simulated molecules of 6 to 22 heavy atoms (C, N, O, F, Cl, S with their
    valences), grown as random trees with double bonds and 0 to 2 ring closures into 5- and
    6-membered rings, and a simulated octanol-water logP: Crippen-like contributions of each atom
    by element, attached hydrogens, ring membership and polar neighbours, plus non-additive terms
    (a proximity correction for polar atoms two or three bonds apart, a size penalty) and
    experimental noise of sd 0.2 (12,000 molecules / 1,000). A message-passing network (atom
    features element, hydrogens and ring flag into 48, three residual layers with a weight per
    bond order, sum readout, an MLP 48-48-1) gives logP, trained by squared error. Metric the
    held-out RMSE in log units, as MoleculeNet reports (about 2 to 6 at the start; 2.3 for the
    mean and 0.9 for a linear fit on element counts, both reported beside it). Defined as the fifty-second
    batch of fresh workloads, by a helper session."""

    metric = "val_rmse"
    atoms, elements = 22, ("C", "N", "O", "F", "Cl", "S")
    valence = (4, 3, 2, 1, 1, 2)
    share = (0.7, 0.12, 0.12, 0.02, 0.02, 0.02)

    def __init__(self) -> None:
        rng = np.random.default_rng(1321)
        train = self._molecules(rng, 12000)
        val = self._molecules(rng, 1000)
        super().__init__(train[0], train[2], val[0], val[2])
        self.bonds_train = torch.tensor(train[1])
        self.bonds_val = torch.tensor(val[1])
        counts_train, counts_val = train[0][:, :, :6].sum(1), val[0][:, :, :6].sum(1)
        design = np.concatenate([counts_train, np.ones((len(counts_train), 1))], 1)
        weights = np.linalg.lstsq(design, train[2], rcond=None)[0]
        fitted = np.concatenate([counts_val, np.ones((len(counts_val), 1))], 1) @ weights
        self.rmse_counts = float(np.sqrt(((fitted - val[2]) ** 2).mean()))
        self.rmse_mean = float(np.sqrt(((train[2].mean() - val[2]) ** 2).mean()))

    def _molecules(self, rng: np.random.Generator, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        features = np.zeros((count, self.atoms, 11), np.float32)
        bonds = np.zeros((count, 2, self.atoms, self.atoms), np.float32)
        logp = np.zeros(count, np.float32)
        valence = np.array(self.valence)
        for m in range(count):
            size = int(rng.integers(6, self.atoms + 1))
            element = rng.choice(6, size, p=self.share)
            element[0] = 0
            order = np.zeros((size, size), np.int64)
            parent = np.full(size, -1)
            free = valence[element].copy()
            for a in range(1, size):
                if free[a] < 1:
                    element[a] = 0
                    free[a] = 4
                hosts = np.nonzero(free[:a] > 0)[0]
                if len(hosts) == 0:
                    size = a
                    break
                b = int(rng.choice(hosts))
                double = free[a] >= 2 and free[b] >= 2 and rng.random() < 0.15
                order[a, b] = order[b, a] = 2 if double else 1
                free[a] -= order[a, b]
                free[b] -= order[a, b]
                parent[a] = b
            element, order, free = element[:size], order[:size, :size], free[:size]
            ring = np.zeros(size, bool)
            # Ring closures between atoms 4 or 5 bonds apart along the tree (5- and 6-membered rings).
            reach = [np.eye(size, dtype=bool)]
            step = order > 0
            for _ in range(5):
                reach.append((reach[-1].astype(int) @ step.astype(int)) > 0)
            distance = np.full((size, size), 9)
            for d in range(5, -1, -1):
                distance[reach[d]] = d
            for _ in range(int(rng.integers(0, 3))):
                u, v = np.nonzero(
                    ((distance == 4) | (distance == 5)) & (free[:, None] > 0) & (free[None] > 0)
                )
                if len(u) == 0:
                    break
                k = int(rng.integers(len(u)))
                a, b = int(u[k]), int(v[k])
                order[a, b] = order[b, a] = 1
                free[a] -= 1
                free[b] -= 1
                path_a, path_b = [a], [b]
                while path_a[-1] != -1:
                    path_a.append(int(parent[path_a[-1]]))
                while path_b[-1] != -1:
                    path_b.append(int(parent[path_b[-1]]))
                shared = set(path_a) & set(path_b)
                ring[
                    [
                        x
                        for x in path_a + path_b
                        if x != -1 and (x not in shared or x in (path_a[0], path_b[0]))
                    ]
                ] = True
                top = [x for x in path_a if x in shared and x != -1]
                if top:
                    ring[top[0]] = True
            hydrogens = np.clip(free, 0, 3)
            polar = np.isin(element, (1, 2))
            polar_neighbours = (order > 0) @ polar
            contribution = np.select(
                [element == 0, element == 1, element == 2, element == 3, element == 4],
                [
                    0.2 + 0.15 * hydrogens - 0.3 * polar_neighbours + 0.15 * ring,
                    -0.8 - 0.35 * hydrogens + 0.3 * ring,
                    -0.5 - 0.6 * hydrogens + 0.25 * ((order == 2).any(1)),
                    np.full(size, 0.4),
                    np.full(size, 0.75),
                ],
                0.5 - 0.4 * hydrogens,
            )
            near = ((distance == 2) | (distance == 3))[:size, :size] & polar[:, None] & polar[None]
            logp[m] = contribution.sum() + 0.2 * near.sum() / 2 - 0.004 * size**2 + rng.normal(0, 0.2)
            features[m, :size, :6] = np.eye(6)[element]
            features[m, :size, 6:10] = np.eye(4)[hydrogens]
            features[m, :size, 10] = ring
            bonds[m, 0, :size, :size] = order == 1
            bonds[m, 1, :size, :size] = order == 2
        return features, bonds, logp

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        while True:
            index = torch.randint(0, len(self.x_train), (micro_batch_size,), generator=generator)
            yield (self.x_train[index], self.bonds_train[index]), self.y_train[index]

    def loss(self, model: nn.Module, batch: Any) -> torch.Tensor:
        (atoms, bonds), logp = batch
        return F.mse_loss(model(atoms, bonds).float(), logp)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        predicted = model(self.x_val, self.bonds_val).float()
        if not torch.isfinite(predicted).all():
            return {"val_rmse": math.nan}
        return {
            "val_rmse": (predicted - self.y_val).pow(2).mean().sqrt().item(),
            "val_mae": (predicted - self.y_val).abs().mean().item(),
            "val_counts_rmse": self.rmse_counts,
            "val_mean_rmse": self.rmse_mean,
        }

    def build_model(self) -> nn.Module:
        return _BondMessagePassing(11, 48, 2, 3)


class _BondMessagePassing(nn.Module):
    def __init__(self, inputs: int, width: int, bond_types: int, layers: int) -> None:
        super().__init__()
        self.enter = nn.Linear(inputs, width)
        self.self_loops = nn.ModuleList(nn.Linear(width, width) for _ in range(layers))
        self.messages = nn.ModuleList(nn.Linear(width, bond_types * width, bias=False) for _ in range(layers))
        self.readout = _mlp(width, [width], 1)

    def forward(self, atoms: torch.Tensor, bonds: torch.Tensor) -> torch.Tensor:
        present = atoms[..., :6].sum(-1, keepdim=True)
        h = F.relu(self.enter(atoms)) * present
        for own, message in zip(self.self_loops, self.messages, strict=True):
            sent = (
                message(h).unflatten(-1, (bonds.shape[1], -1)).transpose(1, 2)
            )  # (batch, bond, atom, width)
            h = h + F.relu(own(h) + (bonds @ sent).sum(1)) * present
        return self.readout(h.sum(1)).squeeze(-1)


class EnergyDisaggregation(_Tabular):
    """Non-intrusive load monitoring (energy disaggregation, as on UK-DALE or REFIT): recovering
    five appliances' power from a household's aggregate smart-meter reading, by a sequence-to-
    point network (Zhang et al. 2018). Ten simulated households at one reading a minute for 14
    days: a fridge (compressor cycles of 70 to 130 W with a start-up spike), a kettle (1.8 to
    3 kW for 2 to 5 minutes, a few times a day around meals), a microwave (0.8 to 1.5 kW, part
    duty-cycled), a washing machine (heating at 2 kW, then tumbling of 150 to 300 W and spins)
    and a dishwasher (two heating phases at 2 kW between washing and drying), over a base load,
    evening lighting and television, and an oven that cycles 2 kW on its thermostat, a confounder
    of the heaters; each house with its own appliance powers, habits and noise. Eight houses to
    train on, two held out (every tenth minute). A 1-D CNN (convolutions of 16, 16 and 32
    channels with kernels 7 and 5, two strides of 2, a layer of 64) reads 63 minutes of the
    aggregate (standardised) and gives the five appliances' power at the middle minute, trained
    by squared error in units of each appliance's standard deviation. Metric the held-out F1 of the appliances' on and off states (on above 50,
    1,000, 200, 20 and 10 W), averaged over the five (near 0 at the start and for predicting
    every appliance off; the estimated accuracy 1 - sum |error| / (2 sum power), 0.5 for all
    off, is reported beside it). Defined as the fifty-second batch of fresh workloads, by a helper
    session."""

    metric = "val_on_off_f1"
    houses, days, window, appliances = 10, 14, 63, 5
    on_threshold = (0.05, 1.0, 0.2, 0.02, 0.01)  # kW, as NILM toolkits set them per appliance

    def __init__(self) -> None:
        rng = np.random.default_rng(1327)
        minutes = 1440 * self.days
        aggregate, parts = [], []
        t = np.arange(minutes)
        hour = (t % 1440) / 60

        def uses(per_day: float, peaks: tuple[float, ...]) -> np.ndarray:
            """Start minutes of an appliance's uses: a Poisson number a day around the meal peaks."""
            starts = []
            for day in range(self.days):
                for _ in range(rng.poisson(per_day)):
                    centre = peaks[int(rng.integers(len(peaks)))] + rng.normal(0, 1.2)
                    starts.append(int(np.clip(day * 1440 + 60 * centre, 0, minutes - 200)))
            return np.array(starts, int)

        for _ in range(self.houses):
            power = np.zeros((self.appliances, minutes))
            # Fridge: compressor cycles with a start-up spike.
            on, off, level = rng.uniform(12, 25), rng.uniform(25, 50), rng.uniform(70, 130)
            phase = (t + rng.uniform(0, on + off)) % (on + off)
            power[0] = np.where(phase < on, level, 0.0) * rng.uniform(0.95, 1.05, minutes)
            power[0] += np.where((phase >= 0) & (phase < 1), 2 * level, 0.0)
            # Kettle.
            kettle = rng.uniform(1800, 3000)
            for start in uses(rng.uniform(2, 6), (7.5, 12.5, 16, 19)):
                power[1, start : start + int(rng.integers(2, 6))] = kettle
            # Microwave: full power or defrost duty cycling (half power on average).
            microwave = rng.uniform(800, 1500)
            for start in uses(rng.uniform(0.5, 2), (12.5, 18.5)):
                duty = 1.0 if rng.random() < 0.7 else 0.5
                power[2, start : start + int(rng.integers(1, 7))] = microwave * duty
            # Washing machine: heating, tumbling, spins.
            for start in uses(rng.uniform(0.2, 0.7), (9, 14, 19)):
                heat = int(rng.integers(10, 20))
                power[3, start : start + heat] = 2000
                tumble = np.arange(start + heat, start + heat + 40)
                power[3, tumble] = rng.uniform(150, 300) * (1 + 0.3 * np.sin(tumble))
                power[3, start + heat + 40 : start + heat + 50] = rng.uniform(400, 600)
            # Dishwasher: wash, heat, wash, heat, dry.
            for start in uses(rng.uniform(0.3, 0.8), (20, 21.5)):
                stages = ((8, 80), (15, 2000), (25, 80), (10, 2000), (20, 10))
                at = start
                for length, watts in stages:
                    power[4, at : at + length] = watts
                    at += length
            # The rest: base load, evening lights and TV, an oven cycling on its thermostat.
            base = rng.uniform(60, 200) + np.cumsum(rng.normal(0, 2, minutes)).clip(-50, 50)
            evening = ((hour > 17) & (hour < 23)) * rng.uniform(100, 300) * (rng.random(minutes) < 0.9)
            oven = np.zeros(minutes)
            for start in uses(rng.uniform(0.2, 0.6), (18,)):
                length = int(rng.integers(30, 60))
                oven[start : start + length] = 2000 * (
                    (np.arange(length) % 6) < 3 + (np.arange(length) < 10) * 3
                )
            total = power.sum(0) + base + evening + oven + rng.normal(0, 8, minutes)
            aggregate.append(total)
            parts.append(power)
        self.aggregate = torch.tensor(np.array(aggregate) / 1000, dtype=torch.float32)
        self.power = torch.tensor(np.array(parts) / 1000, dtype=torch.float32)
        half = self.window // 2
        centres = torch.arange(half, minutes - half)
        train = torch.cartesian_prod(torch.arange(self.houses - 2), centres)
        self.train_points = train
        # Inputs and targets standardised on the training houses (seq2point's normalisation).
        self.level = (
            self.aggregate[: self.houses - 2].mean().item(),
            self.aggregate[: self.houses - 2].std().item(),
        )
        self.scale = self.power[: self.houses - 2].transpose(0, 1).flatten(1).std(1)
        val = torch.cartesian_prod(torch.arange(self.houses - 2, self.houses), centres[::10])
        self.x_val, self.y_val = self._windows(val)

    def _windows(self, points: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        house, centre = points[:, 0:1], points[:, 1:2]
        offsets = torch.arange(-(self.window // 2), self.window // 2 + 1)
        x = (self.aggregate[house, centre + offsets] - self.level[0]) / self.level[1]
        return x[:, None], self.power[house[:, 0], :, centre[:, 0]]

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        while True:
            index = torch.randint(0, len(self.train_points), (micro_batch_size,), generator=generator)
            yield self._windows(self.train_points[index])

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        aggregate, power = batch
        return F.mse_loss(model(aggregate).float(), power / self.scale)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        predicted = model(self.x_val).float() * self.scale
        if not torch.isfinite(predicted).all():
            return {"val_on_off_f1": math.nan}
        error = (predicted - self.y_val).abs()
        f1 = []
        for a, threshold in enumerate(self.on_threshold):
            on, said = self.y_val[:, a] > threshold, predicted[:, a] > threshold
            f1.append(2 * (on & said).sum().item() / max(on.sum().item() + said.sum().item(), 1))
        return {
            "val_on_off_f1": float(np.mean(f1)),
            "val_estimated_accuracy": 1 - error.sum().item() / (2 * self.y_val.sum().item()),
            "val_mae_w": 1000 * error.mean().item(),
        }

    def build_model(self) -> nn.Module:
        return nn.Sequential(
            nn.Conv1d(1, 16, 7, padding=3),
            nn.ReLU(),
            nn.Conv1d(16, 16, 5, padding=2, stride=2),
            nn.ReLU(),
            nn.Conv1d(16, 32, 5, padding=2, stride=2),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(32 * 16, 64),
            nn.ReLU(),
            nn.Linear(64, self.appliances),
        )


class NeuralVelocityDecoding(_Tabular):
    """Brain-computer interface decoding (as in intracortical BCIs with Utah arrays): the 2-D hand
    velocity of a simulated monkey reaching, decoded from the spike counts of 48 motor-cortex
    neurons in 50 ms bins. The velocity is twice-smoothed noise (standardised); each neuron fires
    Poisson counts at a log rate of its baseline (2 to 15 Hz), its cosine tuning to the velocity
    (preferred direction, depth 0.2 to 0.8) and a speed term, leading the movement by 0 to 3 bins,
    with baselines drifting slowly over the session. The counts of the last 5 bins (square-root
    transformed, 240 features) go into an MLP 240-96-96-2 giving the velocity, trained by squared
    error; train on the first 14,000 bins, validate on the last 2,000. Metric the held-out R^2 of
    the velocity, averaged over its two components (below 0 at the start; a ridge regression on
    the same features, the Wiener filter of BCI work, is reported beside it). Defined as the
    fifty-third batch of fresh workloads, by a helper session."""

    metric = "val_r2"
    neurons, history, bins, split = 48, 5, 16000, 14000

    def __init__(self) -> None:
        rng = np.random.default_rng(1331)
        drive = rng.normal(size=(self.bins + 8, 2))
        velocity = np.zeros_like(drive)
        smooth = np.zeros_like(drive)
        for t in range(1, len(drive)):
            smooth[t] = 0.85 * smooth[t - 1] + drive[t]
            velocity[t] = 0.85 * velocity[t - 1] + smooth[t]
        velocity = (velocity - velocity.mean(0)) / velocity.std(0)
        preferred = rng.uniform(0, 2 * np.pi, self.neurons)
        direction = np.stack([np.cos(preferred), np.sin(preferred)], 1)
        depth = rng.uniform(0.2, 0.8, self.neurons)
        speed_gain = rng.uniform(-0.3, 0.3, self.neurons)
        baseline = np.log(rng.uniform(2, 15, self.neurons) * 0.05)
        drift = np.cumsum(rng.normal(0, 0.004, (self.bins, self.neurons)), 0)
        lead = rng.integers(0, 4, self.neurons)
        t = np.arange(self.bins)[:, None]
        ahead = velocity[t + lead[None]]  # (bins, neurons, 2): the velocity each neuron encodes
        log_rate = (
            baseline
            + drift
            + depth * (ahead * direction).sum(-1)
            + speed_gain * np.linalg.norm(ahead, axis=-1)
        )
        counts = np.sqrt(rng.poisson(np.exp(np.clip(log_rate, -6, 3))))
        windows = np.stack([counts[h : self.bins - self.history + 1 + h] for h in range(self.history)], 1)
        x = windows.reshape(len(windows), -1).astype(np.float32)
        y = velocity[self.history - 1 : self.bins].astype(np.float32)
        cut = self.split - self.history + 1
        mean, std = x[:cut].mean(0), x[:cut].std(0) + 1e-3
        x = (x - mean) / std
        super().__init__(x[:cut], y[:cut], x[cut:], y[cut:])
        design = np.concatenate([x[:cut], np.ones((cut, 1))], 1)
        weights = np.linalg.solve(design.T @ design + 10 * np.eye(design.shape[1]), design.T @ y[:cut])
        fitted = np.concatenate([x[cut:], np.ones((len(x) - cut, 1))], 1) @ weights
        self.r2_ridge = self._r2(torch.tensor(fitted, dtype=torch.float32), self.y_val)

    @staticmethod
    def _r2(predicted: torch.Tensor, target: torch.Tensor) -> float:
        residual = (predicted - target).pow(2).sum(0)
        total = (target - target.mean(0)).pow(2).sum(0)
        return (1 - residual / total).mean().item()

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        counts, velocity = batch
        return F.mse_loss(model(counts).float(), velocity)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        predicted = model(self.x_val).float()
        if not torch.isfinite(predicted).all():
            return {"val_r2": math.nan}
        return {
            "val_r2": self._r2(predicted, self.y_val),
            "val_mse": (predicted - self.y_val).pow(2).mean().item(),
            "val_ridge_r2": self.r2_ridge,
        }

    def build_model(self) -> nn.Module:
        return _mlp(self.neurons * self.history, [96, 96], 2)


class MonocularDepth(_Tabular):
    """Monocular depth estimation (as on NYU Depth or KITTI): the depth of every pixel of a single
    12 x 12 grey image of a simulated scene, a textured floor from a camera 1 to 2 m up (the
    horizon on row 2 to 6), a back wall 8 to 30 m away, and up to three boxes standing on the
    floor (their size in the image shrinking with distance), each surface with its own albedo and
    texture, under fog of random density and sensor noise (8,000 / 1,000 images). A coarse
    global network (as Eigen et al. 2014's coarse scale) on the image and its row coordinate (3 x
    3 convolutions of 16 and 32 channels with strides of 2, a layer of 128, a linear layer to
    every pixel) gives the log depth map, trained by L1 error in log depth.
    Metric the held-out absolute relative error |d - d*| / d* averaged over pixels, as depth
    benchmarks rank methods (about 0.5 to 1 at the start; the per-pixel mean log depth of the
    training scenes, a prior that ignores the image, is reported beside it, and the share of
    pixels within 1.25 times the truth). Defined as the fifty-third batch of fresh workloads, by
    a helper session."""

    metric = "val_abs_rel"
    size, focal = 12, 12.0

    def __init__(self) -> None:
        rng = np.random.default_rng(1333)
        x_train, y_train = self._scenes(rng, 8000)
        x_val, y_val = self._scenes(rng, 1000)
        super().__init__(x_train, np.log(y_train), x_val, np.log(y_val))
        prior = self.y_train.mean(0, keepdim=True)
        self.abs_rel_prior = self._abs_rel(prior.expand_as(self.y_val), self.y_val)

    def _scenes(self, rng: np.random.Generator, count: int) -> tuple[np.ndarray, np.ndarray]:
        s = self.size
        yy, xx = np.mgrid[0:s, 0:s] + 0.5
        horizon = rng.uniform(2, 6, (count, 1, 1))
        height = rng.uniform(1.0, 2.0, (count, 1, 1))
        wall = rng.uniform(8, 30, (count, 1, 1))
        floor = height * self.focal / np.maximum(yy[None] - horizon, 1e-3)
        floor = np.where(yy[None] > horizon, floor, np.inf)
        depth = np.minimum(floor, wall)
        # Surfaces: a checkered floor in world coordinates, a wall of stripes.
        world_x = (xx[None] - s / 2) * depth / self.focal
        tile = rng.uniform(0.3, 1.0, (count, 1, 1))
        checker = np.sign(np.sin(np.pi * world_x / tile) * np.sin(np.pi * depth / tile))
        floor_tone = rng.uniform(0.3, 0.7, (count, 1, 1)) + rng.uniform(0.05, 0.2, (count, 1, 1)) * checker
        wall_tone = rng.uniform(0.3, 0.8, (count, 1, 1)) + 0.08 * np.sin(
            rng.uniform(0.5, 2.0, (count, 1, 1)) * xx[None] + rng.uniform(0, 6, (count, 1, 1))
        )
        image = np.where(floor < wall, floor_tone, wall_tone)
        for _ in range(3):
            present = rng.random((count, 1, 1)) < 0.6
            bottom = horizon + rng.uniform(0.5, 1, (count, 1, 1)) * (s - horizon)
            distance = height * self.focal / (bottom - horizon)
            width = rng.uniform(0.4, 1.2, (count, 1, 1)) * self.focal / distance
            tall = rng.uniform(0.4, 1.5, (count, 1, 1)) * self.focal / distance
            centre = rng.uniform(0, s, (count, 1, 1))
            inside = (
                (np.abs(xx[None] - centre) < width / 2) & (yy[None] < bottom) & (yy[None] > bottom - tall)
            )
            mask = present & inside & (distance < depth)
            shade = rng.uniform(0.1, 0.9, (count, 1, 1)) + 0.1 * (yy[None] - bottom) / tall
            depth = np.where(mask, distance, depth)
            image = np.where(mask, shade, image)
        fog = rng.uniform(10, 40, (count, 1, 1))
        haze = np.exp(-depth / fog)
        image = image * haze + rng.uniform(0.6, 0.9, (count, 1, 1)) * (1 - haze)
        image = image + rng.normal(0, 0.02, image.shape)
        row = np.broadcast_to((yy / s - 0.5)[None], image.shape)
        return np.stack([image - 0.5, row], 1).astype(np.float32), depth[:, None].astype(np.float32)

    @staticmethod
    def _abs_rel(log_predicted: torch.Tensor, log_depth: torch.Tensor) -> float:
        return ((log_predicted.exp() - log_depth.exp()).abs() / log_depth.exp()).mean().item()

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        image, log_depth = batch
        return F.l1_loss(model(image).float(), log_depth)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        predicted = model(self.x_val).float().clamp(-5, 5)
        if not torch.isfinite(predicted).all():
            return {"val_abs_rel": math.nan}
        return {
            "val_abs_rel": self._abs_rel(predicted, self.y_val),
            "val_delta1": ((predicted - self.y_val).abs() < math.log(1.25)).float().mean().item(),
            "val_prior_abs_rel": self.abs_rel_prior,
        }

    def build_model(self) -> nn.Module:
        return nn.Sequential(
            nn.Conv2d(2, 16, 3, stride=2, padding=1),
            nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(32 * (self.size // 4) ** 2, 128),
            nn.ReLU(),
            nn.Linear(128, self.size**2),
            nn.Unflatten(1, (1, self.size, self.size)),
        )


class RetinopathyGrading(_Tabular):
    """Medical imaging, diabetic retinopathy grading of retinal fundus photographs (as in the
    Kaggle/EyePACS challenge): five grades (none, mild, moderate, severe, proliferative; shares
    45/15/20/10/10%) of simulated 16 x 16 grey fundus images, a vignetted disc with an optic disc
    and vessels of random layout, exposure and contrast, and lesions by grade: microaneurysms
    (tiny dark dots) from mild on, haemorrhages (larger dark blots) and hard exudates (bright
    spots) from moderate on, many of them when severe, and new-vessel tufts near the optic disc
    when proliferative; one label in ten is off by a grade, as graders disagree (8,000 / 800).
    Each image enters less its median inside the disc, in tenths (the outside zero). A CNN
    (3 x 3 convolutions of 8, 16 and 16 channels, the first two batch-normalised, a stride of 2
    and a pooling, mean and max pooled, a linear layer) gives the grade's logits, trained by
    cross-entropy; the argmax is the grade. Metric the held-out quadratic weighted kappa with
    the labels, the challenge's metric (about 0 at the start; thresholds on the share of dark
    pixels, matched to the grade shares, are reported beside it). Defined as the fifty-third
    batch of fresh workloads, by a helper session."""

    metric = "val_qwk"
    size, grades, lesions = 16, 5, 24

    def __init__(self) -> None:
        rng = np.random.default_rng(1337)
        x_train, y_train, dark_train = self._fundus(rng, 8000)
        x_val, y_val, dark_val = self._fundus(rng, 800)
        super().__init__(x_train, y_train, x_val, y_val)
        cuts = np.quantile(
            dark_train, np.cumsum(np.bincount(y_train, minlength=self.grades))[:-1] / len(y_train)
        )
        self.qwk_dark = self._qwk(torch.tensor(np.searchsorted(cuts, dark_val)), self.y_val)

    def _fundus(self, rng: np.random.Generator, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        grade = rng.choice(self.grades, count, p=[0.45, 0.15, 0.2, 0.1, 0.1])
        yy, xx = (np.mgrid[0 : self.size, 0 : self.size] + 0.5) / self.size * 2 - 1
        r2 = xx**2 + yy**2
        disc_side = rng.choice([-1.0, 1.0], (count, 1, 1))
        ox, oy = disc_side * rng.uniform(0.3, 0.5, (count, 1, 1)), rng.uniform(-0.2, 0.2, (count, 1, 1))
        image = rng.uniform(0.4, 0.6, (count, 1, 1)) * (1 - 0.3 * r2[None])
        image = image + 0.35 * np.exp(-((xx - ox) ** 2 + (yy - oy) ** 2) / 0.02)
        for _ in range(3):  # vessels leaving the optic disc
            slope, bend = rng.uniform(-1.2, 1.2, (2, count, 1, 1))
            path = oy + slope * (xx - ox) + 0.3 * bend * (xx - ox) ** 2
            image = image - 0.12 * np.exp(-((yy - path) ** 2) / 0.004)
        # Lesions per grade: microaneurysms, haemorrhages, exudates, new vessels (Poisson counts).
        extra = np.array([[0.3, 0, 0, 0], [1.5, 0, 0, 0], [3, 1, 1.5, 0], [3, 3, 2, 0], [3, 3, 2, 3]])
        least = np.array([[0, 0, 0, 0], [1, 0, 0, 0], [3, 1, 0, 0], [4, 4, 1, 0], [4, 3, 1, 4]])
        number = least[grade] + rng.poisson(extra[grade])
        kind = np.full((count, self.lesions), -1)
        for n in range(count):
            kinds = np.repeat(np.arange(4), number[n])[: self.lesions]
            kind[n, : len(kinds)] = kinds
        angle, radius = rng.uniform(0, 2 * np.pi, (2, count, self.lesions))
        radius = 0.85 * np.sqrt(radius / (2 * np.pi))
        lx, ly = radius * np.cos(angle), radius * np.sin(angle)
        near_disc = kind == 3
        lx = np.where(near_disc, ox[:, :, 0] + rng.normal(0, 0.12, lx.shape), lx)
        ly = np.where(near_disc, oy[:, :, 0] + rng.normal(0, 0.12, ly.shape), ly)
        sigma = np.array([0.05, 0.11, 0.06, 0.04, 0.0])[kind]
        amplitude = np.array([-0.3, -0.25, 0.3, -0.2, 0.0])[kind] * rng.uniform(0.6, 1.2, kind.shape)
        for start in range(0, count, 1000):
            part = slice(start, start + 1000)
            d2 = (xx[None, None] - lx[part, :, None, None]) ** 2 + (
                yy[None, None] - ly[part, :, None, None]
            ) ** 2
            spread = 2 * np.maximum(sigma[part], 1e-3)[:, :, None, None] ** 2
            image[part] += (amplitude[part, :, None, None] * np.exp(-d2 / spread)).sum(1)
        image = (image - 0.45) * rng.uniform(0.7, 1.3, (count, 1, 1)) + rng.uniform(-0.1, 0.1, (count, 1, 1))
        image = np.where(r2[None] < 0.95, image + rng.normal(0, 0.03, image.shape), -0.6)
        inside = r2 < 0.95
        median = np.median(image[:, inside], 1, keepdims=True)
        dark = (image[:, inside] < median - 0.15).mean(1)
        noisy = rng.random(count) < 0.1
        label = np.clip(grade + noisy * rng.choice([-1, 1], count), 0, self.grades - 1)
        # Input normalisation: each image less its median inside the disc, scaled to unit
        # lesion contrast, the outside of the disc zero.
        image = np.where(inside, (image - median[:, :, None]) / 0.1, 0.0)
        return image[:, None].astype(np.float32), label.astype(np.int64), dark

    def _qwk(self, predicted: torch.Tensor, label: torch.Tensor) -> float:
        k = self.grades
        observed = torch.zeros(k, k)
        observed.index_put_((label, predicted.long()), torch.ones(len(label)), accumulate=True)
        expected = observed.sum(1, keepdim=True) * observed.sum(0, keepdim=True) / observed.sum()
        i = torch.arange(k, dtype=torch.float32)
        weight = (i[:, None] - i[None]) ** 2 / (k - 1) ** 2
        return (1 - (weight * observed).sum() / (weight * expected).sum().clamp(min=1e-9)).item()

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        image, grade = batch
        return F.cross_entropy(model(image).float(), grade)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float()
        if not torch.isfinite(logits).all():
            return {"val_qwk": math.nan}
        predicted = logits.argmax(1)
        return {
            "val_qwk": self._qwk(predicted, self.y_val),
            "val_accuracy": (predicted == self.y_val).float().mean().item(),
            "val_dark_share_qwk": self.qwk_dark,
        }

    def build_model(self) -> nn.Module:
        return nn.Sequential(
            nn.Conv2d(1, 8, 3, stride=2, padding=1),
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.Conv2d(8, 16, 3, padding=1),
            nn.BatchNorm2d(16),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 16, 3, padding=1),
            nn.ReLU(),
            _MeanMaxPool2d(),
            nn.Linear(32, self.grades),
        )


class _MeanMaxPool2d(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([x.mean((2, 3)), x.amax((2, 3))], 1)


class CropTypeMapping(_Tabular):
    """Remote sensing, crop-type mapping of agricultural parcels from satellite image time series
    (as with Sentinel-2 and TempCNN, Pelletier et al. 2019): eight crops (winter wheat,
    rapeseed, maize, sunflower, soybean, sugar beet, potatoes, grassland) told apart by their
    phenology, the green-up and senescence of a double-logistic vegetation cover (rapeseed's
    yellow flowering, grassland's mowing), in 6 bands (blue, green, red, near infrared, two
    short-wave infrared) mixing a soil and a vegetation spectrum, each parcel with its own
    timing (sd 8 days), vigour and soil, at 24 acquisitions 15 days apart (jitter up to 3 days),
    a fifth of them under cloud (bright in every band) or shadow, with sensor noise (12,000 /
    2,000 parcels). A 1-D CNN over time (the bands and the day of the year; convolutions of 32
    channels with kernel 5, twice, flattened, a layer of 64) gives the crop, trained by
    cross-entropy. Metric the held-out overall accuracy (about 1/8 at the start; a nearest-
    centroid classifier on the same series is reported beside it). Defined as the fifty-third
    batch of fresh workloads, by a helper session."""

    metric = "val_accuracy"
    dates, bands = 24, 6
    # Green-up and senescence days, peak and base cover, of each crop.
    phenology = (
        (60, 175, 0.7, 0.3),
        (55, 165, 0.75, 0.3),
        (150, 255, 0.8, 0.05),
        (130, 225, 0.65, 0.05),
        (155, 260, 0.7, 0.05),
        (140, 290, 0.8, 0.05),
        (135, 220, 0.7, 0.05),
        (80, 300, 0.3, 0.5),
    )

    def __init__(self) -> None:
        rng = np.random.default_rng(1339)
        self.vegetation = np.array([0.04, 0.08, 0.04, 0.45, 0.22, 0.1]) + rng.normal(
            0, 0.012, (8, self.bands)
        )
        x_train, y_train = self._parcels(rng, 12000)
        x_val, y_val = self._parcels(rng, 2000)
        super().__init__(x_train, y_train, x_val, y_val)
        flat_train, flat_val = x_train.reshape(len(x_train), -1), x_val.reshape(len(x_val), -1)
        centroids = np.stack([flat_train[y_train == c].mean(0) for c in range(8)])
        nearest = ((flat_val[:, None] - centroids[None]) ** 2).sum(-1).argmin(1)
        self.accuracy_centroid = float((nearest == y_val).mean())

    def _parcels(self, rng: np.random.Generator, count: int) -> tuple[np.ndarray, np.ndarray]:
        crop = rng.integers(0, 8, count)
        day = np.arange(self.dates) * 15 + 8 + rng.uniform(-3, 3, (count, self.dates))
        green, senesce, peak, base = (
            np.array(p, float)[crop][:, None] for p in zip(*self.phenology, strict=True)
        )
        green = green + rng.normal(0, 8, (count, 1))
        senesce = senesce + rng.normal(0, 8, (count, 1))
        peak = peak * rng.uniform(0.8, 1.1, (count, 1))
        cover = base + peak * (1 / (1 + np.exp(-(day - green) / 8)) - 1 / (1 + np.exp(-(day - senesce) / 10)))
        mowing = rng.uniform(130, 200, (count, 1))
        grass = crop[:, None] == 7
        cover = np.where(grass & (day > mowing) & (day < mowing + 25), cover - 0.25, cover)
        cover = np.clip(cover, 0, 0.95)
        soil = np.array([0.08, 0.11, 0.14, 0.2, 0.3, 0.25]) * rng.uniform(0.7, 1.4, (count, 1, 1))
        series = cover[..., None] * self.vegetation[crop][:, None] + (1 - cover[..., None]) * soil
        flowering = (crop[:, None] == 1) & (np.abs(day - green - 55) < 12)
        series = series + flowering[..., None] * np.array([0.0, 0.06, 0.07, 0.03, 0.0, 0.0])
        cloud = rng.random((count, self.dates)) < 0.17
        shadow = rng.random((count, self.dates)) < 0.04
        series = np.where(cloud[..., None], series + rng.uniform(0.2, 0.5, (count, self.dates, 1)), series)
        series = np.where(shadow[..., None], series * 0.5, series)
        series = series + rng.normal(0, 0.01, series.shape)
        inputs = np.concatenate([(series - 0.2) / 0.15, (day[..., None] - 180) / 105], -1)
        return inputs.transpose(0, 2, 1).astype(np.float32), crop

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        series, crop = batch
        return F.cross_entropy(model(series).float(), crop)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float()
        if not torch.isfinite(logits).all():
            return {"val_accuracy": math.nan}
        return {
            "val_accuracy": (logits.argmax(1) == self.y_val).float().mean().item(),
            "val_loss": F.cross_entropy(logits, self.y_val).item(),
            "val_centroid_accuracy": self.accuracy_centroid,
        }

    def build_model(self) -> nn.Module:
        return nn.Sequential(
            nn.Conv1d(self.bands + 1, 32, 5, padding=2),
            nn.ReLU(),
            nn.Conv1d(32, 32, 5, padding=2),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(32 * self.dates, 64),
            nn.ReLU(),
            nn.Linear(64, 8),
        )


class GravitationalWaveDetection(_Tabular):
    """Gravitational-wave astronomy, detecting compact-binary inspirals in detector strain with a
    1-D CNN (as in George and Huerta 2018): 0.5 s of whitened strain at 512 Hz, half of the
    segments holding a chirp (frequency rising from 30 Hz as the time to merger to the -3/8,
    amplitude as the frequency to the 2/3, up to a cut-off of 150 to 250 Hz set by the masses,
    a short ringdown, random chirp time, merger time and phase) at an optimal SNR of 4 to 12, in
    Gaussian noise with sine-Gaussian glitches in a tenth of all segments (16,000 / 2,000). The
    CNN (convolutions of 8, 16 and 16 channels, kernels 9, 9, 5, a stride of 2, poolings by 2, max pooled
    over time, a layer of 16) gives a logit, trained by binary cross-entropy. Metric the held-out
    detection probability at a false-alarm probability of 1% (the noise segments' 99th
    percentile as threshold; about 0.01 to 0.1 at the start; a matched-filter template bank,
    the standard search, is reported beside it). Defined as the fifty-fourth batch of fresh
    workloads, by a helper session."""

    metric = "val_tpr_at_1pct"
    rate, length = 512, 256

    def __init__(self) -> None:
        rng = np.random.default_rng(1343)
        x_train, y_train = self._segments(rng, 16000)
        x_val, y_val = self._segments(rng, 2000)
        super().__init__(x_train, y_train, x_val, y_val)
        # Matched filter: 24 templates (chirp times, cut-offs), both phases, every lag.
        bank = np.stack(
            [
                self._chirp(tau, cut, 0.0, self.length - 1)
                for tau in np.linspace(0.3, 2.0, 8)
                for cut in (150, 200, 250)
            ]
        )
        bank_q = np.stack(
            [
                self._chirp(tau, cut, np.pi / 2, self.length - 1)
                for tau in np.linspace(0.3, 2.0, 8)
                for cut in (150, 200, 250)
            ]
        )
        size = 2 * self.length
        spectrum = np.fft.rfft(x_val[:, 0], size)[:, None]
        response = 0.0
        for templates in (bank, bank_q):
            t = templates / np.linalg.norm(templates, axis=1, keepdims=True)
            response = response + np.fft.irfft(spectrum * np.conj(np.fft.rfft(t, size))[None], size) ** 2
        self.tpr_matched = self._tpr(torch.tensor(response.max((1, 2))), self.y_val)

    def _chirp(self, tau: float, cut: float, phase: float, merger: float) -> np.ndarray:
        t = np.arange(self.length) / self.rate
        to_merger = np.maximum(merger / self.rate - t, 1e-4)
        frequency = np.minimum(30 * (to_merger / tau) ** (-3 / 8), cut)
        frequency = np.where(t <= merger / self.rate, frequency, cut)
        phase = phase + 2 * np.pi * np.cumsum(frequency) / self.rate
        amplitude = (frequency / 30) ** (2 / 3) * np.where(
            t <= merger / self.rate, 1.0, np.exp(-(t - merger / self.rate) / 0.006)
        )
        return amplitude * np.cos(phase)

    def _segments(self, rng: np.random.Generator, count: int) -> tuple[np.ndarray, np.ndarray]:
        strain = rng.normal(size=(count, self.length))
        label = (rng.random(count) < 0.5).astype(np.float32)
        for n in np.nonzero(label)[0]:
            wave = self._chirp(
                rng.uniform(0.3, 2.0),
                rng.uniform(150, 250),
                rng.uniform(0, 2 * np.pi),
                rng.uniform(0.55, 0.95) * self.length,
            )
            strain[n] += wave / np.linalg.norm(wave) * rng.uniform(4, 12)
        glitch = rng.random(count) < 0.1
        t = np.arange(self.length) / self.rate
        centre = rng.uniform(0.05, 0.45, (count, 1))
        blip = np.exp(-(((t - centre) / rng.uniform(0.003, 0.02, (count, 1))) ** 2)) * np.sin(
            2 * np.pi * rng.uniform(40, 200, (count, 1)) * t
        )
        strain += glitch[:, None] * rng.uniform(3, 10, (count, 1)) * blip
        return strain[:, None].astype(np.float32), label

    @staticmethod
    def _tpr(score: torch.Tensor, label: torch.Tensor) -> float:
        threshold = torch.quantile(score[label == 0].double(), 0.99)
        return (score[label == 1].double() > threshold).double().mean().item()

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        strain, label = batch
        return F.binary_cross_entropy_with_logits(model(strain).float().squeeze(-1), label)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float().squeeze(-1)
        if not torch.isfinite(logits).all():
            return {"val_tpr_at_1pct": math.nan}
        return {
            "val_tpr_at_1pct": self._tpr(logits, self.y_val),
            "val_loss": F.binary_cross_entropy_with_logits(logits, self.y_val).item(),
            "val_matched_filter_tpr": self.tpr_matched,
        }

    def build_model(self) -> nn.Module:
        return nn.Sequential(
            nn.Conv1d(1, 8, 9, stride=2, padding=4),
            nn.ReLU(),
            nn.MaxPool1d(2),
            nn.Conv1d(8, 16, 9, padding=4),
            nn.ReLU(),
            nn.MaxPool1d(2),
            nn.Conv1d(16, 16, 5, padding=2),
            nn.ReLU(),
            nn.AdaptiveMaxPool1d(1),
            nn.Flatten(),
            nn.Linear(16, 16),
            nn.ReLU(),
            nn.Linear(16, 1),
        )


class BatteryStateOfCharge(_Tabular):
    """Battery management, state-of-charge estimation of lithium-ion cells from voltage, current
    and temperature (as in data-driven SoC estimators on drive cycles): 12 simulated cells, each
    an equivalent circuit (a nonlinear open-circuit voltage curve, a series resistance rising in
    the cold and with age, an RC pair of time constant 20 to 60 s) of capacity 2.2 to 3 Ah (aged,
    unknown to the estimator), driven for 4 hours at 1 Hz by random drive cycles (discharge up to
    3C, regenerative braking, rests, constant-current recharges below 10%) at ambient 5 to 35 C,
    measured with voltage noise of 2 mV, current noise and offset. A 1-D CNN (convolutions of 16
    and 32 channels with strides of 2, a layer of 64) reads the last 64 s of the three signals
    and gives the state of charge, trained by squared error; 10 cells to train on, 2 held out
    (every 20th second). Metric the held-out RMSE of the state of charge in percent (about 30 at
    the start; inverting the open-circuit voltage curve at the last voltage corrected by the
    nominal series resistance is reported beside it). Defined as the fifty-fourth batch of fresh
    workloads, by a helper session."""

    metric = "val_rmse_pct"
    cells, seconds, window = 12, 14400, 64

    @staticmethod
    def _ocv(soc: np.ndarray) -> np.ndarray:
        return 3.4 + 0.75 * soc - 0.35 * np.exp(-15 * soc) + 0.05 * np.sin(3 * np.pi * soc)

    def __init__(self) -> None:
        rng = np.random.default_rng(1347)
        n = self.cells
        capacity = rng.uniform(2.2, 3.0, n)
        r0 = rng.uniform(0.02, 0.04, n)
        r1, tau = rng.uniform(0.01, 0.025, n), rng.uniform(20, 60, n)
        ambient = rng.uniform(5, 35, n)
        soc = rng.uniform(0.85, 1.0, n)
        v1 = np.zeros(n)
        charging = np.zeros(n, bool)
        left = np.zeros(n)
        demand = np.zeros(n)
        offset = rng.normal(0, 0.02, n)
        record = np.zeros((n, 3, self.seconds), np.float32)
        target = np.zeros((n, self.seconds), np.float32)
        for t in range(self.seconds):
            left -= 1
            renew = left <= 0
            kind = rng.random(n)
            fresh = np.where(
                kind < 0.15, 0.0, np.where(kind < 0.35, -rng.uniform(0, 1, n), rng.uniform(0, 3, n))
            )
            demand = np.where(renew, fresh * capacity, demand)
            left = np.where(renew, rng.integers(5, 60, n), left)
            charging = (charging | (soc < 0.1)) & (soc < 0.95)
            current = np.where(charging, -capacity, demand)  # A, discharge positive
            temperature = ambient + 0.3 * np.abs(current)
            series = r0 * (1 + (25 - temperature) / 40)
            soc = np.clip(soc - current / (3600 * capacity), 0, 1)
            v1 = v1 + (-v1 / tau + current * r1 / tau)
            voltage = self._ocv(soc) - current * series - v1
            record[:, 0, t] = voltage + rng.normal(0, 0.002, n)
            record[:, 1, t] = current * (1 + rng.normal(0, 0.01, n)) + offset
            record[:, 2, t] = temperature + rng.normal(0, 0.5, n)
            target[:, t] = soc
        self.signals = torch.tensor(
            (record - record[:10].mean((0, 2), keepdims=True)) / record[:10].std((0, 2), keepdims=True)
        )
        self.soc = torch.tensor(target)
        ends = torch.arange(self.window - 1, self.seconds)
        self.train_points = torch.cartesian_prod(torch.arange(10), ends)
        val = torch.cartesian_prod(torch.arange(10, n), ends[::20])
        self.x_val, self.y_val = self._windows(val)
        grid = np.linspace(0, 1, 2001)
        last_v = record[10:, 0, self.window - 1 :: 20] + 0.03 * record[10:, 1, self.window - 1 :: 20]
        ocv_soc = np.interp(last_v, self._ocv(grid), grid)
        self.rmse_ocv = float(100 * np.sqrt(((ocv_soc - target[10:, self.window - 1 :: 20]) ** 2).mean()))

    def _windows(self, points: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        cell, end = points[:, 0], points[:, 1]
        offsets = torch.arange(-self.window + 1, 1)
        x = self.signals[cell[:, None], :, end[:, None] + offsets].transpose(1, 2)
        return x, self.soc[cell, end]

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Batch]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        while True:
            index = torch.randint(0, len(self.train_points), (micro_batch_size,), generator=generator)
            yield self._windows(self.train_points[index])

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        signals, soc = batch
        return F.mse_loss(model(signals).float().squeeze(-1), soc)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        predicted = model(self.x_val).float().squeeze(-1)
        if not torch.isfinite(predicted).all():
            return {"val_rmse_pct": math.nan}
        return {
            "val_rmse_pct": 100 * (predicted - self.y_val).pow(2).mean().sqrt().item(),
            "val_max_error_pct": 100 * (predicted - self.y_val).abs().max().item(),
            "val_ocv_rmse_pct": self.rmse_ocv,
        }

    def build_model(self) -> nn.Module:
        return nn.Sequential(
            nn.Conv1d(3, 16, 5, stride=2, padding=2),
            nn.ReLU(),
            nn.Conv1d(16, 32, 5, stride=2, padding=2),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(32 * self.window // 4, 64),
            nn.ReLU(),
            nn.Linear(64, 1),
        )


class OrderBookDirection(_Tabular):
    """Quantitative finance, mid-price direction from limit order book data (as in DeepLOB, Zhang
    et al. 2019, on FI-2010): a simulated book of 5 levels a side over 60,000 events, whose queue
    volumes lean with a persistent latent order-flow imbalance (an AR(1) of coefficient 0.98,
    strongest at the best levels, under heavy noise) that also drives the mid price (a tick up
    or down at 30% of events, up with probability sigmoid(1.5 x imbalance)); the spread varies
    with a volatility regime. Each input is the last 16 events' log volumes, spread and mid-price
    change (12 features each); the label is the mid-price move over the next 10 events, down
    (2 ticks or more), stationary or up. Train on the first 50,000 events, validate on the last
    10,000. A temporal CNN (convolutions of 24 channels with kernel 3, twice, flattened, a layer
    of 32) gives the three logits, trained by cross-entropy. Metric the held-out cross-entropy
    (log loss), a loss-like target (about 1.1 at the start and for the class shares, which are
    reported beside it). Defined as the fifty-fourth batch of fresh workloads, by a helper
    session."""

    metric = "val_logloss"
    events, levels, history, ahead, split = 60000, 5, 16, 10, 50000

    def __init__(self) -> None:
        rng = np.random.default_rng(1349)
        e = self.events + self.ahead
        shock = rng.normal(0, np.sqrt(1 - 0.98**2), e)
        imbalance = np.zeros(e)
        for t in range(1, e):
            imbalance[t] = 0.98 * imbalance[t - 1] + shock[t]
        regime = np.repeat(rng.random(e // 500 + 1) < 0.3, 500)[:e]
        lean = np.array([0.5, 0.35, 0.2, 0.1, 0.05])
        depth = np.array([1.0, 1.5, 2.0, 2.2, 2.4])
        noise = rng.normal(0, 0.6, (e, 2, self.levels))
        bid = np.log(depth) + lean * imbalance[:, None] + noise[:, 0]
        ask = np.log(depth) - lean * imbalance[:, None] + noise[:, 1]
        moves = rng.random(e) < 0.3
        up = rng.random(e) < 1 / (1 + np.exp(-1.5 * imbalance))
        step = moves * np.where(up, 1, -1)
        mid = np.cumsum(step)
        spread = 1 + rng.poisson(np.where(regime, 1.5, 0.3))
        features = np.concatenate(
            [bid, ask, spread[:, None] - 1.0, np.concatenate([[0], np.diff(mid)])[:, None]], 1
        ).astype(np.float32)
        future = mid[self.ahead :] - mid[: -self.ahead]
        label = np.where(future >= 2, 2, np.where(future <= -2, 0, 1))[: self.events]
        starts = np.arange(self.history - 1, self.events)
        windows = np.stack([features[starts - self.history + 1 + h] for h in range(self.history)], 2)
        mean, std = features[: self.split].mean(0), features[: self.split].std(0)
        windows = (windows - mean[None, :, None]) / std[None, :, None]
        y = label[starts]
        cut = self.split - self.history + 1
        super().__init__(windows[:cut], y[:cut], windows[cut:], y[cut:])
        shares = np.bincount(y[:cut], minlength=3) / cut
        self.logloss_shares = float(-np.log(shares[y[cut:]]).mean())

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        book, direction = batch
        return F.cross_entropy(model(book).float(), direction)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float()
        if not torch.isfinite(logits).all():
            return {"val_logloss": math.nan}
        return {
            "val_logloss": F.cross_entropy(logits, self.y_val).item(),
            "val_accuracy": (logits.argmax(1) == self.y_val).float().mean().item(),
            "val_shares_logloss": self.logloss_shares,
        }

    def build_model(self) -> nn.Module:
        return nn.Sequential(
            nn.Conv1d(2 * self.levels + 2, 24, 3, padding=1),
            nn.ReLU(),
            nn.Conv1d(24, 24, 3, padding=1),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(24 * self.history, 32),
            nn.ReLU(),
            nn.Linear(32, 3),
        )


class CellTypeAnnotation(_Tabular):
    """Single-cell genomics, cell-type annotation of single-cell RNA-seq profiles across
    sequencing batches (as scANVI or an MLP classifier transfer labels from a reference atlas):
    12 cell types of 3 lineages (4 subtypes each, shares from 2% to 20%) over 300 genes, each
    type's mean expression a log-normal gene baseline with lineage markers (30 genes, up about
    4.5 times) and subtle subtype markers (8 genes, up about 2.7 times, some shared), counts
    drawn negative binomial (dispersion 0.3) with library sizes log-normal around 2,000 and
    per-batch gene factors (log sd 0.3). Train on 3 batches (12,000 cells), validate on a
    fourth (2,000), after log1p of counts per 10,000 standardised on the training cells. An MLP
    300-128-64-12 gives the type, trained by cross-entropy. Metric the held-out macro F1 over
    the 12 types, rare ones weighing as much as common ones (about 0.02 to 0.05 at the start;
    correlation to the training types' centroids, as SingleR annotates, is reported beside it).
    Defined as the fifty-fourth batch of fresh workloads, by a helper session."""

    metric = "val_macro_f1"
    genes, types = 300, 12

    def __init__(self) -> None:
        rng = np.random.default_rng(1351)
        log_mean = np.tile(rng.normal(-7.0, 1.0, self.genes), (self.types, 1))
        for lineage in range(3):
            markers = rng.choice(self.genes, 30, replace=False)
            log_mean[4 * lineage : 4 * lineage + 4, markers] += rng.normal(1.5, 0.4, 30)
        for cell_type in range(self.types):
            markers = rng.choice(self.genes, 8, replace=False)
            log_mean[cell_type, markers] += rng.normal(1.0, 0.3, 8)
        share = rng.dirichlet(np.ones(self.types) * 2)
        share = np.maximum(share, 0.02)
        share /= share.sum()
        batches = [self._cells(rng, log_mean, share, count) for count in (4000, 4000, 4000, 2000)]
        x_train = np.concatenate([b[0] for b in batches[:3]])
        y_train = np.concatenate([b[1] for b in batches[:3]])
        x_val, y_val = batches[3]
        mean, std = x_train.mean(0), x_train.std(0) + 1e-3
        super().__init__((x_train - mean) / std, y_train, (x_val - mean) / std, y_val)
        centroids = np.stack([x_train[y_train == c].mean(0) for c in range(self.types)])
        centred_val = x_val - x_val.mean(1, keepdims=True)
        centred_centroids = centroids - centroids.mean(1, keepdims=True)
        correlation = (centred_val @ centred_centroids.T) / (
            np.linalg.norm(centred_val, axis=1)[:, None] * np.linalg.norm(centred_centroids, axis=1)[None]
            + 1e-9
        )
        self.f1_centroid = self._macro_f1(torch.tensor(correlation.argmax(1)), self.y_val)

    def _cells(
        self, rng: np.random.Generator, log_mean: np.ndarray, share: np.ndarray, count: int
    ) -> tuple[np.ndarray, np.ndarray]:
        cell_type = rng.choice(self.types, count, p=share)
        batch_factor = rng.normal(0, 0.3, self.genes)
        library = np.exp(rng.normal(np.log(2000), 0.4, (count, 1)))
        mean = np.exp(log_mean[cell_type] + batch_factor)
        mean = library * mean / np.exp(log_mean).sum(1).mean()
        counts = rng.poisson(mean * rng.gamma(1 / 0.3, 0.3, mean.shape))
        normalised = np.log1p(counts / counts.sum(1, keepdims=True).clip(min=1) * 1e4)
        return normalised.astype(np.float32), cell_type

    def _macro_f1(self, predicted: torch.Tensor, label: torch.Tensor) -> float:
        f1 = []
        for c in range(self.types):
            hit = ((predicted == c) & (label == c)).sum().item()
            f1.append(2 * hit / max((predicted == c).sum().item() + (label == c).sum().item(), 1))
        return float(np.mean(f1))

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        expression, cell_type = batch
        return F.cross_entropy(model(expression).float(), cell_type)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = model(self.x_val).float()
        if not torch.isfinite(logits).all():
            return {"val_macro_f1": math.nan}
        predicted = logits.argmax(1)
        return {
            "val_macro_f1": self._macro_f1(predicted, self.y_val),
            "val_accuracy": (predicted == self.y_val).float().mean().item(),
            "val_centroid_macro_f1": self.f1_centroid,
        }

    def build_model(self) -> nn.Module:
        return _mlp(self.genes, [128, 64], self.types)
