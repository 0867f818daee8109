"""benchmarks/storage_load.py: convtune's storage priced against plain Optuna's, side by side.

Runs against the Redis this machine serves (skips with the reason elsewhere, fails under
``CONVTUNE_REQUIRE_SERVICES``); a few trials, so its timings mean nothing, only its shape does.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.services import drop_redis_prefix, redis_url, tag

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "storage_load.py"


def test_against_plain_grows_both_studies_in_turn_and_tables_the_ratios() -> None:
    prefix = tag("storage-load")
    url = redis_url(prefix=prefix)
    try:
        done = subprocess.run(
            [
                sys.executable,
                str(SCRIPT),
                "--storage",
                url,
                "--trials",
                "4",
                "--reports",
                "2",
                "--bucket",
                "2",
            ]
            + ["--sampler", "random", "--against-plain"],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        # Each storage kept its own journal: the plain one beside convtune's, not in it.
        journals = {name: _keys(name) for name in (prefix, f"{prefix}-plain")}
    finally:
        drop_redis_prefix(prefix)
        drop_redis_prefix(f"{prefix}-plain")
    lines = done.stdout.strip().splitlines()
    rows = [line for line in lines if line.startswith("| ") and "–" in line.split("|")[1]]
    assert [row.split("|")[1].strip() for row in rows] == ["1–2", "3–4"]
    assert all(row.count("×)") == 5 for row in rows)
    summary = json.loads(lines[-1])
    assert [bucket["trials"] for bucket in summary["buckets"]] == [2, 4]
    for bucket in summary["buckets"]:
        for side in ("convtune_ms", "plain_ms"):
            assert bucket[side]["trial"] > 0
            assert bucket[side]["ask_write"] > 0
    assert all(journals.values()), journals


def _keys(prefix: str) -> int:
    import redis

    client = redis.Redis.from_url(redis_url())
    try:
        return sum(1 for _ in client.scan_iter(match=f"{prefix}:*", count=1000))
    finally:
        client.close()
