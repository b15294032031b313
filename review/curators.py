"""The curators group: who may decide review items."""

from django.contrib.auth.models import Group, Permission

GROUP = "curators"
# The permission a curator holds: may decide review items (console, API and admin alike).
DECIDE_PERMISSION = "palace.decide"


def curators_group() -> Group:
    group, _ = Group.objects.get_or_create(name=GROUP)
    group.permissions.add(
        Permission.objects.get(content_type__app_label="palace", codename="decide")
    )
    return group
