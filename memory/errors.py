"""The one error type a user can fix. Every layer raises subclasses; the CLI prints the
message as one red line and exits 2: the message names the fix, and a traceback would
only bury it."""


class PaicliError(Exception):
    """Something the user can fix; the message names the fix."""

    exit_code = 2
