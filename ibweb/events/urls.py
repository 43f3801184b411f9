from django.urls import path

from ibweb.telemetry.reference_page import accept_cabling_page

from . import views

app_name = "events"

urlpatterns = [
    path("fabrics/<slug:slug>/events/", views.events_page, name="fabric-events"),
    path("fabrics/<slug:slug>/events/<int:pk>/acknowledge/", views.event_acknowledge, name="event-acknowledge"),
    path("fabrics/<slug:slug>/events/<int:pk>/comment/", views.event_comment, name="event-comment"),
    path("fabrics/<slug:slug>/events/accept-cabling/", accept_cabling_page, name="accept-cabling"),
]
