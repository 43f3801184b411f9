from rest_framework.routers import DefaultRouter

from .views import ChannelViewSet, DeliveryViewSet, RuleViewSet, SilenceViewSet

app_name = "notify-api"

router = DefaultRouter()
router.register("channels", ChannelViewSet, basename="channel")
router.register("rules", RuleViewSet, basename="rule")
router.register("silences", SilenceViewSet, basename="silence")
router.register("deliveries", DeliveryViewSet, basename="delivery")
urlpatterns = router.urls
