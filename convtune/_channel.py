"""Moved to :mod:`convtune.execution.channel`; this path still imports it, with a DeprecationWarning."""

from convtune._moved import moved

moved(__name__, "convtune.execution.channel")
