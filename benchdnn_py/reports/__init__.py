"""Results and reports: results files and their merge, JUnit, the text users read, perf
lines and tables, and comparing two runs (matching, statistics, renderings)."""
