"""How the catalog shows what it holds: figures in words, the parts of Plotly figures, an offer's
price chart, price flags in words, and spreadsheet cells made inert. Pure: plain values in."""
