"""The one error type users see: bad input, reported on one line without a traceback."""


class InputError(ValueError):
    """Input that gpuplan cannot use. The message names the field and the accepted values."""
