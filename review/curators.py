"""The curators group: who may decide review items."""

from django.contrib.auth.models import Group, Permission

from palace.models import DECIDE_PERMISSION

__all__ = ["DECIDE_PERMISSION", "GROUP", "curators_group"]

GROUP = "curators"


def curators_group() -> Group:
    group, _ = Group.objects.get_or_create(name=GROUP)
    group.permissions.add(
        Permission.objects.get(content_type__app_label="palace", codename="decide")
    )
    return group
