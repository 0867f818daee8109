"""Tune the training script you already have: Hugging Face ``Trainer`` and PyTorch Lightning.

Each framework gets a callback and the few keyword arguments that make it train a convtune
recipe exactly; they live in their own modules, imported only when used (the frameworks are
optional extras: ``pip install convtune[hf]`` / ``convtune[lightning]``):

* :mod:`convtune.integrations.transformers` — ``ConvtuneCallback`` (a ``TrainerCallback``),
  ``training_arguments``, ``trainer_kwargs``, ``train_kwargs``.
* :mod:`convtune.integrations.lightning` — ``ConvtuneCallback`` (a Lightning ``Callback``),
  ``configure_optimizers``, ``trainer_kwargs``, ``fit_kwargs``, ``batch_size``.

Inside a convtune trial (``workload: {script: train.py}``, see :mod:`convtune.execution.session`) the
callbacks report every evaluation with its cost, stop training when convtune says so and report
divergence; outside one they do nothing, so the same script still trains on its own. Given an
Optuna trial instead (``ConvtuneCallback(trial=trial)``, or the Trainer's
``hyperparameter_search``), they report to it with the cost as the step, which is what
:class:`convtune.pruners.TimeToTargetPruner` compares, and end a stopped trial as a finished
one whose value is its time-to-target (measured, else forecast): see ``docs/integrations.md``.

This package imports neither framework; :func:`trial_value` and :func:`planned_lrs` are the
framework-free pieces both callbacks share.
"""

from convtune.integrations._core import TrainClock, TrialLink, planned_lrs, trial_value

__all__ = ["TrainClock", "TrialLink", "planned_lrs", "trial_value"]
