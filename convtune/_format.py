"""Moved to :mod:`convtune.report.format`; this path still imports it, with a DeprecationWarning."""

from convtune._moved import moved

moved(__name__, "convtune.report.format")
