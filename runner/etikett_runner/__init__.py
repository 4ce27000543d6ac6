"""Etikett Runner: the on-site agent between the Etikett service and the local label printers.

Ships separately from the service: nothing here imports the server package `etikett`.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("etikett-runner")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0"
