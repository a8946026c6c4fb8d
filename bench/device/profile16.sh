#!/usr/bin/env bash
# Issue 38: where the wall time of `cx-app evaluate` (rf,knn,ann, 10 folds) goes on a 16-core
# machine with 2 and with 16 local jobs (bench/device/phases.py), N_TRAIN respondents with
# unique ids resampled from the bundled sample. Usage: bench/device/profile16.sh [N] [OUTDIR]
# (python/PYTHONPATH set up as bench/device/scale16.sh says). JOBS="2 16" picks the runs.
set -u
N=${1:-40000}; OUT=${2:-./profile16-out}; ALGS=${ALGS:-rf,knn,ann}; PY=${PY:-python3}
JOBS=${JOBS:-2 16}
mkdir -p "$OUT"; W=$(mktemp -d)
echo "cores $(nproc); $(grep -m1 'model name' /proc/cpuinfo); load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/log.txt"
$PY - "$N" "$W" <<'PY'
import sys, numpy as np
from cx_app.survey.importing import load_survey
from cx_app.survey.samples import sample_path
n, w = int(sys.argv[1]), sys.argv[2]
raw = load_survey(sample_path("telecom_nps")).frame
t = raw.iloc[np.random.default_rng(0).integers(0, len(raw), n)].reset_index(drop=True)
t["respondent_id"] = np.arange(1, n + 1)
t.to_csv(f"{w}/train.csv", index=False)
PY
for j in $JOBS; do
  s=$(date +%s%N)
  $PY bench/device/phases.py evaluate "$W/train.csv" --schema survey_schemas/telecom_nps.yaml \
      --algorithms "$ALGS" --folds 10 --n-jobs "$j" --out "$W/j$j" > "$OUT/j$j.out" 2>&1
  rc=$?; e=$(date +%s%N)
  echo "jobs $j rc=$rc wall $(( (e - s) / 1000000 )) ms $(grep PHASES "$OUT/j$j.out")" | tee -a "$OUT/log.txt"
  $PY -c "import json,sys; d=json.load(open(sys.argv[1])); print({a: [round(s, 2) for s in m['cross_validation']['fold_fit_seconds']] for a, m in d['models'].items()})" "$W/j$j/results.json" | tee -a "$OUT/log.txt"
done
