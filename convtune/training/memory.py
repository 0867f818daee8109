"""The peak memory a trial is judged by, read the same way by the engine, the ranks and scripts.

On a GPU that is the device memory torch's allocator handed out (``max_memory_allocated``), the
figure a user sizes a card by; on the CPU it is the process's peak resident set. The trial's
``peak_memory_mb`` attribute and the ``max_memory_mb`` cap read the same figure, so a study
tuned on a large GPU can be held to a smaller card's memory.
"""

from __future__ import annotations

import contextlib
import resource
import sys
from typing import Any


def peak_rss_bytes() -> int:
    """Peak resident set since the process began or since :func:`reset_peak_memory` (Linux)."""
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    # ru_maxrss is in KiB on Linux: the process's peak resident set (never reset).
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


def _cuda_device(device: Any) -> Any:
    """The CUDA device ``device`` names, or None for the CPU. With ``device=None`` it is the
    current GPU if this process has started CUDA (a user's script trains where it likes)."""
    torch = sys.modules.get("torch")  # a script that never imported torch trains on no GPU
    if torch is None:
        return None
    if device is None:
        return torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_initialized() else None
    device = torch.device(device)
    return device if device.type == "cuda" else None


def peak_memory_bytes(device: Any = None) -> int:
    """Peak memory of a run on ``device`` (a ``torch.device`` or its name) since the last reset:
    device memory on a GPU, the peak resident set elsewhere.

    Example:
        >>> peak_memory_bytes("cpu") == peak_rss_bytes()
        True
    """
    cuda = _cuda_device(device)
    if cuda is not None:
        import torch

        return int(torch.cuda.max_memory_allocated(cuda))
    return peak_rss_bytes()


def peak_memory_mb(device: Any = None) -> float:
    """:func:`peak_memory_bytes` in MB (``max_memory_mb`` is checked against it)."""
    return peak_memory_bytes(device) / 2**20


def reset_peak_memory(device: Any = None) -> None:
    """Start a new peak: warm processes run many trials (Linux: ``clear_refs`` "5" resets VmHWM)."""
    cuda = _cuda_device(device)
    if cuda is not None:
        import torch

        torch.cuda.reset_peak_memory_stats(cuda)
        return
    with contextlib.suppress(OSError):
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
