import re

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from . import materials as material_services
from .access import can, channel_ids
from .forms import MaterialUploadForm
from .models import Channel, Material
from .roles import CHANNEL_USE, MATERIALS_MANAGE
from .selectors import channel_materials, channels_for_user, material_pages


@login_required
def home(request):
    return render(
        request,
        "channels_app/home.html",
        {
            "channels": channels_for_user(request.user),
            "manageable": channel_ids(request.user, MATERIALS_MANAGE),
        },
    )


def _channel(request, slug: str, *, manage: bool) -> Channel:
    """The channel, checked for this user: outsiders get 404 (its existence is not theirs to know),
    members who may read but not manage its materials get 403."""
    channel = get_object_or_404(Channel, slug=slug)
    if not can(request.user, CHANNEL_USE, channel):
        raise Http404
    if manage and not can(request.user, MATERIALS_MANAGE, channel):
        raise PermissionDenied
    return channel


@login_required
def material_list(request, slug):
    channel = _channel(request, slug, manage=True)
    form = MaterialUploadForm()
    if request.method == "POST":
        form = MaterialUploadForm(request.POST, request.FILES)
        if form.is_valid():
            material, created = material_services.material_upload(
                channel=channel, user=request.user, uploaded_file=form.cleaned_data["file"]
            )
            name = material.original_name
            if not created:
                messages.info(
                    request, _("“%(name)s” is already in this channel; nothing was changed.") % {"name": name}
                )
            elif material.status == Material.Status.FAILED:
                messages.error(
                    request,
                    _("“%(name)s” cannot be indexed: %(error)s") % {"name": name, "error": material.error},
                )
            else:
                messages.success(request, _("“%(name)s” was uploaded and is being indexed.") % {"name": name})
            return redirect("material_list", slug=channel.slug)
    items = list(channel_materials(channel))
    busy = any(m.status in (Material.Status.PENDING, Material.Status.PROCESSING) for m in items)
    status = 400 if form.errors else 200  # a POST without a file shows the form's error, as a 400
    return render(
        request,
        "channels_app/materials.html",
        {"channel": channel, "form": form, "materials": items, "busy": busy},
        status=status,
    )


@login_required
def material_detail(request, slug, pk):
    channel = _channel(request, slug, manage=False)
    material = get_object_or_404(Material, pk=pk, channel=channel)
    # A citation opens the material at the words a research quoted (?quote=): they are marked.
    quote = " ".join(request.GET.get("quote", "").split())[:400]
    pages = []
    for page, text in material_pages(material):
        at = _find_quote(text, quote) if quote else None
        if at is None:
            pages.append((page, text, "", ""))
        else:
            pages.append((page, text[: at[0]], text[at[0] : at[1]], text[at[1] :]))
            quote = ""  # the first place only
    return render(
        request,
        "channels_app/material_detail.html",
        {
            "channel": channel,
            "material": material,
            "pages": pages,
            "can_manage": can(request.user, MATERIALS_MANAGE, channel),
        },
    )


def _find_quote(text: str, quote: str) -> tuple[int, int] | None:
    """Where `quote` is in `text`, white space aside (a page joins its chunks' lines)."""
    words = quote.split()
    if not words:
        return None
    match = re.search(r"\s+".join(re.escape(w) for w in words), text)
    return (match.start(), match.end()) if match else None


@login_required
def material_file(request, slug, pk):
    channel = _channel(request, slug, manage=False)
    material = get_object_or_404(Material, pk=pk, channel=channel)
    if not material.file:
        raise Http404
    try:
        handle = material.file.open("rb")
    except FileNotFoundError:
        raise Http404 from None
    return FileResponse(handle, as_attachment=True, filename=material.original_name)


@login_required
@require_POST
def material_delete(request, slug, pk):
    channel = _channel(request, slug, manage=True)
    material = get_object_or_404(Material, pk=pk, channel=channel)
    name = material.original_name
    material_services.material_delete(material)
    messages.success(request, _("“%(name)s” and its indexed passages were deleted.") % {"name": name})
    return redirect("material_list", slug=channel.slug)


@login_required
@require_POST
def material_reindex(request, slug, pk):
    channel = _channel(request, slug, manage=True)
    material = get_object_or_404(Material, pk=pk, channel=channel)
    if material_services.material_reindex(material):
        messages.success(request, _("“%(name)s” is being indexed again.") % {"name": material.original_name})
    else:
        messages.error(
            request,
            _("“%(name)s” has no stored file to index; upload a corrected file.")
            % {"name": material.original_name},
        )
    return redirect("material_list", slug=channel.slug)
