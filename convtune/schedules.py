"""Moved to :mod:`convtune.config.schedules`; this path still imports it, with a DeprecationWarning."""

from convtune._moved import moved

moved(__name__, "convtune.config.schedules")
