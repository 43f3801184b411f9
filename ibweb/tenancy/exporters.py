"""Database -> OpenSM files: ``partitions.conf``, ``qos-policy.conf`` and the ``qos_*`` and ``cc_*`` lines of
``opensm.conf``.

Rows become plain :mod:`fabric_engine.formats` objects, which write the text.
The default partition (0x7fff) is managed here: while a fabric has no partitions of
its own every port is a full member (what OpenSM does without a partitions file);
once it has one, channel adapters are limited members, so hosts talk only through
their tenants' partitions, while switches and the SM's port stay full members.
"""

from __future__ import annotations

from pathlib import Path

from django.http import HttpResponse

from fabric_engine.formats import opensm_partitions, opensm_qos
from fabric_engine.formats.opensm_cc import write_cc_conf
from fabric_engine.formats.opensm_partitions import DEFAULT_PKEY, PartitionSpec, PortSpec
from fabric_engine.formats.opensm_qos import QosLevel, QosMatchRule, QosTables

from .models import CongestionControlPolicy, Partition, QosPolicy

__all__ = ["FILES", "default_partition_spec", "partition_specs", "export_partitions_conf", "qos_tables",
           "export_opensm_conf", "export_qos_policy", "export_file", "export_response", "export_all"]

#: The files ibweb writes, by name.
FILES = ("partitions.conf", "qos-policy.conf", "opensm.conf")


def default_partition_spec(fabric) -> PartitionSpec:
    """The managed default partition of ``fabric`` (see the module docstring)."""
    if Partition.objects.filter(fabric=fabric).exists():
        members = [PortSpec("ALL_CAS", "limited"), PortSpec("ALL_SWITCHES", "full"), PortSpec("SELF", "full")]
    else:
        members = [PortSpec("ALL", "full"), PortSpec("SELF", "full")]
    return PartitionSpec(name="Default", pkey=DEFAULT_PKEY, ipoib=True, members=members)


def _spec(p: Partition) -> PartitionSpec:
    members = [PortSpec(k, v) for k, v in p.keyword_members().items()]
    members += [PortSpec(int(m.guid, 16), m.membership) for m in p.members.all()]
    return PartitionSpec(name=p.name, pkey=p.pkey, ipoib=p.ipoib, indx0=p.index0, mtu=p.mtu, rate=p.rate, sl=p.sl,
                         defmember=p.default_membership, members=members)


def partition_specs(fabric) -> list[PartitionSpec]:
    """Every partition of ``fabric`` as plain specs, the default one first."""
    rows = Partition.objects.filter(fabric=fabric).prefetch_related("members").order_by("pkey")
    return [default_partition_spec(fabric), *(_spec(p) for p in rows)]


def export_partitions_conf(fabric) -> str:
    return opensm_partitions.write(partition_specs(fabric),
                                   header_comment=f"partitions.conf of fabric {fabric.slug}, written by ibweb")


def qos_tables(fabric) -> QosTables | None:
    """The fabric's VL tables, ``None`` when it has no QoS policy or QoS is off."""
    q = QosPolicy.objects.filter(fabric=fabric, enabled=True).first()
    if q is None:
        return None
    return QosTables(max_vls=q.max_vls, high_limit=q.high_limit, vlarb_high=opensm_qos.parse_vlarb(q.vlarb_high),
                     vlarb_low=opensm_qos.parse_vlarb(q.vlarb_low), sl2vl=opensm_qos.parse_sl2vl(q.sl2vl))


def export_opensm_conf(fabric) -> str:
    """``qos_*`` lines for ``opensm.conf`` (``qos FALSE`` when QoS is off), then the ``congestion_control`` and
    ``cc_*`` lines when the fabric has a congestion control policy."""
    head = f"# QoS options of fabric {fabric.slug}, written by ibweb\n"
    tables = qos_tables(fabric)
    text = head + ("qos FALSE\n" if tables is None else opensm_qos.write_opensm_conf(tables))
    cc = CongestionControlPolicy.objects.filter(fabric=fabric).first()
    if cc is not None:
        text += (f"\n# Congestion control options of fabric {fabric.slug}, written by ibweb\n"
                 + write_cc_conf(cc.congestion_control()))
    return text


def export_qos_policy(fabric) -> str:
    """``qos-policy.conf``: one QoS level per partition that has an SL (its own or its service class's)."""
    levels, rules = [], []
    rows = Partition.objects.filter(fabric=fabric).select_related("service_class", "tenant__service_class")
    for p in rows.order_by("pkey"):
        cls = p.effective_class()
        sl = p.sl if p.sl is not None else (cls.sl if cls else None)
        if sl is None:
            continue
        name = f"{p.name}-0x{p.pkey:04x}"
        levels.append(QosLevel(name, sl, mtu_limit=p.mtu if p.mtu is not None else (cls.mtu_limit if cls else None),
                               rate_limit=p.rate if p.rate is not None else (cls.rate_limit if cls else None),
                               use=f"partition {p.name}" + (f", class {cls.name}" if cls else "")))
        rules.append(QosMatchRule(name, [p.pkey], use=f"traffic on P_Key 0x{p.pkey:04x}"))
    return f"# qos-policy.conf of fabric {fabric.slug}, written by ibweb\n" + opensm_qos.write_policy(levels, rules)


def export_file(fabric, name: str) -> str:
    """The text of one of :data:`FILES`."""
    writers = {"partitions.conf": export_partitions_conf, "qos-policy.conf": export_qos_policy,
               "opensm.conf": export_opensm_conf}
    if name not in writers:
        raise KeyError(f"unknown OpenSM file {name!r}; known: {', '.join(FILES)}")
    return writers[name](fabric)


def export_response(fabric, name: str) -> HttpResponse:
    """One of :data:`FILES` as a plain-text attachment named ``<fabric slug>-<name>``."""
    response = HttpResponse(export_file(fabric, name), content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{fabric.slug}-{name}"'
    return response


def export_all(fabric, directory: str | Path) -> list[Path]:
    """Write every file of :data:`FILES` into ``directory`` (created if missing); returns the paths."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in FILES:
        path = out / name
        path.write_text(export_file(fabric, name))
        paths.append(path)
    return paths
