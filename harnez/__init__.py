"""Harnez: a coding agent for the terminal, built around an in-process server and a SQLite store."""

__version__ = "0.1.0"
