from rest_framework.routers import DefaultRouter

from .analysis_views import AnalysisViewSet
from .views import FabricViewSet

app_name = "fabrics-api"

router = DefaultRouter()
router.register("fabrics", FabricViewSet, basename="fabric")
router.register(r"fabrics/(?P<slug>[^/.]+)/analyses", AnalysisViewSet, basename="fabric-analysis")
urlpatterns = router.urls
