from rest_framework import viewsets

from ibweb.access import view_of, visible_fabrics
from ibweb.auth.permissions import ViewerReadAllTenantsWrite

from .serializers import FabricSerializer


class FabricViewSet(viewsets.ModelViewSet):
    """Fabrics; a view below ``ALL`` sees of each spec only its tenants' jobs (:func:`ibweb.access.scenario_spec`).

    Writes change every tenant's scenario: the ``ALL`` level and the model permissions.
    """

    serializer_class = FabricSerializer
    permission_classes = [ViewerReadAllTenantsWrite]
    lookup_field = "slug"

    def get_queryset(self):
        return visible_fabrics(view_of(self.request.user))
