"""Errors that the workflow reports to the user as one line, before any heavy work starts."""


class MedbiasInputError(ValueError):
    """Bad user input (config key, file, column, model, word). The message is one line that names
    the offending item and what was expected."""
