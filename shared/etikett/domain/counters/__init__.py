"""Counters: named serial sequences, the values print jobs take, and the blocks Runners reserve
to print offline."""
