#!/usr/bin/env bash
# Issue 38 acceptance on a 16-core machine: `cx-app evaluate` of rf,knn,ann (10 folds) on
# N respondents with unique ids (resampled from the bundled sample) with 2, 8 and 16 local jobs,
# the default, and on a 16-worker Dask cluster; each run's phases (bench/device/phases.py); the
# results.json documents compared without their wall-clock fields; the speed-ups printed
# (targets: 16 jobs >= 5x and Dask 16 >= 5x 2 jobs).
# Usage: bench/device/scale16.sh [N=40000] [OUTDIR=./scale16-out] [MODES="j2 j8 j16 jdef d16"]
# Run from the repository root with python/PYTHONPATH set up as /work/shared/DEVICE.md says
# (wheels in .whl/, installed with --target SITE; export PYTHONPATH=SITE:$PWD). PY picks python.
set -u
N=${1:-40000}; OUT=${2:-./scale16-out}; MODES=${3:-j2 j8 j16 jdef d16}
ALGS=${ALGS:-rf,knn,ann}; PY=${PY:-python3}
mkdir -p "$OUT"; W=$(mktemp -d)
log(){ echo "[$(date +%T)] $*" | tee -a "$OUT/log.txt"; }
log "N=$N cores $(nproc); load $(cut -d' ' -f1-3 /proc/loadavg); $($PY -c 'import sys, sklearn, joblib; print(sys.version.split()[0], "sklearn", sklearn.__version__, "joblib", joblib.__version__)')"
$PY - "$N" "$W" <<'PY'
import sys, numpy as np
from cx_app.survey.importing import load_survey
from cx_app.survey.samples import sample_path
n, w = int(sys.argv[1]), sys.argv[2]
raw = load_survey(sample_path("telecom_nps")).frame
t = raw.iloc[np.random.default_rng(0).integers(0, len(raw), n)].reset_index(drop=True)
t["respondent_id"] = np.arange(1, n + 1)  # resampled rows are new respondents, not duplicates
t.to_csv(f"{w}/train.csv", index=False)
PY
SCHEMA=$PWD/survey_schemas/telecom_nps.yaml
declare -A SEC
t(){ local name=$1; shift; local s=$(date +%s%N); "$@" > "$OUT/$name-$N.out" 2>&1; local rc=$?; local e=$(date +%s%N)
     SEC[$name]=$(( (e - s) / 1000000 )); log "$name rc=$rc ${SEC[$name]} ms load $(cut -d' ' -f1 /proc/loadavg) $(grep PHASES "$OUT/$name-$N.out")"; }
EV=($PY bench/device/phases.py evaluate "$W/train.csv" --schema "$SCHEMA" --algorithms "$ALGS" --folds 10)
for m in $MODES; do
  case $m in
    j*[0-9]) t "$m" "${EV[@]}" --n-jobs "${m#j}" --out "$W/$m" ;;
    jdef) t jdef "${EV[@]}" --out "$W/jdef" ;;
    d16)
      $PY -m distributed.cli.dask_scheduler --port 8786 --no-dashboard > "$OUT/sched.log" 2>&1 & SP=$!
      $PY -m distributed.cli.dask_worker tcp://127.0.0.1:8786 --nworkers 16 --nthreads 1 --memory-limit 6GiB --no-dashboard > "$OUT/workers.log" 2>&1 & WP=$!
      $PY -c "from distributed import Client; c = Client('tcp://127.0.0.1:8786', timeout=60); c.wait_for_workers(16, timeout=120)"
      t d16 "${EV[@]}" --dask-scheduler tcp://127.0.0.1:8786 --out "$W/d16"
      kill $WP $SP 2>/dev/null; wait 2>/dev/null ;;
  esac
done
DONE=""; for m in $MODES; do DONE="$DONE $m=${SEC[$m]}"; done
$PY - "$W" "$N" $DONE <<'PY' | tee -a "$OUT/log.txt"
import json, sys
from cx_app.provenance import without_wall_clock
w, n = sys.argv[1], sys.argv[2]
ms = {k: int(v) for k, v in (a.split("=") for a in sys.argv[3:])}
docs = {k: without_wall_clock(json.load(open(f"{w}/{k}/results.json"))) for k in ms}
for k in ms:
    print(f"N={n} {k}: {ms[k] / 1000:.1f} s, speed-up vs 2 jobs {ms['j2'] / ms[k]:.2f}x, "
          f"results.json identical to 2 jobs: {docs[k] == docs['j2']}")
for a in docs["j2"]["models"]:
    print(a, "accuracy", {k: d["models"][a]["levels"]["original"]["metrics"]["accuracy"] for k, d in docs.items()})
print(f"ACCEPTANCE N={n}", *(f"{k} >= 5x: {ms['j2'] / ms[k] >= 5}" for k in ("j16", "d16") if k in ms),
      "identical:", all(d == docs["j2"] for d in docs.values()))
PY
log done
