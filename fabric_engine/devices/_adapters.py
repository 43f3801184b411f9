"""The reader loop shared by ``ibstat`` and ``ibv_devinfo``: adapters, their fields and ports, one capture's lines.

Both tools print an adapter header, its fields, then per port a header and its fields; a capture may hold several
runs, each after a shell prompt that names its host. :func:`scan` walks the lines once: a tool's ``line`` function
reads what its grammar knows into the :class:`Scan` (returning True), everything else is skipped as terminal noise
with a warning or is an error naming the file and line (:class:`~fabric_engine.health._lines.Skipper`). A prompt
names the host of the ports that follow (``<host>/<adapter>``) and closes the open adapter.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import FormatError
from ..health._lines import Skipper, lines_of
from ._text import MAX_FIELD_CHARS, prompt_host

__all__ = ["Scan", "scan", "Field", "PortFields"]

#: A field as read: its value and its line.
Field = tuple[str, int]
#: A port as read: its header's line, its adapter's name, the adapter's fields and its own (``"#"``: its number).
PortFields = tuple[int, str, dict[str, Field], dict[str, Field]]


class Scan:
    """Where a scan is: the open adapter's fields (``adapter``: None outside one), its name, the host the last
    prompt named, and the ports read so far."""

    def __init__(self, source: str, max_ports: int) -> None:
        self.source, self.max_ports = source, max_ports
        self.adapter: dict[str, Field] | None = None
        self.name, self.host = "", None
        self.ports: list[PortFields] = []

    def open(self, adapter: str) -> None:
        """An adapter header: its fields and ports follow."""
        self.name, self.adapter = f"{self.host}/{adapter}" if self.host else adapter, {}

    def port(self, number: str, lineno: int) -> None:
        """A port header of the open adapter (at most ``max_ports`` in a capture)."""
        if len(self.ports) >= self.max_ports:
            raise FormatError(self.source, lineno, f"more than {self.max_ports} ports")
        self.ports.append((lineno, self.name, self.adapter, {"#": (number, lineno)}))

    def in_port(self) -> bool:
        """Whether the last port read is of the open adapter (its fields may follow)."""
        return bool(self.ports) and self.ports[-1][2] is self.adapter

    def port_field(self, key: str, value: str, lineno: int) -> None:
        self.ports[-1][3][key] = (value, lineno)

    def value(self, key: str, value: str, lineno: int) -> str:
        """``value`` stripped, checked against :data:`~._text.MAX_FIELD_CHARS`."""
        value = value.strip()
        if len(value) > MAX_FIELD_CHARS:
            raise FormatError(self.source, lineno, f"{key}: value longer than {MAX_FIELD_CHARS} characters")
        return value


def scan(text: str, source: str, tool: str, warnings: list | None, max_ports: int,
         line: Callable[[Scan, int, str, str], bool], *, indented_inside: bool = False) -> list[PortFields]:
    """The ports of a capture: ``line(scan, lineno, raw line, stripped line)`` reads a line of the tool's grammar
    (True) or leaves it to the skipper (False); ``indented_inside``: an indented line inside an adapter that the
    grammar does not read is an error, not another tool's output."""
    warnings = warnings if warnings is not None else []
    st = Scan(source, max_ports)
    skip = Skipper(source, tool, warnings)
    for lineno, ln in enumerate(lines_of(text, source, warnings), 1):
        s = ln.strip()
        if not s or line(st, lineno, ln, s):
            continue
        before = len(warnings)
        skip.skip(lineno, ln, inside=indented_inside and st.adapter is not None and ln[:1].isspace())
        if len(warnings) > before and warnings[-1]["reason"] == "shell prompt":
            st.host, st.adapter = prompt_host(ln) or st.host, None
    skip.finish()
    return st.ports
