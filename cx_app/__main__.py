import sys

from cx_app.cli import main

sys.exit(main())
