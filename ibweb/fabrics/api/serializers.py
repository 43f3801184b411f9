from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers

from ibweb.access import NOTHING, scenario_spec, view_of

from ..models import Fabric
from ..uploads import NOT_A_PATH, keep_health, upload_with_health


class FabricSerializer(serializers.ModelSerializer):
    """A fabric; create one from a ``spec`` (generator) or a multipart ``topology_file`` upload.

    ``topology_file`` is the uploaded file's content; a file name or path in its place is a 400 at the
    field (:data:`~ibweb.fabrics.uploads.NOT_A_PATH`): the API never reads a file of the server (issue 26).
    """

    url = serializers.HyperlinkedIdentityField(view_name="fabrics-api:fabric-detail", lookup_field="slug")
    topology_file = serializers.FileField(write_only=True, required=False, error_messages={"invalid": NOT_A_PATH},
                                          help_text="ibnetdiscover output (any dialect), an ibdiagnet archive, "
                                                    "an ibsim net file or ibweb JSON: the file itself, uploaded.")
    cluster = serializers.SlugRelatedField(slug_field="slug", read_only=True,
                                           help_text="The cluster the fabric belongs to (set in the admin).")

    class Meta:
        model = Fabric
        fields = ["id", "url", "name", "slug", "description", "mode", "routing_engine", "routing_options", "tick_s",
                  "congestion_model", "spec", "cluster", "cluster_role", "rail", "created", "updated", "topology_file"]
        read_only_fields = ["created", "updated", "cluster_role", "rail"]

    def validate_spec(self, value):
        if not isinstance(value, dict):  # issue 26: a list here was a 500
            raise serializers.ValidationError("expected an object: {\"topology\": {...}, \"jobs\": [...]}")
        return value

    def validate(self, attrs: dict) -> dict:
        upload = attrs.pop("topology_file", None)
        if upload is not None:
            try:
                _, topology, self._health_rows = upload_with_health(upload)
            except DjangoValidationError as exc:
                raise serializers.ValidationError(exc.message_dict) from exc
            attrs["spec"] = {**attrs.get("spec", {}), "topology": topology}
            attrs["spec"].setdefault("jobs", [])
        instance = Fabric(**{**({} if self.instance is None else self._current()), **attrs})
        try:
            instance.clean()
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from exc
        return attrs

    def save(self, **kwargs) -> Fabric:
        """Save the fabric; an uploaded ibdiagnet archive's link health becomes its health readings."""
        fabric = super().save(**kwargs)
        keep_health(fabric.pk, getattr(self, "_health_rows", None))
        return fabric

    def to_representation(self, instance: Fabric) -> dict:
        """The fabric as the request's view sees it; an uploaded topology is summarised (JSON in the snapshot)."""
        data = super().to_representation(instance)
        request = self.context.get("request")
        view = view_of(request.user) if request else NOTHING
        data["spec"] = scenario_spec(view, data.get("spec") or {})
        if not view.sees_all:  # compute-node port GUIDs of every tenant's hosts
            data.pop("routing_options", None)
        topology = data["spec"].get("topology") or {}
        if "fabric" in topology:
            nodes, links = topology["fabric"].get("nodes", {}), topology["fabric"].get("links", {})
            summary = {"nodes": len(nodes.get("name", [])), "links": len(links.get("a_node", []))}
            data["spec"] = {**data["spec"], "topology": {**{k: v for k, v in topology.items() if k != "fabric"},
                                                         "fabric": summary}}
        return data

    def _current(self) -> dict:
        fields = ("name", "slug", "mode", "spec", "routing_engine", "routing_options", "tick_s", "congestion_model")
        return {f: getattr(self.instance, f) for f in fields}
