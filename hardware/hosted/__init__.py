"""Hosted models' token prices and the sourced assumptions of owned servers: their load from the
shipped files, their reads, the filters shared by pages and API, and their pages."""
