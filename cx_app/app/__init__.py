"""The app's Streamlit-free state layer: what a user carries from page to page.

:mod:`~cx_app.app.session` (``Analysis``: survey, plan, cross-validated models and their
memoised views), :mod:`~cx_app.app.store` (the process-wide ``ResultStore``),
:mod:`~cx_app.app.views` (the pages' tables), :mod:`~cx_app.app.training` (``TrainingJob`` in the
background). The pages in ``app_pages/`` hold the Streamlit side; nothing here imports it.
"""
