"""Forms of the tenancy admin and pages: bulk member add, member changes, import, and a hex P_Key field."""

from __future__ import annotations

import numpy as np
from django import forms
from django.core.exceptions import ValidationError

from fabric_engine.errors import FormatError
from fabric_engine.formats import to_text

from ..fabrics.uploads import MAX_UPLOAD_BYTES
from ..http.inflate import inflated
from .choices import Membership
from .inventory import hosts_matching
from .models import Partition


class PKeyFormField(forms.IntegerField):
    """A P_Key typed as hex (``0x0001``) or decimal; shown as hex."""

    def prepare_value(self, value):
        return f"0x{int(value):04x}" if isinstance(value, int) else value

    def to_python(self, value):
        """Hex or decimal; like OpenSM, the membership bit 0x8000 is dropped (0x8001 -> 0x0001)."""
        if isinstance(value, str) and value.strip():
            try:
                number = int(value.strip(), 0)
            except ValueError:
                raise ValidationError("P_Key must be a number such as 0x0001", code="invalid") from None
            return number & 0x7FFF if 0 <= number <= 0xFFFF else number
        return super().to_python(value)

    def widget_attrs(self, widget):
        attrs = super().widget_attrs(widget)
        attrs.pop("min", None), attrs.pop("max", None)
        return attrs


class PartitionForm(forms.ModelForm):
    pkey = PKeyFormField(label="P_Key", widget=forms.TextInput(attrs={"placeholder": "0x0001"}),
                         help_text="0x0001-0x7ffe; 0x7fff is the default partition, managed by ibweb.")

    class Meta:
        model = Partition
        fields = ["fabric", "tenant", "name", "pkey", "description", "ipoib", "mtu", "rate", "sl", "service_class",
                  "index0", "default_membership", "all_cas", "all_switches", "all_routers", "self_port"]


