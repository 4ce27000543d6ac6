# Etikett: `make dev` serves the whole service locally; `make test` runs every check.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: dev demo docs test lint format bench bench-anatomy fleet load fuzz build clean browser broker screenshots corpus

# The console's browser tests drive Debian's chromium (Playwright's own browser download is not
# reachable from these machines): installed once if missing, with sudo unless we are root.
CHROMIUM ?= /usr/bin/chromium
# make test runs the suite in this many pytest-xdist workers, a whole test file to a worker (its
# module fixtures, a service or a browser, start once); TEST_WORKERS=0 runs it in one process.
TEST_WORKERS ?= 2
SUDO     := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

$(STAMP): pyproject.toml engine/pyproject.toml runner/pyproject.toml layers/deps/requirements.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]' -e engine -e runner
	$(BIN)/python -c 'from etikett_engine.cel import parser_tables; parser_tables.write()'
	@touch $(STAMP)

dev: $(STAMP) broker
	$(BIN)/etikett dev

# The service with a printer simulator, a Runner and a deployed flow: a CSV dropped into
# demo/inbox comes out as label PNGs in demo/labels (state in .etikett-demo/).
demo: $(STAMP) broker
	$(BIN)/etikett dev --demo

# Style, layers and types: what `make test` checks before it runs a single test.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy

# Local mode's MQTT broker, where idle Runners wait for wakes (AWS IoT Core on AWS): Debian's
# mosquitto, installed once if missing (local mode runs it itself; the package's service is not used).
broker:
	@test -x /usr/sbin/mosquitto || command -v mosquitto >/dev/null || { $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq mosquitto; }

browser:
	@test -x $(CHROMIUM) || { $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium; }

# The import corpus (tests/fixtures/import/corpus/README.md), installed at setup time, never at test
# time: the reference ZPL renderer (zebrash as WebAssembly, npm zpl-renderer-js pinned with its
# integrity hash); public ZPL files from the package registries (zebra-day's templates from PyPI,
# pinned by hash; labelary's test label and Labelary's picture of it from npm); and the pictures
# gLabels 3 itself prints of our gLabels documents (Debian's glabels and poppler-utils).
CORPUS        := tests/fixtures/import/corpus
CORPUS_REF    := $(CORPUS)/reference
CORPUS_PUBLIC := $(CORPUS)/public
GLABELS_DOCS  := $(wildcard $(CORPUS)/glabels/*-v3.glabels)
GLABELS_PNGS  := $(patsubst $(CORPUS)/glabels/%.glabels,$(CORPUS)/rendered/%.png,$(GLABELS_DOCS))
corpus: $(CORPUS_REF)/node_modules/.installed $(CORPUS_PUBLIC)/.installed $(GLABELS_PNGS)
$(CORPUS_REF)/node_modules/.installed: $(CORPUS_REF)/package-lock.json
	@command -v npm >/dev/null || { $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq nodejs npm; }
	cd $(CORPUS_REF) && npm ci --no-audit --no-fund --ignore-scripts
	@touch $@
$(CORPUS_PUBLIC)/.installed: $(STAMP) $(CORPUS_PUBLIC)/requirements.txt $(CORPUS_PUBLIC)/package-lock.json
	@command -v npm >/dev/null || { $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq nodejs npm; }
	$(BIN)/python -m pip install --quiet --no-deps --require-hashes --upgrade \
	  --target $(CORPUS_PUBLIC)/site -r $(CORPUS_PUBLIC)/requirements.txt
	cd $(CORPUS_PUBLIC) && npm ci --no-audit --no-fund --ignore-scripts
	@touch $@
$(CORPUS)/rendered/%.png: $(CORPUS)/glabels/%.glabels $(wildcard $(CORPUS)/glabels/*.csv)
	@command -v glabels-3-batch >/dev/null && command -v pdftoppm >/dev/null || { \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	  $(SUDO) apt-get install -y -qq glabels poppler-utils; }
	@mkdir -p $(CORPUS)/rendered
	cd $(CORPUS)/glabels && glabels-3-batch -o ../rendered/$*.pdf $*.glabels >/dev/null
	pdftoppm -r 203 -mono -png -singlefile $(CORPUS)/rendered/$*.pdf $(CORPUS)/rendered/$*
	@rm -f $(CORPUS)/rendered/$*.pdf

test: $(STAMP) browser broker corpus
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy
	CHROMIUM=$(CHROMIUM) $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

# The documentation site (mkdocs.yml, docs/): strict, into site/; the reference pages are
# generated from the service's OpenAPI document, node registry and problem catalog.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# The docs' console screenshots (docs/console/*.png), from a fresh local service.
screenshots: $(STAMP) browser
	$(BIN)/python docs/console/screenshots.py

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# Every goal of the Speed issue as one table (bench/goals.py; bench/README.md records the runs).
bench: $(STAMP) broker
	$(BIN)/python bench/goals.py

# The cold-start anatomy and whoami latency (bench/run.py).
bench-anatomy: $(STAMP)
	$(BIN)/python bench/run.py

# 500 simulated Runners x 4 printers against local mode: idle, then 50 labels/s (bench/fleet.py;
# figures in bench/README.md). `make bench` runs a short fleet of 50.
FLEET_ARGS ?= --runners 500 --printers 4 --idle 150 --busy 150 --rate 50
fleet: $(STAMP) broker
	$(BIN)/python bench/fleet.py $(FLEET_ARGS)

# 20 clients printing and previewing for 60 s through the local gateway (bench/README.md).
load: $(STAMP)
	$(BIN)/python bench/load_bench.py $(LOAD_ARGS)

# The long proofs (docs/guides/security.md): schemathesis for >= FUZZ_MIN_REQUESTS generated requests
# with the stateful phase and a random seed (printed; FUZZ_SEED=<it> replays a run), then the
# fault tests repeated (FAULT_ROUNDS). A shorter FUZZ_SECONDS wants a lower FUZZ_MIN_REQUESTS
# (a loaded two-core machine sends 8-18 requests a second).
FUZZ_SECONDS ?= 900
FUZZ_MIN_REQUESTS ?= 10000
FUZZ_SEED ?=
FAULT_ROUNDS ?= 5
fuzz: $(STAMP)
	ETIKETT_FUZZ_EXAMPLES=100 ETIKETT_FUZZ_PHASES=examples,coverage,fuzzing,stateful \
	ETIKETT_FUZZ_SEED=$(FUZZ_SEED) ETIKETT_FUZZ_MAX_TIME=$(FUZZ_SECONDS) ETIKETT_FUZZ_MIN_REQUESTS=$(FUZZ_MIN_REQUESTS) \
	ETIKETT_FUZZ_AGENT_PHASES=examples,coverage,fuzzing,stateful ETIKETT_FUZZ_MIN_AGENT_REQUESTS=400 \
	ETIKETT_FUZZ_PROGRESS=1 \
	  $(BIN)/python -m pytest -p no:cacheprovider -s tests/integration/security/test_fuzz.py
	ETIKETT_FAULT_ROUNDS=$(FAULT_ROUNDS) $(BIN)/python -m pytest -p no:cacheprovider \
	  tests/e2e/test_faults.py

# sam build with the project's environment first on PATH: the shared layer's build imports etikett
# (to write the OpenAPI document) and compiles every layer with this Python 3.11.
build: $(STAMP)
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/sam build $(SAM_ARGS)

clean:
	rm -rf $(VENV) .aws-sam .pytest_cache .ruff_cache
