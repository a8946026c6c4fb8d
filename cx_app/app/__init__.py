"""The app's Streamlit-free state layer: what a user carries from page to page.

Public API: :mod:`~cx_app.app.session` — ``Analysis`` (survey, plan, cross-validated models and
their derived, memoised views; a grouping change never retrains), ``CrossValidatedModel`` (one
cross-validated model of the session), ``train_lean``, and the process-wide bounded
``ResultStore`` with its content keys (``survey_key``, ``training_key``) and ``cache_limits``
in :mod:`~cx_app.app.store` (re-exported by ``session``); :mod:`~cx_app.app.views` builds the
tables the pages show (leaderboard, metric tables); :mod:`~cx_app.app.file_memory` keeps, per
session, each file's mapping edits (``MappingMemory``); :mod:`~cx_app.app.program_link` turns
the models a workspace program keeps into the session's analysis;
:mod:`~cx_app.app.training` trains in the background (``TrainingJob``, cancellable between
folds, ``TrainingCancelled``).
The pages in ``app_pages/`` hold the Streamlit side. Imports: every layer below, never streamlit.
"""
