#!/usr/bin/env bash
# The GM-CIHT selection ladder end to end (issue 13): fixed chunks, then hybrid chunks under
# each rank.selection (bias, mixed, cosine), each one `dvc exp run` at the same sample size;
# then paired bootstrap differences of every pair on the same test sentences.
#
#   scripts/selection_ladder.sh [DATASET] [MAX_INPUTS]     (defaults: gm-ciht 150)
#
# Needs the datasets mirror (../shared/datasets) or the network. The three hybrid rungs share
# chunk and embed (rank.* is not a chunk param), so only rank -> evaluate runs again for them.
# About 65 min for GM-CIHT on 2 CPU cores. Predictions go to build/ladder/<dataset>/, the
# paired figures to benchmarks/e2e/<dataset>-selection.json. A rung whose predictions are there
# is skipped, so an interrupted ladder resumes.
set -euo pipefail
ds=${1:-gm-ciht}
n=${2:-150}
out=build/ladder/$ds
mkdir -p "$out"
common=(-S download.mirror=../shared/datasets -S "data.datasets=[$ds]" -S "data.triples=[$ds]" -S "generate.max_inputs=$n")
rung() {
  local name=$1; shift
  if [[ -f "$out/$name.parquet" ]]; then echo "== $name: done before ($out/$name.parquet)"; return; fi
  echo "== $name"
  dvc exp run "${common[@]}" "$@"
  cp "data/generate/$ds/predictions.parquet" "$out/$name.parquet"
  cp "metrics/$ds.json" "$out/$name.json"
}
rung hybrid-bias -S chunk.method=hybrid -S rank.selection=bias
rung hybrid-mixed -S chunk.method=hybrid -S rank.selection=mixed
rung hybrid-cosine -S chunk.method=hybrid -S rank.selection=cosine
rung fixed -S chunk.method=fixed -S rank.selection=bias
python benchmarks/e2e_compare.py --data "data/interim/$ds" --ladder "$out" \
  --names fixed hybrid-cosine hybrid-mixed hybrid-bias --out "benchmarks/e2e/$ds-selection.json"
