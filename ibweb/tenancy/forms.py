"""Forms of the tenancy admin and pages: bulk member add, import, and a hex P_Key field."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

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
                data["text"] = upload.read().decode("utf-8")
            except UnicodeDecodeError:
                self.add_error("file", "the file is not UTF-8 text")
        if not (data.get("text") or "").strip():
            raise ValidationError("paste a partitions.conf or choose a file")
        return data
