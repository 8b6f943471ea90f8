"""memq's version: the installed distribution's (the wheel's, or the checkout's editable install,
``scripts/bootstrap``). Here rather than in the root package, which only hands names on, so that
nothing below the root imports it."""

from __future__ import annotations

from importlib import metadata


def version() -> str:
    try:
        return metadata.version("memq")
    except metadata.PackageNotFoundError:  # a tree on sys.path that pip did not install
        return "0.0.0+unknown"
