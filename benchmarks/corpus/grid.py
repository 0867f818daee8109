"""What the corpus records: per workload the metric, the planned run and the grid of knobs.

Every workload is trained over ``optimizer × LR level × schedule`` (× micro-batch size where
``batch_product``; otherwise each point gets one micro-batch size, assigned so every size is
used equally often), with a warm-up length assigned the same balanced way, and a random quarter
of the points again with training seed 1 (and a twelfth with seed 2). LR levels are a fixed
set of factors around a per-optimizer centre (a usable LR for that workload), from 30× too low
(runs that crawl) to 10× too high (runs that are noisy or diverge). The list is shuffled with a
fixed seed, so any prefix of it is a balanced subset.

Example:
    >>> points = planned_runs("moons_accuracy")
    >>> sorted(points[0])
    ['knobs', 'seed']
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import random
from dataclasses import dataclass
from typing import Any

from convtune.config.recipe import Recipe
from convtune.training.engine import EngineConfig

from . import workloads as wl
from .schedules import register_corpus_schedules

register_corpus_schedules()

SCHEDULES = ("cosine", "linear", "constant", "cyclic", "onecycle", "wsd", "step", "inverse_sqrt")
LR_FACTORS = (1 / 30, 1 / 10, 1 / 3, 1.0, 3.0, 10.0)
# How far each optimizer's usable LR sits from AdamW's (SGD with momentum 0.9 wants ~10-30×,
# Lion ~5× less, LAMB's trust ratio ~3× more).
OPTIMIZER_LR_SCALE = {"adamw": 1.0, "sgd": 20.0, "lion": 0.2, "lamb": 3.0}
SEED_REPEATS = {1: 0.25, 2: 1 / 12}


@dataclass(frozen=True)
class CorpusWorkload:
    """One corpus workload: how to build it, what it reports, and the grid it is recorded over."""

    name: str
    factory: type
    kind: str
    metric: str
    direction: str  # "minimize" | "maximize"
    metric_bounds: tuple[float | None, float | None]
    horizon_samples: int
    eval_every_samples: int
    adamw_lr: float
    optimizers: tuple[str, ...]
    micro_batch_sizes: tuple[int, ...]
    warmup_steps: tuple[int, ...]
    batch_product: bool = False
    description: str = ""

    def lr(self, optimizer: str, level: int) -> float:
        return float(f"{self.adamw_lr * OPTIMIZER_LR_SCALE[optimizer] * LR_FACTORS[level]:.3g}")


_ALL = (
    CorpusWorkload(
        "logreg_digits", wl.LogRegDigits, "logistic regression, image classification", "val_error",
        "minimize", (0.0, 1.0), 12288, 512, 0.01, ("adamw", "sgd", "lion"), (16, 64), (0, 30),
        batch_product=True,
        description="multinomial logistic regression on sklearn load_digits (1437 train / 360 val)",
    ),
    CorpusWorkload(
        "mlp_wine_narrow", wl.MLPWineNarrow, "narrow MLP classification, tiny data", "val_loss",
        "minimize", (0.0, None), 6144, 256, 0.01, ("adamw", "sgd", "lamb"), (8, 32), (0, 40),
        batch_product=True,
        description="MLP 13-16-16-3 on sklearn load_wine, standardised (124 train / 54 val); val cross-entropy",
    ),
    CorpusWorkload(
        "mlp_synth_wide", wl.MLPSyntheticWide, "wide MLP classification that overfits", "val_loss",
        "minimize", (0.0, None), 16384, 512, 1e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="MLP 30-256-256-256-4 on make_classification (1050 train / 450 val); val cross-entropy",
    ),
    CorpusWorkload(
        "noisy_labels", wl.NoisyLabels, "classification with 30% label noise", "val_error",
        "minimize", (0.0, 1.0), 16384, 512, 3e-3, ("adamw", "sgd", "lamb"), (32, 128), (0, 30),
        batch_product=True,
        description="MLP 20-64-64-2 on make_classification flip_y=0.3 (2100 train / 900 val)",
    ),
    CorpusWorkload(
        "moons_accuracy", wl.MoonsAccuracy, "small MLP, saturating accuracy", "accuracy",
        "maximize", (0.0, 1.0), 12288, 512, 0.01, ("adamw", "sgd", "lion"), (16, 64), (0, 30),
        batch_product=True,
        description="MLP 2-32-32-2 on make_moons noise=0.25 (1400 train / 600 val)",
    ),
    CorpusWorkload(
        "cnn_digits", wl.CNNDigits, "small CNN, image classification", "accuracy",
        "maximize", (0.0, 1.0), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="conv3x3(16)-conv3x3(32)-maxpool-linear on 8x8 sklearn load_digits (1437 / 360)",
    ),
    CorpusWorkload(
        "friedman_mse", wl.FriedmanMSE, "MLP regression, MSE", "val_mse",
        "minimize", (0.0, None), 16384, 512, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 40),
        batch_product=True,
        description="MLP 10-64-64-1 on make_friedman1 noise=1 (1400 train / 600 val); val MSE (noise floor 1)",
    ),
    CorpusWorkload(
        "regression_r2", wl.RegressionR2, "MLP regression, R² saturating near 1", "val_r2",
        "maximize", (None, 1.0), 8192, 256, 3e-3, ("adamw", "sgd", "lion"), (16, 64), (0, 20),
        batch_product=True,
        description="MLP 15-32-1 on make_regression noise=10, targets scaled to unit std (1400 / 600); val R²",
    ),
    CorpusWorkload(
        "autoencoder_digits", wl.AutoencoderDigits, "autoencoder, reconstruction MSE", "val_mse",
        "minimize", (0.0, None), 16384, 512, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 40),
        batch_product=True,
        description="autoencoder 64-32-8-32-64 (sigmoid out) on sklearn load_digits pixels in [0,1]; val MSE",
    ),
    CorpusWorkload(
        "gru_charlm", wl.GRUCharLM, "GRU byte-level language model", "val_loss",
        "minimize", (0.0, None), 4096, 256, 1e-2, ("adamw", "sgd", "lion"), (16, 32), (0, 20),
        description="1-layer GRU width 64, context 32, on stdlib email/*.py + json/decoder.py "
        "(120 kB); val nats/byte on 48 held-out windows",
    ),
    CorpusWorkload(
        "transformer_charlm", wl.TransformerCharLM, "transformer byte-level language model", "val_loss",
        "minimize", (0.0, None), 4096, 256, 3e-3, ("adamw", "sgd", "lamb"), (16, 32), (0, 20),
        description="2-layer pre-norm causal transformer width 48, 4 heads, context 32, on stdlib "
        "http/client.py + urllib/parse.py + unittest/case.py (120 kB); val nats/byte",
    ),
)  # fmt: skip
# Recorded in session 22, after every forecaster, calibration and pruner setting had been chosen:
# held out from all of them. Kept apart from _ALL so `record.py --all` and every benchmark's
# default data stay the eleven workloads the published figures come from (`--fresh` records these).
_FRESH = (
    CorpusWorkload(
        "resmlp_digits", wl.ResMLPDigits, "residual MLP with LayerNorm, image classification", "val_loss",
        "minimize", (0.0, None), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (16, 64), (0, 30),
        description="residual MLP 64-(4 pre-norm GELU blocks of 64)-10 on sklearn load_digits (1437 / 360); "
        "val cross-entropy",
    ),
    CorpusWorkload(
        "diabetes_mse", wl.DiabetesMSE, "tiny noisy real regression that overfits", "val_mse",
        "minimize", (0.0, None), 8192, 256, 3e-3, ("adamw", "sgd", "lamb"), (8, 32), (0, 20),
        batch_product=True,
        description="MLP 10-32-32-1 on sklearn load_diabetes, standardised (309 train / 133 val); val MSE",
    ),
    CorpusWorkload(
        "conv1d_waves", wl.Conv1dWaves, "1-D CNN, noisy waveform classification", "accuracy",
        "maximize", (0.0, 1.0), 12288, 512, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="conv1d(16,5)-conv1d(32,5,stride 2)-avgpool-linear on 4 generated noisy waveforms "
        "(1800 / 600); accuracy",
    ),
)  # fmt: skip
# The second batch, defined in session 23 after every choice had been made (the first batch had
# been scored by then, so it is no longer unseen).
_FRESH2 = (
    CorpusWorkload(
        "hastie_dropout", wl.HastieDropout, "MLP with dropout, spherical decision boundary", "val_error",
        "minimize", (0.0, 1.0), 16384, 512, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="MLP 10-128-128-2 with dropout 0.2 on make_hastie_10_2 (2100 train / 900 val); val error",
    ),
    CorpusWorkload(
        "breast_cancer_bn", wl.BreastCancerBN, "MLP with BatchNorm, tiny real data that overfits", "val_loss",
        "minimize", (0.0, None), 8192, 256, 3e-3, ("adamw", "sgd", "lamb"), (16, 32), (0, 20),
        batch_product=True,
        description="MLP 30-64-64-2 with BatchNorm on sklearn load_breast_cancer, standardised (398 / 171); "
        "val cross-entropy",
    ),
    CorpusWorkload(
        "friedman2_mae", wl.Friedman2MAE, "MLP regression, Huber loss, MAE metric", "val_mae",
        "minimize", (0.0, None), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (16, 64), (0, 30),
        batch_product=True,
        description="MLP 4-64-64-1 trained with the Huber loss on make_friedman2 noise=30, targets "
        "standardised (1400 / 600); val mean absolute error",
    ),
    CorpusWorkload(
        "sort_transformer", wl.SortTransformer, "bidirectional transformer, algorithmic task", "val_error",
        "minimize", (0.0, 1.0), 16384, 512, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="2-layer pre-norm transformer width 32, 4 heads, sorting 8 digits position by position "
        "(4000 / 1000 generated sequences); share of wrong output tokens",
    ),
)  # fmt: skip
# The third batch, defined in session 23 after the second batch's check had been read and the
# rule it prompted had been written down.
_FRESH3 = (
    CorpusWorkload(
        "iris_tiny", wl.IrisTiny, "tiny MLP on tiny real data, coarse noisy validation", "val_loss",
        "minimize", (0.0, None), 6144, 256, 1e-2, ("adamw", "sgd", "lion"), (8, 32), (0, 20),
        batch_product=True,
        description="MLP 4-16-3 on sklearn load_iris, standardised (105 train / 45 val); val cross-entropy",
    ),
    CorpusWorkload(
        "blobs_accuracy", wl.BlobsAccuracy, "MLP on overlapping clusters, accuracy saturating below 1",
        "accuracy", "maximize", (0.0, 1.0), 12288, 512, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="MLP 8-64-64-10 on make_blobs (10 centres, std 6; 2100 train / 900 val); accuracy",
    ),
    CorpusWorkload(
        "scurve_mse", wl.SCurveMSE, "MLP regression of a manifold coordinate, MSE", "val_mse",
        "minimize", (0.0, None), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (16, 64), (0, 30),
        batch_product=True,
        description="MLP 3-64-64-1 predicting the position along make_s_curve (noise 0.1) from the "
        "point, standardised (1400 / 600); val MSE",
    ),
    CorpusWorkload(
        "lstm_charlm", wl.LSTMCharLM, "LSTM byte-level language model", "val_loss",
        "minimize", (0.0, None), 4096, 256, 1e-2, ("adamw", "sgd", "lamb"), (16, 32), (0, 20),
        description="1-layer LSTM width 48, context 32, on stdlib argparse.py + textwrap.py (100 kB); "
        "val nats/byte on 48 held-out windows",
    ),
)  # fmt: skip
# The fourth batch, defined in session 23 after the third batch's check had been read and a
# relative rule for the bounded reach model had been written down.
_FRESH4 = (
    CorpusWorkload(
        "circles_loss", wl.CirclesLoss, "small MLP, noisy concentric circles", "val_loss",
        "minimize", (0.0, None), 8192, 256, 1e-2, ("adamw", "sgd", "lion"), (16, 64), (0, 20),
        batch_product=True,
        description="MLP 2-32-32-2 on make_circles factor 0.5 noise 0.15 (1400 / 600); val cross-entropy",
    ),
    CorpusWorkload(
        "quantiles_accuracy", wl.QuantilesAccuracy, "MLP on nested Gaussian shells, accuracy", "accuracy",
        "maximize", (0.0, 1.0), 12288, 512, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="MLP 6-64-64-3 on make_gaussian_quantiles, 6 features, 3 classes (2100 / 900); accuracy",
    ),
    CorpusWorkload(
        "friedman3_mse", wl.Friedman3MSE, "one-hidden-layer MLP regression, MSE", "val_mse",
        "minimize", (0.0, None), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (16, 64), (0, 30),
        batch_product=True,
        description="MLP 4-64-1 on make_friedman3 noise 0.1, standardised (1400 / 600); val MSE",
    ),
    CorpusWorkload(
        "digits_pca", wl.DigitsPCA, "MLP on principal components, image classification", "val_error",
        "minimize", (0.0, 1.0), 12288, 512, 3e-3, ("adamw", "sgd", "lamb"), (16, 64), (0, 30),
        description="MLP 16-32-10 on sklearn load_digits reduced to 16 principal components (1437 / 360); "
        "val error",
    ),
)  # fmt: skip
# The fifth batch, defined in session 24 after the rule it checks (``require_behind``) had been
# written down and committed.
_FRESH5 = (
    CorpusWorkload(
        "multilabel_hamming", wl.MultilabelHamming, "multi-label MLP, per-label cross-entropy", "val_hamming",
        "minimize", (0.0, 1.0), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="MLP 20-64-5 on make_multilabel_classification (5 labels, 2100 / 900), BCE per label; "
        "share of wrong label bits",
    ),
    CorpusWorkload(
        "sparse_parity", wl.SparseParity, "MLP on a parity of 3 of 16 bits: a plateau, then a drop", "val_error",
        "minimize", (0.0, 1.0), 16384, 512, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="MLP 16-128-2 on the parity of 3 fixed bits of 16 random ±1 bits (4000 / 1000); val error",
    ),
    CorpusWorkload(
        "illcond_linear", wl.IllConditionedLinear, "linear regression, ill-conditioned features", "val_mse",
        "minimize", (0.0, None), 12288, 512, 1e-2, ("adamw", "sgd", "lion"), (16, 64), (0, 30),
        batch_product=True,
        description="one linear layer on 40 rotated features with scales 1 … 0.01 (condition number ~100; 1400 / 600), "
        "targets standardised; val MSE",
    ),
    CorpusWorkload(
        "source_topic", wl.SourceFileTopic, "bag of byte bigrams, text classification", "val_error",
        "minimize", (0.0, 1.0), 12288, 512, 1e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="EmbeddingBag of hashed byte bigrams (2048 × 32) and a linear head: which of 4 stdlib "
        "modules a 48-byte window comes from (2400 / 600); val error",
    ),
)  # fmt: skip
# The sixth batch, defined in session 27 after the check it serves (docs/benchmarks.md, "The
# shipped product on a sixth batch") had been written down and committed.
_FRESH6 = (
    CorpusWorkload(
        "ratings_mf", wl.RatingsFactorisation, "matrix factorisation of ratings, embeddings", "val_mse",
        "minimize", (0.0, None), 12288, 512, 1e-2, ("adamw", "sgd", "lamb"), (32, 128), (0, 30),
        description="user and item embeddings of width 16 with biases on 400 × 300 generated rank-4 ratings "
        "(9000 / 3000 observed pairs), standardised; val MSE",
    ),
    CorpusWorkload(
        "imbalanced_loss", wl.ImbalancedLoss, "MLP on a 92/8 imbalanced two-class problem", "val_loss",
        "minimize", (0.0, None), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        batch_product=True,
        description="MLP 20-64-2 on make_classification, 8% minority class, 2% flipped labels (2800 / 1200); "
        "val cross-entropy",
    ),
    CorpusWorkload(
        "gru_counting", wl.GRUCounting, "GRU that counts a token in a sequence", "val_error",
        "minimize", (0.0, 1.0), 12288, 512, 1e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="GRU width 32 over 16 tokens of 4: how many are token 0, 8 classes (4000 / 1000); val error",
    ),
    CorpusWorkload(
        "denoise_conv1d", wl.DenoiseConv1d, "1-D convolutional denoiser, MSE per sample point", "val_mse",
        "minimize", (0.0, None), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (16, 64), (0, 30),
        batch_product=True,
        description="three Conv1d layers (1-16-16-1, width 5) recovering two summed sines of length 64 "
        "from noise of std 0.5 (2400 / 600); val MSE",
    ),
)  # fmt: skip
# The seventh batch, defined in session 29 before any check was written for it and recorded
# with nothing scored; its check (docs/benchmarks.md, "A seventh batch") was committed before it ran.
_FRESH7 = (
    CorpusWorkload(
        "gcn_blocks", wl.GCNBlocks, "graph convolution, node classification", "accuracy",
        "maximize", (0.0, 1.0), 12288, 512, 1e-2, ("adamw", "sgd", "lamb"), (16, 64), (0, 30),
        batch_product=True,
        description="two-layer GCN (16-32-4) on a generated 600-node graph of 4 blocks (420 / 180 labelled "
        "nodes); accuracy",
    ),
    CorpusWorkload(
        "ar_forecast", wl.ARForecast, "time-series forecasting, one step ahead", "val_mse",
        "minimize", (0.0, None), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (32, 128), (0, 30),
        description="MLP 24-32-1 on windows of a generated AR(2) + seasonal series, split in time "
        "(3200 / 800); val MSE",
    ),
    CorpusWorkload(
        "poisson_counts", wl.PoissonCounts, "count regression, Poisson likelihood", "val_nll",
        "minimize", (None, None), 12288, 512, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        batch_product=True,
        description="MLP 10-32-1 giving a log-rate, Poisson NLL on generated counts (3000 / 1000); val NLL",
    ),
    CorpusWorkload(
        "auc_scores", wl.AUCScores, "binary classification scored by ROC AUC", "val_auc",
        "maximize", (0.0, 1.0), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="MLP 16-32-2 on make_classification, 30% positives, 5% flipped labels (2800 / 1200); "
        "val ROC AUC",
    ),
)  # fmt: skip
# The eighth batch, defined in session 31 after its check (docs/benchmarks.md, "A finished trial
# that came back") had been committed, and recorded with nothing scored.
_FRESH8 = (
    CorpusWorkload(
        "set_max", wl.SetMax, "Deep Sets regression over a set of points", "val_mse",
        "minimize", (0.0, None), 12288, 512, 3e-3, ("adamw", "sgd", "lamb"), (16, 64), (0, 30),
        batch_product=True,
        description="an MLP 2-32-32 per point, mean-pooled, then 32-32-1: the largest product of coordinates "
        "among 12 points (3000 / 1000), standardised; val MSE",
    ),
    CorpusWorkload(
        "deep_tanh_checker", wl.DeepTanhCheckerboard, "deep narrow tanh MLP, 2-D checkerboard", "accuracy",
        "maximize", (0.0, 1.0), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="four tanh layers of width 24 on a 2 × 2 checkerboard (XOR) in the square (3000 / 1000); accuracy",
    ),
    CorpusWorkload(
        "huber_outliers", wl.HuberOutliers, "robust regression, Huber loss, MAE metric", "val_mae",
        "minimize", (0.0, None), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        batch_product=True,
        description="MLP 8-32-1 trained with the Huber loss on targets with Student-t (1.5 df) noise "
        "(2400 / 800); val MAE",
    ),
    CorpusWorkload(
        "pinball_quantile", wl.PinballQuantile, "quantile regression, pinball loss", "val_pinball",
        "minimize", (0.0, None), 12288, 512, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="MLP 6-32-1 predicting the 0.9 quantile of a heteroscedastic target (2400 / 800); "
        "val pinball loss",
    ),
)  # fmt: skip
# The ninth batch, defined in session 32 after its check (docs/benchmarks.md, "Behind by more than
# the noise") had been committed, and recorded with nothing scored.
_FRESH9 = (
    CorpusWorkload(
        "vae_digits", wl.VAEDigits, "variational autoencoder, negative ELBO", "val_nelbo",
        "minimize", (0.0, None), 12288, 512, 3e-3, ("adamw", "sgd", "lamb"), (16, 64), (0, 30),
        batch_product=True,
        description="VAE 64-32-(4+4)-32-64 with a Bernoulli decoder on sklearn load_digits pixels in [0,1] "
        "(1437 / 360); val negative ELBO in nats per image, fixed draws",
    ),
    CorpusWorkload(
        "listwise_ranking", wl.ListwiseRanking, "learning to rank, listwise loss, NDCG@5", "val_ndcg5",
        "maximize", (0.0, 1.0), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (16, 64), (0, 30),
        description="MLP 8-32-1 scoring 10 items per query, ListNet loss, graded relevance 0-3 "
        "(450 / 150 queries); val NDCG@5",
    ),
    CorpusWorkload(
        "string_tagger", wl.StringTagger, "byte-level convolutional sequence tagger", "val_error",
        "minimize", (0.0, 1.0), 12288, 512, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="embedding 16, two conv1d(32, 5), per-byte head: inside a string literal or not, on "
        "64-byte windows of stdlib textwrap/shlex/pprint (2400), configparser held out (600); val error per byte",
    ),
    CorpusWorkload(
        "mixture_density", wl.MixtureDensity, "mixture density network, conditional NLL", "val_nll",
        "minimize", (None, None), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        batch_product=True,
        description="MLP 1-32-32 with a 3-component Gaussian mixture head on a two-branch noisy curve "
        "(2400 / 800); val negative log-likelihood",
    ),
)  # fmt: skip
# Defined in session 33 after checks F and P (docs/benchmarks.md, "Plateau references") were
# committed; nothing scored on them before both ran.
_FRESH10 = (
    CorpusWorkload(
        "contrastive_retrieval", wl.ContrastiveRetrieval, "supervised contrastive metric learning, retrieval",
        "val_recall1", "maximize", (0.0, 1.0), 24576, 1024, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="MLP 20-64-16 embedding, supervised contrastive loss (temperature 0.2), on make_classification "
        "4 classes x 2 clusters, 5 informative of 20 features (1400 / 600); val recall@1 by cosine nearest neighbour",
    ),
    CorpusWorkload(
        "cox_survival", wl.CoxSurvival, "survival analysis, Cox partial likelihood, censored data", "val_cindex",
        "maximize", (0.0, 1.0), 12288, 512, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        batch_product=True,
        description="MLP 10-32-1 log-risk, Cox partial likelihood per batch, exponential event times with a "
        "non-linear log-rate, ~35% censored (1800 / 600); val Harrell's concordance index",
    ),
    CorpusWorkload(
        "fourier_image_fit", wl.FourierImageFit, "implicit neural representation, Fourier features, PSNR",
        "val_psnr", "maximize", (None, None), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (16, 64), (0, 30),
        batch_product=True,
        description="MLP 64-64-64-1 on 32 random Fourier features of pixel coordinates fitting a 48x48 generated "
        "image (half the pixels to train, half held out); val PSNR in dB",
    ),
    CorpusWorkload(
        "shapes_segmentation", wl.ShapesSegmentation, "fully convolutional semantic segmentation, IoU",
        "val_iou", "maximize", (0.0, 1.0), 12288, 512, 3e-3, ("adamw", "sgd", "lamb"), (16, 32), (0, 30),
        description="conv3x3(16)-conv3x3(16)-conv1x1 on 16x16 noisy images of a filled ellipse or rectangle "
        "beside distractor lines (2000 / 500); val foreground IoU",
    ),
)  # fmt: skip
# Defined in session 34 after check M (docs/benchmarks.md, "Stop at the measured best's time")
# was committed; nothing scored on them before it ran.
_FRESH11 = (
    CorpusWorkload(
        "flow_density", wl.FlowDensity, "normalizing flow, density estimation, NLL", "val_nll",
        "minimize", (None, None), 12288, 512, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        batch_product=True,
        description="RealNVP, 4 affine couplings with MLP 1-32-32-2 conditioners, on standardised two moons "
        "noise=0.06 (2000 / 1000); val negative log-likelihood in nats per point",
    ),
    CorpusWorkload(
        "pinn_oscillator", wl.PINNOscillator, "physics-informed network, ODE residual", "val_rel_l2",
        "minimize", (0.0, None), 49152, 2048, 1e-2, ("adamw", "lion", "lamb"), (32, 64), (0, 30),
        description="tanh MLP 1-32-32-1 solving u'' + 2*0.1*4 u' + 16 u = 0, u(0)=1, u'(0)=0 on [0, 2] from the "
        "residual at 2000 collocation times; val relative L2 error against the exact solution",
    ),
    CorpusWorkload(
        "attention_mil", wl.AttentionMIL, "multiple-instance learning, attention pooling", "accuracy",
        "maximize", (0.0, 1.0), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (16, 64), (0, 30),
        description="bags of 6 sklearn load_digits images, positive when they hold a 7 and a 1; encoder 64-32, attention "
        "pooling, head 32-2 (1500 / 500 bags from disjoint images); val bag accuracy",
    ),
    CorpusWorkload(
        "teacher_distillation", wl.TeacherDistillation, "knowledge distillation, KL to a teacher", "val_kl",
        "minimize", (0.0, None), 12288, 512, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        batch_product=True,
        description="student MLP 12-24-6 matching a fixed random teacher MLP 12-64-64-6's softmax on Gaussian "
        "inputs (2400 / 800); val KL divergence in nats",
    ),
)  # fmt: skip
# Defined in session 35 after check P (docs/benchmarks.md, "Pause the trials behind") was
# committed; nothing scored on them before it ran.
_FRESH12 = (
    CorpusWorkload(
        "made_digits", wl.MADEDigits, "autoregressive density estimation, masked autoencoder", "val_nll",
        "minimize", (0.0, None), 24576, 1024, 1e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        batch_product=True,
        description="MADE, one masked hidden layer of 128, on sklearn load_digits binarised at half intensity "
        "(1300 / 497); val negative log-likelihood in nats per image",
    ),
    CorpusWorkload(
        "moe_regression", wl.MixtureOfExperts, "mixture of experts, softmax gate", "val_mse",
        "minimize", (0.0, None), 24576, 1024, 1e-2, ("adamw", "sgd", "lion"), (16, 64), (0, 30),
        batch_product=True,
        description="four expert MLPs 3-16-1 mixed by a linear softmax gate, on a target that follows a "
        "different function in each quadrant of two inputs, noise std 0.1 (2400 / 800); val MSE",
    ),
    CorpusWorkload(
        "score_matching", wl.ScoreMatching, "denoising score matching", "val_dsm",
        "minimize", (0.0, None), 24576, 1024, 1e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        batch_product=True,
        description="MLP 2-64-64-2 score of eight Gaussians on a ring blurred by noise std 0.3 (4000 points / "
        "1000 fixed noisy pairs); val denoising score-matching loss",
    ),
    CorpusWorkload(
        "binary_weight_digits", wl.BinaryWeightDigits, "binary weights, straight-through estimator", "accuracy",
        "maximize", (0.0, 1.0), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (16, 64), (0, 30),
        description="MLP 64-128-10 with sign(w) x mean|w| weights in the forward pass, gradients straight through "
        "to the latent weights, on sklearn load_digits (1257 / 540); val accuracy",
    ),
)  # fmt: skip
# Written in session 36 while check Q (docs/benchmarks.md, "Pause behind, then promote") was
# drafted, sized on five runs each; committed and recorded after it; nothing scored on them before
# it ran.
_FRESH13 = (
    CorpusWorkload(
        "mixup_digits", wl.MixupDigits, "mixup data augmentation, soft labels", "accuracy",
        "maximize", (0.0, 1.0), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (16, 64), (0, 30),
        batch_product=True,
        description="MLP 64-64-10 on sklearn load_digits trained on Beta(0.4, 0.4) mixtures of image pairs and "
        "their one-hot labels (1257 / 540); val accuracy on unmixed images",
    ),
    CorpusWorkload(
        "adversarial_digits", wl.AdversarialDigits, "adversarial training, FGSM", "val_robust_accuracy",
        "maximize", (0.0, 1.0), 12288, 512, 3e-3, ("adamw", "sgd", "lamb"), (16, 64), (0, 30),
        description="MLP 64-128-10 on sklearn load_digits trained on FGSM images (radius 0.1 in [0, 1] pixels) "
        "(1257 / 540); val accuracy on FGSM images against the current model",
    ),
    CorpusWorkload(
        "ordinal_levels", wl.OrdinalLevels, "ordinal regression, cumulative link", "val_mae",
        "minimize", (0.0, None), 24576, 1024, 1e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        batch_product=True,
        description="MLP 8-32-1 score with five ordered learned thresholds (CORAL) on six quantile levels of a "
        "noisy non-linear function of 8 Gaussian inputs (2400 / 800); val mean absolute error in levels",
    ),
    CorpusWorkload(
        "skipgram_text", wl.SkipGramText, "word embeddings, skip-gram with negative sampling", "val_nsloss",
        "minimize", (0.0, None), 24576, 1024, 1e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        batch_product=True,
        description="32-dimensional embeddings of the 600 commonest words of four stdlib files, window 2, 5 "
        "unigram^0.75 negatives (pairs from two other stdlib files held out, fixed negatives); val "
        "negative-sampling loss",
    ),
)  # fmt: skip
# Written and recorded in session 36 with nothing scored on them (sized on five runs each), after
# check Q's runs and the pause_phase exploration: kept for the next check, written before it runs.
_FRESH14 = (
    CorpusWorkload(
        "adding_problem", wl.AddingProblem, "long-range memory, GRU, the adding problem", "val_mse",
        "minimize", (0.0, None), 12288, 512, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="GRU 2-32 and a linear head on 20 steps of (uniform value, marker), two markers; regresses the "
        "sum of the marked values (4000 / 500); val MSE",
    ),
    CorpusWorkload(
        "ctc_alignment", wl.CTCAlignment, "sequence labelling without alignment, CTC loss", "val_ctc",
        "minimize", (0.0, None), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (64, 128), (0, 30),
        description="bidirectional GRU 7-24 and a linear head over 20 noisy frames holding 3-4 symbols of 6 for "
        "random durations (3000 / 500); val CTC loss per sequence",
    ),
    CorpusWorkload(
        "hinge_margin", wl.HingeMargin, "large-margin classifier, squared hinge loss", "accuracy",
        "maximize", (0.0, 1.0), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (16, 64), (0, 30),
        description="MLP 20-32-1 with the squared hinge loss on make_classification, 6 informative of 20 features, "
        "10% flipped labels (2100 / 900); val accuracy",
    ),
    CorpusWorkload(
        "gan_ring", wl.GANRing, "generative adversarial network, gradient reversal", "val_energy",
        "minimize", (0.0, None), 12288, 512, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="generator MLP 4-32-32-2 against discriminator MLP 2-32-32-1 in one backward pass through a "
        "gradient-reversal layer, on a ring of eight Gaussians (4000 / 1000); val energy distance to held-out points",
    ),
)  # fmt: skip
# Written and recorded in session 38 with nothing scored on them (sized on a few runs each), after
# check T scored batch 14: kept for the next check, written before it runs.
_FRESH15 = (
    CorpusWorkload(
        "multitask_heads", wl.MultiTaskHeads, "multi-task learning, shared trunk, two heads", "val_loss",
        "minimize", (0.0, None), 12288, 512, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="MLP trunk 10-32-32 with a 3-class head and a regression head on make_classification features "
        "(2100 / 900); val cross-entropy + MSE",
    ),
    CorpusWorkload(
        "reinforce_bandit", wl.ReinforceBandit, "policy gradient, contextual bandit, sampled rewards", "val_reward",
        "maximize", (0.2, 0.8), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="softmax policy MLP 10-32-5 trained by REINFORCE with a batch-mean baseline; the context's class "
        "pays 1 with probability 0.8, other arms 0.2 (2100 / 900); val expected reward",
    ),
    CorpusWorkload(
        "feature_tokens", wl.FeatureTokens, "transformer over tabular feature tokens (FT-Transformer)", "val_loss",
        "minimize", (0.0, None), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="12 features as 16-wide tokens plus a class token, one encoder layer (2 heads), on a 3-class "
        "make_classification problem (2100 / 900); val cross-entropy",
    ),
    CorpusWorkload(
        "siamese_digits", wl.SiameseDigits, "verification with a shared encoder (siamese)", "accuracy",
        "maximize", (0.0, 1.0), 12288, 512, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="encoder MLP 64-32-16 on both 8x8 digits of a pair, a logistic unit on |code difference| "
        "(12000 pairs / 2000 held-out pairs, half matching); val accuracy",
    ),
)  # fmt: skip
_FRESH16 = (
    CorpusWorkload(
        "td_values", wl.TDValues, "policy evaluation by temporal differences (bootstrapped targets)",
        "val_value_error", "minimize", (0.0, None), 12288, 512, 1e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="MLP 16-32-1 learning a fixed policy's values on a random 64-state chain (discount 0.9) by "
        "semi-gradient TD(0) from 20,000 sampled transitions; val squared value error over the values' variance",
    ),
    CorpusWorkload(
        "transe_triples", wl.TransETriples, "knowledge-graph embedding, margin ranking (TransE)", "val_mrr",
        "maximize", (0.0, 1.0), 12288, 512, 3e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="120 entities and 6 relations as 16-wide embeddings, one corrupted tail a triple, on a generated "
        "graph (600 / 120 triples); val mean reciprocal rank of the true tail",
    ),
    CorpusWorkload(
        "hypernet_sines", wl.HypernetSines, "hypernetwork writing a small network's weights", "val_mse",
        "minimize", (0.0, None), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="MLP 3-32 writing the 97 weights of a 1-32-1 tanh network per task a sin(x + phase) "
        "(8000 / 2000 (task, x) pairs, held-out tasks); val MSE over the targets' variance",
    ),
    CorpusWorkload(
        "deep_linear_stairs", wl.DeepLinearStairs, "deep linear network from a small start (saddle to saddle)",
        "val_mse", "minimize", (0.0, None), 12288, 512, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="three bias-free linear layers of width 32 at 5% of the usual init, learning a rank-4 "
        "16 -> 16 map with singular values 4, 2, 1, 0.5 (4096 / 1024); val MSE over the targets' variance",
    ),
)  # fmt: skip
_FRESH17 = (
    CorpusWorkload(
        "fm_clicks", wl.FactorisationClicks, "click-through prediction, factorisation machine", "val_logloss",
        "minimize", (0.0, None), 12288, 512, 1e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="six categorical fields (95 values) with biases and 8-wide embeddings, every pairwise "
        "dot product, on clicks generated by a rank-3 machine (20,000 / 4,000 impressions); val log loss",
    ),
    CorpusWorkload(
        "pu_learning", wl.PositiveUnlabelled, "positive-unlabelled learning, non-negative risk (nnPU)",
        "val_error", "minimize", (0.0, 1.0), 12288, 512, 1e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="MLP 20-32-1 on 1,000 labelled positives and 8,000 unlabelled points (prior 0.4) of "
        "make_classification, sigmoid-loss nnPU risk; val error against the true labels (2,000)",
    ),
    CorpusWorkload(
        "ode_spiral", wl.NeuralODESpiral, "continuous-depth network (neural ODE, unrolled RK4)", "val_mse",
        "minimize", (0.0, None), 12288, 512, 1e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="MLP 2-32-2 vector field integrated by 8 RK4 steps to time 1, fitted to a cubic "
        "spiral's end points (4,000 / 1,000 starts); val MSE over the targets' variance",
    ),
    CorpusWorkload(
        "modular_sums", wl.ModularSums, "modular arithmetic from part of its table (grokking task)",
        "val_error", "minimize", (0.0, 1.0), 12288, 512, 1e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="24-wide embeddings of a and b and an MLP 48-64-31 naming (a + b) mod 31, trained on 45% "
        "of the 961 sums; val error on the rest",
    ),
)  # fmt: skip
_FRESH18 = (
    CorpusWorkload(
        "masked_bytes", wl.MaskedBytes, "masked byte modelling, transformer encoder (BERT objective)",
        "val_masked_loss", "minimize", (0.0, None), 24576, 1024, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="one-layer transformer encoder (width 32, 2 heads) naming the 15% masked bytes of 32-byte "
        "windows of stdlib source (shutil, tempfile, pprint; held out: inspect); val loss per masked byte",
    ),
    CorpusWorkload(
        "lru_digits", wl.LinearRecurrentDigits, "linear recurrent unit, digits pixel by pixel", "val_error",
        "minimize", (0.0, 1.0), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="two diagonal linear recurrences of width 32 with learned decays and a GELU MLP between, "
        "reading sklearn's 8x8 digits as 64-pixel sequences (1257 / 540); val error",
    ),
    CorpusWorkload(
        "gumbel_vae_digits", wl.GumbelVAEDigits, "discrete-latent VAE, Gumbel-softmax relaxation", "val_nelbo",
        "minimize", (0.0, None), 12288, 512, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="MLP encoder to 8 categorical variables of 8 values, relaxed draws at temperature 0.7, MLP "
        "Bernoulli decoder, on binarised 8x8 digits (1437 / 360); val negative ELBO with fixed draws",
    ),
    CorpusWorkload(
        "hamiltonian_pendulum", wl.HamiltonianPendulum, "Hamiltonian neural network (symplectic gradient)",
        "val_mse", "minimize", (0.0, None), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="MLP 2-64-64-1 energy whose symplectic gradient, by autograd, is fitted to a nonlinear "
        "pendulum's noisy derivatives (4000 / 1000 states); val MSE over the targets' variance",
    ),
)  # fmt: skip
_FRESH19 = (
    CorpusWorkload(
        "induction_heads", wl.InductionHeads, "in-context copying, attention-only transformer (induction heads)",
        "val_copy_loss", "minimize", (0.0, None), 49152, 2048, 1e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="two causal attention-only layers (width 32, 2 heads) on 40-token sequences holding a random "
        "12-token block twice at a random offset; val loss per token on the repeat",
    ),
    CorpusWorkload(
        "link_prediction", wl.LinkPrediction, "link prediction, graph autoencoder (GCN encoder)", "val_auc",
        "maximize", (0.0, 1.0), 12288, 512, 1e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="two-layer GCN (width 32) on a 600-node random geometric graph on the sphere with noisy "
        "projected features, dot-product scores; val ROC AUC of 15% held-out edges against 4 non-edges each",
    ),
    CorpusWorkload(
        "bayes_by_backprop", wl.BayesByBackprop, "Bayesian neural network, variational weights", "val_nll",
        "minimize", (None, None), 12288, 512, 3e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="MLP 4-32-1 with a Gaussian per weight (one reparameterised draw a step), learned noise, "
        "KL to N(0, 1); val Gaussian NLL of the mean network (2,000 / 1,000 points)",
    ),
    CorpusWorkload(
        "tcn_mackey_glass", wl.DilatedTCNForecast, "chaotic series forecasting, dilated causal convolutions",
        "val_mse", "minimize", (0.0, None), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="four residual causal convolutions (width 16, dilations 1-8) reading 64 values of the "
        "Mackey-Glass series read with noise, 40 steps ahead; val MSE over the targets' variance",
    ),
)  # fmt: skip
_FRESH20 = (
    CorpusWorkload(
        "long_addition", wl.LongAddition, "long addition, sequence tagging with a bidirectional GRU", "val_exact",
        "maximize", (0.0, 1.0), 32768, 1024, 1e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="bidirectional GRU (width 32) writing the 9 digits of the sum of two 8-digit numbers read "
        "most significant first; val exact-match accuracy over 2,000 fixed pairs",
    ),
    CorpusWorkload(
        "lista_sparse_coding", wl.LISTASparseCoding, "sparse coding, unrolled ISTA (LISTA)", "val_nmse",
        "minimize", (0.0, None), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="six soft-threshold layers started at ISTA's weights recovering 4-sparse codes of 64 atoms "
        "from 32 noisy observations; val normalised MSE of the code",
    ),
    CorpusWorkload(
        "pointcloud_shapes", wl.PointCloudShapes, "point-cloud classification, PointNet", "val_error",
        "minimize", (0.0, 1.0), 24576, 1024, 1e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="shared per-point MLP 3-32-64, max-pooled, then 64-32-5, on 32 noisy points of five "
        "stretched, rotated shapes; val error over 1,000 fixed clouds",
    ),
    CorpusWorkload(
        "inpainting_digits", wl.InpaintingDigits, "image inpainting, convolutional network", "val_psnr",
        "maximize", (None, None), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="three 3x3 convolutions (width 32) filling a blanked 4x4 square of sklearn's 8x8 digits "
        "from the image and its mask; val PSNR of the filled squares in dB",
    ),
)  # fmt: skip
_FRESH21 = (
    CorpusWorkload(
        "deeponet_antiderivative", wl.DeepONetAntiderivative, "operator learning, DeepONet", "val_rel_l2",
        "minimize", (0.0, None), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="branch MLP on 32 sensor values of a random 4-mode Fourier function, trunk MLP on 16 query "
        "points, their dot product the antiderivative; val relative L2 error over 1,000 fixed functions",
    ),
    CorpusWorkload(
        "life_next_step", wl.LifeNextStep, "cellular automaton rule, convolutional network", "val_cell_error",
        "minimize", (0.0, 1.0), 24576, 1024, 2e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="circular 3x3 convolution to 8 channels then two 1x1 convolutions predicting one step of "
        "Conway's Game of Life on 10x10 toroidal boards; val cell error over 500 fixed boards",
    ),
    CorpusWorkload(
        "brier_multiclass", wl.BrierMulticlass, "probabilistic classification, Brier score", "val_brier",
        "minimize", (0.0, 2.0), 12288, 512, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="MLP 20-64-64-5 on five classes of sklearn make_classification with 5% flipped labels; val "
        "Brier score over 1,000 fixed points",
    ),
    CorpusWorkload(
        "chirp_keywords", wl.ChirpKeywords, "keyword spotting on spectrograms, 2D CNN", "val_error",
        "minimize", (0.0, 1.0), 24576, 1024, 1e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="two 3x3 convolutions (8, 16 channels), averaged, linear, on log spectrograms of six kinds "
        "of synthetic chirps and tones in noise; val error over 1,000 fixed sounds",
    ),
)  # fmt: skip
# Batches 22 and 23: defined by a helper session not told of check L (docs/benchmarks.md), after it was
# committed; recorded after it, with nothing else running.
_FRESH22 = (
    CorpusWorkload(
        "dyck_brackets", wl.DyckBrackets, "bracket language stack, Elman RNN tagging every step",
        "val_exact", "maximize", (0.0, 1.0), 24576, 1024, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="one-layer tanh RNN (width 32) naming after each of 24 symbols of a random balanced string "
        "over ( ) [ ] the innermost open bracket (none, round, square), so it must keep a stack; val share of "
        "strings with every step right over 1,000 fixed strings",
    ),
    CorpusWorkload(
        "protonet_fewshot", wl.PrototypicalFewShot, "few-shot classification, prototypical network, episodes",
        "val_fewshot_accuracy", "maximize", (0.0, 1.0), 12288, 512, 3e-3, ("adamw", "lion", "lamb"), (32, 64), (0, 30),
        description="MLP 64-64-32 encoder on 300 generated classes seen through tanh of a random mix of an "
        "8-dim class latent and 8 nuisance values, episodes of micro-batch/4 of 240 classes (2 support, 2 query "
        "each); val accuracy on 500 fixed 5-way 1-shot episodes of the 60 held-out classes",
    ),
    CorpusWorkload(
        "crf_tagger", wl.CRFTagger, "structured prediction, linear-chain CRF, Viterbi decoding", "val_error",
        "minimize", (0.0, 1.0), 12288, 512, 1e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="MLP 8-32-6 emissions, learned 6x6 transitions, CRF NLL per token on 24-step sequences of a "
        "sticky six-state chain seen in Gaussian noise (8,000 / 1,000); val token error of the Viterbi path",
    ),
    CorpusWorkload(
        "rbm_digits", wl.RBMDigits, "energy-based model, restricted Boltzmann machine, contrastive divergence",
        "val_pseudo_nll", "minimize", (0.0, None), 24576, 1024, 1e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="RBM 64 visible x 32 hidden binary units trained by CD-1 on sklearn load_digits binarised "
        "(1437 / 360); val pseudo-negative-log-likelihood over all 64 pixels, nats per image",
    ),
)  # fmt: skip
_FRESH23 = (
    CorpusWorkload(
        "vit_digits", wl.ViTDigits, "vision transformer on image patches", "val_loss",
        "minimize", (0.0, None), 12288, 512, 3e-3, ("adamw", "lion", "lamb"), (32, 64), (0, 30),
        description="16 patches of 2x2 pixels embedded to 32 with a class token, two pre-norm encoder layers "
        "(4 heads), on sklearn load_digits (1437 / 360); val cross-entropy",
    ),
    CorpusWorkload(
        "kan_regression", wl.KANRegression, "Kolmogorov-Arnold network (radial-basis KAN), symbolic target",
        "val_mse", "minimize", (0.0, None), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="KAN 4-8-1 with 8 Gaussian bumps per input and a SiLU base, fitting exp(sin(pi x1) + x2^2) "
        "+ sin(pi x3 x4) with noise 0.05, standardised (4,000 / 1,000); val MSE",
    ),
    CorpusWorkload(
        "spot_localisation", wl.SpotLocalisation, "object localisation, heat map and soft-argmax", "val_distance",
        "minimize", (0.0, None), 12288, 512, 3e-3, ("adamw", "lion", "lamb"), (32, 64), (0, 30),
        description="three 3x3 convolutions (16, 16, 1) to a heat map whose softmax-weighted coordinates find "
        "a plus sign among three broken ones on 16x16 noisy images (6,000 / 1,000); val mean distance in pixels",
    ),
    CorpusWorkload(
        "graph_families", wl.GraphFamilies, "graph classification, graph isomorphism network", "accuracy",
        "maximize", (0.0, 1.0), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="three GIN layers (width 32, LayerNorm) from identical node features, mean read-outs, on "
        "16-node graphs of four random families with about 30 edges each (Erdos-Renyi, Barabasi-Albert, "
        "Watts-Strogatz, two blocks; 6,000 / 1,000); val accuracy",
    ),
)  # fmt: skip
# Batches 24 and 25: defined by a helper session not told of any check, in session 44.
_FRESH24 = (
    CorpusWorkload(
        "number_words", wl.NumberWords, "sequence-to-sequence translation, GRU encoder-decoder, greedy decoding",
        "val_exact", "maximize", (0.0, 1.0), 24576, 1024, 2e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="GRU encoder (width 64) over the six digits of a number below a million, GRU decoder (width "
        "64) writing it in English words (up to 9 of 30, then an end token) by teacher forcing; val exact-match "
        "accuracy of greedy decoding over 1,000 fixed numbers (8,000 to train on)",
    ),
    CorpusWorkload(
        "staircase_boolean", wl.StaircaseBoolean, "staircase Boolean function, MLP, plateaus one after another",
        "val_mse", "minimize", (0.0, None), 24576, 1024, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="MLP 24-128-128-1 on x1 + x1x2 + x1x2x3 + x1x2x3x4 + x1x2x3x4x5 of 24 random +-1 bits "
        "(8,000 / 1,000); val MSE (5 for a constant guess)",
    ),
    CorpusWorkload(
        "focal_longtail", wl.FocalLongTail, "long-tailed classification, focal loss, balanced accuracy",
        "val_balanced_accuracy", "maximize", (0.0, 1.0), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="MLP 20-64-64-6 with the focal loss (gamma 2) on six classes of make_classification with "
        "shares 50 ... 2%, 2% flipped labels (5,600 / 2,400); val balanced accuracy (mean per-class recall)",
    ),
    CorpusWorkload(
        "svgp_regression", wl.SparseGPRegression, "sparse variational Gaussian process, inducing points, ELBO",
        "val_nll", "minimize", (None, None), 24576, 1024, 3e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="SVGP with 32 inducing points, ARD RBF kernel, learned noise, whitened posterior, negative "
        "ELBO per point on sin(2 x1) cos(x2) + 0.3 x3^2 with noise 0.1, standardised (4,000 / 1,000); val "
        "predictive Gaussian NLL per point",
    ),
)  # fmt: skip
_FRESH25 = (
    CorpusWorkload(
        "consistency_digits", wl.ConsistencyDigits, "semi-supervised learning, consistency regularisation (Pi-model)",
        "accuracy", "maximize", (0.0, 1.0), 12288, 512, 1e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="MLP 64-128-128-10 with dropout 0.2 on sklearn load_digits with 10 labels a class kept (100 "
        "of 1,257), cross-entropy on labelled images plus 5 x the squared gap of two noisy views' softmax on "
        "unlabelled ones; val accuracy over 540 images",
    ),
    CorpusWorkload(
        "superres_digits", wl.SuperResolutionDigits, "image super-resolution, sub-pixel convolution", "val_psnr",
        "maximize", (None, None), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="three 3x3 convolutions (32, 32, 4) and a PixelShuffle added to the enlarged input, restoring "
        "sklearn's 8x8 digits from their 4x4 averages (1,437 / 360); val PSNR in dB",
    ),
    CorpusWorkload(
        "listops_lstm", wl.ListOpsLSTM, "nested list operations (ListOps), LSTM on the last state", "val_error",
        "minimize", (0.0, 1.0), 24576, 1024, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="embedding 32, LSTM width 64 and a linear head naming the value of up-to-three-level "
        "MAX / MIN / SM expressions of at most 40 tokens (8,000 / 1,000); val error",
    ),
    CorpusWorkload(
        "spiking_digits", wl.SpikingDigits, "spiking neural network, surrogate gradients", "accuracy",
        "maximize", (0.0, 1.0), 12288, 512, 1e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="128 leaky integrate-and-fire neurons over 12 steps of constant input from sklearn's 8x8 "
        "digits, 10 leaky non-spiking outputs averaged over time, fast-sigmoid surrogate gradient (1,257 / 540); "
        "val accuracy",
    ),
)  # fmt: skip
_FRESH26 = (
    CorpusWorkload(
        "capsule_digits", wl.CapsuleDigits, "capsule network, dynamic routing by agreement, margin loss",
        "val_margin", "minimize", (0.0, None), 12288, 512, 1e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="conv3x3(32) and conv3x3 to 128 primary capsules (8 types x 6 wide), 10 class capsules "
        "(8 wide) by 3 rounds of routing by agreement, on sklearn load_digits (1,257 / 540); val margin loss",
    ),
    CorpusWorkload(
        "hopfield_recall", wl.HopfieldRecall, "associative memory, modern Hopfield layer, pattern completion",
        "val_overlap", "maximize", (-1.0, 1.0), 196608, 8192, 3e-3, ("adamw", "lamb", "lion"), (32, 64), (0, 30),
        description="modern Hopfield layer whose only weights are 128 stored 128-bit patterns and an inverse "
        "temperature, two softmax updates, recalling 100 random +-1 patterns from cues with 25% of bits flipped "
        "(8,000 / 1,000 cues); val overlap of the sign of the state with the pattern (cue alone 0.5)",
    ),
    CorpusWorkload(
        "koopman_duffing", wl.KoopmanDuffing, "Koopman autoencoder, linear latent dynamics, multi-step forecast",
        "val_mse", "minimize", (0.0, None), 49152, 2048, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="encoder MLP 2-32-32-8, one learned 8 x 8 linear step, decoder MLP 8-32-32-2 forecasting 16 "
        "steps of 0.25 of a damped double-well Duffing oscillator from its start (4,000 / 1,000 starts); val "
        "MSE over the targets' variance",
    ),
    CorpusWorkload(
        "spatial_transformer_digits", wl.SpatialTransformerDigits,
        "spatial transformer network, learned affine glimpse", "accuracy", "maximize", (0.0, 1.0), 98304, 4096,
        3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="localisation MLP 256-32-6 giving an affine map, bilinear 8x8 glimpse, MLP 64-64-10, on "
        "sklearn load_digits moved, turned (+-40 degrees) and scaled on a noisy 16x16 canvas, a fresh placement "
        "each draw (1,257 / 540 placed once); val accuracy",
    ),
)  # fmt: skip
_FRESH27 = (
    CorpusWorkload(
        "jigsaw_sinkhorn", wl.JigsawSinkhorn, "permutation learning, Sinkhorn normalisation (jigsaw puzzles)",
        "val_placement", "maximize", (0.0, 1.0), 24576, 1024, 1e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="pieces embedded by an MLP 4-32-32 with the mean embedding as context, MLP 64-32-16 scoring "
        "each against 16 places, 10 rounds of log-space Sinkhorn, on sklearn load_digits cut into 16 pieces of "
        "2x2 pixels and shuffled (1,257 reshuffled each draw / 540 shuffled once); val share of places given "
        "their own piece by the Hungarian assignment",
    ),
    CorpusWorkload(
        "equilibrium_classifier", wl.EquilibriumClassifier,
        "deep equilibrium model, fixed-point iteration, Jacobian-free backprop", "val_loss", "minimize",
        (0.0, None), 49152, 2048, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="one tanh layer of width 48 (recurrent weight scaled to Frobenius norm 0.9) iterated 24 "
        "times without gradients and 2 with, a linear head, on a 4-class make_classification problem (16 "
        "features, 2 clusters a class; 2,800 / 1,200); val cross-entropy",
    ),
    CorpusWorkload(
        "hermite_single_index", wl.HermiteSingleIndex,
        "single-index model of information exponent 3, plateau then drop", "val_mse", "minimize", (0.0, None),
        196608, 8192, 2e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="MLP 32-64-1 learning He3(w.x)/sqrt(6) of a hidden direction w in 32 Gaussian dimensions, "
        "noise 0.1 (8,000 / 1,000); val MSE (about 0.9 before w is found, noise floor 0.01)",
    ),
    CorpusWorkload(
        "deep_cca_views", wl.DeepCCAViews, "deep canonical correlation analysis, two views of a shared latent",
        "val_cca", "maximize", (0.0, 1.0), 49152, 2048, 1e-3, ("adamw", "sgd", "lamb"), (64, 128), (0, 30),
        description="an MLP 16-32-32-4 per view maximising the sum of squared canonical correlations of the "
        "codes in each micro-batch, on two views made by random tanh networks from a shared 4-dim latent, 4 "
        "nuisance latents each and noise 0.1 (4,000 / 1,000 pairs); val mean canonical correlation",
    ),
)  # fmt: skip
# Batch 28: defined by a helper session told of no check, in session 46.
_FRESH28 = (
    CorpusWorkload(
        "echo_state_readout", wl.EchoStateReadout, "reservoir computing, echo state network readout (NARMA-10)",
        "val_nrmse", "minimize", (0.0, None), 49152, 2048, 3e-3, ("adamw", "lion", "lamb"), (32, 64), (0, 30),
        description="fixed random tanh reservoir of 200 units (spectral radius 0.9) driven by the NARMA-10 "
        "input, a trained linear readout of its standardised states giving the system's output (4,000 / the "
        "1,000 steps after); val RMSE over the targets' std (ridge-regression readout 0.149)",
    ),
    CorpusWorkload(
        "ridge_meta_sines", wl.RidgeMetaSines, "meta-learning, differentiable closed-form ridge head (R2-D2)",
        "val_mse", "minimize", (0.0, None), 12288, 512, 1e-2, ("adamw", "lion", "lamb"), (32, 64), (0, 30),
        description="MLP 1-40-40-40 features and a ridge head (learned penalty) solved in closed form on 10 "
        "support points of a sine task a sin(x + phase), trained by the MSE on 10 query points (8,000 / 1,000 "
        "tasks); val query MSE (4.14 for predicting 0)",
    ),
    CorpusWorkload(
        "private_digits", wl.PrivateDigits, "differentially private SGD, per-example clipping and Gaussian noise",
        "val_loss", "minimize", (0.0, None), 12288, 512, 1e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="MLP 64-64-10 on sklearn load_digits (1,257 / 540), each update the mean of per-example "
        "gradients clipped to norm 1 plus Gaussian noise of std 1 over the micro-batch size; val cross-entropy",
    ),
    CorpusWorkload(
        "hmm_sequences", wl.HMMSequences, "hidden Markov model, gradient descent on the forward algorithm",
        "val_nll", "minimize", (0.0, None), 12288, 512, 1e-1, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="8-state HMM (softmax start, transition and emission tables started near uniform) fitted by "
        "its exact likelihood to sequences of 24 symbols out of 8 from a hidden 6-state HMM that mostly steps "
        "round a cycle (4,000 / 1,000); val negative log-likelihood per symbol in nats (unigram 1.86, true HMM "
        "1.44)",
    ),
)  # fmt: skip
# Batch 29: defined by a helper session told of no check, in session 47.
_FRESH29 = (
    CorpusWorkload(
        "ica_sources", wl.ICASources,
        "independent component analysis, maximum-likelihood unmixing (blind source separation)", "amari_index",
        "minimize", (0.0, 1.0), 49152, 2048, 3e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="one 8 x 8 unmixing matrix W trained by the negative log-likelihood mean log cosh(W x) - "
        "log|det W| / 8 on 8 super-Gaussian sources (4 Laplace, 4 sparse) mixed by a fixed matrix A of "
        "singular values 3 to 0.2 (4,000 samples; 1,000 more for val_nll); Amari index of W A (0 a perfect "
        "separation, 0.36 at the start)",
    ),
    CorpusWorkload(
        "gmm_fit", wl.GaussianMixtureFit, "Gaussian mixture model, maximum likelihood by gradient descent (no EM)",
        "val_nll", "minimize", (None, None), 49152, 2048, 1e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="8 full-covariance components (softmax weights, means started within 0.1 of the centre, "
        "Cholesky factors with a log-diagonal) fitted by the exact log-likelihood to standardised 2-D points "
        "from 6 elongated Gaussians (4,000 / 1,000); val negative log-likelihood per point in nats (one "
        "Gaussian 2.50, EM's 6-component fit 1.50)",
    ),
    CorpusWorkload(
        "pendulum_control", wl.PendulumControl,
        "policy optimisation through a differentiable simulator (backpropagation through the dynamics)",
        "val_cost", "minimize", (0.0, None), 12288, 512, 1e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="MLP 3-32-1 policy (torque limit 8) steering a damped pendulum (gravity 10) towards "
        "upright over 20 semi-implicit Euler steps of 0.1 s, trained by the rollout's mean cost 1 - cos "
        "angle + 0.01 speed^2 + 0.001 torque^2 through the simulator (4,000 / 500 start states); val cost "
        "(1.50 with no torque)",
    ),
    CorpusWorkload(
        "poincare_tree", wl.PoincareTree, "hyperbolic embeddings of a hierarchy (Poincaré ball)",
        "map", "maximize", (0.0, 1.0), 49152, 2048, 1e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="400 nodes of a random tree (1 to 5 children a node, depth 7) embedded in the 4-D "
        "Poincaré ball through the exponential map at the origin, each of the 2,549 (node, ancestor) pairs "
        "trained by a softmax over -distance against 16 unrelated random nodes; mean average precision of "
        "reconstructing every node's ancestors and descendants (0.045 at the start)",
    ),
)  # fmt: skip
# Batch 30: defined by a helper session told of no check, in session 48.
_FRESH30 = (
    CorpusWorkload(
        "hawkes_event_times", wl.HawkesEventTimes,
        "neural temporal point process, event times of a self-exciting (Hawkes) process", "val_nll",
        "minimize", (None, None), 12288, 512, 1e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="GRU width 32 over the gaps between events giving the next gap's density as a mixture of "
        "4 log-normals, trained by the exact likelihood on sequences of 24 events from a Hawkes process with "
        "an exponential kernel in one of two hidden regimes (calm or bursty; 4,000 / 500); val negative "
        "log-likelihood per event in nats (3.4 at the start, best exponential gaps 1.21, the true process 0.79)",
    ),
    CorpusWorkload(
        "majority_ring_ca", wl.MajorityRingCA,
        "neural cellular automaton, density (majority) classification on a ring", "val_error",
        "minimize", (0.0, 1.0), 12288, 512, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="33 cells of 6 channels (a fixed bit, 4 hidden, a logit), 6 synchronous residual updates "
        "by a shared MLP 42-24-5 of the 7 cells around each, trained by every cell's cross-entropy against "
        "the ring's majority over the last 3 steps, on rings whose share of ones is uniform in [0.3, 0.7] "
        "(4,000 / 500); val share of rings not wholly classified right after the last step (0.50 at the start)",
    ),
    CorpusWorkload(
        "ground_state_vmc", wl.GroundStateVMC,
        "variational quantum ground state, neural wavefunction, importance-sampled energy", "overlap",
        "maximize", (0.0, 1.0), 49152, 2048, 3e-3, ("adamw", "lamb", "lion"), (32, 64), (0, 30),
        description="psi = exp(MLP 2-32-32-1 tanh) minimising the energy of a particle in a tilted, coupled 2-D "
        "double well, estimated on each micro-batch of fresh points (half Gaussian over the wells, half "
        "uniform over the square) by self-normalised importance weights; overlap with the exact ground state "
        "of the finite-difference Hamiltonian on a 64 x 64 grid over [-5, 5]^2 (0.12 for a flat psi)",
    ),
    CorpusWorkload(
        "learned_index_cdf", wl.LearnedIndexCDF,
        "learned index, monotone model of the keys' cumulative distribution", "search_steps",
        "minimize", (0.0, None), 49152, 2048, 1e-1, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="mixture of 64 sigmoid steps (softmax weights, exp slopes) regressing rank / (N - 1) of "
        "10,000 skewed sorted keys (12 tight clusters, an exponential decay, a uniform share) by MSE; mean "
        "binary-search steps log2(1 + |position error|) over all keys (10.4 at the start)",
    ),
)  # fmt: skip
# Batch 31: defined by a helper session told of no check, in session 48.
_FRESH31 = (
    CorpusWorkload(
        "qam_equaliser", wl.QAMEqualiser,
        "digital communications, neural equaliser of a dispersive, saturating channel (16-QAM)", "val_ser",
        "minimize", (0.0, 1.0), 49152, 2048, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="MLP 22-64-64-16 reading 11 received complex samples around each 16-QAM symbol after a "
        "6-tap complex channel, a Saleh power amplifier driven into compression and white noise at 24 dB SNR, "
        "trained by cross-entropy over the 16 symbols (16,000 / 4,000 symbols of one stream); val symbol error "
        "rate (0.94 at chance)",
    ),
    CorpusWorkload(
        "spo_shortest_path", wl.SPOShortestPath,
        "decision-focused learning, predict-then-optimise with the SPO+ loss (shortest paths)", "val_regret",
        "minimize", (0.0, None), 24576, 1024, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="MLP 5-64-40 predicting the 40 edge costs of a 5 x 5 grid (moves right or down) from 5 "
        "features, costs a degree-6 polynomial of them times noise in [0.8, 1.2], trained by the SPO+ "
        "surrogate through exact dynamic-programming shortest paths (2,000 / 1,000 instances); val "
        "normalised regret of the chosen paths (0.25 at the start, 0.019 for the true expected costs)",
    ),
    CorpusWorkload(
        "cluster_potential", wl.ClusterPotential,
        "machine-learned interatomic potential, energy and force matching (Behler-Parrinello)", "val_force_mae",
        "minimize", (0.0, None), 12288, 512, 3e-2, ("adamw", "lamb", "lion"), (32, 64), (0, 30),
        description="atomic MLP 12-32-32-1 (SiLU) on 12 radial symmetry functions of each atom, summed to the "
        "energy, forces by autograd, fitted by per-atom energy and force MSE to 8-atom 3-D clusters of a "
        "many-body Gupta potential (3,000 / 500); val mean absolute error of the force components (0.91 at "
        "the start, mean |force| 0.89)",
    ),
    CorpusWorkload(
        "mnar_regression", wl.MissingNotAtRandom,
        "tabular regression with values missing not at random, mask-aware MLP with learned fill-ins", "val_r2",
        "maximize", (None, 1.0), 49152, 2048, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="MLP 24-64-64-1 on 12 correlated Gaussian features (larger values likelier missing, 12% "
        "missing in all; each replaced by a learned fill-in, beside 12 missingness indicators) regressing a "
        "standardised nonlinear target of 7 of them plus noise by MSE (6,000 / 1,000 rows); val R² (0.94 "
        "reachable on the fully observed table)",
    ),
)  # fmt: skip
# Batch 32: defined by a helper session told of no check, in session 48.
_FRESH32 = (
    CorpusWorkload(
        "label_proportions", wl.LabelProportions,
        "learning from label proportions, instance classifier trained on bag-level class shares", "val_error",
        "minimize", (0.0, 1.0), 24576, 1024, 1e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="MLP 20-64-64-5 scoring each of 16 members of a bag, its softmax averaged over the bag and "
        "trained by cross-entropy against the bag's true class shares (Dirichlet-drawn), on 500 fixed bags "
        "from 6,000 make_classification points of 5 classes; val instance error rate on 1,500 held-out "
        "labelled points (0.80 at chance)",
    ),
    CorpusWorkload(
        "treatment_effect_tarnet", wl.TreatmentEffectTARNet,
        "causal inference, individual treatment effects from observational data (TARNet)", "val_pehe",
        "minimize", (0.0, None), 49152, 2048, 1e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="shared ELU trunk 10-64-64 and one head 64-32-1 per arm, each trained by factual MSE on "
        "the units that took its arm, on synthetic confounded data (10 covariates, treatment propensity "
        "depending on them, known nonlinear effect, noise SD 0.5; 4,000 / 1,000); val root PEHE of the "
        "estimated individual effects against the true ones (1.14 at the start)",
    ),
    CorpusWorkload(
        "neural_sdf_eikonal", wl.NeuralSDFEikonal,
        "neural signed distance field from an oriented point cloud, eikonal regularisation", "val_iou",
        "maximize", (0.0, 1.0), 24576, 1024, 3e-3, ("adamw", "lamb", "lion"), (32, 64), (0, 30),
        description="MLP 2-64-64-64-1 (softplus) fitted to 2,000 outline points with normals of a disk-and-"
        "rectangle union by zero-level, normal-alignment and eikonal (uniform points over [-1, 1]^2) losses, "
        "gradients by autograd inside the loss; val intersection over union of the field's negative region "
        "with the true shape on a 96 x 96 grid (0 at the start)",
    ),
    CorpusWorkload(
        "soft_decision_tree", wl.SoftDecisionTree,
        "differentiable soft decision tree, oblique sigmoid routing to leaf distributions", "val_loss",
        "minimize", (0.0, None), 24576, 1024, 1e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="complete soft binary tree of depth 6 (63 oblique sigmoid splits, 64 leaves of learned "
        "class distributions mixed by path probability) trained by cross-entropy on make_classification "
        "(16 features, 4 classes, 3 clusters a class; 4,000 / 1,500); val cross-entropy (1.39 at the start)",
    ),
)  # fmt: skip
# Batch 33: defined by a helper session told of no check, in session 49.
_FRESH33 = (
    CorpusWorkload(
        "domain_adversarial_moons", wl.DomainAdversarialMoons,
        "unsupervised domain adaptation, domain-adversarial training with gradient reversal (DANN)",
        "val_target_error", "minimize", (0.0, 1.0), 49152, 2048, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="feature extractor 2-64-64 with a label head 64-2 trained by cross-entropy on labelled source "
        "moons (make_moons, noise 0.1; 3,000) and a domain head 64-32-1 behind a gradient reversal layer telling "
        "them from unlabelled target moons, the same rotated by 30 degrees (3,000); val error rate on 1,000 "
        "held-out labelled target points (0.08 to 0.23 for a source-only fit)",
    ),
    CorpusWorkload(
        "parametric_tsne_digits", wl.ParametricTSNE,
        "nonlinear dimensionality reduction to the plane, parametric t-SNE", "val_knn_accuracy",
        "maximize", (0.0, 1.0), 24576, 1024, 1e-2, ("adamw", "sgd", "lamb"), (64, 128), (0, 30),
        description="MLP 64-128-128-2 mapping load_digits images (1,257 / 540) to the plane, trained by the KL "
        "divergence between in-batch Gaussian neighbour probabilities among the pixels (perplexity 10, "
        "bandwidths by bisection) and Student-t ones in the plane; val 5-nearest-neighbour accuracy of the "
        "held-out embeddings among the training ones (0.34 at the start)",
    ),
    CorpusWorkload(
        "rate_distortion_digits", wl.RateDistortionDigits,
        "learned lossy compression, rate-distortion loss with a learned entropy model", "val_rd_cost",
        "minimize", (0.0, None), 24576, 1024, 1e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="encoder MLP 64-128-16 and decoder 16-128-64 (sigmoid) on load_digits (1,257 / 540), "
        "latents perturbed by uniform noise in training and rounded in evaluation, coded by a learned "
        "discretised logistic per latent; loss bits + 40 x summed squared error per image; val "
        "rate-distortion cost per image with true rounding (480 at the start)",
    ),
    CorpusWorkload(
        "group_dro_spurious", wl.GroupDROSpurious,
        "group distributionally robust optimisation under a spurious correlation (group DRO)",
        "val_worst_group_accuracy", "maximize", (0.0, 1.0), 24576, 1024, 3e-3, ("adamw", "sgd", "lamb"), (32, 64),
        (0, 30),
        description="MLP 12-64-64-2 on synthetic data whose label is a circle in 2 core features while a noisy "
        "attribute agrees with it on 95% of 4,000 training points (groups of about 1,900, 1,900, 100 and 100; 9 "
        "noise features), trained by group DRO (exponentiated-gradient group weights, step 0.05); val "
        "worst-group accuracy on 2,000 held-out points, 500 per group",
    ),
)  # fmt: skip
# Batch 34: defined by a helper session told of no check, in session 49.
_FRESH34 = (
    CorpusWorkload(
        "mine_mutual_information", wl.MutualInformationMINE,
        "mutual information estimation, neural Donsker-Varadhan bound (MINE)", "val_mi_error",
        "minimize", (0.0, None), 49152, 2048, 1e-3, ("adamw", "sgd", "lion"), (64, 128), (0, 30),
        description="critic MLP 10-128-128-1 trained to raise the Donsker-Varadhan bound on the mutual "
        "information of pairs of 5-vectors, y = 0.8 x + 0.6 noise per coordinate then bent by y + y^3/3 (true "
        "MI 2.55 nats; 20,000 pairs), product-of-marginals pairs by shifting y one row in the batch, the log "
        "term's gradient divided by a moving average of mean exp T (MINE); val absolute gap between the true MI "
        "and the bound on 5,000 held-out pairs (2.55 at the start)",
    ),
    CorpusWorkload(
        "sae_feature_recovery", wl.SparseAutoencoderFeatures,
        "dictionary learning, sparse autoencoder recovering features in superposition", "val_feature_recovery",
        "maximize", (-1.0, 1.0), 24576, 1024, 1e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="autoencoder with 128 ReLU latents, encoder 32-128 and linear decoder 128-32, trained by "
        "squared error plus 0.2 x the decoder-norm-weighted L1 of the latents on sums of 64 random unit "
        "feature directions in 32 dimensions (each on with probability 0.04, magnitude uniform in [0, 1], "
        "noise SD 0.01; 20,000 / 2,000); val mean over the true features of the largest cosine similarity with a "
        "decoder column (0.44 at the start)",
    ),
    CorpusWorkload(
        "polynomial_root_sets", wl.PolynomialRootSets,
        "set prediction, permutation-invariant matched loss (roots of polynomials)", "val_root_distance",
        "minimize", (0.0, None), 24576, 1024, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="MLP 8-256-256-8 from the standardised complex coefficients of a monic quartic to its 4 "
        "complex roots (uniform in the unit disk; 20,000 / 2,000), trained by the summed squared distance "
        "under the best of the 24 matchings of predicted to true roots; val mean distance between predicted and "
        "true roots under the best matching (0.61 at the start, 0.66 for predicting the origin)",
    ),
    CorpusWorkload(
        "digit_registration", wl.DigitRegistration,
        "unsupervised deformable image registration, dense displacement field", "val_ncc",
        "maximize", (-1.0, 1.0), 12288, 512, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="convolutional encoder-decoder (8, 16, 16 channels, skip connections) outputting a "
        "displacement field that warps one load_digits image, upsampled to 16 x 16 and randomly rotated, "
        "zoomed and shifted, onto another of the same class (1,257 / 540 images), trained by MSE plus 0.05 x a "
        "smoothness penalty on the field; val mean normalised cross-correlation of warped and fixed images "
        "over 500 held-out pairs (0.55 unregistered)",
    ),
)  # fmt: skip
# Batch 35: defined by a helper session told of no check, in session 50.
_FRESH35 = (
    CorpusWorkload(
        "preference_reward_model", wl.PreferenceRewardModel,
        "reward modelling from pairwise preferences, Bradley-Terry logistic loss", "val_reward_spearman",
        "maximize", (-1.0, 1.0), 24576, 1024, 1e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="MLP 16-64-64-1 scoring items (16 Gaussian features, hidden reward a fixed nonlinear function of 4 "
        "projections, SD 2), trained by the logistic Bradley-Terry loss on the score difference of 20,000 "
        "simulated noisy preferences between 4,000 items (preferred with probability sigmoid of the reward "
        "difference); val Spearman rank correlation of the scores with the true rewards of 1,000 held-out items "
        "(-0.05 to 0.2 at the start)",
    ),
    CorpusWorkload(
        "dataset_distillation_digits", wl.DatasetDistillation,
        "dataset distillation, synthetic training images learned through unrolled inner training", "val_accuracy",
        "maximize", (0.0, 1.0), 12288, 512, 3e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="20 learned synthetic 8 x 8 images (2 per class, from Gaussian noise) and a learned inner step size, "
        "trained so that a linear softmax classifier fitted to them from zero weights by 10 unrolled steps of "
        "gradient descent has a low cross-entropy on real load_digits batches (1,257 / 540); val accuracy on the "
        "held-out digits of that classifier (0.10 to 0.15 at the start)",
    ),
    CorpusWorkload(
        "graph_colouring_gnn", wl.GraphColouringGNN,
        "unsupervised neural combinatorial optimisation, graph colouring by a GNN (Potts relaxation)",
        "val_conflict_rate", "minimize", (0.0, 1.0), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="GNN of 5 residual mean-aggregation rounds (width 64) on 8 random features and the degree of each node "
        "colouring random planted 3-colourable graphs (24 nodes, mean degree 4.5; 3,000 / 500) with 3 colours, "
        "trained unsupervised by the expected fraction of monochromatic edges under its softmax colours; val "
        "fraction of conflicting edges under the argmax colouring (0.76 to 1.0 at the start, a third for random "
        "colours)",
    ),
    CorpusWorkload(
        "burgers_learned_stepper", wl.BurgersLearnedStepper,
        "learned coarse-grid PDE solver, autoregressive rollout (viscous Burgers' equation)", "val_rollout_error",
        "minimize", (0.0, None), 24576, 1024, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="periodic 1-D CNN (kernels of 5, 32 channels, 3 layers) predicting the change of 32 cell averages of "
        "viscous Burgers' equation (nu 0.04) over one coarse step of 0.1, trained by MSE on 6,000 pairs from 300 "
        "pseudo-spectral reference trajectories at 4 x the resolution; val relative L2 error after a 10-step "
        "rollout from 60 held-out initial states (0.56 at the start, the identity map)",
    ),
)  # fmt: skip
# Batch 36: defined by a helper session told of no check, in session 50.
_FRESH36 = (
    CorpusWorkload(
        "tomography_neural_field", wl.TomographyNeuralField,
        "computed tomography, neural field fitted through a differentiable line-integral projector",
        "val_relative_error", "minimize", (0.0, None), 49152, 2048, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="neural field (32 fixed random Fourier features of scale 6, MLP 64-64-64-1) fitted by MSE to 2,880 noisy "
        "parallel-beam line integrals (45 angles x 64 offsets) of a modified Shepp-Logan phantom, each "
        "estimated from 32 stratified points along its ray; val relative L2 error of the field against the "
        "phantom on a 64 x 64 grid (0.9 to 1.2 at the start)",
    ),
    CorpusWorkload(
        "density_map_counting", wl.DensityMapCounting,
        "object counting by density-map regression, fully convolutional network", "val_count_mae",
        "minimize", (0.0, None), 12288, 512, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="fully convolutional network (1-16-16-16-1, 3 x 3) regressing density maps (a unit Gaussian per cell) of "
        "16 x 16 noisy images holding 0 to 20 small spots among up to 3 large dim distractor blobs, by MSE "
        "(3,000 / 500); val mean absolute error of the counts, the maps' sums (12 to 30 at the start, 5.1 for "
        "always the mean count)",
    ),
    CorpusWorkload(
        "selective_classification", wl.SelectiveClassification,
        "selective classification with a learned reject option (Deep Gamblers loss)", "val_selective_risk",
        "minimize", (0.0, 1.0), 24576, 1024, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="MLP 12-64-64-5 (4 classes and an abstention output) trained by the Deep Gamblers loss (payoff 2.2) plus "
        "the class cross-entropy on make_classification (4 classes, 12 features; 4,200 / 1,800) whose labels are "
        "80% redrawn in a region of 27% of the points; val selective risk, the error rate on the 70% of "
        "held-out points least likely to abstain (0.79 to 0.84 at the start)",
    ),
    CorpusWorkload(
        "contrastive_predictive_coding", wl.ContrastivePredictiveCoding,
        "self-supervised sequence representations, contrastive predictive coding (InfoNCE)", "val_cpc_accuracy",
        "maximize", (0.0, 1.0), 24576, 1024, 1e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="strided 1-D conv encoder (to 16 latents of 16), GRU context (width 32) and 3 linear lookahead predictors "
        "trained by InfoNCE against the same position of the other signals in the batch, on noisy drifting "
        "two-sinusoid signals of 64 samples (4,000 / 512); val accuracy of picking the true future latent among "
        "those of all 512 held-out signals (0.002 at the start, 1/512 by chance)",
    ),
)  # fmt: skip
# Batch 37: defined by a helper session told of no check, in session 50.
_FRESH37 = (
    CorpusWorkload(
        "deep_svdd_digits", wl.DeepSVDDDigits,
        "one-class anomaly detection, Deep SVDD (features pulled to a fixed hypersphere centre)", "val_auroc",
        "maximize", (0.0, 1.0), 12288, 512, 1e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="bias-free network 64-128-64-16 (leaky ReLU) trained on the normal load_digits classes 1, 4 and 7 "
        "only (377 images) by the mean squared distance of their features from the centre, the mean initial "
        "feature; anomaly score the squared distance; val ROC AUC for telling the 377 held-out digits of the "
        "other classes from the 163 normal ones (0.6 to 0.8 at the start)",
    ),
    CorpusWorkload(
        "binary_hashing_digits", wl.BinaryHashingDigits,
        "learning to hash, binary codes for Hamming-space retrieval (pairwise-supervised hashing)", "val_map",
        "maximize", (0.0, 1.0), 24576, 1024, 1e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="MLP 64-128-32 with tanh outputs coding load_digits images (1,257 / 540) as 32 bits, trained by the "
        "pairwise logistic loss of the scaled code inner products against same-class labels (similar and "
        "dissimilar pairs weighted equally) plus 0.1 x a quantisation penalty; val mean average precision of "
        "ranking the training images by the Hamming distance of their sign codes from each held-out query's "
        "(0.3 to 0.4 at the start)",
    ),
    CorpusWorkload(
        "logic_gate_network", wl.LogicGateNetworkDigits,
        "differentiable logic gate network, learned choice among the 16 two-input Boolean gates", "val_accuracy",
        "maximize", (0.0, 1.0), 12288, 512, 0.1, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="4 layers of 256 gates with fixed random wiring, each a softmax over the relaxed 16 Boolean "
        "functions of two inputs, on load_digits binarised at half intensity (1,257 / 540), class scores the sums "
        "of 10 groups of 25 last-layer gates over a temperature of 3, trained by cross-entropy; val accuracy of "
        "the network with every gate discretised to its most probable function (0.1 at the start)",
    ),
    CorpusWorkload(
        "ibp_certified_digits", wl.IntervalBoundCertified,
        "certified adversarial robustness, interval bound propagation training (IBP)", "val_verified_accuracy",
        "maximize", (0.0, 1.0), 24576, 1024, 1e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="MLP 64-128-128-10 on load_digits (1,257 / 540) trained by half the clean cross-entropy plus half "
        "that of the worst-case logits bounded by interval bound propagation over the L-infinity ball of radius "
        "0.1 (ramped up over the first 8,192 samples); val verified accuracy, the share of held-out digits "
        "whose bounds prove the true class for the whole ball (0 at the start)",
    ),
)  # fmt: skip
# Batch 38: defined by a helper session told of no check, in session 50.
_FRESH38 = (
    CorpusWorkload(
        "neural_additive_model", wl.NeuralAdditiveModel,
        "interpretable generalised additive model of per-feature networks (neural additive model)", "val_mse",
        "minimize", (0.0, None), 24576, 1024, 1e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="one MLP 1-32-32-1 per feature, summed, on 8 uniform features whose target is a sum of fixed "
        "shape functions (sine, step, parabola, exponential, sawtooth, absolute value, bump, zero) plus noise "
        "of SD 0.3 (4,000 / 1,000), trained by MSE; val MSE against the noiseless held-out targets (variance "
        "1.43; 1.7 to 3 at the start)",
    ),
    CorpusWorkload(
        "bellman_ford_reasoner", wl.BellmanFordReasoner,
        "neural algorithmic reasoning, min-aggregation message passing executing shortest paths",
        "val_distance_mae", "minimize", (0.0, None), 12288, 512, 1e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="message-passing network (width 16, 5 rounds, MLP messages of neighbour state and edge weight, min "
        "aggregation, residual MLP update) from a source flag to single-source shortest-path distances on "
        "random connected weighted graphs of 10 nodes (3,000 / 500), trained by MSE; val mean absolute "
        "distance error of the non-source nodes (1.5 to 1.9 at the start, 0.44 for the mean distance)",
    ),
    CorpusWorkload(
        "crowd_annotators_digits", wl.CrowdAnnotatorsDigits,
        "learning from crowds, per-annotator confusion matrices (crowd layer)", "val_accuracy",
        "maximize", (0.0, 1.0), 12288, 512, 1e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="MLP 64-64-10 and a learned confusion matrix for each of 8 simulated annotators (2 reliable, 3 "
        "sloppy, 2 that swap classes systematically, 1 random) on load_digits images each labelled by one of them "
        "(1,257, 46% right / 540), trained by the cross-entropy of the annotator's predicted label plus 0.01 x the "
        "matrices' mean trace; val accuracy against the true held-out labels (0.1 at the start)",
    ),
    CorpusWorkload(
        "convex_transport_map", wl.ConvexTransportMap,
        "optimal transport map as the gradient of an input-convex neural network (Brenier map)", "val_map_rmse",
        "minimize", (0.0, None), 24576, 1024, 0.1, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="ICNN potential (widths 64, 64, softplus, non-negative hidden weights) plus half the squared norm, "
        "its input gradient mapping standard normal points in the plane, trained by the squared MMD (4 Gaussian "
        "kernels) to unpaired samples of a known convex-gradient map of normal draws (6,000 each); val RMS "
        "distance of the learned from the true map on 2,000 held-out points (2.1 at the start)",
    ),
)  # fmt: skip
# Batch 39: defined by a helper session.
_FRESH39 = (
    CorpusWorkload(
        "bpr_implicit_feedback", wl.BPRImplicitFeedback,
        "recommendation from implicit feedback, Bayesian personalised ranking (BPR) with sampled negatives",
        "val_hit_rate10", "maximize", (0.0, 1.0), 262144, 8192, 1e-2, ("adamw", "sgd", "lion"), (64, 128), (0, 30),
        description="user and item embeddings of 32 plus an item bias, trained by the BPR logistic loss of a chosen over "
        "a uniformly drawn item, on 1,000 simulated users who each chose 25 of 500 items by a softmax of a hidden "
        "6-factor taste plus popularity (24,000 training pairs, one choice per user held out); val hit rate at 10 "
        "of the held-out item among the items each user has not chosen (0.01 to 0.03 at the start, 0.07 by "
        "popularity, 0.41 by the true preferences)",
    ),
    CorpusWorkload(
        "deep_knowledge_tracing", wl.DeepKnowledgeTracing,
        "knowledge tracing of simulated students, GRU over answer histories (deep knowledge tracing)", "val_auc",
        "maximize", (0.0, 1.0), 12288, 512, 1e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="GRU of width 48 reading (skill, right or wrong) one-hots of 40 exercises on 8 skills per simulated "
        "student (ability, per-skill difficulty, mastery growing with practice, a prerequisite skill; 3,000 / 500 "
        "students) and predicting the next answer's correctness, trained by binary cross-entropy; val ROC AUC of "
        "the held-out next-answer predictions (0.5 at the start, 0.87 for the true probabilities)",
    ),
    CorpusWorkload(
        "pitch_estimation_conv1d", wl.PitchEstimationConv1d,
        "monophonic pitch estimation from raw audio frames, 1-D CNN over pitch bins (CREPE-style)",
        "val_raw_pitch_accuracy", "maximize", (0.0, 1.0), 49152, 2048, 3e-3, ("adamw", "sgd", "lion"), (32, 64),
        (0, 30),
        description="1-D CNN (kernels 16, 8, 8; 16, 32, 32 channels; max pooling) on 256-sample frames at 8 kHz of "
        "synthetic noisy harmonic tones (fundamental 110 to 880 Hz, missing in a fifth; 8,000 / 1,000), 145 bins "
        "of 25 cents trained by cross-entropy against Gaussian-blurred targets; val raw pitch accuracy, "
        "the share of held-out estimates within 50 cents (0.02 to 0.04 at the start)",
    ),
    CorpusWorkload(
        "iic_digit_clustering", wl.InformationMaxClustering,
        "deep clustering without labels, mutual information between augmented views (IIC)", "val_nmi",
        "maximize", (0.0, 1.0), 196608, 8192, 3e-3, ("adamw", "sgd", "lamb"), (128, 256), (0, 30),
        description="MLP 64-256-256-10 (softmax) assigning load_digits images (1,257 / 540, labels unused) to 10 "
        "clusters, trained to maximise the mutual information between the assignments of two shifted, "
        "rescaled, noisy views of each image; val normalised mutual information of the held-out clusters and "
        "classes (0.03 to 0.2 at the start)",
    ),
)  # fmt: skip
# Batch 40: defined by a helper session.
_FRESH40 = (
    CorpusWorkload(
        "next_frame_prediction", wl.NextFramePrediction,
        "video prediction, next frame of bouncing squares by a dilated convolutional network", "val_mse",
        "minimize", (0.0, 1.0), 24576, 1024, 3e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="fully convolutional network (3 x 3, 16 channels, dilations 1, 2, 4) from 3 frames of 16 x 16 clips "
        "of one or two bouncing 3 x 3 squares to the next frame's pixel logits, by binary cross-entropy "
        "(4,000 / 500 clips); val MSE of the predicted pixel probabilities (0.21 to 0.23 at the start, 0.074 for "
        "copying the last frame)",
    ),
    CorpusWorkload(
        "nce_pinwheel_density", wl.NoiseContrastiveDensity,
        "unnormalised density estimation, noise-contrastive estimation (NCE)", "val_nll",
        "minimize", (None, None), 98304, 4096, 1e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="MLP 2-64-64-1 log unnormalised density plus a learned log normaliser, trained by the logistic "
        "loss of telling pinwheel data (5 arms; 8,000 / 2,000) from Gaussian noise of SD 2; val NLL in nats of the "
        "held-out points under the model normalised on a 160 x 160 grid over [-5, 5]^2 (4.5 to 4.8 at the start)",
    ),
    CorpusWorkload(
        "partial_label_digits", wl.PartialLabelDigits,
        "partial-label learning, candidate label sets (classifier-consistent loss)", "val_error",
        "minimize", (0.0, 1.0), 49152, 2048, 1e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="MLP 64-256-256-10 on load_digits (1,257 / 540) whose training images carry candidate label sets "
        "(the true class, a look-alike with probability 0.9, each other class with probability 0.5; 5.9 on "
        "average), trained by the negative log probability of the set; val error against the true labels (0.9 at "
        "the start)",
    ),
    CorpusWorkload(
        "lora_transfer_digits", wl.LowRankAdapterFineTuning,
        "parameter-efficient fine-tuning of a frozen pretrained network, low-rank adapters (LoRA)", "val_loss",
        "minimize", (0.0, None), 49152, 2048, 1e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="MLP 64-256-256-256-5 pretrained with a fixed seed on load_digits classes 0 to 4 and frozen; rank-4 "
        "adapters beside its three hidden layers and a new 5-way output layer trained by cross-entropy on classes "
        "5 to 9 with the images transposed (629 / 270); val cross-entropy (3.3 to 4.1 at the start)",
    ),
)  # fmt: skip
# Batch 41: defined by a helper session.
_FRESH41 = (
    CorpusWorkload(
        "tictactoe_minimax_moves", wl.TicTacToeMinimax,
        "game playing, best moves of noughts and crosses learned from exhaustive minimax search", "val_best_move_rate",
        "maximize", (0.0, 1.0), 24576, 1024, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="small CNN (two 3 x 3 convolutions of 64, MLP of 128) giving a logit per cell of every reachable "
        "non-final noughts-and-crosses position seen from the player to move, trained by cross-entropy over the free "
        "cells against the uniform distribution on the minimax-best moves (sooner wins preferred), positions split "
        "by symmetry class (3,166 / 1,354); val share of held-out positions whose chosen move is best (0.55 to 0.6 "
        "at the start, 0.47 for a random free cell)",
    ),
    CorpusWorkload(
        "deep_hedging_heston", wl.DeepHedgingCall,
        "deep hedging of an option under stochastic volatility with transaction costs", "val_hedge_rmse",
        "minimize", (0.0, None), 12288, 512, 1e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="MLP 4-32-32-1 shared over 20 rebalancing dates mapping log-moneyness, time left, variance and the "
        "previous holding to the stock holding that hedges a short at-the-money 3-month call on Heston paths with "
        "1% proportional costs (20,000 / 4,000 paths), trained by the mean square of the hedged P&L; val RMS of "
        "the held-out hedged P&L (2.7 to 3.2 at the start)",
    ),
    CorpusWorkload(
        "story_qa_memory_network", wl.StoryQAMemoryNetwork,
        "question answering over generated stories, end-to-end memory network (bAbI two supporting facts)",
        "val_error", "minimize", (0.0, 1.0), 32768, 1024, 1e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="memory network (32 dimensions, 3 hops, adjacent weight tying, learned temporal embeddings) reading "
        "12-sentence stories of people moving and picking up or dropping objects and answering where a person or "
        "an object is among 6 places (10,000 / 1,000 stories); val error (0.8 at the start)",
    ),
    CorpusWorkload(
        "rotation_pointcloud_6d", wl.RotationPointCloud,
        "3-D orientation estimation of a point cloud, continuous 6-D rotation representation", "val_angle_deg",
        "minimize", (0.0, 180.0), 24576, 1024, 1e-2, ("adamw", "lion", "lamb"), (32, 64), (0, 30),
        description="PointNet (shared MLP 3-64-128, max pooling, MLP 128-128-6, Gram-Schmidt) estimating the uniformly "
        "random rotation of a noisy, shuffled 64-point cloud of a fixed asymmetric object (10,000 / 1,000), trained "
        "by the squared Frobenius distance; val mean geodesic error in degrees (about 125 at the start)",
    ),
)  # fmt: skip
# Batch 42: defined by a helper session.
_FRESH42 = (
    CorpusWorkload(
        "relational_scene_qa", wl.RelationalSceneQA,
        "relational question answering on scene descriptions, relation network (Sort-of-CLEVR)", "val_error",
        "minimize", (0.0, 1.0), 49152, 2048, 1e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="relation network (g 32-64-64-64 summed over the 36 ordered object pairs with the question, f "
        "64-64-10) answering non-relational and relational questions (nearest, farthest, how many share a shape) "
        "about scenes of 6 coloured circles and squares (20,000 / 1,000); val error (about 0.8 at the start)",
    ),
    CorpusWorkload(
        "box_detection_grid", wl.BoxDetection,
        "single-stage object detection with bounding boxes on a grid (YOLO-style), F1 at IoU 0.5", "val_f1",
        "maximize", (0.0, 1.0), 24576, 1024, 1e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="CNN (8, 16, 32, 32 channels, two poolings, 1 x 1 head) predicting per cell of a 6 x 6 grid an "
        "objectness logit and a box for 24 x 24 noisy textured images of 1 to 4 rectangles (6,000 / 400), trained "
        "by objectness cross-entropy plus the box's squared error; val F1 of the detections after non-maximum "
        "suppression, matched at IoU 0.5 (0 at the start)",
    ),
    CorpusWorkload(
        "bearing_range_tracking", wl.BearingRangeTracking,
        "learned nonlinear filtering, tracking a manoeuvring target from bearing and range measurements",
        "val_position_rmse", "minimize", (0.0, None), 16384, 512, 1e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="GRU of width 48 reading 30 noisy bearing and range measurements (a tenth missed) of a randomly "
        "accelerating target and estimating its position at every step by MSE (20,000 / 500 tracks); val RMS "
        "position error over steps 10 to 30 (about 10 at the start, about 1 for the raw measurements)",
    ),
    CorpusWorkload(
        "behaviour_cloning_navigation", wl.BehaviourCloningNavigation,
        "imitation learning by behaviour cloning, success rate of the cloned policy in closed loop",
        "val_success_rate", "maximize", (0.0, 1.0), 24576, 1024, 3e-3, ("adamw", "lamb", "lion"), (32, 64), (0, 30),
        description="MLP 6-128-128-2 (tanh) cloning an obstacle-avoiding steering expert for a unicycle robot from "
        "36,000 states of noise-perturbed expert runs labelled with the expert's action; val success rate of 500 "
        "held-out closed-loop episodes of 60 steps, reaching the goal without touching the obstacle (0 to 0.5 at "
        "the start, 0.95 for the expert)",
    ),
)  # fmt: skip
# Batch 43: defined by a helper session.
_FRESH43 = (
    CorpusWorkload(
        "dna_motif_binding", wl.MotifBindingDNA,
        "regulatory genomics, transcription-factor binding from DNA sequence by a convolutional motif scanner "
        "(DeepBind-style), average precision", "val_auprc",
        "maximize", (0.0, 1.0), 32768, 2048, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="1-D CNN (32 filters of width 12 over one-hot bases, global max pooling, MLP 32-32-1) on 100-base "
        "sequences of which a quarter carry a motif drawn from a position weight matrix, with decoy and mutated "
        "motifs among the rest and 4% of labels flipped (12,000 / 2,000), trained by binary cross-entropy; val "
        "average precision, the area under the precision-recall curve (0.25 to 0.3 at the start)",
    ),
    CorpusWorkload(
        "learned_cardinality_qerror", wl.CardinalityEstimation,
        "learned cardinality estimation of database range queries over correlated columns, q-error",
        "val_qerror", "minimize", (1.0, None), 98304, 4096, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="MLP 12-128-128-1 mapping the bounds of conjunctive range predicates on 1 to 4 of the 4 correlated "
        "16-valued columns of a 100,000-row table to the log selectivity, trained by squared error (8,000 / 1,000 "
        "queries); val geometric mean q-error of the estimated row counts (about 33 at the start, 1.6 for "
        "assuming independent columns)",
    ),
    CorpusWorkload(
        "illuminant_colour_constancy", wl.IlluminantEstimation,
        "computational colour constancy, estimating a scene's illuminant from its surfaces by a set network",
        "val_angular_error", "minimize", (0.0, 180.0), 49152, 2048, 3e-3, ("adamw", "sgd", "lion"), (32, 64),
        (0, 30),
        description="Deep Sets network (shared MLP 6-64-64 on each patch's RGB and log-chromaticity, mean and max "
        "pooling, MLP 128-64-3) estimating the light of scenes of 32 coloured patches with highlights, exposure "
        "and noise (20,000 / 2,000), trained by the angle to the true illuminant; val mean angular error in "
        "degrees (60 to 130 at the start, 11.6 for the mean illuminant, 22.8 for grey world)",
    ),
    CorpusWorkload(
        "sharpe_portfolio", wl.SharpePortfolio,
        "portfolio allocation trained end to end on the Sharpe ratio of its returns", "val_sharpe",
        "maximize", (None, None), 131072, 4096, 3e-3, ("adamw", "lion", "lamb"), (32, 64), (0, 30),
        description="MLP 12-64-64-8 mapping 12 signals to long-short weights (tanh, gross exposure 1) over 8 assets "
        "whose returns carry a small signal-driven part, a market factor and fat-tailed noise (30,000 / 5,000 "
        "periods), trained by the negative Sharpe ratio of the micro-batch; val annualised Sharpe ratio (-1 to "
        "0.6 at the start, 0.54 for equal weights)",
    ),
)  # fmt: skip
# Batch 44: defined by a helper session.
_FRESH44 = (
    CorpusWorkload(
        "sir_posterior_estimation", wl.EpidemicPosterior,
        "simulation-based inference, amortised neural posterior estimation of epidemic parameters",
        "val_posterior_nll", "minimize", (None, None), 65536, 2048, 3e-3, ("adamw", "lamb", "lion"), (32, 64),
        (0, 30),
        description="MLP 60-128-128-5 mapping 60 days of reported cases of a stochastic SIR epidemic to a Gaussian "
        "posterior (mean and Cholesky factor) over its standardised log infection and recovery rates, trained by "
        "the negative log density of the simulated parameters (20,000 / 2,000 simulations); val mean negative log "
        "posterior density in nats (about 2.8 at the start, 2.5 for the prior)",
    ),
    CorpusWorkload(
        "knapsack_neural_solver", wl.KnapsackSolver,
        "neural combinatorial optimisation, 0-1 knapsack learned from exact dynamic-programming solutions",
        "val_optimality_ratio", "maximize", (0.0, 1.0), 49152, 2048, 1e-2, ("adamw", "sgd", "lion"), (32, 64),
        (0, 30),
        description="Deep Sets item scorer (shared MLP 5-64-64, mean pooling, MLP 128-64-1 per item) on instances of 20 "
        "items with weights and values 1 to 30 and capacity 10% to 40% of the total weight (10,000 / 1,000), "
        "trained by binary cross-entropy against the optimal set; items of positive logit packed greedily in "
        "logit order; val packed value as a share of the optimum (0 to 0.8 at the start, 0.986 for greedy by "
        "value-to-weight ratio)",
    ),
    CorpusWorkload(
        "biaffine_dependency_parsing", wl.DependencyParsing,
        "syntactic dependency parsing, BiGRU with a biaffine head scorer, unlabelled attachment score",
        "val_uas", "maximize", (0.0, 1.0), 8192, 512, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="bidirectional GRU of width 64 over word embeddings of 32, head and dependent MLPs of 64 and a "
        "biaffine score per head, on sentences of 3 to 19 words of a generated grammar whose prepositional "
        "phrases attach by hidden lexical affinities (10,000 / 500), trained by cross-entropy over heads; val "
        "unlabelled attachment score (about 0.1 at the start)",
    ),
    CorpusWorkload(
        "deep_homography_corners", wl.HomographyEstimation,
        "deep homography estimation between two image patches, corner displacement regression",
        "val_corner_error", "minimize", (0.0, None), 16384, 1024, 3e-3, ("adamw", "sgd", "lion"), (32, 64),
        (0, 30),
        description="CNN (8, 16, 32 channels, three poolings, MLP 288-64-8) reading a 24 x 24 patch of a textured image "
        "and the same patch after a random homography moving its corners by up to 4 pixels each way, trained by "
        "the squared error of the 8 corner displacements (12,000 / 500 pairs); val mean corner error in pixels "
        "(about 3.05 at the start, the same as predicting no motion)",
    ),
)  # fmt: skip
# Batch 45: defined by a helper session.
_FRESH45 = (
    CorpusWorkload(
        "wavefront_phase_diversity", wl.WavefrontPhaseDiversity,
        "adaptive optics, wavefront sensing by phase diversity, Zernike coefficients regressed from a focused and a "
        "defocused point-spread function", "val_residual_rms",
        "minimize", (0.0, None), 16384, 1024, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="CNN (8, 16, 32 channels, three poolings, MLP 288-64-8) reading the square roots of two noisy 24 x "
        "24 point-spread functions of a circular pupil, in focus and defocused by 1.5 rad, whose aberration is 8 "
        "Zernike modes (Noll 4 to 11, about 1 rad RMS in all), trained by the squared error of the 8 coefficients "
        "(6,000 / 500 pairs); val RMS residual wavefront over the pupil in radians (about 1.07 at the start, "
        "1.05 for estimating no aberration)",
    ),
    CorpusWorkload(
        "notears_causal_discovery", wl.CausalDiscoveryNOTEARS,
        "causal structure learning by continuous optimisation with an acyclicity penalty (NOTEARS), structural "
        "Hamming distance", "shd",
        "minimize", (0.0, None), 98304, 3072, 5e-3, ("adamw", "lamb", "lion"), (32, 64), (0, 30),
        description="weighted adjacency matrix of 16 variables (zero diagonal, started at zero) fitted to samples of a "
        "linear Gaussian structural equation model on a random DAG of 28 edges (4,000 samples) by least squares "
        "plus 0.02 x L1 plus 5 x tr(exp(W o W)) - 16; structural Hamming distance of the entries above 0.3 to the "
        "true graph (missing, extra and reversed edges; 28 at the start, about 6 to 9 at the best)",
    ),
    CorpusWorkload(
        "neurosat_satisfiability", wl.SatisfiabilityNeuroSAT,
        "deciding Boolean satisfiability of random 3-SAT formulas by literal-clause message passing (NeuroSAT)",
        "val_accuracy", "maximize", (0.0, 1.0), 12288, 768, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="4 rounds of messages (width 16, MLP messages, GRU-cell updates, each literal reading its negation) "
        "over the incidence graph of formulas of 10 variables and 50 clauses, labelled by trying all 1,024 "
        "assignments (12,000 / 300; 53% of the val formulas satisfiable), the mean literal vote trained by "
        "binary cross-entropy; val accuracy (0.47 or 0.53 at the start, often a plateau there first)",
    ),
    CorpusWorkload(
        "photometric_redshift", wl.PhotometricRedshift,
        "astronomy, photometric redshifts of galaxies from six broad-band magnitudes, normalised median absolute "
        "deviation", "val_sigma_nmad",
        "minimize", (0.0, None), 131072, 4096, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="MLP 6-128-128-1 reading five colours and the i magnitude (asinh magnitudes) of galaxies made of "
        "redshifted spectral energy distributions (continuum, 4000 A and Lyman breaks, dust, emission lines; z "
        "up to 2.5, i magnitude 19 to 25, band noise from depths of 25 to 26.5; 30,000 / 3,000), trained by the "
        "Huber loss of dz = (z_est - z) / (1 + z); val sigma_NMAD = 1.4826 x median |dz - median dz| (about 0.18 "
        "at the start)",
    ),
)  # fmt: skip
# Batch 46: defined by a helper session.
_FRESH46 = (
    CorpusWorkload(
        "zero_shot_attributes", wl.ZeroShotAttributes,
        "zero-shot classification of classes never seen in training, from their attribute descriptions "
        "(compatibility model)", "val_unseen_accuracy",
        "maximize", (0.0, 1.0), 65536, 2048, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="dot product of an MLP 64-128-64 of an example's features and an MLP 64-64-64 of a class's 64 "
        "binary attributes, trained by softmax cross-entropy over 250 seen classes (64 examples each; features a "
        "random nonlinear map of the attributes plus an unexplained class offset and noise); val per-class "
        "accuracy on the 50 unseen classes (40 examples each), choosing among their attribute vectors only "
        "(chance 0.02, 0.02 to 0.05 at the start)",
    ),
    CorpusWorkload(
        "source_separation_mask", wl.SourceSeparationMask,
        "single-channel audio source separation by a time-frequency mask, scale-invariant SDR improvement",
        "val_si_sdri", "maximize", (None, None), 6144, 384, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="convolutional network over STFT frames (129 log-magnitude bins as channels, kernel-3 "
        "convolutions of 128 and 128, 1 x 1 to 129 sigmoid mask values) recovering the low of two synthetic "
        "harmonic voices (plus noise, 0.256 s at 8 kHz; 3,000 / 200 mixtures), trained by the squared error of "
        "the masked magnitude; val SI-SDR improvement in dB of the resynthesised low voice (about 0 at the "
        "start, 11.5 for the ideal ratio mask)",
    ),
    CorpusWorkload(
        "pose_lifting_3d", wl.PoseLifting3D,
        "3-D human pose estimation, lifting 2-D keypoints to 3-D joints with a residual MLP, MPJPE",
        "val_mpjpe", "minimize", (0.0, None), 32768, 1024, 1e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="residual MLP (32-256, two LayerNorm residual blocks of 256, 256-45) mapping the root-centred, "
        "scale-normalised noisy 2-D keypoints of a 16-joint skeleton (posed around 8 activity prototypes, random "
        "heading, pinhole camera 4 to 6 m away) to its root-centred 3-D joints, trained by squared error (30,000 "
        "/ 1,000 poses); val mean per-joint position error in mm (about 430 at the start, 307 for the mean pose)",
    ),
    CorpusWorkload(
        "xy_model_temperature", wl.XYModelTemperature,
        "statistical physics, reading the temperature of 2-D XY-model spin configurations with a CNN",
        "val_temperature_mae", "minimize", (0.0, None), 16384, 1024, 1e-3, ("adamw", "sgd", "lion"), (32, 64),
        (0, 30),
        description="CNN (circular 3 x 3 convolutions of 16, 16 and 16 channels, one pooling, global mean pooling, "
        "MLP 16-16-1) on the (cos, sin) of 16 x 16 periodic XY-model lattices at temperatures 0.3 to 2 "
        "(Metropolis-equilibrated, 2,000 / 500), trained by the squared error of the standardised temperature; "
        "val mean absolute temperature error (about 0.40 at the start, as for the mean temperature)",
    ),
)  # fmt: skip
# Batch 47: defined by a helper session.
_FRESH47 = (
    CorpusWorkload(
        "stereo_disparity", wl.StereoDisparity,
        "stereo matching, dense disparity from a rectified image pair through a correlation cost volume and a "
        "soft argmin, bad-pixel rate", "val_bad_pixel_rate",
        "minimize", (0.0, 1.0), 6144, 384, 1e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="shared CNN (3 x 3 convolutions of 8 and 8 channels) on both views, correlations at disparities "
        "0 to 7 refined by two 3 x 3 convolutions (16, 8), bounded to +-10 and read by a soft argmin, on 12 x 24 "
        "pairs of a textured slanted plane behind a textured rectangle (disparities up to 6.8 pixels, "
        "occlusions, noise; 6,000 / 256), trained by the smooth L1 disparity error; val share of pixels off by "
        "more than 1 pixel (about 0.6 at the start, 0.31 for the best constant disparity)",
    ),
    CorpusWorkload(
        "session_recommendation", wl.SessionRecommendation,
        "session-based next-item recommendation, self-attentive sequential model (SASRec), hit rate at 10",
        "val_hit_rate10", "maximize", (0.0, 1.0), 20480, 1024, 1e-2, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="causal transformer (one pre-norm block of width 32, 2 heads) reading 11 clicks on 256 items in 16 "
        "topics (each click an item's usual successor, an item of the session's topics or any item; 20,000 / "
        "1,000 sessions), trained by softmax cross-entropy on the next click at every position; val share of "
        "last clicks among the top 10 (0.03 to 0.06 at the start, 0.13 for the 10 most popular items)",
    ),
    CorpusWorkload(
        "quantum_state_tomography", wl.QuantumStateTomography,
        "quantum information, neural state tomography of 3 qubits from Pauli measurement frequencies, "
        "fidelity", "val_fidelity",
        "maximize", (0.0, 1.0), 49152, 2048, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="MLP 216-128-128-64 writing a triangular T, the state T T^dagger / tr, from the outcome frequencies "
        "of 40 shots in each of the 27 Pauli settings of noisy Haar-random 3-qubit states (20,000 / 1,000), "
        "trained by the squared Hilbert-Schmidt distance; val mean Uhlmann fidelity (about 0.3 at the start, "
        "0.83 for linear inversion)",
    ),
    CorpusWorkload(
        "remaining_useful_life", wl.RemainingUsefulLife,
        "prognostics, remaining useful life of turbofan engines from multi-regime sensor windows (C-MAPSS "
        "style), RMSE in cycles", "val_rul_rmse",
        "minimize", (0.0, None), 20480, 1024, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="1-D CNN (kernel-5 convolutions of 32, 32, a pooling, 32; MLP 480-64-1) on 30-cycle windows of 3 "
        "settings and 14 sensors of engines wearing exponentially to failure in 6 operating regimes that "
        "shift the sensors more than the wear (every window of 200 engines / 500 windows of 100 others), "
        "trained by squared error of the RUL capped at 125; val RMSE in cycles (80 to 107 at the start, 41 for "
        "the mean RUL, often a plateau there first)",
    ),
)  # fmt: skip
# Batch 48: defined by a helper session.
_FRESH48 = (
    CorpusWorkload(
        "inverse_kinematics_arm", wl.InverseKinematicsArm,
        "robotics, inverse kinematics of a 4-joint arm learned through differentiable forward kinematics, "
        "tip error", "val_position_error_mm",
        "minimize", (0.0, None), 65536, 2048, 1e-2, ("adamw", "lamb", "lion"), (32, 64), (0, 30),
        description="MLP 5-128-128-4 from a 3-D target and a hand pitch to joint angles within limits (tanh), "
        "through the arm's forward kinematics (links 300, 250, 120 mm), trained by the squared tip error plus "
        "1 - cos of the pitch error, no joint angles given (30,000 / 1,000 reachable targets); val mean tip "
        "error in mm (about 650 at the start)",
    ),
    CorpusWorkload(
        "word_segmentation", wl.WordSegmentation,
        "word segmentation of unspaced text, bidirectional GRU tagging word starts, word F1", "val_word_f1",
        "maximize", (0.0, 1.0), 8192, 512, 2e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="bidirectional GRU of width 48 tagging each of 24 one-hot letters as a word's start or not, "
        "by cross-entropy, on the lower-cased words of stdlib docstrings joined without spaces (100,000 "
        "letters from five modules / 400 windows from two others); val word F1 (0 to 0.08 at the start, 0 on "
        "the plateau of tagging no boundary, where many runs stay a while)",
    ),
    CorpusWorkload(
        "rainfall_runoff", wl.RainfallRunoff,
        "hydrology, daily rainfall-runoff of several catchments by one recurrent network, Nash-Sutcliffe "
        "efficiency", "val_nse",
        "maximize", (None, 1.0), 8192, 512, 1e-2, ("adamw", "lamb", "lion"), (32, 64), (0, 30),
        description="GRU of width 32 reading 60 days of rain and evaporation with 8 static attributes and giving the "
        "day's flow of 8 catchments simulated by bucket models of their own (soil, fast and slow stores, "
        "routing, 5% noise; 12 years / the 3 after), trained by squared error of the flow standardised per "
        "catchment; val NSE averaged over the catchments on every seventh day (-0.4 to 0.06 at the start)",
    ),
    CorpusWorkload(
        "seismic_phase_picking", wl.SeismicPhasePicking,
        "seismology, P and S arrival picking in 3-component seismograms with a 1-D U-Net (PhaseNet-style), "
        "pick error", "val_pick_mae",
        "minimize", (0.0, None), 12288, 768, 1e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="1-D U-Net (kernel-7 convolutions of 8, 16, 32 channels, two downsamplings by 4, skip "
        "connections) giving per-sample noise, P and S probabilities for 5 s at 32 Hz of synthetic "
        "earthquake records (P and S bursts with random polarisation, 0.7 to 20 times the noise, microseism; "
        "10,000 / 500), by cross-entropy against Gaussian bumps at the arrivals; val mean absolute error of the "
        "peak picks in s (1.0 to 1.25 at the start, about 2.3 on the plateau of predicting noise everywhere)",
    ),
)  # fmt: skip
# Batch 49: defined by a helper session.
_FRESH49 = (
    CorpusWorkload(
        "sleep_staging", wl.SleepStaging,
        "sleep medicine, sleep staging of polysomnography epochs with an epoch encoder and a bidirectional GRU "
        "over the night, Cohen's kappa", "val_kappa",
        "maximize", (-1.0, 1.0), 8192, 512, 1e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="convolution over the 10 windows of a 30 s epoch (18 log-power features: 16 EEG bins, EOG, EMG; 32 "
        "channels, mean and max pooled, a layer of 32) and a bidirectional GRU of width 32 across 16 epochs, on "
        "simulated nights of wake, N1, N2, N3 and REM in sleep cycles (spindles, K-complexes, alpha, eye "
        "movements, atonia, per-night offsets, Welch noise; 36 nights / 10 of 832 epochs), trained by "
        "cross-entropy per epoch; val Cohen's kappa of the stages (about 0 at the start and for scoring one "
        "stage, where too-high LRs stay)",
    ),
    CorpusWorkload(
        "speaker_verification", wl.SpeakerVerification,
        "speaker verification, x-vector embeddings of simulated voices, equal error rate of cosine scoring",
        "val_eer", "minimize", (0.0, 1.0), 12288, 512, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="time-delay network (1-D convolutions of 64, kernel 5 and kernel 3 dilated 2, over 30 of 40 frames "
        "of 32 log mel energies), statistics pooling and a 64-d segment layer, trained by softmax over 200 "
        "source-filter voices (formant scale, pitch, bandwidth, tilt, breathiness, nasal notch; random channel "
        "response and gain; 30 utterances each), val EER of cosine scores over all pairs of 400 utterances of 40 "
        "unseen speakers (about 0.45 at the start, 0.42 for the mean log spectrum, 0.5 when collapsed)",
    ),
    CorpusWorkload(
        "tweedie_pure_premium", wl.TweediePurePremium,
        "insurance pricing, pure premium of motor policies by an entity-embedding MLP with the Tweedie "
        "deviance, Gini index", "val_gini",
        "maximize", (-1.0, 1.0), 147456, 4096, 3e-3, ("adamw", "lamb", "lion"), (64, 128), (0, 30),
        description="MLP (7 numeric features, embeddings of region 40 -> 4 and brand 11 -> 3, two layers of 64) giving "
        "the log expected claim amount per year, on simulated motor policies (Poisson claim counts of about 0.07 a "
        "year driven by age, bonus-malus, density, region, brand, power; Gamma claim sizes; exposures of 3% to "
        "100% of a year; 60,000 / 40,000), trained by the exposure-weighted Tweedie deviance (power 1.9); val "
        "Gini index of the ordered Lorenz curve (-0.15 to 0.15 at the start, 0.12 for ordering by bonus-malus, "
        "0.50 for the true premium)",
    ),
    CorpusWorkload(
        "undersampled_mri", wl.UndersampledMRI,
        "medical imaging, accelerated MRI reconstruction from undersampled k-space, CNN with data consistency, "
        "SSIM", "val_ssim",
        "maximize", (-1.0, 1.0), 6144, 384, 1e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="residual CNN (3 x 3 convolutions of 12, 12, 2) refining the zero-filled complex image, measured "
        "k-space lines put back, magnitude out, on 24 x 24 head phantoms (ellipses, texture, coil bias) sampled "
        "on the 4 central and a random 18% of the other phase-encoding lines with noise (8,000 / 256), trained by "
        "L1 error; val mean SSIM (about 0.52 at the start, as for the zero-filled reconstruction, where "
        "collapsed runs stay)",
    ),
)  # fmt: skip
# Batch 50: defined by a helper session.
_FRESH50 = (
    CorpusWorkload(
        "tempo_estimation", wl.TempoEstimation,
        "music information retrieval, global tempo of drum excerpts by a learned onset detector and a "
        "differentiable autocorrelation, Accuracy1", "val_accuracy1",
        "maximize", (0.0, 1.0), 8192, 512, 1e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="1-D convolutions (16, 8 channels, kernel 5, softplus) over 6 s of three-band onset envelopes at "
        "50 Hz, autocorrelation at lags 1 to 150 normalised by lag 0, MLP 1200-128-96 over log-spaced tempo "
        "classes (50 to 200 BPM), on 7 drum styles at 60 to 180 BPM with dropped hits, ghost notes, swing, drift, "
        "jitter, other onsets and noise (20,000 / 500), trained by cross-entropy; val share within 4% of the "
        "true tempo (about 0.05 at the start, 0.40 for the autocorrelation peak)",
    ),
    CorpusWorkload(
        "probabilistic_load_forecast", wl.ProbabilisticLoadForecast,
        "energy, day-ahead probabilistic forecasting of electricity load with Gaussian outputs, CRPS",
        "val_crps", "minimize", (0.0, None), 65536, 4096, 1e-3, ("adamw", "sgd", "lamb"), (64, 128), (0, 30),
        description="MLP 200-192-192-192-48 reading the past week's hourly load, a noisy temperature forecast and the "
        "day's calendar flags and giving a Gaussian for each of the next 24 hours, on 24 simulated substations "
        "(residential, commercial, industrial profiles, heating and cooling, holidays, growth, persistent noise; "
        "2 years / every other day of the third), trained by the closed-form CRPS; val mean CRPS in units of "
        "the mean load (about 0.7 at the start, 0.13 for the same day last week)",
    ),
    CorpusWorkload(
        "spelling_correction", wl.SpellingCorrection,
        "natural language processing, spelling correction of misspelled words by a character CNN over a "
        "vocabulary, top-1 accuracy", "val_accuracy",
        "maximize", (0.0, 1.0), 16384, 1024, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="character CNN (embeddings of 32, two kernel-3 convolutions of 96, max-pooled) classifying a "
        "misspelling over the 1,000 most frequent words of stdlib docstrings (one or two deletions, insertions, "
        "keyboard-neighbour substitutions or swaps; 60,000 / 1,000), trained by cross-entropy; val top-1 "
        "correction accuracy (0 at the start, 0.84 for the nearest word by edit distance)",
    ),
    CorpusWorkload(
        "traffic_speed_forecast", wl.TrafficSpeedForecast,
        "transportation, traffic speed forecasting on a road sensor graph by a diffusion graph network, MAE at "
        "30 minutes", "val_mae_30min",
        "minimize", (0.0, None), 24576, 1536, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="graph network (each sensor's last hour of speeds, clock and a learned sensor embedding into 32, "
        "two residual layers mixing upstream and downstream neighbours) giving the speed change over the next "
        "30 minutes, on 36 simulated loop detectors of three merging roads (queues behind bottlenecks at peaks "
        "and behind incidents spreading upstream; 49 days / 14), trained by smooth L1 error; val MAE at 30 "
        "minutes in mph (3.5 to 7 at the start, 3.3 for the last speed, a plateau where slow runs stay)",
    ),
)  # fmt: skip
# Batch 51: defined by a helper session.
_FRESH51 = (
    CorpusWorkload(
        "jet_image_top_tagging", wl.JetTagging,
        "particle physics, boosted top-quark tagging from calorimeter jet images with a CNN, background "
        "rejection at 50% signal efficiency", "val_rejection_at_50",
        "maximize", (1.0, None), 20480, 1280, 5e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="CNN (3 x 3 convolutions of 8 and 16 channels, two poolings, a layer of 32) on 16 x 16 jet images "
        "(cells 0.1 wide, pT shares; centred, rotated, flipped) of simulated 400-500 GeV jets, hadronic top decays "
        "against QCD splittings, with showers, final-state radiation, underlying event and calorimeter smearing "
        "(20,000 / 2,000 of which a quarter tops), trained by binary cross-entropy; val 1 / eps_B at eps_S = 0.5 "
        "(about 2 to 3 at the start, 16 for a top-mass window, capped at 1,500)",
    ),
    CorpusWorkload(
        "protein_secondary_structure", wl.ProteinSecondaryStructure,
        "structural biology, protein secondary structure (helix, strand, coil) from the amino-acid sequence "
        "by a 1-D CNN, Q3 accuracy", "val_q3",
        "maximize", (0.0, 1.0), 12288, 768, 3e-3, ("adamw", "lamb", "lion"), (32, 64), (0, 30),
        description="1-D CNN (one-hot residues, convolutions of 32 channels with kernel 7, then kernel 7 dilated 2, a "
        "per-residue layer) on 64-residue windows of simulated chains (Chou-Fasman propensities, amphipathic "
        "helices with caps, alternating strands, a third of residues mutated; 5,000 / 500 chains), trained by "
        "cross-entropy per residue; val Q3 (0.35 to 0.48 at the start, 0.48 on the plateau of coil "
        "everywhere, 0.59 for the most frequent state per amino acid)",
    ),
    CorpusWorkload(
        "wearable_activity_recognition", wl.ActivityRecognition,
        "human activity recognition from a waist-worn accelerometer and gyroscope, DeepConvLSTM-style "
        "network, macro F1 on unseen people", "val_macro_f1",
        "maximize", (0.0, 1.0), 18432, 1152, 1e-2, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="two convolutions of 32 channels (kernel 5, pooling by 2 and 4) and a GRU of 32 over 2 s windows "
        "at 32 Hz of 6 inertial channels of 30 simulated people walking, on stairs up and down, sitting, standing "
        "and lying (stride harmonics, postures, device mounting, drift, noise; 20 people, 6,000 windows / 10 "
        "others, 1,200), trained by cross-entropy; val macro F1 over the 6 activities (about 0.05 at the start)",
    ),
    CorpusWorkload(
        "point_normal_estimation", wl.PointNormalEstimation,
        "geometry processing, unoriented normal estimation from local point-cloud patches (PCPNet-style), "
        "RMS angle error", "val_rms_angle_deg",
        "minimize", (0.0, 90.0), 36864, 2304, 3e-3, ("adamw", "sgd", "lamb"), (32, 64), (0, 30),
        description="PointNet (shared MLP 3-64-64, max pooling, MLP 64-64-3) on randomly rotated 32-point patches "
        "of simulated quadrics, creases and cylinders with anisotropic density, noise up to 4% and outliers "
        "(30,000 / 2,000), trained by the squared sine of the angle to the true normal; val RMS unoriented angle "
        "in degrees (about 60 at the start, 15 for a PCA plane fit)",
    ),
)  # fmt: skip
# Batch 52: defined by a helper session.
_FRESH52 = (
    CorpusWorkload(
        "sound_source_doa", wl.SoundSourceLocalisation,
        "acoustic source localisation, direction of arrival at a microphone array from GCC-PHAT features "
        "in reverberant rooms, mean azimuth error", "val_azimuth_mae_deg",
        "minimize", (0.0, 180.0), 76800, 3840, 1e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="MLP 246-192-192-72 over the 4-times interpolated GCC-PHAT (+-20 lags) of the 6 pairs of a "
        "4-microphone circular array (radius 4.6 cm, 16 kHz, 32 ms frames) hearing a voiced or unvoiced source "
        "with early reflections, an interfering noise source and sensor noise (20,000 / 1,000), trained by "
        "cross-entropy over 5-degree sectors; val mean absolute azimuth error in degrees (about 90 at the "
        "start, 42 for SRP-PHAT)",
    ),
    CorpusWorkload(
        "blind_image_quality", wl.BlindImageQuality,
        "no-reference image quality assessment, CNN predicting mean opinion scores of distorted images, "
        "Spearman rank correlation", "val_srocc",
        "maximize", (-1.0, 1.0), 8192, 512, 1e-2, ("adamw", "lamb", "lion"), (32, 64), (0, 30),
        description="CNN on the centred image and its MSCN coefficients (3 x 3 convolutions of 8 and 16 channels, a "
        "pooling, mean and standard deviation pooled, a layer of 32) on 24 x 24 textured scenes blurred, noised, "
        "block-DCT quantised, contrast-reduced, banded or pristine, scored by a simulated observer (SSIM to the "
        "reference to a distortion-specific power, rater noise; 600 references x 16 / 100 others x 8), trained "
        "by squared error; val SROCC with the scores (about 0 at the start, 0.1 for mean gradient magnitude)",
    ),
    CorpusWorkload(
        "molecular_lipophilicity", wl.MolecularLipophilicity,
        "cheminformatics, molecular property (logP) regression from molecular graphs by bond-typed message "
        "passing, RMSE", "val_rmse",
        "minimize", (0.0, None), 10240, 640, 3e-3, ("adamw", "lamb", "lion"), (32, 64), (0, 30),
        description="message-passing network (atom element, hydrogens and ring flag into 48, three residual layers "
        "with a weight per bond order, sum readout, MLP 48-48-1) on simulated molecules of 6 to 22 heavy atoms "
        "with rings, scored by a Crippen-like logP with proximity and size terms and noise of sd 0.2 "
        "(12,000 / 1,000), trained by squared error; val RMSE in log units (about 2 to 6 at the start, 2.3 for "
        "the mean, 0.9 for a linear fit on element counts)",
    ),
    CorpusWorkload(
        "energy_disaggregation", wl.EnergyDisaggregation,
        "energy, non-intrusive load monitoring, appliance power from a household's aggregate meter by a "
        "sequence-to-point CNN, on/off F1", "val_on_off_f1",
        "maximize", (0.0, 1.0), 28672, 1792, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="1-D CNN (convolutions of 16, 16, 32 channels, two strides of 2, a layer of 64) reading 63 minutes "
        "of standardised aggregate power and giving a fridge's, kettle's, microwave's, washing machine's and "
        "dishwasher's power at the middle minute, on 10 simulated households of 14 days with an oven, lights and "
        "base load besides (8 houses / 2, every tenth minute), trained by squared error per appliance standard "
        "deviation; val F1 of the on/off states (on above 50, 1,000, 200, 20, 10 W) averaged over the "
        "appliances (0 at the start and for all off)",
    ),
)  # fmt: skip
# Batch 53: defined by a helper session.
_FRESH53 = (
    CorpusWorkload(
        "bci_velocity_decoding", wl.NeuralVelocityDecoding,
        "brain-computer interface, decoding 2-D hand velocity from motor-cortex spike counts with an MLP, "
        "R^2 saturating near 1", "val_r2",
        "maximize", (None, 1.0), 40960, 2048, 1e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="MLP 240-96-96-2 over the square-rooted spike counts of 48 simulated cosine- and speed-tuned "
        "Poisson neurons (2 to 15 Hz, leading by 0 to 3 bins, drifting baselines) in the last 5 bins of 50 ms, "
        "giving the standardised hand velocity (14,000 bins / the last 2,000), trained by squared error; val "
        "R^2 averaged over x and y (below 0 at the start, a ridge Wiener filter beside it)",
    ),
    CorpusWorkload(
        "monocular_depth_estimation", wl.MonocularDepth,
        "computer vision, monocular depth estimation of simulated indoor scenes by a coarse global network, "
        "absolute relative error", "val_abs_rel",
        "minimize", (0.0, None), 14080, 704, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="two strided 3 x 3 convolutions (16, 32 channels), a layer of 128 and a linear layer to every "
        "pixel's log depth, on 12 x 12 grey images (and the row coordinate) of a checkered floor, a back wall "
        "and up to three boxes under fog and noise (8,000 / 1,000), trained by L1 error in log depth; val "
        "AbsRel (about 0.5 to 1 at the start, the training scenes' mean log depth per pixel beside it)",
    ),
    CorpusWorkload(
        "retinopathy_grading", wl.RetinopathyGrading,
        "medical imaging, diabetic retinopathy grading of fundus images by a CNN, quadratic weighted kappa",
        "val_qwk",
        "maximize", (-1.0, 1.0), 12280, 614, 3e-3, ("adamw", "lamb", "lion"), (32, 64), (0, 30),
        description="CNN (3 x 3 convolutions of 8, 16, 16 channels, the first two batch-normalised, a stride of 2 and "
        "a pooling, mean and max pooled, a linear layer) on simulated 16 x 16 fundus images with an optic disc, vessels, microaneurysms, "
        "haemorrhages, exudates and new vessels by grade, five grades with 10% of labels a grade off "
        "(8,000 / 800; each image less its median inside the disc, in tenths), trained by cross-entropy; val QWK of the argmax grade (about 0 at the start, "
        "thresholds on the share of dark pixels beside it)",
    ),
    CorpusWorkload(
        "crop_type_mapping", wl.CropTypeMapping,
        "remote sensing, crop-type classification of parcels from multispectral satellite image time series "
        "by a temporal CNN, overall accuracy", "val_accuracy",
        "maximize", (0.0, 1.0), 12800, 640, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="TempCNN (two convolutions of 32 channels, kernel 5, flattened, a layer of 64) over 24 "
        "acquisitions of 6 bands and the day of the year of parcels of 8 crops with double-logistic phenology, "
        "per-parcel timing and soil, clouds and shadows (12,000 / 2,000), trained by cross-entropy; val "
        "overall accuracy (1/8 at the start, nearest centroid beside it)",
    ),
)  # fmt: skip
# Batch 54: defined by a helper session.
_FRESH54 = (
    CorpusWorkload(
        "gravitational_wave_detection", wl.GravitationalWaveDetection,
        "gravitational-wave astronomy, detecting binary inspiral chirps in whitened strain with a 1-D CNN, "
        "detection probability at 1% false alarms", "val_tpr_at_1pct",
        "maximize", (0.0, 1.0), 4096, 256, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="1-D CNN (convolutions of 8, 16, 16 channels, kernels 9, 9, 5, a stride and poolings, max pooled, "
        "a layer of 16) on 0.5 s at 512 Hz of Gaussian noise with glitches, half with a Newtonian chirp at "
        "SNR 4 to 12 (16,000 / 2,000), trained by binary cross-entropy; val detection probability at the "
        "noise segments' 99th percentile (0.01 to 0.1 at the start, a matched-filter bank beside it)",
    ),
    CorpusWorkload(
        "battery_state_of_charge", wl.BatteryStateOfCharge,
        "battery management, lithium-ion state-of-charge estimation from voltage, current and temperature "
        "windows by a 1-D CNN, RMSE in percent", "val_rmse_pct",
        "minimize", (0.0, 100.0), 19200, 960, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="1-D CNN (convolutions of 16 and 32 channels, strides of 2, a layer of 64) reading 64 s of "
        "standardised voltage, current and temperature of 12 simulated equivalent-circuit cells of unknown "
        "capacity on random drive cycles (10 cells / 2, every 20th second), trained by squared error; val "
        "RMSE of the state of charge in percent (about 30 to 55 at the start, OCV inversion beside it)",
    ),
    CorpusWorkload(
        "lob_price_direction", wl.OrderBookDirection,
        "quantitative finance, mid-price direction from limit order book windows by a temporal CNN, "
        "log loss", "val_logloss",
        "minimize", (0.0, None), 30720, 1536, 3e-3, ("adamw", "sgd", "lion"), (32, 64), (0, 30),
        description="temporal CNN (two convolutions of 24 channels, kernel 3, flattened, a layer of 32) over the last "
        "16 events' log volumes of 5 levels a side, spread and mid change of a simulated book driven by a "
        "persistent hidden order-flow imbalance (50,000 events / the last 10,000), trained by cross-entropy "
        "over down, stationary and up in the next 10 events; val log loss (about 1.1 at the start and for the "
        "class shares)",
    ),
    CorpusWorkload(
        "single_cell_type_annotation", wl.CellTypeAnnotation,
        "single-cell genomics, cell-type annotation of scRNA-seq profiles across sequencing batches by an "
        "MLP, macro F1", "val_macro_f1",
        "maximize", (0.0, 1.0), 51200, 2560, 1e-3, ("adamw", "lamb", "lion"), (32, 64), (0, 30),
        description="MLP 300-128-64-12 on standardised log-normalised negative-binomial counts of 300 genes of 12 "
        "cell types in 3 lineages with lineage and subtype markers and rare types (3 batches, 12,000 cells / a "
        "fourth batch, 2,000), trained by cross-entropy; val macro F1 (about 0.05 at the start, "
        "correlation to centroids beside it)",
    ),
)  # fmt: skip
FRESH_BATCHES: dict[int, tuple[str, ...]] = {
    1: tuple(w.name for w in _FRESH),
    2: tuple(w.name for w in _FRESH2),
    3: tuple(w.name for w in _FRESH3),
    4: tuple(w.name for w in _FRESH4),
    5: tuple(w.name for w in _FRESH5),
    6: tuple(w.name for w in _FRESH6),
    7: tuple(w.name for w in _FRESH7),
    8: tuple(w.name for w in _FRESH8),
    9: tuple(w.name for w in _FRESH9),
    10: tuple(w.name for w in _FRESH10),
    11: tuple(w.name for w in _FRESH11),
    12: tuple(w.name for w in _FRESH12),
    13: tuple(w.name for w in _FRESH13),
    14: tuple(w.name for w in _FRESH14),
    15: tuple(w.name for w in _FRESH15),
    16: tuple(w.name for w in _FRESH16),
    17: tuple(w.name for w in _FRESH17),
    18: tuple(w.name for w in _FRESH18),
    19: tuple(w.name for w in _FRESH19),
    20: tuple(w.name for w in _FRESH20),
    21: tuple(w.name for w in _FRESH21),
    22: tuple(w.name for w in _FRESH22),
    23: tuple(w.name for w in _FRESH23),
    24: tuple(w.name for w in _FRESH24),
    25: tuple(w.name for w in _FRESH25),
    26: tuple(w.name for w in _FRESH26),
    27: tuple(w.name for w in _FRESH27),
    28: tuple(w.name for w in _FRESH28),
    29: tuple(w.name for w in _FRESH29),
    30: tuple(w.name for w in _FRESH30),
    31: tuple(w.name for w in _FRESH31),
    32: tuple(w.name for w in _FRESH32),
    33: tuple(w.name for w in _FRESH33),
    34: tuple(w.name for w in _FRESH34),
    35: tuple(w.name for w in _FRESH35),
    36: tuple(w.name for w in _FRESH36),
    37: tuple(w.name for w in _FRESH37),
    38: tuple(w.name for w in _FRESH38),
    39: tuple(w.name for w in _FRESH39),
    40: tuple(w.name for w in _FRESH40),
    41: tuple(w.name for w in _FRESH41),
    42: tuple(w.name for w in _FRESH42),
    43: tuple(w.name for w in _FRESH43),
    44: tuple(w.name for w in _FRESH44),
    45: tuple(w.name for w in _FRESH45),
    46: tuple(w.name for w in _FRESH46),
    47: tuple(w.name for w in _FRESH47),
    48: tuple(w.name for w in _FRESH48),
    49: tuple(w.name for w in _FRESH49),
    50: tuple(w.name for w in _FRESH50),
    51: tuple(w.name for w in _FRESH51),
    52: tuple(w.name for w in _FRESH52),
    53: tuple(w.name for w in _FRESH53),
    54: tuple(w.name for w in _FRESH54),
}
FRESH_WORKLOADS = tuple(name for batch in FRESH_BATCHES.values() for name in batch)
CORPUS_WORKLOADS: dict[str, CorpusWorkload] = {
    w.name: w
    for batch in (
        _ALL,
        _FRESH,
        _FRESH2,
        _FRESH3,
        _FRESH4,
        _FRESH5,
        _FRESH6,
        _FRESH7,
        _FRESH8,
        _FRESH9,
        _FRESH10,
        _FRESH11,
        _FRESH12,
        _FRESH13,
        _FRESH14,
        _FRESH15,
        _FRESH16,
        _FRESH17,
        _FRESH18,
        _FRESH19,
        _FRESH20,
        _FRESH21,
        _FRESH22,
        _FRESH23,
        _FRESH24,
        _FRESH25,
        _FRESH26,
        _FRESH27,
        _FRESH28,
        _FRESH29,
        _FRESH30,
        _FRESH31,
        _FRESH32,
        _FRESH33,
        _FRESH34,
        _FRESH35,
        _FRESH36,
        _FRESH37,
        _FRESH38,
        _FRESH39,
        _FRESH40,
        _FRESH41,
        _FRESH42,
        _FRESH43,
        _FRESH44,
        _FRESH45,
        _FRESH46,
        _FRESH47,
        _FRESH48,
        _FRESH49,
        _FRESH50,
        _FRESH51,
        _FRESH52,
        _FRESH53,
        _FRESH54,
    )
    for w in batch
}


def _stable_seed(text: str) -> int:
    return int(hashlib.sha1(text.encode()).hexdigest()[:8], 16)


def planned_runs(name: str) -> list[dict[str, Any]]:
    """The workload's runs (``{"knobs": ..., "seed": ...}``) in the fixed recording order."""
    w = CORPUS_WORKLOADS[name]
    rng = random.Random(_stable_seed(name))
    base = list(itertools.product(w.optimizers, range(len(LR_FACTORS)), SCHEDULES))
    batches: list[tuple[Any, ...]]
    if w.batch_product:
        batches = [b + (mb,) for b in base for mb in w.micro_batch_sizes]
    else:
        rng.shuffle(base)
        batches = [b + (w.micro_batch_sizes[i % len(w.micro_batch_sizes)],) for i, b in enumerate(base)]
    rng.shuffle(batches)
    points = []
    warm = 0
    for optimizer, level, schedule, mb in batches:
        warmup = 0
        if schedule != "onecycle":  # one-cycle has its own warm-up phase
            warmup = w.warmup_steps[warm % len(w.warmup_steps)]
            warm += 1
        knobs = {
            "optimizer": optimizer,
            "lr_level": level,
            "peak_lr": w.lr(optimizer, level),
            "micro_batch_size": mb,
            "schedule": schedule,
            "warmup_steps": warmup,
        }
        points.append(knobs)
    runs = [{"knobs": k, "seed": 0} for k in points]
    for seed, share in SEED_REPEATS.items():
        chosen = rng.sample(points, round(share * len(points)))
        runs += [{"knobs": k, "seed": seed} for k in chosen]
    rng.shuffle(runs)
    return runs


