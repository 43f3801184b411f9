"""A fabric's congestion control policy: model, REST API per role, opensm.conf import and export (issue 41)."""
# ruff: noqa: F811  (pytest fixtures imported from tenancy_fixtures are redefined as test arguments)

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from rest_framework.test import APIClient

from fabric_engine.backpressure.cc_params import CongestionControl
from fabric_engine.formats.opensm_cc import parse_cc_conf, write_cc_conf
from fabric_engine.formats.opensm_qos import parse_opensm_conf
from ibweb.tenancy.cc_settings import to_json
from ibweb.tenancy.engine_policy import policy_version
from ibweb.tenancy.models import AuditEntry, CongestionControlPolicy, QosPolicy, congestion_control_of
from tests.support.tenancy_fixtures import fabric, tenants, user_in  # noqa: F401

pytestmark = pytest.mark.django_db
LIST = "/api/tenancy/cc-policies/"
FILE = "/api/tenancy/fabrics/tiny/opensm/opensm.conf"
SETTINGS = {"sw_control_map": 0x1F, "victim_mask": "0xff", "threshold": 15, "packet_size": 8,
            "cs_return_delay": [1, 100], "marking_rate": 10, "ca_port_control": 1, "ca_control_map": 0b1001,
            "ccti_timer": [150, 0, 0, 1200] + [0] * 12, "ccti_increase": [1, 0, 0, 2] + [0] * 12,
            "cct": [[0, 0], [0, 16], [1, 40], [2, 200]]}
CONF = """\
# a site's opensm.conf: only congestion_control and cc_* are read
qos TRUE
congestion_control TRUE
cc_key 0x0000000000000000
cc_sw_cong_setting_control_map 0x1F
cc_sw_cong_setting_threshold 0x0F
cc_ca_cong_setting_control_map 0x0008
cc_ca_cong_setting_ccti_timer 3 1200
cc_ca_cong_setting_ccti_increase 3 2
cc_cct 0:0,0:16,1:40
"""


def api(role: str | None, name: str, tenant=None) -> APIClient:
    client = APIClient()
    if role is not None:
        client.force_authenticate(user_in(role, name, tenant))
    return client


@pytest.fixture
def policy(fabric):
    return CongestionControlPolicy.objects.create(fabric=fabric, enabled=True, settings=SETTINGS)


def test_policy_gives_the_engine_its_settings(policy, fabric):
    cc = policy.congestion_control()
    assert cc.enabled and cc.victim_mask == 0xFF and cc.cs_return_delay == (1, 100) and cc.ccti_timer[3] == 1200
    assert cc.cct == ((0, 0), (0, 16), (1, 40), (2, 200)) and cc.sl_enabled(3) and not cc.sl_enabled(1)
    assert congestion_control_of(fabric) == cc
    policy.delete()
    assert congestion_control_of(fabric) == CongestionControl()  # none: OpenSM's defaults, off


def test_settings_round_trip_through_json(policy):
    cc = policy.congestion_control()
    assert CongestionControlPolicy(fabric=policy.fabric, enabled=True, settings=to_json(cc)).congestion_control() == cc


@pytest.mark.parametrize("settings, words", [
    ({"threshold": 16}, "cc_sw_cong_setting_threshold 16 is out of range 0..15"),
    ({"ccti_timer": [0] * 15}, "needs 16 SLs, has 15"),
    ({"ccti_increase": [0] * 15 + [256]}, "ccti_increase of SL 15 256 is out of range"),
    ({"victim_mask": 255}, "hex string"),
    ({"victim_mask": "0x1" + "0" * 64}, "victim_mask"),
    ({"cct": [[4, 0]]}, "cc_cct entry 0 shift 4"),
    ({"cct": [[0, 1]] * 129}, "OpenSM keeps at most 128"),
    ({"cs_return_delay": [1]}, "write [shift, multiplier]"),
    ({"marking_rate": "10"}, "marking_rate: '10' is not an integer"),
    ({"tresh": 1}, "unknown setting 'tresh'"),
])
def test_model_validation_names_the_setting(fabric, settings, words):
    with pytest.raises(ValidationError) as err:
        CongestionControlPolicy(fabric=fabric, settings=settings).full_clean()
    assert words in " ".join(err.value.message_dict["settings"])


