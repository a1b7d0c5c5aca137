"""The catalog API (docs/api.md, "Catalog")."""
