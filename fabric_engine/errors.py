"""Exception hierarchy of the fabric engine.

Every error the engine raises on bad input derives from :class:`FabricEngineError`,
so callers (the web app, the CLI) can catch one class and show its message.
"""

from __future__ import annotations

__all__ = ["FabricEngineError", "FormatError", "TopologyError", "RoutingError", "SolverError"]


class FabricEngineError(Exception):
    """Base class of every error raised by :mod:`fabric_engine`."""


class TopologyError(FabricEngineError):
    """A fabric that violates the physical rules (port used twice, radix exceeded, ...)."""


class FormatError(FabricEngineError):
    """A file that cannot be read; names the source and the line.

    Parameters
    ----------
    source : str
        File name or other description of the input.
    line : int or None
        1-based line number of the offending line, when there is one.
    message : str
        What is wrong, in words an operator understands.
    """

    def __init__(self, source: str, line: int | None, message: str) -> None:
        self.source = source
        self.line = line
        self.message = message
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {message}")


class RoutingError(FabricEngineError):
    """A routing that cannot be computed or is inconsistent with its fabric."""


class SolverError(FabricEngineError):
    """Inconsistent input to the flow solver (shapes, negative capacities)."""
