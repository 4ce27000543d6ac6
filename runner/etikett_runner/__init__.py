"""Etikett Runner: the on-site agent between the Etikett service and the local label printers.

Ships separately from the service: nothing here imports the server package `etikett`.
"""
