"""Program names: the one check of every way a program gets a name.

Create, import and the app's analyses all pass a name through :func:`program_name`, so a name
that one of them refuses (blank, too long, a line break, a direction mark) no other accepts.
"""

from __future__ import annotations

import re

from cx_app.errors import WorkspaceError
from cx_app.safe_text import plain_text

__all__ = ["NAME_LENGTH", "program_name"]

NAME_LENGTH = 200
"""The longest program name the tables hold."""

_DIRECTION = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Direction marks and overrides: they make a name read differently from what it is."""


def program_name(name: str) -> str:
    """The one name check of every way a program gets a name (create, import, the app's
    analyses): survey-safe text (:func:`cx_app.safe_text.plain_text`: no control characters),
    no direction marks, every run of spaces, tabs or line breaks one space, none around it, 1 to :data:`NAME_LENGTH` characters;
    :class:`WorkspaceError` otherwise.

    >>> program_name("  bank-nps ")
    'bank-nps'
    """
    cleaned = " ".join(_DIRECTION.sub("", plain_text(str(name))).split())
    if not cleaned or len(cleaned) > NAME_LENGTH:
        raise WorkspaceError(f"a program needs a name of 1 to {NAME_LENGTH} characters "
                             "(e.g. 'bank-nps')")
    return cleaned
