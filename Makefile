# Quick start: `make run` and `make test`. Both set up everything they need in .venv first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(BIN)):$(PATH)
export MPLBACKEND := Agg

.PHONY: setup develop run test test-rust lint-rust test-python lint-python bench bench-scaling bench-ns3 bench-htsim clean

# The virtual environment with the Python dependencies (re-made when pyproject.toml changes).
$(BIN)/.deps: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q "maturin>=1.5,<2" "pydantic>=2.5" "numpy>=1.26" "pandas>=2.1" \
		"pyarrow>=14" "matplotlib>=3.8" "rich>=13" "dask[distributed]>=2024.1" "pytest>=8" "hypothesis>=6" "statsmodels>=0.14" "scipy>=1.11" "jinja2>=3.1" \
		"ruff==0.17.6" "mypy==2.4.1" "jsonschema>=4.18" "shtab>=1.7" "nbclient>=0.10" "ipykernel>=6.29" \
		"mkdocs>=1.6" "mkdocstrings[python]>=0.26" "pymdown-extensions>=10"
	touch $@

setup: $(BIN)/.deps

# Build the Rust engine in release mode and install ccsim into .venv (incremental).
# maturin installs the dependencies with `pip install`, which lists every one as "Requirement
# already satisfied", then reads `pip show --files ccsim` to mark the install editable. PIP_QUIET
# would silence both: the install would stay a plain one from a temporary wheel, and pip in
# tests/test_wheel.py's fresh environment, which borrows .venv's packages, would then take the
# built wheel of the same version as installed and skip it. pip-install-quiet.conf quiets
# `pip install` only (a config file's [install] section); a PIP_CONFIG_FILE of your own wins.
develop: setup
	printf '[install]\nquiet = 1\n' > $(VENV)/pip-install-quiet.conf
	PIP_CONFIG_FILE=$${PIP_CONFIG_FILE:-$(abspath $(VENV))/pip-install-quiet.conf} $(BIN)/maturin develop --release --quiet

run: develop
	$(BIN)/ccsim reproduce all --quick --out results/reproductions
	@echo "Reports: results/reproductions/*/report.md (one per paper; tables as CSV/Markdown, figures as PNG)"

test: develop test-rust test-python

test-rust: lint-rust
	cargo test --workspace --quiet

# House rules a tool enforces: rustfmt (rustfmt.toml) and clippy with warnings as errors.
lint-rust:
	cargo fmt --all -- --check
	cargo clippy --all-targets --workspace --quiet -- -D warnings

test-python: lint-python
	$(BIN)/python -m pytest -q -rs

# House rules for the Python: ruff (lint and format, pyproject.toml) and mypy on the package.
lint-python: setup
	$(BIN)/ruff check python tests bench
	$(BIN)/ruff format --check python tests bench
	$(BIN)/mypy

bench: develop
	cargo build --release --quiet -p ccsim-core --bin ccsim-bench
	$(BIN)/python bench/bench.py
	$(BIN)/python bench/bench.py --cc bbr --flows 10,900
	$(BIN)/python bench/bench.py --cc bbr3 --flows 10,900
	$(BIN)/python bench/memory.py
	$(BIN)/python bench/python_models.py --runs 5

# ccsim against ns-3 on the same dumbbell (not part of CI or `make test`): builds ns-3 from
# Debian's source package with its optimized profile (once, cached in bench/ns3/.build/; 6
# minutes on one core here; adds a deb-src entry and installs cmake if missing), compiles
# bench/ns3/dumbbell.cc against it, runs both, prints the table. BENCH_NS3_ARGS=--also-pypi adds
# the PyPI package ns3 (a slower build) as a second column; --ns3-jobs=1 builds on one core.
bench-ns3: develop
	cargo build --release --quiet -p ccsim-core --bin ccsim-bench
	$(BIN)/python bench/ns3/run.py $(BENCH_NS3_ARGS)

# ccsim against htsim, the simulator the speed target comes from (not part of CI): clones
# Broadcom/csg-htsim (or BENCH_HTSIM_ARGS=--src=DIR, its sim/ directory), compiles the part a
# TCP dumbbell needs and bench/htsim/dumbbell.cpp, runs both alternately, prints the table.
bench-htsim: develop
	cargo build --release --quiet -p ccsim-core --bin ccsim-bench
	$(BIN)/python bench/htsim/run.py $(BENCH_HTSIM_ARGS)

# Speed against flows (9..9000) and bottleneck rate (10 Mbit/s..10 Gbit/s); minutes, not CI.
bench-scaling: develop
	cargo build --release --quiet -p ccsim-core --bin ccsim-bench
	$(BIN)/python bench/scaling.py

clean:
	rm -rf $(VENV) target results
