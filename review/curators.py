"""The curators group: who may decide review items."""

from django.contrib.auth.models import Group, Permission

GROUP = "curators"
DECIDE_PERMISSION = "palace.decide"  # what the curators group grants: deciding review items


def curators_group() -> Group:
    group, _ = Group.objects.get_or_create(name=GROUP)
    group.permissions.add(
        Permission.objects.get(content_type__app_label="palace", codename="decide")
    )
    return group
