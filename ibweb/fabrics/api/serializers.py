from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers

from ..models import Fabric


class FabricSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="fabrics-api:fabric-detail", lookup_field="slug")

    class Meta:
        model = Fabric
        fields = ["id", "url", "name", "slug", "description", "mode", "routing_engine", "tick_s", "spec", "created",
                  "updated"]
        read_only_fields = ["created", "updated"]

    def validate(self, attrs: dict) -> dict:
        instance = Fabric(**{**({} if self.instance is None else self._current()), **attrs})
        try:
            instance.clean()
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from exc
        return attrs

    def _current(self) -> dict:
        return {f: getattr(self.instance, f) for f in ("name", "slug", "mode", "spec", "routing_engine", "tick_s")}
