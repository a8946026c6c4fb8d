"""CX driver analytics: the library behind the app and the CLI (it never imports streamlit).

The tree tells the architecture; imports only point down the list:

- ``errors``, ``provenance``, ``safe_text``, ``json_values``, ``archive_limits``, ... — the
  error hierarchy shown to analysts, the library versions recorded in every output,
  formula-safe CSV/Excel text and HTML escaping, numpy values as JSON, bounded zip members;
- ``engine/``   — confusion matrices, R/S/RS grouping, M×M+IM levels, 2×2+IM metrics and ROC, δ/φ;
- ``simulation/`` — seeded synthetic surveys with a known true model (samples, backtests);
- ``survey/``   — schemas, robust import with data-quality accounting, NPS and its intervals;
- ``models/``   — the algorithm registry, cached cross-validation, evaluation, paired tests,
  drivers, the ``results.json`` document;
- ``estimate/`` — ALP matrices and gaps, calibration, drift, final models and model files,
  new-wave estimates;
- ``reports/``  — charts (Altair), the report content model, Excel and HTML writers;
- ``project``   — the ``.cxproj`` project file format;
- ``app/``      — the app's per-session state and bounded shared caches (Streamlit-free);
- ``cli/``      — ``cx-app`` subcommands, one module each.

See ``docs/architecture.md`` for the contracts, the module map and a "where is X" table.
"""

__version__ = "0.1.0"
