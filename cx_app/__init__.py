"""CX driver analytics: the library behind the app and the CLI (it never imports streamlit).

The tree tells the architecture (foundation modules, ``engine/``, ``simulation/``, ``survey/``,
``models/``, ``estimate/``, ``reports/``, ``project``, ``workspace/``, ``app/``, ``cli/``);
imports only point down the list. See ``docs/architecture.md`` for the contracts, the module
map and a "where is X" table.
"""

__version__ = "0.1.0"
