"""One Alembic script per schema revision of the workspace (``NNNN_what.py``)."""
