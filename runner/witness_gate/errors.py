"""The refusals the runner can raise.

Every refusal carries one line that names the file or input and what is wrong; the
CLI prints it and exits with `exit_code`. Anything else escaping is a bug.
"""


class WitnessGateError(Exception):
    """Bad input or a broken invariant: the gate refuses and stays red (exit 2)."""

    exit_code = 2


class SetupFailed(WitnessGateError):
    """The machine, not the patch: what a run needs from the host failed (exit 2, never a verdict)."""

    def __init__(self, detail: str) -> None:
        super().__init__(f"setup failed: {detail}")


class FixtureChanged(WitnessGateError):
    """The fixture's bytes no longer match the lock: evidence must be re-pinned."""


class Stopped(BaseException):
    """A signal (SIGTERM, SIGINT) asked the run to stop: its workers are killed, what it
    staged is removed on the way out, nothing is published. Not an Exception, so that no
    handler of failures takes it for one."""

    def __init__(self, signal_number: int, name: str) -> None:
        super().__init__(name)
        self.signal_number = signal_number
        self.name = name
