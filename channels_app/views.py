from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from .selectors import channels_for_user


@login_required
def home(request):
    return render(request, "channels_app/home.html", {"channels": channels_for_user(request.user)})
