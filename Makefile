# Two commands matter: `make run` and `make test`. Both create .venv when missing.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
PORT   ?= 8501

.PHONY: run test test-slow test-e2e bench lint install install-test clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Re-install only when the project description changes.
$(VENV)/.stamp-install: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	touch $@

# The oracle of tests/estimate/test_audit_samples.py, ppi-python (with numba and llvmlite), goes into a
# folder of its own: its wheel also installs a top-level `tests` package that would hide ours.
ORACLE := ppi-python==0.2.3 numba==0.68.1 llvmlite==0.50.0

$(VENV)/.stamp-test: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e ".[test,cluster]"
	$(PY) -m pip install --quiet --no-deps --upgrade --target $(VENV)/oracle $(ORACLE)
	touch $(VENV)/.stamp-install $@

install: $(VENV)/.stamp-install
install-test: $(VENV)/.stamp-test

run: install
	$(VENV)/bin/cx-app app --port $(PORT)

# The suite but the tests marked slow (pytest -m slow: the model-quality suite, the heaviest
# model and security checks, dask runs, the long browser journeys), in under 10 minutes on 2
# cores (9:50 measured, with a reinstall): unit, property
# and AppTest tests, then the browser tests when Debian's chromium is installed (apt-get
# install chromium). pytest exits 5 when it collects nothing, which fails make. The first run
# uses every core (pytest-xdist; a file's tests stay on one worker, with their module
# fixtures); the browser tests run two at a time (a streamlit server and a chromium each).
test: install-test
	$(PY) -m pytest -q -m "not browser and not slow" -n auto --dist loadfile
	@if [ -x /usr/bin/chromium ]; then \
		$(PY) -m pytest -q -m "browser and not slow" -n 2 --dist loadfile; \
	else \
		echo "NOTE: browser tests NOT run: /usr/bin/chromium is missing (apt-get install chromium)"; \
	fi

# The tests marked slow (CI runs them after `make test`: together, the whole suite).
test-slow: install-test
	$(PY) -m pytest -q -m "slow and not browser" -n auto --dist loadfile
	$(PY) -m pytest -q -m "slow and browser" -n 2 --dist loadfile

# Browser end-to-end tests only (Playwright driving /usr/bin/chromium).
test-e2e: install-test
	$(PY) -m pytest -q -m browser

bench: install-test
	$(PY) bench/run.py

lint: install-test
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
