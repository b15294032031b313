# Two commands do all the set-up on a fresh machine with Python 3.11+:
#   make run   - virtualenv, packages, SQLite database, demo data, app on http://127.0.0.1:8000
#   make test  - the whole test suite (set DATABASE_URL to run it on PostgreSQL)
#   make serve - production: migrate, collectstatic, then gunicorn, a db_worker and the MCP server
#                (README "Deploy")
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml constraints.txt | cksum | cut -d' ' -f1)

.PHONY: install chromium run serve test lint check fuzz bench clean

$(STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Castellan needs Python 3.11 or newer")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c constraints.txt -e ".[dev]"
	rm -f $(VENV)/.installed-* && touch $(STAMP)

# axe-core for the accessibility test (tests/browser/test_a11y.py), exactly as package-lock.json
# pins it. Without npm the app still installs and runs; that test is skipped (and fails under CI).
node_modules/.package-lock.json: package.json package-lock.json
	@if command -v npm >/dev/null 2>&1; then npm ci --no-audit --no-fund; \
	else echo "npm is not installed: the axe-core accessibility test will be skipped."; fi

install: $(STAMP) node_modules/.package-lock.json

# The browser tests drive Debian's Chromium (Playwright cannot download its own browser here).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else \
	    echo "Chromium is not installed: the browser tests will be skipped (sudo apt-get install chromium)."; \
	  fi; }

PORT ?= 8000

run: install
	DEBUG=true $(BIN)/python manage.py migrate --noinput
	DEBUG=true $(BIN)/python manage.py seed_demo --url http://127.0.0.1:$(PORT)
	DEBUG=true $(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

# A small deployment on one machine: settings from the environment (or `.env`, which honcho
# reads), DEBUG off, so SECRET_KEY and ALLOWED_HOSTS must be set. PORT (default 8000) or BIND.
serve: install
	$(BIN)/honcho run $(BIN)/python manage.py migrate --noinput
	$(BIN)/honcho run $(BIN)/python manage.py collectstatic --noinput
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/honcho start --port $(PORT)

test: install chromium
	$(BIN)/pytest

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# These read the code, not a deployment: a throwaway key lets them run with production settings.
CHECK_ENV := SECRET_KEY=make-check-only-signs-nothing
check: install
	$(CHECK_ENV) $(BIN)/python manage.py check
	$(CHECK_ENV) $(BIN)/python manage.py makemigrations --check --dry-run
	$(CHECK_ENV) $(BIN)/python manage.py spectacular --validate --fail-on-warn --file /dev/null

# schemathesis against the live app on a fresh, seeded database: fails on any 5xx, undocumented
# status or content type, or body that does not match the OpenAPI schema (.ci/fuzz.py).
fuzz: install
	$(BIN)/python .ci/fuzz.py

bench: install
	$(BIN)/python bench/write_path.py

clean:
	rm -rf $(VENV) node_modules db.sqlite3 db.sqlite3-shm db.sqlite3-wal
