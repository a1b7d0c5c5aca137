"""Price sources: one module per format, each turning a file into plain rows and per-row
rejections (file, line, reason), and one registry of every format (``registry.py``). No database
access here; ``hardware.services`` stores the rows.
"""
