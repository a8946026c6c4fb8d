"""The report's sections, one module each, built from the typed results.

One module per report section; each ``section(...)`` returns a :class:`Section` built from
the typed results (:class:`cx_app.models.results.Results`) and, for the new wave, the typed
estimate (:class:`cx_app.estimate.document.WaveEstimateDocument`).
"""
