# Etikett: `make dev` serves the whole service locally; `make test` runs every check.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: dev test lint format bench build clean

$(STAMP): pyproject.toml runner/pyproject.toml layers/deps/requirements.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]' -e runner
	@touch $(STAMP)

dev: $(STAMP)
	$(BIN)/etikett dev

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest $(PYTEST_ARGS)

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: $(STAMP)
	$(BIN)/python bench/run.py

# sam build with the project's environment first on PATH: the shared layer's build imports etikett
# (to write the OpenAPI document) and compiles every layer with this Python 3.11.
build: $(STAMP)
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/sam build $(SAM_ARGS)

clean:
	rm -rf $(VENV) .aws-sam .pytest_cache .ruff_cache
