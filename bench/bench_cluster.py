"""Scale-out: the sample's evaluation on a 2-worker Dask LocalCluster vs loky with 2 jobs.

Ours: the steps of ``evaluate_survey`` (``evaluate_algorithm`` per algorithm, then
``finish_evaluation``: pairwise tests and the permutation importance of the best model) inside
``cx_app.models.cluster.on_cluster`` on ``distributed.LocalCluster(n_workers=2,
processes=True, threads_per_worker=1)`` — what ``cx-app evaluate --dask-scheduler`` runs.
Baseline, in the same run: the same steps with ``n_jobs=2`` (joblib's loky processes) — what
``cx-app evaluate --n-jobs 2`` runs. The two are measured interleaved (loky, cluster, loky,
cluster, after one warm-up evaluation of 500 respondents on each, not counted: workers import
cx_app, scikit-learn and xgboost on their first task) and the fastest round of each is kept;
the cluster's start-up is reported apart (a real cluster is already running). Target: ratio cluster / loky ≤ 1.15 (overhead only:
same two cores). The two results documents must be identical (timings aside).

Speed-up model at 8 and 32 workers: from the cluster run's task stream (compute time of every
task as Dask ran it; joblib may batch several fast folds into one task), each phase (one
algorithm's folds; the permutation-importance folds) is scheduled longest-task-first on W
workers; phases run one after another, as ``evaluate_survey`` runs them; what is not task time
(the client's own work: levels, ROC, tests, scatter) is added as measured. The critical path
at many workers is the sum over phases of each phase's slowest task.

Memory per worker: peak resident memory (VmHWM) of each worker process after the run, on the
sample and on the sample resampled to 8× its rows (lr, dt, xgb), for docs/scale-out.md.

Environment: ``CX_BENCH_CLUSTER_ALGORITHMS`` (default: all ten algorithms, the app's
default ``fast`` preset — the whole evaluation; with the papers' settings svm and ann alone
took ~3 minutes at 2 jobs, which is why an earlier run left them out),
``CX_BENCH_CLUSTER_ROUNDS`` (default 3), ``CX_BENCH_CLUSTER_MEMORY=0`` skips the memory part.
"""

from __future__ import annotations

import dataclasses
import heapq
import json
import os
import tempfile
import time
import warnings

import numpy as np

from cx_app.engine.grouping import resolve_plan
from cx_app.models import cluster
from cx_app.models.analysis import (  # noqa: E402
    best_model,
    evaluate_algorithm,
    evaluate_survey,
    finish_evaluation,
)
from cx_app.provenance import without_wall_clock
from cx_app.survey.importing import load_survey
from cx_app.survey.samples import sample_path

FOLDS, SEED = 10, 0
DEFAULT = "lr,svm,knn,nb,dt,rf,ann,xgb,ordinal,cnn"
WORKERS_MODELLED = (2, 8, 32)
MEMORY_ALGORITHMS, MEMORY_FACTORS = ("lr", "dt", "xgb"), (1, 8)


def _log(message: str) -> None:
    print(f"[bench_cluster] {message}", flush=True)


def _peak_kb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0




def _lpt(durations: list[float], workers: int) -> float:
    """Makespan of ``durations`` on ``workers`` identical workers, longest task first."""
    loads = [0.0] * workers
    for d in sorted(durations, reverse=True):
        heapq.heapreplace(loads, loads[0] + d)  # the least-loaded worker takes it
    return max(loads)


def _evaluate(survey, plan, algorithms, *, n_jobs: int, client=None):
    """(wall seconds, {phase: task compute seconds}, document, {phase: wall seconds})."""
    import contextlib

    phases: dict[str, list[float]] = {}
    walls: dict[str, float] = {}
    evaluations, best_cv = {}, None

    def stream():
        if client is None:
            return contextlib.nullcontext(None)
        from distributed import get_task_stream

        return get_task_stream(client=client)

    def durations(ts) -> list[float]:
        return [sum(s["stop"] - s["start"] for s in t["startstops"] if s["action"] == "compute")
                for t in ts.data]

    start = time.perf_counter()
    with (cluster.on_cluster(client) if client is not None else contextlib.nullcontext()), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a in algorithms:
            tick = time.perf_counter()
            with stream() as ts:
                cv, evaluation = evaluate_algorithm(survey, a, plan, folds=FOLDS, seed=SEED,
                                                    n_jobs=n_jobs)
            walls[a] = time.perf_counter() - tick
            if ts is not None:
                phases[a] = durations(ts)
            evaluations[a] = evaluation
            if best_model(evaluations) == a:
                best_cv = cv
        tick = time.perf_counter()
        with stream() as ts:
            document = finish_evaluation(survey, evaluations, plan, best_cv, seed=SEED)
        walls["tests, drivers"] = time.perf_counter() - tick
        if ts is not None:
            phases[f"permutation importance ({best_cv.algorithm_id})"] = durations(ts)
    return time.perf_counter() - start, phases, document, walls


