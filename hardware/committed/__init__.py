"""Committed prices: the clouds' published 1- and 3-year prices and Epoch AI's dated prices as
market observations (``services`` writes them, ``selectors`` reads them)."""
