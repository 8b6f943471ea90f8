"""Adapters: the ports of :mod:`pipeline.ports` implemented against real services."""
