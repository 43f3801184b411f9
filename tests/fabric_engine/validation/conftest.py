"""Shared inputs of the validation tests: the ibsim capture fixtures and device vitals."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric_engine import formats

DATA = Path(__file__).resolve().parents[2] / "data" / "validation"


@pytest.fixture
def ibsim_fabric():
    """The 4-host fat tree ibsim discovered, with leaf01/2 - gpu0002/1 trained to 1x."""
    return formats.read(DATA / "ibsim_trained_down.ibnd")


def vitals_types():
    """``Fan, Psu, Temperature, DeviceVitals``: the device readers' types (fabric_engine.devices.vitals)."""
    from fabric_engine.devices.vitals import DeviceVitals, Fan, Psu, Temperature

    return Fan, Psu, Temperature, DeviceVitals


def device(name: str, guid: int | None = None, *, part="MQM9700-NS2F", firmware="31.2012.1068", serial=None,
           fans=(), psus=(), temps=(), errors=()):
    """A DeviceVitals as the readers build it."""
    _, _, _, DeviceVitals = vitals_types()
    return DeviceVitals(guid=guid, name=name, source=f"{name}.txt:1", part_number=part, serial=serial,
                        psid="MT_0000000838", firmware=firmware, hardware=None, uptime_s=86400, fans=tuple(fans),
                        psus=tuple(psus), temperatures=tuple(temps), errors=tuple(errors))
