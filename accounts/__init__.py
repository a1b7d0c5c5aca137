"""Users, roles and API tokens: who may do what (docs/api.md, "Authentication and roles")."""
