"""The command sandbox (paicli issue 24): execute_command changes the project and nothing else.

``CommandSandbox`` is made once per session from ``SandboxOptions`` (``paicli/config/settings.py``)
and travels to the tool in ``ToolContext.sandbox``; ``launch`` turns one command into the argv
to run. ``layout`` says what is writable, ``bwrap`` / ``seatbelt`` say it to the OS, ``sweep``
undoes protected paths a command created, ``explain`` tells the model what the sandbox refused.
"""
