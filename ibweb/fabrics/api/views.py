from rest_framework import viewsets

from ..models import Fabric
from .serializers import FabricSerializer


class FabricViewSet(viewsets.ModelViewSet):
    serializer_class = FabricSerializer
    lookup_field = "slug"

    def get_queryset(self):
        return Fabric.objects.restrict(self.request.user)
