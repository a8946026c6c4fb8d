"""``python -m cx_app``: the ``cx-app`` command line (:func:`cx_app.cli.main`)."""

import sys

from cx_app.cli import main

sys.exit(main())
