"""The one exception type for mistakes a user can fix (bad params, missing files).

Stage scripts catch it and print its message on one line without a traceback;
anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class UserError(Exception):
    """A problem in the user's input: the message names the param or path and the fix."""
