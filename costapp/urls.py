"""URL configuration."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path
from drf_spectacular.views import (
    SpectacularAPIView,
    SpectacularRedocView,
    SpectacularSwaggerSplitView,
)

from accounts import views as account_views

from . import views
from .api.errors import api_not_found
from .ask import views as ask_views
from .builder import views as builder_views
from .runs import focus_views, link_views
from .runs import views as run_views
from .watch import views as watch_views

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("offers/<int:pk>/", views.offer, name="offer"),
    path("claims/", views.claims, name="claims"),
    path("glossary/", views.glossary, name="glossary"),
    path("claims/<slug:slug>/", views.claim, name="claim"),
    path("scenarios/", run_views.scenarios, name="scenarios"),
    path("scenarios/<int:pk>/", run_views.scenario, name="scenario"),
    path("ask/", ask_views.ask, name="ask"),
    path("ask/questions/", ask_views.questions, name="questions"),
    path("ask/<int:pk>/", ask_views.answer, name="answer"),
    path("ask/<int:pk>/again/", ask_views.ask_again, name="ask-again"),
    path("ask/<int:pk>/plan.json", ask_views.answer_plan, name="answer-plan"),
    path("ask/<int:pk>/result.json", ask_views.answer_json, name="answer-json"),
    path("ask/<int:pk>/scenario.json", ask_views.answer_scenario, name="answer-scenario"),
    path("scenarios/new/", builder_views.scenario_new, name="scenario-new"),
    path("scenarios/<int:pk>/edit/", builder_views.scenario_edit, name="scenario-edit"),
    path(
        "scenarios/<int:pk>/duplicate/", builder_views.scenario_duplicate, name="scenario-duplicate"
    ),
    path("scenarios/<int:pk>/share/", builder_views.scenario_share, name="scenario-share"),
    path("scenarios/offers/", builder_views.builder_offers, name="scenario-offers"),
    path("runs/", run_views.runs, name="runs"),
    path("runs/compare/", run_views.runs_compare, name="runs-compare"),
    path("watch/", watch_views.watch_page, name="watch"),
    path("runs/<int:pk>/", run_views.run, name="run"),
    path("runs/<int:pk>/status/", run_views.run_status, name="run-status"),
    path("runs/<int:pk>/run.xlsx", run_views.run_xlsx, name="run-xlsx"),
    path("runs/<int:pk>/result.json", run_views.run_result_json, name="run-json"),
    path("runs/<int:pk>/focus/", focus_views.run_focus, name="run-focus"),
    path(
        "runs/<int:pk>/sizing/<int:sweep>/copy/",
        run_views.run_sizing_copy,
        name="run-sizing-copy",
    ),
    path("runs/<int:pk>/links/", link_views.run_link_create, name="run-link-create"),
    path(
        "runs/<int:pk>/links/<int:link>/revoke/",
        link_views.run_link_revoke,
        name="run-link-revoke",
    ),
    path("shared/<str:key>/", link_views.shared_run, name="shared-run"),
    path("shared/<str:key>/focus/", focus_views.shared_focus, name="shared-run-focus"),
    path("shared/<str:key>/monthly.csv", link_views.shared_monthly_csv, name="shared-run-csv"),
    path("shared/<str:key>/run.xlsx", link_views.shared_xlsx, name="shared-run-xlsx"),
    path("shared/<str:key>/result.json", link_views.shared_result_json, name="shared-run-json"),
    path("", include("hardware.urls")),
    path("tokens/", account_views.tokens, name="tokens"),
    path("login/", account_views.SignInView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/v1/auth/", include("accounts.urls")),
    path("api/v1/", include("hardware.api.urls")),
    path("api/v1/", include("costapp.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="swagger-ui"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="schema"), name="redoc"),
    # Last: whatever else is under /api/ answers 404 in the API's error format.
    re_path(r"^api/(?P<path>.*)$", api_not_found),
]
