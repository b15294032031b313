"""The curators' console: thin views over `review.selectors` and `review.services`.

Every page works without JavaScript (plain links and forms). With htmx, the queue's results and an
item's panel are swapped in place: a view renders the partial when `request.htmx` is set.
"""

from review.views.accounts import login, logout
from review.views.audit import audit, batch_revert, revert, undo
from review.views.clusters import batch, cluster, cluster_decide
from review.views.holds import hold
from review.views.icons import favicon
from review.views.items import decide, item
from review.views.preferences import shortcuts
from review.views.queue import decide_many, queue
from review.views.stats import stats
from review.views.sweeps import sweep_detail, sweep_list

__all__ = [
    "audit",
    "batch",
    "batch_revert",
    "cluster",
    "cluster_decide",
    "decide",
    "decide_many",
    "favicon",
    "hold",
    "item",
    "login",
    "logout",
    "queue",
    "revert",
    "shortcuts",
    "stats",
    "sweep_detail",
    "sweep_list",
    "undo",
]
