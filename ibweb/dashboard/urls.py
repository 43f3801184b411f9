from django.urls import path

from . import views

app_name = "dashboard"

urlpatterns = [
    path("", views.fabric_list, name="fabric-list"),
    path("fabrics/<slug:slug>/", views.fabric_detail, name="fabric-detail"),
]
