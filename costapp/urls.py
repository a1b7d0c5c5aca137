"""URL configuration."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("offers/<int:pk>/", views.offer, name="offer"),
    path("claims/", views.claims, name="claims"),
    path("claims/<slug:slug>/", views.claim, name="claim"),
    path("", include("hardware.urls")),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
]
