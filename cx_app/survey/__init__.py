"""Survey files in, respondents and NPS out.

``docs/architecture.md`` maps the modules. Imports: the engine (plans), :mod:`cx_app.simulation`
and the foundation modules only.
"""
