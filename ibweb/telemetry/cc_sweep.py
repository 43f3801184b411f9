"""The collector's congestion control read (issue 41): ``perfquery --rcvcc`` of every cabled switch port each
sweep, when the collector's ``cc_counters`` is on, into the fabric's congestion readings (:mod:`.cc_readings`).

perfquery reads PortRcvConCtrl of one port per run (:func:`.collector.rcvcc_commands`), so a switch costs one
command per cabled port. A switch that cannot answer (ibsim: ``cannot query PortRcvConCtrl``, exit 255; a switch
without congestion control counters) is one warning of the sweep, and its other ports are not asked: never a
failure, the counters of the sweep stand. The outputs cross the shard task's boundary as text
(``[text, t, source]``, a few hundred bytes per port) and are read at the merge
(:func:`fabric_engine.telemetry.perfquery_cc.parse_perfquery_cc_many`). A drop directory's ``perfquery*.txt`` with
congestion control blocks are read the same way, whatever ``cc_counters`` says. A push's counters (``PortPktRcvFECN``,
``PortPktRcvBECN`` of its samples, read and checked by the push API) join the merge read already (:func:`pushed_cc`).
"""

from __future__ import annotations

from fabric_engine.errors import FabricEngineError
from fabric_engine.telemetry.perfquery_cc import CCSamples, has_cc_blocks, parse_perfquery_cc

from . import cc_readings
from .collector import CollectorError, CommandRunner, Output, SwitchTarget, rcvcc_commands

__all__ = ["read_rcvcc", "cc_outputs", "pushed_cc", "store_cc"]


def read_rcvcc(run: CommandRunner, target: SwitchTarget, warnings: list[dict]) -> list[list]:
    """The ``perfquery --rcvcc`` outputs (``[text, t, source]``) of ``target``'s cabled ports; at the first port the
    switch cannot answer, a warning and none of its later ports."""
    outputs = []
    for cmd in rcvcc_commands(target):
        try:
            out = run.run(cmd)
        except CollectorError as exc:
            warnings.append({"line": None, "text": f"perfquery --rcvcc lid {target.lid}", "reason": str(exc)[:300]})
            break
        outputs.append([out.text, out.t, out.source])
    return outputs


def cc_outputs(outputs: list[Output]) -> list[list]:
    """The outputs (a drop directory's files) that hold congestion control blocks, as ``[text, t, source]``."""
    return [[o.text, o.t, o.source] for o in outputs if has_cc_blocks(o.text)]


def pushed_cc(samples: CCSamples) -> list:
    """A push's congestion control counters, read already, as an output of a shard result's ``cc`` for
    :func:`store_cc` (``[samples, t, "samples"]``). In-process only: a push is merged where it is received, so this
    never crosses a task boundary as the outputs' text does."""
    return [samples, float(samples.t.max(initial=0.0)), "samples"]


def store_cc(fabric_id: int, outputs: list, warnings: list[dict]) -> int:
    """Read ``outputs`` (``[text, t, source]``, or a push's :func:`pushed_cc`) and make them the fabric's newest
    congestion reading; an output the reader refuses is a warning. None read is a reading too: no port has rates
    then. The number of ports kept."""
    parts = []
    for text, t, source in outputs:
        if isinstance(text, CCSamples):  # a push's, read and checked by the push API
            parts.append(text)
            continue
        try:
            parts.append(parse_perfquery_cc(str(text), float(t), str(source), warnings))
        except FabricEngineError as exc:
            warnings.append({"line": None, "text": str(source)[:120], "reason": str(exc)[:300]})
    samples = CCSamples.concat(parts).merged()
    return cc_readings.put(fabric_id, samples)
