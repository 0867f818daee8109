"""Gradient-boosted trees of "reaches within the planned run", kept as arrays and read with numpy.

The reach bound (``benchmarks/reach_frontier.py``, check Y in docs/benchmarks.md) found that a
gradient-boosted classifier of the curve's own features separates runs that reach within their
planned run from those that do not far better than the maps' probability (ROC AUC 0.92 against
0.80–0.87 at a quarter of the run, leave-one-workload-out over 122 recorded workloads), and
reads as a probability about as well. :class:`ReachTrees` holds such a classifier, fitted by
scikit-learn's :class:`~sklearn.ensemble.HistGradientBoostingClassifier`, as plain arrays, so
that a forecast evaluates it with numpy alone and the table ships as JSON numbers.

A model fitted on recorded curves is confident about curves unlike any of them (checks C, R and
Z); :meth:`ReachTrees.covers` says whether a feature vector lies inside the range the model was
fitted on, and a forecast uses the trees only where it does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class ReachTrees:
    """A binary gradient-boosted classifier as arrays: ``P = sigmoid(baseline + sum of leaves)``.

    Every tree is stored in the same padded layout: ``feature[t, n]`` and ``split[t, n]`` of
    node ``n`` of tree ``t`` (go to ``left[t, n]`` when ``x[feature] <= split``, else
    ``right[t, n]``), ``value[t, n]`` on leaves, where ``left == right == n``. ``low``/``high``:
    the range of each feature in the fitting data; ``thresholds``: per bucket of the share of the run
    seen (:data:`convtune.curves._calibration.PROGRESS_EDGES`), the probability below which a
    forecast reading these trees calls a curve "not within the run".

    Example:
        >>> stump = ReachTrees(
        ...     feature=np.array([[0, 0, 0]]), split=np.array([[0.0, 0.0, 0.0]]),
        ...     left=np.array([[1, 1, 2]]), right=np.array([[2, 1, 2]]),
        ...     value=np.array([[0.0, -2.0, 2.0]]), baseline=0.0,
        ...     low=np.array([-1.0]), high=np.array([1.0]), thresholds=(0.1,))
        >>> round(stump.probability(np.array([0.5])), 3), stump.covers(np.array([3.0]))
        (0.881, False)
    """

    feature: np.ndarray
    split: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray
    baseline: float
    low: np.ndarray
    high: np.ndarray
    thresholds: tuple[float, ...]

    def threshold(self, bucket: int) -> float:
        """The reach threshold of a bucket of the share of the run seen (the last one beyond)."""
        return self.thresholds[min(max(bucket, 0), len(self.thresholds) - 1)]

    def probability(self, features: np.ndarray) -> float:
        """The chance of reaching within the run of one feature vector."""
        x = np.asarray(features, dtype=float)
        rows = np.arange(self.feature.shape[0])
        node = np.zeros(rows.size, dtype=int)
        # Every path is shorter than the widest tree, and a leaf points at itself.
        for _ in range(self.feature.shape[1]):
            go_left = x[self.feature[rows, node]] <= self.split[rows, node]
            step = np.where(go_left, self.left[rows, node], self.right[rows, node])
            if np.array_equal(step, node):
                break
            node = step
        z = self.baseline + float(np.sum(self.value[rows, node]))
        return float(1.0 / (1.0 + math.exp(-z))) if z > -700 else 0.0

    def covers(self, features: np.ndarray) -> bool:
        """Whether every feature lies within the range of the data the trees were fitted on."""
        x = np.asarray(features, dtype=float)
        return bool(np.all((x >= self.low) & (x <= self.high)))

    @classmethod
    def from_sklearn(cls, model: Any, fitted_features: np.ndarray, thresholds: Sequence[float]) -> ReachTrees:
        """The trees of a fitted binary ``HistGradientBoostingClassifier`` (numerical features,
        no missing values), with the range of ``fitted_features`` it was fitted on."""
        trees = [predictors[0].nodes for predictors in model._predictors]
        width = max(nodes.size for nodes in trees)
        shape = (len(trees), width)
        feature, left, right = (np.zeros(shape, dtype=int) for _ in range(3))
        split, value = np.zeros(shape), np.zeros(shape)
        for t, nodes in enumerate(trees):
            n = np.arange(width)
            leaf = np.ones(width, dtype=bool)
            leaf[: nodes.size] = nodes["is_leaf"].astype(bool)
            inner = ~leaf
            inner[nodes.size :] = False
            feature[t, : nodes.size] = nodes["feature_idx"]
            split[t, : nodes.size] = nodes["num_threshold"]
            left[t] = np.where(leaf, n, np.pad(nodes["left"].astype(int), (0, width - nodes.size)))
            right[t] = np.where(leaf, n, np.pad(nodes["right"].astype(int), (0, width - nodes.size)))
            value[t, : nodes.size] = np.where(leaf[: nodes.size], nodes["value"], 0.0)
            feature[t, leaf] = 0
        x = np.asarray(fitted_features, dtype=float)
        return cls(
            feature,
            split,
            left,
            right,
            value,
            float(np.ravel(model._baseline_prediction)[0]),
            x.min(axis=0),
            x.max(axis=0),
            tuple(float(t) for t in thresholds),
        )

    def to_dict(self) -> dict[str, Any]:
        # Leaves carry a value, inner nodes a split: only what each node uses is written.
        trees = []
        for t in range(self.feature.shape[0]):
            nodes = []
            for n in range(self.feature.shape[1]):
                if self.left[t, n] == n and self.right[t, n] == n:
                    nodes.append([round(float(self.value[t, n]), 7)])
                else:
                    nodes.append(
                        [
                            int(self.feature[t, n]),
                            float(self.split[t, n]),
                            int(self.left[t, n]),
                            int(self.right[t, n]),
                        ]
                    )
            while len(nodes) > 1 and nodes[-1] == [0.0]:
                nodes.pop()  # padding
            trees.append(nodes)
        return {
            "baseline": round(self.baseline, 7),
            "thresholds": [round(t, 4) for t in self.thresholds],
            "low": [float(v) for v in self.low],
            "high": [float(v) for v in self.high],
            "trees": trees,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ReachTrees:
        trees = data["trees"]
        width = max(len(nodes) for nodes in trees)
        shape = (len(trees), width)
        feature, left, right = (np.zeros(shape, dtype=int) for _ in range(3))
        split, value = np.zeros(shape), np.zeros(shape)
        for t, nodes in enumerate(trees):
            left[t] = right[t] = np.arange(width)
            for n, node in enumerate(nodes):
                if len(node) == 1:
                    value[t, n] = node[0]
                else:
                    feature[t, n], split[t, n], left[t, n], right[t, n] = node
        return cls(
            feature,
            split,
            left,
            right,
            value,
            float(data["baseline"]),
            np.asarray(data["low"], dtype=float),
            np.asarray(data["high"], dtype=float),
            tuple(float(t) for t in data["thresholds"]),
        )
