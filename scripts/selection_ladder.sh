#!/usr/bin/env bash
# End-to-end ladders on the triple branch, one `dvc exp run` per rung at the same sample size.
#
#   scripts/selection_ladder.sh [DATASET] [MAX_INPUTS] [SET]     (defaults: gm-ciht 150 selection)
#
# SET selection (issue 13): fixed chunks, then hybrid chunks under each rank.selection (bias,
#   mixed, cosine); then paired bootstrap differences of every pair on the same test sentences.
# SET paper (issue 14, `make paper-biomedrag`): the BioMedRAG chunking paper's ablations: the
#   selection rungs, the Table 4 ladder (+entity-aware, +proposition, +tiered triggers), three
#   in-context examples for fixed and hybrid (Table 5), NER entities (Table 7), the hierarchy
#   orderings (flat, inverted) and ADE fixed vs hybrid through the classify stage
#   (ADE_INPUTS test sentences, default 100). The table comes from benchmarks/papers/biomedrag.py.
#
# Needs the datasets mirror (MIRROR, default ../shared/datasets; null: the public URLs). Rungs
# that share chunk params share chunk and embed (rank.* and generate.* are not chunk params),
# so DVC re-runs only what changed. About 15 min per GM-CIHT rung on 2 free CPU cores (the
# selection set: 65 min). Predictions go to build/ladder/<dataset>/<rung>.parquet (ADE:
# build/ladder/ade/), the rung's wall time in seconds to <rung>.seconds, the paired figures of the selection set to
# docs/results/data/e2e/<dataset>-selection.json (docs/results/biomedrag.md shows them). A rung whose
# predictions are there is skipped, so an interrupted ladder resumes.
set -euo pipefail
ds=${1:-gm-ciht}
n=${2:-150}
set_=${3:-selection}
mirror=${MIRROR:-../shared/datasets}
ade_n=${ADE_INPUTS:-100}
case $set_ in
  selection|paper) ;;
  *) echo "SET must be selection or paper, got $set_" >&2; exit 2 ;;
esac
out=build/ladder/$ds
mkdir -p "$out"
# `dvc exp run -S` writes its values into params.yaml, so one rung's switches would leak into the
# next; every rung starts from params.yaml as it was here, and it is put back at the end.
params0=$(mktemp)
cp params.yaml "$params0"
trap 'cp "$params0" params.yaml; rm -f "$params0"' EXIT
common=(-S "download.mirror=$mirror" -S "data.datasets=[$ds]" -S "data.triples=[$ds]" -S "generate.max_inputs=$n")
rung() {
  local name=$1; shift
  if [[ -f "$out/$name.parquet" ]]; then echo "== $name: done before ($out/$name.parquet)"; return; fi
  echo "== $name"
  local t0=$SECONDS
  cp "$params0" params.yaml  # each rung starts from the ladder's starting params: `-S` edits persist
  dvc exp run "${common[@]}" "$@"
  cp "data/generate/$ds/predictions.parquet" "$out/$name.parquet"
  cp "metrics/$ds.json" "$out/$name.json"
  echo $((SECONDS - t0)) > "$out/$name.seconds"
}
ade_rung() {  # ADE through the classify stage (no triple branch)
  local name=$1; shift
  mkdir -p build/ladder/ade
  if [[ -f "build/ladder/ade/$name.parquet" ]]; then echo "== ade/$name: done before"; return; fi
  echo "== ade/$name"
  local t0=$SECONDS
  cp "$params0" params.yaml
  dvc exp run -S "download.mirror=$mirror" -S "data.datasets=[ade]" -S "data.triples=[]" \
    -S "data.classification=[ade]" -S "classify.max_inputs=$ade_n" "$@"
  cp data/classify/ade/predictions.parquet "build/ladder/ade/$name.parquet"
  cp metrics/classify-ade.json "build/ladder/ade/$name.json"
  echo $((SECONDS - t0)) > "build/ladder/ade/$name.seconds"
}
if [[ $set_ == paper ]]; then  # ADE first (cheapest); after the selection rungs: Table 5, orderings, NER, Table 4
  ade_rung fixed -S chunk.method=fixed
  ade_rung hybrid -S chunk.method=hybrid
fi
rung hybrid-bias -S chunk.method=hybrid -S rank.selection=bias
rung hybrid-mixed -S chunk.method=hybrid -S rank.selection=mixed
rung hybrid-cosine -S chunk.method=hybrid -S rank.selection=cosine
rung fixed -S chunk.method=fixed -S rank.selection=bias
if [[ $set_ == selection ]]; then
  python benchmarks/e2e_compare.py --data "data/interim/$ds" --ladder "$out" \
    --names fixed hybrid-cosine hybrid-mixed hybrid-bias --out "docs/results/data/e2e/$ds-selection.json"
  exit 0
fi
# Cheapest first: the Table 4 ladder, the orderings and NER re-chunk but fine-tune on the same
# short prompts; three in-context examples lengthen every fine-tuning prompt (~24 min a rung on 2 free cores).
rung hybrid-entity -S chunk.method=hybrid -S rank.selection=bias -S chunk.propositions=false -S chunk.tiers=false -S chunk.hierarchy=false
rung hybrid-proposition -S chunk.method=hybrid -S rank.selection=bias -S chunk.tiers=false -S chunk.hierarchy=false
rung hybrid-tiers -S chunk.method=hybrid -S rank.selection=bias -S chunk.hierarchy=false
rung hybrid-flat -S chunk.method=hybrid -S rank.selection=bias -S chunk.hierarchy_order=flat
rung hybrid-inverted -S chunk.method=hybrid -S rank.selection=bias -S chunk.hierarchy_order=inverted
rung hybrid-ner -S chunk.method=hybrid -S rank.selection=bias -S chunk.entities=ner
rung fixed-icl3 -S chunk.method=fixed -S rank.selection=bias -S generate.n_examples=3
rung hybrid-icl3 -S chunk.method=hybrid -S rank.selection=bias -S generate.n_examples=3
