"""A user's script for executor tests: reports ``val_loss`` every 32 samples until told to stop.

``--nan-at N`` reports NaN at the N-th report. It never stops on its own before ``--reports``, so a
short history proves the worker's decision reached it.
"""

from __future__ import annotations

import argparse
import math
import sys

from convtune.execution import session

parser = argparse.ArgumentParser()
parser.add_argument("--nan-at", type=int, default=0)
parser.add_argument("--reports", type=int, default=200)
args = parser.parse_args()

session.recipe()
for index in range(1, args.reports + 1):
    loss = math.nan if index == args.nan_at else 1.0 / index
    if session.report(step=index, samples=32 * index, metrics={"val_loss": loss}):
        sys.exit(0)
sys.exit(3)  # never told to stop
