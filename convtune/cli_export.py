"""Moved to :mod:`convtune.cli.export`; this path still imports it, with a DeprecationWarning."""

from convtune._moved import moved

moved(__name__, "convtune.cli.export")
