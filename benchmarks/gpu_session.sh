#!/usr/bin/env bash
# Every GPU check in one call, for a machine with a GPU that is lent for minutes:
#   bash benchmarks/gpu_session.sh [WHEEL_DIR] [LOG_DIR]
# WHEEL_DIR (optional): wheels of convtune's dependencies for that machine's Python, installed
# with --no-deps beside its own CUDA build of torch (see benchmarks/gpu_check.py's docstring for
# the list). LOG_DIR (default: gpu_logs): where each step's output is kept. Runs, in order and
# each under a time limit so that one hang cannot spend the machine: the CUDA path check, the
# engine's per-step overhead there, and the engine, probe and integration tests with the GPU shown.
set -uo pipefail
cd "$(dirname "$0")/.."
wheels="${1:-}"
logs="${2:-gpu_logs}"
mkdir -p "$logs"
export PYTHONUNBUFFERED=1
python="${PYTHON:-python3}"
if [ -n "$wheels" ]; then
    "$python" -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/convtune-site "$wheels"/*.whl || exit 3
    export PYTHONPATH="$PWD:/tmp/convtune-site${PYTHONPATH:+:$PYTHONPATH}"
else
    export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$logs/gpu.txt" 2>&1
status=0
timeout 300 "$python" benchmarks/gpu_check.py 2>&1 | tee "$logs/gpu_check.log" || status=1
timeout 180 "$python" benchmarks/loop_overhead.py 2>&1 | tee "$logs/loop_overhead.log" || status=1
CONVTUNE_TEST_GPU=1 timeout 240 "$python" -m pytest -q -p no:cacheprovider -rf \
    tests/training/test_engine.py tests/training/test_probes.py tests/integrations 2>&1 \
    | tee "$logs/pytest_gpu.log" | tail -5 || status=1
echo "gpu session: $([ $status = 0 ] && echo 'every step passed' || echo 'a step failed'); logs in $logs"
exit $status
