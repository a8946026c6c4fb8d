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
_DIRECTION = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069]")  # make a name read otherwise


def program_name(name: str) -> str:
    """No control characters nor direction marks, white space folded to one space, 1 to
    :data:`NAME_LENGTH` characters.

    >>> program_name("  bank-nps ")
    'bank-nps'
    """
    cleaned = " ".join(_DIRECTION.sub("", plain_text(str(name))).split())
    if not cleaned or len(cleaned) > NAME_LENGTH:
        raise WorkspaceError(f"a program needs a name of 1 to {NAME_LENGTH} characters "
                             "(e.g. 'bank-nps')")
    return cleaned
