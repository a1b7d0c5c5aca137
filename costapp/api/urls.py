"""The scenarios and runs API (docs/api.md, "Scenarios and runs"), under /api/v1/."""

from django.urls import path
from rest_framework.routers import DefaultRouter

from costapp.api import views
from costapp.watch import views as watch_views

router = DefaultRouter(trailing_slash=True)
router.register("scenarios", views.ScenarioViewSet, basename="scenario")
router.register("runs", views.RunViewSet, basename="run")

urlpatterns = [
    # docs/api.md names the CSV without a trailing slash (so it is no router action)
    path(
        "runs/<int:pk>/monthly.csv",
        views.RunViewSet.as_view(
            {"get": "monthly_csv"},
            renderer_classes=[views.EscapedJSONRenderer, views.CSVRenderer],
        ),
        name="run-monthly-csv",
    ),
    path("simulate/", views.SimulateView.as_view(), name="simulate"),
    path("watches/", watch_views.WatchListView.as_view(), name="watches"),
    path("watch-events/", watch_views.WatchEventListView.as_view(), name="watch-events"),
    *router.urls,
]
