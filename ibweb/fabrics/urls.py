from django.urls import path

from . import views

app_name = "fabrics"

urlpatterns = [
    path("fabrics/add/", views.fabric_add, name="fabric-add"),
]
