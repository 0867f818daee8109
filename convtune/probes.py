"""Moved to :mod:`convtune.training.probes`; this path still imports it, with a DeprecationWarning."""

from convtune._moved import moved

moved(__name__, "convtune.training.probes")
