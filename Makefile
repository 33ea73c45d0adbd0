# miniLLM lab — one entry point for students, instructors and CI.
#   make test LAB=lab04   verify one lab (sets up .venv on first use)
#   make hint LAB=lab04 [T=n] [L=level]   its hints (as make hint in labs/lab04)
#   make check            the project's own tests + ruff + mypy + the import contracts
#   make bytecode         the course's .pyc files (setup and pytest write them first)
#   make bench            benchmarks (on demand): medians, ratios, then one table of every goal
#   make train            train the default chat model (minutes; writes minillm-default.*)
#   make handouts         rewrite the TASK.md output blocks from real grader runs
#   make stubs            write labs/*/student.py and .stub.py from solutions/ (the markers)
#   make diagnoses        rebuild labs/*/diagnoses.json (known bugs) from tests/mutants
#   make model            rebuild the shipped chat model in framework/data (deterministic)

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
LAB    ?= lab04
LINTED := framework grader tests bench labs solutions
COMPILE = $(BIN)/python -m compileall -q framework grader labs solutions > /dev/null

.PHONY: bytecode setup test hint status check lint typecheck pytest bench handouts stubs diagnoses train model clean

setup: $(STAMP)
	@:

# The first run takes 15-30 s: say so, and let the installer show its progress.
$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "miniLLM lab needs Python >= 3.11, found " + sys.version.split()[0])'
	@echo "setting up $(VENV) (first run only) ..."
	@$(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --disable-pip-version-check -e '.[test,dev]'
	-@$(COMPILE)
	@touch $(STAMP)
	@echo "$(VENV) is ready"

test: $(STAMP)
	@$(BIN)/minillm verify $(LAB)

# at the root the lab must be named: a default one would show another lab's hints
hint: $(STAMP)
ifeq ($(origin LAB),file)
	@echo "make hint needs the lab: make hint LAB=lab04 T=3 (or: cd labs/lab04; make hint T=3)" >&2
	@exit 2
else
	@$(MAKE) --no-print-directory -s -C labs/$(LAB) hint
endif

status: $(STAMP)
	@$(BIN)/minillm status

lint: $(STAMP)
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/lint-imports --no-cache

typecheck: $(STAMP)
	$(BIN)/mypy

# one worker per core and one more, the files marked slow first (tests/conftest.py); a
# file's tests stay together, so a module's built fixtures and the mutant runs they share
# are made once (MINILLM_PYTEST_ARGS="-n 0" runs in one process)
pytest: $(STAMP) bytecode
	$(BIN)/pytest -q -n auto --dist loadfile --no-loadscope-reorder $(MINILLM_PYTEST_ARGS)

# The course's bytecode, written once: a sandbox child never writes any (so it leaves no
# file in a lab folder), and without this every child, and every run where
# PYTHONDONTWRITEBYTECODE is set, would compile the grader and the framework anew.
# A file that does not compile (a student's work in progress) is the tests' to report.
bytecode: $(STAMP)
	-@$(COMPILE)

check: lint typecheck pytest

# each script records its figures (bench/figures.py); the summary table comes last, and
# "-" keeps going past a failing script so that its figures show as missing, not the rest
bench: $(STAMP)
	$(BIN)/python bench/summary.py --clear
	-$(BIN)/python bench/run.py
	-$(BIN)/python bench/isolation.py
	-$(BIN)/python bench/model_forward.py
	-$(BIN)/python bench/model_train_step.py
	-$(BIN)/python bench/train_throughput.py
	-$(BIN)/python bench/generate_cache.py --runs 5
	-$(BIN)/python bench/bpe_train.py
	-$(BIN)/python bench/bpe_train.py --hf-threads 0 --runs 5
	-BENCH_RUNS=5 $(BIN)/python bench/grade_batch.py
	-$(BIN)/python bench/serve_load.py
	-$(BIN)/python bench/codec_decode.py
	$(BIN)/python bench/summary.py

train: $(STAMP)
	$(BIN)/minillm train --preset default --out minillm-default.bin
	$(BIN)/minillm eval minillm-default.bin

handouts: $(STAMP)
	$(BIN)/python -m grader.course.handouts --write

stubs: $(STAMP)
	$(BIN)/python -m grader.course.stubs

diagnoses: $(STAMP)
	$(BIN)/python -m grader.course.diagnoses

# One BLAS thread: on a shared machine more threads spin instead of working.
model: $(STAMP)
	OPENBLAS_NUM_THREADS=1 $(BIN)/python -m framework.shipped_train --out framework/data

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
