from django.urls import path

from review import views

app_name = "review"
urlpatterns = [
    path("", views.queue, name="queue"),
    path("items/<str:item_id>/", views.item, name="item"),
    path("items/<str:item_id>/decide", views.decide, name="decide"),
    path("items/<str:item_id>/hold", views.hold, name="hold"),
    path("bulk", views.decide_many, name="bulk"),
    path("clusters/<str:item_id>/", views.cluster, name="cluster"),
    path("clusters/<str:item_id>/decide", views.cluster_decide, name="cluster_decide"),
    path("batches/<uuid:batch_id>/", views.batch, name="batch"),
    path("batches/<uuid:batch_id>/revert", views.batch_revert, name="batch_revert"),
    path("undo", views.undo, name="undo"),
    path("preferences/shortcuts", views.shortcuts, name="shortcuts"),
    path("audit/", views.audit, name="audit"),
    path("audit/<int:decision_id>/revert", views.revert, name="revert"),
    path("stats/", views.stats, name="stats"),
    path("sweeps/", views.sweep_list, name="sweeps"),
    path("sweeps/<int:run_id>/", views.sweep_detail, name="sweep"),
    path("accounts/login/", views.login, name="login"),
    path("accounts/logout/", views.logout, name="logout"),
    # A browser asks for /favicon.ico on pages without a <link rel=icon> (a JSON answer, the
    # API's docs): WhiteNoise serves the file under STATIC_URL, so send it there.
    path("favicon.ico", views.favicon, name="favicon"),
]
