# Two commands matter: `make run` and `make test`. Both create .venv when missing.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
PORT   ?= 8501

.PHONY: run test test-e2e bench lint install install-test clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Re-install only when the project description changes.
$(VENV)/.stamp-install: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	touch $@

$(VENV)/.stamp-test: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e ".[test,cluster]"
	touch $(VENV)/.stamp-install $@

install: $(VENV)/.stamp-install
install-test: $(VENV)/.stamp-test

run: install
	$(VENV)/bin/cx-app app --port $(PORT)

# The whole suite: unit, property and AppTest tests, then the browser tests when Debian's
# chromium is installed (apt-get install chromium). pytest exits 5 when it collects nothing,
# which fails make. The first run uses every core (pytest-xdist; a file's tests stay on one
# worker, with their module fixtures): 5.6 min instead of 8.1 on two cores. The browser tests
# run two at a time (a streamlit server and a chromium each): 3.5 min instead of 4.5 under load.
test: install-test
	$(PY) -m pytest -q -m "not browser" -n auto --dist loadfile
	@if [ -x /usr/bin/chromium ]; then \
		$(PY) -m pytest -q -m browser -n 2 --dist loadfile; \
	else \
		echo "NOTE: browser tests NOT run: /usr/bin/chromium is missing (apt-get install chromium)"; \
	fi

# Browser end-to-end tests only (Playwright driving /usr/bin/chromium).
test-e2e: install-test
	$(PY) -m pytest -q -m browser

bench: install-test
	$(PY) bench/run.py

lint: install-test
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
