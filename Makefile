# The two commands of the README. Both run the same idempotent setup first.
#   make demo   set everything up, then run the main job on the bundled default robot
#   make test   set everything up (plus test peers), then lint (ruff, ruff.toml), type-check rbd_ros/
#               (mypy, mypy.ini) and run the test suite
#   make test-fast  the same without the tests marked slow (-m "not slow": every module, <= 2 min)
SHELL := /bin/bash
PY := .venv/bin/python
# the suite runs on this many pytest-xdist workers, a test file per worker at a time (its module
# fixtures run once; the long recorded closed loops together on one worker, first: test/conftest.py
# HEAVY), each worker on a ROS domain of its own (test/conftest.py); the last worker is the idle
# lane: under SCHED_IDLE, it takes only the files that need no timely CPU, in the CPU time the
# closed loops leave (test/support/xdist_lanes.py: a lockstep test took 105.8 s beside CPU-bound
# work at normal priority, 15.7 s beside it under SCHED_IDLE)
TEST_WORKERS ?= 3
DEMO_ARGS ?= --robot puma560 --controller computed_torque --record out/demo

.PHONY: setup setup-test demo test test-fast docs docs-fast bench clean

setup:
	@scripts/setup.sh

setup-test:
	@scripts/setup.sh --test

demo: setup
	.venv/bin/rbd-ros bringup $(DEMO_ARGS)

test: setup-test
	$(PY) -m ruff check .
	$(PY) -m mypy
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup --idle-lane $(PYTEST_ARGS)

test-fast: setup-test
	$(PY) -m ruff check .
	$(PY) -m mypy
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup --idle-lane -m "not slow" $(PYTEST_ARGS)

# the documentation site (docs/: Sphinx + MyST, furo, API reference from the docstrings) in
# build/docs/, warnings as errors (CI builds it in test/project/test_docs.py, there without the
# per-function entries of the API pages' "On this page" panel: ~2x faster, the same warnings).
# Both builds are incremental (Sphinx's doctrees kept beside the pages: a rebuild re-reads only
# the pages, and the API pages of the modules, that changed). The docs need the test peers
# (sphinx, myst-parser, furo), not compiled kernels: setup runs only when they are missing, as
# setup-test's kernel warm-up after a source change (~150 s) was most of make docs' 3 min 20 s.
# make docs-fast: the same pages without viewcode's source pages and the per-function panel
# entries (docs/conf.py, RBD_DOCS_FAST), in build/docs-fast/: ~40 s of CPU from scratch, ~2 s
# after a change (docs/guides/performance-notes.md, "The documentation build")
DOCS_ENV = $(PY) -c "import sphinx, myst_parser, furo" 2>/dev/null || scripts/setup.sh --test

docs:
	@$(DOCS_ENV)
	$(PY) -m sphinx -W --keep-going -b html docs build/docs

docs-fast:
	@$(DOCS_ENV)
	RBD_DOCS_FAST=1 $(PY) -m sphinx -W --keep-going -q -b html docs build/docs-fast

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
	$(PY) bench/bench_startup.py  # each node's cold and warm start, Robot's first calls (startup.json)
	$(PY) bench/bench_fork_server.py  # a bringup's CPU, nodes forked against fresh (fork_server.json)
	$(PY) bench/bench_closed_loop.py  # the sweep's loop against a hand-written mj_step loop (closed_loop.json)
	$(PY) bench/make_table.py --record

clean:
	rm -rf .venv build out

# the mutation audit (issue 45): plausible one-line bugs planted one at a time in a copy of the
# tree, each run against the tests that cover its module; the kill table in docs/mutation-audit.md
.PHONY: mutants
mutants: setup-test
	$(PY) scripts/mutants.py --write $(MUTANTS_ARGS)
