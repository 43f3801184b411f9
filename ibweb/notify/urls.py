from django.urls import path

from . import views

app_name = "notify"

urlpatterns = [
    path("notifications/", views.notifications_page, name="notifications"),
]
