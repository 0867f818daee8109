"""A PostgreSQL server that goes away for longer than the reconnect budget: one line, the real cause.

The server is never touched: the run reaches it through a small TCP proxy in the test, and
closing the proxy (its listening socket and every connection through it) is the outage. After
it, every new connection is refused, as from a stopped server.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import optuna
import pytest
import yaml
from services import TcpProxy, drop_postgres_study, postgres_url, tag
from specs import CLI_SPACE, CLI_SPEC

from convtune.config.spec import load_spec
from convtune.study import create_study

BUDGET_S = 3


@pytest.mark.parametrize("workers", [1, 2])
def test_a_database_down_past_the_reconnect_budget_is_one_line_with_the_real_cause(
    workers: int, tmp_path: Path
) -> None:
    """`study run` exits 2 within the budget (plus start-up slack) with one redacted line whose
    cause is the driver's ("Connection refused"): no retry notices, no tracebacks from Optuna's
    trial log, its heartbeat thread or its bookkeeping, nor from worker processes (``--workers 2``)
    stopped while they send their error up. (A missing database is reported at once:
    tests/storage/test_storage.py.)"""
    base = urlsplit(postgres_url())
    proxy = TcpProxy((base.hostname or "127.0.0.1", base.port or 5432))
    # A password (trust authentication ignores it) that must not be printed.
    url = f"postgresql://{base.username}:s3cret@127.0.0.1:{proxy.port}{base.path}"
    name = tag("leftovers-down")
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(CLI_SPACE))
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump({**CLI_SPEC, "max_cost": 4096}))
    env = {**os.environ, "CONVTUNE_RECONNECT_SECONDS": str(BUDGET_S), "OMP_NUM_THREADS": "1"}
    env.pop("CONVTUNE_STORAGE", None)
    cli = [sys.executable, "-m", "convtune.cli", "study"]
    run: subprocess.Popen[str] | None = None
    try:
        create_study(name, load_spec(tmp_path / "spec.yaml"), url)
        run = subprocess.Popen(
            [*cli, "run", name, "-n", "500", "--storage", url, "--workers", str(workers)],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        # The outage starts while the first trial trains (its row exists, through the proxy).
        deadline = time.monotonic() + 60
        while not optuna.load_study(study_name=name, storage=postgres_url()).trials:
            assert run.poll() is None and time.monotonic() < deadline, run.communicate()
            time.sleep(0.1)
        proxy.close()
        closed = time.monotonic()
        out, err = run.communicate(timeout=BUDGET_S + 30)
        took = time.monotonic() - closed
    finally:
        proxy.close()
        if run is not None and run.poll() is None:
            run.kill()
        drop_postgres_study(postgres_url(), name)
    lines = [line for line in err.splitlines() if line.strip()]
    assert run.returncode == 2, (run.returncode, err[-3000:])
    assert len(lines) == 1 and "Traceback" not in out + err, err[-3000:]
    assert f"127.0.0.1:{proxy.port}" in lines[0] and "s3cret" not in out + err, lines[0]
    assert "refused" in lines[0], lines[0]
    assert took < BUDGET_S + 8, took
