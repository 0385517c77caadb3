"""tools/plot's modules: the report it reads (report.py) and what its plots share (axes.py)."""
