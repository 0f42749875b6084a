from django.urls import path

from . import views

app_name = "catalogue"

urlpatterns = [
    path("universities/<slug:slug>/", views.university, name="university"),
    path("courses/<slug:university>/<str:code>/", views.course, name="course"),
    path("curriculum/<str:code>/", views.curriculum, name="curriculum"),
    path("clusters/<slug:slug>/", views.cluster, name="cluster"),
    path("advisors/<slug:slug>/", views.advisor, name="advisor"),
    path("team-papers/<slug:slug>/", views.team_paper, name="team_paper"),
    path("documents/<slug:slug>/", views.document, name="document"),
]
