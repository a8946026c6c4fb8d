"""The confusion-matrix engine: pure numpy, no survey or model knowledge.

Orientation everywhere: rows actual, columns predicted; ``docs/architecture.md`` maps the modules.
"""
