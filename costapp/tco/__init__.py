"""The TCO engine: pure Python and numpy, no Django, no I/O.

A scenario document (docs: scenario-format.md) and the GPU figures it needs go in; the result
document comes out.
"""
