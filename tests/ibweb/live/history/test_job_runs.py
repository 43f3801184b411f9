"""The job runs kept after a job ended (issue 40): first and last seen, its ports the union over the run, pruned past
the retention, shared by two connections (the leader writes, the web reads)."""

from __future__ import annotations

import numpy as np

from fabric_engine.topology.generate import fat_tree
from ibweb.live.history.job_runs import RUN_GAP_S, JobRuns, catalog_ports
from ibweb.tsdb.series import PORT_ID

F = fat_tree(hosts=8, radix=4)


def ports(*pairs) -> np.ndarray:
    return np.array(list(pairs), dtype=PORT_ID)


def test_a_run_grows_over_its_sightings_and_is_read_by_another_connection(tmp_path):
    writer, reader = JobRuns(tmp_path / "runs.sqlite3"), JobRuns(tmp_path / "runs.sqlite3")
    writer.note(3, 100.0, [("j1", "acme", ports((0xA, 1), (0xB, 2))), ("j2", "globex", ports((0xC, 1)))])
    writer.note(3, 160.0, [("j1", "acme", ports((0xB, 2), (0xD, 4)))])  # j2 not seen again: it ended
    run = reader.get(3, "j1")
    assert (run.job, run.tenant, run.first, run.last) == ("j1", "acme", 100.0, 160.0)
    assert run.ports.tolist() == [(0xA, 1), (0xB, 2), (0xD, 4)]  # the union, sorted
    assert reader.get(3, "j2").last == 100.0 and reader.get(4, "j1") is None and reader.get(3, "nope") is None
    writer.note(3, 130.0 + 90 * 86400, [], keep_s=90 * 86400)  # 90 days later: j2 past the retention, j1 not yet
    assert reader.get(3, "j2") is None and reader.get(3, "j1") is not None
    writer.close()
    reader.close()


def test_the_catalog_s_links_become_their_out_ports():
    d = np.array([4, 1, 4, int(F.reverse(1)), -1, 10**6])  # a repeat and two indices outside the fabric
    got = catalog_ports(F, d)
    expected = sorted({(int(F.guid[F.dl_src[k]]), int(F.dl_src_port[k])) for k in (4, 1, int(F.reverse(1)))})
    assert got.dtype == PORT_ID and got.tolist() == expected


def test_a_reused_name_of_another_tenant_or_after_a_gap_starts_a_new_run(tmp_path):
    runs = JobRuns(tmp_path / "runs.sqlite3")
    runs.note(3, 100.0, [("train", "acme", ports((0xA, 1), (0xB, 2)))])
    runs.note(3, 160.0, [("train", "globex", ports((0xC, 1)))])  # the name reused by another tenant
    run = runs.get(3, "train")
    assert (run.tenant, run.first, run.last, run.ports.tolist()) == ("globex", 160.0, 160.0, [(0xC, 1)])
    runs.note(3, 200.0, [("train", "globex", ports((0xD, 1)))])  # the same run goes on
    assert (runs.get(3, "train").first, runs.get(3, "train").ports.tolist()) == (160.0, [(0xC, 1), (0xD, 1)])
    runs.note(3, 200.0 + RUN_GAP_S + 1, [("train", "globex", ports((0xE, 1)))])  # unseen too long: a new run
    run = runs.get(3, "train")
    assert (run.first, run.ports.tolist()) == (200.0 + RUN_GAP_S + 1, [(0xE, 1)])
    runs.close()


class Counting:
    """A connection whose SELECTs' rows are counted."""

    def __init__(self, db) -> None:
        self.db, self.selected = db, 0

    def execute(self, sql, *args):
        got = self.db.execute(sql, *args)
        if sql.lstrip().upper().startswith("SELECT"):
            rows = got.fetchall()
            self.selected += len(rows)
            return iter(rows)
        return got

    def executemany(self, sql, rows):
        return self.db.executemany(sql, rows)


def test_a_note_reads_the_rows_of_the_jobs_noted_only(tmp_path):
    runs = JobRuns(tmp_path / "runs.sqlite3")
    runs.note(3, 100.0, [(f"old{i}", "acme", ports((i, 1))) for i in range(50)])  # 50 ended runs kept
    runs.note(4, 100.0, [("live", "acme", ports((1, 1)))])  # another fabric's
    runs.note(3, 100.0, [("live", "acme", ports((1, 1)))])
    counting = Counting(runs._db)
    runs._db = counting
    runs.note(3, 160.0, [("live", "acme", ports((2, 1))), ("new", "acme", ports((3, 1)))])
    assert counting.selected == 1  # the one known run noted again; not the 50 ended ones, not fabric 4's
    runs._db = counting.db
    assert runs.get(3, "live").ports.tolist() == [(1, 1), (2, 1)] and runs.get(3, "old7").last == 100.0
    runs.close()
