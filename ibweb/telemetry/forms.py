"""The collector of a real fabric: its form (the new-fabric page's collector fields, and the body of
``POST /api/telemetry/trial-sweep/``), and the part it is of the new-fabric page (:class:`CollectorPart`)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from django import forms
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator
from django.http import HttpRequest
from django.urls import reverse

from ibweb.fabrics.forms import WatchPart
from ibweb.fabrics.models import Fabric

from .choices import CollectorSource
from .models import CollectorConfig, PushToken
from .trial import MAX_TRIAL_SWITCHES, may_try

#: Longest command timeout the form takes (a trial sweep waits for up to 33 commands).
MAX_TIMEOUT_S = 300.0
#: Why only some users may configure a collector (form help, errors, docs).
COMMANDS_WARNING = ("The collector runs these commands on the ibweb server (web process for a test sweep, engine "
                    "and Celery workers afterwards), with this environment: only operators who may configure "
                    "collectors in the admin may set them.")
NOT_ALLOWED = "watching a real fabric runs commands on the ibweb server: operators who may configure collectors only"

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
    OpenSM's LFT dump and log are; how often; whether link health counters are read. Also the body of
    ``POST /api/telemetry/trial-sweep/`` (without prefix)."""

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
        fields = ["source", "command_prefix", "environment", "drop_dir", "lfts_path", "interval_s", "timeout_s",
                  "health_counters", "cc_counters", "opensm_log_path", "validation_every"]
        widgets = {"source": forms.RadioSelect}
        labels = {"source": "The tools are reached by", "drop_dir": "Drop directory", "lfts_path": "LFT dump",
                  "interval_s": "Sweep interval (s)", "timeout_s": "Command timeout (s)",
                  "health_counters": "Read link health counters", "cc_counters": "Read congestion counters",
                  "opensm_log_path": "OpenSM log",
                  "validation_every": "Validation reads every (sweeps)"}
        help_texts = {
            "drop_dir": "An absolute path on the ibweb server where an external collector writes iblinkinfo.txt and "
                        "perfquery*.txt (and optionally opensm-lfts.dump).",
            "lfts_path": "Optional: the absolute path of OpenSM's opensm-lfts.dump (opensm -D 0x47 writes it into "
                         "its --dump_files_dir, /var/log by default) or ibroute output, as the engine process sees "
                         "it. Empty: opensm-lfts.dump in the drop directory, if any; else the routing is computed "
                         "with the routing engine above.",
            "interval_s": "Seconds between sweeps (at least 0.5).",
            "timeout_s": "Per command; a command still running then is killed and its switch's links go stale.",
            "health_counters": "Also run perfquery -T (FEC and per-lane error counters) on every switch each sweep: "
                               "bit error rates computed between sweeps. A switch that cannot answer is a warning.",
            "cc_counters": "Also run perfquery --rcvcc (congestion control: FECN and BECN packets received) on every "
                           "cabled switch port each sweep, one command per port (perfquery reads this counter set "
                           "one port at a time): FECN/s and BECN/s per port between sweeps. A switch that cannot "
                           "answer (ibsim, switches without congestion control counters) is a warning and is not "
                           "asked for its other ports.",
            "opensm_log_path": "Optional: the absolute path of OpenSM's log (opensm -f; /var/log/opensm.log by "
                               "default) as the collector sees it, read each sweep for link downs (run OpenSM with "
                               "-V or -D 0x07 to log the ports it unlinks). Empty: opensm.log in the drop directory, "
                               "if any.",
            "validation_every": "sminfo and smpquery pkeys (both ends of every switch-to-host cable) once per this "
                                "many sweeps, for the fabric validation: SM mastership, P_Key mismatches. A drop "
                                "directory's sminfo.txt and pkeys*.txt are read as often. 0: never. Empty: 10.",
        }

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        self.fields["source"].choices = CollectorSource.choices  # no empty choice: a radio list
        for name in ("interval_s", "timeout_s", "validation_every"):  # empty: the collector's default
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

    def clean_validation_every(self) -> int:
        return self._or_default("validation_every")

    def clean_drop_dir(self) -> str:
        return _absolute(self.cleaned_data.get("drop_dir", "").strip(), "the collector reads it on the ibweb server")

    def clean_lfts_path(self) -> str:
        return _absolute(self.cleaned_data.get("lfts_path", "").strip(), "the engine process reads it")

    def clean_opensm_log_path(self) -> str:
        return _absolute(self.cleaned_data.get("opensm_log_path", "").strip(), "the collector reads it")

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

    def _update_errors(self, errors) -> None:
        """The model's errors, but none on a field the form already refused (a relative drop directory is not
        also said to be missing)."""
        if hasattr(errors, "error_dict"):
            for name in [n for n in errors.error_dict if n in self._errors]:
                del errors.error_dict[name]
            if not errors.error_dict:
                return
        super()._update_errors(errors)

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


class CollectorPart(WatchPart):
    """The collector of a real fabric on the new-fabric page: only who may configure collectors may watch one."""

    name = "collector"
    form_class = CollectorForm
    tokens = {"push": "push_token"}

    def context(self, request: HttpRequest) -> dict:
        return {"may_watch": may_try(request.user), "commands_warning": COMMANDS_WARNING,
                "trial_switches": MAX_TRIAL_SWITCHES}

    def allowed(self, request: HttpRequest, fabric_form: forms.Form, form: forms.Form) -> bool:
        if may_try(request.user):
            return True
        fabric_form.add_error("source", NOT_ALLOWED)
        return False

    def save_for(self, request: HttpRequest, fabric: Fabric, form: forms.Form) -> dict:
        config, key = form.save_for(fabric)
        url = request.build_absolute_uri(reverse("telemetry-api:push-samples", args=[fabric.slug]))
        return {"config": config, "push": {"key": key, "url": url} if key else None}
