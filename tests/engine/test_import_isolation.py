"""The engine is pure Python + numpy/scipy: importing it must load neither Django nor ibweb."""

import subprocess
import sys


def test_fabric_engine_imports_without_django():
    code = (
        "import sys, fabric_engine, fabric_engine.scenario, fabric_engine.emulator, fabric_engine.formats.json_format\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'ibweb', 'channels', 'celery'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""
