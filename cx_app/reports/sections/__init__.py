"""The report's sections, one module each: ``section(...)`` returns a :class:`Section`."""
