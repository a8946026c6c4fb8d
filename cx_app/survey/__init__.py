"""Survey files in, respondents and NPS out.

Public API: :mod:`~cx_app.survey.schema` (``SurveySchema``, ``load_schema``, ``save_schema``,
``schema_from_mapping``; ``default_plan`` from :mod:`~cx_app.survey.default_plans`),
:mod:`~cx_app.survey.inference` (``infer_schema``: a layout proposed from a table), :mod:`~cx_app.survey.importing`
(``load_survey`` → ``SurveyData``, ``read_table``, ``sheet_names``) over :mod:`~cx_app.survey.reading` (bytes, grids, CSV decoding; workbooks read by fastexcel in a child process with limits, :mod:`~cx_app.survey.reader_process`), :mod:`~cx_app.survey.cells` and :mod:`~cx_app.survey.cleaning` (cleaning columns of cells), :mod:`~cx_app.survey.mapping` (the editable column mapping), the guards
:mod:`~cx_app.survey.limits` (``ImportLimits``) and :mod:`~cx_app.survey.xml_safety` (archive and
XML checks run before any parser sees a file), :mod:`~cx_app.survey.quality`
(``DataQualityReport``: every row used or excluded with its reason), :mod:`~cx_app.survey.nps`
(``nps_summary``, ``nps_by``, ``nps_change``: net scores with adjusted-Wald intervals) and
:mod:`~cx_app.survey.samples` (the bundled sample files, written from :mod:`cx_app.simulation`).
Imports: the engine (plans), :mod:`cx_app.simulation` and the foundation modules only.
"""
