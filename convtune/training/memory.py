"""This process's peak resident memory, read the same way by the engine, the ranks and scripts."""

from __future__ import annotations

import contextlib
import resource


def peak_rss_bytes() -> int:
    """Peak resident set since the process began or since :func:`reset_peak_rss` (Linux)."""
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    # ru_maxrss is in KiB on Linux: the process's peak resident set (never reset).
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


def peak_rss_mb() -> float:
    """:func:`peak_rss_bytes` in MB (``max_memory_mb`` is checked against it)."""
    return peak_rss_bytes() / 2**20


def reset_peak_rss() -> None:
    """Start a new peak: warm processes run many trials (Linux: ``clear_refs`` "5" resets VmHWM)."""
    with contextlib.suppress(OSError):
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
