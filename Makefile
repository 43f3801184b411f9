# ibweb: `make run` serves the live demo, `make test` runs every test. Both set up what they need.
SHELL := /bin/bash
.DEFAULT_GOAL := run

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
SYSTEM_PACKAGES := opensm ibsim-utils libumad2sim0 infiniband-diags chromium prometheus-alertmanager prometheus victoria-metrics rsyslog flex bison
UMAD2SIM := /usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
FRONTEND_SOURCES := $(shell find frontend/src -type f 2>/dev/null) frontend/package.json
# pytest-xdist workers of `make test`; tests/support/xdist_worker.py gives each its Redis namespace and database
TEST_WORKERS ?= 3
SERVICES_WORKERS ?= 2
XDIST := -p tests.support.xdist_worker -n $(TEST_WORKERS) --dist loadgroup

.PHONY: run setup venv frontend db sysdeps test test-services lint bench clean

run: setup ## serve the live demo on http://$(HOST):$(PORT)/
	@echo "ibweb is starting on http://$(HOST):$(PORT)/  (demo fabric: http://$(HOST):$(PORT)/fabrics/demo/)"
	$(BIN)/python -m ibweb.serve ibweb.asgi:application --host $(HOST) --port $(PORT) --lifespan on --ws-max-size 1048576 --ws ibweb.websocket.deflate:WebSocketProtocol --log-level warning

setup: venv frontend db

venv: $(VENV)/.installed
$(VENV)/.installed: pyproject.toml requirements.lock setup.py fabric_engine/_maxmin.c fabric_engine/telemetry/_perfquery.c \
		fabric_engine/routing/_lidgreedy.c fabric_engine/_credit.c
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

frontend: frontend/dist/ibweb.js
frontend/node_modules/.installed: frontend/package.json frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund --loglevel=error
	touch $@
frontend/dist/ibweb.js: frontend/node_modules/.installed $(FRONTEND_SOURCES)
	cd frontend && npm run --silent build

db: venv
	mkdir -p var
	$(BIN)/python manage.py migrate --verbosity 0
	$(BIN)/python manage.py ensure_demo
	$(BIN)/python manage.py ensure_demo_cluster

sysdeps: ## Debian packages the real-tool and browser tests need (installed when missing and root)
	@missing=""; \
	for p in $(SYSTEM_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	  else echo "missing Debian packages (run as root or install):$$missing"; fi; \
	fi

lint: venv
	$(BIN)/ruff check .

test: setup sysdeps lint ## ruff, the frontend module tests, and pytest over all of tests/ (twice: embedded, then PostgreSQL + Redis)
	cd frontend && npm test --silent
	$(BIN)/python -m pytest $(XDIST) --durations=25
	$(MAKE) --no-print-directory test-services

test-services: ## the in-process web tests again on PostgreSQL and Redis (tasks eager; tests that start servers run once)
	$(BIN)/python tests/support/reset_test_db.py $${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}
	DATABASE_URL=$${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test} \
	REDIS_URL=$${TEST_REDIS_URL:-redis://127.0.0.1:6379/0} IBWEB_CELERY_EAGER=1 \
	$(BIN)/python -m pytest $(XDIST) -n $(SERVICES_WORKERS) tests/ibweb -m "not browser and not services and not server" --durations=25

bench: setup sysdeps ## run every bench of tests/bench, then a summary of all targets (exit 1 if one missed)
	@mkdir -p var; : > var/bench.log; failed=""; \
	for f in tests/bench/bench_*.py; do \
	  echo "== $$f" | tee -a var/bench.log; \
	  $(BIN)/python $$f 2>&1 | tee -a var/bench.log; \
	  [ $${PIPESTATUS[0]} -eq 0 ] || failed="$$failed $$f"; \
	done; \
	$(BIN)/python tests/bench/summary.py var/bench.log $$failed

clean:
	rm -rf $(VENV) frontend/node_modules frontend/dist var
