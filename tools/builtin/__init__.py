"""The built-in tools' implementations (their specs, as data, are in ``paicli.tools.specs``)."""
