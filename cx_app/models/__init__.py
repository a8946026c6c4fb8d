"""Driver models: train once by cross-validation, derive every evaluation from the cached arrays.

``docs/architecture.md`` maps the modules.
"""
