from django.urls import path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    path("channels/<slug:slug>/materials/", views.material_list, name="material_list"),
    path("channels/<slug:slug>/materials/<int:pk>/", views.material_detail, name="material_detail"),
    path("channels/<slug:slug>/materials/<int:pk>/file", views.material_file, name="material_file"),
    path("channels/<slug:slug>/materials/<int:pk>/delete", views.material_delete, name="material_delete"),
    path("channels/<slug:slug>/materials/<int:pk>/reindex", views.material_reindex, name="material_reindex"),
]
