"""Survey files in, respondents and NPS out.

Schemas and layout inference, the import's stages (bytes, grid, layout, typed columns, roles,
survey) with their limits and safety checks, the data-quality report, net scores with their
intervals and the bundled samples; ``docs/architecture.md`` maps the modules. Imports: the
engine (plans), :mod:`cx_app.simulation` and the foundation modules only.
"""
