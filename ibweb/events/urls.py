from django.urls import path

from . import views

app_name = "events"

urlpatterns = [
    path("fabrics/<slug:slug>/events/", views.events_page, name="fabric-events"),
    path("fabrics/<slug:slug>/events/<int:pk>/acknowledge/", views.event_acknowledge, name="event-acknowledge"),
    path("fabrics/<slug:slug>/events/<int:pk>/comment/", views.event_comment, name="event-comment"),
]
