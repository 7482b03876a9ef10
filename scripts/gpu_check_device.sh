#!/usr/bin/env bash
# The GPU check on a lent GPU machine (docs/models.md, "The GPU check"), from the repository root,
# with build/gpu-pack carried along (make gpu-pack). The report, log and nvidia-smi land in
# $OUT; extra arguments go to scripts/gpu_check.py. The exit status is the check's.
set -u
OUT=${OUT:?set OUT to the folder that receives the report}
mkdir -p "$OUT"
if [ -z "${PY:-}" ]; then  # the first python that has torch
    for PY in python3 python; do "$PY" -c "import torch" 2>/dev/null && break; done
fi
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
# The trimmed bitsandbytes of the pack (gpu_check.py adds it too; here it is seen from the start).
PYTHONPATH="build/gpu-pack/site${PYTHONPATH:+:$PYTHONPATH}" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false \
    "$PY" scripts/gpu_check.py --models build/gpu-pack --out "$OUT" "$@" > "$OUT/log.txt" 2>&1
rc=$?
grep '^\[gpu_check\]' "$OUT/log.txt" | tail -n 20
cat "$OUT/gpu_check.md" 2>/dev/null || tail -n 40 "$OUT/log.txt"
exit $rc
