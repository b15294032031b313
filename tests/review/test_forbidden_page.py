"""A 403 without a message of its own (the admin's, for a model the user holds no permission on)
does not say it was about deciding review items."""

import pytest
from django.contrib.auth.models import User

pytestmark = pytest.mark.django_db


def test_a_staff_curator_refused_an_admin_page_is_not_told_about_deciding(client, curator):
    User.objects.filter(pk=curator.pk).update(is_staff=True)
    client.force_login(curator)
    response = client.get("/admin/palace/import/")
    assert response.status_code == 403
    page = response.content.decode()
    assert "the permission this page needs" in page
    assert "deciding" not in page
