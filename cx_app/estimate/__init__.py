"""New waves without answers: ALP estimates, calibration, drift and model files.

Public API: :mod:`~cx_app.estimate.alp` (``alp_confusion_matrix`` in our rows-actual
orientation, closed forms, ``alp_gap``, ``compare_alp_cm``), :mod:`~cx_app.estimate.calibration`
(none / temperature / sigmoid / isotonic, chosen by the held-out gap score),
:mod:`~cx_app.estimate.drift` (PSI, χ², unseen and missing attributes),
:mod:`~cx_app.estimate.training` (``train_model``: the final model, re-using a cross-validation
already done when given one), :mod:`~cx_app.estimate.model_file` (``save_model``, ``load_model``,
``model_bytes``: skops with a trusted-type list; its typed metadata ``TrainingData`` and
``HeldOutFigures`` in :mod:`~cx_app.estimate.model_metadata`) and :mod:`~cx_app.estimate.new_wave`
(``estimate_wave`` → ``WaveEstimate``: ALP levels, estimated NPS with interval, realized values)
and :mod:`~cx_app.estimate.document` (``WaveEstimateDocument``: an estimate's JSON, typed).
Imports: engine, survey, models.
"""
