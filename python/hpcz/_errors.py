"""hpcz.Error and its subclasses, one per library error code (include/hpcz/hpcz.hpp's ErrorCode)."""


class Error(Exception):
    """An error from the hpcz library; ``code`` is the library's error code (the CLI's ``HPCZ_*``)."""

    code = 0

    def __init__(self, message, code=None):
        super().__init__(message)
        if code is not None:
            self.code = code


class InvalidArgumentError(Error, ValueError):
    """The request is wrong: dims, bound, dtype, or a buffer too small."""

    code = 1


class CorruptArchiveError(Error):
    """The data is truncated, damaged or not an hpcz archive."""

    code = 2


class UnsupportedError(Error):
    """A valid archive of a newer format version or an unknown codec."""

    code = 3


class BackendUnavailableError(Error):
    """A GPU was asked for and none is usable (or the build has no CUDA)."""

    code = 4


class CudaError(Error):
    """A CUDA runtime error."""

    code = 5


class InternalError(Error):
    """A bug in hpcz (an archive it wrote did not read back): please report it."""

    code = 7


class HpczIOError(Error, OSError):
    """Reading an input or writing an output failed."""

    code = 8


_BY_CODE = {c.code: c for c in (InvalidArgumentError, CorruptArchiveError, UnsupportedError,
                                BackendUnavailableError, CudaError, InternalError, HpczIOError)}


def error_class(code):
    return _BY_CODE.get(code, Error)
