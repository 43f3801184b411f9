"""The emulator numbers a tick with the sequence number it is given; it keeps no sequence of its own (issue 24)."""

import numpy as np

from fabric_engine.emulator import Background, Emulator
from fabric_engine.routing import route
from fabric_engine.topology.generate import fat_tree


def emulator() -> Emulator:
    """Background traffic only: a tick's rates are its draw, keyed by the seed and the tick's number."""
    return Emulator(route(fat_tree(hosts=16, radix=8)), [], Background(fraction=0.5), seed=3)


def test_a_given_seq_numbers_the_state_and_keys_the_background_draw():
    led, took_over = emulator(), emulator()
    for _ in range(4):
        led.step(now=0.0, seq=None)
    fifth = led.step(now=0.0)
    given = took_over.step(now=0.0, seq=5)  # a new leader's first tick continues the sequence
    assert fifth.seq == given.seq == 5
    assert np.array_equal(fifth.rate_gbps, given.rate_gbps)  # every process draws tick 5 alike
    assert not np.array_equal(took_over.step(now=1.0, seq=6).rate_gbps, given.rate_gbps)


def test_the_caller_owns_the_numbers():
    em = emulator()
    assert [em.step(now=0.0, seq=s).seq for s in (100, 101, 7)] == [100, 101, 7]
    assert [em.step(now=0.0).seq for _ in range(2)] == [4, 5]  # standalone: the count of ticks stepped
