"""Metrics and HTTP instrumentation (filled in by the operations issue)."""
