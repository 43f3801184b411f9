"""The plan upload form (the file is read completely before anything is stored)."""

from django import forms

from .plans import MAX_PLAN_BYTES


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
