"""Forms of the fabrics app: a new fabric from a generator's typed parameters, an uploaded file, or a real
fabric watched by a collector (with its job source and cabling plan)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from django import forms
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.core.validators import MaxValueValidator

from fabric_engine.errors import FabricEngineError, FormatError
from fabric_engine.routing.options import options_json
from fabric_engine.topology.limits import check_generator_parameters
from fabric_engine.twin import read_plan
from ibweb.telemetry.choices import CollectorSource
from ibweb.telemetry.models import CollectorConfig, PushToken
from ibweb.twin import plans
from ibweb.twin.choices import JobSourceKind
from ibweb.twin.models import SQUEUE_COMMAND, JobSource, JobToken
from ibweb.twin.plans import MAX_PLAN_BYTES

from .choices import FabricMode, Generator, TopologySource
from .generators import GENERATOR_INFO, Param, parameters, topology_of
from .models import Fabric
from .preview import topology_errors
from .uploads import NOT_A_PATH, guid_list, topology_from_upload

DEFAULT_BACKGROUND = {"fraction": 0.25, "gbps": 20}
#: The third way to a fabric: a real one, watched by a collector (mode ``telemetry``, no scenario).
WATCH = "telemetry"
SOURCE_CHOICES = [*TopologySource.choices, (WATCH, "A real fabric, watched (telemetry)")]
#: Longest command timeout the form takes (a trial sweep waits for up to 33 commands).
MAX_TIMEOUT_S = 300.0
#: Why only some users may configure a collector (form help, errors, docs).
COMMANDS_WARNING = ("The collector runs these commands on the ibweb server (web process for a test sweep, engine "
                    "and Celery workers afterwards), with this environment: only operators who may configure "
                    "collectors in the admin may set them.")


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


def _named(form: forms.Form, name: str) -> bool:
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
            if g != chosen or data.get("source") != TopologySource.GENERATOR:
                for p in params:
                    self._errors.pop(field_name(g, p.name), None)
        if data.get("source") == WATCH:
            return self._watched(data)
        if data.get("source") == TopologySource.UPLOAD:
            upload = data.get("topology_file")
            if not upload:
                raise ValidationError({"topology_file": NOT_A_PATH if _named(self, "topology_file")
                                       else "choose a file to upload"})
            topology = topology_from_upload(upload)
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
        try:
            self.instance.clean()
        except ValidationError as exc:
            if "routing_options" in exc.message_dict:
                raise ValidationError({"root_guid_file": exc.message_dict["routing_options"]}) from None
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
            elif _named(self, name):
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


# ------------------------------------------------------------------ a real fabric: collector, job source, plan
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class CommandField(forms.CharField):
    """A command (or prefix) typed as text and split as a POSIX shell would (``shlex``); a list of strings (JSON)
    is taken as it is. Shown back joined and quoted."""

    def to_python(self, value) -> list[str]:
        if isinstance(value, list | tuple):
            if not all(isinstance(w, str) for w in value):
                raise ValidationError("a list of strings")
            return list(value)
        text = super().to_python(value)
        try:
            words = shlex.split(text)
        except ValueError as exc:
            raise ValidationError(f"cannot split {text!r} as a shell would: {exc}") from None
        if any("\0" in w for w in words):
            raise ValidationError("a NUL character cannot be passed to a command")
        return words

    def prepare_value(self, value) -> str:
        return shlex.join(value) if isinstance(value, list | tuple) else value


def environment_lines(text: str) -> dict[str, str]:
    """``NAME=value`` lines as a dict; blank lines and ``#`` comments skipped; raises ``ValidationError`` naming
    the line. Names are shell identifiers; spaces around ``=`` are dropped; the value is the rest of the line.

    >>> environment_lines("SIM_HOST=gpu0001\\n# ibsim\\nIBSIM_SOCKNAME = lab")
    {'SIM_HOST': 'gpu0001', 'IBSIM_SOCKNAME': 'lab'}
    """
    env: dict[str, str] = {}
    for no, line in enumerate(text.splitlines(), 1):  # a few lines typed into the form
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, sep, value = line.partition("=")
        name = name.strip()
        if not sep:
            raise ValidationError(f"line {no}: {line.strip()[:60]!r} is not NAME=value")
        if not _VARIABLE.match(name):
            raise ValidationError(f"line {no}: {name[:60]!r} is not a variable name (letters, digits and _, not "
                                  f"starting with a digit)")
        if name in env:
            raise ValidationError(f"line {no}: {name} is set twice")
        if "\0" in value:
            raise ValidationError(f"line {no}: a NUL character cannot be passed to a command")
        env[name] = value.strip()
    return env


class EnvironmentField(forms.CharField):
    """Environment variables as ``NAME=value`` lines (:func:`environment_lines`), or a JSON object of strings;
    stored as the dict, shown back as lines."""

    widget = forms.Textarea(attrs={"rows": 3, "spellcheck": "false"})

    def to_python(self, value) -> dict[str, str]:
        if isinstance(value, dict):
            bad = [k for k, v in value.items() if not isinstance(k, str) or not _VARIABLE.match(k)
                   or not isinstance(v, str)]
            if bad:
                raise ValidationError(f"{str(bad[0])[:60]!r}: names must be variable names and values strings")
            return dict(value)
        return environment_lines(super().to_python(value))

    def prepare_value(self, value) -> str:
        return "\n".join(f"{k}={v}" for k, v in value.items()) if isinstance(value, dict) else value


def _absolute(path: str, what: str) -> str:
    if path and not Path(path).is_absolute():
        raise ValidationError(f"an absolute path ({what})")
    return path


class CollectorForm(forms.ModelForm):
    """How a real fabric is read: commands (prefix, environment), a drop directory or the push API; where
    OpenSM's LFT dump is; how often. Also the body of ``POST /api/telemetry/trial-sweep/`` (without prefix)."""

    command_prefix = CommandField(
        required=False, label="Command prefix",
        help_text="Put before iblinkinfo and perfquery, split as a shell would: e.g. sudo, or ssh mgmt01 (key-based "
                  "login from the ibweb server). Empty: run them on the ibweb server itself.")
    environment = EnvironmentField(
        required=False, label="Environment",
        help_text="NAME=value lines added to the commands' environment, e.g. for ibsim: "
                  "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so, SIM_HOST=gpu0001, "
                  "IBSIM_SOCKNAME=... " + COMMANDS_WARNING)

    class Meta:
        model = CollectorConfig
        fields = ["source", "command_prefix", "environment", "drop_dir", "lfts_path", "interval_s", "timeout_s"]
        widgets = {"source": forms.RadioSelect}
        labels = {"source": "The tools are reached by", "drop_dir": "Drop directory", "lfts_path": "LFT dump",
                  "interval_s": "Sweep interval (s)", "timeout_s": "Command timeout (s)"}
        help_texts = {
            "drop_dir": "An absolute path on the ibweb server where an external collector writes iblinkinfo.txt and "
                        "perfquery*.txt (and optionally opensm-lfts.dump).",
            "lfts_path": "Optional: the absolute path of OpenSM's opensm-lfts.dump (opensm -D 0x47 writes it into "
                         "its --dump_files_dir, /var/log by default) or ibroute output, as the engine process sees "
                         "it. Empty: opensm-lfts.dump in the drop directory, if any; else the routing is computed "
                         "with the routing engine above.",
            "interval_s": "Seconds between sweeps (at least 0.5).",
            "timeout_s": "Per command; a command still running then is killed and its switch's links go stale.",
        }

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        self.fields["source"].choices = CollectorSource.choices  # no empty choice: a radio list
        for name in ("interval_s", "timeout_s"):  # empty: the collector's default
            self.fields[name].required = False
        timeout = self.fields["timeout_s"]
        timeout.validators.append(MaxValueValidator(MAX_TIMEOUT_S))
        timeout.widget.attrs["max"] = MAX_TIMEOUT_S

    def _or_default(self, name: str) -> float:
        value = self.cleaned_data.get(name)
        return CollectorConfig._meta.get_field(name).default if value is None else value

    def clean_interval_s(self) -> float:
        return self._or_default("interval_s")

    def clean_timeout_s(self) -> float:
        return self._or_default("timeout_s")

    def clean_drop_dir(self) -> str:
        return _absolute(self.cleaned_data.get("drop_dir", "").strip(), "the collector reads it on the ibweb server")

    def clean_lfts_path(self) -> str:
        return _absolute(self.cleaned_data.get("lfts_path", "").strip(), "the engine process reads it")

    def clean(self) -> dict:
        data = super().clean()
        source = data.get("source")
        # what the chosen way of reaching the tools does not use is neither checked nor kept
        if source != CollectorSource.COMMANDS:
            data["command_prefix"], data["environment"] = [], {}
            self._errors.pop("command_prefix", None)
            self._errors.pop("environment", None)
        if source != CollectorSource.DIRECTORY:
            data["drop_dir"] = ""
            self._errors.pop("drop_dir", None)
        return data

    def save_for(self, fabric: Fabric) -> tuple[CollectorConfig, str | None]:
        """Save the collector of ``fabric``; a push collector gets a push token: returns it with its key (shown
        once; only its digest is stored)."""
        config = self.save(commit=False)
        config.fabric = fabric
        default_stale = CollectorConfig._meta.get_field("stale_after_s").default
        config.stale_after_s = max(default_stale, 3 * config.interval_s)
        config.save()
        if config.source != CollectorSource.PUSH:
            return config, None
        _, key = PushToken.issue(config, "created with the fabric")
        return config, key


