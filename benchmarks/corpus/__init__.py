"""A curve corpus for judging forecasts and pruners on workloads convtune was not tuned on.

Eleven small workloads of different kinds (see ``grid.CORPUS_WORKLOADS``), each recorded
through ``convtune.training.engine.train`` over a grid of optimizers, LRs, schedules, micro-batch sizes,
warm-ups and seeds, one grid file per workload (``benchmarks/corpus/record.py`` writes them,
``load_grid`` reads them). Import as ``corpus`` with ``benchmarks/`` on ``sys.path`` or as
``benchmarks.corpus`` from the repository root.
"""

from .gridfile import grid_files, grid_path, load_grid

__all__ = ["grid_files", "grid_path", "load_grid"]
