"""Forms of the fabrics app: a new fabric from a generator's typed parameters or an uploaded file."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from fabric_engine.errors import FabricEngineError
from fabric_engine.routing.options import options_json
from fabric_engine.topology.limits import check_generator_parameters

from .choices import FabricMode, Generator, TopologySource
from .generators import GENERATOR_INFO, Param, parameters, topology_of
from .models import Fabric
from .preview import topology_errors
from .uploads import guid_list, topology_from_upload

DEFAULT_BACKGROUND = {"fraction": 0.25, "gbps": 20}


def param_field(p: Param) -> forms.Field:
    """The form field of one generator parameter: typed, bounded, with its default and help."""
    valid = f"Valid: {_valid(p)}." if p.help else f"Valid: {_valid(p)} ({p.why})."
    common = {"required": False, "label": p.label, "initial": p.default, "help_text": " ".join(
        t for t in (p.help, valid) if t)}
    if p.choices is not None:
        coerce = {"int": int, "float": float}.get(p.kind, str)
        return forms.TypedChoiceField(choices=[(c, str(c)) for c in p.choices], coerce=coerce, empty_value=None,
                                      **common)
    if p.kind == "int":
        return forms.IntegerField(min_value=p.min, max_value=p.max, **common)
    if p.kind == "float":
        return forms.FloatField(min_value=p.min, max_value=p.max, **common)
    return forms.CharField(max_length=int(p.max) if p.max else None, **common)


def _valid(p: Param) -> str:
    if p.choices is not None:
        return ", ".join(map(str, p.choices))
    if p.kind == "str":
        return f"up to {p.max:g} characters" if p.max else "text"
    lo = f"{p.min:,g}" if p.min is not None else "…"
    hi = f"{p.max:,g}" if p.max is not None else "…"
    return f"{lo} to {hi}"


def field_name(generator: str, param: str) -> str:
    """Form field of a generator parameter: ``fat_tree__hosts``."""
    return f"{generator}__{param}"


class FabricCreateForm(forms.ModelForm):
    """A new fabric from a generated design or an uploaded topology file; validated whole before saving.

    Each generator's parameters are fields of their own (``<generator>__<param>``), typed and
    bounded by :mod:`fabric_engine.topology.limits`; only the chosen generator's are used.
    """

    source = forms.ChoiceField(choices=TopologySource.choices, initial=TopologySource.GENERATOR,
                               widget=forms.RadioSelect, label="Topology from")
    generator = forms.ChoiceField(choices=Generator.choices, required=False, initial=Generator.FAT_TREE,
                                  widget=forms.RadioSelect)
    topology_file = forms.FileField(required=False, label="Topology file",
                                    help_text="ibnetdiscover output (any dialect, -p too), an ibdiagnet archive or "
                                              "file, an ibsim net file or ibweb JSON (gzip or not), up to 64 MiB.")

    root_guid_file = forms.FileField(required=False, label="Root GUID file",
                                     help_text="updn, ftree: the root switches' node GUIDs, one per line "
                                               "(OpenSM's --root_guid_file).")
    cn_guid_file = forms.FileField(required=False, label="Compute node GUID file",
                                   help_text="ftree: the compute nodes' port GUIDs (OpenSM's --cn_guid_file); "
                                             "needed with SHARP Aggregation Nodes.")
    io_guid_file = forms.FileField(required=False, label="I/O node GUID file",
                                   help_text="ftree: the I/O nodes' port GUIDs (OpenSM's --io_guid_file).")

    class Meta:
        model = Fabric
        fields = ["name", "slug", "description", "routing_engine", "tick_s"]
        widgets = {"description": forms.Textarea(attrs={"rows": 2})}

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        self.params = {g: parameters(g) for g in GENERATOR_INFO}
        for g, params in self.params.items():
            for p in params:
                self.fields[field_name(g, p.name)] = param_field(p)

    def generator_fields(self, generator: str) -> list:
        """Bound fields of one generator's parameters, in order."""
        return [self[field_name(generator, p.name)] for p in self.params[generator]]

    def clean(self) -> dict:
        data = super().clean()
        chosen = data.get("generator") or Generator.FAT_TREE
        for g, params in self.params.items():  # only the chosen generator's fields count
            if g != chosen or data.get("source") == TopologySource.UPLOAD:
                for p in params:
                    self._errors.pop(field_name(g, p.name), None)
        if data.get("source") == TopologySource.UPLOAD:
            upload = data.get("topology_file")
            if not upload:
                raise ValidationError({"topology_file": "choose a file to upload"})
            topology = topology_from_upload(upload)
        else:
            topology = self._generated(data)
        self.instance.mode = FabricMode.EMULATED
        self.instance.spec = {"topology": topology, "jobs": [], "background": DEFAULT_BACKGROUND}
        self.instance.routing_options = self._guid_files(data)
        self.instance.routing_engine = data.get("routing_engine") or self.instance.routing_engine
        try:
            self.instance.clean()
        except ValidationError as exc:
            if "routing_options" in exc.message_dict:
                raise ValidationError({"root_guid_file": exc.message_dict["routing_options"]}) from None
            messages = exc.message_dict.get("spec", exc.messages)
            if data.get("source") == TopologySource.UPLOAD:
                raise ValidationError({"topology_file": messages}) from None
            raise ValidationError({"generator": messages}) from None
        return data

    def _guid_files(self, data: dict) -> dict:
        """The uploaded guid files as ``routing_options`` (:mod:`fabric_engine.routing.options`)."""
        lists = {}
        for key, name in (("roots", "root_guid_file"), ("cns", "cn_guid_file"), ("ios", "io_guid_file")):
            upload = data.get(name)
            if upload:
                lists[key] = guid_list(upload, name)
        return options_json(**lists)

    def _generated(self, data: dict) -> dict:
        generator = data.get("generator") or Generator.FAT_TREE
        values = {}
        for p in self.params[generator]:
            name = field_name(generator, p.name)
            value = data.get(name)
            if value in (None, ""):
                if p.required:
                    self.add_error(name, f"{p.label} is required")
                continue
            if value != p.default or p.required:  # the spec names what differs from the generator's defaults
                values[p.name] = value
        if self.errors:
            raise ValidationError("fix the parameters marked below")
        try:
            check_generator_parameters(generator, values)
        except FabricEngineError as exc:
            for param, message in topology_errors(str(exc)).items():
                self.add_error(field_name(generator, param) if param in values else "generator", message)
            raise ValidationError("fix the parameters marked below") from None
        return topology_of(generator, values)

    def _post_clean(self) -> None:
        # clean() already validated the scenario and mapped its errors to this form's fields; the model's
        # own check would report them again under "spec", which the form has no field for.
        if not self._errors:
            super()._post_clean()
