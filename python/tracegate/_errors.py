"""tracegate's exceptions: each carries the one-line message the CLI prints after
``tracegate: error:`` (``<path>: <problem>``); where the CLI exits 2, Python raises one of these."""


class Error(Exception):
    """Base class of every tracegate error. ``str(e)`` is the CLI's message."""

    code = "internal"

    @property
    def message(self):
        return str(self.args[0]) if self.args else ""


class InvalidInputError(Error, ValueError):
    """The input is not what it claims to be (not a trace, bad JSON, a bad option value)."""

    code = "invalid_input"


class UnsupportedError(InvalidInputError):
    """A format or version tracegate does not read."""

    code = "unsupported"


class NotFoundError(Error, FileNotFoundError):
    """A missing file or table."""

    code = "not_found"


class TraceIOError(Error, OSError):
    """Reading or writing a file failed (permissions, disk full, ...)."""

    code = "io_error"


class InternalError(Error, RuntimeError):
    code = "internal"


class GateFailed(Error):
    """Raised by the torch.profiler handler when a gate does not pass: ``.verdict`` is the
    Comparison (its ``.exit_code`` is the CLI gate's: 1 regression, 2 cannot judge)."""

    code = "gate_failed"

    def __init__(self, verdict):
        super().__init__(verdict.text)
        self.verdict = verdict


_BY_CODE = {c.code: c for c in (InvalidInputError, UnsupportedError, NotFoundError, TraceIOError, InternalError)}


def error_class(code):
    """The exception class for a tg::StatusCode name (used by the C++ module)."""
    return _BY_CODE.get(code, InternalError)
