"""Moved to :mod:`convtune.config.optim`; this path still imports it, with a DeprecationWarning."""

from convtune._moved import moved

moved(__name__, "convtune.config.optim")
