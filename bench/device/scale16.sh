#!/usr/bin/env bash
# Issue 38 acceptance on a 16-core machine: `cx-app evaluate` of rf,knn,ann (10 folds) on
# N_TRAIN respondents with unique ids (resampled from the bundled sample) with 2, 8 and 16
# local jobs and on a 16-worker Dask cluster; the results.json documents compared without their
# wall-clock fields; the speed-ups printed (targets: 16 jobs ≥ 5× and Dask 16 ≥ 5× 2 jobs).
# Usage: bench/device/scale16.sh [N_TRAIN=40000] [OUTDIR=./scale16-out]
# Run from the repository root with python/PYTHONPATH set up as /work/shared/DEVICE.md says
# (wheels in .whl/, installed with --target SITE; export PYTHONPATH=SITE:$PWD). PY picks python.
set -u
N=${1:-40000}; OUT=${2:-./scale16-out}; ALGS=${ALGS:-rf,knn,ann}; PY=${PY:-python3}
mkdir -p "$OUT"; W=$(mktemp -d)
log(){ echo "[$(date +%T)] $*" | tee -a "$OUT/log.txt"; }
log "cores $(nproc); load $(cut -d' ' -f1-3 /proc/loadavg); $($PY -c 'import sys, sklearn, joblib; print(sys.version.split()[0], "sklearn", sklearn.__version__, "joblib", joblib.__version__)')"
$PY - "$N" "$W" <<'PY'
import sys, numpy as np
from cx_app.survey.importing import load_survey
from cx_app.survey.samples import sample_path
n, w = int(sys.argv[1]), sys.argv[2]
raw = load_survey(sample_path("telecom_nps")).frame
t = raw.iloc[np.random.default_rng(0).integers(0, len(raw), n)].reset_index(drop=True)
t["respondent_id"] = np.arange(1, n + 1)  # resampled rows are new respondents, not duplicates
t.to_csv(f"{w}/train.csv", index=False)
print("train", t.shape, flush=True)
PY
SCHEMA=$PWD/survey_schemas/telecom_nps.yaml
declare -A SEC
t(){ local name=$1; shift; local s=$(date +%s%N); "$@" > "$OUT/$name.out" 2>&1; local rc=$?; local e=$(date +%s%N)
     SEC[$name]=$(( (e - s) / 1000000 )); log "$name rc=$rc ${SEC[$name]} ms load $(cut -d' ' -f1 /proc/loadavg)"; }
EV=($PY -m cx_app evaluate "$W/train.csv" --schema "$SCHEMA" --algorithms "$ALGS" --folds 10)
t eval_j2  "${EV[@]}" --n-jobs 2  --out "$W/j2"
t eval_j8  "${EV[@]}" --n-jobs 8  --out "$W/j8"
t eval_j16 "${EV[@]}" --n-jobs 16 --out "$W/j16"
t eval_default "${EV[@]}" --out "$W/jdef"
$PY -m distributed.cli.dask_scheduler --port 8786 --no-dashboard > "$OUT/sched.log" 2>&1 & SP=$!
sleep 3
$PY -m distributed.cli.dask_worker tcp://127.0.0.1:8786 --nworkers 16 --nthreads 1 --memory-limit 6GiB --no-dashboard > "$OUT/workers.log" 2>&1 & WP=$!
sleep 15
t eval_dask16 "${EV[@]}" --dask-scheduler tcp://127.0.0.1:8786 --out "$W/d16"
kill $WP $SP 2>/dev/null; wait 2>/dev/null
$PY - "$W" "${SEC[eval_j2]}" "${SEC[eval_j8]}" "${SEC[eval_j16]}" "${SEC[eval_default]}" "${SEC[eval_dask16]}" <<'PY' | tee -a "$OUT/log.txt"
import json, sys
from cx_app.provenance import without_wall_clock
w, ms = sys.argv[1], dict(zip(("j2", "j8", "j16", "jdef", "d16"), map(int, sys.argv[2:])))
docs = {k: without_wall_clock(json.load(open(f"{w}/{k}/results.json"))) for k in ms}
for k in ms:
    print(f"{k}: {ms[k] / 1000:.1f} s, speed-up vs 2 jobs {ms['j2'] / ms[k]:.2f}x, "
          f"results.json identical to 2 jobs: {docs[k] == docs['j2']}")
for a in docs["j2"]["models"]:
    print(a, "accuracy", {k: d["models"][a]["levels"]["original"]["metrics"]["accuracy"] for k, d in docs.items()})
print("ACCEPTANCE", "16 jobs >= 5x:", ms["j2"] / ms["j16"] >= 5, "dask16 >= 5x:", ms["j2"] / ms["d16"] >= 5,
      "identical:", all(d == docs["j2"] for d in docs.values()))
PY
log done
