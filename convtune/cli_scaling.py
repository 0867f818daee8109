"""Moved to :mod:`convtune.cli.scaling`; this path still imports it, with a DeprecationWarning."""

from convtune._moved import moved

moved(__name__, "convtune.cli.scaling")
