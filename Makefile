# The two commands of the README. Both run the same idempotent setup first.
#   make demo   set everything up, then run the main job on the bundled default robot
#   make test   set everything up (plus test peers), then lint (ruff, ruff.toml) and run the test suite
SHELL := /bin/bash
PY := .venv/bin/python
# the suite runs on this many pytest-xdist workers, a test file per worker at a time (its module
# fixtures run once; the long recorded closed loops together on one worker, first: test/conftest.py
# HEAVY), each worker on a ROS domain of its own (test/conftest.py)
TEST_WORKERS ?= 2
DEMO_ARGS ?= --robot puma560 --controller computed_torque --record out/demo

.PHONY: setup setup-test demo test docs bench clean

setup:
	@scripts/setup.sh

setup-test:
	@scripts/setup.sh --test

demo: setup
	.venv/bin/rbd-ros bringup $(DEMO_ARGS)

test: setup-test
	$(PY) -m ruff check .
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

# the documentation site (docs/: Sphinx + MyST, furo, API reference from the docstrings) in
# build/docs/, warnings as errors (CI builds it in test/project/test_docs.py, there without the
# per-function entries of the API pages' "On this page" panel: ~2x faster, the same warnings)
docs: setup-test
	$(PY) -m sphinx -W --keep-going -b html docs build/docs

# every figure of README's performance table, in one run: results in bench/results/run-*.json
# (committed, with the commit measured and whether the tree had uncommitted changes), the table
# regenerated from it (bench/make_table.py, the commit written under it); ~8 min
bench: setup-test
	@$(PY) bench/make_table.py --start  # the commit measured (bench/results/.started)
	$(PY) bench/bench_core.py
	$(PY) bench/bench_services.py
	$(PY) bench/bench_control.py
	-$(PY) bench/bench_bridge.py --rt-priority 50  # exit 1 = a target missed: still recorded
	$(PY) bench/bench_any_arm.py
	$(PY) bench/make_table.py --record

clean:
	rm -rf .venv build out
