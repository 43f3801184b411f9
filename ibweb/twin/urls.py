from django.urls import path

from . import views

app_name = "twin"

urlpatterns = [
    path("fabrics/<slug:slug>/plan/", views.plan_detail, name="plan"),
]
