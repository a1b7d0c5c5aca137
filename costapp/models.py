"""Scenarios and simulation runs."""