def test_read_as_qos_tables_are_read(policy, fabric, tenants):
    """Each role reads a fabric's congestion control settings where it reads its QoS tables (from ``TENANTS``)."""
    QosPolicy.objects.create(fabric=fabric)
    for role, name, tenant, seen in (("viewer", "v", None, []), ("viewer", "acme-user", tenants[0], ["tiny"]),
                                     ("operator", "op", None, ["tiny"]), ("policy admin", "pa", None, ["tiny"])):
        client = api(role, name, tenant)
        qos = [p["fabric"] for p in client.get("/api/tenancy/qos-policies/").json()["results"]]
        assert [p["fabric"] for p in client.get(LIST).json()["results"]] == qos == seen, role
        row = client.get(f"{LIST}{policy.pk}/")
        assert row.status_code == client.get(f"/api/tenancy/qos-policies/{fabric.qos_policy.pk}/").status_code
        if seen:
            assert parse_cc_conf(row.json()["opensm_conf"]) == policy.congestion_control()
            assert row.json()["settings"]["threshold"] == 15
    anonymous = api(None, "anon")
    cc, qos = anonymous.get(LIST), anonymous.get("/api/tenancy/qos-policies/")
    assert cc.status_code == qos.status_code and cc.json()["results"] == qos.json()["results"] == []


def test_written_by_policy_admins_only(policy, fabric, tenants):
    for role, name in (("viewer", "v"), ("operator", "op")):
        client = api(role, name)
        assert client.patch(f"{LIST}{policy.pk}/", {"enabled": False}, format="json").status_code == 403
        assert client.delete(f"{LIST}{policy.pk}/").status_code == 403
        qos = client.post("/api/tenancy/qos-policies/", {"fabric": "tiny"}, format="json").status_code
        assert qos == 403 and client.post(LIST, {"fabric": "tiny"}, format="json").status_code == 403
    assert api(None, "anon").patch(f"{LIST}{policy.pk}/", {"enabled": False}, format="json").status_code == 403
    policy.refresh_from_db()
    assert policy.enabled and not AuditEntry.objects.filter(object_type="tenancy.CongestionControlPolicy").exists()


def test_policy_admin_changes_are_audited_and_bump_the_policy_version(policy, fabric):
    client = api("policy admin", "pa")
    version = policy_version(fabric.pk)
    r = client.patch(f"{LIST}{policy.pk}/", {"settings": {**SETTINGS, "threshold": 3}}, format="json")
    assert r.status_code == 200, r.json()
    assert "cc_sw_cong_setting_threshold 0x03" in r.json()["opensm_conf"]
    assert policy_version(fabric.pk) > version
    entry = AuditEntry.objects.get(object_type="tenancy.CongestionControlPolicy", action="update")
    assert entry.before["settings"]["threshold"] == 15 and entry.after["settings"]["threshold"] == 3
    assert entry.username == "pa" and entry.via == "api" and entry.fabric_id == fabric.pk
    r = client.patch(f"{LIST}{policy.pk}/", {"settings": {"ccti_min": [0] * 16 + [1]}}, format="json")
    assert r.status_code == 400 and "needs 16 SLs, has 17" in str(r.json()["settings"])
    assert client.delete(f"{LIST}{policy.pk}/").status_code == 204
    r = client.post(LIST, {"fabric": "tiny", "enabled": True, "settings": {"threshold": 4}}, format="json")
    assert r.status_code == 201
    assert CongestionControlPolicy.objects.get(fabric=fabric).congestion_control().threshold == 4
    actions = list(AuditEntry.objects.filter(object_type="tenancy.CongestionControlPolicy")
                   .order_by("id").values_list("action", flat=True))
    assert actions == ["update", "delete", "create"]
    assert client.post(LIST, {"fabric": "tiny"}, format="json").status_code == 400  # one policy per fabric


def test_import_cc_lines_of_opensm_conf(fabric):
    client = api("policy admin", "pa")
    r = client.post(FILE, CONF, content_type="text/plain")
    assert r.status_code == 200, r.json()
    cc = CongestionControlPolicy.objects.get(fabric=fabric).congestion_control()
    assert cc == parse_cc_conf(CONF) and cc.enabled and cc.ccti_timer[3] == 1200 and cc.cct[-1] == (1, 40)
    assert r.json()["settings"]["ccti_timer"][3] == 1200
    entry = AuditEntry.objects.get(object_type="tenancy.CongestionControlPolicy")
    assert (entry.action, entry.via, entry.username) == ("create", "import", "pa")
    r = client.post(FILE, {"text": "congestion_control FALSE\n"}, format="json")  # again: the rest to defaults
    assert r.status_code == 200
    assert CongestionControlPolicy.objects.get(fabric=fabric).congestion_control() == CongestionControl()
    assert AuditEntry.objects.filter(object_type="tenancy.CongestionControlPolicy", action="update").count() == 1


