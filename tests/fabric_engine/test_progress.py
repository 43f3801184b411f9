"""Progress bars of long CLI operations."""

import io

from fabric_engine.progress import Progress


def test_log_mode_prints_each_tenth_once_with_the_stage():
    out = io.StringIO()
    bar = Progress("job", stream=out, tty=False)
    bar.stage("step one")
    for i in range(101):
        bar(i / 100)
    bar.done()
    lines = out.getvalue().splitlines()
    assert [line.split(":")[1].split("%")[0].strip() for line in lines[:-1]] == [str(p) for p in range(0, 101, 10)]
    assert lines[1].endswith("step one") and lines[-1].startswith("job: done in")


def test_terminal_mode_redraws_one_line():
    out = io.StringIO()
    bar = Progress("job", stream=out, tty=True)
    bar(0.5)
    assert out.getvalue().startswith("\rjob: [" + "#" * 15 + "-" * 15 + "]") and "\n" not in out.getvalue()


def test_disabled_prints_nothing():
    out = io.StringIO()
    bar = Progress("job", stream=out, enabled=False)
    bar(0.3)
    bar.done()
    assert out.getvalue() == ""