def _local_cluster(n_workers: int = 2):
    from distributed import Client, LocalCluster

    scratch = tempfile.mkdtemp(prefix="cx-bench-dask-")
    lc = LocalCluster(n_workers=n_workers, processes=True, threads_per_worker=1,
                      dashboard_address=":0", local_directory=scratch)
    client = Client(lc, set_as_default=False)
    client.wait_for_workers(n_workers)
    return lc, client


def _worker_peaks_mb(client) -> list[float]:
    return sorted(kb / 1024 for kb in client.run(_peak_kb).values())


def _memory(survey, plan) -> list[tuple[int, int, float, float]]:
    """(respondents, attributes, max worker peak MB, idle worker MB) per size."""
    rows_out = []
    rng = np.random.default_rng(SEED)
    for factor in MEMORY_FACTORS:
        rows = rng.integers(0, len(survey.frame), factor * len(survey.frame))
        sample = survey if factor == 1 else dataclasses.replace(
            survey, frame=survey.frame.iloc[rows].reset_index(drop=True),
            in_model=None if survey.in_model is None else np.asarray(survey.in_model)[rows])
        lc, client = _local_cluster()
        try:
            idle = max(_worker_peaks_mb(client))
            _evaluate(sample, plan, MEMORY_ALGORITHMS, n_jobs=2, client=client)
            peak = max(_worker_peaks_mb(client))
        finally:
            client.close()
            lc.close()
        rows_out.append((len(sample.y), len(sample.attribute_names), peak, idle))
        _log(f"memory n={len(sample.y):,}: worker peak {peak:.0f} MB (idle {idle:.0f} MB)")
    return rows_out