def recipe_for(name: str, knobs: dict[str, Any]) -> Recipe:
    """The convtune Recipe of one grid point (the planned run is the workload's horizon)."""
    w = CORPUS_WORKLOADS[name]
    params: dict[str, Any] = {}
    if knobs["schedule"] == "cyclic":
        # Two full triangles over the run, ending at the base LR.
        total_steps = math.ceil(w.horizon_samples / knobs["micro_batch_size"])
        params = {"base_lr_ratio": 0.1, "half_period_steps": max(1, total_steps // 4), "mode": "triangular"}
    return Recipe(
        peak_lr=knobs["peak_lr"],
        warmup_steps=knobs["warmup_steps"],
        horizon_samples=w.horizon_samples,
        schedule=knobs["schedule"],
        schedule_params=params,
        micro_batch_size=knobs["micro_batch_size"],
        optimizer=knobs["optimizer"],
    )


def engine_config(name: str, seed: int) -> EngineConfig:
    """Engine settings: cost in samples, one thread, the full planned run."""
    w = CORPUS_WORKLOADS[name]
    return EngineConfig(
        eval_every=w.eval_every_samples, cost="samples", max_cost=w.horizon_samples, threads=1, seed=seed
    )


def run_key(name: str, knobs: dict[str, Any], seed: int) -> str:
    """The run's identity: a hash of workload, knobs, seed and the planned run's sizes."""
    w = CORPUS_WORKLOADS[name]
    blob = json.dumps(
        {
            "workload": name,
            "knobs": knobs,
            "seed": seed,
            "horizon_samples": w.horizon_samples,
            "eval_every_samples": w.eval_every_samples,
        },
        sort_keys=True,
    )
    return hashlib.sha1(blob.encode()).hexdigest()[:16]


def header(name: str) -> dict[str, Any]:
    """The grid file's first line (convtune grid v1)."""
    w = CORPUS_WORKLOADS[name]
    return {
        "convtune_grid": 1,
        "workload": name,
        "kind": w.kind,
        "metric": w.metric,
        "direction": w.direction,
        "metric_bounds": list(w.metric_bounds),
        "knobs": {
            "optimizer": {"type": "categorical", "choices": list(w.optimizers)},
            "peak_lr": {"type": "float", "log": True},
            "lr_level": {"type": "int", "choices": list(range(len(LR_FACTORS)))},
            "micro_batch_size": {"type": "int", "choices": list(w.micro_batch_sizes)},
            "schedule": {"type": "categorical", "choices": list(SCHEDULES)},
            "warmup_steps": {"type": "int", "choices": sorted({0, *w.warmup_steps})},
        },
        "snap": "nearest",
        "horizon_samples": w.horizon_samples,
        "eval_every_samples": w.eval_every_samples,
        "planned_runs": len(planned_runs(name)),
        "description": (
            f"{w.description}. Recorded with convtune.training.engine.train (cost samples, 1 thread, full "
            "planned run, stopped only on divergence). lr_level indexes LR factors "
            f"{[round(f, 4) for f in LR_FACTORS]} × a per-optimizer centre. Curve 'seconds' is "
            "the engine's training wall clock and 'cpu_seconds' this process's CPU time, both "
            "without evaluation and setup; 'lr' is the LR of the last step before the evaluation "
            "(= schedule at 'samples'). Schedules wsd/step/inverse_sqrt are registered by "
            "benchmarks/corpus/schedules.py."
        ),
    }
