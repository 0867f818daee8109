"""Typed errors. Library code raises these; only the CLI turns them into one-line messages."""

from __future__ import annotations


class ConvtuneError(Exception):
    """Base of every error a user can cause and fix.

    ``where`` names the file and/or field at fault, ``fix`` says what to do about it. The CLI
    prints ``where: message (fix)`` on one line and exits with status 2.
    """

    def __init__(self, message: str, *, where: str | None = None, fix: str | None = None):
        self.message = message
        self.where = where
        self.fix = fix
        super().__init__(self.one_line())

    def one_line(self) -> str:
        text = f"{self.where}: {self.message}" if self.where else self.message
        if self.fix:
            text += f" — {self.fix}"
        return " ".join(text.split())


class ConfigError(ConvtuneError):
    """A spec, search space or recipe file (or the flag that overrides it) is invalid."""


class TargetError(ConfigError):
    """A target string such as ``val_loss<=1.9`` is malformed."""


class WorkloadError(ConvtuneError):
    """A workload cannot be resolved, or its factory raised."""


class StorageError(ConvtuneError):
    """A storage URL cannot be opened."""


class StudyError(ConvtuneError):
    """A study is missing, or exists with a different spec."""


class TrainingDiverged(Exception):
    """Raised inside the engine when a run diverges; not a user error."""


class Preempted(KeyboardInterrupt):
    """SIGTERM, as a cluster scheduler sends before it preempts a job (or a signal that ended a
    trial's rank): stop like Ctrl-C, but the running trial is re-queued (and resumes from its
    checkpoint when ``checkpoint_dir`` is set) the next time the study runs.

    A ``KeyboardInterrupt`` so that every clean-up path of Ctrl-C (ranks stopped, Optuna's
    FAIL) runs for it too. Defined here, below every layer, because a launched executor raises
    it when a rank was ended by SIGTERM or SIGINT (the whole job is being stopped).
    """
