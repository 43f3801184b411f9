"""Forms of the fabrics app: a new fabric from a generator's typed parameters, an uploaded file, or a real
fabric watched by a collector; the collector, job source and cabling plan of a real fabric are parts the apps above
declare (:class:`WatchPart`, :func:`watch_parts`)."""

from __future__ import annotations

from django import forms
from django.apps import apps
from django.core.exceptions import ValidationError
from django.http import HttpRequest
from django.utils.module_loading import import_string

from fabric_engine.credit_tick import MAXMIN
from fabric_engine.errors import FabricEngineError
from fabric_engine.routing.options import options_json
from fabric_engine.topology.limits import check_generator_parameters

from .choices import FabricMode, Generator, TopologySource
from .generators import GENERATOR_INFO, Param, parameters, topology_of
from .models import Fabric
from .preview import topology_errors
from .uploads import NOT_A_PATH, guid_list, keep_health, upload_with_health

DEFAULT_BACKGROUND = {"fraction": 0.25, "gbps": 20}
#: The third way to a fabric: a real one, watched by a collector (mode ``telemetry``, no scenario).
WATCH = "telemetry"
SOURCE_CHOICES = [*TopologySource.choices, (WATCH, "A real fabric, watched (telemetry)")]


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


def named(form: forms.Form, name: str) -> bool:
    """Whether a file field came as text (a file name or path, never read: issue 26) instead of a file."""
    return bool(str(form.data.get(form.add_prefix(name), "")).strip())


def field_name(generator: str, param: str) -> str:
    """Form field of a generator parameter: ``fat_tree__hosts``."""
    return f"{generator}__{param}"


