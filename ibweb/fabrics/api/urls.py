from rest_framework.routers import DefaultRouter

from .views import FabricViewSet

app_name = "fabrics-api"

router = DefaultRouter()
router.register("fabrics", FabricViewSet, basename="fabric")
urlpatterns = router.urls
