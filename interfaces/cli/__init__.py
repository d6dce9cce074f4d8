"""`hebbs`, the command line."""

from interfaces.cli.main import main

__all__ = ["main"]