class TwinForm(forms.Form):
    """Optional: where the fabric's jobs come from (a :class:`JobSource`) and its cabling plan (a file)."""

    job_source = forms.ChoiceField(
        choices=[("", "None for now"), *JobSourceKind.choices], required=False, widget=forms.RadioSelect,
        label="Jobs from", help_text="The digital twin compares the traffic of running jobs with what their "
                                     "collectives should drive.")
    job_command = CommandField(required=False, initial=list(SQUEUE_COMMAND), label="Scheduler command",
                               help_text="Runs through the collector's command prefix and environment; must print "
                                         "squeue --json (Slurm 23.02 or later).")
    job_drop_dir = forms.CharField(required=False, max_length=500, label="Job drop directory",
                                   help_text="An absolute path holding *.json files of squeue --json or "
                                             "scontrol show job --json output.")
    plan_file = forms.FileField(
        required=False, label="Cabling plan",
        help_text="Optional: CSV node,port,remote node,remote port[,speed,width] (e.g. leaf01,17,spine03,1,NDR,4x), "
                  "or the design as ibnetdiscover output, an ibsim net file or ibweb JSON. Compared with every "
                  "discovery: missing, miswired, extra cables.")

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        self.plan: tuple[str, bytes] | None = None

    def clean_plan_file(self) -> UploadedFile | None:
        upload = self.cleaned_data.get("plan_file")
        if not upload:
            if _named(self, "plan_file"):
                raise ValidationError(NOT_A_PATH)
            return upload
        if upload.size > MAX_PLAN_BYTES:
            raise ValidationError(f"{upload.name}: {upload.size} bytes, more than the limit of {MAX_PLAN_BYTES}")
        data = upload.read()
        try:
            read_plan(data, upload.name)
        except FormatError as exc:
            raise ValidationError(str(exc)) from None
        self.plan = (upload.name, data)
        return upload

    def clean(self) -> dict:
        data = super().clean()
        kind = data.get("job_source")
        if kind != JobSourceKind.SLURM:  # fields of the other kinds are neither checked nor kept
            self._errors.pop("job_command", None)
        if kind != JobSourceKind.DIRECTORY:
            self._errors.pop("job_drop_dir", None)
        if kind:
            source = self.unsaved_source(None)
            try:
                source.clean()
            except ValidationError as exc:
                named = {"command": "job_command", "drop_dir": "job_drop_dir"}
                for field, messages in exc.message_dict.items():
                    self.add_error(named.get(field, "job_source"), messages)
        return data

    def unsaved_source(self, fabric: Fabric | None) -> JobSource:
        """The unsaved job source the form describes."""
        data = self.cleaned_data
        kind = data["job_source"]
        command = data.get("job_command") or list(SQUEUE_COMMAND)
        return JobSource(fabric=fabric, kind=kind, command=command,
                         drop_dir=data.get("job_drop_dir", "").strip() if kind == JobSourceKind.DIRECTORY else "")

    def save_for(self, fabric: Fabric, user) -> str | None:
        """Save the job source and plan of ``fabric``; a push job source gets a job token: returns its key."""
        if self.plan is not None:
            plans.upload(fabric, *self.plan, user)
        if not self.cleaned_data.get("job_source"):
            return None
        source = self.unsaved_source(fabric)
        source.save()
        if source.kind != JobSourceKind.PUSH:
            return None
        _, key = JobToken.issue(source, "created with the fabric")
        return key
