"""A real VictoriaMetrics single node for tests (Debian's ``victoria-metrics``), on a free port, in a temp dir.

``require_tool`` skips without the binary, and fails under ``CI=true``. The server runs with
``-search.latencyOffset=0s`` (answers include the newest samples) and ``-retentionPeriod`` as given;
:meth:`Victoria.flush` makes what was written searchable (``/internal/force_flush``).
"""

from __future__ import annotations

import shutil
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.conftest import require_tool
from tests.support.processes import stop_process
from tests.support.server import free_port

BINARY = "victoria-metrics"


class Victoria:
    """A started ``victoria-metrics`` process; ``url`` is its HTTP address."""

    def __init__(self, workdir: Path, retention: str = "90d") -> None:
        require_tool(BINARY)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.workdir = workdir
        self.log = (workdir / "victoria.log").open("wb")
        self.proc = subprocess.Popen(
            [shutil.which(BINARY), f"-storageDataPath={workdir / 'data'}", f"-httpListenAddr=127.0.0.1:{self.port}",
             f"-retentionPeriod={retention}", "-search.latencyOffset=0s", "-loggerLevel=ERROR"],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=1) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"victoria-metrics did not start: {(workdir / 'victoria.log').read_text()[-2000:]}")
            time.sleep(0.1)

    def flush(self) -> None:
        """Make every sample received so far searchable."""
        with urllib.request.urlopen(f"{self.url}/internal/force_flush", timeout=10):
            pass

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 10 s (:func:`tests.support.processes.stop_process`); closes the log."""
        stop_process(self.proc)
        self.log.close()
