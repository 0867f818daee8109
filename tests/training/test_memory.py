"""The figure ``max_memory_mb`` caps: a GPU's memory on a GPU, the resident set on the CPU.

No GPU here: torch.cuda's allocator statistics are replaced by a test double (the only boundary
faked); ``benchmarks/gpu_check.py`` (check 8) runs a capped study on a real GPU.
"""

from __future__ import annotations

import pytest
import torch

from convtune.training.memory import peak_memory_mb, peak_rss_bytes, reset_peak_memory


@pytest.fixture
def gpu(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """A GPU whose allocator has handed out at most 300 MiB; the devices it was reset for."""
    resets: list[object] = []
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda device=None: 300 * 2**20)
    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", lambda device=None: resets.append(device))
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    return resets


def test_a_trial_on_a_gpu_is_judged_by_the_gpus_memory_not_the_hosts(gpu: list[object]) -> None:
    # A CUDA process holds far more host memory than a small model needs on the card: capping
    # that would mark every trial out of memory on a GPU.
    assert peak_memory_mb("cuda") == 300
    assert peak_memory_mb(torch.device("cuda", 0)) == 300
    reset_peak_memory("cuda:0")
    assert gpu == [torch.device("cuda", 0)]


def test_a_trial_on_the_cpu_is_judged_by_its_resident_set(gpu: list[object]) -> None:
    before = peak_rss_bytes() / 2**20
    assert before > 10  # a Python process with torch loaded
    assert peak_memory_mb("cpu") >= before
    assert peak_memory_mb(torch.device("cpu")) != 300
    reset_peak_memory("cpu")
    assert gpu == [], "the CPU's peak is reset without touching CUDA"


def test_a_users_script_is_judged_where_it_trains(gpu: list[object], monkeypatch: pytest.MonkeyPatch) -> None:
    # session.report() cannot know the script's device: CUDA started means it trains there.
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    assert peak_memory_mb() == 300
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    assert peak_memory_mb() >= peak_rss_bytes() / 2**20 - 1 and peak_memory_mb() != 300
