"""Driver models: train once by cross-validation, derive every evaluation from the cached arrays.

The algorithm registry, cached cross-validation (on a Dask cluster when asked), evaluations
that never refit, paired tests, drivers, the one ``results.json`` document and its ranking
rule; ``docs/architecture.md`` maps the modules. Imports: engine, survey.
"""
