"""Project files: size and save/open time for the sample survey with nine models.

Nine models (the eight default algorithms and ``ordinal``) are cross-validated on the bundled
telecom sample through the app's own path (:meth:`cx_app.app.session.Analysis.train`, which
keeps the out-of-fold arrays and the permutation importance) and each is fitted once more on
all respondents (``final_model(fit=True)``, re-using its cross-validation). Then, in the same
run:

- sizes: ``results.json`` of the nine models (the baseline), the project file without final
  models, with them, and with the survey file inside;
- save: :func:`cx_app.app.project.save_analysis` against writing ``results.json`` alone
  (``Results.to_json``): the first save of an analysis (results document with its drivers
  built, final models serialised) and a later one (both memoised by the analysis, as in the
  app);
- open: :func:`cx_app.project.read_project` (every member hashed and parsed, final models
  through skops' trusted-type check) and :func:`cx_app.app.project.open_analysis` (plus
  reading the survey) against reading and validating ``results.json`` (``Results.from_dict``)
  and against ``load_survey`` of the same file.

Training is not timed. Environment: ``CX_BENCH_PROJECT_FOLDS`` (default 3, to keep the
training of svm and ann to minutes on a shared machine; the arrays' size does not depend on
the folds), ``CX_BENCH_PROJECT_ALGORITHMS`` (default the nine).
"""

from __future__ import annotations

import json
import os
import statistics
import time

from cx_app.app.project import open_analysis, save_analysis
from cx_app.app.session import Analysis
from cx_app.app.store import ResultStore, survey_key
from cx_app.models.algorithms import DEFAULT_ALGORITHMS
from cx_app.models.results import Results
from cx_app.project import read_project
from cx_app.survey.importing import load_survey
from cx_app.survey.samples import sample_path
from cx_app.survey.schema import load_schema

ROOT = sample_path("telecom_nps").parents[1]
REPEATS = 5


def _log(message: str) -> None:
    print(f"[bench_project] {message}", flush=True)


def _best(action, repeats: int = REPEATS) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run() -> str:
    folds = int(os.environ.get("CX_BENCH_PROJECT_FOLDS", "3"))
    algorithms = [a for a in os.environ.get(
        "CX_BENCH_PROJECT_ALGORITHMS", ",".join((*DEFAULT_ALGORITHMS, "ordinal"))).split(",") if a]
    path = sample_path("telecom_nps")
    raw = path.read_bytes()
    schema = load_schema(ROOT / "survey_schemas" / "telecom_nps.yaml")
    survey = load_survey(raw, schema=schema, filename=path.name)
    analysis = Analysis(survey=survey, plan=schema.plan_spec, data_key=survey_key(
        survey.source.sha256, survey.source.sheet, schema.to_yaml(), path.name))
    store = ResultStore(64)
    start = time.perf_counter()
    for algorithm in algorithms:
        _log(f"training {algorithm} ({folds} folds)")
        events = analysis.train({algorithm: {}}, folds=folds, seed=0, calibration="none",
                                store=store)
        if events[-1].status == "failed":
            raise RuntimeError(events[-1].message)
    for model_id in analysis.models:
        _log(f"final model {model_id}")
        analysis.final_model(model_id, store, fit=True)
    train_seconds = time.perf_counter() - start
    ids = list(analysis.models)
    results = analysis.report_document(ids)  # built once (memoised drivers), as the app does
    results_text = results.to_json()

    bare = save_analysis(Analysis(survey=survey, plan=analysis.plan, data_key=analysis.data_key,
                                  models=dict(analysis.models)))
    with_finals = save_analysis(analysis)
    with_survey = save_analysis(analysis, include_survey=raw)
    sizes = {"results.json (baseline)": len(results_text.encode("utf-8")),
             "project, CV arrays and results (no final models)": len(bare),
             "project with the nine final models": len(with_finals),
             "project with final models and the survey file": len(with_survey)}

    _log("timing")
    t_json = _best(lambda: results.to_json())
    t_save = _best(lambda: save_analysis(analysis))

    def fresh() -> Analysis:  # the same models, nothing memoised (no results, no model bytes)
        return Analysis(survey=survey, plan=analysis.plan, data_key=analysis.data_key,
                        models=dict(analysis.models), finals=dict(analysis.finals))

    t_first = _best(lambda: save_analysis(fresh()), 3)
    t_read_json = _best(lambda: Results.from_dict(json.loads(results_text)))
    t_read = _best(lambda: read_project(with_finals))
    t_survey = _best(lambda: load_survey(raw, schema=schema, filename=path.name), 3)
    t_open = _best(lambda: open_analysis(with_finals, name="p.cxproj",
                                         survey_files={path.name: raw}), 3)

    base = sizes["results.json (baseline)"]
    lines = [
        "## Project files (`.cxproj`): size and save/open time",
        "",
        f"Bundled telecom sample ({len(survey.y):,} respondents, 11 classes), {len(ids)} models "
        f"({', '.join(ids)}), {folds}-fold cross-validation through the app's `Analysis.train` "
        f"(with permutation importance) and each model fitted on all respondents "
        f"(training {train_seconds:.0f} s, not timed below; {folds} folds rather than 10 to keep "
        "svm and ann to minutes on a shared machine — neither the arrays' size nor the final "
        "models' depends on the number of folds). Baseline: `results.json` of the same models, "
        "built, written and read in the same run. Times are medians of "
        f"{REPEATS} runs (3 for the survey reads).",
        "",
        "| file | size | ratio to results.json |",
        "|---|---:|---:|",
        *(f"| {name} | {size / 2**20:.2f} MB | {size / base:.2f} |" for name, size in sizes.items()),
        "",
        "| step | ours s | baseline | baseline s | ratio |",
        "|---|---:|---|---:|---:|",
        f"| first save (`save_analysis`: builds the results document with its drivers, "
        f"serialises the final models, zips) | {t_first:.3f} | `Results.to_json` | "
        f"{t_json:.3f} | {t_first / t_json:.1f} |",
        f"| save again (results document and model files memoised, as in the app) | "
        f"{t_save:.3f} | `Results.to_json` | {t_json:.3f} | {t_save / t_json:.1f} |",
        f"| open the file (`read_project`: hash, parse, skops trusted-type check) | "
        f"{t_read:.3f} | `Results.from_dict(json.loads(...))` | {t_read_json:.3f} | "
        f"{t_read / t_read_json:.1f} |",
        f"| open the analysis (`open_analysis`: the above + reading the survey) | {t_open:.3f} | "
        f"`load_survey` of the sample | {t_survey:.3f} | {t_open / t_survey:.2f} |",
    ]
    return "\n".join(lines) + "\n"
