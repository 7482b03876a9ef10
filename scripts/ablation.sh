#!/usr/bin/env bash
# The configurable-semantic-chunking ablation ladder as DVC experiments, end to end
# (chunk -> scorer -> generator -> evaluate), one experiment per rung, then the table.
#
#   scripts/ablation.sh [extra dvc exp run args...]
#   e.g. scripts/ablation.sh -S download.mirror=../shared/datasets \
#          -S 'data.datasets=[gm-ciht]' -S 'data.triples=[gm-ciht]'
#
# Each rung takes one full pipeline run (about 15 min for GM-CIHT on 2 CPU cores, far less
# on a GPU). The retrieval-level ladder, which needs no generator, is
# benchmarks/ablation_retrieval.py.
set -euo pipefail
off=(-S chunk.method=hybrid -S chunk.entity_windows=false -S chunk.propositions=false -S chunk.tiers=false -S chunk.hierarchy=false)
rung() { local name=$1; shift; echo "== $name"; dvc exp run -f -n "$name" "$@"; }
rung abl-fixed -S chunk.method=fixed "$@"
rung abl-entity "${off[@]}" -S chunk.entity_windows=true "$@"
rung abl-proposition "${off[@]}" -S chunk.entity_windows=true -S chunk.propositions=true "$@"
rung abl-tiers "${off[@]}" -S chunk.entity_windows=true -S chunk.propositions=true -S chunk.tiers=true "$@"
rung abl-hybrid -S chunk.method=hybrid "$@"
rung abl-mixed -S chunk.method=hybrid -S rank.selection=mixed "$@"
rung abl-ner -S chunk.method=hybrid -S chunk.entities=ner "$@"
dvc exp show --only-changed --md --drop 'Created|State|Executor' --sort-by triple.f1 --sort-order desc
