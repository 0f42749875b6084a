from django.urls import path

from . import views

urlpatterns = [
    path("consent", views.consent_choice, name="governance_consent_choice"),
]
