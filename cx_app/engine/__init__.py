"""The confusion-matrix engine: pure numpy, no survey or model knowledge.

Plans and their grouping (R / S / RS, intragroup mismatch), confusion matrices and their
levels, 2×2+IM metrics, ROC and δ/φ, and the metric catalogue; ``docs/architecture.md`` maps
the modules. Orientation everywhere: rows actual, columns predicted. It imports only the
foundation modules.
"""