class FabricCreateForm(forms.ModelForm):
    """A new fabric from a generated design or an uploaded topology file; validated whole before saving.

    Each generator's parameters are fields of their own (``<generator>__<param>``), typed and
    bounded by :mod:`fabric_engine.topology.limits`; only the chosen generator's are used.
    """

    source = forms.ChoiceField(choices=SOURCE_CHOICES, initial=TopologySource.GENERATOR,
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
        fields = ["name", "slug", "description", "routing_engine", "tick_s", "congestion_model"]
        widgets = {"description": forms.Textarea(attrs={"rows": 2})}

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        self.params = {g: parameters(g) for g in GENERATOR_INFO}
        for g, params in self.params.items():
            for p in params:
                self.fields[field_name(g, p.name)] = param_field(p)
        self.fields["congestion_model"].required = False  # left out: the default (max-min)

    def clean_congestion_model(self) -> str:
        return self.cleaned_data.get("congestion_model") or MAXMIN

    def save(self, commit: bool = True) -> Fabric:
        """Save the fabric; an uploaded ibdiagnet archive's link health becomes its health readings."""
        fabric = super().save(commit)
        if commit:
            keep_health(fabric.pk, getattr(self, "health_rows", None))
        return fabric

    def generator_fields(self, generator: str) -> list:
        """Bound fields of one generator's parameters, in order."""
        return [self[field_name(generator, p.name)] for p in self.params[generator]]

    def clean(self) -> dict:
        data = super().clean()
        chosen = data.get("generator") or Generator.FAT_TREE
        for g, params in self.params.items():  # only the chosen generator's fields count
            if g != chosen or data.get("source") != TopologySource.GENERATOR:
                for p in params:
                    self._errors.pop(field_name(g, p.name), None)
        if data.get("source") == WATCH:
            return self._watched(data)
        if data.get("source") == TopologySource.UPLOAD:
            upload = data.get("topology_file")
            if not upload:
                raise ValidationError({"topology_file": NOT_A_PATH if named(self, "topology_file")
                                       else "choose a file to upload"})
            _, topology, self.health_rows = upload_with_health(upload)
        else:
            topology = self._generated(data)
        field = "topology_file" if data.get("source") == TopologySource.UPLOAD else "generator"
        self._set_mode(data, FabricMode.EMULATED, {"topology": topology, "jobs": [], "background": DEFAULT_BACKGROUND},
                       spec_field=field)
        return data

    def _watched(self, data: dict) -> dict:
        """A telemetry-fed fabric: no scenario (its collector discovers the topology)."""
        self._set_mode(data, FabricMode.TELEMETRY, {})
        return data

    def _set_mode(self, data: dict, mode: str, spec: dict, spec_field: str | None = None) -> None:
        """Give the new fabric its mode, spec and routing and check it: a guid file's error at its field, the
        spec's at ``spec_field``."""
        self.instance.mode, self.instance.spec = mode, spec
        self.instance.routing_options = self._guid_files(data)
        self.instance.routing_engine = data.get("routing_engine") or self.instance.routing_engine
        self.instance.congestion_model = data.get("congestion_model") or self.instance.congestion_model
        try:
            self.instance.clean()
        except ValidationError as exc:
            if "routing_options" in exc.message_dict:
                raise ValidationError({"root_guid_file": exc.message_dict["routing_options"]}) from None
            if "congestion_model" in exc.message_dict:
                raise ValidationError({"congestion_model": exc.message_dict["congestion_model"]}) from None
            if spec_field is None:
                raise
            raise ValidationError({spec_field: exc.message_dict.get("spec", exc.messages)}) from None

    def _guid_files(self, data: dict) -> dict:
        """The uploaded guid files as ``routing_options`` (:mod:`fabric_engine.routing.options`)."""
        lists = {}
        for key, name in (("roots", "root_guid_file"), ("cns", "cn_guid_file"), ("ios", "io_guid_file")):
            upload = data.get(name)
            if upload:
                lists[key] = guid_list(upload, name)
            elif named(self, name):
                raise ValidationError({name: NOT_A_PATH})
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


# ------------------------------------------------------------------ a real fabric: the parts the apps above add
class WatchPart:
    """A part of a real (watched) fabric on the new-fabric page that an app above fabrics adds: the telemetry
    app's collector, the twin's job source and cabling plan.

    An app declares its parts as data, dotted paths in ``watch_parts`` on its ``AppConfig``
    (:func:`watch_parts` finds them in the order of ``INSTALLED_APPS``), so fabrics imports none of them.
    The page shows the part's form under :attr:`name`, which is also the form's prefix.
    """

    name = ""
    form_class: type[forms.Form] = forms.Form
    #: Entries of :meth:`save_for`'s answer that are tokens shown once (``{"key", "url"}`` or None), with their
    #: names in the JSON answer.
    tokens: dict[str, str] = {}

    def form(self, request: HttpRequest) -> forms.Form:
        """The part's form, bound to the request's POST and files if there is one."""
        return self.form_class(request.POST or None, request.FILES or None, prefix=self.name)

    def context(self, request: HttpRequest) -> dict:
        """What the page shows beside the part's fields."""
        return {}

    def allowed(self, request: HttpRequest, fabric_form: forms.Form, form: forms.Form) -> bool:
        """Whether the user may configure what the POST asks of this part; errors at the fields otherwise.

        The parts are asked in order, up to the first that refuses."""
        return True

    def save_for(self, request: HttpRequest, fabric: Fabric, form: forms.Form) -> dict:
        """Save the part of the new ``fabric`` (inside its transaction). Returns what the page that answers shows
        (its :attr:`tokens` also in the JSON answer)."""
        raise NotImplementedError

    def committed(self, fabric: Fabric, form: forms.Form) -> None:
        """Called once the new fabric's transaction committed."""


def watch_parts() -> list[WatchPart]:
    """The parts of a real fabric the installed apps declare (``watch_parts`` on their ``AppConfig``), in order."""
    return [import_string(path)() for config in apps.get_app_configs()  # a handful of apps
            for path in getattr(config, "watch_parts", ())]
