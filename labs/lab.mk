# Shared by every labs/labNN/Makefile (which only includes this file).
#   make test        check your student.py (the first run sets up the course's .venv)
#   make hint [T=n] [L=level]  the hints of the first test that does not pass (or of
#                    test n), L levels deep (every level without L)
#   make clean       remove caches
ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
LAB  := $(notdir $(CURDIR))
T    ?=
L    ?= 9

.PHONY: test hint clean

test:
	@$(MAKE) --no-print-directory -s -C $(ROOT) setup
	@$(ROOT)/.venv/bin/minillm verify $(LAB)

hint:
	@$(MAKE) --no-print-directory -s -C $(ROOT) setup
	@$(ROOT)/.venv/bin/minillm hint $(LAB) $(T) --level $(L)

clean:
	rm -rf __pycache__ .pytest_cache
