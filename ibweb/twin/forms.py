"""Forms of the twin: the plan upload (the file is read completely before anything is stored), and the job
source and cabling plan of a real fabric on the new-fabric page (:class:`TwinForm`, :class:`TwinPart`)."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.http import HttpRequest
from django.urls import reverse

from fabric_engine.errors import FormatError
from fabric_engine.twin import read_plan
from ibweb.fabrics.forms import WatchPart, named
from ibweb.fabrics.models import Fabric
from ibweb.fabrics.uploads import NOT_A_PATH
from ibweb.telemetry.forms import CommandField

from . import plans, report_cache
from .choices import JobSourceKind
from .models import SQUEUE_COMMAND, JobSource, JobToken
from .plans import MAX_PLAN_BYTES

#: What the twin's parts need beyond configuring a collector (the admin and the plan page ask the same).
TWIN_PERMISSIONS = {"job_source": "twin.add_jobsource", "plan_file": "twin.change_cablingplan"}


class PlanUploadForm(forms.Form):
    file = forms.FileField(
        label="Cabling plan",
        help_text="CSV: node,port,remote node,remote port[,speed,width] (e.g. leaf01,17,spine03,1,NDR,4x), or the "
                  "design as ibnetdiscover output, an ibsim net file or ibweb JSON.")

    def clean_file(self):
        f = self.cleaned_data["file"]
        if f.size > MAX_PLAN_BYTES:
            raise forms.ValidationError(f"{f.name}: {f.size} bytes, more than the limit of {MAX_PLAN_BYTES}")
        return f


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
            if named(self, "plan_file"):
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


class TwinPart(WatchPart):
    """The job source and cabling plan of a real fabric on the new-fabric page, each needing its permission."""

    name = "twin"
    form_class = TwinForm
    tokens = {"jobs": "job_token"}

    def allowed(self, request: HttpRequest, fabric_form: forms.Form, form: forms.Form) -> bool:
        denied = [name for name, perm in TWIN_PERMISSIONS.items()
                  if (request.POST.get(f"{self.name}-{name}") or request.FILES.get(f"{self.name}-{name}"))
                  and not request.user.has_perm(perm)]
        for name in denied:
            form.add_error(name, f"needs the {TWIN_PERMISSIONS[name]} permission")
        return not denied

    def save_for(self, request: HttpRequest, fabric: Fabric, form: forms.Form) -> dict:
        key = form.save_for(fabric, request.user)
        url = request.build_absolute_uri(reverse("twin-api:jobs", args=[fabric.slug]))
        return {"jobs": {"key": key, "url": url} if key else None}

    def committed(self, fabric: Fabric, form: forms.Form) -> None:
        if form.plan is not None:  # the fabric's twin compares the new plan from its next tick
            report_cache.bump_config(fabric.pk)