@pytest.mark.parametrize("text, line, words", [
    (CONF.replace("0x0F", "0x1F"), 6, "cc_sw_cong_setting_threshold 31 is out of range 0..15"),
    (CONF + "cc_ca_cong_setting_ccti_timer 16 1\n", 11, "SL 16 is out of range 0..15"),
    (CONF + "cc_sw_cong_setting_control_map 0x1\n", 11, "cc_sw_cong_setting_control_map is given twice"),
    (CONF.replace("0:16", "0:x"), 10, "cc_cct entry 1 multiplier: 'x' is not a number"),
    ("qos TRUE\nqos_max_vls 8\n", None, "no congestion control option"),
])
def test_import_errors_name_the_line_and_save_nothing(fabric, text, line, words):
    r = api("policy admin", "pa").post(FILE, text, content_type="text/plain")
    assert r.status_code == 400 and r.json()["line"] == line and words in r.json()["text"][0]
    assert r.json()["text"][0].startswith(f"opensm.conf:{line}: " if line else "opensm.conf: ")
    assert not CongestionControlPolicy.objects.exists() and not AuditEntry.objects.exists()


def test_import_needs_the_policy_admin(fabric):
    for role, name in (("operator", "op"), ("viewer", "v")):
        assert api(role, name).post(FILE, CONF, content_type="text/plain").status_code == 403
    assert not CongestionControlPolicy.objects.exists()


def test_export_writes_cc_options_after_the_qos_ones(policy, fabric, tmp_path):
    QosPolicy.objects.create(fabric=fabric, max_vls=4, sl2vl="0,1,2,3,0,1,2,3,0,1,2,3,0,1,2,3")
    call_command("export_opensm", "tiny", str(tmp_path))
    text = (tmp_path / "opensm.conf").read_text()
    assert text.index("qos_sl2vl") < text.index("congestion_control TRUE") < text.index("cc_cct 0:0,0:16,1:40,2:200")
    assert parse_cc_conf(text) == policy.congestion_control()  # round trip through the parser
    assert parse_opensm_conf(text)["qos"].max_vls == 4
    served = api("operator", "op").get(FILE).content.decode()
    assert served == text and write_cc_conf(policy.congestion_control()) in served


def test_export_without_policy_has_no_cc_options(fabric, tmp_path):
    call_command("export_opensm", "tiny", str(tmp_path))
    text = (tmp_path / "opensm.conf").read_text()
    assert text.endswith("qos FALSE\n") and "cc_" not in text and "congestion_control" not in text


def test_disabled_policy_is_exported_as_false(policy, tmp_path):
    policy.enabled = False
    policy.save()
    call_command("export_opensm", "tiny", str(tmp_path))
    cc = parse_cc_conf((tmp_path / "opensm.conf").read_text())
    assert not cc.enabled and cc.threshold == 15  # the settings kept, OpenSM told to leave CC off


def test_congestion_control_is_refused_on_a_fabric_too_large_for_the_credit_model_to_run_it(fabric, monkeypatch):
    """The credit model runs congestion control up to its own size limit (its tick makes two credit solves): past it,
    enabling it is refused at the field, by the API and the opensm.conf import alike, and so is choosing the credit
    model on a fabric whose policy has it on."""
    from fabric_engine import credit_tick

    monkeypatch.setattr(credit_tick, "CREDIT_CC_MAX_HOSTS", 4)  # the tiny fabric has 8 hosts
    fabric.congestion_model = "credit"
    fabric.save()
    client = api("policy admin", "pa")
    r = client.post(LIST, {"fabric": "tiny", "enabled": True, "settings": {}}, format="json")
    assert r.status_code == 400 and "at most 4 hosts for now (this one has 8)" in r.json()["enabled"][0], r.json()
    r = client.post(FILE, CONF, content_type="text/plain")
    assert r.status_code == 400 and "at most 4 hosts" in r.json()["text"][0]
    assert not CongestionControlPolicy.objects.exists()
    off = client.post(LIST, {"fabric": "tiny", "enabled": False, "settings": {}}, format="json")
    assert off.status_code == 201  # settings kept off: nothing to run
    assert client.post(FILE, "congestion_control FALSE\n", content_type="text/plain").status_code == 200
    fabric.congestion_model = "maxmin"  # max-min runs none of it: enabled at any size
    fabric.save()
    policy = CongestionControlPolicy.objects.get(fabric=fabric)
    assert client.patch(f"{LIST}{policy.pk}/", {"enabled": True}, format="json").status_code == 200
    fabric.congestion_model = "credit"
    with pytest.raises(ValidationError, match="congestion_control: the credit model runs congestion control"):
        fabric.clean()
