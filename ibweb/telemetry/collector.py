"""Run the infiniband-diags commands of a sweep, or read their outputs from a drop directory.

Commands run as subprocesses with a timeout, the configured prefix (``sudo``,
``ssh host``) and extra environment (for ibsim: ``LD_PRELOAD`` of umad2sim and
``SIM_HOST``). Each runs in its own session; one that overruns its timeout is
killed with its whole process group (only what this module started) and
reported as a failure, so the ports it should have read become stale.

A drop directory holds the same outputs, written by an external collector:
``iblinkinfo.txt`` and any number of ``perfquery*.txt`` files; a file's
modification time is the time its counters were read.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CollectorError", "CommandRunner", "Output", "read_drop_dir", "SwitchTarget", "perfquery_commands",
           "ext_speeds_command", "rcvcc_commands"]


class CollectorError(RuntimeError):
    """A command failed, timed out, or a drop directory lacks a file."""


@dataclass(frozen=True)
class Output:
    """One command's standard output, when it finished, and what produced it."""

    text: str
    t: float
    source: str


@dataclass(frozen=True)
class SwitchTarget:
    """A switch to read: its LID and the ports with a cable (JSON: ``[lid, [ports]]``)."""

    lid: int
    ports: tuple[int, ...]

    def as_json(self) -> list:
        return [self.lid, list(self.ports)]

    @classmethod
    def from_json(cls, value: Sequence) -> SwitchTarget:
        return cls(int(value[0]), tuple(int(p) for p in value[1]))


class CommandRunner:
    """Runs diagnostic commands with a prefix, extra environment and a timeout.

    Parameters
    ----------
    prefix : sequence of str
        Words put before every command (``["sudo"]``, ``["ssh", "mgmt01"]``).
    environment : mapping
        Added to this process's environment for the commands.
    timeout_s : float
        Seconds a command may run before it (and its process group) is killed.
    """

    def __init__(self, prefix: Sequence[str] = (), environment: Mapping[str, str] | None = None,
                 timeout_s: float = 10.0) -> None:
        self.prefix = list(prefix)
        self.environment = dict(environment or {})
        self.timeout_s = float(timeout_s)

    def run(self, args: Sequence[str]) -> Output:
        """Run ``prefix + args``; returns its output or raises :class:`CollectorError`."""
        cmd = [*self.prefix, *map(str, args)]
        shown = " ".join(cmd)
        env = {**os.environ, **self.environment}
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                    env=env, text=True, start_new_session=True)
        except OSError as exc:
            raise CollectorError(f"{shown}: {exc}") from exc
        try:
            out, err = proc.communicate(timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            raise CollectorError(f"{shown}: no answer within {self.timeout_s:g} s (killed)") from None
        if proc.returncode != 0:
            raise CollectorError(f"{shown}: exit {proc.returncode}: {err.strip()[-500:]}")
        return Output(out, time.time(), shown)


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the process group of ``proc`` (its own session, started by us) and reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()


def perfquery_commands(target: SwitchTarget) -> list[list[str]]:
    """The two reads of a switch: basic counters (errors, PortXmitWait) and extended (64-bit data)."""
    ports = ",".join(str(p) for p in target.ports)
    return [["perfquery", "-l", str(target.lid), ports], ["perfquery", "-x", "-l", str(target.lid), ports]]


def ext_speeds_command(target: SwitchTarget) -> list[str]:
    """The link health read of a switch: ``perfquery -T`` (PortExtendedSpeedsCounters) of its cabled ports."""
    return ["perfquery", "-T", "-l", str(target.lid), ",".join(str(p) for p in target.ports)]


def rcvcc_commands(target: SwitchTarget) -> list[list[str]]:
    """The congestion control read of a switch (issue 41): ``perfquery --rcvcc LID PORT`` (PortRcvConCtrl: FECN and
    BECN packets received) of each cabled port. One command per port: perfquery reads these attributes of the first
    port it is given only (``main`` of rdma-core's ``infiniband-diags/perfquery.c`` queries ``info.port`` and is
    done; ``-l`` loops over port counters alone)."""
    return [["perfquery", "--rcvcc", str(target.lid), str(p)] for p in target.ports]


def read_drop_dir(path: str | Path) -> tuple[Output, list[Output]]:
    """The ``iblinkinfo.txt`` and ``perfquery*.txt`` outputs an external collector left in ``path``; a path that
    is no directory (not there, a file, not readable by this process) is a :class:`CollectorError` saying so."""
    root = Path(path)
    if not root.is_dir():
        raise CollectorError(f"{root}: {'not a directory' if root.exists() else 'no such directory'}")
    if not os.access(root, os.R_OK | os.X_OK):
        raise CollectorError(f"{root}: not readable by ibweb's user")
    linkinfo = root / "iblinkinfo.txt"
    if not linkinfo.is_file():
        raise CollectorError(f"{linkinfo}: missing")
    counters = sorted(root.glob("perfquery*.txt"))
    if not counters:
        raise CollectorError(f"{root}: no perfquery*.txt files")

    def read(p: Path) -> Output:
        return Output(p.read_text(errors="replace"), p.stat().st_mtime, str(p))

    return read(linkinfo), [read(p) for p in counters]
