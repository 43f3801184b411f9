"""A webhook receiver in its own process, for the outage test: every POST is journaled (one JSON line: path,
idempotency key, body, time) before it is answered, so what reached it survives the process being killed.

``python -m tests.ibweb.notify.receiver_process PORT JOURNAL [--hang N]``: listens on 127.0.0.1:PORT; the first
``N`` requests are journaled and then not answered for 30 s (the sender times out: the message reached the receiver
but the sender does not know it, and sends it again with the same key). Prints ``ready`` once listening.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("port", type=int)
    p.add_argument("journal")
    p.add_argument("--hang", type=int, default=0)
    a = p.parse_args(argv)
    lock = threading.Lock()
    hangs = [a.hang]
    journal = open(a.journal, "a", encoding="utf-8")  # noqa: SIM115 - open for the process's life

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with lock:
                journal.write(json.dumps({"path": self.path, "key": self.headers.get("Idempotency-Key", ""),
                                          "body": json.loads(body or b"null"), "at": time.time()}) + "\n")
                journal.flush()
                hang = hangs[0] > 0
                hangs[0] -= hang
            if hang:
                time.sleep(30)
                return
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    ThreadingHTTPServer.allow_reuse_address = True
    ThreadingHTTPServer.daemon_threads = True
    server = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    print("ready", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
