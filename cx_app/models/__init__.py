"""Driver models: train once by cross-validation, derive every evaluation from the cached arrays.

Public API: :mod:`~cx_app.models.algorithms` (``ALGORITHMS`` registry, ``build_algorithm``),
:mod:`~cx_app.models.crossval` (``cross_validate_model`` → ``CrossValResult``: out-of-fold
predictions and probabilities, seeded shared folds), :mod:`~cx_app.models.evaluation`
(``evaluate_result`` → ``ModelEvaluation``: every level, per-fold metrics, ROC — never refits),
:mod:`~cx_app.models.comparison` (paired and corrected t-tests, Holm, 5×2cv),
:mod:`~cx_app.models.drivers` (permutation importance, ordinal coefficients, relative weights,
importance–performance, top-box δ/φ; ``PERMUTATION_REPEATS``) and
:mod:`~cx_app.models.analysis` (``evaluate_survey`` and ``results_document``: the one
``results.json`` the CLI and the app write; ``best_model``/``rank_models``: the one ranking rule)
and :mod:`~cx_app.models.results` (``Results``: that document typed and validated,
``read_results``); :mod:`~cx_app.models.timing` (``expected_seconds``: a training's expected
time from rows × attributes × folds, measured constants per algorithm);
:mod:`~cx_app.models.cluster` runs their joblib work on a Dask cluster (``scheduler``,
``on_cluster``; same results, dask imported only when asked). Imports: engine, survey.
"""
