"""Every conformance scenario, run against the layer of Castellan that owns the behaviour: the
write service for 'dedup.write', candidate queries for 'store', the backfill for 'migration', and
the real REST API (Django's test client, token auth) for 'http', 'app' and 'checkpoint'."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from dedup import backfill, candidates, mining, policy, services
from dedup.errors import DomainError
from palace import selectors
from palace.models import Drawer, Entity, EntityAlias, Room
from tests.conformance.loader import UnknownExpectation, cases, holds, known, text_of
from tests.conftest import agent_client

SKIPPED = {
    # These need an entity extractor reading mined documents, which Castellan does not have:
    # entities are named by the writer (POST /api/drawers/{id}/mentions). The behaviour they
    # check (variants converge, each mention keeps its spelling and provenance, a vague sighting
    # joins a typed entity) is tested through mentions in tests/api/test_entities.py.
    "http-entity-variants-converge",
    "ex-variants-converge",
    "ex-vague-joins-typed",
}
MIGRATION_NAMES = {"dedup-keys", "since-0.2"}
# The reference's error names, as this project's error codes (README: ours is the last segment).
ERROR_CODES = {"drawer_name_taken": "drawer_name_taken", "invalid_input": "invalid"}


@dataclass(frozen=True)
class Checks:
    """What a step handler checks: the keys of the step's `expect` (or, for the `expect_*`
    actions, whose arguments are the expectation, of its arguments), and for list-valued keys the
    keys of each element. Anything else in a case fails the step before it runs."""

    keys: frozenset[str] = frozenset()
    items: Mapping[str, frozenset[str]] = field(default_factory=dict)
    in_args: bool = False

    def refuse_unknown(self, args: Mapping, expect: Mapping, where: str) -> None:
        checked = args if self.in_args else expect
        known(checked, self.keys | set(self.items), where)
        if self.in_args:
            known(expect, (), where)
        for key, item_keys in self.items.items():
            for position, item in enumerate(checked.get(key, [])):
                known(item, item_keys, f"{where} {key}[{position}]")


def checks(
    *keys: str, items: Mapping[str, Collection[str]] | None = None, in_args: bool = False
) -> Callable:
    def mark(handler: Callable) -> Callable:
        handler.checks = Checks(
            frozenset(keys),
            {key: frozenset(item_keys) for key, item_keys in (items or {}).items()},
            in_args,
        )
        return handler

    return mark


def scenario_params():
    for case in cases()["scenario"]:
        marks = (
            [pytest.mark.skip(reason="needs an entity extractor")] if case["id"] in SKIPPED else []
        )
        yield pytest.param(case, id=case["id"], marks=marks)


class Run:
    def __init__(self, settings, tmp_path: Path):
        self.settings = settings
        self.tmp_path = tmp_path
        self.drawers: dict[int, Drawer] = {}
        self.entities: dict[int, Entity] = {}
        self.migrated = False
        self.listed_drawers: list[dict] = []
        self.listed_entities: list[dict] = []
        user = get_user_model().objects.create_user("conformance")
        self.api = self.client_for(user)

    @staticmethod
    def client_for(user) -> APIClient:
        return agent_client(user.get_username())

    def configure(self, config: dict) -> None:
        self.settings.CASTELLAN_DEDUP_ENABLED = config.get("dedup.enabled", True)
        self.settings.CASTELLAN_DEDUP_NEAR_THRESHOLD = config.get("dedup.near_threshold", 0.9)
        self.settings.CASTELLAN_DEDUP_ENTITY_FUZZY = config.get("dedup.entity_fuzzy", True)

    def room(self, name: str) -> Room:
        return services.room_get_or_create(wing="conformance", room=name)

    def exclude(self, spec: str) -> int | None:
        return None if spec == "fresh_id" else self.drawers[int(spec.split(":")[1])].id

    # --- the write service -----------------------------------------------------------------

    @checks(
        "outcome",
        "existing_step",
        "similar_count",
        items={
            "similar": {
                "drawer_step",
                "index",
                "kind",
                "same_hash",
                "same_fingerprint",
                "threshold",
                "similarity",
            }
        },
    )
    def do_write(self, step: int, args: dict, expect: dict) -> None:
        mode = {
            "memory": services.WriteMode.MEMORY,
            "diary": services.WriteMode.DIARY,
            "mined": services.WriteMode.MINED,
            "named": services.WriteMode.MINED,
        }[args["rules"]]
        result = services.drawer_write(
            room=self.room(args["room"]),
            content=args["content"],
            mode=mode,
            name=args.get("name"),
            agent=args.get("agent", ""),
        )
        self.drawers[step] = result.drawer
        self.check_write(result, expect)

    def check_write(self, result: services.DrawerWrite, expect: dict) -> None:
        if "outcome" in expect:
            assert result.created is (expect["outcome"] == "stored")
        if "existing_step" in expect:
            assert result.drawer.pk == self.drawers[expect["existing_step"]].pk
        if "similar_count" in expect:
            assert len(result.links) == expect["similar_count"]
        for position, item in enumerate(expect.get("similar", [])):
            link = result.links[item.get("index", position)]
            if "drawer_step" in item:
                assert link.older_id == self.drawers[item["drawer_step"]].pk
            assert link.verdict == item["kind"]
            for signal in ("same_hash", "same_fingerprint", "threshold"):
                if signal in item:
                    assert holds(link.signals[signal], item[signal])
            if "similarity" in item:
                assert holds(link.similarity, item["similarity"])

    @checks("outcome", "similar_count")
    def do_replay(self, step: int, args: dict, expect: dict) -> None:
        original = self.drawers[args["step"]]
        result = services.drawer_write(
            room=original.room, content=original.content, drawer_id=original.uuid
        )
        # A replay hands back the very drawer it wrote the first time and links nothing; the
        # reference reports it "stored" (it is that drawer), never as a duplicate of it.
        assert result.drawer == original
        if "outcome" in expect:
            assert (result.duplicate_of is None) is (expect["outcome"] == "stored")
        assert len(result.links) == expect.get("similar_count", 0)

    def do_supersede(self, step: int, args: dict, expect: dict) -> None:
        services.drawer_supersede(drawer=self.drawers[args["step"]])

    def do_delete(self, step: int, args: dict, expect: dict) -> None:
        services.drawer_delete(drawer=self.drawers[args["step"]])

    @checks("room", "count", in_args=True)
    def do_expect_room_count(self, step: int, args: dict, expect: dict) -> None:
        assert Drawer.objects.filter(room=self.room(args["room"])).count() == args["count"]

    @checks(
        "step", "count", items={"items": {"drawer_step", "side", "kind", "signals"}}, in_args=True
    )
    def do_expect_links(self, step: int, args: dict, expect: dict) -> None:
        similar = selectors.drawer_similar(self.drawers[args["step"]])
        if "count" in args:
            assert len(similar) == args["count"]
        for position, item in enumerate(args.get("items", [])):
            found = similar[position]
            if "drawer_step" in item:
                assert found.drawer == self.drawers[item["drawer_step"]]
            if "side" in item:
                assert found.side == item["side"]
            if "kind" in item:
                assert found.link.verdict == item["kind"]
            for signal, value in item.get("signals", {}).items():
                assert holds(found.link.signals[signal], value)

    # --- the store ---------------------------------------------------------------------------

    def do_create_drawer(self, step: int, args: dict, expect: dict) -> None:
        config = services.DedupConfig(enabled=False, near_threshold=0.9, entity_fuzzy=True)
        result = services.drawer_write(
            room=self.room(args["room"]),
            content=args["content"],
            mode=services.WriteMode.MINED,
            config=config,
        )
        self.drawers[step] = result.drawer

    def do_legacy_drawer(self, step: int, args: dict, expect: dict) -> None:
        self.drawers[step] = Drawer.objects.create(
            room=self.room(args["room"]),
            content=args["content"],
            content_hash=policy.content_hash(args["content"]),
            normalized_content="",
            fingerprint=None,
        )

    def do_legacy_entity(self, step: int, args: dict, expect: dict) -> None:
        self.entities[step] = Entity.objects.create(
            uuid=args["id"], name=args["name"], kind=args["kind"], key="", key_length=0
        )

    def do_create_entity(self, step: int, args: dict, expect: dict) -> None:  # pragma: no cover
        self.entities[step] = services.entity_resolve(name=args["name"], kind=args["kind"]).entity

    @checks("count", "steps", "first_step")
    def do_find_duplicate_candidates(self, step: int, args: dict, expect: dict) -> None:
        scope = candidates.Scope(
            room=self.room(args["room"]), exclude_id=self.exclude(args["except"])
        )
        if "probe_step" in args:
            probe = self.drawers[args["probe_step"]].content
            probe_hash, probe_fingerprint = policy.content_hash(probe), policy.fingerprint(probe)
        elif "probe_hash" in args:
            probe_hash = args["probe_hash"]
            probe_fingerprint = policy.fingerprint(args["probe_fingerprint_of"])
        else:
            probe_hash, probe_fingerprint = (
                policy.content_hash(args["probe"]),
                policy.fingerprint(args["probe"]),
            )
        found = {c.id: c for c in candidates.same_hash(scope, probe_hash)}
        if args.get("use_fingerprint", True):
            for drawer in candidates.same_fingerprint(scope, probe_fingerprint):
                found.setdefault(drawer.id, drawer)
        ordered = sorted(found)
        self.check_found(ordered, expect)

    @checks("count", "steps", "first_step")
    def do_find_lexical_candidates(self, step: int, args: dict, expect: dict) -> None:
        scope = candidates.Scope(
            room=self.room(args["room"]), exclude_id=self.exclude(args["except"])
        )
        probe = self.drawers[args["probe_step"]].content if "probe_step" in args else args["probe"]
        found = candidates.lexical(scope, policy.query_words(probe), limit=args["limit"])
        self.check_found([d.id for d in found], expect)

    def check_found(self, ids: list[int], expect: dict) -> None:
        if "count" in expect:
            assert len(ids) == expect["count"]
        if "steps" in expect:
            assert ids == [self.drawers[s].id for s in expect["steps"]]
        if "first_step" in expect:
            assert ids[0] == self.drawers[expect["first_step"]].id

    @checks("index_0", "occurrences", "excludes", "length")
    def do_lexical_query_words(self, step: int, args: dict, expect: dict) -> None:
        words = policy.query_words(text_of(args))
        if "index_0" in expect:
            assert words[0] == expect["index_0"]
        for word, count in expect.get("occurrences", {}).items():
            assert words.count(word) == count
        assert not set(expect.get("excludes", [])) & set(words)
        if "length" in expect:
            assert len(words) == expect["length"]

    @checks("created")
    def do_link(self, step: int, args: dict, expect: dict) -> None:
        _, created = services.drawer_link(
            newer=self.drawers[args["newer_step"]],
            older=self.drawers[args["older_step"]],
            verdict=args["kind"],
            signals=args["signals"],
        )
        assert created is expect["created"]

    @checks("filled")
    def do_backfill_fingerprints(self, step: int, args: dict, expect: dict) -> None:
        assert backfill.backfill_fingerprints(Drawer) == expect["filled"]

    @checks("filled")
    def do_backfill_entity_keys(self, step: int, args: dict, expect: dict) -> None:
        assert backfill.backfill_entity_keys(Entity, EntityAlias) == expect["filled"]

    @checks("applied")
    def do_migrate(self, step: int, args: dict, expect: dict) -> None:
        # The data migration's body is `dedup.backfill`, run here on the rows the scenario laid
        # down as a pre-migration palace would hold them (tests/palace/test_migrations.py runs
        # the real migration). A migration is applied once: the second call applies nothing.
        applied = [] if self.migrated else ["dedup-keys"]
        if not self.migrated:
            backfill.backfill_fingerprints(Drawer)
            backfill.backfill_entity_keys(Entity, EntityAlias)
            self.migrated = True
        if "applied" in expect:
            assert bool(applied) == bool(expect["applied"])
            assert set(expect["applied"]) <= MIGRATION_NAMES

    @checks("ok")
    def do_apply_migration_step_again(self, step: int, args: dict, expect: dict) -> None:
        # Reaching the asserts means the step ran without error: the only outcome known as "ok".
        assert expect.get("ok", True) is True
        assert backfill.backfill_fingerprints(Drawer) == 0
        assert backfill.backfill_entity_keys(Entity, EntityAlias) == 0

    # --- entities ----------------------------------------------------------------------------

    @checks(
        "entity_same_as_step",
        "entity_differs_from_steps",
        "entity_id",
        "entity_name",
        "rule",
        "observation_name",
    )
    def do_resolve_or_create(self, step: int, args: dict, expect: dict) -> None:
        self.settings.CASTELLAN_DEDUP_ENTITY_FUZZY = args["fuzzy"]
        result = services.mention_add(
            drawer=self.scratch_drawer(), name=args["name"], kind=args["kind"]
        )
        entity = result.resolution.entity
        self.entities[step] = entity
        if "entity_same_as_step" in expect:
            assert entity == self.entities[expect["entity_same_as_step"]]
        for other in expect.get("entity_differs_from_steps", []):
            assert entity != self.entities[other]
        if "entity_id" in expect:
            assert str(entity.uuid) == expect["entity_id"]
        if "entity_name" in expect:
            assert entity.name == expect["entity_name"]
        if "rule" in expect:
            assert result.resolution.rule == expect["rule"]
        if "observation_name" in expect:
            assert result.mention.observation["name"] == expect["observation_name"]

    def scratch_drawer(self) -> Drawer:
        # Each sighting comes from its own drawer, as sightings from different sources would.
        return services.drawer_write(
            room=self.room("sightings"),
            content=f"sighting {uuid.uuid4()}",
            mode=services.WriteMode.MINED,
        ).drawer

    @checks("result")
    def do_add_alias(self, step: int, args: dict, expect: dict) -> None:
        if args.get("entity") == "unknown":
            response = self.api.post(
                f"/api/entities/{uuid.uuid4()}/aliases", {"alias": args["alias"]}, format="json"
            )
            outcome = "none" if response.status_code == 404 else "entity"
        else:
            entity = self.entities[args["entity_step"]]
            try:
                services.entity_alias_add(entity=entity, alias=args["alias"])
                outcome = "entity"
            except DomainError:
                outcome = "error"
        if "result" in expect:
            assert outcome == expect["result"]

    def entity_ref(self, args: dict) -> Entity:
        if "step" in args:
            return self.entities[args["step"]]
        ref = args["entity"]
        index = int(ref.split(":")[1])
        return Entity.objects.get(uuid=self.listed_entities[index]["id"])

    @checks("step", "entity", "name", "aliases", "aliases_count", in_args=True)
    def do_expect_entity(self, step: int, args: dict, expect: dict) -> None:
        entity = self.entity_ref(args)
        aliases = list(entity.alias_set.order_by("id").values_list("alias", flat=True))
        if "name" in args:
            assert entity.name == args["name"]
        if "aliases" in args:
            assert aliases == args["aliases"]
        if "aliases_count" in args:
            assert len(aliases) == args["aliases_count"]

    @checks("kind", "count", in_args=True)
    def do_expect_entity_count(self, step: int, args: dict, expect: dict) -> None:
        queryset = Entity.objects.all()
        if "kind" in args:
            queryset = queryset.filter(kind=args["kind"])
        assert queryset.count() == args["count"]

    @checks(
        "entity_step",
        "count",
        "all_side",
        items={"contains": {"entity_step", "side"}},
        in_args=True,
    )
    def do_expect_possible(self, step: int, args: dict, expect: dict) -> None:
        found = selectors.entity_candidates(self.entities[args["entity_step"]])
        if "count" in args:
            assert len(found) == args["count"]
        if "all_side" in args:
            assert {c.side for c in found} == {args["all_side"]}
        for item in args.get("contains", []):
            assert any(
                c.entity == self.entities[item["entity_step"]]
                and c.side == item.get("side", c.side)
                for c in found
            )

    # --- the REST API ------------------------------------------------------------------------

    @checks("status", "created", "same_id_as_step", "id_differs_from_step", "code", "error")
    def do_rest_write_drawer(self, step: int, args: dict, expect: dict) -> None:
        body = {"content": args["content"]}
        if "name" in args:
            body["name"] = args["name"]
        response = self.api.post(
            f"/api/wings/{args['wing']}/rooms/{args['room']}/drawers", body, format="json"
        )
        data = response.json()
        if response.status_code in (200, 201):
            self.drawers[step] = Drawer.objects.get(uuid=data["id"])
        if "status" in expect:
            assert response.status_code == expect["status"]
        if "created" in expect:
            assert data["created"] is expect["created"]
        if "same_id_as_step" in expect:
            assert data["id"] == str(self.drawers[expect["same_id_as_step"]].uuid)
        if "id_differs_from_step" in expect:
            assert data["id"] != str(self.drawers[expect["id_differs_from_step"]].uuid)
        if "code" in expect:
            assert data["code"] == expect["code"].rsplit("::", 1)[-1]
        if "error" in expect:
            assert data["code"] == ERROR_CODES[expect["error"]]

    @checks("count")
    def do_rest_list_drawers(self, step: int, args: dict, expect: dict) -> None:
        room = args["room"]
        if room == "$first_room_of_wing":
            room = self.api.get(f"/api/wings/{args['wing']}").json()["rooms"][0]["name"]
        response = self.api.get(f"/api/wings/{args['wing']}/rooms/{room}/drawers")
        assert response.status_code == 200
        self.listed_drawers = response.json()["results"]
        if "count" in expect:
            assert len(self.listed_drawers) == expect["count"]

    @checks(
        "status",
        "count",
        items={"items": {"drawer_step", "side", "kind", "similarity", "signals"}},
    )
    def do_rest_get_duplicates(self, step: int, args: dict, expect: dict) -> None:
        if "drawer_step" in args:
            drawer_id = self.drawers[args["drawer_step"]].uuid
        elif "drawer_id" in args:
            drawer_id = args["drawer_id"]
        else:
            drawer_id = self.listed_drawers[args["listed_index"]]["id"]
        response = self.api.get(f"/api/drawers/{drawer_id}/duplicates")
        if "status" in expect:
            assert response.status_code == expect["status"]
        if response.status_code != 200:
            return
        similar = response.json()["similar"]
        if "count" in expect:
            assert len(similar) == expect["count"]
        for position, item in enumerate(expect.get("items", [])):
            found = similar[position]
            if "drawer_step" in item:
                assert found["drawer"] == str(self.drawers[item["drawer_step"]].uuid)
            for key in ("side", "kind"):
                if key in item:
                    assert found[key] == item[key]
            if "similarity" in item:
                assert holds(found["similarity"], item["similarity"])
            for signal, value in item.get("signals", {}).items():
                assert holds(found["signals"][signal], value)

    @checks("job_status", "result", "error_code")
    def do_rest_checkpoint(self, step: int, args: dict, expect: dict) -> None:
        items = [
            {k: v for k, v in item.items() if k in {"content", "destination", "wing", "name"}}
            for item in args["items"]
        ]
        response = self.api.post(
            "/api/checkpoints", {"id": str(uuid.uuid4()), "items": items}, format="json"
        )
        data = response.json()
        status = "completed" if response.status_code in (200, 201) else "failed"
        if "job_status" in expect:
            assert status == expect["job_status"]
        for key, value in expect.get("result", {}).items():
            assert data[key] == value
        if "error_code" in expect:
            assert data["code"] == expect["error_code"].rsplit("::", 1)[-1]

    @checks("wing", "room", "name", "content", in_args=True)
    def do_expect_named_drawer(self, step: int, args: dict, expect: dict) -> None:
        assert (
            Drawer.objects.current()
            .filter(
                room__wing__name=args["wing"],
                room__name=args["room"],
                name=args["name"],
                content=args["content"],
            )
            .exists()
        )

    @checks("job_status", "result")
    def do_rest_mine(self, step: int, args: dict, expect: dict) -> None:
        folder = self.tmp_path / f"mine-{step}"
        folder.mkdir()
        for file in args["files"]:
            (folder / file["name"]).write_text(file["content"], encoding="utf-8")
        result = mining.mine(folder, wing=args["wing"])
        # Mining runs in-process: returning is completing (a failure raises instead).
        if "job_status" in expect:
            assert expect["job_status"] == "completed"
        for key, value in expect.get("result", {}).items():
            assert getattr(result, key) == value

    @checks("status_in", "entity_same_as_step", "entity_differs_from_steps")
    def do_rest_mention(self, step: int, args: dict, expect: dict) -> None:
        drawer = self.drawers[args["drawer_step"]]
        response = self.api.post(
            f"/api/drawers/{drawer.uuid}/mentions",
            {"name": args["name"], "kind": args["kind"]},
            format="json",
        )
        if "status_in" in expect:
            assert response.status_code in expect["status_in"]
        data = response.json()
        self.entities[step] = Entity.objects.get(uuid=data["entity"]["id"])
        if "entity_same_as_step" in expect:
            assert self.entities[step] == self.entities[expect["entity_same_as_step"]]
        for other in expect.get("entity_differs_from_steps", []):
            assert self.entities[step] != self.entities[other]

    @checks("status", "aliases")
    def do_rest_add_alias(self, step: int, args: dict, expect: dict) -> None:
        entity = self.entities[args["entity_step"]]
        response = self.api.post(
            f"/api/entities/{entity.uuid}/aliases", {"alias": args["alias"]}, format="json"
        )
        assert response.status_code == expect["status"]
        if "aliases" in expect:
            assert response.json()["aliases"] == expect["aliases"]

    @checks("status", "count", "entity_names_sorted", "all_side")
    def do_rest_get_candidates(self, step: int, args: dict, expect: dict) -> None:
        entity = self.entities[args["entity_step"]]
        response = self.api.get(f"/api/entities/{entity.uuid}/candidates")
        assert response.status_code == expect["status"]
        found = response.json()["candidates"]
        if "count" in expect:
            assert len(found) == expect["count"]
        if "entity_names_sorted" in expect:
            assert sorted(c["entity"]["name"] for c in found) == expect["entity_names_sorted"]
        if "all_side" in expect:
            assert {c["side"] for c in found} == {expect["all_side"]}


def run_scenario(case: dict, settings, tmp_path: Path) -> None:
    where = f"case {case['id']!r}"
    assert known(case["expect"], {"all_step_expectations"}, where) == {
        "all_step_expectations": "hold"
    }
    run = Run(settings, tmp_path)
    run.configure(case["input"].get("config", {}))
    for step, spec in enumerate(case["input"]["steps"]):
        (action,) = [key for key in spec if key != "expect"]
        handler = getattr(run, f"do_{action}")
        expect = spec.get("expect", {})
        getattr(handler, "checks", Checks()).refuse_unknown(
            spec[action], expect, f"{where} step {step} ({action})"
        )
        try:
            handler(step, spec[action], expect)
        except AssertionError as error:
            raise AssertionError(f"step {step} ({action}): {error}") from error


@pytest.mark.django_db
@pytest.mark.parametrize("case", scenario_params())
def test_scenario(case, settings, tmp_path):
    run_scenario(case, settings, tmp_path)


def fake_case(step: dict, expect: dict | None = None) -> dict:
    return {
        "id": "fake",
        "input": {"steps": [step]},
        "expect": expect or {"all_step_expectations": "hold"},
    }


WRITE = {"room": "r1", "content": "Something worth keeping.", "rules": "memory"}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("case", "message"),
    [
        pytest.param(
            fake_case({"write": WRITE, "expect": {"outcome": "stored", "surprise": 1}}),
            r"step 0 \(write\): expect key\(s\) \['surprise'\]",
            id="step-expect",
        ),
        pytest.param(
            fake_case({"write": WRITE, "expect": {"similar": [{"kind": "near", "surprise": 1}]}}),
            r"step 0 \(write\) similar\[0\]: expect key\(s\) \['surprise'\]",
            id="element-of-a-positional-list",
        ),
        pytest.param(
            fake_case({"expect_room_count": {"room": "r1", "count": 0, "surprise": 1}}),
            r"step 0 \(expect_room_count\): expect key\(s\) \['surprise'\]",
            id="arguments-of-an-expect-action",
        ),
        pytest.param(
            fake_case({"expect_room_count": {"room": "r1", "count": 0}, "expect": {"count": 0}}),
            r"step 0 \(expect_room_count\): expect key\(s\) \['count'\]",
            id="expect-beside-an-expect-action",
        ),
        pytest.param(
            fake_case({"supersede": {"step": 0}, "expect": {"outcome": "stored"}}),
            r"step 0 \(supersede\): expect key\(s\) \['outcome'\]",
            id="action-that-checks-nothing",
        ),
        pytest.param(
            fake_case({"expect_room_count": {"room": "r1", "count": 0}}, {"surprise": 1}),
            r"case 'fake': expect key\(s\) \['surprise'\]",
            id="case-expect",
        ),
    ],
)
def test_an_expect_key_the_runner_does_not_check_fails_before_the_step_runs(
    case, message, settings, tmp_path
):
    with pytest.raises(UnknownExpectation, match=message):
        run_scenario(case, settings, tmp_path)
    assert not Drawer.objects.exists()
