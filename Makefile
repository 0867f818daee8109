# Two commands on a fresh machine with Python 3.11: `make demo` (the main job) and `make test`.
# Both create or reuse .venv and install what they need: torch==2.13.0 first (a CPU wheel; any
# other spec may pull a multi-GB CUDA build), then convtune with its test extras.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.convtune-installed

.PHONY: demo test lint bench dashboard clean stress

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[dev]'
	# The notebook test runs a python3 kernel from this venv (nbclient); register it here.
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 > /dev/null
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/convtune study create demo --config studies/charlm.yaml
	$(BIN)/convtune study run demo --n-trials 8

# Two workers, each pinned to a core of its own (tests/conftest.py): 8.5 min instead of 13 on
# this 2-core kind of machine. `$(BIN)/python -m pytest` alone runs the same tests one by one.
test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist worksteal --durations=30

# The looped signal matrix: every pattern × storage × 1 and 2 workers, 30 runs a cell (hours;
# PostgreSQL from $$CONVTUNE_TEST_POSTGRES). Results: README, Reliability.
stress: $(STAMP)
	$(BIN)/python benchmarks/stress_signals.py --runs 30 --markdown stress_signals.md

lint: $(STAMP)
	$(BIN)/ruff check convtune tests benchmarks
	$(BIN)/ruff format --check convtune tests benchmarks

dashboard: $(STAMP)
	$(BIN)/convtune dashboard demo

clean:
	rm -rf $(VENV) studies/*.db studies/artifacts
