"""Moved to :mod:`convtune.report.scaling_plots`; this path still imports it, with a DeprecationWarning."""

from convtune._moved import moved

moved(__name__, "convtune.report.scaling_plots")
