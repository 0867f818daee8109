"""Moved to :mod:`convtune.study.workers`; this path still imports it, with a DeprecationWarning."""

from convtune._moved import moved

moved(__name__, "convtune.study.workers")
