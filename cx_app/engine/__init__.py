"""The confusion-matrix engine: pure numpy, no survey or model knowledge.

Public API: :mod:`~cx_app.engine.plan` (reduction plans ``PlanSpec``/``StepSpec``, ``NPS_PLAN``,
``parse_plan``, ``load_plan_file``), :mod:`~cx_app.engine.confusion` (``ConfusionMatrix``,
``confusion_matrix``, ``multiclass_metrics``, label helpers), :mod:`~cx_app.engine.grouping`
(``GroupedClass``, ``resolve_plan`` → ``ResolvedPlan``: Relaxed / Strict / Hybrid-RS groups and
the intragroup-mismatch masks), :mod:`~cx_app.engine.levels` (``reduce_confusion`` → the M×M+IM
``Level`` list), :mod:`~cx_app.engine.binary` (``binary_metrics`` of a 2×2+IM, ``BINARY_KEYS``),
:mod:`~cx_app.engine.roc` (``reduced_roc`` of a 2×2+IM, ``ovr_roc``, ``thin_curve``) and
:mod:`~cx_app.engine.capability` (δ/φ), and :mod:`~cx_app.engine.catalogue` (every metric's
name, words, formula, format and direction; the lists of metrics shown together). Orientation everywhere: rows actual, columns predicted.
Every layer above uses this one; it imports only :mod:`cx_app.errors`.
"""
