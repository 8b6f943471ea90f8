"""The functional core of memq: pure steps over plain values, plus adapters behind ports."""
