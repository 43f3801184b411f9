"""Stopping the processes tests start (servers, Prometheus, Alertmanager, rsyslogd, ibsim, ...)."""

from __future__ import annotations

import subprocess

__all__ = ["stop_process"]


def stop_process(proc: subprocess.Popen | None, grace_s: float = 10.0) -> None:
    """SIGTERM ``proc`` if it still runs, then SIGKILL if it has not exited within ``grace_s`` seconds."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(grace_s)
