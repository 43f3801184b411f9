"""Forms of the fabrics app."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from .choices import FabricMode, Generator, TopologySource
from .models import Fabric
from .uploads import topology_from_upload

DEFAULT_BACKGROUND = {"fraction": 0.25, "gbps": 20}


class FabricCreateForm(forms.ModelForm):
    """A new fabric from a generated design or an uploaded topology file; validated whole before saving."""

    source = forms.ChoiceField(choices=TopologySource.choices, initial=TopologySource.GENERATOR,
                               widget=forms.RadioSelect)
    generator = forms.ChoiceField(choices=Generator.choices, required=False, initial=Generator.FAT_TREE)
    generator_params = forms.JSONField(required=False, initial={"hosts": 512, "radix": 64, "speed": "NDR"},
                                       help_text='Generator parameters, e.g. {"hosts": 2048, "radix": 64, '
                                                 '"levels": 2, "speed": "NDR"}.')
    topology_file = forms.FileField(required=False, help_text="ibnetdiscover output, an ibsim net file or "
                                                              "ibweb JSON.")

    class Meta:
        model = Fabric
        fields = ["name", "slug", "description", "routing_engine", "tick_s"]

    def clean(self) -> dict:
        data = super().clean()
        if data.get("source") == TopologySource.UPLOAD:
            upload = data.get("topology_file")
            if not upload:
                raise ValidationError({"topology_file": "choose a file to upload"})
            topology = topology_from_upload(upload)
        else:
            params = data.get("generator_params") or {}
            if not isinstance(params, dict):
                raise ValidationError({"generator_params": "a JSON object of parameter names and values"})
            topology = {"generator": data.get("generator") or Generator.FAT_TREE, **params}
        self.instance.mode = FabricMode.EMULATED
        self.instance.spec = {"topology": topology, "jobs": [], "background": DEFAULT_BACKGROUND}
        try:
            self.instance.clean()
        except ValidationError as exc:
            field = "topology_file" if data.get("source") == TopologySource.UPLOAD else "generator_params"
            raise ValidationError({field: exc.message_dict.get("spec", exc.messages)}) from None
        return data

    def _post_clean(self) -> None:
        # clean() already validated the scenario and mapped its errors to this form's fields; the model's
        # own check would report them again under "spec", which the form has no field for.
        if not self._errors:
            super()._post_clean()
