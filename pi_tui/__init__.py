"""pi-tui: a terminal coding agent that keeps every conversation as a tree on disk."""

__version__ = "0.1.0"
