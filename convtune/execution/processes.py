"""Launched processes: stopping a process group, describing how a process ended, a log's tail."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any


def _with_exit_code(description: str, log: Path) -> str:
    """Add what torchrun saw of a rank that vanished (``exitcode: -9`` is a SIGKILL)."""
    match = re.match(r"rank (\d+) exited without", description)
    if not match:
        return description
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return description
    found = re.search(rf"rank\s*:\s*{match.group(1)}\b.*?exitcode\s*:\s*(-?\d+)", text, re.S)
    if found:
        description += f"; torchrun: {_describe_exit(int(found.group(1)))}"
    return description


_STOP_SIGNALS = {-int(signal.SIGTERM): "SIGTERM", -int(signal.SIGINT): "SIGINT"}


def stop_signal_of(returncode: int | None, log: Path) -> str | None:
    """``SIGTERM`` or ``SIGINT`` when that signal ended the launch (torchrun itself, or one of
    its ranks, by torchrun's log): the job is being stopped, not the trial crashing."""
    if returncode in _STOP_SIGNALS:
        return _STOP_SIGNALS[returncode]
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return None
    # The root cause only: torchrun ends the other ranks with SIGTERM itself after a failure.
    rank = re.search(r"Root Cause.*?exitcode\s*:\s*(-2|-15)\b", text, re.S)
    if rank is not None:
        return _STOP_SIGNALS[int(rank.group(1))]
    agent = re.search(r"Received (?:Signals\.)?(SIGTERM|SIGINT) death signal", text)
    return agent.group(1) if agent is not None else None


def _describe_exit(code: int | None) -> str:
    if code is not None and code < 0:
        return f"exited on signal {signal.Signals(-code).name}"
    return f"exited with status {code}"


# torchrun's own log lines (glog style: "E1207 04:14:04.357000 8647 torch/distributed/elastic/…").
_AGENT_LINE = re.compile(r"^[EWI]\d{4} [\d:.]+ \d+ \S*torch/distributed/")


def _log_tail(path: Path, lines: int = 3) -> str:
    """The last useful lines of a launch's output: the program's own, not torchrun's report of it.

    When a rank fails, torchrun logs the exit and then prints its traceback and a summary that
    names no cause; the program's last lines before that do.
    """
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(no output)"
    for i, line in enumerate(text):
        if _AGENT_LINE.match(line) and "failed (exitcode" in line:
            if any(earlier.strip() for earlier in text[:i]):
                text = text[:i]
            break
    useful = [
        line.strip()
        for line in text
        if line.strip() and not line.startswith("*") and not _AGENT_LINE.match(line)
    ]
    return " | ".join(useful[-lines:]) or "(no output)"


def _terminate(proc: subprocess.Popen[bytes], pids: Any) -> None:
    """Stop torchrun (it stops its ranks) and any rank it left behind; SIGKILL if they linger."""
    pids = list(pids)
    for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, sig)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if proc.poll() is not None and not any(_exists(pid) for pid in pids):
                return
            time.sleep(0.05)


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is gone in all that matters; torchrun reaps its children.
    with contextlib.suppress(OSError):
        with open(f"/proc/{pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                return False
    return True
