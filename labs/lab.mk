# Shared by every labs/labNN/Makefile (which only includes this file).
#   make test   check your student.py (the first run sets up the course's .venv)
#   make clean  remove caches
ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
LAB  := $(notdir $(CURDIR))

.PHONY: test clean

test:
	@$(MAKE) --no-print-directory -s -C $(ROOT) setup
	@$(ROOT)/.venv/bin/minillm verify $(LAB)

clean:
	rm -rf __pycache__ .pytest_cache
