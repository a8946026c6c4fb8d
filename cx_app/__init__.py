"""CX driver analytics: the library behind the app and the CLI (it never imports streamlit).

The tree tells the architecture; imports only point down the list:

- ``errors``, ``provenance``, ``safe_text`` — the error hierarchy shown to analysts, the library
  versions recorded in every output, formula-safe CSV/Excel text and HTML escaping;
- ``engine/``   — confusion matrices, R/S/RS grouping, M×M+IM levels, 2×2+IM metrics and ROC, δ/φ;
- ``survey/``   — schemas, robust import with data-quality accounting, NPS and its intervals,
  the seeded sample generators;
- ``models/``   — the algorithm registry, cached cross-validation, evaluation, paired tests,
  drivers, the ``results.json`` document;
- ``estimate/`` — ALP matrices and gaps, calibration, drift, final models and model files,
  new-wave estimates;
- ``reports/``  — charts (Altair), the report content model, Excel and HTML writers;
- ``app/``      — the app's per-session state and bounded shared caches (Streamlit-free);
- ``cli/``      — ``cx-app`` subcommands, one module each.

See ``docs/architecture.md`` for the contracts and a "where is X" table.
"""

__version__ = "0.1.0"
