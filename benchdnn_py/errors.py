"""The two kinds of bad input, kept apart because they end differently.

UsageError: the command line or a batch file is wrong (unknown option, bad option value,
missing batch file). The run stops before anything executes; exit status 2.

ProblemError: one problem descriptor is wrong. That case is counted INVALID_ARGUMENTS and
the batch goes on.

Both carry a single line that names the offending token and what was expected.
"""


class BenchError(Exception):
    """Base of benchdnn-py's own errors; str() is the one-line message."""


class UsageError(BenchError):
    exit_code = 2


class ProblemError(BenchError):
    """A problem descriptor that cannot be turned into a problem."""
