"""A reusable harness around the real InfiniBand simulator ``ibsim`` (ibsim-utils).

One :class:`IbSim` is one simulated subnet: it writes (or takes) a net file,
starts ``ibsim -s NETFILE`` with its own ``IBSIM_SOCKNAME`` so several simulators
and test runs never share a socket, waits for ``Network simulator ready.``, and
runs libibumad programs against it (OpenSM, ``ibnetdiscover``, ``perfquery``,
``ibtracert``, ...) with ``LD_PRELOAD=libumad2sim.so``. ``SIM_HOST`` names the
node (net-file node id, e.g. ``"gpu0001"``) whose port the program is attached to;
without it umad2sim uses the first node of the net file (ibsim README).

Everything it starts is stopped by PID in :meth:`IbSim.stop` (also on context
exit), never by process name.

Example
-------
>>> with IbSim(tmp_path, net_text) as sim:                         # doctest: +SKIP
...     sim.run_opensm(["-o"], cache_dir=tmp_path / "osm", sim_host="gpu0001")
...     out = sim.run(["ibnetdiscover"], sim_host="gpu0001").stdout
...     sim.console("Status")
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import signal
import subprocess
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

__all__ = ["IbSim", "UMAD2SIM", "IbSimError"]

#: The umad2sim wrapper that redirects libibumad to ibsim (Debian package libumad2sim0).
UMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
READY = "Network simulator ready."
PROMPT = "sim> "
# ibsim's built-in table sizes (printed at start-up by ibsim 0.10); raised with -N/-S/-P when a net needs more.
_DEFAULT_NODES, _DEFAULT_SWITCHES, _DEFAULT_PORTS = 2048, 256, 13312
_counter = itertools.count()


class IbSimError(RuntimeError):
    """ibsim did not start, died, or a command run against it failed."""


def _net_sizes(text: str) -> tuple[int, int, int]:
    """Nodes, switches and ports (switch port 0 included) declared by a net file."""
    nodes = switches = ports = 0
    for m in re.finditer(r"^(Switch|Hca|Ca|Rt)\s+(\d+)", text, flags=re.M):
        nodes += 1
        n = int(m.group(2))
        if m.group(1) == "Switch":
            switches += 1
            n += 1
        ports += n
    return nodes, switches, ports


class IbSim:
    """One running ``ibsim`` process and the helpers to talk to it.

    Parameters
    ----------
    workdir : Path
        Private directory for the net file, ibsim's log and OpenSM's files.
    net : str or Path
        Net file text, or the path of an existing net file.
    sim_host : str, optional
        Default ``SIM_HOST`` for :meth:`run` and :meth:`run_opensm`.
    ready_timeout : float
        Seconds to wait for ibsim to report ``Network simulator ready.``.
    """

    def __init__(self, workdir: Path | str, net: str | Path, *, sim_host: str | None = None,
                 ready_timeout: float = 30.0) -> None:
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        if isinstance(net, Path):
            self.net_path = net
        else:
            self.net_path = self.workdir / "fabric.net"
            self.net_path.write_text(net)
        self.sim_host = sim_host
        self.ready_timeout = ready_timeout
        self.sockname = f"ibweb-{os.getpid()}-{next(_counter)}-{uuid.uuid4().hex[:8]}"
        self.log_path = self.workdir / "ibsim.log"
        self.proc: subprocess.Popen | None = None
        self._children: list[subprocess.Popen] = []
        self._log = None

    # ------------------------------------------------------------ lifecycle
    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    @property
    def env(self) -> dict[str, str]:
        """Environment of ibsim and of every client: the private ``IBSIM_SOCKNAME``."""
        return dict(os.environ, IBSIM_SOCKNAME=self.sockname)

    def start(self) -> IbSim:
        """Start ``ibsim -s`` and wait until the network is ready; raises :class:`IbSimError`."""
        if self.proc is not None:
            return self
        nodes, switches, ports = _net_sizes(self.net_path.read_text())
        cmd = ["ibsim", "-s",
               "-N", str(max(_DEFAULT_NODES, nodes + 16)),
               "-S", str(max(_DEFAULT_SWITCHES, switches + 16)),
               "-P", str(max(_DEFAULT_PORTS, 2 * ports + 64)),
               str(self.net_path)]
        self._log = open(self.log_path, "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=self._log, stderr=subprocess.STDOUT,
                                     env=self.env, cwd=self.workdir, text=True, start_new_session=True)
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            text = self.log()
            if READY in text:
                return self
            if self.proc.poll() is not None:
                self.stop()
                raise IbSimError(f"ibsim exited with {self.proc.returncode} while starting:\n{text[-3000:]}")
            time.sleep(0.05)
        text = self.log()
        self.stop()
        raise IbSimError(f"ibsim not ready after {self.ready_timeout} s:\n{text[-3000:]}")

    def stop(self) -> None:
        """Stop every process this harness started (by PID): clients first, then ibsim."""
        for child in self._children:
            _terminate(child)
        self._children.clear()
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
            _terminate(self.proc)
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> IbSim:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -------------------------------------------------------------- helpers
    def log(self) -> str:
        """Everything ibsim printed so far (console answers included)."""
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def client_env(self, sim_host: str | None = None, extra: dict[str, str] | None = None) -> dict[str, str]:
        """Environment for a libibumad program attached to ``sim_host`` under umad2sim."""
        env = self.env
        env["LD_PRELOAD"] = UMAD2SIM
        host = sim_host or self.sim_host
        if host:
            env["SIM_HOST"] = host
        env.update(extra or {})
        return env

    def _check_alive(self) -> None:
        if self.proc is None:
            raise IbSimError("ibsim is not started")
        if self.proc.poll() is not None:
            raise IbSimError(f"ibsim died with {self.proc.returncode}:\n{self.log()[-3000:]}")

    def run(self, cmd: Sequence[str], *, sim_host: str | None = None, env: dict[str, str] | None = None,
            timeout: float = 60.0, check: bool = True, cwd: Path | str | None = None) -> subprocess.CompletedProcess:
        """Run a diagnostic tool (``ibnetdiscover``, ``perfquery``, ...) against this simulator.

        Returns the completed process (text stdout/stderr); with ``check`` a non-zero
        exit raises :class:`IbSimError` carrying stderr and ibsim's log tail.
        """
        deadline = time.monotonic() + timeout
        while True:
            self._check_alive()
            result = subprocess.run(list(cmd), env=self.client_env(sim_host, env), capture_output=True, text=True,
                                    timeout=max(1.0, deadline - time.monotonic()), cwd=cwd or self.workdir)
            if not (self._refused(result) and time.monotonic() < deadline - 1.0):
                break
            # ibsim holds IBSIM_MAX_CLIENTS (10) clients at once: the server under test may have as many tools
            # attached (8 smpquery at a time in its device sweep), and a tool killed by a timeout never detaches
            self.reap_dead_clients()
            time.sleep(0.5)
        if check and result.returncode != 0:
            raise IbSimError(f"{' '.join(cmd)} exited with {result.returncode}:\n{result.stderr[-3000:]}\n"
                             f"--- ibsim log ---\n{self.log()[-2000:]}")
        return result

    def _refused(self, result: subprocess.CompletedProcess) -> bool:
        """Whether ibsim turned the program away at connect because all its client slots were taken."""
        return (result.returncode != 0 and "sim_init: connect failed" in result.stderr
                and "can't open new connection" in self.log())

    def reap_dead_clients(self) -> list[int]:
        """Detach every client whose process is gone (ibsim's ``Attached`` and ``X``); returns their PIDs.

        umad2sim detaches at exit (``atexit``), so a client killed by a signal keeps its slot until ibsim
        fails to write to it.
        """
        dead = []
        for slot, pid in re.findall(r"Client (\d+): pid (\d+)", self.console("Attached")):
            if not _alive(int(pid)):
                self.console(f"X {slot}")
                dead.append(int(pid))
        return dead

    def _opensm_env(self, cache_dir: Path, sim_host: str | None, env: dict[str, str] | None) -> dict[str, str]:
        cache_dir.mkdir(parents=True, exist_ok=True)
        return self.client_env(sim_host, {"OSM_CACHE_DIR": str(cache_dir), "OSM_TMP_DIR": str(cache_dir),
                                          **(env or {})})

    def run_opensm(self, args: Sequence[str] = ("-o",), cache_dir: Path | str | None = None, *,
                   sim_host: str | None = None, env: dict[str, str] | None = None, timeout: float = 120.0,
                   check: bool = True) -> subprocess.CompletedProcess:
        """Run OpenSM to completion (``-o``: sweep once and exit) with its files in ``cache_dir``.

        OpenSM's log goes to ``cache_dir/opensm.log`` unless ``args`` has ``-f``; its
        ``guid2lid`` file (the LIDs it assigned) lands in ``cache_dir``. Pass
        ``-D 0x47`` to also get ``opensm-lfts.dump``.
        """
        cache = Path(cache_dir) if cache_dir is not None else self.workdir / "opensm"
        args = list(args)
        if "-f" not in args and "--log_file" not in args:
            args += ["-f", str(cache / "opensm.log")]
        return self.run(["opensm", *args], sim_host=sim_host, env=self._opensm_env(cache, sim_host, env),
                        timeout=timeout, check=check)

    def start_opensm(self, args: Sequence[str] = (), cache_dir: Path | str | None = None, *,
                     sim_host: str | None = None, env: dict[str, str] | None = None) -> subprocess.Popen:
        """Start a long-running OpenSM in the background; :meth:`stop` ends it by PID."""
        self._check_alive()
        cache = Path(cache_dir) if cache_dir is not None else self.workdir / "opensm"
        args = list(args)
        if "-f" not in args and "--log_file" not in args:
            args += ["-f", str(cache / "opensm.log")]
        child_env = self._opensm_env(cache, sim_host, env)
        with open(cache / "opensm.stdout", "w") as out:
            proc = subprocess.Popen(["opensm", *args], env=child_env, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, cwd=self.workdir, start_new_session=True)
        self._children.append(proc)
        return proc

    def console(self, line: str, timeout: float = 10.0) -> str:
        """Write one command to ibsim's console (stdin) and return what it printed in answer.

        ibsim prints its ``sim> `` prompt on other events too, so the end of the answer
        is found with a sentinel: an unknown command written right after ``line``, which
        ibsim answers with ``command '<sentinel>' unknown - skipped`` once ``line`` is done.
        Example: ``console("Dump \"leaf01\"")``, ``console("Unlink \"leaf01\"[3]")``.
        """
        self._check_alive()
        sentinel = f"zz-ibweb-sync-{next(_counter)}"
        before = len(self.log())
        self.proc.stdin.write(line.rstrip("\n") + "\n" + sentinel + "\n")
        self.proc.stdin.flush()
        marker = f"command '{sentinel}' unknown"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            new = self.log()[before:]
            at = new.find(marker)
            if at >= 0:
                return re.sub(r"(?:sim> )+", "", new[:at]).strip("\n")
            self._check_alive()
            time.sleep(0.02)
        raise IbSimError(f"ibsim console did not answer {line!r} within {timeout} s:\n{self.log()[before:][-2000:]}")


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _terminate(proc: subprocess.Popen, grace: float = 5.0) -> None:
    """SIGTERM ``proc`` by its PID, then SIGKILL if it has not exited within ``grace`` seconds."""
    if proc.poll() is not None:
        return
    try:
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(timeout=grace)
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=grace)
