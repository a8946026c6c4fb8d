"""The report's sections, one module each, built from the typed results."""
