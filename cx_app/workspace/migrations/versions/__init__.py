"""One Alembic script per schema revision of the workspace, named by its number and change."""