def run() -> str:
    algorithms = tuple(a for a in os.environ.get("CX_BENCH_CLUSTER_ALGORITHMS", DEFAULT)
                       .split(",") if a)
    rounds = int(os.environ.get("CX_BENCH_CLUSTER_ROUNDS", "3"))
    survey = load_survey(sample_path("telecom_nps"))
    plan = resolve_plan(survey.schema.plan_spec, survey.classes)
    start = time.perf_counter()
    lc, client = _local_cluster()
    startup = time.perf_counter() - start
    _log(f"LocalCluster with 2 workers up in {startup:.1f} s")
    loky, dask, phases, docs, walls = [], [], {}, {}, {}
    try:
        # warm both: loky's reused worker processes and the Dask workers import cx_app,
        # scikit-learn and xgboost on their first task (a running cluster has done so)
        warm = dataclasses.replace(survey, frame=survey.frame.iloc[:500],
                                   in_model=None if survey.in_model is None
                                   else np.asarray(survey.in_model)[:500])
        _evaluate(warm, plan, algorithms, n_jobs=2)
        _evaluate(warm, plan, algorithms, n_jobs=2, client=client)
        for r in range(rounds):
            seconds, _, docs["loky"], loky_walls = _evaluate(survey, plan, algorithms, n_jobs=2)
            loky.append(seconds)
            if seconds == min(loky):
                walls["loky"] = loky_walls
            _log(f"round {r + 1}: loky n_jobs=2 {seconds:.1f} s")
            seconds, round_phases, docs["dask"], dask_walls = _evaluate(
                survey, plan, algorithms, n_jobs=2, client=client)
            dask.append(seconds)
            if seconds == min(dask):
                phases, walls["dask"] = round_phases, dask_walls
            _log(f"round {r + 1}: dask 2 workers {seconds:.1f} s")
        # the real command path: evaluate_survey submits every algorithm's folds together
        # on a cluster (cross_validate_together), one algorithm after another locally
        whole = {"loky": [], "dask": []}
        for _ in range(2):
            tick = time.perf_counter()
            local_doc, _ = evaluate_survey(survey, algorithms, folds=FOLDS, seed=SEED, n_jobs=2)
            whole["loky"].append(time.perf_counter() - tick)
            tick = time.perf_counter()
            with cluster.on_cluster(client):
                cluster_doc, _ = evaluate_survey(survey, algorithms, folds=FOLDS, seed=SEED,
                                                 n_jobs=2)
            whole["dask"].append(time.perf_counter() - tick)
        whole_same = (without_wall_clock(json.loads(local_doc.to_json()))
                      == without_wall_clock(json.loads(cluster_doc.to_json())))
        _log(f"evaluate_survey: loky {min(whole['loky']):.1f} s, dask {min(whole['dask']):.1f} s")
    finally:
        client.close()
        lc.close()
    same = (without_wall_clock(json.loads(docs["loky"].to_json()))
            == without_wall_clock(json.loads(docs["dask"].to_json())))
    best_loky, best_dask = min(loky), min(dask)
    task_total = sum(sum(d) for d in phases.values())
    serial = best_dask - sum(_lpt(d, 2) for d in phases.values())
    model = {w: max(serial, 0.0) + sum(_lpt(d, w) for d in phases.values())
             for w in WORKERS_MODELLED}
    pooled = {w: max(serial, 0.0) + max(max(max(d) for d in phases.values()), task_total / w)
              for w in WORKERS_MODELLED}
    slowest = max(((p, max(d)) for p, d in phases.items()), key=lambda x: x[1])
    critical = sum(max(d) for d in phases.values())
    lines = [
        "## Scale-out: Dask LocalCluster (2 workers) vs loky (n_jobs=2)",
        "",
        f"Sample telecom survey, {len(survey.y):,} respondents, {FOLDS} folds, algorithms: "
        f"{', '.join(algorithms)} (default fast preset; load average "
        f"{os.getloadavg()[0]:.1f} at the end), then tests and the permutation importance of the best model — "
        "`evaluate_survey`'s steps. Cluster: `distributed.LocalCluster(n_workers=2, "
        "processes=True, threads_per_worker=1)`, started once "
        f"({startup:.1f} s, not counted). One warm-up evaluation (500 respondents) on each "
        f"engine, not counted; then {rounds} interleaved rounds, the fastest of each kept.",
        "",
        "| engine | seconds (rounds) | ratio |",
        "|---|---:|---:|",
        f"| loky, n_jobs=2 (baseline) | {best_loky:.1f} ({', '.join(f'{s:.1f}' for s in loky)})"
        " | 1.00 |",
        f"| Dask, 2 workers | {best_dask:.1f} ({', '.join(f'{s:.1f}' for s in dask)}) | "
        f"**{best_dask / best_loky:.2f}** |",
        "",
        "Per step, seconds (fastest round; loky → Dask): " + "; ".join(
            f"{p} {walls['loky'][p]:.1f} → {walls['dask'][p]:.1f}" for p in walls["loky"]) + ".",
        "",
        f"- ratio Dask / loky: **{best_dask / best_loky:.2f}** (target ≤ 1.15); the results "
        f"documents are {'identical' if same else 'DIFFERENT'} (timings aside).",
        f"- `evaluate_survey` itself (what `cx-app evaluate` runs; on the cluster every "
        f"algorithm's folds are submitted together, locally one algorithm after another), "
        f"fastest of 2: loky {min(whole['loky']):.1f} s, Dask {min(whole['dask']):.1f} s — "
        f"**ratio {min(whole['dask']) / min(whole['loky']):.2f}**; results documents "
        f"{'identical' if whole_same else 'DIFFERENT'} (timings aside).",
        f"- tasks as Dask ran them: {sum(len(d) for d in phases.values())} tasks, "
        f"{task_total:.1f} s of compute; the client's own work (levels, ROC, tests, scatter, "
        f"scheduling) {max(serial, 0.0):.1f} s.",
        "",
        "Speed-up model (phases in sequence, each scheduled longest-task-first on W workers, "
        "plus the client's own work as measured):",
        "",
        "| workers | modelled s | speed-up vs 2 | all tasks in one pool s |",
        "|---:|---:|---:|---:|",
        *(f"| {w} | {model[w]:.1f} | {model[2] / model[w]:.2f}× | {pooled[w]:.1f} |"
          for w in WORKERS_MODELLED),
        "",
        f"- critical path (sum over phases of the slowest task): {critical:.1f} s; the single "
        f"slowest task: {slowest[1]:.2f} s in {slowest[0]}.",
        "- per phase (tasks, compute s, slowest task s): " + "; ".join(
            f"{p} {len(d)}, {sum(d):.1f}, {max(d):.2f}" for p, d in phases.items()) + ".",
        "- 'all tasks in one pool' is the bound if the algorithms' folds were submitted "
        "together (max(slowest task, compute / W)): with 10 folds per algorithm, workers "
        "beyond 10 only help when several algorithms run at once.",
    ]
    if os.environ.get("CX_BENCH_CLUSTER_MEMORY", "1") != "0":
        memory = _memory(survey, plan)
        lines += [
            "",
            "Memory per worker (peak resident memory of the larger of 2 workers; "
            f"{', '.join(MEMORY_ALGORITHMS)}, 10 folds; the sample and its rows resampled "
            f"{MEMORY_FACTORS[-1]}×):",
            "",
            "| respondents | attributes | worker peak MB | idle worker MB |",
            "|---:|---:|---:|---:|",
            *(f"| {n:,} | {p} | {peak:.0f} | {idle:.0f} |" for n, p, peak, idle in memory),
        ]
        (n1, p1, m1, _), (n2, p2, m2, _) = memory
        per_cell = (m2 - m1) * 1024 * 1024 / (n2 * p2 - n1 * p1)
        lines.append(f"- growth: {per_cell:.0f} bytes per respondent × attribute above "
                     f"{m1 - per_cell * n1 * p1 / 2**20:.0f} MB.")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run())
