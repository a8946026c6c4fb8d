"""CX driver analytics: the library behind the app and the CLI.

The package never imports streamlit. Modules are one concept each:

- ``errors``      — the error hierarchy shown to analysts
- ``plan``        — reduction plans (class groupings R / S / RS), as in schemas and plan files
- ``schema``      — declarative survey layouts (pydantic), inference of a layout from a table
- ``importing``   — reading Excel / CSV files into a table, with data-quality accounting
- ``nps``         — NPS, category shares, intervals, wave-to-wave changes
- ``confusion``   — confusion matrices and multiclass metrics
- ``grouping``    — grouped classes and the M×M+IM reduction
- ``binary``      — 2×2 and 2×2+IM metrics
- ``roc``         — ROC/AUC, including the ROC of a 2×2+IM
- ``capability``  — discriminant / characteristic capability (δ, φ)
- ``algorithms``  — the driver-model registry
- ``crossval``    — cached out-of-fold predictions and probabilities
- ``comparison``  — paired t-tests between algorithms
- ``drivers``     — which attributes drive the score
- ``alp``         — actual-label-probabilistic confusion matrix and estimates
"""

__version__ = "0.1.0"
