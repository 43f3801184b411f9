"""The per-process LRUs of decoded record parts and of /metrics port labels: size and eviction order."""

from types import SimpleNamespace

import numpy as np

from ibweb.runtime import metrics, record


def test_memo_keeps_size_entries_and_evicts_the_least_recently_used():
    memo = record._Memo(size=3)
    made = []

    def maker(key):
        def make():
            made.append(key)
            return f"part {key}"
        return make

    for k in "abc":
        memo.get((1, k, "p"), maker(k))
    assert memo.get((1, "a", "p"), maker("a")) == "part a"  # a hit: 'a' is now the most recently used
    memo.get((1, "d", "p"), maker("d"))  # evicts 'b', the least recently used
    assert made == ["a", "b", "c", "d"]
    assert len(memo._items) == 3
    memo.get((1, "a", "p"), maker("a"))
    memo.get((1, "c", "p"), maker("c"))
    assert made == ["a", "b", "c", "d"]  # still held
    memo.get((1, "b", "p"), maker("b"))
    assert made == ["a", "b", "c", "d", "b"]  # was evicted, decoded again


def test_memo_keeps_no_none_and_drops_one_fabric():
    memo = record._Memo(size=4)
    assert memo.get((1, "v", "p"), lambda: None) is None
    assert len(memo._items) == 0
    memo.get((1, "v", "p"), lambda: 1)
    memo.get((2, "v", "p"), lambda: 2)
    memo.drop(1)
    assert list(memo._items) == [(2, "v", "p")]
    memo.clear()
    assert len(memo._items) == 0


def test_record_memo_holds_48_parts():
    assert record._memo.size == 48 and record._memo._items.maxsize == 48


def _fabric(n: int):
    return SimpleNamespace(node_name=np.array([f"n{i}" for i in range(n)]), guid=np.arange(n, dtype=np.uint64),
                           a_node=np.zeros(1), a_port=np.zeros(1), b_node=np.zeros(1), b_port=np.zeros(1))


def test_port_labels_keep_the_8_most_recently_used_versions():
    metrics._labels.clear()
    f = _fabric(2)
    first = metrics.port_labels(1, "v0", f)
    for v in range(1, 8):
        metrics.port_labels(1, f"v{v}", f)
    assert metrics.port_labels(1, "v0", f) is first  # a hit, and now the most recently used
    metrics.port_labels(1, "v8", f)  # evicts v1
    assert len(metrics._labels) == 8
    assert (1, "v1") not in metrics._labels and (1, "v0") in metrics._labels
    assert list(first["nodes"]["guid"]) == ["0x0000000000000000", "0x0000000000000001"]
    metrics._labels.clear()
