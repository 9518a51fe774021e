"""Command-line entry points: `python -m app.cli.token` mints a JWT, `python -m app.cli.writer` runs the
long-term writer as its own process. They build through the composition root (`app.composition`, `app.settings`).
"""
