"""optuna-dashboard over a convtune study, read in a real headless browser (Chromium driven by
Playwright): History's y-axis stays within 20 × the cap though a trial is penalised, every
trial shows its status, and no trial page is wider than the window.

Skipped where Playwright or Chromium is missing (CI has both). Chromium is found at
``$CONVTUNE_CHROMIUM``, else ``/usr/bin/chromium``, else on ``PATH``. With
``CONVTUNE_UPDATE_SCREENSHOT=1`` the History page is saved as ``docs/img/dashboard.png``.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from convtune.config.spec import StudySpec
from convtune.study import create_study, run_study
from convtune.study.outcome import PENALTY_CEILING

SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "img" / "dashboard.png"
VIEWPORT = {"width": 1280, "height": 800}
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _chromium() -> str | None:
    for candidate in (os.environ.get("CONVTUNE_CHROMIUM"), "/usr/bin/chromium"):
        if candidate and Path(candidate).is_file():
            return candidate
    return next((p for name in ("chromium", "chromium-browser") if (p := shutil.which(name))), None)


sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install -e .[dev])"
)
CHROMIUM = _chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium executable (/usr/bin/chromium, $CONVTUNE_CHROMIUM or PATH)"
)

MAX_COST = 4096
SPEC = {
    "workload": "digits",
    "space": {
        "peak_lr": {"choices": [1.0e-2, 1.0e-5]},
        "warmup_steps": 0,
        "horizon_samples": MAX_COST,
        "schedule": "constant",
        "micro_batch_size": 32,
        "optimizer": "adamw",
    },
    "target": "accuracy>=0.85",
    "cost": "samples",
    "max_cost": MAX_COST,
    "eval_every": {"samples": 1024},
    "pruner": "none",
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[Any]]]:
    """A finished study (an lr that learns, one too small to) served by ``convtune dashboard``;
    yields the study page's URL and its trials."""
    directory = tmp_path_factory.mktemp("browser-study")
    url = f"sqlite:///{directory / 'study.db'}"
    study = create_study("browser", StudySpec.from_dict(SPEC), url)
    for lr in SPEC["space"]["peak_lr"]["choices"]:
        study.enqueue_trial({"peak_lr": lr})
    trials = run_study("browser", n_trials=2, storage=url).trials
    port = _free_port()
    exe = shutil.which("convtune", path=str(Path(sys.executable).parent)) or "convtune"
    proc = subprocess.Popen(
        [exe, "dashboard", "browser", "--storage", url, "--port", str(port)],
        cwd=directory,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/meta", timeout=5).close()  # noqa: S310 (loopback)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"dashboard did not start (exit {proc.poll()})")
                time.sleep(0.3)
        yield f"{base}/dashboard/studies/{study._study_id}", trials
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def page(served: tuple[str, list[Any]]) -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser.new_page(viewport=VIEWPORT)
        finally:
            browser.close()


def test_history_axis_ends_within_twenty_times_the_cap(page: Any, served: tuple[str, list[Any]]) -> None:
    study_url, trials = served
    assert any(t.value > MAX_COST for t in trials), "a penalised trial, or the check proves nothing"
    page.goto(study_url)
    page.wait_for_selector("#plot-history .main-svg", timeout=30_000)
    axis = page.evaluate(
        "() => { const a = document.getElementById('plot-history')._fullLayout.yaxis;"
        " return {type: a.type, range: a.range}; }"
    )
    top = 10 ** axis["range"][1] if axis["type"] == "log" else axis["range"][1]
    # Plotly pads the axis a little beyond the largest value.
    assert top <= PENALTY_CEILING * MAX_COST * 1.1, axis
    if os.environ.get("CONVTUNE_UPDATE_SCREENSHOT") == "1":
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOT))


def test_every_trial_page_shows_its_status_and_fits_the_window(
    page: Any, served: tuple[str, list[Any]]
) -> None:
    study_url, trials = served
    for trial in trials:
        page.goto(f"{study_url}/trials?numbers={trial.number}")
        page.wait_for_selector("text=User Attributes", timeout=30_000)
        text = page.inner_text("body")
        assert f"status {trial.user_attrs['status']}" in text, f"trial {trial.number}: no status shown"
        width = page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= VIEWPORT["width"], f"trial {trial.number}'s page is {width} px wide"
