"""objperf's exception hierarchy: every failure a user can cause or meet has one
class, and the CLI prints its message as one line.  Like pyarrow's, each class
also subclasses the builtin that fits, so callers can catch either."""


class ObjperfError(Exception):
    """Base of every error objperf raises on purpose."""


class UsageError(ObjperfError, ValueError):
    """A bad argument: URL, size, duration, flag value."""


class TargetError(ObjperfError, OSError):
    """The endpoint, bucket or object cannot be used (unreachable, missing, forbidden)."""


class CredentialsError(ObjperfError, PermissionError):
    """Credentials are missing, unknown or rejected."""


class ServerError(ObjperfError, RuntimeError):
    """The embedded local server could not be started or seeded."""
