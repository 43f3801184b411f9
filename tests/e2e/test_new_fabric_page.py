"""The new-fabric page in Chromium: typed generator fields with a live preview, errors at the field and at the
file's line, 'copy as API call' that really creates the fabric, create from the form and from an upload (issue 18).
"""

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.e2e.pages import log_in, make_users, manage_shell, shot
from tests.support.browser import axe_violations, chromium_page, horizontal_overflow, poll
from tests.support.server import running_server

pytestmark = pytest.mark.browser
DATA = Path(__file__).resolve().parents[1] / "data"
TOKEN = """
from ibweb.accounts.models import ApiToken
from django.contrib.auth.models import User
print(ApiToken.issue(User.objects.get(username='root'), 'e2e')[1])
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("newfabric")
    with running_server(tmp) as srv:
        make_users(tmp)
        srv.token = manage_shell(tmp, TOKEN).split()[-1]
        yield srv


def run_api_call(server, command: str, cwd: Path | None = None) -> dict:
    """Run the page's 'copy as API call' command as a script would (bash, curl, the token in ``$IBWEB_TOKEN``)."""
    done = subprocess.run(["bash", "-c", command + " --silent --show-error --write-out '\\n%{http_code}'"],
                          env={**os.environ, "IBWEB_TOKEN": server.token}, cwd=cwd, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    answer, status = done.stdout.rsplit("\n", 1)
    assert status == "201", answer
    return json.loads(answer)


def fact(page, name: str) -> str:
    return page.locator(f"[data-fact={name}]").inner_text()


def wait_preview(page, after: int) -> None:
    poll(page, f"Number(document.querySelector('[data-page=new-fabric]').dataset.previews || 0) > {after}", 30)


def previews(page) -> int:
    return int(page.evaluate("document.querySelector('[data-page=new-fabric]').dataset.previews || 0"))


def test_generator_form_previews_checks_copies_and_creates(server):
    with chromium_page({"width": 1280, "height": 1000}) as page:
        log_in(page, server, "root")
        page.goto(server.url + "/fabrics/add/")
        wait_preview(page, 0)
        assert fact(page, "hosts") == "512" and fact(page, "lids").startswith("560 of 49,151")
        assert fact(page, "bisection") == "102.4 Tb/s" and fact(page, "routing").startswith("minhop: about")
        assert horizontal_overflow(page) == 0
        assert axe_violations(page) == []
        shot(page, "new-fabric.png")

        n = previews(page)
        fat = page.locator("fieldset[data-generator=fat_tree]")
        assert page.locator("fieldset[data-generator=rail_optimized]").is_hidden()
        fat.get_by_label("Switch radix").fill("800")
        poll(page, "document.querySelector('.live-error') !== null")
        assert "above 254" in page.locator("[data-field=fat_tree__radix] .live-error").inner_text()
        assert fat.get_by_label("Switch radix").get_attribute("aria-invalid") == "true"
        fat.get_by_label("Switch radix").fill("64")
        fat.get_by_label("GPU hosts").fill("2048")
        wait_preview(page, n)
        poll(page, "document.querySelector('[data-fact=hosts]').textContent === '2,048'")
        assert page.locator(".live-error").count() == 0

        # the API call creates the same fabric through the REST API
        page.get_by_label("Name", exact=True).fill("Copied 2k")
        page.get_by_label("Slug").fill("copied-2k")
        page.get_by_role("button", name="Copy as API call").click()
        poll(page, "document.querySelector('.copy-state').textContent !== ''")  # the clipboard answers a moment later
        assert page.locator(".copy-state").inner_text() in ("Copied.", "Selected: press Ctrl+C to copy.")
        command = page.locator(".create-call code").inner_text()
        assert command.startswith(f"curl -X POST '{server.url}/api/fabrics/fabrics/'") and "$IBWEB_TOKEN" in command
        body = json.loads(page.locator(".create-call code").get_attribute("data-body"))
        assert body["spec"]["topology"] == {"generator": "fat_tree", "hosts": 2048}
        created = run_api_call(server, command)
        assert created["slug"] == "copied-2k" and created["spec"]["topology"]["hosts"] == 2048

        page.get_by_label("Name", exact=True).fill("Lab 2k")
        page.get_by_label("Slug").fill("lab-2k")
        page.get_by_role("button", name="Create fabric").click()
        page.wait_for_url("**/fabrics/lab-2k/")
        poll(page, "window.ibweb && window.ibweb.ready === true", 60)
        poll(page, "document.querySelectorAll('.ibweb-routing-report li').length > 3", 60)  # routed, reported
        assert page.locator(".ibweb-routing-report").inner_text().startswith("Engine: minhop")
        assert page.errors == [] and page.console_errors == []


def test_upload_shows_progress_errors_at_the_line_and_creates(server):
    with chromium_page({"width": 1600, "height": 1000}) as page:
        log_in(page, server, "root")
        page.goto(server.url + "/fabrics/add/")
        wait_preview(page, 0)
        page.get_by_label("Uploaded file (ibnetdiscover, ibsim net, ibweb JSON)").check()
        page.evaluate("""() => { window.progressSeen = [];
          new MutationObserver(() => { const p = document.querySelector('#upload-progress');
            if (!p.closest('[hidden]')) window.progressSeen.push(p.value); })
          .observe(document.querySelector('.upload-progress'), {attributes: true, subtree: true}); }""")
        page.get_by_label("Topology file").set_input_files(str(DATA / "broken_truncated.txt"))
        poll(page, "!document.querySelector('.upload-error').hidden")
        assert page.locator(".upload-error .error").inner_text().startswith("broken_truncated.txt:11:")
        assert page.locator(".error-context mark").inner_text().startswith("    11  ")
        assert page.evaluate("window.progressSeen.length") >= 1, "the progress bar showed"
        assert axe_violations(page) == [] and horizontal_overflow(page) == 0
        shot(page, "new-fabric-upload-error.png")

        n = previews(page)
        page.get_by_label("Topology file").set_input_files(str(DATA / "ibnd_fat_tree_2l.txt"))
        wait_preview(page, n)
        assert page.locator(".upload-error").is_hidden() and int(fact(page, "hosts").split()[0]) > 0
        assert "-F 'topology_file=@ibnd_fat_tree_2l.txt'" in page.locator(".create-call code").inner_text()
        page.get_by_label("Name", exact=True).fill("Copied upload")
        page.get_by_label("Slug").fill("copied-upload")
        page.get_by_role("button", name="Copy as API call").click()
        created = run_api_call(server, page.locator(".create-call code").inner_text(), cwd=DATA)
        assert created["slug"] == "copied-upload" and created["name"] == "Copied upload"
        page.get_by_label("Name", exact=True).fill("Lab upload")
        page.get_by_label("Slug").fill("lab-upload")
        page.get_by_role("button", name="Create fabric").click()
        page.wait_for_url("**/fabrics/lab-upload/")
        assert page.errors == [] and page.console_errors == []


def test_watch_a_real_fabric_shows_its_fields_runs_a_test_sweep_and_creates(server, tmp_path):
    drop = tmp_path / "drop"
    drop.mkdir()
    telemetry = DATA / "telemetry"
    for name, target in (("iblinkinfo.txt", "iblinkinfo.txt"), ("perfquery_loop.txt", "perfquery-2.txt"),
                         ("perfquery_ext_loop.txt", "perfquery-x-2.txt"), ("opensm-lfts.dump", "opensm-lfts.dump")):
        (drop / target).write_text((telemetry / name).read_text())
    with chromium_page({"width": 1280, "height": 1000}) as page:
        log_in(page, server, "root")
        page.goto(server.url + "/fabrics/add/")
        wait_preview(page, 0)
        page.get_by_label("A real fabric, watched (telemetry)").check()
        label = lambda text: page.get_by_label(text, exact=True)  # noqa: E731
        assert label("Command prefix").is_visible() and label("Environment").is_visible()
        assert label("Drop directory").is_hidden() and page.locator("[data-fact=hosts]").is_hidden()
        assert page.get_by_role("button", name="Test sweep").is_visible()
        # a field error from the server, at its field
        label("Environment").fill("SIM_HOST gpu0001")
        page.get_by_role("button", name="Test sweep").click()
        poll(page, "document.querySelector('[data-field=environment] .live-error') !== null")
        assert "is not NAME=value" in page.locator("[data-field=environment] .live-error").inner_text()
        # a drop directory: the test sweep reads it, shows what it found, saves nothing
        page.get_by_label("Read outputs from a drop directory").check()
        assert label("Command prefix").is_hidden()
        assert page.locator(".trial .how").is_hidden(), "the warning about running commands is the commands' only"
        # pushed samples: nothing to try here, and the page says how it is tried
        page.get_by_label("Samples pushed to the API").check()
        assert page.get_by_role("button", name="Test sweep").is_hidden() and page.locator(".trial-call").is_hidden()
        assert page.get_by_text("A push collector is tried by pushing").is_visible()
        assert page.get_by_text("One discovery (iblinkinfo").is_hidden()
        page.get_by_label("Read outputs from a drop directory").check()
        assert page.get_by_text("A push collector is tried by pushing").is_hidden()
        label("Drop directory").fill(str(drop))
        assert f'"drop_dir":"{drop}"' in page.locator(".trial-call code").inner_text()
        page.get_by_role("button", name="Test sweep").click()
        poll(page, "Number(document.querySelector('[data-page=new-fabric]').dataset.trials || 0) > 0", 60)
        trial = {name: page.locator(f"[data-trial={name}]").inner_text() for name in ("switches", "cas", "links")}
        assert trial == {"switches": "6", "cas": "8", "links": "16"}
        assert page.locator("[data-trial=counters]").inner_text().startswith("2 perfquery files: 4 of 24")
        assert "6 of 6 switches" in page.locator("[data-trial=lft]").inner_text()
        assert page.locator(".trial-state").inner_text().startswith("Test sweep passed")
        assert page.locator(".trial-errors").is_hidden()
        assert axe_violations(page) == [] and horizontal_overflow(page) == 0
        shot(page, "new-fabric-telemetry.png")
        page.get_by_label("Name", exact=True).fill("Lab real")
        page.get_by_label("Slug").fill("lab-real")
        page.get_by_role("button", name="Create fabric").click()
        page.wait_for_url("**/fabrics/lab-real/")
        assert page.errors == []
        assert page.console_errors == ["Failed to load resource: the server responded with a status of 400 (Bad "
                                       "Request)"], "only the test sweep with a bad environment line"
