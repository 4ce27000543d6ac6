"""The settings local AWS takes, checked once for the server and for the parent that starts it in
a child process (which must fail before a child is started, without importing moto)."""


def check_options(snapshot_interval: float, max_wait_seconds: int) -> None:
    if snapshot_interval <= 0:
        raise ValueError("snapshot_interval must be positive")
    if not 0 <= max_wait_seconds <= 20:
        raise ValueError("max_wait_seconds must be between 0 and 20")
