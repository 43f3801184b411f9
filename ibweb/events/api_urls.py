"""Events of a fabric under ``/api/fabrics/fabrics/<slug>/events/``."""

from django.urls import path

from . import api

app_name = "events-api"

urlpatterns = [
    path("fabrics/<slug:slug>/events/", api.EventListView.as_view(), name="event-list"),
    path("fabrics/<slug:slug>/events/summary/", api.EventSummaryView.as_view(), name="event-summary"),
    path("fabrics/<slug:slug>/events/<int:pk>/", api.EventDetailView.as_view(), name="event-detail"),
    path("fabrics/<slug:slug>/events/<int:pk>/acknowledge/", api.EventAcknowledgeView.as_view(),
         name="event-acknowledge"),
    path("fabrics/<slug:slug>/events/<int:pk>/comments/", api.EventCommentView.as_view(), name="event-comments"),
]
