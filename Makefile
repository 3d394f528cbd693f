# memkit: two commands on a fresh machine (only Python 3.11 and make needed).
#   make demo   set up .venv, then run the demo end to end (DuckDB file + offline embedder)
#   make test   set up .venv, then run every test (doctests and notebooks included)
#   make lab    open the notebooks in JupyterLab
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: setup demo test lab bench lint clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: setup
	$(PY) -m memkit demo --db demo.duckdb

test: setup
	$(PY) -m pytest

lab: setup
	$(VENV)/bin/jupyter lab notebooks/

bench: setup
	$(PY) benchmarks/search.py
	$(PY) benchmarks/consolidate.py

lint: setup
	$(VENV)/bin/ruff check memkit tests benchmarks
	$(VENV)/bin/ruff format --check memkit tests benchmarks

clean:
	rm -rf $(VENV) demo.duckdb demo.duckdb.wal .pytest_cache
