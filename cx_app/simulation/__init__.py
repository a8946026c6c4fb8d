"""Seeded synthetic surveys with a known true model: the bundled samples, tests and backtests.

Not the importer: these modules write survey tables (and messy exports) that the importer then
reads like any analyst's file. Imports: numpy, pandas and the foundation modules only.
"""