class BulkMembersForm(forms.Form):
    """Add members from pasted GUIDs (any separator) and/or a host-name pattern."""

    guids = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 8, "cols": 40}),
                            help_text="Port GUIDs, one per line or separated by commas or blanks.")
    host_pattern = forms.CharField(required=False, help_text="Shell pattern over host names, e.g. gpu00[0-3]*; "
                                                             "adds each matching host's first port.")
    membership = forms.ChoiceField(choices=Membership.choices, initial=Membership.FULL)

    def __init__(self, *args, partition: Partition, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.partition = partition

    def clean(self):
        data = super().clean()
        pasted = [g for g in data.get("guids", "").replace(",", " ").split() if g]
        pattern = data.get("host_pattern", "").strip()
        from_pattern = hosts_matching(self.partition.fabric, pattern) if pattern else []
        if pattern and not from_pattern:
            self.add_error("host_pattern", f"no host of fabric {self.partition.fabric.slug} matches {pattern!r}")
        if not pasted and not pattern:
            raise ValidationError("paste GUIDs or give a host-name pattern")
        from .services import member_entries

        merged = list(dict.fromkeys(pasted + from_pattern))
        try:
            data["entries"] = member_entries(merged, data.get("membership"))
        except ValidationError as exc:
            for msg in exc.message_dict.get("guids", exc.messages):
                self.add_error("guids", msg)
        return data


class ImportForm(forms.Form):
    text = forms.CharField(label="partitions.conf", widget=forms.Textarea(attrs={"rows": 16, "cols": 80}),
                           required=False)
    file = forms.FileField(required=False)
    merge = forms.BooleanField(required=False, help_text="Merge members into existing partitions instead of "
                                                         "replacing their member sets.")

    def clean(self):
        data = super().clean()
        upload = data.get("file")
        if upload is not None:
            try:
                name = getattr(upload, "name", "upload")
                data["text"] = to_text(inflated(upload.read(), name, "file", MAX_UPLOAD_BYTES), name)
            except ValidationError as exc:
                self.add_error(None, exc)
            except FormatError as exc:
                self.add_error("file", str(exc))
        if not (data.get("text") or "").strip():
            raise ValidationError("paste a partitions.conf or choose a file")
        return data


class MemberChangeForm(forms.Form):
    """Add or remove members of one partition: pasted GUIDs, a host-name pattern, a leaf's hosts or a job's hosts.

    ``clean`` resolves the choice to port GUIDs of the fabric and the partition's member set after the
    change (``self.after``, ``{guid: membership}``); ``restore`` (an audit entry's member set) replaces it.
    """

    ACTIONS = [("add", "Add"), ("remove", "Remove")]

    partition = forms.ChoiceField(label="Partition")
    action = forms.ChoiceField(choices=ACTIONS, initial="add", widget=forms.RadioSelect, label="Change")
    guids = forms.CharField(required=False, label="Port GUIDs", widget=forms.Textarea(attrs={"rows": 3}),
                            help_text="One per line, or separated by commas or blanks.", max_length=200_000)
    host_pattern = forms.CharField(required=False, label="Host names", max_length=200,
                                   help_text="A shell pattern, e.g. gpu00[0-3]* (each host's first port).")
    leaf = forms.ChoiceField(required=False, label="A leaf's hosts")
    job = forms.ChoiceField(required=False, label="A job's hosts")
    membership = forms.ChoiceField(choices=Membership.choices, initial=Membership.FULL, label="Membership",
                                   required=False,
                                   help_text="Of the ports added (limited members cannot talk to each other).")
    restore = forms.IntegerField(required=False, widget=forms.HiddenInput)
    confirm = forms.CharField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, partitions, fabric, engine_fabric, leaves, jobs, **kwargs) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        self.partitions = {p.pkey_hex: p for p in partitions}
        self.fabric, self.engine_fabric, self.jobs = fabric, engine_fabric, {j["id"]: j for j in jobs}
        self.fields["partition"].choices = [(k, f"{p.name} ({k})") for k, p in self.partitions.items()]
        self.fields["leaf"].choices = [("", "—")] + [(x, x) for x in leaves]
        self.fields["job"].choices = [("", "—")] + [(j, f"{j} ({self.jobs[j]['tenant']})") for j in self.jobs]

    def _host_guids(self, nodes) -> list[str]:
        from fabric_engine.formats.opensm_partitions import format_guid

        f = self.engine_fabric
        return [format_guid(int(g)) for g in f.port_guid[f.port_offset[np.asarray(nodes, dtype=np.int64)]]]

    def clean(self):
        from .inventory import check_guids, normalize_guid
        from .models import AuditEntry

        data = super().clean()
        partition = self.partitions.get(data.get("partition"))
        if partition is None:
            raise ValidationError("choose a partition")
        self.partition = partition
        current = dict(partition.members.values_list("guid", "membership"))
        self.before = current
        if data.get("restore"):
            entry = AuditEntry.objects.filter(pk=data["restore"], object_type="tenancy.Partition",
                                              object_id=str(partition.pk)).first()
            if entry is None or not isinstance(entry.before, dict) or "members" not in entry.before:
                raise ValidationError("that audit entry has no member set to restore")
            self.after = dict(entry.before["members"])
            self.targets = sorted(set(current) ^ set(self.after) | {g for g in current if
                                                                     self.after.get(g, current[g]) != current[g]})
            return data
        try:
            pasted = [normalize_guid(g, "guids") for g in data.get("guids", "").replace(",", " ").split()]
        except ValidationError as exc:
            raise ValidationError({"guids": exc.message_dict["guids"]}) from None
        chosen = list(pasted)
        pattern = (data.get("host_pattern") or "").strip()
        if pattern:
            matched = hosts_matching(self.fabric, pattern)
            if not matched:
                self.add_error("host_pattern", f"no host of fabric {self.fabric.slug} matches {pattern!r}")
            chosen += matched
        f = self.engine_fabric
        if data.get("leaf") and f is not None:
            leaf = f.node(data["leaf"])
            chosen += self._host_guids(f.hosts[f.host_leaf[f.hosts] == leaf])
        if data.get("job"):
            chosen += self._host_guids(self.jobs[data["job"]]["hosts"])
        chosen = list(dict.fromkeys(chosen))
        if self.errors:
            return data
        if not chosen:
            raise ValidationError("give port GUIDs, a host-name pattern, a leaf or a job")
        if pasted:
            try:
                check_guids(self.fabric, pasted)
            except ValidationError as exc:
                raise ValidationError({"guids": exc.message_dict["guids"]}) from None
        if data["action"] == "remove":
            self.targets = [g for g in chosen if g in current]
            self.ignored = len(chosen) - len(self.targets)
            if not self.targets:
                raise ValidationError(f"none of the {len(chosen)} ports is a member of {partition}")
            self.after = {g: m for g, m in current.items() if g not in set(self.targets)}
        else:
            m = data.get("membership") or Membership.FULL
            self.targets = [g for g in chosen if current.get(g) != m]
            self.ignored = len(chosen) - len(self.targets)
            if not self.targets:
                raise ValidationError(f"all {len(chosen)} ports are already {m} members of {partition}")
            self.after = {**current, **{g: m for g in self.targets}}
        return data
